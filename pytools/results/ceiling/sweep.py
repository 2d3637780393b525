"""Hit rate against capacity for LRU and OPT (Belady) on a trace, with the ceiling: the tables
(CSV) and the plot (SVG and PNG, byte-deterministic, drawn by :mod:`.plot`), all from the
exact all-capacity curve of :mod:`.curve`. Every table and plot names its input and the
input's SHA-256."""

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
from numba import njit

from pytools.traces.curve import Curve, compute_curve
from pytools.traces.output import Writer, write_outputs
from pytools.traces.trace import (
    CeilingCounts,
    Progress,
    ScanSummary,
    TraceError,
    Window,
    percent_str,
)

from .plot import PLOT_FORMATS, Plotter, Source, in_process, plot_data

#: Capacities (in blocks) of the sweep table; the number of distinct blocks is added to them.
SWEEP_CAPACITIES: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 131072)

#: Rows of ``curve.csv`` formatted at a time.
_CSV_ROWS = 1 << 16


# ----------------------------------------------------------------------------- records


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
           marks: Sequence[int], plotter: Plotter | None = None) -> dict[str, Writer]:
    data = plot_data(curve, counts, source, marks)
    if plotter is not None:
        plotter.submit(data)  # drawn while the table is written
        result = plotter.result
    else:
        result = in_process(data)

    def plot(fmt: str) -> Writer:
        return lambda handle: handle.write(result(fmt))

    return {f"{stem}.{fmt}": plot(fmt) for fmt in PLOT_FORMATS}


def sweep_outputs(summary: ScanSummary, curve: Curve, label: str, stem: str = "sweep",
                  plotter: Plotter | None = None) -> dict[str, Writer]:
    """``sweep.csv``, ``sweep.svg`` and ``sweep.png`` of an analysed trace (the plots drawn
    by ``plotter`` if given, else here when written)."""
    counts = counts_from(summary, curve)
    source = Source(label, summary.sha256, summary.window)
    caps = sweep_capacities(counts.distinct)
    table = sweep_csv(sweep_rows(curve, caps), counts.references, counts.ceiling, source)
    return {f"{stem}.csv": lambda handle: handle.write(table),
            **_plots(curve, counts, source, stem, caps, plotter)}


def curve_outputs(summary: ScanSummary, curve: Curve, label: str,
                  plotter: Plotter | None = None, plot: bool = True) -> dict[str, Writer]:
    """``curve.csv`` (every capacity), ``curve.svg`` and ``curve.png`` of an analysed trace
    (the plots drawn by ``plotter`` if given, else here when written; none without
    ``plot``)."""
    counts = counts_from(summary, curve)
    source = Source(label, summary.sha256, summary.window)
    table: dict[str, Writer] = {
        "curve.csv": lambda handle: write_curve_csv(handle, curve, source)}
    if not plot:
        return table
    return {**table, **_plots(curve, counts, source, "curve",
                              sweep_capacities(counts.distinct), plotter)}


def write_sweep(path: Path, out_dir: Path, window: Window | None = None,
                label: str | None = None, progress: Progress | None = None) -> list[Path]:
    """The sweep table and plot of the trace at ``path`` into ``out_dir``, all or nothing."""
    summary, curve = compute_curve(Path(path), window, progress)
    outputs = sweep_outputs(summary, curve, label or str(path))
    return [w.path for w in write_outputs(Path(out_dir), outputs)]

