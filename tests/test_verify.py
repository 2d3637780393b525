"""Tests for canonical JSON, the strict schemas, and verify: anchors (pin, signature), the
theorem binding, the policy re-check, verify's words; each check with its planted defect.

The releases come from ``tests/bundles.py`` (test_site and test_browser reuse them).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bundles import forge_pair, make_release, sign_release, weaken_floor, write_public_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from pytools.files import atomic_write_bytes
from pytools.publish import validation
from pytools.publish.anchor import AnchorOptions, check_anchor
from pytools.publish.attest import ENVELOPE_NAME, pae
from pytools.publish.canonical import (
    CanonicalError,
    canonical_bytes,
    check_body_hash,
    with_body_hash,
    write_canonical,
)
from pytools.publish.codes import OK_CODES, REASON_CODES, RED_CODES
from pytools.publish.keys import load_trusted_keys
from pytools.publish.verify import (
    MAX_BYTES,
    MAX_DEPTH,
    Verdict,
    VerifyError,
    VerifyReport,
    anchor_for,
    json_depth,
    load_manifest,
    run_verify,
    verify_bytes,
    verify_file,
)

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["make_release"]  # test_site and test_browser import it from here


@pytest.fixture
def release(tmp_path: Path) -> dict[str, Path]:
    return make_release(tmp_path)


@pytest.fixture
def signed(tmp_path: Path) -> dict[str, Any]:
    key = Ed25519PrivateKey.generate()
    paths: dict[str, Any] = make_release(tmp_path, key=key)
    paths["key"] = key
    paths["root"] = tmp_path
    return paths


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytools", "verify", *args],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )


def _verify(paths: dict[str, Any], role: str, options: AnchorOptions | None = None) -> Verdict:
    manifest = load_manifest(paths["manifest"])
    anchor = anchor_for(manifest, paths["manifest"], options or AnchorOptions(), None)
    return verify_file(paths[role], manifest, anchor)


def _resigned(cert_path: Path, edit: Any) -> bytes:
    """Edit a certificate and recompute its body hash (a careful forger without the manifest)."""
    cert = json.loads(cert_path.read_text(encoding="utf-8"))
    edit(cert)
    return canonical_bytes(with_body_hash(cert))


def _keys(*paths: Path) -> dict[str, Any]:
    return load_trusted_keys(list(paths))


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
    st.none() | st.booleans() | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
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


def test_atomic_write_leaves_no_temp_and_is_world_readable(tmp_path: Path) -> None:
    old = os.umask(0o077)  # a strict umask must not make published files private
    try:
        target = tmp_path / "sub" / "deeper" / "f.json"
        atomic_write_bytes(target, b"one")
        atomic_write_bytes(target, b"two")
    finally:
        os.umask(old)
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]
    assert target.stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "sub").stat().st_mode & 0o777 == 0o755
    assert target.parent.stat().st_mode & 0o777 == 0o755
    with pytest.raises(CanonicalError):
        write_canonical(target, {"x": math.nan})
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]


# --- strict schemas ------------------------------------------------------------------------


def test_schemas_are_draft_2020_12_strict_and_in_the_page_subset() -> None:
    schemas = validation.package_schemas()
    assert {"certificate", "manifest", "statement", "envelope"} <= set(schemas.documents)
    assert set(schemas.figure_results()) >= {"isolation-floor", "demand-fetch-ceiling",
                                             "single-owner-kernel", "pooled-placement",
                                             "tenant-leak"}

    def objects(node: Any, under: bool = False) -> list[dict[str, Any]]:
        found = []
        if isinstance(node, dict):
            if not under and node.get("type") == "object":
                found.append(node)
            for key, value in node.items():
                if key not in ("const", "enum", "examples"):
                    found += objects(value, key in ("properties", "$defs"))
        elif isinstance(node, list):
            for value in node:
                found += objects(value)
        return found

    for name, schema in schemas.documents.items():
        assert schema["$schema"] == validation.SCHEMA_DIALECT
        for obj in objects(schema):
            if name == "certificate" and obj is schema["properties"]["figures"]:
                continue  # checked by the result's own figures schema
            assert obj.get("additionalProperties") is False, (name, sorted(obj))


def test_planted_keyword_outside_the_subset_is_refused() -> None:
    bad = {"$schema": validation.SCHEMA_DIALECT, "type": "object", "oneOf": [{}]}
    with pytest.raises(ValueError, match="oneOf"):
        validation.package_schemas().with_documents({"figures/x": bad})


@pytest.mark.parametrize(
    ("edit", "pointer"),
    [
        (lambda c: c.update(extra=1), "/extra: property not allowed here"),
        (lambda c: c["audit"].update(sneaky=True), "/audit/sneaky: property not allowed here"),
        (lambda c: c["theorems"][0].update(proof="trust me"),
         "/theorems/0/proof: property not allowed here"),
        (lambda c: c["figures"].update(bonus=5), "/figures/bonus: property not allowed here"),
        (lambda c: c["figures"].update(requests="many"),
         "/figures/requests: expected integer, found string"),
        (lambda c: c["figures"].pop("distinct"), "/figures/distinct: required property is missing"),
        (lambda c: c.pop("limits"), "/limits: required property is missing"),
        (lambda c: c["sources"][0].update(path="../../etc/passwd"),
         "/sources/0/path: does not match the pattern"),
        (lambda c: c.update(result="no-such-result"),
         '/result: no figures schema for result "no-such-result"'),
    ],
)
def test_schema_violation_is_red_with_its_json_pointer(
    release: dict[str, Path], edit: Any, pointer: str
) -> None:
    data = _resigned(release["ceiling"], edit)
    verdict = verify_bytes(data, load_manifest(release["manifest"]))
    assert not verdict.green
    assert "schema-violation" in verdict.codes
    assert any(r.startswith("schema-violation: " + pointer) for r in verdict.reasons), \
        verdict.reasons


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../outside.json", "does not match"),
        ("/etc/passwd", "does not match"),
        ("certificates\\x.json", "does not match"),
        ("certificates/./x.json", "does not match"),
        ("certificates//x.json", "does not match"),
        ("C:/x.json", "does not match"),
    ],
)
def test_manifest_paths_must_be_relative_and_inside(
    release: dict[str, Path], path: str, why: str
) -> None:
    manifest = json.loads(release["manifest"].read_bytes())
    manifest["files"][0]["path"] = path  # planted defect
    write_canonical(release["manifest"], manifest)
    with pytest.raises(VerifyError, match=rf"schema violation: /files/0/path: {why}"):
        load_manifest(release["manifest"])


def test_manifest_entries_must_be_unique(release: dict[str, Path]) -> None:
    manifest = json.loads(release["manifest"].read_bytes())
    twin = dict(manifest["files"][0], size=manifest["files"][0]["size"] + 1)
    manifest["files"].append(twin)  # planted: one path listed twice with different entries
    write_canonical(release["manifest"], manifest)
    with pytest.raises(VerifyError, match=r"/files/4: duplicate path \(first at /files/0\)"):
        load_manifest(release["manifest"])
    manifest["files"].pop()
    manifest["theorems"].append(dict(manifest["theorems"][0], statement_sha256="0" * 64))
    write_canonical(release["manifest"], manifest)
    with pytest.raises(VerifyError, match="duplicate theorem for this result"):
        load_manifest(release["manifest"])


def test_manifest_extra_key_is_refused(release: dict[str, Path]) -> None:
    manifest = json.loads(release["manifest"].read_bytes())
    manifest["trusted_keys"] = ["a key shipped in the bundle"]  # planted
    write_canonical(release["manifest"], manifest)
    with pytest.raises(VerifyError, match="/trusted_keys: property not allowed here"):
        load_manifest(release["manifest"])


# --- verdicts: genuine, tampered, words -----------------------------------------------------


def test_genuine_is_green_integrity_only(release: dict[str, Path]) -> None:
    for role in ("floor", "ceiling"):
        verdict = _verify(release, role)
        assert verdict.green, verdict.reasons
        assert verdict.kind == "certificate"
        assert verdict.codes == ["integrity-only", "listed", "theorems-ok", "policy-ok"]
        assert "integrity only, not authenticity" in verdict.reasons[0]
    for role in ("csv", "svg"):
        verdict = _verify(release, role)
        assert verdict.green and verdict.kind == "published-file"
        assert verdict.codes == ["integrity-only", "listed", "not-json"]
    itself = _verify(release, "manifest")
    assert itself.green and itself.codes == ["integrity-only", "is-manifest"]


def test_one_byte_changed_is_red_without_ok_codes(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])
    data = bytearray(release["ceiling"].read_bytes())
    at = data.index(b'"requests": ') + len(b'"requests": ')
    data[at] = ord("9") if data[at] != ord("9") else ord("8")  # planted defect
    verdict = verify_bytes(bytes(data), manifest, "tampered")
    assert not verdict.green
    assert verdict.codes == ["unknown-hash", "body-hash-mismatch"]  # no theorems-ok, policy-ok


def test_not_canonical_gets_a_hint_naming_the_published_file(release: dict[str, Path]) -> None:
    obj = json.loads(release["floor"].read_bytes())
    reformatted = json.dumps(obj, indent=4).encode()  # same content, an editor's formatting
    verdict = verify_bytes(reformatted, load_manifest(release["manifest"]))
    assert not verdict.green
    assert verdict.codes[:2] == ["unknown-hash", "not-canonical"]
    assert "in canonical form it is published as certificates/isolation-floor.json" in \
        verdict.reasons[1]
    canonical_but_other = canonical_bytes({**obj, "title": "Other"})
    assert "not-canonical" not in verify_bytes(canonical_but_other,
                                               load_manifest(release["manifest"])).codes


def test_json_that_is_not_a_certificate_says_so(release: dict[str, Path]) -> None:
    verdict = verify_bytes(b'{"hello": "world"}', load_manifest(release["manifest"]), "x.json")
    assert not verdict.green and verdict.kind == "unknown"
    assert verdict.codes == ["unknown-hash", "not-canonical", "not-a-certificate"]
    assert "neither a certificate" in verdict.reasons[-1]


def test_red_verdicts_never_carry_ok_codes(release: dict[str, Path]) -> None:
    manifest = load_manifest(release["manifest"])
    cases = [
        release["floor"].read_bytes().replace(b"Price", b"Prize"),
        _resigned(release["floor"], lambda c: c["audit"].update(findings=2)),
        _resigned(release["floor"], lambda c: c.update(extra=1)),
    ]
    for data in cases:
        verdict = verify_bytes(data, manifest)
        assert not verdict.green
        assert not set(verdict.codes) & OK_CODES, verdict.codes
    assert set(RED_CODES) | OK_CODES <= set(REASON_CODES)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b'{"schema_version": "2", "result": ', "line 1"),
        (b"{'a': 1}", "line 1 column 2"),
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
    assert ok.codes == ["unknown-hash", "not-canonical", "not-an-object"]
    deep = verify_bytes(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), manifest)
    assert deep.codes == ["unknown-hash", "malformed-json"]
    assert json_depth([]) == 1 and json_depth({"a": [1, {}]}) == 3 and json_depth(5) == 0


def test_oversize_and_not_a_file(release: dict[str, Path], tmp_path: Path) -> None:
    manifest = load_manifest(release["manifest"])
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_BYTES + 1))
    verdict = verify_file(big, manifest)
    assert not verdict.green and verdict.codes == ["too-large"]
    with pytest.raises(VerifyError, match="not a file"):
        verify_file(tmp_path, manifest)
    with pytest.raises(VerifyError, match="no such file"):
        verify_file(tmp_path / "missing.json", manifest)


def test_unsupported_schema_version_is_red(release: dict[str, Path]) -> None:
    data = _resigned(release["floor"], lambda c: c.update(schema_version="1"))
    verdict = verify_bytes(data, load_manifest(release["manifest"]))
    assert verdict.codes == ["unknown-hash", "unsupported-schema-version"]  # no theorems-ok


# --- binding what is shown to what is hashed ------------------------------------------------


def test_theorem_must_belong_to_the_result_that_names_it(release: dict[str, Path]) -> None:
    ceiling = json.loads(release["ceiling"].read_bytes())
    data = _resigned(release["floor"],
                     lambda c: c["theorems"].append(ceiling["theorems"][0]))  # planted
    verdict = verify_bytes(data, load_manifest(release["manifest"]))
    assert not verdict.green
    assert "theorem-wrong-result" in verdict.codes
    assert "published for demand-fetch-ceiling, not for isolation-floor" in " ".join(
        verdict.reasons)


def test_statement_text_edited_but_term_hash_kept_is_red(release: dict[str, Path]) -> None:
    """The issue's finding: the text was not tied to the hash. A forger edits what is shown."""

    def edit(c: dict[str, Any]) -> None:
        c["theorems"][0]["statement"] = c["theorems"][0]["statement"].replace("≤ s", "< s")

    verdict = verify_bytes(_resigned(release["floor"], edit), load_manifest(release["manifest"]))
    assert not verdict.green
    assert verdict.codes == ["unknown-hash", "statement-text-mismatch"]


