"""The results' own command: ``pytools regenerate [RESULT...] [--check]``, over
:mod:`.regenerate`. Each result's commands live in its room's ``cli.py``
(``pytools ceiling``, ``kernel``, ``placement``, ``leak``)."""

from __future__ import annotations

from pathlib import Path

import click

from pytools.paths import project_root

from .regenerate import regenerate_files, selected_files


@click.command()
@click.argument("results", nargs=-1, metavar="[RESULT]...")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 listing every stale file and its first differing line.")
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Repository root (default: the project root).")
def regenerate(results: tuple[str, ...], check: bool, root: Path | None) -> None:
    """Rewrite (or check) the generated files of RESULT (default: every result)."""
    regenerate_files(selected_files(results), root or project_root(), check)
