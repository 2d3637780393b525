"""Hit rate against capacity for LRU and Belady on a trace, with the ceiling: CSV, SVG and PNG,
byte-deterministic."""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from pytools.paths import sha256_file
from pytools.publish.canonical import atomic_write_bytes

from .policies import simulate_belady, simulate_lru
from .trace import CeilingCounts, Trace, counts_of, load_trace, percent_str

#: Capacities (in blocks) of the sweep; the number of distinct blocks is added to them.
SWEEP_CAPACITIES: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 131072)


# ----------------------------------------------------------------------------- sweep


@dataclass(frozen=True)
class SweepRow:
    """Hits of LRU and Belady at one capacity."""

    capacity: int
    lru_hits: int
    belady_hits: int


def sweep_capacities(distinct: int) -> list[int]:
    """The sweep's capacities: :data:`SWEEP_CAPACITIES` below ``distinct``, then ``distinct``."""
    return sorted({c for c in SWEEP_CAPACITIES if c < distinct} | {max(distinct, 1)})


def sweep_rows(stream: Sequence[int], capacities: Sequence[int]) -> list[SweepRow]:
    """LRU and Belady hits at every capacity."""
    return [
        SweepRow(c, simulate_lru(stream, c), simulate_belady(stream, c)) for c in capacities
    ]


def sweep_csv(rows: Sequence[SweepRow], references: int, ceiling: Fraction) -> bytes:
    """The sweep table as CSV bytes (LF line ends), rates as exact-fraction percentages."""
    buf = io.StringIO()
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


def sweep_plot(rows: Sequence[SweepRow], counts: CeilingCounts, fmt: str) -> bytes:
    """The sweep plot (``svg`` or ``png``) as bytes, byte-deterministic for equal input.

    No wall-clock date or software version is written (``metadata``), and SVG ids are
    derived from a fixed ``svg.hashsalt``.
    """
    import matplotlib
    from matplotlib.figure import Figure

    refs = counts.references
    caps = [r.capacity for r in rows]
    rc = {"svg.hashsalt": "kvcache-ceiling", "svg.fonttype": "path", "path.simplify": True}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(7.0, 4.2), dpi=100)
        ax = fig.add_subplot()
        ax.plot(caps, [100 * r.belady_hits / refs for r in rows], marker="o",
                label="Belady (offline, farthest next use)")
        ax.plot(caps, [100 * r.lru_hits / refs for r in rows], marker="s", label="LRU")
        ax.axhline(100 * float(counts.ceiling), color="black", linestyle="--",
                   label=f"ceiling (refs - distinct) / refs = {counts.percent} %")
        ax.axvline(counts.distinct, color="grey", linestyle=":",
                   label=f"capacity = distinct blocks ({counts.distinct:,})")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("cache capacity (512-token blocks)")
        ax.set_ylabel("hit rate (% of block references)")
        ax.set_ylim(0, min(100.0, 130 * float(counts.ceiling) + 1))
        ax.set_title(f"Mooncake conversation trace: {refs:,} references, "
                     f"{counts.distinct:,} distinct blocks", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="center left", fontsize=8)
        fig.tight_layout()
        buf = io.BytesIO()
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        elif fmt == "png":
            fig.savefig(buf, format="png", metadata={"Software": None})
        else:
            raise ValueError(f"unknown plot format {fmt!r}")
    return buf.getvalue()


@functools.lru_cache(maxsize=2)
def analysed(path: str, sha256: str) -> tuple[Trace, CeilingCounts, tuple[SweepRow, ...]]:
    """Parse and sweep a trace once per content hash: certify asks for the figures and the
    plot of the same trace, and the sweep is most of the cost."""
    trace = load_trace(Path(path))
    counts = counts_of(trace, sha256)
    return trace, counts, tuple(sweep_rows(trace.stream, sweep_capacities(counts.distinct)))


def write_sweep(path: Path, out_dir: Path) -> list[Path]:
    """Sweep LRU and Belady over capacities on the trace at ``path``; write
    ``sweep.csv``, ``sweep.svg`` and ``sweep.png`` into ``out_dir`` (each atomically)."""
    _, counts, rows = analysed(str(path), sha256_file(Path(path)))
    out_dir = Path(out_dir)
    outputs = {
        out_dir / "sweep.csv": sweep_csv(rows, counts.references, counts.ceiling),
        out_dir / "sweep.svg": sweep_plot(rows, counts, "svg"),
        out_dir / "sweep.png": sweep_plot(rows, counts, "png"),
    }
    for target, data in outputs.items():
        atomic_write_bytes(target, data)
    return list(outputs)
