"""The pipeline's command line, ``pytools`` (also ``python -m pytools``): a thin layer over
the library. Each stage's commands live next to its code and are imported only when run, so
``pytools toolchain`` does not pay for the solver or the plotting library."""

from __future__ import annotations

import importlib
import json
import os
import sys

import click

from pytools.lean.toolchain import (
    WASM_REWRITES,
    ToolchainError,
    find_toolchain,
    wasm_patch_mode,
)
from pytools.paths import project_root

#: Commands defined in their own modules: name -> "module:attribute".
LAZY_COMMANDS: dict[str, str] = {
    "audit": "pytools.lean.audit.cli:main",
    "certify": "pytools.publish.certify:main",
    "verify": "pytools.verify:main",
    "keygen": "pytools.publish.keys:keygen",
    "site": "pytools.publish.site.page:main",
    "regenerate": "pytools.results.regenerate:main",
    "ceiling": "pytools.results.ceiling.cli:main",
    "kernel": "pytools.results.kernel.cli:main",
    "placement": "pytools.results.placement.cli:main",
    "leak": "pytools.results.leak.cli:main",
    "admission": "pytools.admission.cli:main",
}


#: Old command names still accepted, never listed: alias -> command.
HIDDEN_ALIASES: dict[str, str] = {
    "traces": "ceiling",  # the ceiling's command before it took its result's name
}


class LazyGroup(click.Group):
    """A group whose subcommands in :data:`LAZY_COMMANDS` are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY_COMMANDS])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd_name = HIDDEN_ALIASES.get(cmd_name, cmd_name)
        target = LAZY_COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):  # pragma: no cover - a wiring mistake
            raise TypeError(f"{target} is not a click command")
        return command


lean_option = click.option(
    "--lean",
    "lean",
    default=None,
    help="A native `lean` executable, or `wasm` for the registry build "
    "(default: $PYTOOLS_LEAN, then PATH, elan, node_modules).",
)


@click.group(cls=LazyGroup)
def cli() -> None:
    """Build, audit, certify and verify the Proofs Lean library."""



@cli.command()
@lean_option
@click.option("--json", "as_json", is_flag=True, help="Print the full record as JSON.")
def toolchain(lean: str | None, as_json: bool) -> None:
    """Say which Lean toolchain the pipeline will use."""
    try:
        chosen = find_toolchain(lean)
        if chosen.kind == "wasm":
            wasm_patch_mode(dict(os.environ))
    except ToolchainError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(chosen.describe(), indent=2, sort_keys=True))
        return
    click.echo(f"kind:     {chosen.kind}")
    click.echo(f"version:  {chosen.version}")
    click.echo(f"commit:   {chosen.commit}")
    click.echo(f"found by: {chosen.found_by}")
    click.echo(f"lean:     {' '.join((*chosen.lean, *chosen.extra_args))}")
    if chosen.kind == "wasm":
        mode = wasm_patch_mode(dict(os.environ))
        applied = "none (lean.js as shipped)" if mode == "off" else ", ".join(WASM_REWRITES)
        click.echo(f"rewrites: {applied} (PYTOOLS_WASM_PATCH={mode}; docs/toolchain.md)")
    click.echo(f"lake:     {chosen.lake or '(none: the pytools module builder is used)'}")
    click.echo(f"core lib: {chosen.lib_dir}")


@cli.command("build")
@lean_option
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Modules compiled at once (default: cores, bounded by memory).")
@click.option("--no-lake", is_flag=True, help="Use the pytools builder even where lake exists.")
def build_command(lean: str | None, jobs: int | None, no_lake: bool) -> None:
    """Compile the library (lake build, or the pytools builder without lake)."""
    from pytools.lean.build import build, lake_build, report
    from pytools.lean.modules import BuildError

    root = project_root()
    try:
        chosen = find_toolchain(lean)
        if chosen.lake and not no_lake:
            result = lake_build(root, chosen)
        else:
            result = build(root, chosen, jobs=jobs)
    except (ToolchainError, BuildError) as exc:
        raise click.ClickException(str(exc)) from exc
    report(result)
    sys.exit(0 if result.ok else 1)


@cli.command("review-statements")
@click.option("--accept", is_flag=True,
              help="Rewrite reviewed/statements.json from the library as built now.")
@lean_option
def review_statements_command(accept: bool, lean: str | None) -> None:
    """Compare (or, with --accept, record) the published theorems' statements."""
    # Imported here: the solver-backed results load only for this command. The published
    # theorems come from the results; the lean layer below does not know them.
    from pytools.lean.audit import reviewed
    from pytools.lean.audit.records import AuditError
    from pytools.lean.modules import BuildError
    from pytools.lean.olean import OleanError
    from pytools.lean.statement_review import review_statements
    from pytools.results.registry import published_theorems

    root = project_root()
    theorems = published_theorems()
    try:
        outcome = review_statements(root, find_toolchain(lean, root), theorems, accept=accept,
                                    say=click.echo)
    except (ToolchainError, BuildError, AuditError, OleanError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not outcome.built:
        raise click.ClickException("the library does not build")
    for finding in outcome.findings:
        click.echo(f"FINDING: {finding}", err=True)
    if outcome.written:
        click.echo(f"wrote {reviewed.REVIEWED_FILE}: {len(theorems)} statements; review the "
                   "diff (git diff) before committing it")
        return
    if accept:
        click.echo(f"review-statements FAILED: {len(outcome.findings)} audit finding(s); "
                   f"{reviewed.REVIEWED_FILE} not written", err=True)
        sys.exit(1)
    for problem in outcome.differences:
        click.echo(problem, err=True)
    click.echo(f"{len(theorems)} published statements; {len(outcome.differences)} differences; "
               f"{len(outcome.findings)} audit findings")
    sys.exit(0 if outcome.ok else 1)
