"""Reviewed statements, comparator-style: a committed file of what each published theorem says.

``reviewed/statements.json`` lists, for every published theorem, its printed statement, the
hash of its statement term and the hash of its *meaning closure* (the statement plus every
library definition it depends on, :mod:`.meaning`), and, for every such definition, its
digest. certify fails when the library disagrees with the file; the file changes only through
``pytools review-statements --accept``, so a change to what a published theorem
says is a diff of its own, read and committed on purpose.

Format: canonical JSON (sorted keys, two-space indent, UTF-8, final newline), chosen over a
free text format because it is parsed here with the standard library alone (no hand-written
parser in the trusted path) and still diffs line by line: one field per line, the printed
statement on one line beside its hashes. The theorem's module is recorded for the reader but
not compared (moving a theorem between modules does not change what it says).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytools.files import atomic_write_bytes

from .records import AuditError, AuditReport

REVIEWED_FILE = Path("reviewed") / "statements.json"
FORMAT = "pytools-reviewed-statements/1"
ACCEPT_COMMAND = "pytools review-statements --accept"
#: The file's own note. Its wording is committed in reviewed/statements.json (the command as
#: it was spelled then, which still works): changing it would rewrite that file.
ABOUT = ("The reviewed statements of the published theorems. certify fails when a theorem's "
         "statement, or a library definition it depends on, differs from this file. Change it "
         "only with `python -m pytools review-statements --accept`, after reading the diff it "
         "makes.")


#: How many changed definitions a finding names (the rest are counted).
SHOWN = 8


def document(report: AuditReport, theorems: Sequence[str]) -> dict[str, Any]:
    """What the file would hold for the library as audited in ``report``."""
    decls = report.by_name()
    meanings = {name: (sha, used) for name, sha, used in report.meanings}
    digests = dict(report.definitions)
    entries = []
    used_all: set[str] = set()
    for name in sorted(set(theorems)):
        d = decls.get(name)
        if d is None:
            raise AuditError(f"published theorem {name} is not in the audited library")
        if name not in meanings:
            raise AuditError(f"the audit computed no meaning closure for {name}")
        sha, used = meanings[name]
        used_all.update(used)
        entries.append({"name": name, "module": d.module, "statement": d.statement,
                        "statement_sha256": d.statement_sha256, "closure_sha256": sha,
                        "uses": list(used)})
    return {"format": FORMAT, "about": ABOUT, "theorems": entries,
            "definitions": {n: digests[n] for n in sorted(used_all)}}


def render(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def load(path: Path) -> dict[str, Any]:
    """Read and check the file's structure; a clear :class:`AuditError` naming the file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise AuditError(f"{path}: missing; create it with `{ACCEPT_COMMAND}`") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AuditError(f"{path}: unreadable: {exc}") from exc
    ok = (isinstance(doc, dict) and doc.get("format") == FORMAT
          and isinstance(doc.get("theorems"), list) and isinstance(doc.get("definitions"), dict)
          and all(isinstance(t, dict) and isinstance(t.get("name"), str)
                  and isinstance(t.get("statement_sha256"), str)
                  and isinstance(t.get("closure_sha256"), str)
                  and isinstance(t.get("uses"), list) for t in doc["theorems"]))
    if not ok:
        raise AuditError(f"{path}: not a reviewed-statements file ({FORMAT})")
    return doc


def compare(reviewed: dict[str, Any], current: dict[str, Any], label: str) -> list[str]:
    """Every difference between the reviewed file and the library, one problem line each,
    each naming the theorem (and the definition) and ending with how to accept it."""
    hint = f"; review it, then run `{ACCEPT_COMMAND}` and commit {label}"
    old = {t["name"]: t for t in reviewed["theorems"]}
    new = {t["name"]: t for t in current["theorems"]}
    old_defs, new_defs = reviewed["definitions"], current["definitions"]
    problems = []
    for name in sorted(set(new) - set(old)):
        problems.append(f"{label}: {name} is published but has no reviewed statement "
                        f"(now: {new[name]['statement']}){hint}")
    for name in sorted(set(old) - set(new)):
        problems.append(f"{label}: lists {name}, which is no longer published{hint}")
    for name in sorted(set(old) & set(new)):
        a, b = old[name], new[name]
        if a["statement_sha256"] != b["statement_sha256"]:
            problems.append(f"{label}: the statement of {name} changed (reviewed "
                            f"{a['statement_sha256'][:12]}…, now {b['statement_sha256'][:12]}…):"
                            f" was `{a.get('statement')}`, now `{b['statement']}`{hint}")
        elif a["closure_sha256"] != b["closure_sha256"]:
            changed = sorted({u for u in set(a["uses"]) | set(b["uses"])
                              if old_defs.get(u) != new_defs.get(u)})
            shown = ", ".join(changed[:SHOWN]) or "?"
            more = f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else ""
            problems.append(f"{label}: what the statement of {name} means changed: library "
                            f"definitions it depends on differ: {shown}{more}{hint}")
    return problems


def check(root: Path, report: AuditReport, theorems: Sequence[str],
          path: Path = REVIEWED_FILE) -> list[str]:
    """certify's check: problems, empty when the library matches the reviewed file."""
    try:
        reviewed = load(root / path)
    except AuditError as exc:
        return [str(exc)]
    return compare(reviewed, document(report, theorems), str(path))


def accept(root: Path, report: AuditReport, theorems: Sequence[str],
           path: Path = REVIEWED_FILE) -> bytes:
    """Write the file for the library as it is now (atomically); returns the bytes."""
    data = render(document(report, theorems))
    atomic_write_bytes(root / path, data)
    return data
