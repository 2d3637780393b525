"""certify: canonical certificates, the manifest, --check, and planted defects.

These tests run certify's derivation on a small project in a temp folder with a synthetic
audit report, so they are fast; the real library is certified by `certify --check` in
`run.sh test`, and the audit's own planted defects are in tests/test_audit.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pytools.lean.audit import AuditReport, Declaration, Finding
from pytools.publish import certify
from pytools.publish.canonical import check_body_hash, schema_errors
from pytools.results.spec import Evidence, InputFile, ResultSpec

TOOLCHAIN = {"kind": "wasm", "version": "4.28.0-pre", "commit": "38f3c0c4" + "0" * 32}


def decl(name: str, statement: str = "True", kind: str = "theorem") -> Declaration:
    import hashlib

    return Declaration(
        name=name, kind=kind, module="Proofs.A", line=3, column=0, statement=statement,
        statement_sha256=hashlib.sha256(statement.encode()).hexdigest(),
        axioms=("propext",), auxiliary=False,
    )


def report(*decls: Declaration, findings: tuple[Finding, ...] = ()) -> AuditReport:
    return AuditReport(declarations=decls, findings=findings, trusted_core=("Nat.le_refl",))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "Proofs").mkdir()
    (tmp_path / "Proofs" / "A.lean").write_text("module\n-- theorems\n")
    (tmp_path / "lakefile.lean").write_text("-- lake\n")
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.28.0\n")
    (tmp_path / "data.txt").write_text("1 2 3\n")
    (tmp_path / "README.md").write_text(
        f"# x\n{certify.SUMMARY_START}\nold\n{certify.SUMMARY_END}\nrest\n"
    )
    return tmp_path


def spec(theorems=("KVCache.A.main",)) -> ResultSpec:
    def evidence(root: Path) -> Evidence:
        numbers = (root / "data.txt").read_text().split()
        from pytools.paths import sha256_file

        return Evidence(
            figures={"count": len(numbers)},
            inputs=(InputFile("data.txt", sha256_file(root / "data.txt")),),
            extra={"workflows": [{"name": "w", "agree": True}]},
        )

    return ResultSpec("demo-result", "A demo", tuple(theorems), ("one instance",), evidence)


def test_certificates_are_schema_valid_hashed_and_canonical(project: Path) -> None:
    first = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    assert first.problems == []
    cert = json.loads(first.files["certificates/demo-result.json"])
    assert schema_errors(cert, "certificate") == []
    assert check_body_hash(cert)
    assert cert["figures"] == {"count": 3} and cert["workflows"][0]["agree"] is True
    assert {s["path"] for s in cert["sources"]} == {"Proofs/A.lean", "lakefile.lean",
                                                    "lean-toolchain"}
    assert cert["theorems"][0]["statement_sha256"] == decl("KVCache.A.main").statement_sha256
    manifest = json.loads(first.files["certificates/MANIFEST.json"])
    assert schema_errors(manifest, "manifest") == []
    assert manifest["theorems"] == [{"name": "KVCache.A.main", "result": "demo-result",
                                     "statement_sha256": cert["theorems"][0]["statement_sha256"]}]
    second = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    assert second.files == first.files  # same inputs, same bytes
    assert "Audited declarations: **1**" in first.files["README.md"].decode()


def test_write_then_check_is_clean_and_second_write_identical(project: Path) -> None:
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    certify.write_all(project, derived)
    before = {p: (project / p).read_bytes() for p in derived.files}
    assert certify.compare(project, derived, same_toolchain=True) == []
    again = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    certify.write_all(project, again)
    assert {p: (project / p).read_bytes() for p in derived.files} == before


def certified(project: Path) -> None:
    certify.write_all(
        project, certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    )


def test_planted_theorem_renamed_after_certification(project: Path) -> None:
    certified(project)
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main'")), (spec(),))
    assert "demo-result: published theorem KVCache.A.main is not in the library" in (
        derived.problems
    )


def test_planted_statement_weakened_after_certification(project: Path) -> None:
    certified(project)
    weaker = decl("KVCache.A.main", statement="True ∨ False")
    derived = certify.derive(project, TOOLCHAIN, report(weaker), (spec(),))
    problems = certify.compare(project, derived, same_toolchain=True)
    assert "certificates/demo-result.json: differs from what the current sources and data give" \
        in problems


def test_planted_source_edited_after_certification(project: Path) -> None:
    certified(project)
    (project / "Proofs" / "A.lean").write_text("module\n-- edited\n")
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    problems = certify.compare(project, derived, same_toolchain=True)
    assert any(p.startswith("certificates/demo-result.json: differs") for p in problems)


def test_planted_input_data_changed_after_certification(project: Path) -> None:
    certified(project)
    (project / "data.txt").write_text("1 2 3 4\n")
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    assert any("demo-result.json: differs" in p
               for p in certify.compare(project, derived, same_toolchain=True))


def test_planted_certificate_byte_changed(project: Path) -> None:
    certified(project)
    path = project / "certificates" / "demo-result.json"
    data = bytearray(path.read_bytes())
    data[data.index(b'"count": 3') + 9] = ord("4")
    path.write_bytes(bytes(data))
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    problems = certify.compare(project, derived, same_toolchain=True)
    assert "certificates/demo-result.json: differs from what the current sources and data give" \
        in problems
    assert any("hash of certificates/demo-result.json no longer matches" in p for p in problems)


def test_planted_manifest_entry_hash_mismatch(project: Path) -> None:
    certified(project)
    manifest_path = project / "certificates" / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"][0]["sha256"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest))
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),))
    problems = certify.compare(project, derived, same_toolchain=True)
    assert any("MANIFEST.json: hash of certificates/demo-result.json no longer matches" in p
               for p in problems)


def test_finding_names_declaration_module_and_axiom(project: Path) -> None:
    finding = Finding("KVCache.A.main", "Proofs.A", "sorryAx", "sorry")
    bad = report(replace(decl("KVCache.A.main"), axioms=("sorryAx",)), findings=(finding,))
    derived = certify.derive(project, TOOLCHAIN, bad, (spec(),))
    assert derived.problems == ["Proofs.A: KVCache.A.main uses `sorry` (unproved): axiom sorryAx"]


def test_a_definition_cannot_be_published_as_a_theorem(project: Path) -> None:
    derived = certify.derive(
        project, TOOLCHAIN, report(decl("KVCache.A.main", kind="definition")), (spec(),)
    )
    assert "demo-result: KVCache.A.main is a definition, not a theorem" in derived.problems


def test_failing_evidence_is_a_problem_not_a_crash(project: Path) -> None:
    def broken(root: Path) -> Evidence:
        raise ValueError("trace.jsonl:3: not JSON")

    bad = ResultSpec("demo-result", "A demo", ("KVCache.A.main",), ("x",), broken)
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (bad,))
    assert derived.problems == ["demo-result: computing its figures failed: trace.jsonl:3: "
                                "not JSON"]


def test_run_with_a_finding_writes_nothing(project: Path, monkeypatch) -> None:
    from pytools.lean.build import BuildResult
    from pytools.lean.toolchain import Toolchain

    chain = Toolchain("wasm", "4.28.0-pre", "0" * 40, ("lean",), project, "test")
    finding = Finding("KVCache.A.main", "Proofs.A", "Lean.ofReduceBool", "native-code")
    monkeypatch.setattr(certify, "find_toolchain", lambda lean, root: chain)
    monkeypatch.setattr(certify, "build", lambda root, tc, jobs=None: BuildResult(order=[]))
    monkeypatch.setattr(certify.audit_mod, "audit_modules",
                        lambda modules, path, **kw: report(decl("KVCache.A.main"),
                                                           findings=(finding,)))
    monkeypatch.setattr(certify, "published_results", lambda: (spec(),))
    outcome = certify.run(project, check=False)
    assert not outcome.ok
    assert not (project / "certificates" / "MANIFEST.json").exists()
    assert "native_decide" in outcome.derived.problems[0]
