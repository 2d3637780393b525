"""Reviewed statements (:mod:`pytools.lean.audit.reviewed`) and meaning closures
(:mod:`pytools.lean.audit.meaning`), each check against a planted change.

The fixture library is ``AuditFixture.Impostor`` (see ``tests/test_audit_rules.py``): its
theorems ``univ_one``/``univ_two`` print the same statement with different terms, and
``gcd_gmp``'s statement depends on the library's ``Nat.gcd``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from fixtures.audit_env import core_lib, index_cache

from pytools.lean.audit import reviewed
from pytools.lean.audit.records import AuditError, AuditReport
from pytools.lean.audit.walk import audit_modules

OLEAN = Path(__file__).parent / "fixtures" / "olean"
IMPOSTOR = "AuditFixture.Impostor"
THEOREMS = ["univ_one", "univ_two", "gcd_gmp", "clean_here", "zero_eq_one"]


CORE = core_lib()
pytestmark = pytest.mark.skipif(CORE is None, reason="core library .olean files not found")


@pytest.fixture(scope="module")
def report() -> AuditReport:
    return audit_modules([IMPOSTOR], [OLEAN], core_dir=CORE, meanings_for=THEOREMS,
                         cache_dir=index_cache())


def test_accept_then_check_is_clean(tmp_path: Path, report: AuditReport) -> None:
    data = reviewed.accept(tmp_path, report, THEOREMS)
    assert (tmp_path / reviewed.REVIEWED_FILE).read_bytes() == data
    assert reviewed.check(tmp_path, report, THEOREMS) == []
    doc = json.loads(data)
    names = [t["name"] for t in doc["theorems"]]
    assert names == sorted(THEOREMS)
    gcd = next(t for t in doc["theorems"] if t["name"] == "gcd_gmp")
    assert gcd["statement"] == "Nat.gcd 0 1 = 1" and gcd["module"] == IMPOSTOR
    assert gcd["uses"] == [f"Nat.gcd@{IMPOSTOR}"]
    assert set(doc["definitions"]) == {f"Nat.gcd@{IMPOSTOR}"}
    assert data.endswith(b"\n") and reviewed.render(doc) == data  # canonical


def test_same_printed_statement_different_term_is_caught(report: AuditReport) -> None:
    """Universe-level trick: `Nonempty PUnit.{1}` and `Nonempty PUnit.{2}` print alike; the
    reviewed entry of one does not accept the other."""
    current = reviewed.document(report, THEOREMS)
    one = next(t for t in current["theorems"] if t["name"] == "univ_one")
    two = next(t for t in current["theorems"] if t["name"] == "univ_two")
    assert one["statement"] == two["statement"] == "Nonempty PUnit"
    planted = copy.deepcopy(current)
    entry = next(t for t in planted["theorems"] if t["name"] == "univ_one")
    entry["statement_sha256"], entry["closure_sha256"] = two["statement_sha256"], two[
        "closure_sha256"]
    (problem,) = reviewed.compare(planted, current, "R.json")
    assert problem.startswith("R.json: the statement of univ_one changed")
    assert reviewed.ACCEPT_COMMAND in problem


def test_changed_definition_under_a_statement_is_caught(report: AuditReport) -> None:
    """The statement `Nat.gcd 0 1 = 1` is unchanged, `Nat.gcd`'s definition is not: the
    problem names the theorem and the definition."""
    current = reviewed.document(report, THEOREMS)
    planted = copy.deepcopy(current)
    planted["definitions"][f"Nat.gcd@{IMPOSTOR}"] = "0" * 64
    entry = next(t for t in planted["theorems"] if t["name"] == "gcd_gmp")
    entry["closure_sha256"] = "1" * 64
    problems = reviewed.compare(planted, current, "R.json")
    assert len(problems) == 1
    assert "what the statement of gcd_gmp means changed" in problems[0]
    assert f"Nat.gcd@{IMPOSTOR}" in problems[0]


def test_missing_and_stale_entries(report: AuditReport) -> None:
    current = reviewed.document(report, THEOREMS)
    planted = copy.deepcopy(current)
    planted["theorems"] = [t for t in planted["theorems"] if t["name"] != "clean_here"]
    planted["theorems"].append({**planted["theorems"][0], "name": "gone"})
    problems = reviewed.compare(planted, current, "R.json")
    assert any("clean_here is published but has no reviewed statement" in p for p in problems)
    assert any("lists gone, which is no longer published" in p for p in problems)


def test_meaning_closure_depends_on_definitions_not_proofs(report: AuditReport) -> None:
    meanings = {n: (sha, used) for n, sha, used in report.meanings}
    # `clean_here : 2 + 2 = 4` mentions only core constants: no library definition
    assert meanings["clean_here"][1] == ()
    # `zero_eq_one : 0 = 1` is a statement about core's `Eq` and literals only: its proof
    # through `Nat.gcd` does not enter its meaning
    assert meanings["zero_eq_one"][1] == ()
    assert len({sha for sha, _ in meanings.values()}) == len(meanings)


@pytest.mark.parametrize("content,match", [
    (None, "missing; create it with"),
    ("{not json", "unreadable"),
    ('{"format": "other"}', "not a reviewed-statements file"),
])
def test_bad_reviewed_file_is_a_clear_error(tmp_path: Path, report: AuditReport,
                                            content: str | None, match: str) -> None:
    path = tmp_path / reviewed.REVIEWED_FILE
    if content is not None:
        path.parent.mkdir(parents=True)
        path.write_text(content)
    with pytest.raises(AuditError, match=match):
        reviewed.load(path)
    (problem,) = reviewed.check(tmp_path, report, THEOREMS)
    assert str(reviewed.REVIEWED_FILE) in problem and match.split(";")[0] in problem


def test_unknown_theorem_is_refused(report: AuditReport) -> None:
    with pytest.raises(AuditError, match="not in the audited library"):
        reviewed.document(report, ["no_such_theorem"])
