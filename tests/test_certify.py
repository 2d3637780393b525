"""certify: canonical certificates, provenance, the manifest, signing, --check, rebuild, and
planted defects.

These tests run certify's derivation on a small project in a temp folder with a synthetic
audit report (and, for runs and rebuilds, a stubbed build), so they are fast; the real
library is certified by `certify --check` in `run.sh test`, and rebuilt by the Lean-marked
test in tests/test_rebuild.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from bundles import write_private_key, write_public_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.lean import build_audit as library
from pytools.lean.audit.certificate import with_checks
from pytools.lean.audit.records import AuditReport, Declaration, Finding
from pytools.lean.build import BuildResult
from pytools.lean.build_audit import LIBRARY_ENTRIES
from pytools.lean.toolchain import Toolchain
from pytools.publish import certify, provenance, rebuild
from pytools.publish.anchor import AnchorOptions
from pytools.publish.canonical import check_body_hash, sha256_bytes
from pytools.publish.keys import KeyFileError, load_signing_key, load_trusted_keys
from pytools.publish.validation import SCHEMA_DIALECT, package_schemas, schema_errors
from pytools.publish.verify import anchor_for, load_manifest, verify_file
from pytools.results.spec import Evidence, InputFile, ResultSpec

TOOLCHAIN = {"kind": "wasm", "version": "4.28.0-pre", "commit": "38f3c0c4" + "0" * 32}
DEMO_FIGURES = {
    "$schema": SCHEMA_DIALECT, "type": "object", "required": ["count"],
    "additionalProperties": False,
    "properties": {"count": {"description": "numbers in data.txt", "type": "integer"}},
}
SCHEMAS = package_schemas().with_documents({"figures/demo-result": DEMO_FIGURES})
ROOT = Path(__file__).resolve().parent.parent


def decl(name: str, statement: str = "True", kind: str = "theorem") -> Declaration:
    return Declaration(
        name=name, kind=kind, module="Proofs.A", line=3, column=0, statement=statement,
        statement_sha256=hashlib.sha256(("term:" + statement).encode()).hexdigest(),
        axioms=("propext",), auxiliary=False,
    )


def report(*decls: Declaration, findings: tuple[Finding, ...] = (),
           modules: tuple[str, ...] = ("Proofs.A",)) -> AuditReport:
    meanings = tuple((d.name, sha256_bytes(f"closure:{d.statement}".encode()), ())
                     for d in decls)
    return with_checks(AuditReport(declarations=decls, findings=findings,
                                   trusted_core=("Nat.le_refl",), modules=modules,
                                   meanings=meanings),
                       {"reviewed-statements": True, "kernel-replay": True})


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout


def _build_outputs(root: Path, content: bytes = b"olean bytes") -> None:
    out = root / ".lake/build/lib/lean/Proofs"
    out.mkdir(parents=True, exist_ok=True)
    for suffix in (".olean", ".olean.server", ".olean.private"):
        (out / f"A{suffix}").write_bytes(content + suffix.encode())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "Proofs").mkdir()
    (tmp_path / "Proofs" / "A.lean").write_text("module\n-- theorems\n")
    (tmp_path / "Proofs.lean").write_text("module\npublic import Proofs.A\n")
    (tmp_path / "lakefile.lean").write_text("-- lake\n")
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.28.0\n")
    (tmp_path / "data.txt").write_text("1 2 3\n")
    (tmp_path / "README.md").write_text(
        f"# x\n{certify.SUMMARY_START}\nold\n{certify.SUMMARY_END}\nrest\n"
    )
    (tmp_path / ".gitignore").write_text("/.lake/\n*.key\n")
    _build_outputs(tmp_path)
    return tmp_path


@pytest.fixture
def git_project(project: Path) -> Path:
    _git(project, "init", "-q")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sources")
    return project


def spec(theorems: tuple[str, ...] = ("KVCache.A.main",), rid: str = "demo-result") -> ResultSpec:
    def evidence(root: Path) -> Evidence:
        numbers = (root / "data.txt").read_text().split()
        from pytools.paths import sha256_file

        return Evidence(
            figures={"count": len(numbers)},
            inputs=(InputFile("data.txt", sha256_file(root / "data.txt")),),
        )

    return ResultSpec(rid, "A demo", tuple(theorems), ("one instance",), evidence)


def derive(project: Path, rep: AuditReport | None = None, **kw: Any) -> certify.Derived:
    return certify.derive(project, TOOLCHAIN, rep or report(decl("KVCache.A.main")), (spec(),),
                          schemas=SCHEMAS, **kw)


def certified(project: Path, **kw: Any) -> certify.Derived:
    derived = derive(project, **kw)
    assert derived.problems == []
    certify.write_all(project, derived)
    return derived


# --- certificates and manifest ---------------------------------------------------------------


def test_certificates_are_schema_valid_hashed_canonical_and_bound(project: Path) -> None:
    first = derive(project)
    assert first.problems == []
    cert = json.loads(first.files["certificates/demo-result.json"])
    assert SCHEMAS.certificate_errors(cert) == []
    assert check_body_hash(cert)
    assert cert["schema_version"] == "2"
    assert cert["figures"] == {"count": 3}
    assert {s["path"] for s in cert["sources"]} == {"Proofs/A.lean", "Proofs.lean",
                                                    "lakefile.lean", "lean-toolchain"}
    assert cert["source"]["library_tree"] == provenance.library_tree(project)
    assert cert["source"]["commit"] is None  # not a git checkout
    assert [o["path"] for o in cert["oleans"]] == [
        ".lake/build/lib/lean/Proofs/A.olean", ".lake/build/lib/lean/Proofs/A.olean.server",
        ".lake/build/lib/lean/Proofs/A.olean.private"]
    assert [c["name"] for c in cert["audit"]["checks"]] == [
        "olean-audit", "print-axioms", "leanchecker", "kernel-replay", "reviewed-statements"]
    manifest = json.loads(first.files["certificates/MANIFEST.json"])
    assert schema_errors(manifest, "manifest") == []
    assert manifest["theorems"] == [{
        "name": "KVCache.A.main", "result": "demo-result",
        "statement_sha256": cert["theorems"][0]["statement_sha256"],
        "statement_text_sha256": sha256_bytes(b"True")}]
    second = derive(project)
    assert second.files == first.files  # same inputs, same bytes
    readme = first.files["README.md"].decode()
    assert "Audited declarations: **1**" in readme
    assert f"Manifest SHA-256: `{sha256_bytes(first.files['certificates/MANIFEST.json'])}`" \
        in readme
    assert "Unsigned:" in readme


def test_planted_result_without_a_figures_schema_fails_clearly(project: Path) -> None:
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")),
                             (spec(rid="new-result"),))
    assert derived.problems[0] == (
        "new-result: no figures schema; add pytools/publish/schemas/figures/new-result.schema"
        ".json describing its figures (see docs/publish.md)")


def test_planted_figure_outside_its_schema_fails(project: Path) -> None:
    strict = package_schemas().with_documents({"figures/demo-result": {
        **DEMO_FIGURES, "properties": {"count": {"type": "string"}}}})
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (spec(),),
                             schemas=strict)
    assert any("/figures/count: expected string, found integer" in p for p in derived.problems)


def test_planted_missing_olean_part_is_a_problem(project: Path) -> None:
    (project / ".lake/build/lib/lean/Proofs/A.olean").unlink()
    assert ".lake/build/lib/lean/Proofs/A.olean: missing, though its module was audited" in \
        derive(project).problems


def test_write_then_check_is_clean_and_second_write_identical(project: Path) -> None:
    derived = certified(project)
    before = {p: (project / p).read_bytes() for p in derived.files}
    assert certify.compare(project, derived, same_toolchain=True) == []
    certify.write_all(project, derive(project))
    assert {p: (project / p).read_bytes() for p in derived.files} == before


# --- provenance ---------------------------------------------------------------------------


def test_library_tree_is_gits_own_tree_id(git_project: Path) -> None:
    """The tree id computed from the files equals `git ls-tree HEAD ... | git mktree`."""
    listing = _git(git_project, "ls-tree", "HEAD", *LIBRARY_ENTRIES)
    by_git = subprocess.run(["git", "-C", str(git_project), "mktree"], input=listing,
                            capture_output=True, text=True, check=True).stdout.strip()
    assert provenance.library_tree(git_project) == by_git
    head = _git(git_project, "rev-parse", "HEAD").strip()
    assert provenance.commit_tree(git_project, head) == by_git
    assert provenance.source_commit(git_project, by_git) == head
    cert = json.loads(derive(git_project).files["certificates/demo-result.json"])
    assert cert["source"] == {"library_tree": by_git, "commit": head,
                              "tree_entries": list(LIBRARY_ENTRIES)}


def test_planted_uncommitted_edit_changes_the_tree_and_drops_the_commit(git_project: Path) -> None:
    tree = provenance.library_tree(git_project)
    (git_project / "Proofs" / "A.lean").write_text("module\n-- edited after commit\n")
    edited = provenance.library_tree(git_project)
    assert edited != tree
    assert provenance.source_commit(git_project, edited) is None
    (git_project / "Proofs" / "stray.lean").write_text("-- untracked but not ignored\n")
    assert provenance.library_tree(git_project) != edited
    (git_project / "notes.txt").write_text("outside the library\n")  # not a tree entry
    (git_project / "Proofs" / "stray.lean").unlink()
    assert provenance.library_tree(git_project) == edited


def test_recorded_commit_is_checked_against_git(git_project: Path) -> None:
    tree = provenance.library_tree(git_project)
    head = _git(git_project, "rev-parse", "HEAD").strip()
    good = provenance.Source(tree, LIBRARY_ENTRIES, head)
    assert provenance.check_recorded_commit(git_project, good) == []
    lie = provenance.Source("0" * 40, LIBRARY_ENTRIES, head)  # planted
    assert "has library tree" in provenance.check_recorded_commit(git_project, lie)[0]
    notes: list[str] = []
    unknown = provenance.Source(tree, LIBRARY_ENTRIES, "1" * 40)
    assert certify.commit_to_record(git_project, unknown, notes) == "1" * 40
    assert "not in this clone" in notes[0]


# --- planted defects after certification -------------------------------------------------------


def test_planted_theorem_renamed_after_certification(project: Path) -> None:
    certified(project)
    derived = derive(project, report(decl("KVCache.A.main'")))
    assert "demo-result: published theorem KVCache.A.main is not in the library" in (
        derived.problems
    )


def test_planted_statement_weakened_after_certification(project: Path) -> None:
    certified(project)
    derived = derive(project, report(decl("KVCache.A.main", statement="True ∨ False")))
    problems = certify.compare(project, derived, same_toolchain=True)
    assert "certificates/demo-result.json: differs from what the current sources and data give" \
        in problems


def test_planted_source_edited_after_certification(project: Path) -> None:
    certified(project)
    (project / "Proofs" / "A.lean").write_text("module\n-- edited\n")
    problems = certify.compare(project, derive(project), same_toolchain=True)
    assert any(p.startswith("certificates/demo-result.json: differs") for p in problems)


def test_planted_input_data_changed_after_certification(project: Path) -> None:
    certified(project)
    (project / "data.txt").write_text("1 2 3 4\n")
    assert any("demo-result.json: differs" in p
               for p in certify.compare(project, derive(project), same_toolchain=True))


def test_planted_certificate_byte_changed(project: Path) -> None:
    certified(project)
    path = project / "certificates" / "demo-result.json"
    data = bytearray(path.read_bytes())
    data[data.index(b'"count": 3') + 9] = ord("4")
    path.write_bytes(bytes(data))
    problems = certify.compare(project, derive(project), same_toolchain=True)
    assert "certificates/demo-result.json: differs from what the current sources and data give" \
        in problems
    assert any("hash of certificates/demo-result.json no longer matches" in p for p in problems)


def test_olean_bytes_recompiled_are_reported_not_fatal(project: Path) -> None:
    """Lean's .olean output is not bit-reproducible (measured): a check after a fresh
    compile reproduces every other byte and says how many parts differ."""
    certified(project)
    _build_outputs(project, b"recompiled, other bytes")  # a fresh build's outputs
    derived = derive(project)
    assert certify.compare(project, derived, same_toolchain=True)  # plain bytes differ
    assert certify.compare_modulo_oleans(project, project, derived, True) == []
    assert "3 of 3 compiled parts differ" in derived.notes[0]
    (project / "data.txt").write_text("1 2 3 4\n")  # planted: a real difference as well
    derived = derive(project)
    assert any("demo-result.json: differs" in p
               for p in certify.compare_modulo_oleans(project, project, derived, True))


def test_finding_names_declaration_module_and_axiom(project: Path) -> None:
    finding = Finding("KVCache.A.main", "Proofs.A", "sorryAx", "sorry")
    bad = report(replace(decl("KVCache.A.main"), axioms=("sorryAx",)), findings=(finding,))
    assert derive(project, bad).problems == [
        "Proofs.A: KVCache.A.main uses `sorry` (unproved): axiom sorryAx"]


def test_a_definition_cannot_be_published_as_a_theorem(project: Path) -> None:
    derived = derive(project, report(decl("KVCache.A.main", kind="definition")))
    assert "demo-result: KVCache.A.main is a definition, not a theorem" in derived.problems


def test_failing_evidence_is_a_problem_not_a_crash(project: Path) -> None:
    def broken(root: Path) -> Evidence:
        raise ValueError("trace.jsonl:3: not JSON")

    bad = ResultSpec("demo-result", "A demo", ("KVCache.A.main",), ("x",), broken)
    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")), (bad,),
                             schemas=SCHEMAS)
    assert derived.problems[0] == ("demo-result: computing its figures failed: "
                                   "trace.jsonl:3: not JSON")


def test_a_figure_file_too_large_to_verify_is_a_problem(project: Path) -> None:
    """Planted: a result writes a figure file over what verify reads (it would be red in
    every verification): certify refuses, naming the file and its size."""
    from dataclasses import replace

    from pytools.publish.strictjson import MAX_BYTES

    def artifacts(root: Path, out: Path) -> list[Path]:
        (out / "big.csv").write_bytes(b"1\n" * (MAX_BYTES // 2 + 1))
        (out / "small.csv").write_bytes(b"1\n")
        return [out / "big.csv", out / "small.csv"]

    derived = certify.derive(project, TOOLCHAIN, report(decl("KVCache.A.main")),
                             (replace(spec(), artifacts=artifacts),), schemas=SCHEMAS)
    assert derived.problems == [f"demo-result: certificates/figures/demo-result/big.csv is "
                                f"{MAX_BYTES + 2:,} bytes, over the {MAX_BYTES:,} a verifier "
                                "reads"]


# --- signing --------------------------------------------------------------------------------


def _key_file(folder: Path) -> tuple[Ed25519PrivateKey, Path, Path]:
    key = Ed25519PrivateKey.generate()
    private = write_private_key(folder / "signing.key", key)
    public = write_public_key(folder / "publisher.pub.pem", key)
    return key, private, public


def test_sign_then_verify_and_check(project: Path, tmp_path_factory: Any) -> None:
    key, private, public = _key_file(tmp_path_factory.mktemp("keys"))
    derived = certified(project, sign_key=load_signing_key(private))
    envelope = project / "certificates" / "MANIFEST.intoto.jsonl"
    assert envelope.is_file()
    readme = (project / "README.md").read_text()
    assert "Signed: `certificates/MANIFEST.intoto.jsonl`" in readme
    manifest = load_manifest(project / "certificates" / "MANIFEST.json")
    options = AnchorOptions(keys=load_trusted_keys([public]), require_signature=True)
    anchor = anchor_for(manifest, project / "certificates" / "MANIFEST.json", options, None)
    verdict = verify_file(project / "certificates" / "demo-result.json", manifest, anchor, SCHEMAS)
    assert verdict.green and verdict.codes[0] == "manifest-signed", verdict.reasons
    again = derive(project, sign_key=key)  # Ed25519 is deterministic: same bytes
    assert again.files == derived.files
    assert certify.compare(project, again, same_toolchain=True) == []
    unsigned_check = derive(project)  # no key: a signature that still fits is kept
    assert certify.compare(project, unsigned_check, same_toolchain=True) == []


def test_planted_stale_signature_is_reported_and_removed(project: Path,
                                                         tmp_path_factory: Any) -> None:
    _, private, _ = _key_file(tmp_path_factory.mktemp("keys"))
    certified(project, sign_key=load_signing_key(private))
    (project / "data.txt").write_text("1 2 3 4 5\n")  # the release changes, unsigned
    derived = derive(project)
    assert derived.stale_envelope
    assert any("MANIFEST.intoto.jsonl: signs another manifest (stale)" in p
               for p in certify.compare(project, derived, same_toolchain=True))
    certify.write_all(project, derived)
    assert not (project / "certificates" / "MANIFEST.intoto.jsonl").exists()
    assert "removed certificates/MANIFEST.intoto.jsonl" in derived.notes[0]


def test_planted_unsafe_signing_keys_are_refused(git_project: Path, tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    loose = write_private_key(tmp_path / "loose.key", key)
    loose.chmod(0o644)
    with pytest.raises(KeyFileError, match="permissions 0644 let others read it"):
        load_signing_key(loose)
    public = write_public_key(tmp_path / "pub.pem", key)
    public.chmod(0o600)
    with pytest.raises(KeyFileError, match="not a PEM private key"):
        load_signing_key(public)
    tracked = write_private_key(git_project / "committed.pem", key)
    _git(git_project, "add", "-f", "committed.pem")
    with pytest.raises(KeyFileError, match="tracked by git"):
        load_signing_key(tracked)


def test_keygen_writes_a_private_key_for_the_owner_only(tmp_path: Path) -> None:
    private, public = tmp_path / "k" / "sign.key", tmp_path / "k" / "pub.pem"
    run = subprocess.run([sys.executable, "-m", "pytools", "keygen", str(private), str(public)],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert private.stat().st_mode & 0o777 == 0o600
    assert load_signing_key(private) is not None and load_trusted_keys([public])
    again = subprocess.run([sys.executable, "-m", "pytools", "keygen", str(private), str(public)],
                           cwd=ROOT, capture_output=True, text=True, check=False)
    assert again.returncode == 1 and "refusing to overwrite" in again.stderr


def test_no_private_key_is_committed() -> None:
    """Scan every tracked file of this repository for a PEM private key block."""
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                             check=True).stdout.split(b"\0")
    offenders = [n.decode() for n in tracked if n and _has_private_key(ROOT / n.decode())]
    assert offenders == []


def _has_private_key(path: Path) -> bool:
    try:
        return b"PRIVATE" + b" KEY-----" in path.read_bytes()  # split: this file is scanned too
    except (IsADirectoryError, FileNotFoundError):
        return False


def test_private_key_scanner_catches_a_planted_key(tmp_path: Path) -> None:
    planted = write_private_key(tmp_path / "leak.pem", Ed25519PrivateKey.generate())
    assert _has_private_key(planted)
    assert not _has_private_key(write_public_key(tmp_path / "pub.pem",
                                                 Ed25519PrivateKey.generate()))


# --- runs and the rebuild, with a stubbed build ---------------------------------------------


@pytest.fixture
def stubbed(project: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    chain = Toolchain("wasm", TOOLCHAIN["version"], TOOLCHAIN["commit"], ("lean",), project,
                      "test")
    calls: dict[str, Any] = {"builds": 0, "findings": ()}

    def fake_build(root: Path, tc: Toolchain, jobs: int | None = None) -> BuildResult:
        calls["builds"] += 1
        return BuildResult(order=["Proofs.A"], up_to_date=["Proofs.A"])

    monkeypatch.setattr(certify, "find_toolchain", lambda lean, root: chain)
    monkeypatch.setattr(library, "build", fake_build)
    monkeypatch.setattr(library, "audit_modules", lambda modules, path, **kw: report(
        decl("KVCache.A.main"), findings=calls["findings"]))
    monkeypatch.setattr(certify, "audit_checks",
                        lambda *args: ([], {"reviewed-statements": True}, {}))
    monkeypatch.setattr(certify, "published_results", lambda: (spec(),))
    monkeypatch.setattr(certify, "package_schemas", lambda: SCHEMAS)
    monkeypatch.setattr("pytools.publish.bundle.package_schemas", lambda: SCHEMAS)
    return calls


def test_run_with_a_finding_writes_nothing(project: Path, stubbed: dict[str, Any]) -> None:
    stubbed["findings"] = (Finding("KVCache.A.main", "Proofs.A", "Lean.ofReduceBool",
                                   "native-code"),)
    outcome = certify.run(project, check=False)
    assert not outcome.ok
    assert not (project / "certificates" / "MANIFEST.json").exists()
    assert "native_decide" in outcome.derived.problems[0]


def test_run_then_check(project: Path, stubbed: dict[str, Any]) -> None:
    assert certify.run(project, check=False).ok
    assert certify.run(project, check=True).ok
    (project / "data.txt").write_text("9\n")
    assert not certify.run(project, check=True).ok


def test_rebuild_reproduces_and_catches_planted_defects(
    project: Path, stubbed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert certify.run(project, check=False).ok
    manifest = project / "certificates" / "MANIFEST.json"
    # a bundle copied elsewhere, rebuilt from the checkout's sources
    bundle = project.parent / "bundle"
    for rel in ["certificates/MANIFEST.json", "certificates/demo-result.json"]:
        (bundle / rel).parent.mkdir(parents=True, exist_ok=True)
        (bundle / rel).write_bytes((project / rel).read_bytes())
    good = rebuild.rebuild_report(bundle / "certificates" / "MANIFEST.json", project)
    assert good["green"], good
    assert good["compared"] == ["certificates/MANIFEST.json", "certificates/demo-result.json"]
    assert stubbed["builds"] == 2  # one certify, one rebuild (incremental in real life)

    cert = bundle / "certificates" / "demo-result.json"
    cert.write_bytes(cert.read_bytes().replace(b'"count": 3', b'"count": 4'))  # planted
    bad = rebuild.rebuild_report(bundle / "certificates" / "MANIFEST.json", project)
    assert not bad["green"]
    assert "certificates/demo-result.json: differs from what the current sources and data " \
        "give" in bad["problems"]

    (project / "Proofs" / "A.lean").write_text("module\n-- not what was certified\n")  # planted
    moved = rebuild.rebuild_report(manifest, project)
    assert not moved["green"] and "is not the certified one" in moved["problems"][0]
    assert stubbed["builds"] == 3  # stopped before building
    (project / "Proofs" / "A.lean").write_text("module\n-- theorems\n")
    (project / "data.txt").write_text("1 2 3 4\n")  # planted: another data input
    data = rebuild.rebuild_report(manifest, project)
    assert data["problems"] == [
        "data.txt: SHA-256 here differs from the one certificates/demo-result.json records"]


def test_rebuild_of_another_toolchains_certificates_is_red(
    project: Path, stubbed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert certify.run(project, check=False).ok
    other = Toolchain("native", "4.28.0", "f" * 40, ("lean",), project, "test")
    monkeypatch.setattr(certify, "find_toolchain", lambda lean, root: other)
    monkeypatch.setattr(certify, "native_cross_check", lambda *args: [])
    outcome = rebuild.rebuild_report(project / "certificates" / "MANIFEST.json", project)
    assert not outcome["green"]
    assert "cannot be reproduced here" in outcome["problems"][0]


def test_umask_does_not_make_certificates_private(project: Path) -> None:
    old = os.umask(0o077)
    try:
        certified(project)
    finally:
        os.umask(old)
    for path in (project / "certificates").rglob("*"):
        assert path.stat().st_mode & 0o777 == (0o755 if path.is_dir() else 0o644), path
