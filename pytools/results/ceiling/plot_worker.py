"""The plots of ``pytools ceiling curve`` and ``sweep`` drawn in a second process.

Importing matplotlib takes about as long as a third of the curve's computation, and nothing
in it depends on the curve; so the command forks a worker as it starts (before numba is
imported), the worker imports matplotlib and its two backends while the parent reads the
trace and runs the kernels, and then draws the plot of the points the parent sends it (the
visible points only: a few thousand numbers) while the parent writes the table. The bytes
are those :func:`.plot.render_plots` gives in the parent (the same code, tested equal).

Where ``fork`` is not available (or ``PYTOOLS_PLOT_WORKER=0``) :func:`start` gives ``None``
and the plots are drawn in the parent, as before. A worker that fails, or dies, is a
:class:`PlotFailed` naming the format; a parent that stops early closes the pipe, and the
worker, reading end of file, exits.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

from . import plot

#: Set to ``0`` to draw the plots in the command's own process.
ENV_SWITCH = "PYTOOLS_PLOT_WORKER"

#: Seconds a worker is given to exit after the pipe is closed, before it is terminated.
EXIT_WAIT_S = 5.0


class PlotFailed(RuntimeError):
    """A plot the worker could not draw (the message says why)."""


def _warm() -> None:
    """Import what drawing needs (the expensive part of a first plot).

    Only in the worker, which never shows a docstring: matplotlib writes, for every
    ``Artist`` subclass it defines, the docstring of its ``set`` method listing every
    property (``matplotlib.artist.kwdoc``, about a third of the import's CPU time); the
    worker's imports skip that text (the ``set`` methods, their signatures and the drawing
    are unchanged) and restore ``kwdoc`` after."""
    with _no_set_docstrings():
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.backends.backend_svg  # noqa: F401
        import matplotlib.figure  # noqa: F401


@contextlib.contextmanager
def _no_set_docstrings() -> Iterator[None]:
    """``matplotlib.artist.kwdoc`` gives an empty text while the block runs (where it exists:
    a matplotlib without it is imported as it is)."""
    import matplotlib.artist

    kwdoc = getattr(matplotlib.artist, "kwdoc", None)
    if kwdoc is None:  # pragma: no cover (another matplotlib)
        yield
        return
    matplotlib.artist.kwdoc = lambda artist: ""
    try:
        yield
    finally:
        matplotlib.artist.kwdoc = kwdoc


def _serve(conn: Connection, parent_end: Connection) -> None:  # pragma: no cover (child)
    """The worker: warm up, then draw the one request it is sent, every format in turn."""
    parent_end.close()
    try:
        warm_error: Exception | None = None
        try:
            _warm()
        except Exception as exc:  # noqa: BLE001 (told to the parent with the request)
            warm_error = exc
        try:
            data, formats = conn.recv()
        except (EOFError, OSError):
            return  # the parent stopped before it had a curve to draw
        if warm_error is not None:
            for fmt in formats:
                conn.send((fmt, False, f"{type(warm_error).__name__}: {warm_error}"))
            return
        for fmt, out in plot.render_plots(data, formats):
            if isinstance(out, Exception):
                conn.send((fmt, False, f"{type(out).__name__}: {out}"))
            else:
                conn.send((fmt, True, out))
    finally:
        conn.close()


class PlotWorker:
    """A forked process that draws one plot request (see the module's docstring)."""

    def __init__(self, process: Any, conn: Connection) -> None:
        self._process = process
        self._conn = conn
        self._formats: tuple[str, ...] = ()
        self._results: dict[str, tuple[bool, Any]] = {}

    def submit(self, data: plot.PlotData) -> None:
        """Send the points to draw, in every format of :data:`.plot.PLOT_FORMATS`."""
        if self._formats:
            raise RuntimeError("a plot worker draws one request")
        self._formats = plot.PLOT_FORMATS
        try:
            self._conn.send((data, self._formats))
        except OSError as exc:
            raise PlotFailed(f"the plotting process is gone ({exc})") from None

    def result(self, fmt: str) -> bytes:
        """The bytes of ``fmt`` (waiting for them)."""
        if fmt not in self._formats:
            raise RuntimeError(f"no {fmt!r} plot was asked of the worker")
        while fmt not in self._results:
            try:
                got, ok, payload = self._conn.recv()
            except (EOFError, OSError):
                self._process.join(EXIT_WAIT_S)
                raise PlotFailed("the plotting process ended without drawing it (exit status "
                                 f"{self._process.exitcode})") from None
            self._results[got] = (ok, payload)
        ok, payload = self._results[fmt]
        if not ok:
            raise PlotFailed(payload)
        return payload

    def close(self) -> None:
        """Close the pipe and wait for the worker (terminated if it does not exit)."""
        self._conn.close()
        self._process.join(EXIT_WAIT_S)
        if self._process.is_alive():  # pragma: no cover (a worker stuck drawing)
            self._process.terminate()
            self._process.join()


def start() -> PlotWorker | None:
    """A plot worker, or ``None`` where plots are drawn in this process (no ``fork``, or
    :data:`ENV_SWITCH` set to ``0``)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover (a platform without fork)
        return None
    parent_end, child_end = ctx.Pipe()
    process = ctx.Process(target=_serve, args=(child_end, parent_end), daemon=True,
                          name="pytools-plots")
    process.start()
    child_end.close()
    return PlotWorker(process, parent_end)


@contextlib.contextmanager
def plot_worker() -> Iterator[PlotWorker | None]:
    """:func:`start`, closed on the way out however the command ends."""
    worker = start()
    try:
        yield worker
    finally:
        if worker is not None:
            worker.close()
