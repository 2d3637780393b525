"""Tests for pytools.canonical and pytools.verify, with planted defects.

``make_release`` builds a small published release (certificates + manifest) in a temp dir
with pytools.canonical, the way pytools.certify does; test_site and test_browser reuse it.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytools.publish import canonical
from pytools.publish.canonical import (
    CanonicalError,
    SchemaError,
    atomic_write_bytes,
    canonical_bytes,
    check_body_hash,
    sha256_bytes,
    validate,
    with_body_hash,
    write_canonical,
)
from pytools.publish.verify import (
    MAX_BYTES,
    MAX_DEPTH,
    VerifyError,
    json_depth,
    load_manifest,
    verify_bytes,
    verify_file,
)

ROOT = Path(__file__).resolve().parent.parent


def _theorem(name: str, statement: str, module: str) -> dict[str, Any]:
    return {
        "name": name,
        "statement": statement,
        "statement_sha256": sha256_bytes(statement.encode("utf-8")),
        "axioms": ["propext"],
        "module": module,
    }


def make_release(root: Path, *, trace_bytes: bytes = b'{"t": 1}\n') -> dict[str, Path]:
    """Write certificates, an input file, a run receipt and MANIFEST.json under ``root``.

    Returns the paths by role: ``manifest``, ``floor``, ``ceiling``, ``receipt``, ``trace``.
    Figures are computed from the input file here, never typed in.
    """
    cert_dir = root / "certificates"
    data_dir = root / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    trace = data_dir / "trace.jsonl"
    trace.write_bytes(trace_bytes)
    lines = trace_bytes.splitlines()
    toolchain = {"kind": "wasm", "version": "4.28.0-pre", "commit": None}
    floor = with_body_hash(
        {
            "schema_version": "1",
            "result": "isolation-floor",
            "title": "Price of zero-leak sharing — ünïcode ✓",
            "theorems": [
                _theorem(
                    "KVCache.Isolation.two_pow_le_of_exact",
                    "∀ {T n s : ℕ} (σ : (Fin T → Fin n → Bool) → Fin s), Exact σ → 2 ^ (T * n) ≤ s",
                    "Proofs.Isolation.Floor",
                )
            ],
            "figures": {},
            "inputs": [],
            "toolchain": toolchain,
            "limits": ["Holds for every finite T and n; says nothing about approximate managers."],
        }
    )
    ceiling = with_body_hash(
        {
            "schema_version": "1",
            "result": "demand-fetch-ceiling",
            "title": "No cache beats the traffic",
            "theorems": [
                _theorem(
                    "KVCache.Ceiling.hits_add_distinct_le",
                    "∀ (P : Policy) (r : List ℕ), hits P r + distinct r ≤ r.length",
                    "Proofs.Ceiling.Bound",
                )
            ],
            "figures": {
                "requests": len(lines),
                "distinct": len(set(lines)),
                "ceiling": (len(lines) - len(set(lines))) / max(len(lines), 1) + 0.125,
                "big": 2**70,
                "tiny": 1.5e-7 * (len(lines) or 1),
                "nothing": None,
            },
            "inputs": [{"path": "data/trace.jsonl", "sha256": sha256_bytes(trace_bytes)}],
            "toolchain": toolchain,
            "limits": ["Per trace: the ceiling is a property of this one request stream."],
        }
    )
    receipt = {"run": "certify", "exit": 0, "theorems": [floor["theorems"][0]["name"]]}
    paths = {
        "floor": cert_dir / "isolation-floor.json",
        "ceiling": cert_dir / "demand-fetch-ceiling.json",
        "receipt": cert_dir / "receipt.json",
    }
    write_canonical(paths["floor"], floor)
    write_canonical(paths["ceiling"], ceiling)
    write_canonical(paths["receipt"], receipt)
    files = []
    for p in paths.values():
        data = p.read_bytes()
        rel = p.relative_to(root).as_posix()
        files.append({"path": rel, "sha256": sha256_bytes(data), "size": len(data)})
    theorems = [
        {"name": t["name"], "statement_sha256": t["statement_sha256"], "result": c["result"]}
        for c in (floor, ceiling)
        for t in c["theorems"]
    ]
    manifest = {"schema_version": "1", "files": files, "theorems": theorems}
    validate(manifest, "manifest")
    paths["manifest"] = cert_dir / "MANIFEST.json"
    write_canonical(paths["manifest"], manifest)
    paths["trace"] = trace
    return paths


@pytest.fixture
def release(tmp_path: Path) -> dict[str, Path]:
    return make_release(tmp_path)


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytools.verify", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def _resign(cert_path: Path, edit: Any) -> dict[str, Any]:
    """Edit a certificate and recompute its body hash (a careful forger)."""
    cert = json.loads(cert_path.read_text(encoding="utf-8"))
    edit(cert)
    return with_body_hash(cert)


# --- canonical ------------------------------------------------------------------------


def test_canonical_bytes_form() -> None:
    data = canonical_bytes({"b": [1, 2.0, "é\n"], "a": {}, "c": None})
    assert data == (
        b'{\n  "a": {},\n  "b": [\n    1,\n    2.0,\n    "\xc3\xa9\\n"\n  ],\n  "c": null\n}\n'
    )


@pytest.mark.parametrize(
    "bad", [math.nan, math.inf, -math.inf, {1: "x"}, {"k": {1, 2}}, b"x", "\ud800"]
)
def test_canonical_rejects(bad: Any) -> None:
    with pytest.raises(CanonicalError):
        canonical_bytes({"v": bad})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_canonical_is_a_fixed_point(value: Any) -> None:
    data = canonical_bytes(value)
    assert canonical_bytes(json.loads(data)) == data


def test_body_hash_roundtrip_and_planted_edit() -> None:
    cert = with_body_hash({"result": "x", "figures": {"n": 3}})
    assert check_body_hash(cert)
    cert["figures"]["n"] = 4  # planted defect
    assert not check_body_hash(cert)
    assert not check_body_hash({"result": "x"})


def test_atomic_write_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.json"
    atomic_write_bytes(target, b"one")
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]
    with pytest.raises(CanonicalError):
        write_canonical(target, {"x": math.nan})
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]


def test_schemas_are_draft_2020_12_and_catch_defects(release: dict[str, Path]) -> None:
    for name in ("certificate", "manifest"):
        assert canonical.load_schema(name)["$schema"] == canonical.SCHEMA_DIALECT
    cert = json.loads(release["ceiling"].read_text(encoding="utf-8"))
    validate(cert, "certificate")
    del cert["theorems"][0]["statement_sha256"]  # planted defect
    with pytest.raises(SchemaError, match=r"theorems\[0\]"):
        validate(cert, "certificate")


# --- verify: library ----------------------------------------------------------------------


def test_genuine_is_green(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])
    for role in ("floor", "ceiling"):
        verdict = verify_file(release[role], manifest)
        assert verdict.green, verdict.reasons
        assert verdict.kind == "certificate"
        assert verdict.codes == ["listed", "theorems-ok"]


def test_run_receipt_and_manifest_are_green(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])
    receipt = verify_file(release["receipt"], manifest)
    assert receipt.green and receipt.kind == "published-file", receipt.reasons
    itself = verify_file(release["manifest"], manifest)
    assert itself.green and itself.codes == ["is-manifest"]


def test_one_byte_changed_is_red(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])
    data = bytearray(release["ceiling"].read_bytes())
    at = data.index(b'"requests": ') + len(b'"requests": ')
    data[at] = ord("9") if data[at] != ord("9") else ord("8")  # planted defect
    verdict = verify_bytes(bytes(data), manifest, "tampered")
    assert not verdict.green
    assert verdict.codes == ["unknown-hash", "body-hash-mismatch", "theorems-ok"]


def test_whitespace_change_is_red_unknown_hash(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])
    data = release["floor"].read_bytes() + b"\n"
    verdict = verify_bytes(data, manifest)
    assert not verdict.green and verdict.codes == ["unknown-hash", "theorems-ok"]


def test_unpublished_theorem_is_red(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])
    cert = _resign(
        release["floor"],
        lambda c: c["theorems"].append(
            _theorem("KVCache.Isolation.fake", "True", "Proofs.Isolation.Floor")
        ),
    )
    verdict = verify_bytes(canonical_bytes(cert), manifest)
    assert not verdict.green
    assert "unknown-theorem" in verdict.codes
    assert any("KVCache.Isolation.fake" in r for r in verdict.reasons)


def test_statement_hash_changed_is_red(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])

    def edit(c: dict[str, Any]) -> None:
        c["theorems"][0]["statement"] += " ∧ True"
        c["theorems"][0]["statement_sha256"] = sha256_bytes(c["theorems"][0]["statement"].encode())

    verdict = verify_bytes(canonical_bytes(_resign(release["floor"], edit)), manifest)
    assert not verdict.green
    assert verdict.codes == ["unknown-hash", "statement-hash-mismatch"]


def test_even_a_listed_file_is_red_if_the_manifest_disagrees(tmp_path: Path) -> None:
    """A manifest that lists a file but publishes another statement hash: red."""
    paths = make_release(tmp_path)
    man = json.loads(paths["manifest"].read_text(encoding="utf-8"))
    man["theorems"][0]["statement_sha256"] = "0" * 64  # planted defect in the manifest
    write_canonical(paths["manifest"], man)
    verdict = verify_file(paths["floor"], load_manifest(paths["manifest"]))
    assert not verdict.green
    assert verdict.codes == ["listed", "statement-hash-mismatch"]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b'{"schema_version": "1", "result": ', "line 1"),  # truncated
        (b"{'a': 1}", "line 1 column 2"),  # malformed
        (b'{"a": NaN}', "NaN"),
        (b'{"a": 1, "a": 2}', "duplicate key"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"", "line 1 column 1"),
    ],
)
def test_malformed_json_is_red_with_message(
    release: dict[str, Path], data: bytes, needle: str
) -> None:
    verdict = verify_bytes(data, load_manifest(release["manifest"]))
    assert not verdict.green
    assert verdict.codes == ["unknown-hash", "malformed-json"]
    assert needle in verdict.reasons[1]


def test_nesting_limit(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])
    ok = verify_bytes(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, manifest)
    assert ok.codes == ["unknown-hash", "not-an-object"]
    deep = verify_bytes(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), manifest)
    assert deep.codes == ["unknown-hash", "malformed-json"]
    assert "levels deep" in deep.reasons[1]
    assert json_depth([]) == 1 and json_depth({"a": [1, {}]}) == 3 and json_depth(5) == 0


def test_truncated_certificate_is_red(release: dict[str, Path]) -> None:
    data = release["ceiling"].read_bytes()
    verdict = verify_bytes(data[: len(data) // 2], load_manifest(release["manifest"]))
    assert not verdict.green and "malformed-json" in verdict.codes


def test_schema_violation_is_red(release: dict[str, Path]) -> None:
    cert = _resign(release["floor"], lambda c: c.pop("limits"))
    verdict = verify_bytes(canonical_bytes(cert), load_manifest(release["manifest"]))
    assert not verdict.green
    assert verdict.codes == ["unknown-hash", "schema-violation", "theorems-ok"]
    assert "'limits' is a required property" in verdict.reasons[1]


def test_unsupported_schema_version_is_red(release: dict[str, Path]) -> None:
    cert = _resign(release["floor"], lambda c: c.update(schema_version="2"))
    verdict = verify_bytes(canonical_bytes(cert), load_manifest(release["manifest"]))
    assert verdict.codes == ["unknown-hash", "unsupported-schema-version", "theorems-ok"]


def test_oversize_is_red(release: dict[str, Path], tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_BYTES + 1))
    verdict = verify_file(big, load_manifest(release["manifest"]))
    assert not verdict.green and verdict.codes == ["too-large"]


def test_not_a_file_raises(release: dict[str, Path], tmp_path: Path) -> None:
    manifest = load_manifest(release["manifest"])
    with pytest.raises(VerifyError, match="not a file"):
        verify_file(tmp_path, manifest)
    with pytest.raises(VerifyError, match="no such file"):
        verify_file(tmp_path / "missing.json", manifest)


def test_bad_manifest_raises(tmp_path: Path) -> None:
    bad = tmp_path / "MANIFEST.json"
    bad.write_text('{"schema_version": "1", "files": []}', encoding="utf-8")
    with pytest.raises(VerifyError, match=r"MANIFEST.json: schema violation.*theorems"):
        load_manifest(bad)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(VerifyError, match="malformed JSON"):
        load_manifest(bad)


# --- verify: CLI --------------------------------------------------------------------------


def test_cli_exit_codes(release: dict[str, Path], tmp_path: Path) -> None:
    man = str(release["manifest"])
    ok = _run_cli("--manifest", man, str(release["floor"]), str(release["ceiling"]))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count("GREEN") == 2

    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(release["floor"].read_bytes().replace(b"Price", b"Prize"))
    red = _run_cli("--manifest", man, str(tampered))
    assert red.returncode == 1
    assert "RED" in red.stdout and "unknown-hash" in red.stdout

    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(release["floor"].read_bytes()[:40])
    red = _run_cli("--manifest", man, str(truncated))
    assert red.returncode == 1 and "malformed-json" in red.stdout

    usage = _run_cli("--manifest", man, str(tmp_path))
    assert usage.returncode == 2 and "not a file" in usage.stderr

    no_manifest = _run_cli("--manifest", str(tmp_path / "nope.json"), str(release["floor"]))
    assert no_manifest.returncode == 2 and "nope.json: not a file" in no_manifest.stderr

    as_json = _run_cli("--json", "--manifest", man, str(release["floor"]), str(tampered))
    verdicts = json.loads(as_json.stdout)
    assert [v["green"] for v in verdicts] == [True, False]
    assert as_json.returncode == 1
