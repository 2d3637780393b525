"""The command group every result with data shares: ``--root`` (default: the project root)
passed to its subcommands, and one subcommand run when none is named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from pytools.paths import project_root


def result_group(default: str) -> Callable[[Callable[..., None]], click.Group]:
    """Turn a function (its docstring is the help) into a click group with ``--root`` whose
    subcommands get the root as their object, running ``default`` when none is named."""

    def make(func: Callable[..., None]) -> click.Group:
        @click.group(name=func.__name__, help=func.__doc__, invoke_without_command=True)
        @click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
                      help="Repository root (default: the project root).")
        @click.pass_context
        def group(ctx: click.Context, root: Path | None) -> None:
            ctx.obj = root or project_root()
            if ctx.invoked_subcommand is None:
                ctx.invoke(group.commands[default])

        return group

    return make
