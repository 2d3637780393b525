"""Tests of the curve command's output path: the compiled CSV formatter, the plot's ticks and
title, and the clipping checker (with its planted defect: the one-line title that was clipped
in the committed window plot)."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest

from pytools.results.ceiling.curve import compute_curve
from pytools.results.ceiling.result import CLAIM_WINDOW
from pytools.results.ceiling.sweep import (
    PLOT_RC,
    Source,
    counts_from,
    curve_csv_rows,
    curve_figure,
    log2_ticks,
    plot_title,
    sweep_capacities,
    texts_outside,
)


def python_rows(first: int, lru: list[int], opt: list[int]) -> bytes:
    return "".join(f"{k},{a},{b}\n" for k, a, b in
                   zip(range(first, first + len(lru)), lru, opt, strict=True)).encode()


@pytest.mark.parametrize("values", [
    [], [0], [9], [10], [99, 100, 101], [2**31 - 1, 2**31, 2**63 - 1],
    list(range(0, 100_000, 997)),
])
def test_compiled_csv_rows_equal_python_formatting(values: list[int]) -> None:
    lru = values
    opt = values[::-1]
    assert curve_csv_rows(1, np.array(lru), np.array(opt)) == python_rows(1, lru, opt)
    assert curve_csv_rows(65537, np.array(lru), np.array(opt)) == python_rows(65537, lru, opt)


def test_compiled_csv_rows_refuse_unequal_columns_and_negatives() -> None:
    with pytest.raises(ValueError, match="unequal"):
        curve_csv_rows(1, np.arange(3), np.arange(2))
    with pytest.raises(ValueError, match="never negative"):
        curve_csv_rows(1, np.array([1, -1]), np.array([1, 1]))


def test_log2_ticks() -> None:
    assert log2_ticks(1) == ([1, 2], ["2⁰", "2¹"])
    ticks, labels = log2_ticks(16_930)
    assert ticks == [1 << e for e in range(0, 16, 2)] and labels[-1] == "2¹⁴"
    ticks, labels = log2_ticks(1_324_997)
    assert len(ticks) <= 11 and ticks[-1] >= 1_324_997 // 2 and labels[0] == "2⁰"


def _figures(trace: Path) -> list[tuple[object, object, Source]]:
    out = []
    for window in (None, CLAIM_WINDOW):
        summary, curve = compute_curve(trace, window)
        source = Source("../shared/data/mooncake/conversation_trace.jsonl", summary.sha256,
                        window)
        out.append((curve, counts_from(summary, curve), source))
    return out


def test_published_plots_have_no_clipped_text(trace_path: Path) -> None:
    with matplotlib.rc_context(PLOT_RC):
        for curve, counts, source in _figures(trace_path):
            fig = curve_figure(curve, counts, source, sweep_capacities(counts.distinct))
            assert texts_outside(fig) == []
            assert "\n" in plot_title(source, counts.references, counts.distinct)


def test_planted_one_line_title_is_found_clipped(trace_path: Path) -> None:
    # the title the committed window plot had: one line, cut at "...exact at every cap"
    with matplotlib.rc_context(PLOT_RC):
        curve, counts, source = _figures(trace_path)[1]
        fig = curve_figure(curve, counts, source, sweep_capacities(counts.distinct))
        ax = fig.axes[0]
        ax.set_title(plot_title(source, counts.references, counts.distinct).replace("\n", ": "),
                     fontsize=9)
        clipped = texts_outside(fig)
    assert len(clipped) == 1 and "exact at every capacity" in clipped[0]
