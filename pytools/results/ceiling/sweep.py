"""Hit rate against capacity for LRU and OPT (Belady) on a trace, with the ceiling: the tables
(CSV) and the plot (SVG and PNG, byte-deterministic), all from the exact all-capacity curve of
:mod:`.curve`. Every table and plot names its input and the input's SHA-256."""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numba import njit

from .curve import Curve, compute_curve
from .output import Writer, write_outputs
from .trace import CeilingCounts, Progress, ScanSummary, TraceError, Window, percent_str

#: Capacities (in blocks) of the sweep table; the number of distinct blocks is added to them.
SWEEP_CAPACITIES: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 131072)

#: Most points drawn per line (log-spaced capacities; every drawn point is exact): about two
#: per pixel of the 700-pixel-wide plot, so finer detail could not be seen anyway.
PLOT_POINTS = 1500

#: Plot size in inches and its resolution (700 x 440 pixels).
PLOT_SIZE = (7.0, 4.4)
PLOT_DPI = 100

#: Rows of ``curve.csv`` formatted at a time.
_CSV_ROWS = 1 << 16


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


@dataclass(frozen=True)
class SweepRow:
    """Hits of LRU and OPT (Belady) at one capacity."""

    capacity: int
    lru_hits: int
    belady_hits: int


def counts_from(summary: ScanSummary, curve: Curve) -> CeilingCounts:
    """The ceiling counts of a scanned trace (or window) and its curve."""
    return CeilingCounts(requests=summary.requests, references=summary.references,
                         distinct=curve.distinct, sha256=summary.sha256, window=summary.window)


def sweep_capacities(distinct: int) -> list[int]:
    """The sweep's capacities: :data:`SWEEP_CAPACITIES` below ``distinct``, then ``distinct``."""
    return sorted({c for c in SWEEP_CAPACITIES if c < distinct} | {max(distinct, 1)})


def sweep_rows(curve: Curve, capacities: Sequence[int]) -> list[SweepRow]:
    """LRU and OPT hits at every capacity, read off the exact curve."""
    return [SweepRow(c, *curve.at(c)) for c in capacities]


# ----------------------------------------------------------------------------- tables


def sweep_csv(rows: Sequence[SweepRow], references: int, ceiling: Fraction,
              source: Source | None = None) -> bytes:
    """The sweep table as CSV bytes (LF line ends), rates as exact-fraction percentages,
    opened by the provenance comments of ``source``."""
    buf = io.StringIO()
    for line in source.comment_lines() if source else ():
        buf.write(line + "\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(
        ["capacity", "lru_hits", "belady_hits", "lru_percent", "belady_percent",
         "ceiling_percent"]
    )
    for row in rows:
        writer.writerow([
            row.capacity,
            row.lru_hits,
            row.belady_hits,
            percent_str(Fraction(row.lru_hits, references)),
            percent_str(Fraction(row.belady_hits, references)),
            percent_str(ceiling),
        ])
    return buf.getvalue().encode("utf-8")


@njit(cache=True, nogil=True)
def _put_int(out: np.ndarray, pos: int, value: int) -> int:  # pragma: no cover
    """Write ``value`` (non-negative) in decimal at ``out[pos:]``; return the new end."""
    digits = 1
    rest = value // 10
    while rest > 0:
        digits += 1
        rest //= 10
    end = pos + digits
    for at in range(end - 1, pos - 1, -1):
        out[at] = 48 + value % 10
        value //= 10
    return end


@njit(cache=True, nogil=True)
def _csv_rows(first: int, lru: np.ndarray, opt: np.ndarray,
              out: np.ndarray) -> int:  # pragma: no cover
    """Rows ``k,lru[i],opt[i]`` (``k = first + i``), LF-ended, into ``out``; bytes written."""
    pos = 0
    for i in range(lru.shape[0]):
        pos = _put_int(out, pos, first + i)
        out[pos] = 44
        pos = _put_int(out, pos + 1, lru[i])
        out[pos] = 44
        pos = _put_int(out, pos + 1, opt[i])
        out[pos] = 10
        pos += 1
    return pos


def curve_csv_rows(first: int, lru: np.ndarray, opt: np.ndarray) -> bytes:
    """The ``curve.csv`` rows of capacities ``first, first + 1, ...`` as ASCII bytes, the same
    as ``"".join(f"{k},{a},{b}\\n" ...)`` (formatted by a compiled loop: a million rows are
    tens of milliseconds, not half a second)."""
    lru = np.ascontiguousarray(lru, dtype=np.int64)
    opt = np.ascontiguousarray(opt, dtype=np.int64)
    if lru.shape != opt.shape:
        raise ValueError(f"rows of unequal length: {lru.shape[0]} LRU, {opt.shape[0]} OPT")
    if first < 0 or (lru.shape[0] and min(int(lru.min()), int(opt.min())) < 0):
        raise ValueError("hits and capacities are never negative")
    out = np.empty(lru.shape[0] * 60 + 1, dtype=np.uint8)  # 3 x (19 digits + separator)
    used = _csv_rows(first, lru, opt, out)
    return out[:used].tobytes()


def write_curve_csv(handle: BinaryIO, curve: Curve, source: Source) -> None:
    """``curve.csv``: provenance comments, then ``capacity,lru_hits,opt_hits``, one row per
    capacity 1..distinct (streamed in blocks of rows, never one big string)."""
    head = "\n".join([*source.comment_lines(), "capacity,lru_hits,opt_hits"]) + "\n"
    handle.write(head.encode("utf-8"))
    for start in range(0, curve.distinct, _CSV_ROWS):
        stop = min(start + _CSV_ROWS, curve.distinct)
        handle.write(curve_csv_rows(start + 1, curve.lru_hits[start:stop],
                                    curve.opt_hits[start:stop]))


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


