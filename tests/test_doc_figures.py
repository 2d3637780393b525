"""No hand-typed figure that can drift: every number in README.md and docs/ is generated, or
checked against the file it comes from, or a dated measurement, or declared not a figure.

The rules, for each checked Markdown file (fenced code, inline code and the generated blocks
``<!-- pytools.certify:NAME -->`` are skipped; a version such as ``0.33.0``, an identifier such
as ``SHA-256`` or ``Ed25519`` and a date are not numbers here):

* inside ``<!-- figures: FILE... -->`` ... ``<!-- /figures -->`` every number must be a value
  of one of the named JSON files (a number, a numeric string, or a number written inside a
  string value; compared at the precision the doc writes, as is or as a percentage of a
  fraction);
* inside ``<!-- measured: YYYY-MM-DD, MACHINE -->`` ... ``<!-- /measured -->`` numbers are
  a measurement of that date on that machine (the marker must carry both), stated as such;
* ``<!-- not-figures: N N ... (why) -->`` lists, for the whole file, numbers that are not
  figures (a Python version, a status code, a bound of the model);
* anywhere else only one-digit numbers may appear (``capacity 1``, ``T ≥ 2``, ``Lean 4``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation, localcontext
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


_NUMBER = re.compile(r"(?<![\w\-.:#@^+])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w\-:]|\.\d|,\d{3})")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_INLINE = re.compile(r"`[^`\n]*`")
_GENERATED = re.compile(r"<!-- (pytools\.certify:[a-z]+) -->.*?<!-- /\1 -->", re.S)
_SPAN = re.compile(r"<!-- (figures|measured): ([^>]*?) -->(.*?)<!-- /\1 -->", re.S)
_NOT_FIGURES = re.compile(r"<!-- not-figures: ([^>]*?) -->")


def checked_files() -> list[str]:
    """The Markdown files held to these rules: README and every page under docs/."""
    return ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))]


def numbers(text: str) -> list[str]:
    """The standalone numbers of prose ``text`` (as written)."""
    return _NUMBER.findall(text)


def _prose(text: str) -> str:
    """``text`` without code and generated blocks (each replaced by a space)."""
    for pattern in (_GENERATED, _FENCE, _INLINE):
        text = pattern.sub(" ", text)
    return text


def _decimal(word: str) -> Decimal:
    return Decimal(word.replace(",", ""))


def json_values(data: Any) -> set[Decimal]:
    """Every number of a JSON document: its numbers, numeric strings and the numbers written
    inside its strings."""
    found: set[Decimal] = set()
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, bool) or node is None:
            continue
        if isinstance(node, dict):
            stack += list(node.values())
        elif isinstance(node, list):
            stack += node
        elif isinstance(node, (int, float)):
            found.add(Decimal(str(node)))
        elif isinstance(node, str):
            try:
                found.add(Decimal(node))
            except InvalidOperation:
                found.update(_decimal(w) for w in numbers(node))
    return found


def matches(word: str, values: set[Decimal]) -> bool:
    """Whether the doc's ``word`` is one of ``values``, at the precision it is written, as is
    or as a percentage (``0.30`` % of 0.002991)."""
    written = _decimal(word)
    step = Decimal(1).scaleb(written.as_tuple().exponent)  # type: ignore[arg-type]
    # Wide enough for any literal a certificate holds (a generated table's codes run to 20+
    # digits; the default 28 digits would make quantize raise on them).
    with localcontext() as ctx:
        ctx.prec = 400
        for value in values:
            for candidate in (value, value * 100):
                if candidate.quantize(step, rounding=ROUND_HALF_EVEN) == written:
                    return True
    return False


@dataclass(frozen=True)
class Problem:
    """One number a doc may not have as it stands."""

    file: str
    number: str
    why: str

    def __str__(self) -> str:
        return f"{self.file}: {self.number}: {self.why}"


def problems(rel: str, text: str, root: Path = ROOT) -> list[Problem]:
    """Every number of ``text`` (the file ``rel``) that breaks the rules above."""
    allowed = {_decimal(w) for m in _NOT_FIGURES.finditer(text) for w in numbers(m.group(1))}
    text = _NOT_FIGURES.sub(" ", _prose(text))
    found: list[Problem] = []
    for span in _SPAN.finditer(text):
        kind, head, body = span.groups()
        if kind == "measured":
            if not _DATE.search(head) or "," not in head:
                found.append(Problem(rel, head, "a measured span names its date and machine"))
            continue
        values: set[Decimal] = set()
        for name in head.split():
            path = root / name
            if not path.is_file():
                found.append(Problem(rel, name, "figures from a file that does not exist"))
                continue
            values |= json_values(json.loads(path.read_text(encoding="utf-8")))
        found += [Problem(rel, w, f"not a value of {head.strip()}") for w in numbers(body)
                  if _decimal(w) not in allowed and not matches(w, values)]
    rest = _SPAN.sub(" ", text)
    for stray in re.findall(r"<!-- /?(?:figures|measured)\b[^>]*-->", rest):
        found.append(Problem(rel, stray, "an unclosed or misnamed span marker"))
    found += [Problem(rel, w, "a figure outside a figures or measured span")
              for w in numbers(rest)
              if _decimal(w) not in allowed and (_decimal(w) >= 10 or "." in w)]
    return found


@pytest.mark.parametrize("rel", checked_files())
def test_every_figure_is_checked_or_dated(rel: str) -> None:
    assert [str(p) for p in problems(rel, (ROOT / rel).read_text(encoding="utf-8"))] == []


# --- planted defects --------------------------------------------------------------------------


def _doc(tmp_path: Path, figures: dict[str, Any], body: str) -> list[str]:
    (tmp_path / "cert.json").write_text(json.dumps({"figures": figures}))
    return [str(p) for p in problems("doc.md", body, tmp_path)]


def test_planted_drifted_figure_is_caught(tmp_path: Path) -> None:
    body = ("<!-- figures: cert.json -->at most 8,139 of 21,069 references "
            "(38.6302 %, 0.30 % bound)<!-- /figures -->")
    figures = {"hits": 8139, "refs": 21069, "pct": "38.6302", "bound": 0.002991}
    assert _doc(tmp_path, figures, body) == []
    drifted = {**figures, "hits": 8140}
    assert _doc(tmp_path, drifted, body) == [
        "doc.md: 8,139: not a value of cert.json"]
    assert _doc(tmp_path, figures, body.replace("38.6302", "38.6303")) == [
        "doc.md: 38.6303: not a value of cert.json"]


def test_a_certificate_with_wide_literals_is_still_compared(tmp_path: Path) -> None:
    # A generated table's codes (0x4211086108410842108421 and wider) beside the figures.
    figures = {"states": 36, "code": 0x4211086108410842108421 << 80}
    body = "<!-- figures: cert.json -->36 states, 37 rows<!-- /figures -->"
    assert _doc(tmp_path, figures, body) == ["doc.md: 37: not a value of cert.json"]


def test_planted_untracked_figures_are_caught(tmp_path: Path) -> None:
    assert _doc(tmp_path, {}, "a build took 5 min 10 s on 21 modules") == [
        "doc.md: 10: a figure outside a figures or measured span",
        "doc.md: 21: a figure outside a figures or measured span"]
    assert _doc(tmp_path, {}, "<!-- measured: 2026-12-06, 2-core machine -->took 5 min 10 s"
                "<!-- /measured -->") == []
    assert _doc(tmp_path, {}, "<!-- measured: lately -->took 5 min 10 s<!-- /measured -->") \
        == ["doc.md: lately: a measured span names its date and machine"]
    assert _doc(tmp_path, {}, "<!-- figures: cert.json -->19 %") == [
        "doc.md: <!-- figures: cert.json -->: an unclosed or misnamed span marker",
        "doc.md: 19: a figure outside a figures or measured span"]
    assert _doc(tmp_path, {}, "<!-- figures: gone.json -->1<!-- /figures -->") == [
        "doc.md: gone.json: figures from a file that does not exist",
        "doc.md: 1: not a value of gone.json"]


def test_what_is_not_a_number_here(tmp_path: Path) -> None:
    text = ("vLLM 0.33.0, SHA-256, Ed25519, v1, 2-core, 2026-12-06, `1234`, lines 1201–2000, "
            "1, 2 and 8,139, 34/93.75")
    assert numbers(_prose(text)) == ["1201", "2000", "1", "2", "8,139", "34", "93.75"]
    assert _doc(tmp_path, {}, "<!-- not-figures: 401 413 -->401 or 413") == []
