"""Verify certificates offline against a published manifest, anchored by a pin or a signature.

A file is **green** only if

* the manifest is anchored as the auditor asked (:mod:`.anchor`: ``--manifest-sha256``,
  ``--key``/``--trusted-keys``, ``--require-signature``; with none of them the verdict says
  "integrity only, not authenticity");
* its bytes hash (SHA-256) to an entry of the manifest's ``files`` (or it *is* the manifest);
* for a certificate: a supported ``schema_version``, the certificate schema and its result's
  figures schema hold, ``body_sha256`` checks out, every theorem it names is published *for
  its result* with the same term hash and the same printed-text hash (recomputed here from the
  text it shows), and its own audit fields meet the policy (:mod:`.policy`).

Anything else is **red**, with every reason found; a red verdict carries no "ok" code. Each
reason is ``"<code>: <detail>"``; the codes (:data:`REASON_CODES`) are shared with the
in-browser verifier of the static site, which reaches the same verdict with the same reasons.

CLI: ``python -m pytools.verify [FILE...] [--manifest PATH] [--manifest-sha256 HEX]
[--key PUB]... [--trusted-keys FILE]... [--require-signature] [--json] [--rebuild]``.
Without FILE it checks the manifest and every file it lists. Exit 0 when every file is
green, 1 when any is red, 2 on a usage or I/O error (unreadable file, unusable manifest or
key).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click

from pytools.paths import project_root

from .anchor import ANCHOR_NOTES, ANCHOR_OK, ANCHOR_RED, Anchor, AnchorOptions, check_anchor
from .anchor import normalise_pin as _normalise_pin
from .attest import ENVELOPE_NAME
from .canonical import BODY_HASH_KEY, body_hash, canonical_bytes, sha256_bytes
from .keys import KeyFileError, load_trusted_keys
from .manifest import (
    DEFAULT_MANIFEST,
    SUPPORTED_SCHEMA_VERSIONS,
    Manifest,
    VerifyError,
    bundle_root,
    load_manifest,
    manifest_problems,
    read_limited,
)
from .policy import ALLOWED_AXIOMS, policy_problems
from .strictjson import MAX_BYTES, MAX_DEPTH, json_depth, parse_json
from .validation import SchemaSet, package_schemas

__all__ = [
    "DEFAULT_MANIFEST", "MAX_BYTES", "MAX_DEPTH", "REASON_CODES", "RED_CODES", "Manifest",
    "Verdict", "VerifyError", "json_depth", "load_manifest", "parse_json", "verify_bytes",
    "verify_file",
]

#: Every reason code, in the order reasons are reported (anchor codes first).
REASON_CODES = (
    "manifest-pinned",
    "manifest-not-pinned",
    "signature-missing",
    "signature-invalid",
    "signature-untrusted",
    "signature-bad",
    "manifest-not-signed",
    "signature-unverified",
    "manifest-signed",
    "signature-unchecked",
    "integrity-only",
    "too-large",
    "is-manifest",
    "is-signature",
    "listed",
    "unknown-hash",
    "malformed-json",
    "not-json",
    "not-canonical",
    "not-an-object",
    "not-a-certificate",
    "unsupported-schema-version",
    "schema-violation",
    "body-hash-mismatch",
    "unknown-theorem",
    "theorem-wrong-result",
    "statement-hash-mismatch",
    "statement-text-mismatch",
    "theorems-ok",
    "policy-violation",
    "policy-ok",
)

#: Codes that make a verdict red.
RED_CODES = frozenset(
    {
        *ANCHOR_RED,
        "too-large",
        "unknown-hash",
        "malformed-json",
        "not-an-object",
        "not-a-certificate",
        "unsupported-schema-version",
        "schema-violation",
        "body-hash-mismatch",
        "unknown-theorem",
        "theorem-wrong-result",
        "statement-hash-mismatch",
        "statement-text-mismatch",
        "policy-violation",
    }
)

#: Codes that say a check held: on a red verdict they are left out.
OK_CODES = frozenset({*ANCHOR_OK, "theorems-ok", "policy-ok"})

#: Informational facts and hints, kept on any verdict.
NOTE_CODES = frozenset({*ANCHOR_NOTES, "is-manifest", "is-signature", "listed", "not-json",
                        "not-canonical"})

#: At most this many schema violations are listed per file.
MAX_SCHEMA_REASONS = 5


@dataclass(frozen=True)
class Verdict:
    """The outcome for one file: green or red, and why (``"<code>: <detail>"`` lines)."""

    green: bool
    reasons: list[str]
    path: str = ""
    sha256: str = ""
    kind: str = "unknown"  # certificate | manifest | signature | published-file | unknown
    result: str | None = None

    @property
    def codes(self) -> list[str]:
        """The reason codes, without details."""
        return [reason.split(":", 1)[0] for reason in self.reasons]

    def as_json(self) -> dict[str, Any]:
        return asdict(self) | {"codes": self.codes}


def reasons_red(reasons: list[str]) -> bool:
    """True if any reason has a red code."""
    return any(reason.split(":", 1)[0] in RED_CODES for reason in reasons)


def _verdict(reasons: list[str], name: str, sha: str, kind: str,
             result: str | None = None) -> Verdict:
    red = reasons_red(reasons)
    if red:
        reasons = [r for r in reasons if r.split(":", 1)[0] not in OK_CODES]
    return Verdict(not red, reasons, name, sha, kind, result)


def _kind(obj: dict[str, Any]) -> str:
    if "files" in obj and "result" not in obj:
        return "manifest"
    if "result" in obj or BODY_HASH_KEY in obj:
        return "certificate"
    return "other"


def _claims(obj: dict[str, Any], kind: str) -> list[tuple[str, str | None, str | None]]:
    """(name, term hash, text hash) of every theorem an object names in ``theorems``; for a
    certificate the text hash is recomputed from the statement it shows."""
    out: list[tuple[str, str | None, str | None]] = []
    items = obj.get("theorems")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            out.append((item, None, None))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            term = item.get("statement_sha256")
            if kind == "certificate":
                text = item.get("statement")
                text_hash = sha256_bytes(text.encode("utf-8")) if isinstance(text, str) else None
            else:
                text_hash = item.get("statement_text_sha256")
            out.append((item["name"], term if isinstance(term, str) else None,
                        text_hash if isinstance(text_hash, str) else None))
    return out


def _theorem_reasons(obj: dict[str, Any], kind: str, manifest: Manifest) -> list[str]:
    result = obj.get("result") if kind == "certificate" else None
    reasons: list[str] = []
    claims = _claims(obj, kind)
    for name, term, text in claims:
        published = manifest.theorems.get(name)
        if published is None:
            reasons.append(f"unknown-theorem: {name} is not a published, audited theorem")
            continue
        if isinstance(result, str):
            entries = [p for p in published if p.result == result]
            if not entries:
                owners = ", ".join(sorted({p.result for p in published}))
                reasons.append(f"theorem-wrong-result: {name} is published for {owners}, "
                               f"not for {result}")
                continue
        else:
            entries = list(published)
        if term is not None and all(p.statement_sha256 != term for p in entries):
            said = " or ".join(sorted({p.statement_sha256 for p in entries}))
            reasons.append(f"statement-hash-mismatch: {name}: file says {term}, "
                           f"manifest says {said}")
        elif text is not None and all(p.statement_text_sha256 != text for p in entries):
            said = " or ".join(sorted({p.statement_text_sha256 for p in entries}))
            reasons.append(f"statement-text-mismatch: {name}: the statement shown hashes to "
                           f"{text}, manifest says {said}")
    if claims and not reasons:
        what = f" for {result}" if isinstance(result, str) else ""
        reasons.append(f"theorems-ok: {len(claims)} theorem(s) published{what} with the same "
                       "statement (term and text)")
    return reasons


def _schema_reasons(errors: list[str]) -> list[str]:
    reasons = [f"schema-violation: {e}" for e in errors[:MAX_SCHEMA_REASONS]]
    if len(errors) > MAX_SCHEMA_REASONS:
        reasons.append(f"schema-violation: and {len(errors) - MAX_SCHEMA_REASONS} more")
    return reasons


def _canonical_hint(obj: Any, data: bytes, manifest: Manifest) -> list[str]:
    """A hint for valid JSON whose bytes are not canonical (so its hash cannot match)."""
    canonical = canonical_bytes(obj)
    if canonical == data:
        return []
    hint = ("not-canonical: valid JSON, but not in canonical form (sorted keys, two-space "
            "indent, UTF-8, one final newline), so its SHA-256 differs from the published "
            "file's")
    listed = manifest.files.get(sha256_bytes(canonical))
    if listed:
        hint += f"; in canonical form it is published as {', '.join(listed)}"
    return [hint]


def verify_bytes(
    data: bytes,
    manifest: Manifest,
    name: str = "<bytes>",
    anchor: Anchor | None = None,
    schemas: SchemaSet | None = None,
) -> Verdict:
    """The verdict on the bytes of one file (the logic the in-browser verifier mirrors)."""
    schemas = schemas or package_schemas()
    reasons: list[str] = list(anchor.reasons) if anchor else []
    if len(data) > MAX_BYTES:
        reasons.append(f"too-large: {len(data)} bytes (limit {MAX_BYTES})")
        return _verdict(reasons, name, "", "unknown")
    sha = sha256_bytes(data)
    if sha == manifest.sha256:
        reasons.append(f"is-manifest: identical to the manifest used for verification "
                       f"({manifest.path})")
        return _verdict(reasons, name, sha, "manifest")
    if anchor is not None and sha == anchor.envelope_sha256:
        reasons.append(f"is-signature: the signature envelope of this manifest "
                       f"({anchor.envelope}); not listed, since it signs the manifest")
        return _verdict(reasons, name, sha, "signature")
    listed = manifest.files.get(sha)
    if listed:
        reasons.append(f"listed: SHA-256 {sha} is published as {', '.join(listed)}")
    else:
        reasons.append(f"unknown-hash: SHA-256 {sha} is not in the manifest (tampered or not ours)")
    try:
        obj = parse_json(data)
    except ValueError as exc:
        if listed:
            reasons.append("not-json: a published file that is not JSON; it names no theorems")
            return _verdict(reasons, name, sha, "published-file")
        reasons.append(f"malformed-json: {exc}")
        return _verdict(reasons, name, sha, "unknown")
    if not listed:
        reasons += _canonical_hint(obj, data, manifest)
    if not isinstance(obj, dict):
        if not listed:
            reasons.append(f"not-an-object: top level is a JSON {_type_name(obj)}")
        return _verdict(reasons, name, sha, "published-file" if listed else "unknown")
    kind = _kind(obj)
    result = obj.get("result") if isinstance(obj.get("result"), str) else None
    if kind == "other":
        if not listed:
            reasons.append("not-a-certificate: a JSON object that is neither a certificate "
                           "(no result) nor a manifest (no files)")
            return _verdict(reasons, name, sha, "unknown")
        reasons += _theorem_reasons(obj, kind, manifest)
        return _verdict(reasons, name, sha, "published-file")
    version = obj.get("schema_version")
    supported = version in SUPPORTED_SCHEMA_VERSIONS
    if not supported:
        reasons.append(
            f"unsupported-schema-version: {json.dumps(version, ensure_ascii=False)} "
            f"(this verifier knows {', '.join(SUPPORTED_SCHEMA_VERSIONS)})"
        )
    elif kind == "certificate":
        reasons += _schema_reasons(schemas.certificate_errors(obj))
    else:
        reasons += _schema_reasons(manifest_problems(obj, schemas))
    if kind == "certificate":
        stated = obj.get(BODY_HASH_KEY)
        actual = body_hash(obj)
        if stated != actual:
            reasons.append(
                f"body-hash-mismatch: body_sha256 says {stated}, the body hashes to {actual}"
            )
    reasons += _theorem_reasons(obj, kind, manifest)
    if kind == "certificate" and supported:
        problems = policy_problems(obj)
        reasons += [f"policy-violation: {p}" for p in problems]
        if not problems:
            reasons.append("policy-ok: no finding, axioms within "
                           f"{', '.join(ALLOWED_AXIOMS)}, required checks passed")
    return _verdict(reasons, name, sha, kind, result)


def _type_name(obj: Any) -> str:
    return {list: "list", str: "str", int: "int", float: "float", bool: "bool"}.get(
        type(obj), "NoneType"
    )


def verify_file(
    path: str | Path,
    manifest: Manifest,
    anchor: Anchor | None = None,
    schemas: SchemaSet | None = None,
) -> Verdict:
    """The verdict on one file. :class:`VerifyError` if it is not a readable file."""
    p = Path(path)
    if not p.exists():
        raise VerifyError(f"{p}: no such file")
    if not p.is_file():
        raise VerifyError(f"{p}: not a file")
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            reasons = list(anchor.reasons) if anchor else []
            reasons.append(f"too-large: {size} bytes (limit {MAX_BYTES})")
            return _verdict(reasons, str(p), "", "unknown")
        data = p.read_bytes()
    except OSError as exc:
        raise VerifyError(f"{p}: cannot read ({exc.strerror})") from None
    return verify_bytes(data, manifest, str(p), anchor, schemas)


# --------------------------------------------------------------------------- the anchor


def envelope_path(manifest_path: Path, given: Path | None) -> Path:
    """Where the signature envelope of a manifest is: ``--signature``, else next to it."""
    return given if given is not None else manifest_path.parent / ENVELOPE_NAME


def anchor_for(
    manifest: Manifest, manifest_path: Path, options: AnchorOptions, signature: Path | None
) -> Anchor:
    """Read the envelope (if any) and check the anchor the auditor asked for."""
    env_path = envelope_path(manifest_path, signature)
    envelope = read_limited(env_path, "signature") if env_path.is_file() else None
    if signature is not None and envelope is None:
        raise VerifyError(f"signature {signature}: no such file")
    return check_anchor(manifest, options, envelope, str(env_path))


# --------------------------------------------------------------------------- the CLI


def _options(pin: str | None, keys: tuple[Path, ...], trusted: tuple[Path, ...],
             require: bool) -> AnchorOptions:
    try:
        normal = _normalise_pin(pin) if pin is not None else None
    except ValueError as exc:
        raise VerifyError(str(exc)) from None
    try:
        keyring = load_trusted_keys([*keys, *trusted]) if keys or trusted else {}
    except KeyFileError as exc:
        raise VerifyError(str(exc)) from None
    return AnchorOptions(normal, keyring, require or bool(keyring))


def _print_anchor(manifest: dict[str, Any]) -> None:
    click.echo(f"manifest {manifest['path']}  SHA-256 {manifest['sha256']}")
    click.echo(f"  anchor: {manifest['anchor']['summary']}")
    for reason in manifest["anchor"]["reasons"]:
        click.echo(f"  - {reason}")


def _print_verdict(verdict: Verdict) -> None:
    label = "GREEN" if verdict.green else "RED"
    what = verdict.kind + (f" {verdict.result}" if verdict.result else "")
    click.echo(f"{label}  {verdict.path}  ({what})")
    anchor_codes = {*ANCHOR_RED, *ANCHOR_OK, *ANCHOR_NOTES}
    for reason in verdict.reasons:
        if reason.split(":", 1)[0] not in anchor_codes:
            click.echo(f"  - {reason}")


def bundled_keys(keys: list[Path], manifest_path: Path) -> list[str]:
    """The key files that lie inside the bundle whose manifest is checked."""
    base = bundle_root(manifest_path)
    return [str(k) for k in keys if k.resolve().is_relative_to(base)]


def run_verify(
    files: list[Path],
    manifest_path: Path,
    options: AnchorOptions,
    signature: Path | None,
) -> tuple[dict[str, Any], int]:
    """Verify ``files`` (none: the manifest and every file it lists); the JSON report and
    the exit status. Never raises for a bad input file: it is listed with its error."""
    report: dict[str, Any] = {"manifest": {"path": str(manifest_path)}, "verdicts": []}
    try:
        manifest = load_manifest(manifest_path)
        anchor = anchor_for(manifest, manifest_path, options, signature)
    except VerifyError as exc:
        report["manifest"]["error"] = str(exc)
        report["verdicts"] = [{"path": str(f), "green": False,
                               "error": "not checked: the manifest is unusable"} for f in files]
        report["green"] = False
        return report, 2
    report["manifest"].update({
        "sha256": manifest.sha256,
        "anchor": {"summary": anchor.summary, "reasons": list(anchor.reasons),
                   "codes": list(anchor.codes), "signer": anchor.signer,
                   "envelope": anchor.envelope},
    })
    if not files:
        root = bundle_root(manifest_path)
        files = [manifest_path] + [root / p for p in sorted(manifest.listed_paths())]
        if anchor.envelope_sha256 is not None and anchor.envelope:
            files.append(Path(anchor.envelope))
    status = 0
    for file in files:
        try:
            verdict = verify_file(file, manifest, anchor)
        except VerifyError as exc:
            report["verdicts"].append({"path": str(file), "green": False, "error": str(exc)})
            status = 2
            continue
        report["verdicts"].append(verdict.as_json())
        if not verdict.green:
            status = max(status, 1)
    report["green"] = status == 0
    return report, status


@click.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--manifest", "manifest_path", type=click.Path(path_type=Path), default=None,
              help="Manifest to verify against (default: certificates/MANIFEST.json of the "
              "project).")
@click.option("--manifest-sha256", "pin", default=None, metavar="HEX",
              help="Pin: green only against the manifest with exactly this SHA-256 (get it "
              "out of band).")
@click.option("--key", "keys", multiple=True, type=click.Path(path_type=Path),
              help="A trusted Ed25519 public key (PEM) of YOUR choosing; requires a valid "
              "signature by it. Repeatable.")
@click.option("--trusted-keys", "trusted", multiple=True, type=click.Path(path_type=Path),
              help="A file of trusted PEM public keys (one or more). Repeatable.")
@click.option("--require-signature", is_flag=True,
              help="Red unless the manifest carries a signature by a trusted key.")
@click.option("--signature", type=click.Path(path_type=Path), default=None,
              help=f"The DSSE envelope (default: {ENVELOPE_NAME} next to the manifest).")
@click.option("--rebuild", is_flag=True,
              help="Also rebuild the certificates from the sources they record with this "
              "machine's Lean, and compare bytes (a full build: minutes to hours).")
@click.option("--lean", default=None, help="For --rebuild: a native `lean`, or `wasm`.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON report: the manifest, its anchor, every input's verdict.")
def main(files: tuple[Path, ...], manifest_path: Path | None, pin: str | None,
         keys: tuple[Path, ...], trusted: tuple[Path, ...], require_signature: bool,
         signature: Path | None, rebuild: bool, lean: str | None, as_json: bool) -> None:
    """Verify certificate FILEs offline against a published, anchored manifest.

    Without FILE: the manifest and every file it lists. Exit 0 if every file is green, 1 if
    any is red, 2 on a usage or I/O error.
    """
    path = manifest_path or project_root() / DEFAULT_MANIFEST
    try:
        options = _options(pin, keys, trusted, require_signature)
    except VerifyError as exc:
        if as_json:
            click.echo(json.dumps({"manifest": {"path": str(path)}, "error": str(exc),
                                   "verdicts": [], "green": False}, indent=2))
        else:
            click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    report, status = run_verify(list(files), path, options, signature)
    inside = bundled_keys([*keys, *trusted], path)
    if inside:
        report["warnings"] = [f"{k}: this key lies inside the bundle being checked; a key "
                              "that travels with the bundle proves nothing — use one you "
                              "obtained out of band" for k in inside]
        for line in report["warnings"]:
            click.echo(f"warning: {line}", err=True)
    if rebuild and "error" not in report["manifest"]:
        from .rebuild import rebuild_report

        outcome = rebuild_report(path, project_root(), lean,
                                 say=lambda line: click.echo(line, err=True))
        report["rebuild"] = outcome
        if not outcome["green"]:
            status = max(status, 1)
        report["green"] = report["green"] and outcome["green"]
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        sys.exit(status)
    if "error" in report["manifest"]:
        click.echo(f"error: {report['manifest']['error']}", err=True)
        sys.exit(2)
    _print_anchor(report["manifest"])
    for entry in report["verdicts"]:
        if "error" in entry:
            click.echo(f"error: {entry['error']}", err=True)
        else:
            _print_verdict(Verdict(entry["green"], entry["reasons"], entry["path"],
                                   entry["sha256"], entry["kind"], entry["result"]))
    if "rebuild" in report:
        outcome = report["rebuild"]
        click.echo(f"{'GREEN' if outcome['green'] else 'RED'}  rebuild  "
                   f"({len(outcome['compared'])} files compared)")
        for line in outcome["problems"] + outcome["notes"]:
            click.echo(f"  - {line}")
    sys.exit(status)


if __name__ == "__main__":
    main()