def test_statement_term_hash_changed_is_red(release: dict[str, Path]) -> None:
    data = _resigned(release["floor"],
                     lambda c: c["theorems"][0].update(statement_sha256="0" * 64))
    verdict = verify_bytes(data, load_manifest(release["manifest"]))
    assert verdict.codes == ["unknown-hash", "statement-hash-mismatch"]


def test_unpublished_theorem_is_red(release: dict[str, Path]) -> None:
    def edit(c: dict[str, Any]) -> None:
        c["theorems"].append(dict(c["theorems"][0], name="KVCache.Isolation.fake"))

    verdict = verify_bytes(_resigned(release["floor"], edit), load_manifest(release["manifest"]))
    assert "unknown-theorem" in verdict.codes and not verdict.green


def test_listed_file_is_red_if_the_manifest_publishes_another_statement(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    man = json.loads(paths["manifest"].read_text(encoding="utf-8"))
    for entry in man["theorems"]:
        entry["statement_text_sha256"] = "0" * 64  # planted defect in the manifest
    write_canonical(paths["manifest"], man)
    verdict = verify_file(paths["floor"], load_manifest(paths["manifest"]))
    assert verdict.codes == ["listed", "statement-text-mismatch"]  # and no policy-ok


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda c: c["audit"].update(findings=1), "/audit/findings"),
        (lambda c: c["audit"].update(allowed_axioms=["propext", "Quot.sound", "Classical.choice",
                                                     "sorryAx"]), "/audit/allowed_axioms"),
        (lambda c: c["theorems"][0].update(axioms=["sorryAx"]),
         "/theorems/0/axioms: KVCache.Isolation.two_pow_le_of_exact depends on sorryAx"),
        (lambda c: c["audit"]["checks"][0].update(status="not-run"),
         "/audit/checks: required check olean-audit did not pass"),
        (lambda c: c["audit"].update(checks=c["audit"]["checks"][1:]),
         "/audit/checks: required check olean-audit is not recorded"),
        (lambda c: [check.update(status="not-run") for check in c["audit"]["checks"]
                    if check["name"] in ("kernel-replay", "leanchecker")],
         "/audit/checks: no kernel re-check passed (one of kernel-replay, leanchecker"),
    ],
)
def test_policy_fields_are_rechecked(release: dict[str, Path], edit: Any, needle: str) -> None:
    """A forger who rewrites a certificate and its manifest still cannot admit a finding,
    widen the allowed axioms or drop a required check: verify re-checks the policy."""
    root = release["manifest"].parent.parent
    forge_pair(root, edit)
    verdict = verify_file(release["floor"], load_manifest(release["manifest"]))
    assert not verdict.green
    assert "policy-violation" in verdict.codes
    assert any(needle in r for r in verdict.reasons), verdict.reasons


