"""``python -m pytools kernel``: the kernel reference's command line (table, workflows, summary)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from pytools.paths import project_root

from .model import KernelRefError
from .result import evidence
from .table import TABLE_LEAN, generate, write_atomic

# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


@click.group()
def main() -> None:
    """The single-owner kernel's executable reference."""


@main.command("lean-table")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help=f"Output file (default: {TABLE_LEAN}).")
@click.option("--check", is_flag=True, help="Only check the committed file is up to date.")
def lean_table_cmd(out: Path | None, check: bool) -> None:
    """Write (or check) the Lean agreement table."""
    root = project_root()
    target = out if out is not None else root / TABLE_LEAN
    try:
        text = generate(root)
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    if check:
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            raise click.ClickException(f"{target}: out of date")
        click.echo(f"{target}: up to date")
        return
    write_atomic(target, text)
    click.echo(f"wrote {target}")


@main.command("workflows")
def workflows_cmd() -> None:
    """Print the workflow bench: reference run vs. the outcome recorded in the Lean table."""
    root = project_root()
    try:
        ev = evidence(root)
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    header = f"{'workflow':44} {'family':14} {'steps':>5} {'final owner':12} " \
             f"{'refusals':>8} agree"
    click.echo(header)
    click.echo("-" * len(header))
    for r in ev.extra["workflows"]:
        click.echo(f"{r['name']:44} {r['family']:14} {r['steps']:>5} {r['final_owner']:12} "
                   f"{r['refusals']:>8} {'yes' if r['agree'] else 'NO'}")


@main.command("summary")
def summary_cmd() -> None:
    """Print the evidence figures as JSON."""
    try:
        ev = evidence(project_root())
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(ev.figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
