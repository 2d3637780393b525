"""The prefix figures published with ``demand-fetch-ceiling``: the whole trace's prefix curve
(radix LRU at every capacity, tokens after the simulator's warm-up) with the simulator's
``optimal`` heuristic and LRU at its budgets drawn on it, and the CP-SAT prefix optima of the
windows beside the heuristic, radix LRU and the flat optimum (``prefix-optima.csv`` and
``.svg``), all from figures already re-checked (:mod:`.prefix_optima_record`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, BinaryIO

from pytools.traces.output import Writer
from pytools.traces.trace import ScanSummary

from .plot import PLOT_DPI, PLOT_MARGINS, PLOT_SIZE, Source, in_process
from .prefix_out import prefix_outputs

#: Columns of ``prefix-optima.csv`` (hits in blocks, from an empty cache, per window).
OPTIMA_COLUMNS = ("first_line", "last_line", "references", "distinct_blocks", "capacity",
                  "flat_optimum_hits", "optimum_hits", "simulator_optimal_hits",
                  "radix_lru_hits", "heuristic_gap", "flat_gap")


def optima_csv(figures: dict[str, Any], source: Source) -> bytes:
    """``prefix-optima.csv``: one row a solved window (see :data:`OPTIMA_COLUMNS`)."""
    lines = [*source.comment_lines(),
             "# hits in blocks, each window replayed alone from an empty cache; optimum: "
             "CP-SAT, OPTIMAL; flat optimum: Belady with bypass",
             ",".join(OPTIMA_COLUMNS)]
    lines += [",".join(str(row[c]) for c in OPTIMA_COLUMNS) for row in figures["windows"]]
    return ("\n".join(lines) + "\n").encode("ascii")


@dataclass(frozen=True, eq=False)
class OptimaPlotData:
    """The windows' hit rates (percent of the window's references) by method."""

    source: Source
    windows: tuple[str, ...]
    series: tuple[tuple[str, tuple[float, ...]], ...]

    def figure(self) -> Any:
        """One group of markers a window: flat optimum, prefix optimum, heuristic, LRU."""
        from matplotlib.figure import Figure

        fig = Figure(figsize=PLOT_SIZE, dpi=PLOT_DPI)
        fig.subplots_adjust(**PLOT_MARGINS)
        ax = fig.add_subplot()
        x = list(range(len(self.windows)))
        for i, (label, values) in enumerate(self.series):
            ax.plot(x, values, marker="os^v"[i % 4], linestyle="-", color=f"C{i}",
                    label=label)
        ax.set_xticks(x)
        ax.set_xticklabels(self.windows, fontsize=7)
        ax.set_xlabel("window (lines of the trace), each at half its prefix wall capacity")
        ax.set_ylabel("hit rate (% of the window's block references)")
        ax.set_title(f"{self.source.title}: exact prefix-cache optimum (CP-SAT) on windows",
                     fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=7)
        fig.text(0.01, 0.01, f"source: {self.source.label}   sha256 {self.source.sha256}",
                 fontsize=5.5, color="dimgrey")
        return fig


def optima_plot_data(figures: dict[str, Any], source: Source) -> OptimaPlotData:
    """The plot of the windows' figures."""
    rows = figures["windows"]

    def pct(key: str) -> tuple[float, ...]:  # not recorded (no simulator run): not drawn
        return tuple(100.0 * r[key] / r["references"] if r[key] is not None else math.nan
                     for r in rows)

    return OptimaPlotData(
        source=source,
        windows=tuple(f"{r['first_line']}-{r['last_line']}" for r in rows),
        series=(("flat optimum (Belady with bypass)", pct("flat_optimum_hits")),
                ("prefix optimum (CP-SAT, proved)", pct("optimum_hits")),
                ("kvcache-simulator optimal (heuristic)", pct("simulator_optimal_hits")),
                ("radix LRU", pct("radix_lru_hits"))))


def prefix_figure_outputs(figures: dict[str, Any], summary: ScanSummary, curve: Any,
                          label: str) -> dict[str, Writer]:
    """``prefix.{csv,svg,png}`` (the whole trace's curve, the simulator's budgets marked) and
    ``prefix-optima.{csv,svg,png}`` (the windows), from re-checked ``figures``
    (``prefix_optima`` of the certificate)."""
    whole = figures["whole_trace"]["budgets"]
    marks = (("kvcache-simulator optimal (heuristic), its budgets",
              tuple(r["capacity"] for r in whole),
              tuple(100.0 * r["simulator_optimal_hit_tokens"] / max(curve.measured, 1)
                    for r in whole)),
             ("kvcache-simulator LRU, its budgets", tuple(r["capacity"] for r in whole),
              tuple(100.0 * r["simulator_lru_hit_tokens"] / max(curve.measured, 1)
                    for r in whole)))
    outputs = prefix_outputs(summary, curve, label, marks=marks, plotted_rows_only=True)
    source = Source(label, summary.sha256)
    result = in_process(optima_plot_data(figures, source))  # type: ignore[arg-type]

    def table(handle: BinaryIO) -> None:
        handle.write(optima_csv(figures, source))

    def plot(fmt: str) -> Writer:
        return lambda handle: handle.write(result(fmt))

    return {**outputs, "prefix-optima.csv": table, "prefix-optima.svg": plot("svg"),
            "prefix-optima.png": plot("png")}

