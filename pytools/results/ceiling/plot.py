"""The hit-rate plot of an exact curve (SVG and PNG, byte-deterministic): what is drawn is
reduced to what can be seen (in every pixel column, the extremes of each curve: nothing
visible is lost), laid out once, and saved in each format. Imports neither numba nor, until
a plot is drawn, matplotlib (:mod:`.plot_worker` forks before either)."""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from pytools.traces.trace import CeilingCounts, Window

if TYPE_CHECKING:
    from pytools.traces.curve import Curve

#: Log-spaced capacities a sampled (estimated) curve is evaluated at by default; exact curves
#: are drawn at the points :func:`visible_points` keeps instead.
PLOT_POINTS = 1500

#: Plot size in inches and its resolution (700 x 440 pixels).
PLOT_SIZE = (7.0, 4.4)
PLOT_DPI = 100


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Source:
    """Where figures come from: the input as named to the user, its SHA-256, the window."""

    label: str  # the path as given (certify: the repository-relative path it records)
    sha256: str
    window: Window | None = None

    @property
    def title(self) -> str:
        """The input's file name, and the window if any (plot titles)."""
        name = Path(self.label).name
        return f"{name}, {self.window.label}" if self.window else name

    def comment_lines(self) -> list[str]:
        """The provenance lines that open every CSV (``#`` comments)."""
        lines = [f"# source: {self.label}", f"# sha256: {self.sha256}"]
        if self.window:
            lines.append(f"# window: {self.window.label} (1-based, inclusive)")
        return lines


# ----------------------------------------------------------------------------- plot


