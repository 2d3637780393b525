"""What ``pytools regenerate [RESULT...] [--check]`` (:mod:`.cli`) does: rewrite (or check)
every generated file the published results list
(:attr:`~pytools.results.spec.ResultSpec.generated`).

Without ``--check`` each file whose bytes would change is rewritten atomically, in the order
its result lists them, and named; with ``--check`` nothing is written and the command exits 1
listing every stale file with its first differing line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from pytools.traces.progress import progress_line

from .generated import GenerationError
from .registry import published_results
from .spec import GeneratedFile


def selected_files(result_ids: Sequence[str]) -> list[GeneratedFile]:
    """The generated files of the named results (all results when none is named); an
    unknown id is a :class:`click.BadParameter` listing the known ones."""
    specs = {spec.id: spec for spec in published_results() if spec.generated}
    unknown = [r for r in result_ids if r not in specs]
    if unknown:
        raise click.BadParameter(f"unknown result {', '.join(unknown)} (results with "
                                 f"generated files: {', '.join(specs)})", param_hint="RESULT")
    return [g for rid in (result_ids or list(specs)) for g in specs[rid].generated]


def regenerate_files(files: Sequence[GeneratedFile], root: Path, check: bool) -> None:
    """The verb's body (also behind the per-result aliases): check or rewrite ``files``
    under ``root``, saying what happened to each; a stale file under ``check``, or a file
    that cannot be generated, exits with status 1."""
    if check:
        problems = []
        with progress_line("regenerate --check") as step:
            for i, g in enumerate(files, 1):
                step(f"regenerate --check: {g.path} ({i} of {len(files)})")
                problems += g.check(root)
        for problem in problems:
            click.echo(problem, err=True)
        if problems:
            raise click.exceptions.Exit(1)
        click.echo(f"{len(files)} generated file(s) up to date")
        return
    for g in files:
        try:
            wrote = g.write(root)
        except GenerationError as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(f"wrote {g.path}" if wrote else f"{g.path}: up to date")
