"""A progress bar on stderr for commands that read a trace or run a sweep: drawn by click over
the bytes of the file read so far (or the steps done), only on a terminal, only without
``--quiet``, and only once a couple of seconds have passed (short runs stay silent)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import click

from .trace import Progress

#: Seconds before a progress bar appears.
PROGRESS_DELAY_S = 2.0


@contextlib.contextmanager
def progress_bar(path: Path, quiet: bool, stream: TextIO | None = None,
                 delay: float = PROGRESS_DELAY_S,
                 clock: Callable[[], float] = time.monotonic) -> Iterator[Progress | None]:
    """A progress callback (bytes of ``path`` read so far) drawing a bar on stderr once
    ``delay`` seconds have passed; ``None`` with ``quiet`` or when stderr is not a terminal."""
    try:
        total = max(os.path.getsize(path), 1)
    except OSError:
        total = 1
    with delayed_bar(total, f"reading {Path(path).name}", quiet, stream, delay,
                     clock) as update:
        yield update


@contextlib.contextmanager
def delayed_bar(total: int, label: str, quiet: bool, stream: TextIO | None = None,
                delay: float = PROGRESS_DELAY_S,
                clock: Callable[[], float] = time.monotonic) -> Iterator[Progress | None]:
    """A progress callback (units done so far, out of ``total``: bytes read, simulations
    run) drawing a bar labelled ``label`` on stderr once ``delay`` seconds have passed;
    ``None`` with ``quiet`` or when stderr is not a terminal."""
    out = stream if stream is not None else sys.stderr
    if quiet or not out.isatty():
        yield None
        return
    total = max(total, 1)
    started = clock()
    state: dict[str, object] = {"bar": None, "done": 0}

    def update(done: int) -> None:
        bar = state["bar"]
        if bar is None:
            if clock() - started < delay:
                return
            bar = click.progressbar(length=total, label=label, file=out,
                                    show_eta=True, show_percent=True)
            bar.__enter__()
            state["bar"] = bar
        step = min(done, total) - int(state["done"])  # type: ignore[call-overload]
        if step > 0:
            bar.update(step)  # type: ignore[attr-defined]
            state["done"] = min(done, total)

    try:
        yield update
    finally:
        bar = state["bar"]
        if bar is not None:
            bar.__exit__(None, None, None)  # type: ignore[attr-defined]
