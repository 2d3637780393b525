"""How the page lays out a published SVG plot: the size it was drawn at and where it sits in
its result's grid, so that its text stays legible on a laptop and a phone."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The least share of its drawn size a plot is shown at on a laptop: its legend, ticks and
#: labels were sized by matplotlib for 100 %, and below about 80 % they stop being legible.
LEGIBLE = 0.8
#: The plot frame's inner width in CSS px across the page's column at its widest
#: (``.wrap``: 1180 px less 2 × 24 px padding, less the frame's 1 px borders) and in half a
#: row of ``.plots`` (two columns, a 14 px gap). Keep in step with ``templates/style.css``.
ROW_PX = 1180 - 2 * 24 - 2
HALF_ROW_PX = (1180 - 2 * 24 - 14) // 2 - 2


@dataclass(frozen=True)
class Plot:
    """A published SVG plot, drawn on the page from its verified bytes."""

    path: str
    sha256: str
    data_uri: str
    caption: str
    #: the published file in the site, so a reader can open the plot at full size
    href: str = ""
    #: the size it was drawn at, in CSS pixels (:func:`svg_size`)
    size: tuple[int, int] | None = None

    @property
    def span(self) -> str:
        """Where the plot sits in its result's grid of plots (a CSS class): ``""`` in a half
        row beside another plot; ``"wide"`` across the whole row when a half row would shrink
        it below :data:`LEGIBLE` of its drawn size (its text was sized for that size);
        ``"oversize"`` across the row at its drawn size, scrolling sideways in its frame, when
        even the whole row would shrink it that far. A plot of unknown size takes a half row."""
        if self.size is None or self.size[0] * LEGIBLE <= HALF_ROW_PX:
            return ""
        return "wide" if self.size[0] * LEGIBLE <= ROW_PX else "oversize"


#: An SVG root's ``width`` or ``height`` (matplotlib writes points: ``504pt``).
_SVG_LENGTH = re.compile(r'\b(width|height)="([0-9.]+)(pt|px)?"')


def svg_size(data: bytes) -> tuple[int, int] | None:
    """The size in CSS pixels an SVG was drawn at (its root's width and height), or None. The
    page shows a plot no smaller than this on a narrow screen: its text was sized for it."""
    start = data.find(b"<svg")
    end = data.find(b">", start)
    if start < 0 or end < 0:
        return None
    sizes: dict[str, float] = {}
    for name, number, unit in _SVG_LENGTH.findall(data[start:end].decode("utf-8", "replace")):
        sizes.setdefault(name, float(number) * (96 / 72 if unit == "pt" else 1))
    if "width" not in sizes or "height" not in sizes:
        return None
    return round(sizes["width"]), round(sizes["height"])
