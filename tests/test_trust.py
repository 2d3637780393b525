"""The certificates' ``trust`` field (:mod:`pytools.publish.trust`): read from the toolchain
and the code, never typed in; strictly schema-checked; shown by ``pytools verify`` and by the
page's verifier in the same words; README's generated block says what the certificates say."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from bundles import make_release
from click.testing import CliRunner

from pytools.lean.audit import certificate
from pytools.lean.audit.records import AuditReport, Declaration
from pytools.lean.audit.rules import RULES, rule_name
from pytools.publish import certify, trust
from pytools.publish.bundle import README
from pytools.publish.cli import verify as verify_main
from pytools.publish.site.page import verifier_script
from pytools.publish.validation import SCHEMA_DIALECT, package_schemas

ROOT = Path(__file__).resolve().parents[1]
WASM = {"kind": "wasm", "version": "4.28.0-pre", "commit": "38f3c0c4" + "0" * 32}
NODE = shutil.which("node") or next(
    (str(p) for p in [ROOT / "node_modules" / ".bin" / "node"] if p.exists()), None)


def test_the_kernel_is_the_toolchain_given_and_its_issues_are_listed() -> None:
    block = trust.trust_block(WASM, ["sorry"])
    assert block["kernel"] == {"kind": "wasm", "version": "4.28.0-pre",
                               "commit": WASM["commit"],
                               "read_from": "the Init.olean header of its core library"}
    ids = [i["id"] for i in block["kernel_issues"]["issues"]]
    assert ids == ["leanprover/lean4#14576", "leanprover/lean4#14613", "leanprover/lean4#14807"]
    assert block["kernel_issues"]["assessed"]
    native = trust.trust_block({"kind": "native", "version": "4.28.0", "commit": "c"}, [])
    assert native["kernel"]["read_from"] == "`lean --version`"
    assert native["kernel_issues"]["issues"] == block["kernel_issues"]["issues"]


def test_another_version_is_said_to_be_unassessed() -> None:
    block = trust.trust_block({"kind": "native", "version": "4.35.0", "commit": "c"}, [])
    assert block["kernel_issues"] == {"assessed": False, "assessed_for": ["4.28.*"],
                                      "issues": []}
    assert any("not assessed for this version" in line for line in trust.trust_lines(block))


def test_excluding_rules_are_rules_of_the_audit() -> None:
    names = {rule_name(r) for r in RULES}
    for issue in trust.KERNEL_ISSUES:
        assert set(issue.excluded_by) <= names, issue.id
    # the stuck-sort issue is excluded by no rule, and the text says so
    (stuck,) = [i for i in trust.KERNEL_ISSUES if i.id.endswith("#14807")]
    assert stuck.excluded_by == () and "no rule" in stuck.not_excluded


def test_code_digests_follow_the_code(tmp_path: Path) -> None:
    """Planted: one byte of the reader changed gives another digest; the file list names the
    files hashed."""
    package = tmp_path / "pytools"
    for rel in ("lean/olean/module.py", "lean/olean/region.py"):
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(trust.PACKAGE / rel, package / rel)
    before = trust.code_digest(trust.READER_CODE, package)
    assert before["files"] == ["pytools/lean/olean/module.py", "pytools/lean/olean/region.py"]
    (package / "lean/olean/region.py").write_bytes(
        (package / "lean/olean/region.py").read_bytes() + b"#")
    assert trust.code_digest(trust.READER_CODE, package)["sha256"] != before["sha256"]
    real = trust.trust_block(WASM, [])
    assert real["olean_reader"]["files"][0].startswith("pytools/lean/olean/")
    assert real["browser_verifier"]["files"] == ["pytools/publish/site/templates/verifier.js"]
    assert "pytools/lean/KernelReplay.lean" in real["kernel_replay"]["files"]


def _report() -> AuditReport:
    d = Declaration("KVCache.A.main", "theorem", "Proofs.A", 3, 0, "True", "a" * 64,
                    ("propext",), False, 0, (("True", "Init.Prelude"),))
    return AuditReport(declarations=(d,), findings=(), trusted_core=(), rules=("sorry",),
                       meanings=(("KVCache.A.main", "b" * 64, ()),))


def _schemas():
    return package_schemas().with_documents({"figures/demo": {
        "$schema": SCHEMA_DIALECT, "type": "object", "additionalProperties": False}})


def _derive(tmp_path: Path, readme: str | None = None) -> certify.Derived:
    (tmp_path / "Proofs").mkdir(exist_ok=True)
    (tmp_path / "Proofs" / "A.lean").write_text("module\n")
    if readme is not None:
        (tmp_path / README).write_text(readme)
    spec = certify.ResultSpec("demo", "Demo", ("KVCache.A.main",), ("one instance",), None)
    report = certificate.with_checks(_report(), {"reviewed-statements": True,
                                                 "kernel-replay": True})
    derived = certify.derive(tmp_path, WASM, report, (spec,), schemas=_schemas())
    assert derived.problems == []
    return derived


def test_every_certificate_carries_a_schema_checked_trust_field(tmp_path: Path) -> None:
    derived = _derive(tmp_path)
    cert = json.loads(derived.files["certificates/demo.json"])
    assert cert["trust"] == trust.trust_block(WASM, ["sorry"])
    schemas = _schemas()
    assert schemas.certificate_errors(cert) == []
    for plant in (lambda c: c.pop("trust"),
                  lambda c: c["trust"].pop("browser_verifier"),
                  lambda c: c["trust"]["kernel"].update(extra="x"),
                  lambda c: c["trust"]["kernel_issues"]["issues"][0].update(id="14807"),
                  lambda c: c["trust"]["olean_reader"].update(sha256="not a hash")):
        planted = json.loads(derived.files["certificates/demo.json"])
        plant(planted)
        assert schemas.certificate_errors(planted), plant


README_TEXT = ("# Demo\n\nintro\n\n<!-- pytools.certify:trust -->\nSTALE-LINE\n"
               "<!-- /pytools.certify:trust -->\n")


def readme_problems(readme: str, certs: list[dict]) -> list[str]:
    """Where README's trust block is not what the certificates' trust field says."""
    block = trust.readme_trust(readme)
    if block is None:
        return ["README has no trust block"]
    return [f"{c['result']}: README's trust block differs from its trust field"
            for c in certs if block != trust.readme_block(c["trust"])]


def test_readme_block_is_generated_from_the_trust_field(tmp_path: Path) -> None:
    """Planted: one line of the generated block edited by hand; the comparison fails."""
    derived = _derive(tmp_path, README_TEXT)
    readme = derived.files[str(README)].decode()
    cert = json.loads(derived.files["certificates/demo.json"])
    assert readme.startswith("# Demo\n\nintro\n\n<!-- pytools.certify:trust -->\n")
    assert "STALE-LINE" not in readme and readme_problems(readme, [cert]) == []
    for line in trust.trust_lines(cert["trust"]):
        assert line in readme.splitlines()
    lines = readme.splitlines()
    edited = next(i for i, line in enumerate(lines) if line.startswith("- Lean kernel:"))
    lines[edited] = lines[edited].replace("4.28.0-pre", "4.29.0")
    assert readme_problems("\n".join(lines), [cert]) == [
        "demo: README's trust block differs from its trust field"]
    # README without the markers is left as it is
    (tmp_path / "x").mkdir()
    assert str(README) not in _derive(tmp_path / "x", "# no markers\n").files


def test_the_repository_readme_says_what_the_certificates_say() -> None:
    """README's trust block equals what the committed certificates' trust field gives; until
    the certificates are regenerated with the field, the block is the bare markers."""
    readme = (ROOT / README).read_text(encoding="utf-8")
    certs = [json.loads(p.read_text()) for p in sorted((ROOT / "certificates").glob("*.json"))
             if p.name != "MANIFEST.json"]
    assert certs
    if all("trust" not in c for c in certs):
        assert trust.readme_trust(readme) == f"{trust.TRUST_START}\n{trust.TRUST_END}"
        return
    assert readme_problems(readme, certs) == []


def test_verify_shows_the_trust_field_in_text_and_json(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    manifest = paths["manifest"]
    cert = json.loads(paths["floor"].read_text())
    out = CliRunner().invoke(verify_main, ["--manifest", str(manifest), "--json"])
    report = json.loads(out.output)
    assert report["green"] and report["trust"]["field"] == cert["trust"]
    assert report["trust"]["certificates"] == sorted([str(paths["ceiling"]),
                                                      str(paths["floor"])])
    text = CliRunner().invoke(verify_main, ["--manifest", str(manifest)]).output
    assert "What these green certificates rest on (their trust field):" in text
    for line in trust.trust_lines(cert["trust"]):
        assert line in text.splitlines()
    # planted: one certificate edited (red): only the green one's trust field is reported
    paths["floor"].write_text(paths["floor"].read_text().replace("4.28.0-pre", "4.29.0"))
    report = json.loads(CliRunner().invoke(verify_main, ["--manifest", str(manifest),
                                                         "--json"]).output)
    assert not report["green"] and report["trust"]["certificates"] == [str(paths["ceiling"])]


def test_the_page_verifier_shows_the_same_lines(tmp_path: Path) -> None:
    if NODE is None:
        pytest.skip("node is not installed")
    cert = json.loads(_derive(tmp_path).files["certificates/demo.json"])
    other = dict(cert, trust=trust.trust_block({"kind": "native", "version": "4.35.0",
                                                "commit": "c"}, []))
    script = tmp_path / "verifier.js"
    script.write_text(verifier_script(), encoding="utf-8")
    harness = tmp_path / "h.js"
    harness.write_text(
        "const PCV = require(process.argv[2]);\n"
        "const certs = JSON.parse(require('fs').readFileSync(process.argv[3], 'utf8'));\n"
        "process.stdout.write(JSON.stringify(certs.map((t) => PCV.trustLines(PCV.parse(t)))));\n")
    job = tmp_path / "certs.json"
    job.write_text(json.dumps([json.dumps(cert), json.dumps(other)]))
    proc = subprocess.run([NODE, str(harness), str(script), str(job)], capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [trust.trust_lines(cert["trust"]),
                                       trust.trust_lines(other["trust"])]