# --- the anchor: pin ---------------------------------------------------------------------


def test_forged_pair_is_green_without_an_anchor_but_says_integrity_only(
    release: dict[str, Path]
) -> None:
    """What the issue measured: a forger who rewrites a certificate and its manifest passes
    an integrity check. The verdict now says that is all it is."""
    forge_pair(release["manifest"].parent.parent, weaken_floor)
    verdict = _verify(release, "floor")
    assert verdict.green
    assert verdict.codes[0] == "integrity-only"


def test_forged_pair_is_red_under_the_pin(release: dict[str, Path]) -> None:
    pin = load_manifest(release["manifest"]).sha256
    assert _verify(release, "floor", AnchorOptions(pin=pin)).codes[0] == "manifest-pinned"
    forge_pair(release["manifest"].parent.parent, weaken_floor)
    verdict = _verify(release, "floor", AnchorOptions(pin=pin))
    assert not verdict.green
    assert verdict.codes == ["manifest-not-pinned", "listed"]
    forged_manifest = _verify(release, "manifest", AnchorOptions(pin=pin))
    assert not forged_manifest.green and forged_manifest.codes[0] == "manifest-not-pinned"


# --- the anchor: signature ------------------------------------------------------------------


def test_pae_is_the_dsse_encoding() -> None:
    assert pae("http://example.com/HelloWorld", b"hello world") == \
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    assert pae("t", b"") == b"DSSEv1 1 t 0 "
    assert pae("é", b"x") == "DSSEv1 2 é 1 x".encode()  # lengths in bytes


