"""The outputs of ``ceiling curve --semantics prefix``: ``prefix.csv`` (every capacity) and the
plot (SVG and PNG, drawn like the flat curve's: the visible points only, byte-deterministic),
from the exact prefix curve of :mod:`pytools.traces.prefix`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from pytools.traces.output import Writer
from pytools.traces.trace import ScanSummary, percent_str

from .plot import (
    PLOT_DPI,
    PLOT_MARGINS,
    PLOT_SIZE,
    Plotter,
    Source,
    in_process,
    log2_ticks,
    pixel_columns,
    plot_xlim,
    visible_points,
)

if TYPE_CHECKING:  # importing it would load numba
    from pytools.traces.prefix import PrefixCurve

#: Rows of ``prefix.csv`` formatted at a time.
_CSV_ROWS = 1 << 15

#: What every row of ``prefix.csv`` is, and what is proved of it (``Proofs/Ceiling/
#: PrefixLruFlat.lean``; the pass refuses a trace whose ids are not chained, and a request
#: that repeats a block is not chained).
SEMANTICS_NOTE = (
    "flat LRU over every request's blocks touched tail first, a request hitting its leading "
    "run; under chained ids and requests without repeated blocks this is, at every capacity, "
    "radix LRU that stores a request's missing tail and then evicts least recently used "
    "leaves (proved: KVCache.Ceiling.runHits_radixLru_eq_tailFirstLru)")

#: What the longest request's capacity changes: only the comparison with the simulator.
LONGEST_NOTE = (
    "from this capacity on, also kvcache-simulator's radix LRU, which keeps the request's "
    "cached path and may evict blocks the request just stored: equal to the token at its "
    "budgets, tested, not proved; below it that engine may differ (at one block it keeps "
    "nothing of a two-block request) and every row is still the proved model's")


def prefix_csv_header(weight: str, bytes_per_token: float | None) -> list[str]:
    """The columns of ``prefix.csv``: ``capacity``, then the prefix (LRU) hits, the measured
    weight and the flat count of the same cache, in ``_tokens`` or ``_blocks``; with a byte
    size per token, the capacity in bytes last."""
    unit = weight
    cols = ["capacity", f"lru_hit_{unit}", f"measured_{unit}", f"flat_lru_hit_{unit}"]
    return [*cols, "capacity_bytes"] if bytes_per_token else cols


def write_prefix_csv(handle: BinaryIO, curve: PrefixCurve, source: Source,
                     bytes_per_token: float | None = None,
                     rows: np.ndarray | None = None) -> None:
    """``prefix.csv``: provenance and the run's rules as ``#`` comments, then one row a
    capacity 1..distinct, or, with ``rows``, one row for each of those capacities only (each
    exact; a comment says which)."""
    lines = [*source.comment_lines(),
             f"# semantics: prefix: {SEMANTICS_NOTE}",
             f"# weight: {curve.weight}",
             f"# warmup_requests: {curve.warmup_requests} of {curve.requests}",
             f"# longest_request_blocks: {curve.longest} ({LONGEST_NOTE})",
             f"# prefix_ceiling_{curve.weight}: {curve.ceiling}",
             f"# flat_ceiling_{curve.weight}: {curve.flat_ceiling}"]
    if bytes_per_token:
        lines.append(f"# bytes_per_token: {bytes_per_token:g} (capacity_bytes = capacity x "
                     "512 x bytes_per_token)")
    chosen = (np.arange(1, curve.distinct + 1, dtype=np.int64) if rows is None
              else np.unique(np.asarray(rows, dtype=np.int64)))
    if rows is not None:
        lines.append(f"# rows: {len(chosen)} capacities (the plot's points and the marked "
                     "budgets), each exact; every capacity: pytools ceiling curve --semantics "
                     "prefix")
    lines.append(",".join(prefix_csv_header(curve.weight, bytes_per_token)))
    handle.write(("\n".join(lines) + "\n").encode("utf-8"))
    measured = str(curve.measured)
    for start in range(0, len(chosen), _CSV_ROWS):
        caps = chosen[start:start + _CSV_ROWS].tolist()
        hits = curve.hits[chosen[start:start + _CSV_ROWS] - 1].tolist()
        flat = curve.flat_hits[chosen[start:start + _CSV_ROWS] - 1].tolist()
        if bytes_per_token:
            per_block = 512 * bytes_per_token
            text = [f"{c},{h},{measured},{f},{c * per_block:.0f}\n"
                    for c, h, f in zip(caps, hits, flat, strict=True)]
        else:
            text = [f"{c},{h},{measured},{f}\n" for c, h, f in zip(caps, hits, flat, strict=True)]
        handle.write("".join(text).encode("ascii"))


@dataclass(frozen=True, eq=False)
class PrefixPlotData:
    """What the prefix plot draws (the visible points only), from :func:`prefix_plot_data`;
    :meth:`figure` draws it (the plot worker calls it)."""

    source: Source
    weight: str
    measured: int
    distinct: int
    longest: int
    ceiling_percent: str
    flat_ceiling_percent: str
    capacities: np.ndarray
    prefix_percent: np.ndarray
    flat_percent: np.ndarray
    ceiling: float
    flat_ceiling: float
    #: points drawn on top, each (label, capacities, percents): e.g. a simulator's budgets
    marks: tuple[tuple[str, tuple[int, ...], tuple[float, ...]], ...] = ()

    def figure(self) -> Any:
        """The figure: the prefix curve, the flat count of the same cache, both ceilings."""
        from matplotlib.figure import Figure
        from matplotlib.ticker import FixedLocator, NullFormatter

        fig = Figure(figsize=PLOT_SIZE, dpi=PLOT_DPI)
        fig.subplots_adjust(**PLOT_MARGINS)
        ax = fig.add_subplot()
        ax.plot(self.capacities, self.flat_percent, color="C0",
                label="flat count of the same cache (every cached block hits)")
        ax.plot(self.capacities, self.prefix_percent, color="C1",
                label="prefix (radix LRU, leading run only)")
        ax.axhline(100 * self.flat_ceiling, color="grey", linestyle=":",
                   label=f"flat ceiling (every block seen before) = {self.flat_ceiling_percent} %")
        ax.axhline(100 * self.ceiling, color="black", linestyle="--",
                   label=f"prefix ceiling (infinite capacity) = {self.ceiling_percent} %")
        ax.axvline(self.longest, color="C2", linestyle=":",
                   label=f"longest request ({self.longest} blocks)")
        for i, (label, caps, percents) in enumerate(self.marks):
            ax.plot(caps, percents, linestyle="none", marker="os^"[i % 3], markersize=4,
                    color=f"C{3 + i}", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlim(*plot_xlim(self.distinct))
        ticks, labels = log2_ticks(self.distinct)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.set_xticklabels(labels)
        ax.xaxis.set_minor_locator(FixedLocator([1 << e for e in range(ticks[-1].bit_length())]))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("cache capacity (blocks)")
        ax.set_ylabel(f"hit rate (% of measured {self.weight})")
        ax.set_ylim(0, min(100.0, 130 * max(self.flat_ceiling, self.ceiling) + 1))
        ax.set_title(f"{self.source.title}, prefix semantics\n{self.measured:,} measured "
                     f"{self.weight}, {self.distinct:,} distinct blocks (exact at every "
                     "capacity)", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=7)
        fig.text(0.01, 0.01, f"source: {self.source.label}   sha256 {self.source.sha256}",
                 fontsize=5.5, color="dimgrey")
        return fig


def prefix_plot_data(curve: PrefixCurve, source: Source,
                     marks: tuple[tuple[str, tuple[int, ...], tuple[float, ...]], ...] = ()
                     ) -> PrefixPlotData:
    """The visible points of the prefix curve and of the flat count, each exact (and
    ``marks``, points drawn on top)."""
    every = np.arange(1, curve.distinct + 1, dtype=np.int64)
    keep = visible_points(pixel_columns(every, curve.distinct), curve.hits, curve.flat_hits)
    m = max(curve.measured, 1)
    return PrefixPlotData(
        source=source, weight=curve.weight, measured=curve.measured, distinct=curve.distinct,
        longest=curve.longest, ceiling_percent=percent_of(curve.ceiling, curve.measured),
        flat_ceiling_percent=percent_of(curve.flat_ceiling, curve.measured),
        capacities=every[keep], prefix_percent=100.0 * curve.hits[keep] / m,
        flat_percent=100.0 * curve.flat_hits[keep] / m, ceiling=curve.ceiling / m,
        flat_ceiling=curve.flat_ceiling / m, marks=marks)


def percent_of(hits: int, measured: int) -> str:
    """``hits / measured`` in percent, rounded as everywhere else (``-`` if nothing is
    measured)."""
    from fractions import Fraction

    return percent_str(Fraction(hits, measured)) if measured else "-"


def prefix_outputs(summary: ScanSummary, curve: PrefixCurve, label: str,
                   plotter: Plotter | None = None,
                   bytes_per_token: float | None = None,
                   marks: tuple[tuple[str, tuple[int, ...], tuple[float, ...]], ...] = (),
                   plotted_rows_only: bool = False, plot: bool = True) -> dict[str, Writer]:
    """``prefix.csv``, ``prefix.svg`` and ``prefix.png`` of a prefix curve (with ``marks``
    drawn on the plot); with ``plotted_rows_only`` the table holds the plotted capacities and
    the marks' only (a certificate's file stays small: every capacity of the whole trace is
    megabytes); with ``plot=False`` the table alone (every capacity; matplotlib is never
    imported)."""
    source = Source(label, summary.sha256, summary.window)
    if not plot:
        if plotted_rows_only or marks or plotter is not None:
            raise ValueError("plotted rows, marks and a plotter need the plot")

        def csv_only(handle: BinaryIO) -> None:
            write_prefix_csv(handle, curve, source, bytes_per_token)

        return {"prefix.csv": csv_only}
    data = prefix_plot_data(curve, source, marks)
    if plotter is not None:
        plotter.submit(data)  # type: ignore[arg-type]  (drawn while the table is written)
        result = plotter.result
    else:
        result = in_process(data)  # type: ignore[arg-type]

    def drawn(fmt: str) -> Writer:
        return lambda handle: handle.write(result(fmt))

    rows = None
    if plotted_rows_only:
        marked = [c for _, caps, _ in marks for c in caps if 1 <= c <= curve.distinct]
        rows = np.concatenate([data.capacities, np.asarray(marked, dtype=np.int64)])

    def table(handle: BinaryIO) -> None:
        write_prefix_csv(handle, curve, source, bytes_per_token, rows)

    return {"prefix.csv": table, "prefix.svg": drawn("svg"), "prefix.png": drawn("png")}
