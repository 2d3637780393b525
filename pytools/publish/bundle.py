"""The files one certify run publishes, assembled from its certificates: the certificates'
canonical bytes, the figure files, ``certificates/MANIFEST.json``, the signature
``certificates/MANIFEST.intoto.jsonl`` and the README's generated summary; and writing them
(atomically, the manifest then its signature last)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.files import atomic_write_bytes, inside

from . import attest, headlines, trust
from .canonical import canonical_bytes, sha256_bytes, with_body_hash
from .validation import SchemaSet, package_schemas

SCHEMA_VERSION = "2"
CERT_DIR = Path("certificates")
MANIFEST = CERT_DIR / "MANIFEST.json"
ENVELOPE = CERT_DIR / attest.ENVELOPE_NAME
FIGURES_DIR = CERT_DIR / "figures"
README = Path("README.md")
SUMMARY_START = "<!-- pytools.certify:summary -->"
SUMMARY_END = "<!-- /pytools.certify:summary -->"
PIN_START = "<!-- pytools.certify:pin -->"
PIN_END = "<!-- /pytools.certify:pin -->"


@dataclass
class Derived:
    """Everything one certify run would write, as bytes, plus what went wrong."""

    files: dict[str, bytes] = field(default_factory=dict)  # repo-relative path -> bytes
    problems: list[str] = field(default_factory=list)
    rows: list[tuple[str, int, str, str]] = field(default_factory=list)
    #: a committed signature that no longer covers the manifest (removed by write_all)
    stale_envelope: bool = False
    notes: list[str] = field(default_factory=list)
    #: what the files are assembled from (see :func:`assemble`)
    certs: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: dict[str, bytes] = field(default_factory=dict)
    manifest_theorems: list[dict[str, str]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)


def assemble(root: Path, out: Derived, sign_key: Ed25519PrivateKey | None = None,
             schemas: SchemaSet | None = None) -> None:
    """(Re)make ``out.files`` from the certificates and figure files: the certificates'
    bytes, the manifest, the signature and the README's summary."""
    schemas = schemas or package_schemas()
    out.files = dict(out.artifacts)
    for rel, cert in out.certs.items():
        out.files[rel] = canonical_bytes(cert)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "files": [
            {"path": path, "sha256": sha256_bytes(data), "size": len(data)}
            for path, data in sorted(out.files.items())
        ],
        "theorems": sorted(out.manifest_theorems, key=lambda t: (t["name"], t["result"])),
    }
    try:
        schemas.validate(manifest, "manifest")
    except ValueError as exc:
        out.problems.append(f"manifest violates its schema: {exc}")
    out.files[str(MANIFEST)] = canonical_bytes(manifest)
    _signature(root, out, sign_key)
    readme = root / README
    if readme.is_file():
        try:
            block = summary_block(out, out.summary, out.source)
        except headlines.HeadlineError as exc:
            out.problems.append(f"README summary: {exc}")
            return
        text = readme.read_text(encoding="utf-8")
        updated = with_summary(text, block)
        certs = [cert for _, cert in sorted(out.certs.items())]
        if certs and "trust" in certs[0]:
            trusted = trust.with_trust(updated or text, trust.readme_block(certs[0]["trust"]))
            updated = trusted if trusted is not None else updated
        pinned = with_block(updated or text, PIN_START, PIN_END, pin_block(out))
        if updated is not None or pinned is not None:
            out.files[str(README)] = (pinned or updated or text).encode("utf-8")


def with_recorded_oleans(root: Path, derived: Derived, recorded: list[dict[str, str]],
                         sign_key: Ed25519PrivateKey | None = None) -> Derived:
    """A copy of ``derived`` whose certificates state the ``recorded`` .olean hashes instead
    of this build's. Lean's compiled output is not bit-reproducible (two compilations of one
    source gave different .olean bytes, measured), so a check or a rebuild that compiled
    anew compares everything else byte for byte this way, and says so."""
    out = Derived(problems=list(derived.problems), rows=list(derived.rows),
                  notes=list(derived.notes), artifacts=dict(derived.artifacts),
                  manifest_theorems=list(derived.manifest_theorems),
                  summary=derived.summary, source=derived.source)
    for rel, cert in derived.certs.items():
        out.certs[rel] = with_body_hash({**cert, "oleans": recorded})
    assemble(root, out, sign_key)
    return out


def _signature(root: Path, out: Derived, key: Ed25519PrivateKey | None) -> None:
    """Sign the release with ``key``; without one, keep a committed signature that still
    covers exactly this manifest and its files, and mark any other one stale."""
    manifest_bytes = out.files[str(MANIFEST)]
    certs = [cert for _, cert in sorted(out.certs.items())]
    if key is not None:
        if certs:
            statement = attest.statement(str(MANIFEST), manifest_bytes, certs)
            out.files[str(ENVELOPE)] = attest.sign(statement, key)
        return
    committed = root / ENVELOPE
    if not committed.is_file():
        return
    data = committed.read_bytes()
    payload = attest.untrusted_payload(data)
    listed = {e["path"]: e["sha256"] for e in json.loads(manifest_bytes)["files"]}
    if payload is not None and attest.covers(payload, sha256_bytes(manifest_bytes),
                                             listed) is None:
        out.files[str(ENVELOPE)] = data
    else:
        out.stale_envelope = True


