"""How values are shown on the page: readable statements, figure values, and the one line per
figure that says what it is and how the page knows it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: A compiler-internal (hygienic) name: macro scopes ``_@`` or ``_hyg`` anywhere in it.
_HYGIENIC = r"[^\s()\[\]{}⦃⦄:,]*(?:_@|_hyg)[^\s()\[\]{}⦃⦄:,]*"
_INST_BINDER = re.compile(r"\[(" + _HYGIENIC + r") : ")
_OTHER_BINDER = re.compile(r"([({⦃])(" + _HYGIENIC + r") : ")
_ANYWHERE = re.compile(_HYGIENIC)

#: Rows of a table figure shown on the page (the certificate has them all).
MAX_TABLE_ROWS = 24


def readable_statement(text: str) -> tuple[str, bool]:
    """The statement with compiler-internal names hidden, and whether any was.

    ``[inst._@.M.123._hygCtx._hyg.3 : DecidableEq α]`` becomes ``[DecidableEq α]`` (an
    anonymous instance, as Lean prints it); any other such name becomes ``x✝``. The text the
    certificate holds (and the manifest hashes) is unchanged; only the display is.
    """
    shown = _INST_BINDER.sub("[", text)
    shown = _OTHER_BINDER.sub(lambda m: f"{m.group(1)}x✝ : ", shown)
    shown = _ANYWHERE.sub("x✝", shown)
    return shown, shown != text


@dataclass(frozen=True)
class Display:
    """How a figure's value is shown: ``text`` or a small ``table``."""

    text: str = ""
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    more_rows: int = 0


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def display_value(value: Any) -> Display:
    """Scalars as text, a list of flat objects with one key set as a table, else JSON."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(row, dict) for row in value)
        and len({tuple(row) for row in value}) == 1
        and all(not isinstance(v, dict | list) for row in value for v in row.values())
    ):
        columns = tuple(value[0])
        rows = tuple(tuple(_scalar_text(row[c]) for c in columns) for row in value)
        return Display(
            columns=columns,
            rows=rows[:MAX_TABLE_ROWS],
            more_rows=max(0, len(rows) - MAX_TABLE_ROWS),
        )
    if isinstance(value, dict | list):
        return Display(text=json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1))
    return Display(text=_scalar_text(value))


def figure_description(schema: dict[str, Any] | None, name: str) -> str:
    """What a figure is, from its result's figures schema (``description``)."""
    if not schema:
        return "(no description: the result has no figures schema)"
    prop = schema.get("properties", {}).get(name)
    if not isinstance(prop, dict) or not prop.get("description"):
        return "(not described in the result's figures schema)"
    return str(prop["description"])
