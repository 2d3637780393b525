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
from typing import BinaryIO

import numpy as np

from .curve import Curve, compute_curve
from .output import Writer, write_outputs
from .trace import CeilingCounts, Progress, ScanSummary, TraceError, Window, percent_str

#: Capacities (in blocks) of the sweep table; the number of distinct blocks is added to them.
SWEEP_CAPACITIES: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 131072)

#: Most points drawn per line (log-spaced capacities; every drawn point is exact).
PLOT_POINTS = 1500

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


def write_curve_csv(handle: BinaryIO, curve: Curve, source: Source) -> None:
    """``curve.csv``: provenance comments, then ``capacity,lru_hits,opt_hits``, one row per
    capacity 1..distinct (streamed in blocks of rows, never one big string)."""
    head = "\n".join([*source.comment_lines(), "capacity,lru_hits,opt_hits"]) + "\n"
    handle.write(head.encode("utf-8"))
    for start in range(0, curve.distinct, _CSV_ROWS):
        stop = min(start + _CSV_ROWS, curve.distinct)
        lru = curve.lru_hits[start:stop].tolist()
        opt = curve.opt_hits[start:stop].tolist()
        text = "".join(f"{k},{a},{b}\n" for k, a, b in zip(range(start + 1, stop + 1), lru, opt,
                                                            strict=True))
        handle.write(text.encode("ascii"))


# ----------------------------------------------------------------------------- plot


def plot_capacities(distinct: int, points: int = PLOT_POINTS) -> np.ndarray:
    """Log-spaced capacities 1..distinct (distinct included), at most about ``points``."""
    if distinct <= points:
        return np.arange(1, distinct + 1, dtype=np.int64)
    grid = np.unique(np.round(np.geomspace(1, distinct, points)).astype(np.int64))
    return np.union1d(grid, [distinct])


def curve_plot(curve: Curve, counts: CeilingCounts, source: Source, fmt: str,
               marks: Sequence[int] = ()) -> bytes:
    """The hit-rate curves (``svg`` or ``png``) as bytes, byte-deterministic for equal input.

    Exact hits at log-spaced capacities up to ``distinct`` (markers at ``marks``), the ceiling,
    the input's name in the title and its SHA-256 in a footnote and in the file's metadata;
    no wall-clock date or software version is written, and SVG ids come from a fixed salt.
    """
    import matplotlib
    from matplotlib.figure import Figure

    refs = counts.references
    caps = plot_capacities(curve.distinct)
    lru = 100.0 * curve.lru_hits[caps - 1] / refs
    opt = 100.0 * curve.opt_hits[caps - 1] / refs
    marked = [c for c in marks if 1 <= c <= curve.distinct]
    mk = np.asarray(marked, dtype=np.int64)
    rc = {"svg.hashsalt": "kvcache-ceiling", "svg.fonttype": "path", "path.simplify": True}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(7.0, 4.4), dpi=100)
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
        ax.set_xlabel("cache capacity (blocks)")
        ax.set_ylabel("hit rate (% of block references)")
        ax.set_ylim(0, min(100.0, 130 * float(counts.ceiling) + 1))
        ax.set_title(f"{source.title}: {refs:,} references, {counts.distinct:,} distinct "
                     "blocks (exact at every capacity)", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        fig.text(0.01, 0.01, f"source: {source.label}   sha256 {source.sha256}", fontsize=5.5,
                 color="dimgrey")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
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