def curve_figure(curve: Curve, counts: CeilingCounts, source: Source,
                 marks: Sequence[int] = ()) -> Any:
    """The hit-rate figure (a matplotlib ``Figure``; build and save it under
    :data:`PLOT_RC`): exact hits at log-spaced capacities up to ``distinct`` (markers at
    ``marks``), the ceiling, the input's name in the title and its SHA-256 in a footnote."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, NullFormatter

    refs = counts.references
    caps = plot_capacities(curve.distinct)
    lru = 100.0 * curve.lru_hits[caps - 1] / refs
    opt = 100.0 * curve.opt_hits[caps - 1] / refs
    marked = [c for c in marks if 1 <= c <= curve.distinct]
    mk = np.asarray(marked, dtype=np.int64)
    fig = Figure(figsize=PLOT_SIZE, dpi=PLOT_DPI)
    # fixed margins, not tight_layout (which lays every text out once more per plot): the
    # two-line title, the axis labels and the footnote fit inside them (texts_outside: none)
    fig.subplots_adjust(left=0.085, right=0.975, top=0.885, bottom=0.145)
    ax = fig.add_subplot()
    ax.plot(caps, opt, label="OPT (Belady/MIN, offline optimum)", color="C0")
    ax.plot(caps, lru, label="LRU", color="C1")
    if marked:
        ax.plot(mk, 100.0 * curve.opt_hits[mk - 1] / refs, "o", color="C0", markersize=4)
        ax.plot(mk, 100.0 * curve.lru_hits[mk - 1] / refs, "s", color="C1", markersize=4)
    ax.axhline(100 * float(counts.ceiling), color="black", linestyle="--",
               label=f"ceiling (refs - distinct) / refs = {counts.percent} %")
    ax.axvline(counts.distinct, color="grey", linestyle=":",
               label=f"capacity = distinct blocks ({counts.distinct:,})")
    ax.set_xscale("log", base=2)
    ticks, labels = log2_ticks(curve.distinct)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels(labels)
    ax.xaxis.set_minor_locator(FixedLocator([1 << e for e in range(ticks[-1].bit_length())]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("cache capacity (blocks)")
    ax.set_ylabel("hit rate (% of block references)")
    ax.set_ylim(0, min(100.0, 130 * float(counts.ceiling) + 1))
    ax.set_title(plot_title(source, refs, counts.distinct), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.text(0.01, 0.01, f"source: {source.label}   sha256 {source.sha256}", fontsize=5.5,
             color="dimgrey")
    return fig


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


def curve_plot(curve: Curve, counts: CeilingCounts, source: Source, fmt: str,
               marks: Sequence[int] = ()) -> bytes:
    """The hit-rate curves (``svg`` or ``png``, see :func:`curve_figure`) as bytes,
    byte-deterministic for equal input: no wall-clock date or software version is written,
    and SVG ids come from a fixed salt."""
    import matplotlib

    with matplotlib.rc_context(PLOT_RC):
        fig = curve_figure(curve, counts, source, marks)
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


# ----------------------------------------------------------------------------- commands


@functools.lru_cache(maxsize=4)
def analysed(path: str, sha256: str, window: Window | None = None) -> tuple[ScanSummary, Curve]:
    """Scan a trace (or window) and compute its curve once per content hash: certify asks for
    the figures and the plots of the same trace. The scan hashes the bytes it reads, and they
    must be the bytes of ``sha256``."""
    summary, curve = compute_curve(Path(path), window)
    if summary.sha256 != sha256:
        raise TraceError(f"{path}: changed while it was read (sha256 {summary.sha256}, "
                         f"expected {sha256})")
    return summary, curve


def _plots(curve: Curve, counts: CeilingCounts, source: Source, stem: str,
           marks: Sequence[int]) -> dict[str, Writer]:
    def plot(fmt: str) -> Writer:
        return lambda handle: handle.write(curve_plot(curve, counts, source, fmt, marks))

    return {f"{stem}.svg": plot("svg"), f"{stem}.png": plot("png")}


def sweep_outputs(summary: ScanSummary, curve: Curve, label: str,
                  stem: str = "sweep") -> dict[str, Writer]:
    """``sweep.csv``, ``sweep.svg`` and ``sweep.png`` of an analysed trace."""
    counts = counts_from(summary, curve)
    source = Source(label, summary.sha256, summary.window)
    caps = sweep_capacities(counts.distinct)
    table = sweep_csv(sweep_rows(curve, caps), counts.references, counts.ceiling, source)
    return {f"{stem}.csv": lambda handle: handle.write(table),
            **_plots(curve, counts, source, stem, caps)}


def curve_outputs(summary: ScanSummary, curve: Curve, label: str) -> dict[str, Writer]:
    """``curve.csv`` (every capacity), ``curve.svg`` and ``curve.png`` of an analysed trace."""
    counts = counts_from(summary, curve)
    source = Source(label, summary.sha256, summary.window)
    return {"curve.csv": lambda handle: write_curve_csv(handle, curve, source),
            **_plots(curve, counts, source, "curve", sweep_capacities(counts.distinct))}


def write_sweep(path: Path, out_dir: Path, window: Window | None = None,
                label: str | None = None, progress: Progress | None = None) -> list[Path]:
    """The sweep table and plot of the trace at ``path`` into ``out_dir``, all or nothing."""
    summary, curve = compute_curve(Path(path), window, progress)
    outputs = sweep_outputs(summary, curve, label or str(path))
    return [w.path for w in write_outputs(Path(out_dir), outputs)]