def test_signed_release_is_green_under_the_key(signed: dict[str, Any]) -> None:
    options = AnchorOptions(keys=_keys(signed["public_key"]), require_signature=True)
    for role in ("floor", "ceiling", "csv", "manifest"):
        verdict = _verify(signed, role, options)
        assert verdict.green, verdict.reasons
        assert verdict.codes[0] == "manifest-signed"
    unchecked = _verify(signed, "floor")
    assert unchecked.green and unchecked.codes[0] == "signature-unchecked"


def test_forged_pair_is_red_under_the_key(signed: dict[str, Any]) -> None:
    forge_pair(signed["root"], weaken_floor)
    options = AnchorOptions(keys=_keys(signed["public_key"]), require_signature=True)
    verdict = _verify(signed, "floor", options)
    assert not verdict.green
    assert verdict.codes == ["manifest-not-signed", "listed"]


def test_forger_who_re_signs_with_their_own_key_is_untrusted(
    signed: dict[str, Any], tmp_path: Path
) -> None:
    forge_pair(signed["root"], weaken_floor)
    sign_release(signed["root"], Ed25519PrivateKey.generate())  # the forger's key
    options = AnchorOptions(keys=_keys(signed["public_key"]), require_signature=True)
    verdict = _verify(signed, "floor", options)
    assert verdict.codes[0] == "signature-untrusted" and not verdict.green


