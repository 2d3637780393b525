"""Issue 42, row 13: the routing plot's capacity labels printed over one another (16,384 and
16,944 in the claim window's plot). The overlap checker finds tick labels that overlap (its
planted defect: the plot as it was drawn, every capacity labelled) and the plot leaves such
labels out, keeping every tick and the largest capacity's label."""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure

from pytools.results.placement.routing import requests_of, run_sweep
from pytools.results.placement.routing_report import PLOT_RC, routing_figure, routing_svg
from pytools.results.ticks import thin_x_tick_labels, tick_labels_overlapping

PLANT = [[0, 1, 2], [0, 3, 4], [0, 1, 2, 5], [0, 3, 4, 6], [0, 7], [0, 1, 2, 5, 8],
         [0, 3, 9], [0, 7, 10]]
#: The claim window's capacities: the two last ones 3 % apart on a log axis.
CAPACITIES = (256, 1024, 4096, 16384, 16944)


def _as_drawn_before() -> Figure:
    fig = Figure(figsize=(10.0, 4.4), dpi=100)
    fig.subplots_adjust(left=0.06, right=0.985, top=0.86, bottom=0.24, wspace=0.18)
    ax = fig.add_subplot(1, 2, 2)
    ax.plot(CAPACITIES, [1, 2, 3, 4, 5])
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(CAPACITIES), [f"{c:,}" for c in CAPACITIES], fontsize=6.5,
                  rotation=35, ha="right")
    ax.minorticks_off()
    return fig


def test_planted_overlapping_capacity_labels_are_found() -> None:
    with matplotlib.rc_context(PLOT_RC):
        found = tick_labels_overlapping(_as_drawn_before())
    assert found == ["'16,384' and '16,944' (axes 0)"]


def test_thinning_keeps_every_tick_and_the_largest_label() -> None:
    with matplotlib.rc_context(PLOT_RC):
        fig = _as_drawn_before()
        thin_x_tick_labels(fig, fig.axes[0])
        assert tick_labels_overlapping(fig) == []
        ax = fig.axes[0]
        assert list(ax.get_xticks()) == list(CAPACITIES)
        assert [t.get_text() for t in ax.get_xticklabels()] == [
            "256", "1,024", "4,096", "", "16,944"]


def test_the_routing_plot_has_no_overlapping_tick_labels() -> None:
    sw = run_sweep(requests_of(PLANT), capacities=CAPACITIES)
    with matplotlib.rc_context(PLOT_RC):
        fig = routing_figure(sw, "t.jsonl")
        assert tick_labels_overlapping(fig) == []
        right = fig.axes[1]
        assert list(right.get_xticks()) == list(CAPACITIES)
        assert right.get_xticklabels()[-1].get_text() == "16,944"
    assert routing_svg(sw, "t.jsonl") == routing_svg(sw, "t.jsonl")
