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
#: A table figure with more rows than this is folded behind a summary (a sweep of two dozen
#: rows would otherwise be the tallest thing in its section; the plot above shows its shape).
FOLD_ROWS = 8
#: An object figure whose keys and values run to more characters than this is folded too:
#: a few nested records (an engine's prime-and-probe counts) fill a screen when open.
FOLD_CHARS = 200
#: A result's limits that run to more characters than this are folded behind an amber summary
#: that counts them: tenant-leak's 6,900 characters filled 1,070 px at 1280 px, and five such
#: lists were a quarter of the page. A short list (a few lines) stays open.
LONG_LIMITS = 1000
#: A value nested in an object figure (an object or a list) whose one-line JSON runs longer
#: than this is shown on its own, folded behind a summary of its size, as a table or pairs
#: where it is one: the routing figure's nested claim, rows and window ran to 60,000
#: characters of one wrapped line (16,000 px tall when its table was opened).
LONG_VALUE = 300
#: How deep nested values are unfolded into tables of their own; deeper ones stay one line.
MAX_DEPTH = 3
#: A table of records with more columns than this shows each record as its own list of
#: key/value pairs: nine columns squeezed into a figure's cell break every number mid-digit.
WIDE_COLUMNS = 5
#: A statement longer than this is a machine-expanded term (a workflow's whole trajectory,
#: 256-bit nonces), not something a reader reads: the page folds it behind a summary. The
#: longest hand-written statement of the published results is under 1,000 characters.
LONG_STATEMENT = 1200


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


#: A qualified Lean name (``KVCache.Kernel.Act.alloc``): the page shows its last component.
_QUALIFIED = re.compile(r"(?<![\w.'])(?:[A-Za-z_][\w']*\.)+([A-Za-z_][\w']*)")
_CONS = "List.cons "


def _term_end(text: str, at: int) -> int:
    """Where the term starting at ``at`` ends: a parenthesised group or one atom."""
    if text.startswith("(", at):
        depth = 0
        for i in range(at, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                return i + 1
        return len(text)
    end = at
    while end < len(text) and not text[end].isspace() and text[end] not in "()":
        end += 1
    return end


def list_literal(statement: str) -> tuple[str, ...]:
    """The elements of the first ``List.cons a (List.cons b … List.nil)`` in a statement, each
    without its namespaces (``KVCache.Kernel.Act.alloc 0 0`` is ``alloc 0 0``); empty when
    there is none. A workflow theorem states its actions this way: these are its steps."""
    at = statement.find(_CONS)
    items: list[str] = []
    while at >= 0 and statement.startswith(_CONS, at):
        start = at + len(_CONS)
        end = _term_end(statement, start)
        item = statement[start:end]
        if item.startswith("(") and item.endswith(")"):
            item = item[1:-1]
        items.append(_QUALIFIED.sub(r"\1", item))
        rest = end + 1
        if statement.startswith("(" + _CONS, rest):
            at = rest + 1
            continue
        break
    return tuple(items)


@dataclass(frozen=True)
class Display:
    """How a figure's value is shown: ``text``, or a small table: ``records`` (a list of flat
    objects, one row each) or the key/value ``pairs`` of an object."""

    text: str = ""
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    more_rows: int = 0
    pairs: bool = False
    #: for ``pairs``: each value's own display where it is long and nested
    #: (:data:`LONG_VALUE`), else None (shown as its one-line text), one per row
    nested: tuple[Display | None, ...] = ()

    def child(self, index: int) -> Display | None:
        """The folded display of the ``index``-th pair's value, or None."""
        return self.nested[index] if index < len(self.nested) else None

    @property
    def size_label(self) -> str:
        """What a folded value holds, for its summary: ``35 rows × 6 columns``, ``9
        entries``, or a long text's length."""
        count = len(self.rows) + self.more_rows
        if self.pairs:
            return f"{count} entr{'y' if count == 1 else 'ies'}"
        if self.columns:
            return f"{count} row{'s' if count != 1 else ''} × {len(self.columns)} columns"
        return f"{len(self.text):,} characters"

    @property
    def folded(self) -> bool:
        """Too many rows, or an object too long, to show open: the page folds the table
        behind a summary."""
        if len(self.rows) + self.more_rows > FOLD_ROWS:
            return True
        return self.pairs and sum(len(k) + len(v) for k, v in self.rows) > FOLD_CHARS

    @property
    def wide(self) -> bool:
        """Records with too many columns for a table in a figure's cell (:data:`WIDE_COLUMNS`):
        the page shows each record as its own list of pairs."""
        return not self.pairs and len(self.columns) > WIDE_COLUMNS


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    # one line that wraps at its commas (an indented dump is one number per line)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _nested(value: Any, depth: int) -> Display | None:
    """A long object or list inside an object, shown on its own (:data:`LONG_VALUE`)."""
    if not isinstance(value, dict | list) or depth >= MAX_DEPTH:
        return None
    if len(_scalar_text(value)) <= LONG_VALUE:
        return None
    return display_value(value, depth + 1)


def display_value(value: Any, depth: int = 0) -> Display:
    """Scalars and lists of scalars as text, a list of flat objects with one key set as a
    table of records, an object as a table of its keys and values (nested values as one-line
    JSON; a long one also as its own display, :func:`_nested`), anything else as one-line
    JSON. ``depth``: how deep inside an object figure this value is."""
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
    if isinstance(value, dict) and value:
        keys = sorted(value)
        pairs = tuple((str(k), _scalar_text(value[k])) for k in keys)
        return Display(columns=("key", "value"), rows=pairs[:MAX_TABLE_ROWS],
                       more_rows=max(0, len(pairs) - MAX_TABLE_ROWS), pairs=True,
                       nested=tuple(_nested(value[k], depth) for k in keys[:MAX_TABLE_ROWS]))
    return Display(text=_scalar_text(value))


def figure_description(schema: dict[str, Any] | None, name: str) -> str:
    """What a figure is, from its result's figures schema (``description``)."""
    if not schema:
        return "(no description: the result has no figures schema)"
    prop = schema.get("properties", {}).get(name)
    if not isinstance(prop, dict) or not prop.get("description"):
        return "(not described in the result's figures schema)"
    return str(prop["description"])
