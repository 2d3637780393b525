"""Verify's reason codes have one table (``pytools/publish/verify_codes.json``, read by
:mod:`pytools.publish.codes`): every code the
command-line verifier, the anchor checks and the page's verifier give is in it, each is given
by both verifiers, and no other file keeps a list of codes of its own (a second table that
could drift). The page's side (the table embedded, its verdicts read from it) is tested in
tests/test_site.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytools.publish import codes

ROOT = Path(__file__).resolve().parent.parent
PUBLISH = ROOT / "pytools" / "publish"
#: The files that give reasons: Python's verifier and anchor (with the envelope checks they
#: call), and the page's verifier.
PYTHON_SOURCES = (PUBLISH / "verify.py", PUBLISH / "anchor.py", PUBLISH / "attest.py")
JS_SOURCE = PUBLISH / "site" / "templates" / "verifier.js"
#: Files that read codes and must not list them (the CLI, the page's panel).
READERS = (PUBLISH / "cli.py", PUBLISH / "codes.py",
           PUBLISH / "site" / "templates" / "panel.js")

#: A reason given in a string: ``"code: ..."`` (Python f-strings and JS literals alike).
_GIVEN = re.compile(r"""(?<![\w-])[fr]?["']([a-z]+(?:-[a-z]+)*): """)
#: Two or more code-shaped string literals in one bracket: a list of codes.
_LIST = re.compile(r"""[\[({]\s*(?:["'][a-z]+(?:-[a-z]+)+["']\s*,\s*)+["'][a-z]+(?:-[a-z]+)+["']""")


def given_codes(text: str) -> set[str]:
    """Every code a source gives as the head of a reason."""
    return set(_GIVEN.findall(text))


def code_lists(text: str) -> list[str]:
    """Every literal list of two or more known codes in a source (a second table)."""
    out = []
    for match in _LIST.finditer(text):
        named = set(re.findall(r"""["']([a-z-]+)["']""", match.group(0)))
        if len(named & set(codes.REASON_CODES)) >= 2:
            out.append(match.group(0))
    return out


def test_table_is_well_formed() -> None:
    assert len(set(codes.REASON_CODES)) == len(codes.TABLE)
    for entry in codes.TABLE:
        assert entry.verdict in codes.VERDICTS and entry.scope in codes.SCOPES, entry
        assert entry.meaning.endswith("."), entry
    anchors = [c.scope == "anchor" for c in codes.TABLE]
    assert anchors == sorted(anchors, reverse=True)  # anchor codes first, as reported
    assert set(codes.REASON_CODES) == codes.RED_CODES | codes.OK_CODES | codes.NOTE_CODES


def test_a_bad_table_is_refused_naming_the_file() -> None:
    """Planted: an unknown verdict, a repeated code, a table without ``codes``."""
    row = {"code": "x-y", "verdict": "red", "scope": "file", "meaning": "M."}
    assert codes.parse_table(json.dumps({"codes": [row]}))[0].code == "x-y"
    for bad in ({"codes": [dict(row, verdict="amber")]}, {"codes": [row, row]}, {"rows": []},
                {"codes": [dict(row, colour="red")]}):
        with pytest.raises(ValueError, match=codes.TABLE_FILE):
            codes.parse_table(json.dumps(bad))


def test_every_code_given_is_in_the_table_and_given_by_both_verifiers() -> None:
    python = set().union(*(given_codes(p.read_text(encoding="utf-8"))
                           for p in PYTHON_SOURCES))
    js = given_codes(JS_SOURCE.read_text(encoding="utf-8"))
    assert python - set(codes.REASON_CODES) == set()
    assert js - set(codes.REASON_CODES) == set()
    assert python == js == set(codes.REASON_CODES)


@pytest.mark.parametrize("path", [*PYTHON_SOURCES, JS_SOURCE, *READERS],
                         ids=lambda p: p.name)
def test_no_other_file_lists_codes(path: Path) -> None:
    assert code_lists(path.read_text(encoding="utf-8")) == []


def test_the_checks_catch_planted_defects() -> None:
    """Planted: a second table in the page's script, and a reason with a code the table
    does not have."""
    second_table = 'var RED = ["unknown-hash", "too-large"];\n'
    assert code_lists(second_table) == ['["unknown-hash", "too-large"']
    python_table = 'OK = frozenset({"theorems-ok", "policy-ok"})\n'
    assert code_lists(python_table)
    assert code_lists('x = ("not-a-code", "neither")\n') == []  # unknown names: no table
    assert given_codes('reasons.append(f"made-up-code: {detail}")\n') == {"made-up-code"}
    assert given_codes('reasons.push("made-up-code: " + x);\n') == {"made-up-code"}
    assert given_codes('raise VerifyError(f"{path}: no such file")\n') == set()