def summary_block(derived: Derived, summary: dict[str, Any],
                  source: dict[str, Any] | None = None) -> str:
    """The README's generated summary: one row per result (a link to its page under
    ``docs/results/``, its headline computed from its certificate, its theorems, axioms and
    status), the counts of this run's audit, the manifest's SHA-256 to pin, the signature and
    the source."""
    manifest = derived.files.get(str(MANIFEST))
    anchor = []
    if manifest is not None:
        digest = sha256_bytes(manifest)
        anchor.append(
            f"Manifest SHA-256: `{digest}`. Pin it when you verify: "
            f"`pytools verify --manifest-sha256 {digest}` (take the value from a "
            "copy of this README you trust, not from the bundle you are checking)."
        )
    envelope = derived.files.get(str(ENVELOPE))
    payload = attest.untrusted_payload(envelope) if envelope else None
    if envelope and payload is not None:
        kid = json.loads(envelope)["signatures"][0]["keyid"]
        anchor.append(f"Signed: `{ENVELOPE}` (in-toto statement in a DSSE envelope, Ed25519, "
                      f"key id `{kid}`); check it with the publisher's public key obtained out "
                      "of band: `--key PUB.pem`.")
    else:
        anchor.append("Unsigned: without a pin, a verification proves integrity only, not "
                      "authenticity.")
    if source:
        anchor.append(f"Source: library tree `{source['library_tree']}` (git tree of "
                      f"{', '.join(source['tree_entries'])}), commit "
                      f"`{source['commit'] or 'uncommitted'}`.")
    lines = [
        SUMMARY_START,
        "<!-- generated by `pytools certify`; do not edit by hand -->",
        "| result | headline (computed from its certificate) | theorems | axioms reached "
        "| status |",
        "|---|---|---|---|---|",
    ]
    by_result = {cert.get("result"): cert for cert in derived.certs.values()}
    for rid, count, axioms, status in derived.rows:
        cert = by_result.get(rid)
        line = headlines.headline(cert) if cert is not None else None
        lines.append(f"| [`{rid}`]({headlines.doc_link(rid)}) | {line or '—'} | {count} | "
                     f"{axioms} | {status} |")
    lines += [
        "",
        f"Audited declarations: **{summary['declarations']}** "
        f"({summary['user_facing']} user-facing, {summary['auxiliary']} compiler-generated; "
        f"{summary['user_facing_theorems']} user-facing theorems). "
        f"Findings: **{summary['findings']}**. Allowed axioms: "
        + ", ".join(f"`{a}`" for a in summary["allowed_axioms"])
        + ".",
        "Axioms are those reached through the library's own proof terms: core theorems ship "
        "without proofs in the exported core library, so their axioms are not re-derived "
        f"({summary['trusted_core_theorems']} trusted core constants, listed in each "
        "certificate).",
        "",
        *anchor,
        SUMMARY_END,
    ]
    return "\n".join(lines)


def pin_block(derived: Derived) -> str:
    """README's one-minute path: the verify command with this manifest's SHA-256 as the pin
    (nothing between the markers when there is no manifest)."""
    manifest = derived.files.get(str(MANIFEST))
    lines = [PIN_START]
    if manifest is not None:
        lines += ["```sh", f".venv/bin/pytools verify --manifest-sha256 {sha256_bytes(manifest)}",
                  "```"]
    return "\n".join([*lines, PIN_END])


def with_block(text: str, start_marker: str, end_marker: str, block: str) -> str | None:
    """``text`` with the generated block between the markers replaced by ``block`` (which
    carries the markers), or None if it has no such markers."""
    start, end = text.find(start_marker), text.find(end_marker)
    if start < 0 or end < start:
        return None
    return text[:start] + block + text[end + len(end_marker):]


def with_summary(text: str, block: str) -> str | None:
    """``text`` with the generated summary replaced, or None if it has no markers."""
    return with_block(text, SUMMARY_START, SUMMARY_END, block)


def written_before(root: Path) -> dict[str, str]:
    """The figure files the manifest now at ``root`` lists (path -> SHA-256): the ones an
    earlier certify run wrote under ``certificates/figures/``, each safely inside ``root``;
    empty when there is no readable manifest."""
    try:
        data = json.loads((root / MANIFEST).read_bytes())
        entries = data["files"]
        listed = {e["path"]: e["sha256"] for e in entries}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    prefix = FIGURES_DIR.as_posix() + "/"
    return {rel: sha for rel, sha in listed.items()
            if isinstance(rel, str) and isinstance(sha, str) and rel.startswith(prefix)
            and inside(root, rel)}


def write_all(root: Path, derived: Derived) -> None:
    """Write every file atomically, then the manifest, then its signature; drop the figure
    files the previous manifest listed that are no longer made (only those, and only while
    they hold the bytes it listed: a file the tool did not write, or one edited since, is
    left and named in ``derived.notes``) and a signature that no longer covers the
    manifest."""
    previous = written_before(root)
    last = (str(MANIFEST), str(ENVELOPE))
    for rel, data in sorted(derived.files.items()):
        if rel not in last:
            atomic_write_bytes(root / rel, data)
    for rel, sha in sorted(previous.items()):
        old = root / rel
        if rel in derived.files or not old.is_file() or old.is_symlink():
            continue
        if sha256_bytes(old.read_bytes()) == sha:
            old.unlink()
        else:
            derived.notes.append(f"left {rel}: no longer published, but edited since the "
                                 "last certify run; remove it yourself if it is not needed")
    for rel in last:
        if rel in derived.files:
            atomic_write_bytes(root / rel, derived.files[rel])
    if derived.stale_envelope and str(ENVELOPE) not in derived.files:
        (root / ENVELOPE).unlink(missing_ok=True)
        derived.notes.append(f"removed {ENVELOPE}: it signed the previous manifest; re-sign "
                             "with --sign-key")
