"""Tests of the curve command's output path: the compiled CSV formatter, the plot's ticks and
title, the clipping checker (with its planted defect: the one-line title that was clipped
in the committed window plot), the reduction of a curve to its visible points (with its
planted defect: the log-spaced sampling drawn before), and the plot worker process."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from pytools.results.ceiling import plot as plot_module
from pytools.results.ceiling import plot_worker as plot_worker_module
from pytools.results.ceiling.plot import (
    COLUMNS_PER_PIXEL,
    PLOT_FORMATS,
    PLOT_RC,
    PlotData,
    Source,
    curve_figure,
    log2_ticks,
    pixel_columns,
    plot_capacities,
    plot_data,
    plot_title,
    render_plots,
    texts_outside,
    visible_points,
)
from pytools.results.ceiling.plot_worker import PlotFailed, plot_worker
from pytools.results.ceiling.result import CLAIM_WINDOW
from pytools.results.ceiling.sweep import counts_from, curve_csv_rows, sweep_capacities
from pytools.traces.curve import Curve, compute_curve
from pytools.traces.trace import CeilingCounts


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


# ----------------------------------------------------------------------------- visible points


def lost_columns(columns: np.ndarray, series: np.ndarray, kept: np.ndarray) -> list[int]:
    """The columns whose minimum or maximum over every point is not among the kept points
    (what a line through the kept points would not show)."""
    lost = []
    for col in np.unique(columns):
        every = series[columns == col]
        drawn = series[kept[columns[kept] == col]]
        if drawn.size == 0 or drawn.min() != every.min() or drawn.max() != every.max():
            lost.append(int(col))
    return lost


def _series(seed: int, n: int, monotone: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    steps = rng.integers(0, 3, n) * (rng.random(n) < 0.3)
    return np.cumsum(steps) if monotone else rng.integers(0, 50, n)


@pytest.mark.parametrize("monotone", [True, False], ids=["hits-curve", "any-series"])
@pytest.mark.parametrize("n", [1, 2, 37, 5000, 200_000])
def test_visible_points_keep_every_columns_extremes(n: int, monotone: bool) -> None:
    every = np.arange(1, n + 1, dtype=np.int64)
    columns = pixel_columns(every, n)
    a, b = _series(n, n, monotone), _series(n + 1, n, monotone)
    kept = visible_points(columns, a, b)
    assert np.all(np.diff(kept) > 0) and kept[0] == 0 and kept[-1] == n - 1
    assert lost_columns(columns, a, kept) == [] and lost_columns(columns, b, kept) == []
    # at most 2 points a column for non-decreasing curves, 6 for any series
    per = 2 if monotone else 6
    assert kept.size <= per * np.unique(columns).size


def test_planted_log_spaced_sampling_loses_visible_points() -> None:
    # what the plots drew before: 1,500 log-spaced capacities; on a curve rising at every
    # capacity most columns of the upper range then miss their first or last value
    n = 1_324_997
    every = np.arange(1, n + 1, dtype=np.int64)
    columns = pixel_columns(every, n)
    rising = every.copy()
    sampled = plot_capacities(n) - 1
    assert len(lost_columns(columns, rising, sampled)) > 500
    assert lost_columns(columns, rising, visible_points(columns, rising)) == []


def test_visible_points_refuse_unordered_columns_and_short_series() -> None:
    with pytest.raises(ValueError, match="non-decreasing"):
        visible_points(np.array([0, 2, 1]), np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="2 points for 3"):
        visible_points(np.array([0, 1, 1]), np.array([1, 2]))
    assert visible_points(np.zeros(0, dtype=np.int64)).size == 0


def _synthetic_curve(n: int, seed: int) -> tuple[Curve, CeilingCounts, Source]:
    rng = np.random.default_rng(seed)
    opt = np.cumsum(rng.integers(0, 4, n)).astype(np.int32)
    lru = np.minimum(opt, np.cumsum(rng.integers(0, 3, n))).astype(np.int32)
    refs = int(opt[-1]) + n
    counts = CeilingCounts(requests=1, references=refs, distinct=n, sha256="0" * 64)
    return (Curve(references=refs, distinct=n, lru_hits=lru, opt_hits=opt), counts,
            Source("synthetic.jsonl", "0" * 64))


@pytest.mark.parametrize("n", [3, 900, 300_000])
def test_drawn_lines_keep_every_pixel_columns_extremes(n: int) -> None:
    # the columns are computed from the layout constants; here matplotlib's own transform of
    # the figure as drawn places every capacity, and no pixel column of either line (nor of
    # its half-pixel columns) loses its lowest or highest value
    curve, counts, source = _synthetic_curve(n, seed=n)
    with matplotlib.rc_context(PLOT_RC):
        fig = curve_figure(curve, counts, source, sweep_capacities(n))
        fig.canvas.draw()
        ax = fig.axes[0]
        every = np.arange(1, n + 1, dtype=np.float64)
        x = ax.transData.transform(np.column_stack([every, np.zeros(n)]))[:, 0]
        assert np.max(np.abs(x - (pixel_columns(every, n) + 0.5) / COLUMNS_PER_PIXEL)) <= 0.5
        opt_line, lru_line = ax.get_lines()[:2]
        for line, hits in ((opt_line, curve.opt_hits), (lru_line, curve.lru_hits)):
            kept = np.asarray(line.get_xdata(), dtype=np.int64) - 1
            assert np.allclose(line.get_ydata(), 100.0 * hits[kept] / counts.references)
            for per_pixel in (1, COLUMNS_PER_PIXEL):
                columns = np.floor(x * per_pixel + 1e-9).astype(np.int64)
                assert lost_columns(columns, hits, kept) == []


# ----------------------------------------------------------------------------- plot worker


def _data(n: int = 5000) -> PlotData:
    curve, counts, source = _synthetic_curve(n, seed=1)
    return plot_data(curve, counts, source, sweep_capacities(n))


def test_the_worker_draws_the_bytes_drawn_in_process() -> None:
    data = _data()
    here = dict(render_plots(data))
    with plot_worker() as worker:
        assert worker is not None
        worker.submit(data)
        assert {fmt: worker.result(fmt) for fmt in PLOT_FORMATS} == here
    assert here["svg"].startswith(b"<?xml") and here["png"].startswith(b"\x89PNG")


def test_a_plot_the_worker_cannot_draw_is_named(monkeypatch) -> None:
    real = plot_module.save_plot

    def png_fails(fig, source, fmt):  # type: ignore[no-untyped-def]
        if fmt == "png":
            raise RuntimeError("renderer exploded")
        return real(fig, source, fmt)

    monkeypatch.setattr(plot_module, "save_plot", png_fails)
    with plot_worker() as worker:
        assert worker is not None
        worker.submit(_data())
        assert worker.result("svg").startswith(b"<?xml")
        with pytest.raises(PlotFailed, match="RuntimeError: renderer exploded"):
            worker.result("png")


def test_a_worker_that_dies_is_a_clear_failure(monkeypatch) -> None:
    monkeypatch.setattr(plot_module, "render_plots", lambda data, formats: os._exit(3))
    with plot_worker() as worker:
        assert worker is not None
        worker.submit(_data())
        with pytest.raises(PlotFailed, match=r"ended without drawing it \(exit status 3\)"):
            worker.result("svg")


def test_a_worker_left_without_a_request_exits(monkeypatch) -> None:
    worker = plot_worker_module.start()
    assert worker is not None
    worker.close()  # the command failed before it had a curve
    assert worker._process.exitcode == 0
    monkeypatch.setenv(plot_worker_module.ENV_SWITCH, "0")
    assert plot_worker_module.start() is None


WARM_THEN_DRAW = """
import pickle, sys
import matplotlib.artist
kwdoc = matplotlib.artist.kwdoc
from pytools.results.ceiling import plot_worker
plot_worker._warm()  # the worker's imports, set docstrings skipped
from matplotlib.lines import Line2D
from pytools.results.ceiling.plot import render_plots
assert matplotlib.artist.kwdoc is kwdoc, "kwdoc not restored"
with open(sys.argv[1], "rb") as handle:
    data = pickle.load(handle)
with open(sys.argv[2], "wb") as handle:
    pickle.dump((dict(render_plots(data)), Line2D.set.__doc__), handle)
"""


def test_the_workers_lean_import_draws_the_same_bytes(tmp_path: Path) -> None:
    """The worker's matplotlib, imported without the ``set`` docstrings in a fresh process,
    draws the bytes of a matplotlib imported as usual (this process)."""
    import pickle
    import subprocess
    import sys

    data = _data()
    (tmp_path / "data.pkl").write_bytes(pickle.dumps(data))
    subprocess.run([sys.executable, "-c", WARM_THEN_DRAW, str(tmp_path / "data.pkl"),
                    str(tmp_path / "out.pkl")], check=True,
                   env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    drawn, set_doc = pickle.loads((tmp_path / "out.pkl").read_bytes())
    assert drawn == dict(render_plots(data))
    assert (set_doc or "").endswith("Supported properties are\n\n")  # no list after
    from matplotlib.lines import Line2D
    assert not (Line2D.set.__doc__ or "").endswith("are\n\n")  # here it was listed