def plot_capacities(distinct: int, points: int = PLOT_POINTS) -> np.ndarray:
    """Log-spaced capacities 1..distinct (distinct included), at most about ``points``."""
    if distinct <= points:
        return np.arange(1, distinct + 1, dtype=np.int64)
    grid = np.unique(np.round(np.geomspace(1, distinct, points)).astype(np.int64))
    return np.union1d(grid, [distinct])


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def log2_ticks(top: int) -> tuple[list[int], list[str]]:
    """Major ticks of a base-2 capacity axis up to ``top``: powers of two, every one or every
    few exponents (at most 10 labels), labelled ``2⁰, 2², ...`` in plain text (Unicode
    superscripts: no mathtext parsing)."""
    last = max(1, top).bit_length()  # 2**last > top
    step = max(1, -(-last // 10))
    exps = list(range(0, last + 1, step))
    return [1 << e for e in exps], [f"2{str(e).translate(_SUPERSCRIPT)}" for e in exps]


def plot_title(source: Source, references: int, distinct: int) -> str:
    """The plot's title, on two lines so that it fits the figure's width: the input (and the
    window), then its counts."""
    return (f"{source.title}\n{references:,} references, {distinct:,} distinct blocks "
            "(exact at every capacity)")


#: Settings every plot is drawn under: SVG ids from a fixed salt, glyphs as paths.
PLOT_RC = {"svg.hashsalt": "kvcache-ceiling", "svg.fonttype": "path", "path.simplify": True}

#: The axes' place in the figure, as fractions of its size (fixed margins, not tight_layout,
#: which lays every text out once more per plot): the two-line title, the axis labels and the
#: footnote fit inside them (``texts_outside``: none).
PLOT_MARGINS = {"left": 0.085, "right": 0.975, "top": 0.885, "bottom": 0.145}

#: Columns per pixel of the figure whose extremes the drawn curves keep (2: the SVG is still
#: exact on a screen of twice the figure's resolution).
COLUMNS_PER_PIXEL = 2


def plot_xlim(distinct: int) -> tuple[float, float]:
    """The capacity axis' limits: 1..distinct with a twentieth of the span (in log scale)
    on each side, matplotlib's default margin, set explicitly so that where each capacity
    lands is known before anything is drawn."""
    span = max(math.log2(max(distinct, 1)), 1.0)
    return 2.0 ** (-0.05 * span), 2.0 ** (1.05 * span)


def pixel_columns(capacities: np.ndarray, distinct: int) -> np.ndarray:
    """The column (:data:`COLUMNS_PER_PIXEL` per pixel, counted from the figure's left edge)
    that each capacity is drawn in on the plot of a curve of ``distinct`` capacities."""
    lo, hi = (math.log2(v) for v in plot_xlim(distinct))
    width = PLOT_SIZE[0] * PLOT_DPI
    x0, x1 = PLOT_MARGINS["left"] * width, PLOT_MARGINS["right"] * width
    x = x0 + (np.log2(np.asarray(capacities, dtype=np.float64)) - lo) * ((x1 - x0) / (hi - lo))
    return np.floor(x * COLUMNS_PER_PIXEL).astype(np.int64)


def visible_points(columns: np.ndarray, *series: np.ndarray) -> np.ndarray:
    """Indices of the points to draw so that nothing visible is lost: in every column (of
    non-decreasing ``columns``) its first and last point and, for each series, the first
    point holding its minimum and the first holding its maximum there. A line through them
    spans, in every column, exactly the values the full series takes in it."""
    n = int(columns.shape[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if np.any(np.diff(columns) < 0):
        raise ValueError("columns must be non-decreasing (capacities in increasing order)")
    starts = np.concatenate([[0], np.flatnonzero(np.diff(columns)) + 1])
    ends = np.concatenate([starts[1:], [n]])
    segment = np.repeat(np.arange(starts.shape[0]), ends - starts)
    keep = [starts, ends - 1]
    for y in series:
        y = np.asarray(y)
        if y.shape[0] != n:
            raise ValueError(f"a series of {y.shape[0]} points for {n} columns")
        if n == 1 or bool(np.all(y[1:] >= y[:-1])):
            continue  # non-decreasing (hits against capacity): first and last are the extremes
        for reduce in (np.minimum, np.maximum):
            extreme = reduce.reduceat(y, starts)
            at = np.flatnonzero(y == extreme[segment])
            first = np.concatenate([[True], segment[at][1:] != segment[at][:-1]])
            keep.append(at[first])
    return np.unique(np.concatenate(keep))


@dataclass(frozen=True, eq=False)
class PlotData:
    """What a hit-rate plot draws (the visible points only: small enough to hand to the
    plotting process), from :func:`plot_data`."""

    source: Source
    references: int
    distinct: int
    ceiling: float  # the ceiling's fraction (the dashed line)
    ceiling_percent: str  # and in words, rounded as everywhere else
    capacities: np.ndarray  # the points drawn, increasing
    lru_percent: np.ndarray
    opt_percent: np.ndarray
    marks: np.ndarray  # capacities marked with a symbol (exact hits there too)
    lru_marks: np.ndarray
    opt_marks: np.ndarray


def plot_data(curve: Curve, counts: CeilingCounts, source: Source,
              marks: Sequence[int] = ()) -> PlotData:
    """The points of ``curve`` the plot draws: every capacity 1..distinct reduced to what
    can be seen (:func:`visible_points` over :func:`pixel_columns`), each one exact."""
    refs = counts.references
    every = np.arange(1, curve.distinct + 1, dtype=np.int64)
    keep = visible_points(pixel_columns(every, curve.distinct), curve.lru_hits,
                          curve.opt_hits)
    mk = np.asarray([c for c in marks if 1 <= c <= curve.distinct], dtype=np.int64)
    return PlotData(
        source=source, references=refs, distinct=counts.distinct,
        ceiling=float(counts.ceiling), ceiling_percent=counts.percent,
        capacities=every[keep], lru_percent=100.0 * curve.lru_hits[keep] / refs,
        opt_percent=100.0 * curve.opt_hits[keep] / refs, marks=mk,
        lru_marks=100.0 * curve.lru_hits[mk - 1] / refs,
        opt_marks=100.0 * curve.opt_hits[mk - 1] / refs)


def figure_of(data: PlotData) -> Any:
    """The hit-rate figure (a matplotlib ``Figure``; build and save it under
    :data:`PLOT_RC`): exact hits at the visible capacities up to ``distinct`` (markers at
    the marked ones), the ceiling, the input's name in the title and its SHA-256 in a
    footnote."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, NullFormatter

    source = data.source
    fig = Figure(figsize=PLOT_SIZE, dpi=PLOT_DPI)
    fig.subplots_adjust(**PLOT_MARGINS)
    ax = fig.add_subplot()
    ax.plot(data.capacities, data.opt_percent, label="OPT (Belady/MIN, offline optimum)",
            color="C0")
    ax.plot(data.capacities, data.lru_percent, label="LRU", color="C1")
    if data.marks.shape[0]:
        ax.plot(data.marks, data.opt_marks, "o", color="C0", markersize=4)
        ax.plot(data.marks, data.lru_marks, "s", color="C1", markersize=4)
    ax.axhline(100 * data.ceiling, color="black", linestyle="--",
               label=f"ceiling (refs - distinct) / refs = {data.ceiling_percent} %")
    ax.axvline(data.distinct, color="grey", linestyle=":",
               label=f"capacity = distinct blocks ({data.distinct:,})")
    ax.set_xscale("log", base=2)
    ax.set_xlim(*plot_xlim(data.distinct))
    ticks, labels = log2_ticks(data.distinct)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels(labels)
    ax.xaxis.set_minor_locator(FixedLocator([1 << e for e in range(ticks[-1].bit_length())]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("cache capacity (blocks)")
    ax.set_ylabel("hit rate (% of block references)")
    ax.set_ylim(0, min(100.0, 130 * data.ceiling + 1))
    ax.set_title(plot_title(source, data.references, data.distinct), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.text(0.01, 0.01, f"source: {source.label}   sha256 {source.sha256}", fontsize=5.5,
             color="dimgrey")
    return fig


def curve_figure(curve: Curve, counts: CeilingCounts, source: Source,
                 marks: Sequence[int] = ()) -> Any:
    """The hit-rate figure of ``curve`` (see :func:`figure_of`)."""
    return figure_of(plot_data(curve, counts, source, marks))


def texts_outside(fig: Any) -> list[str]:
    """Every visible, non-empty text of ``fig`` that does not lie wholly inside the figure
    (a clipped title, label or footnote), as ``'text' (x0, x1 of width)``; drawn once with
    the Agg renderer to lay the texts out."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    out = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > width + 0.5 or box.y1 > height + 0.5:
            out.append(f"{text.get_text()!r} ({box.x0:.0f}..{box.x1:.0f} of {width:.0f} px "
                       f"wide, {box.y0:.0f}..{box.y1:.0f} of {height:.0f} px high)")
    return out


#: The plot formats written, in order.
PLOT_FORMATS = ("svg", "png")


def save_plot(fig: Any, source: Source, fmt: str) -> bytes:
    """``fig`` as ``svg`` or ``png`` bytes, byte-deterministic for equal input: no wall-clock
    date or software version is written, and SVG ids come from a fixed salt (call it under
    :data:`PLOT_RC`)."""
    buf = io.BytesIO()
    about = f"{source.title}; source {source.label}; sha256 {source.sha256}"
    if fmt == "svg":
        fig.savefig(buf, format="svg", metadata={
            "Date": None, "Creator": None, "Title": source.title, "Source": source.label,
            "Description": about})
    elif fmt == "png":
        fig.savefig(buf, format="png", metadata={
            "Software": None, "Title": source.title, "Source": source.label,
            "Description": about})
    else:
        raise ValueError(f"unknown plot format {fmt!r}")
    return buf.getvalue()


def render_plots(data: PlotData, formats: Sequence[str] = PLOT_FORMATS
                 ) -> Iterator[tuple[str, bytes | Exception]]:
    """Each format's bytes of the plot of ``data``, or the exception that format raised:
    one figure, laid out once and saved in every format."""
    import matplotlib

    with matplotlib.rc_context(PLOT_RC):
        draw = getattr(data, "figure", None)  # data that draws itself (the prefix plot)
        fig = draw() if draw is not None else figure_of(data)
        for fmt in formats:
            try:
                yield fmt, save_plot(fig, data.source, fmt)
            except Exception as exc:  # noqa: BLE001 (reported as that file's failure)
                yield fmt, exc


def curve_plot(curve: Curve, counts: CeilingCounts, source: Source, fmt: str,
               marks: Sequence[int] = ()) -> bytes:
    """The hit-rate curves of ``curve`` in one format (see :func:`render_plots`)."""
    ((_, out),) = render_plots(plot_data(curve, counts, source, marks), (fmt,))
    if isinstance(out, Exception):
        raise out
    return out


class Plotter(Protocol):
    """Draws plots elsewhere (:class:`.plot_worker.PlotWorker`: in a process that imported
    matplotlib while the curve was computed)."""

    def submit(self, data: PlotData) -> None:
        """Start drawing ``data`` in every format of :data:`PLOT_FORMATS`."""

    def result(self, fmt: str) -> bytes:
        """The bytes of one format (waiting for them); raises if it could not be drawn."""


def in_process(data: PlotData) -> Callable[[str], bytes]:
    """A format's plot bytes, every format drawn from one figure on the first call."""
    drawn: dict[str, bytes | Exception] = {}

    def result(fmt: str) -> bytes:
        if not drawn:
            drawn.update(render_plots(data))
        out = drawn[fmt]
        if isinstance(out, Exception):
            raise out
        return out

    return result