def test_wrong_key_is_red(signed: dict[str, Any], tmp_path: Path) -> None:
    wrong = write_public_key(tmp_path / "wrong.pem", Ed25519PrivateKey.generate())
    verdict = _verify(signed, "floor", AnchorOptions(keys=_keys(wrong), require_signature=True))
    assert not verdict.green and verdict.codes == ["signature-untrusted", "listed"]


def test_altered_payload_or_signature_is_bad(signed: dict[str, Any]) -> None:
    envelope = json.loads(signed["envelope"].read_bytes())
    payload = json.loads(__import__("base64").b64decode(envelope["payload"]))
    payload["predicate"]["results"].append("extra-result")  # planted: payload edited
    envelope["payload"] = __import__("base64").b64encode(canonical_bytes(payload)).decode()
    signed["envelope"].write_text(json.dumps(envelope) + "\n")
    options = AnchorOptions(keys=_keys(signed["public_key"]), require_signature=True)
    verdict = _verify(signed, "floor", options)
    assert verdict.codes[0] == "signature-bad" and not verdict.green


def test_the_envelope_itself_verifies_as_the_signature(signed: dict[str, Any]) -> None:
    options = AnchorOptions(keys=_keys(signed["public_key"]), require_signature=True)
    verdict = _verify(signed, "envelope", options)
    assert verdict.green and verdict.kind == "signature"
    assert verdict.codes == ["manifest-signed", "is-signature"]
    unchecked = _verify(signed, "envelope")
    assert unchecked.green and unchecked.codes == ["signature-unchecked", "is-signature"]
    forge_pair(signed["root"], weaken_floor)  # the envelope of a forged pair: red
    red = _verify(signed, "envelope", options)
    assert not red.green and red.codes == ["manifest-not-signed", "is-signature"]


def test_url_safe_base64_and_no_key_id_are_accepted(signed: dict[str, Any]) -> None:
    """DSSE: verifiers MUST accept standard and URL-safe base64; keyid is an optional hint."""
    envelope = json.loads(signed["envelope"].read_bytes())
    for field in ("payload",):
        envelope[field] = envelope[field].replace("+", "-").replace("/", "_").rstrip("=")
    sig = envelope["signatures"][0]
    sig["sig"] = sig["sig"].replace("+", "-").replace("/", "_").rstrip("=")
    del sig["keyid"]
    signed["envelope"].write_text(json.dumps(envelope) + "\n")
    options = AnchorOptions(keys=_keys(signed["public_key"]), require_signature=True)
    verdict = _verify(signed, "floor", options)
    assert verdict.green and verdict.codes[0] == "manifest-signed", verdict.reasons


def test_envelope_removed_or_garbled(signed: dict[str, Any]) -> None:
    options = AnchorOptions(keys=_keys(signed["public_key"]), require_signature=True)
    signed["envelope"].write_bytes(b"{}\n{}\n")
    assert _verify(signed, "floor", options).codes[0] == "signature-invalid"
    signed["envelope"].unlink()
    verdict = _verify(signed, "floor", options)
    assert verdict.codes[0] == "signature-missing" and not verdict.green


