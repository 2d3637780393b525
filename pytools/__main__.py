"""``python -m pytools``: the pipeline's command line (a thin layer over the library)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .build import BuildError, build, lake_build, report
from .paths import project_root
from .toolchain import ToolchainError, find_toolchain

lean_option = click.option(
    "--lean",
    "lean",
    default=None,
    help="A native `lean` executable, or `wasm` for the registry build "
    "(default: $PYTOOLS_LEAN, then PATH, elan, node_modules).",
)


@click.group()
def cli() -> None:
    """Build, audit, certify and verify the Proofs Lean library."""


@cli.command()
@lean_option
@click.option("--json", "as_json", is_flag=True, help="Print the full record as JSON.")
def toolchain(lean: str | None, as_json: bool) -> None:
    """Say which Lean toolchain the pipeline will use."""
    try:
        chosen = find_toolchain(lean)
    except ToolchainError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(chosen.describe(), indent=2, sort_keys=True))
        return
    click.echo(f"kind:     {chosen.kind}")
    click.echo(f"version:  {chosen.version}")
    click.echo(f"commit:   {chosen.commit}")
    click.echo(f"found by: {chosen.found_by}")
    click.echo(f"lean:     {' '.join(chosen.lean)}")
    click.echo(f"lake:     {chosen.lake or '(none: the pytools module builder is used)'}")
    click.echo(f"core lib: {chosen.lib_dir}")


@cli.command("build")
@lean_option
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Modules compiled at once (default: cores, bounded by memory).")
@click.option("--no-lake", is_flag=True, help="Use the pytools builder even where lake exists.")
def build_command(lean: str | None, jobs: int | None, no_lake: bool) -> None:
    """Compile the library (lake build, or the pytools builder without lake)."""
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


def _register_optional() -> None:
    """Stage commands that live in their own modules (each also runs as `-m pytools.X`)."""
    import importlib

    for name in ("certify", "audit", "verify", "traces", "kernelref", "placement", "site"):
        try:
            module = importlib.import_module(f"pytools.{name}")
        except ImportError:
            continue
        command = getattr(module, "main", None)
        if isinstance(command, click.Command):
            cli.add_command(command, name)


_register_optional()

if __name__ == "__main__":
    cli(prog_name="python -m pytools")

__all__ = ["cli", "Path"]
