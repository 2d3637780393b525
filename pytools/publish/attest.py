"""A signed statement over a release: an in-toto Statement v1 in a DSSE envelope, Ed25519.

* **Statement** (in-toto Statement v1): ``subject`` lists the manifest and every file it
  lists, each by path and SHA-256; ``predicateType`` is :data:`PREDICATE_TYPE`, whose
  ``predicate`` names the manifest (path and SHA-256), the published results, the audit policy
  (:mod:`.certificate_policy`), the library's source tree and commit (:mod:`.provenance`) and
  the Lean toolchain. Its bytes are its canonical JSON.
* **Envelope** (DSSE): ``{"payload": base64(statement bytes), "payloadType":
  "application/vnd.in-toto+json", "signatures": [{"keyid", "sig"}]}``; each ``sig`` is Ed25519
  over ``PAE(payloadType, payload)`` = ``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``
  (lengths in ASCII decimal, of the UTF-8 bytes). Written as one JSON line in
  ``certificates/MANIFEST.intoto.jsonl`` (an in-toto bundle of one envelope), next to the
  manifest it signs and not listed in it.

Checking (:func:`check_envelope`) follows DSSE: parse the envelope, verify a signature over
PAE with a key the *auditor* trusts (the key id is only a hint), and only then decode the
payload; then check the statement's schema and that it covers the manifest at hand. Ed25519
signatures are deterministic, so the same key signs the same statement to the same bytes.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .canonical import canonical_bytes, sha256_bytes
from .certificate_policy import policy
from .keys import TrustedKey, b64, keyid, unb64
from .strictjson import parse_json
from .validation import SchemaSet, package_schemas

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
PREDICATE_TYPE = "https://proofs.invalid/attestation/certification/v1"

#: The envelope's file name, in the manifest's folder.
ENVELOPE_NAME = "MANIFEST.intoto.jsonl"


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 Pre-Authentication Encoding of a payload and its type."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def statement(
    manifest_path: str,
    manifest_bytes: bytes,
    certificates: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The in-toto statement over a release (see the module doc).

    ``certificates``: the parsed certificates the manifest lists; they agree on source and
    toolchain (certify makes them in one run).
    """
    manifest = json.loads(manifest_bytes)
    subjects = [{"name": manifest_path, "digest": {"sha256": sha256_bytes(manifest_bytes)}}]
    subjects += [{"name": e["path"], "digest": {"sha256": e["sha256"]}}
                 for e in manifest["files"]]
    first = certificates[0]
    return {
        "_type": STATEMENT_TYPE,
        "subject": sorted(subjects, key=lambda s: s["name"]),
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "manifest": {"path": manifest_path, "sha256": sha256_bytes(manifest_bytes)},
            "results": sorted({str(c["result"]) for c in certificates}),
            "policy": policy(),
            "source": dict(first["source"]),
            "toolchain": dict(first["toolchain"]),
        },
    }


def sign(statement_obj: Mapping[str, Any], key: Ed25519PrivateKey) -> bytes:
    """The envelope file's bytes: one JSON line (sorted keys, no spaces) and a newline."""
    payload = canonical_bytes(statement_obj)
    signature = key.sign(pae(PAYLOAD_TYPE, payload))
    envelope = {
        "payload": b64(payload),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [{"keyid": keyid(key.public_key()), "sig": b64(signature)}],
    }
    return (json.dumps(envelope, sort_keys=True, separators=(",", ":")) + "\n").encode("ascii")


@dataclass(frozen=True)
class EnvelopeCheck:
    """What checking an envelope found: the statement (when a trusted signature verified),
    the signer, the key ids it claims, and the problem as ``"<code>: <detail>"``."""

    statement: dict[str, Any] | None
    signer: str | None
    claimed: tuple[str, ...]
    problem: str | None


def read_envelope(data: bytes, schemas: SchemaSet | None = None) -> dict[str, Any]:
    """The one envelope of an ``.intoto.jsonl`` file; ``ValueError`` says what is wrong."""
    schemas = schemas or package_schemas()
    lines = [line for line in data.split(b"\n") if line.strip()]
    if len(lines) != 1:
        raise ValueError(f"expected one envelope (one JSON line), found {len(lines)}")
    envelope = parse_json(lines[0])
    errors = schemas.errors(envelope, "envelope")
    if errors:
        raise ValueError(f"not a DSSE envelope: {errors[0]}")
    return envelope


def untrusted_payload(data: bytes) -> dict[str, Any] | None:
    """The statement an envelope carries, WITHOUT checking any signature (for staleness
    checks and display only, never for trust); None when unreadable."""
    try:
        envelope = read_envelope(data)
        obj = parse_json(unb64(envelope["payload"]))
    except (ValueError, binascii.Error):
        return None
    return obj if isinstance(obj, dict) else None


def check_envelope(
    data: bytes, trusted: Mapping[str, TrustedKey], schemas: SchemaSet | None = None
) -> EnvelopeCheck:
    """Check an envelope against the auditor's trusted keys (see the module doc)."""
    schemas = schemas or package_schemas()
    try:
        envelope = read_envelope(data, schemas)
        payload = unb64(envelope["payload"])
        signatures = [(s.get("keyid", ""), unb64(s["sig"])) for s in envelope["signatures"]]
    except (ValueError, binascii.Error) as exc:
        return EnvelopeCheck(None, None, (), f"signature-invalid: {exc}")
    claimed = tuple(kid for kid, _ in signatures)
    message = pae(envelope["payloadType"], payload)
    signer = None
    tried_matching = False
    for kid, sig in signatures:
        # the key id is a hint: try the key it names first, then every other trusted key
        order = sorted(trusted.values(), key=lambda k: (k.keyid != kid, k.keyid))
        tried_matching = tried_matching or kid in trusted
        signer = next((k.keyid for k in order if k.verify(sig, message)), None)
        if signer:
            break
    if signer is None:
        named = ", ".join(k[:16] + "…" if k else "(no key id)" for k in claimed)
        if tried_matching:
            return EnvelopeCheck(None, None, claimed, "signature-bad: the signature by "
                                 f"{named} does not verify: envelope or payload altered")
        return EnvelopeCheck(None, None, claimed, f"signature-untrusted: signed by key {named}, "
                             "which is not a trusted key")
    try:
        obj = parse_json(payload)
    except ValueError as exc:
        return EnvelopeCheck(None, signer, claimed, f"signature-invalid: payload: {exc}")
    errors = schemas.errors(obj, "statement")
    if errors:
        return EnvelopeCheck(None, signer, claimed,
                             f"signature-invalid: statement: {errors[0]}")
    return EnvelopeCheck(obj, signer, claimed, None)


def covers(statement_obj: Mapping[str, Any], manifest_sha256: str,
           listed: Mapping[str, str]) -> str | None:
    """None if the statement signs exactly this manifest and its files, else why not."""
    signed = statement_obj["predicate"]["manifest"]
    if signed["sha256"] != manifest_sha256:
        return (f"manifest-not-signed: the signed statement covers manifest {signed['sha256']}, "
                f"not this one ({manifest_sha256})")
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement_obj["subject"]}
    expected = {**listed, signed["path"]: manifest_sha256}
    if subjects != expected:
        differ = sorted(set(subjects.items()) ^ set(expected.items()))
        return (f"manifest-not-signed: the statement's subjects differ from the manifest's "
                f"files ({differ[0][0]})")
    return None
