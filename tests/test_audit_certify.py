"""What certificates say about the audit (:mod:`pytools.lean.audit.certificate`), and the
checks certify runs beside it: the reviewed statements always, `#print axioms` and a kernel
replay with ``leanchecker`` where a native Lean exists (a fake one here, as
``tests/fake_lean.py`` fakes `lean`: no native Lean on this machine)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pytools.lean.audit import certificate, reviewed
from pytools.lean.audit.native import find_leanchecker, run_leanchecker
from pytools.lean.audit.records import AuditError, AuditReport, Declaration
from pytools.lean.toolchain import Toolchain
from pytools.publish import certify
from pytools.publish.validation import SCHEMA_DIALECT, package_schemas

FAKE_CHECKER = """\
import os, sys
module = sys.argv[-1]
with open(os.environ["CHECKER_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
if module == "Proofs.Bad":
    print("uncaught exception: (kernel) declaration type mismatch, 'Proofs.Bad.boom'")
    sys.exit(1)
"""


def _checker(tmp_path: Path, monkeypatch) -> tuple[list[str], Path]:
    script = tmp_path / "leanchecker.py"
    script.write_text(FAKE_CHECKER)
    log = tmp_path / "checker.log"
    monkeypatch.setenv("CHECKER_LOG", str(log))
    return [sys.executable, str(script)], log


def test_leanchecker_replays_every_module(tmp_path: Path, monkeypatch) -> None:
    cmd, log = _checker(tmp_path, monkeypatch)
    assert run_leanchecker(cmd, ["Proofs.A", "Proofs.B"]) == []
    assert log.read_text().split("\n")[:2] == ["Proofs.A", "Proofs.B"]


def test_leanchecker_rejection_names_the_module(tmp_path: Path, monkeypatch) -> None:
    """Planted: the kernel rejects a replayed declaration of one module."""
    cmd, _ = _checker(tmp_path, monkeypatch)
    (problem,) = run_leanchecker(cmd, ["Proofs.A", "Proofs.Bad"])
    assert problem.startswith("leanchecker Proofs.Bad: the kernel rejected a replayed "
                              "declaration (exit 1)")
    assert "Proofs.Bad.boom" in problem


def test_leanchecker_that_cannot_start_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="cannot run"):
        run_leanchecker([str(tmp_path / "no-such-leanchecker")], ["Proofs.A"])


def test_find_leanchecker_next_to_lean(tmp_path: Path) -> None:
    (tmp_path / "lean").write_text("")
    (tmp_path / "leanchecker").write_text("")
    assert find_leanchecker(str(tmp_path / "lean")) == str(tmp_path / "leanchecker")


def _report() -> AuditReport:
    d = Declaration("KVCache.A.main", "theorem", "Proofs.A", 3, 0, "True", "a" * 64,
                    ("propext",), False, 0, (("True", "Init.Prelude"),))
    return AuditReport(declarations=(d,), findings=(), trusted_core=("Nat.le_refl",),
                       rules=("sorry",), meanings=(("KVCache.A.main", "b" * 64, ()),))


def test_audit_block_states_checks_lean_and_limits() -> None:
    wasm = certificate.with_checks(_report(), {"reviewed-statements": True})
    block = certificate.audit_block(wasm, {"version": "4.28.0-pre", "commit": "38f3c0c4"})
    status = {c["name"]: c["status"] for c in block["checks"]}
    assert status == {"olean-audit": "passed", "print-axioms": "not-run",
                      "leanchecker": "not-run", "kernel-replay": "not-run",
                      "reviewed-statements": "passed"}
    assert "needs a native Lean" in next(c["detail"] for c in block["checks"]
                                         if c["name"] == "leanchecker")
    assert block["lean"] == {"version": "4.28.0-pre", "commit": "38f3c0c4"}
    assert any("No kernel replay ran" in s for s in block["limits"])
    assert any("1 core constants" in s for s in block["limits"])
    assert {a["name"] for a in block["allowed_axiom_identities"]} == set(block["allowed_axioms"])
    native = certificate.with_checks(_report(), {"print-axioms": True, "leanchecker": True,
                                                 "reviewed-statements": True})
    native_block = certificate.audit_block(native, {"version": "4.28.0", "commit": "c"})
    assert not any("No kernel replay ran" in s for s in native_block["limits"])
    for key in certificate.MACHINE_KEYS:  # the only keys allowed to differ
        block.pop(key), native_block.pop(key)
    assert block == native_block


def test_theorem_entry_lists_constants_and_closure() -> None:
    r = _report()
    entry = certificate.theorem_entry(r.declarations[0], r)
    assert entry["constants"] == [{"name": "True", "module": "Init.Prelude"}]
    assert entry["closure_sha256"] == "b" * 64


def test_certificate_with_the_audit_block_is_schema_valid(tmp_path: Path) -> None:
    (tmp_path / "Proofs").mkdir()
    (tmp_path / "Proofs" / "A.lean").write_text("module\n")
    spec = certify.ResultSpec("demo", "Demo", ("KVCache.A.main",), ("one instance",), None)
    report = certificate.with_checks(_report(), {"reviewed-statements": True})
    schemas = package_schemas().with_documents({"figures/demo": {
        "$schema": SCHEMA_DIALECT, "type": "object", "additionalProperties": False}})
    derived = certify.derive(tmp_path, {"kind": "wasm", "version": "4.28.0-pre",
                                        "commit": "0" * 40}, report, (spec,), schemas=schemas)
    assert derived.problems == []
    import json

    cert = json.loads(derived.files["certificates/demo.json"])
    assert schemas.certificate_errors(cert) == []
    cert["audit"]["checks"][0]["status"] = "yes"  # planted: a malformed check record
    assert schemas.certificate_errors(cert)


def _native(tmp_path: Path) -> Toolchain:
    lean = tmp_path / "bin" / "lean"
    lean.parent.mkdir()
    lean.write_text("")
    return Toolchain("native", "4.28.0", "0" * 40, (str(lean),), tmp_path / "lib", "test")


def test_native_certify_runs_leanchecker_and_fails_on_rejection(tmp_path: Path,
                                                                monkeypatch) -> None:
    cmd, log = _checker(tmp_path, monkeypatch)
    toolchain = _native(tmp_path)
    monkeypatch.setattr(certify, "native_cross_check", lambda *a: [])
    monkeypatch.setattr(certify.audit_native, "find_leanchecker", lambda lean: cmd[1])
    monkeypatch.setattr(certify.audit_native, "run_leanchecker",
                        lambda c, modules, **kw: run_leanchecker(cmd, modules))
    monkeypatch.setattr(certify.reviewed, "check", lambda root, report, theorems: [])
    problems, ran, why = certify.audit_checks(toolchain, tmp_path, ["Proofs.A", "Proofs.Bad"],
                                              _report(), ())
    assert ran == {"reviewed-statements": True, "print-axioms": True, "leanchecker": True}
    assert len(problems) == 1 and problems[0].startswith("leanchecker Proofs.Bad:")
    assert log.read_text().splitlines() == ["Proofs.A", "Proofs.Bad"]


def test_native_certify_without_leanchecker_says_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(certify, "native_cross_check", lambda *a: [])
    monkeypatch.setattr(certify, "kernel_replay", lambda *a: [])
    monkeypatch.setattr(certify.audit_native, "find_leanchecker", lambda lean: None)
    monkeypatch.setattr(certify.reviewed, "check", lambda root, report, theorems: [])
    problems, ran, why = certify.audit_checks(_native(tmp_path), tmp_path, ["Proofs.A"],
                                              _report(), ())
    assert problems == [] and "leanchecker" not in ran
    assert why["leanchecker"].startswith("no leanchecker next to")
    assert ran["kernel-replay"]  # the driver replays instead


def test_wasm_certify_checks_reviewed_statements(tmp_path: Path, monkeypatch) -> None:
    """The reviewed check runs everywhere: a missing file is a problem naming it; once
    accepted, the same library has no problem."""
    wasm = replace(_native(tmp_path), kind="wasm")
    monkeypatch.setattr(certify, "kernel_replay", lambda *a: [])
    spec = certify.ResultSpec("demo", "Demo", ("KVCache.A.main",), ("x",), None)
    problems, ran, _ = certify.audit_checks(wasm, tmp_path, ["Proofs.A"], _report(), (spec,))
    assert ran == {"reviewed-statements": True, "kernel-replay": True}
    assert len(problems) == 1 and str(reviewed.REVIEWED_FILE) in problems[0]
    assert "missing" in problems[0]
    reviewed.accept(tmp_path, _report(), ["KVCache.A.main"])
    assert certify.audit_checks(wasm, tmp_path, ["Proofs.A"], _report(), (spec,))[0] == []
