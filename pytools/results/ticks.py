"""Tick labels that stay legible: find the labels of an axis printed over one another (the
checker every plot's test runs), and leave out those that would be (the ticks stay). Shared by
the results' plots; imports matplotlib only when called."""

from __future__ import annotations

from typing import Any


def _tick_label_boxes(fig: Any, ax: Any) -> list[tuple[Any, Any]]:
    """(label, its box in pixels) of every visible, non-empty major tick label of ``ax``, x
    axis then y axis, each in axis order; ``fig`` laid out with the Agg renderer first."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    out = []
    for axis in (ax.xaxis, ax.yaxis):
        for tick in axis.get_major_ticks():
            label = tick.label1
            if label.get_visible() and tick.get_visible() and label.get_text().strip():
                out.append((label, label.get_window_extent(renderer)))
    return out


def tick_labels_overlapping(fig: Any) -> list[str]:
    """Every pair of tick labels of one axes of ``fig`` whose boxes overlap (illegible: one
    printed over the other), as ``'a' and 'b' (axes i)``."""
    out = []
    for i, ax in enumerate(fig.axes):
        boxes = _tick_label_boxes(fig, ax)
        for k, (a, box_a) in enumerate(boxes):
            for b, box_b in boxes[k + 1:]:
                wide = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
                high = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
                if wide > 0.5 and high > 0.5:
                    out.append(f"{a.get_text()!r} and {b.get_text()!r} (axes {i})")
    return out


def thin_x_tick_labels(fig: Any, ax: Any) -> None:
    """Blank the x tick labels of ``ax`` that would overlap a label kept to their right (the
    ticks stay; the rightmost label, the largest value, is always kept)."""
    ticks = list(ax.xaxis.get_major_ticks())
    boxes = dict(_tick_label_boxes(fig, ax))
    texts = [t.label1.get_text() for t in ticks]
    kept: list[Any] = []
    for i in sorted(range(len(ticks)), key=lambda i: -ticks[i].get_loc()):
        box = boxes.get(ticks[i].label1)
        if box is None:
            continue
        if any(min(box.x1, k.x1) - max(box.x0, k.x0) > -2.0 and
               min(box.y1, k.y1) - max(box.y0, k.y0) > -2.0 for k in kept):
            texts[i] = ""
        else:
            kept.append(box)
    ax.xaxis.set_ticklabels(texts)