def test_require_signature_of_an_unsigned_release(release: dict[str, Path]) -> None:
    unsigned = _verify(release, "floor", AnchorOptions(require_signature=True))
    assert not unsigned.green and unsigned.codes[0] == "signature-missing"


def test_require_signature_without_a_key(signed: dict[str, Any]) -> None:
    no_key = _verify(signed, "floor", AnchorOptions(require_signature=True))
    assert not no_key.green and no_key.codes[0] == "signature-unverified"


def test_statement_must_cover_exactly_the_manifests_files(signed: dict[str, Any]) -> None:
    manifest = load_manifest(signed["manifest"])
    keys = _keys(signed["public_key"])
    anchor = check_anchor(manifest, AnchorOptions(keys=keys), signed["envelope"].read_bytes(),
                          ENVELOPE_NAME)
    assert anchor.codes == ("manifest-signed",)
    # the same statement against a manifest listing one file more: not what was signed
    man = json.loads(signed["manifest"].read_bytes())
    man["files"].append({"path": "certificates/extra.json", "sha256": "3" * 64, "size": 1})
    write_canonical(signed["manifest"], man)
    other = load_manifest(signed["manifest"])
    anchor = check_anchor(other, AnchorOptions(keys=keys), signed["envelope"].read_bytes(),
                          ENVELOPE_NAME)
    assert anchor.codes == ("manifest-not-signed",)


def test_a_private_key_is_never_accepted_as_a_trusted_key(signed: dict[str, Any],
                                                          tmp_path: Path) -> None:
    from bundles import write_private_key

    private = write_private_key(tmp_path / "oops.pem", signed["key"])
    with pytest.raises(Exception, match="PRIVATE KEY, not a PUBLIC KEY"):
        load_trusted_keys([private])


# --- the CLI -------------------------------------------------------------------------------


def test_cli_exit_codes_and_words(release: dict[str, Path], tmp_path: Path) -> None:
    man = str(release["manifest"])
    ok = _run_cli("--manifest", man, str(release["floor"]), str(release["ceiling"]))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count("GREEN") == 2
    assert "anchor: integrity only, not authenticity" in ok.stdout

    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(release["floor"].read_bytes().replace(b"Price", b"Prize"))
    red = _run_cli("--manifest", man, str(tampered))
    assert red.returncode == 1
    assert "RED" in red.stdout and "unknown-hash" in red.stdout
    assert "theorems-ok" not in red.stdout

    usage = _run_cli("--manifest", man, str(tmp_path))
    assert usage.returncode == 2 and "not a file" in usage.stderr
    no_manifest = _run_cli("--manifest", str(tmp_path / "nope.json"), str(release["floor"]))
    assert no_manifest.returncode == 2 and "nope.json: no such file" in no_manifest.stderr
    bad_pin = _run_cli("--manifest", man, "--manifest-sha256", "abc", str(release["floor"]))
    assert bad_pin.returncode == 2 and "not 64 hex digits" in bad_pin.stderr


def test_cli_pin_and_everything_listed(release: dict[str, Path]) -> None:
    man = release["manifest"]
    pin = load_manifest(man).sha256
    every = _run_cli("--manifest", str(man), "--manifest-sha256", pin.upper())
    assert every.returncode == 0, every.stdout + every.stderr
    assert every.stdout.count("GREEN") == 5  # the manifest and the four files it lists
    assert "anchor: pinned" in every.stdout
    forge_pair(man.parent.parent, weaken_floor)
    red = _run_cli("--manifest", str(man), "--manifest-sha256", pin, str(release["floor"]))
    assert red.returncode == 1 and "manifest-not-pinned" in red.stdout


