"""``python -m pytools kernel``: the kernel reference's command line (the finite-check table,
the workflow bench, the figures)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from pytools.paths import project_root

from .model import KernelRefError


def _write_or_check(target: Path, make: Callable[[], str], check: bool, command: str) -> None:
    """Generate the text (any error before anything is written), then write it atomically or,
    with ``check``, fail unless the file already holds exactly these bytes."""
    from pytools.publish.canonical import atomic_write_bytes

    try:
        data = make().encode("utf-8")
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    if check:
        if not target.is_file() or target.read_bytes() != data:
            raise click.ClickException(f"{target}: out of date (run `{command}`)")
        click.echo(f"{target}: up to date")
        return
    atomic_write_bytes(target, data)
    click.echo(f"wrote {target}")


@click.group()
def main() -> None:
    """The single-owner kernel's executable reference."""


@main.command("lean-table")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Output file (default: Proofs/Kernel/Table.lean).")
@click.option("--check", is_flag=True, help="Only check the committed file is up to date.")
def lean_table_cmd(out: Path | None, check: bool) -> None:
    """Write (or check) the finite-check table, Proofs/Kernel/Table.lean."""
    from .table import TABLE_COMMAND, TABLE_LEAN, generate_table

    target = out if out is not None else project_root() / TABLE_LEAN
    _write_or_check(target, generate_table, check, TABLE_COMMAND)


@main.command("lean-workflows")
@click.option("--source", "source", type=click.Path(path_type=Path), default=None,
              help="Workflow file (default: pytools/results/kernel/workflows.json).")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Output file (default: Proofs/Kernel/Workflows.lean).")
@click.option("--check", is_flag=True, help="Only check the committed file is up to date.")
def lean_workflows_cmd(source: Path | None, out: Path | None, check: bool) -> None:
    """Write (or check) the workflow bench, Proofs/Kernel/Workflows.lean."""
    from .workflows_lean import WORKFLOWS_COMMAND, WORKFLOWS_LEAN, generate_workflows

    root = project_root()
    target = out if out is not None else root / WORKFLOWS_LEAN
    _write_or_check(target, lambda: generate_workflows(root, source), check,
                    WORKFLOWS_COMMAND)


@main.command("workflows")
def workflows_cmd() -> None:
    """Print the workflow bench: each workflow played by the reference, and whether it agrees
    with its file and with the committed Lean bench."""
    from .result import workflow_rows

    try:
        rows = workflow_rows(project_root())
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    header = f"{'workflow':36} {'family':22} {'steps':>5} {'refusals':>8} agree"
    click.echo(header)
    click.echo("-" * len(header))
    for r in rows:
        refusals = "-" if r["refusals"] is None else r["refusals"]
        click.echo(f"{r['name']:36} {r['family']:22} {r['steps']:>5} {refusals:>8} "
                   f"{'yes' if r['agree'] else 'NO'}")
    if not all(r["agree"] for r in rows):
        raise click.ClickException("some workflows disagree (see above)")


@main.command("summary")
def summary_cmd() -> None:
    """Print the evidence figures as JSON."""
    from .result import evidence

    try:
        ev = evidence(project_root())
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(ev.figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
