"""Progress on stderr, only on a terminal and only once a couple of seconds have passed (short
runs stay silent): a bar for commands that read a trace or run a sweep, drawn by click over the
bytes of the file read so far (or the steps done), off with ``--quiet``; a line with the time
spent for a step with no count to show (a re-check of committed evidence, a build)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
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


#: Seconds between two redraws of a progress line.
PROGRESS_TICK_S = 1.0


@contextlib.contextmanager
def progress_line(label: str, stream: TextIO | None = None, delay: float | None = None,
                  tick: float | None = None,
                  clock: Callable[[], float] = time.monotonic) -> Iterator[Callable[[str], None]]:
    """A progress line on stderr for a step with no count to show (a re-check, a build): once
    ``delay`` seconds have passed, ``label …  N s`` redrawn every ``tick`` seconds, closed by
    ``label … done in N.N s``; nothing when stderr is not a terminal or the step ends sooner.
    Yields a callable that renames the step (``label``) as it moves on. ``delay`` and
    ``tick`` default to :data:`PROGRESS_DELAY_S` and :data:`PROGRESS_TICK_S`."""
    out = stream if stream is not None else sys.stderr
    delay = PROGRESS_DELAY_S if delay is None else delay
    tick = PROGRESS_TICK_S if tick is None else tick
    if not out.isatty():
        yield lambda _label: None
        return
    started = clock()
    state = {"label": label, "shown": False}
    lock = threading.Lock()
    stop = threading.Event()

    def draw(final: str | None = None) -> None:
        with lock:
            elapsed = clock() - started
            text = final if final is not None else f"{int(elapsed)} s"
            out.write(f"\r\x1b[K{state['label']} …  {text}")
            if final is not None:
                out.write("\n")
            out.flush()
            state["shown"] = True

    def ticker() -> None:
        if stop.wait(delay):
            return
        while True:
            draw()
            if stop.wait(tick):
                return

    def rename(new: str) -> None:
        with lock:
            state["label"] = new

    thread = threading.Thread(target=ticker, name="progress-line", daemon=True)
    thread.start()
    outcome = "stopped after"
    try:
        yield rename
        outcome = "done in"
    finally:
        stop.set()
        thread.join()
        if state["shown"]:
            draw(f"{outcome} {clock() - started:.1f} s")