def test_cli_key_and_require_signature(signed: dict[str, Any],
                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    man, key = str(signed["manifest"]), str(signed["public_key"])
    ok = _run_cli("--manifest", man, "--key", key, str(signed["floor"]))
    assert ok.returncode == 0 and "anchor: signed by" in ok.stdout, ok.stdout + ok.stderr
    # the publisher's key of this test lies in the bundle's folder: verify warns
    assert "lies inside the bundle being checked" in ok.stderr
    outside = tmp_path_factory.mktemp("auditor") / "publisher.pem"
    outside.write_bytes(signed["public_key"].read_bytes())
    clean = _run_cli("--manifest", man, "--key", str(outside), str(signed["floor"]))
    assert clean.returncode == 0 and "warning" not in clean.stderr
    forge_pair(signed["root"], weaken_floor)
    red = _run_cli("--manifest", man, "--key", key, str(signed["floor"]))
    assert red.returncode == 1 and "manifest-not-signed" in red.stdout
    every = json.loads(_run_cli("--json", "--manifest", man, "--key", key).stdout)
    assert [v["kind"] for v in every["verdicts"]][-1] == "signature"  # the envelope too
    signed["envelope"].unlink()
    required = _run_cli("--manifest", man, "--require-signature", str(signed["floor"]))
    assert required.returncode == 1 and "signature-missing" in required.stdout


def test_cli_json_lists_every_input_and_the_manifest(release: dict[str, Path],
                                                    tmp_path: Path) -> None:
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(release["floor"].read_bytes().replace(b"Price", b"Prize"))
    missing = tmp_path / "missing.json"
    out = _run_cli("--json", "--manifest", str(release["manifest"]), str(release["floor"]),
                   str(tampered), str(missing), str(tmp_path))
    report = json.loads(out.stdout)
    assert out.returncode == 2
    assert report["manifest"]["path"] == str(release["manifest"])
    assert report["manifest"]["sha256"] == load_manifest(release["manifest"]).sha256
    assert report["manifest"]["anchor"]["summary"] == "integrity only, not authenticity"
    assert [v["path"] for v in report["verdicts"]] == [
        str(release["floor"]), str(tampered), str(missing), str(tmp_path)]
    assert [v["green"] for v in report["verdicts"]] == [True, False, False, False]
    assert "no such file" in report["verdicts"][2]["error"]
    assert "not a file" in report["verdicts"][3]["error"]
    assert report["green"] is False
    # Every input has the same keys, errors included (a script reading v["codes"] works).
    keys = {"path", "green", "reasons", "codes", "sha256", "kind", "result", "error"}
    assert all(set(v) == keys for v in report["verdicts"]), report["verdicts"]
    assert report["verdicts"][0]["error"] is None
    assert report["verdicts"][2]["codes"] == ["integrity-only", "unreadable"]
    unusable = _run_cli("--json", "--manifest", str(missing), str(release["floor"]))
    body = json.loads(unusable.stdout)
    assert unusable.returncode == 2 and "no such file" in body["manifest"]["error"]
    assert body["verdicts"][0]["path"] == str(release["floor"])
    assert set(body["verdicts"][0]) == keys and body["verdicts"][0]["codes"] == ["unreadable"]


def test_run_verify_returns_a_typed_report(release: dict[str, Path], tmp_path: Path) -> None:
    """One verdict per input (a missing file a red verdict with its error), the manifest's
    anchor as a record, and the JSON the command prints made from them, nothing re-parsed."""
    missing = tmp_path / "missing.json"
    report = run_verify([release["floor"], missing], release["manifest"], AnchorOptions(), None)
    assert isinstance(report, VerifyReport)
    assert all(isinstance(v, Verdict) for v in report.verdicts)
    assert report.status == 2 and not report.green
    assert report.manifest.sha256 == load_manifest(release["manifest"]).sha256
    assert report.manifest.anchor is not None
    assert report.manifest.anchor.summary == "integrity only, not authenticity"
    assert report.verdicts[0].green and not report.verdicts[1].green
    assert (report.verdicts[1].error or "").endswith("missing.json: no such file")
    printed = _run_cli("--json", "--manifest", str(release["manifest"]), str(release["floor"]),
                       str(missing))
    assert json.loads(printed.stdout) == report.as_json()
    unusable = run_verify([release["floor"]], tmp_path / "nope.json", AnchorOptions(), None)
    assert unusable.status == 2 and unusable.manifest.anchor is None
    assert "no such file" in (unusable.manifest.error or "")
    assert [v.codes for v in unusable.verdicts] == [["unreadable"]]


def test_cli_text_says_why_a_file_is_red_under_a_failed_pin(release: dict[str, Path]) -> None:
    """A file red only because the manifest's pin failed names that reason under the file,
    not only in the header (it used to list just ``listed: ...``)."""
    out = _run_cli("--manifest", str(release["manifest"]), "--manifest-sha256", "0" * 64,
                   str(release["floor"]))
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("RED"))
    assert any("manifest-not-pinned" in ln for ln in lines[at + 1:]), out.stdout
