"""Verify certificates offline against a published manifest, anchored by a pin or a signature.

A file is **green** only if

* the manifest is anchored as the auditor asked (:mod:`.anchor`: ``--manifest-sha256``,
  ``--key``/``--trusted-keys``, ``--require-signature``; with none of them the verdict says
  "integrity only, not authenticity");
* its bytes hash (SHA-256) to an entry of the manifest's ``files`` (or it *is* the manifest);
* for a certificate: a supported ``schema_version``, the certificate schema and its result's
  figures schema hold, ``body_sha256`` checks out, every theorem it names is published *for
  its result* with the same term hash and the same printed-text hash (recomputed here from the
  text it shows), and its own audit fields meet the policy (:mod:`.certificate_policy`).

Anything else is **red**, with every reason found; a red verdict carries no "ok" code. Each
reason is ``"<code>: <detail>"``; what each code does to a verdict is the one table of
:mod:`.codes`, which the in-browser verifier of the static site reads too (it reaches the same
verdict with the same reasons).

The command, ``pytools verify`` (:mod:`pytools.publish.cli`), is a thin layer over
:func:`run_verify` and the :class:`VerifyReport` it returns.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .anchor import Anchor, AnchorOptions, check_anchor
from .anchor import normalise_pin as _normalise_pin
from .attest import ENVELOPE_NAME
from .canonical import BODY_HASH_KEY, body_hash, canonical_bytes, sha256_bytes
from .certificate_policy import ALLOWED_AXIOMS, policy_problems
from .codes import OK_CODES, code_of, is_red
from .keys import KeyFileError, load_trusted_keys
from .manifest import (
    DEFAULT_MANIFEST,
    SUPPORTED_SCHEMA_VERSIONS,
    Manifest,
    VerifyError,
    bundle_root,
    load_manifest,
    manifest_problems,
    missing,
    read_limited,
)
from .strictjson import MAX_BYTES, MAX_DEPTH, json_depth, parse_json
from .trust import trust_lines
from .validation import SchemaSet, package_schemas

__all__ = [
    "DEFAULT_MANIFEST", "MAX_BYTES", "MAX_DEPTH", "Manifest", "ManifestCheck", "Verdict",
    "VerifyError", "VerifyReport", "anchor_options", "json_depth", "load_manifest",
    "parse_json", "run_verify", "verify_bytes", "verify_file",
]

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
        return [code_of(reason) for reason in self.reasons]

    @property
    def error(self) -> str | None:
        """Why the file could not be checked at all (an ``unreadable`` reason), else None."""
        return next((r.split(": ", 1)[-1] for r in self.reasons
                     if code_of(r) == "unreadable"), None)

    def as_json(self) -> dict[str, Any]:
        """The same keys for every input, a file that could not be read included (README)."""
        return asdict(self) | {"codes": self.codes, "error": self.error}


def unreadable(path: Path, why: str, anchor: Anchor | None = None) -> Verdict:
    """The red verdict of an input that could not be read (its anchor's reasons kept)."""
    reasons = [*(anchor.reasons if anchor else ()), f"unreadable: {why}"]
    return _verdict(reasons, str(path), "", "unknown")


def _verdict(reasons: list[str], name: str, sha: str, kind: str,
             result: str | None = None) -> Verdict:
    red = is_red(reasons)
    if red:
        reasons = [r for r in reasons if code_of(r) not in OK_CODES]
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
        reasons.append(f"unsupported-schema-version: {_version_said(version)}")
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


def _version_said(version: Any) -> str:
    """What is wrong with a ``schema_version`` this verifier does not know: its JSON text, and
    its JSON type when that is not a string (``2`` is not ``"2"``)."""
    text = json.dumps(version, ensure_ascii=False)
    if version is not None and not isinstance(version, str):
        kind = ("boolean" if isinstance(version, bool) else "number"
                if isinstance(version, (int, float)) else "array"
                if isinstance(version, list) else "object")
        text += f" is a {kind}, not a string"
    known = ", ".join(json.dumps(v) for v in SUPPORTED_SCHEMA_VERSIONS)
    return f"{text} (this verifier knows {known})"


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
        raise VerifyError(f"{p}: {missing(p)}")
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


# --------------------------------------------------------------------------- a whole run


def anchor_options(pin: str | None, keys: tuple[Path, ...], trusted: tuple[Path, ...],
             require: bool) -> AnchorOptions:
    """The anchor the auditor asked for on the command line (the pin normalised, the key
    files read); :class:`VerifyError` naming the bad pin or key file."""
    try:
        normal = _normalise_pin(pin) if pin is not None else None
    except ValueError as exc:
        raise VerifyError(str(exc)) from None
    try:
        keyring = load_trusted_keys([*keys, *trusted]) if keys or trusted else {}
    except KeyFileError as exc:
        raise VerifyError(str(exc)) from None
    return AnchorOptions(normal, keyring, require or bool(keyring))


def bundled_keys(keys: list[Path], manifest_path: Path) -> list[str]:
    """The key files that lie inside the bundle whose manifest is checked."""
    if not keys:
        return []
    base = bundle_root(manifest_path)
    return [str(k) for k in keys if Path(os.path.realpath(k)).is_relative_to(base)]


@dataclass(frozen=True)
class ManifestCheck:
    """The manifest a run verified against: its path and, when it could be used, its SHA-256
    and the anchor the auditor asked for; otherwise why it could not (``error``)."""

    path: str
    sha256: str | None = None
    anchor: Anchor | None = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The ``manifest`` object of ``pytools verify --json`` (README)."""
        if self.anchor is None:
            return {"path": self.path, "error": self.error}
        return {"path": self.path, "sha256": self.sha256, "anchor": {
            "summary": self.anchor.summary, "reasons": list(self.anchor.reasons),
            "codes": list(self.anchor.codes), "signer": self.anchor.signer,
            "envelope": self.anchor.envelope}}


@dataclass(frozen=True)
class VerifyReport:
    """One run: the manifest and its anchor, one verdict per input in order (an input that
    could not be read is a red verdict with its ``error``), and the exit status (0 every input
    green, 1 one red, 2 an input or the manifest unusable)."""

    manifest: ManifestCheck
    verdicts: tuple[Verdict, ...]
    status: int
    #: What the green certificates say they rest on (:func:`trust_report`).
    trust: dict[str, Any] = field(default_factory=dict)

    @property
    def green(self) -> bool:
        """Every input green under a usable manifest."""
        return self.status == 0

    def summary(self, rebuilt: bool | None = None) -> str:
        """The closing line of ``verify``'s text output: how many inputs are green and red
        (an unreadable one counts red), what anchors the manifest, and the rebuild's outcome
        when one ran (``rebuilt``): "19 green, 0 red; manifest pinned"."""
        green = sum(v.green for v in self.verdicts)
        counts = f"{green} green, {len(self.verdicts) - green} red"
        anchor = self.manifest.anchor
        if anchor is None:
            held = f"manifest unusable: {self.manifest.error}"
        elif anchor.red:
            held = "manifest anchor failed"
        else:
            codes = set(anchor.codes)
            parts = (["pinned"] if "manifest-pinned" in codes else []) + (
                [f"signed by {anchor.signer}"] if "manifest-signed" in codes else [])
            held = ("manifest " + " and ".join(parts) if parts
                    else "manifest not pinned: integrity only")
        if rebuilt is not None:
            held += "; rebuild " + ("matched" if rebuilt else "differs")
        return f"{counts}; {held}"

    def as_json(self) -> dict[str, Any]:
        """The report of ``pytools verify --json``, in its key order."""
        return {"manifest": self.manifest.as_json(),
                "verdicts": [v.as_json() for v in self.verdicts], "green": self.green,
                "trust": self.trust}


def run_verify(
    files: list[Path],
    manifest_path: Path,
    options: AnchorOptions,
    signature: Path | None,
) -> VerifyReport:
    """Verify ``files`` (none: the manifest and every file it lists). Never raises for a bad
    input file or manifest: the report carries its error."""
    try:
        manifest = load_manifest(manifest_path)
        anchor = anchor_for(manifest, manifest_path, options, signature)
    except VerifyError as exc:
        return VerifyReport(
            ManifestCheck(str(manifest_path), error=str(exc)),
            tuple(unreadable(f, "not checked: the manifest is unusable") for f in files), 2)
    if not files:
        root = bundle_root(manifest_path)
        files = [manifest_path] + [root / p for p in sorted(manifest.listed_paths())]
        if anchor.envelope_sha256 is not None and anchor.envelope:
            files.append(Path(anchor.envelope))
    status = 0
    verdicts: list[Verdict] = []
    for file in files:
        try:
            verdict = verify_file(file, manifest, anchor)
        except VerifyError as exc:
            verdicts.append(unreadable(file, str(exc), anchor))
            status = 2
            continue
        verdicts.append(verdict)
        if not verdict.green:
            status = max(status, 1)
    return VerifyReport(ManifestCheck(str(manifest_path), manifest.sha256, anchor),
                        tuple(verdicts), status,
                        trust_report([v.as_json() for v in verdicts]))


def trust_report(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """What the green certificates among ``verdicts`` say they rest on (their ``trust``
    field, :mod:`.trust`), with its text; certificates that disagree are said to."""
    fields: dict[bytes, tuple[Any, list[str]]] = {}
    for entry in verdicts:
        if entry["kind"] != "certificate" or not entry["green"]:
            continue
        try:
            field = parse_json(Path(entry["path"]).read_bytes()).get("trust")
        except (OSError, ValueError, AttributeError):
            continue
        fields.setdefault(canonical_bytes(field), (field, []))[1].append(entry["path"])
    paths = sorted(p for _, listed in fields.values() for p in listed)
    if len(fields) != 1:
        lines = ([f"The green certificates state {len(fields)} different trust fields."]
                 if fields else [])
        return {"certificates": paths, "field": None, "lines": lines}
    field = next(iter(fields.values()))[0]
    return {"certificates": paths, "field": field,
            "lines": ["What these green certificates rest on (their trust field):",
                      *trust_lines(field)]}
