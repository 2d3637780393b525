"""Verify's reason codes: the one table of what each code says and what it does to a verdict.

Every reason a verification gives is ``"<code>: <detail>"``. ``verify_codes.json`` (package
data beside this module) is the only place a code is declared: the command-line verifier
(:mod:`.verify`), the anchor checks (:mod:`.anchor`) and the page's verifier
(``site/templates/verifier.js``, which receives the table embedded by the site builder,
:func:`pytools.publish.site.page.verifier_script`) all read it. A code is

* ``red``: the verdict is red;
* ``green``: a check that held; left out of a red verdict (a red verdict carries no "ok");
* ``note``: a fact or a hint, kept on any verdict.

Anchor codes (``scope == "anchor"``) are about the manifest's anchor, shared by every file's
verdict, and printed once above them. Order: the order reasons are reported in.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

TABLE_FILE = "verify_codes.json"
VERDICTS = ("red", "green", "note")
SCOPES = ("anchor", "file")


@dataclass(frozen=True)
class ReasonCode:
    """One reason code: its name, what it does to a verdict, whom it is about, and what it
    means (one sentence, for a reader of a verdict)."""

    code: str
    verdict: str  # one of VERDICTS
    scope: str  # one of SCOPES
    meaning: str


def parse_table(text: str, name: str = TABLE_FILE) -> tuple[ReasonCode, ...]:
    """The table's entries; ``ValueError`` naming the file and the bad entry."""
    try:
        doc = json.loads(text)
        rows = doc["codes"]
        table = tuple(ReasonCode(**row) for row in rows)
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{name}: not a reason-code table: {exc}") from None
    seen: set[str] = set()
    for entry in table:
        if entry.verdict not in VERDICTS or entry.scope not in SCOPES or entry.code in seen:
            raise ValueError(f"{name}: bad or repeated entry {entry}")
        seen.add(entry.code)
    return table


#: Every reason code, in the order reasons are reported (anchor codes first).
TABLE: tuple[ReasonCode, ...] = parse_table(
    resources.files(__package__).joinpath(TABLE_FILE).read_text(encoding="utf-8"))

#: Every code, in the order reasons are reported.
REASON_CODES: tuple[str, ...] = tuple(c.code for c in TABLE)
#: Codes that make a verdict red.
RED_CODES = frozenset(c.code for c in TABLE if c.verdict == "red")
#: Codes that say a check held: on a red verdict they are left out.
OK_CODES = frozenset(c.code for c in TABLE if c.verdict == "green")
#: Informational facts and hints, kept on any verdict.
NOTE_CODES = frozenset(c.code for c in TABLE if c.verdict == "note")
#: Codes about the manifest's anchor (printed once, above the files' verdicts).
ANCHOR_CODES = frozenset(c.code for c in TABLE if c.scope == "anchor")


def code_of(reason: str) -> str:
    """The code of a ``"<code>: <detail>"`` reason."""
    return reason.split(":", 1)[0]


def is_red(reasons: list[str] | tuple[str, ...]) -> bool:
    """True if any reason has a red code."""
    return any(code_of(reason) in RED_CODES for reason in reasons)


def table_for_page() -> list[dict[str, Any]]:
    """The table as the page's verifier receives it (embedded JSON, one object per code)."""
    return [asdict(c) for c in TABLE]
