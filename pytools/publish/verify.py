"""Verify certificates offline against a published manifest.

A file is **green** only if

* its bytes hash (SHA-256) to an entry of the manifest's ``files`` (or it *is* the manifest
  used for verification), and
* every theorem it names is a published, audited theorem of the manifest with the same
  statement hash, and, for a certificate, it has a supported ``schema_version``, satisfies
  the certificate JSON Schema and its ``body_sha256`` checks out.

Anything else is **red**, with every reason found. Each reason is ``"<code>: <detail>"``;
the codes (:data:`REASON_CODES`) are shared with the in-browser verifier of the static site,
which must reach the same verdict and the same codes on every file.

CLI: ``python -m pytools.verify FILE... [--manifest PATH] [--json]``. Exit 0 when every file
is green, 1 when any is red, 2 on a usage or I/O error (not a file, unreadable manifest).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import click

from pytools.paths import project_root
from pytools.publish.canonical import (
    BODY_HASH_KEY,
    CanonicalError,
    body_hash,
    canonical_bytes,
    schema_errors,
    sha256_bytes,
)

#: Largest file the verifier reads (certificates are a few KiB).
MAX_BYTES = 4 * 1024 * 1024

#: The certificate and manifest format versions this verifier understands.
SUPPORTED_SCHEMA_VERSIONS = ("1",)

#: Default manifest, relative to the project root.
DEFAULT_MANIFEST = Path("certificates/MANIFEST.json")

#: Every reason code, in the order reasons are reported. ``green`` verdicts carry only the
#: informational codes (``listed``, ``is-manifest``, ``theorems-ok``, ``not-json``).
REASON_CODES = (
    "too-large",
    "is-manifest",
    "listed",
    "unknown-hash",
    "malformed-json",
    "not-json",
    "not-an-object",
    "unsupported-schema-version",
    "schema-violation",
    "body-hash-mismatch",
    "unknown-theorem",
    "statement-hash-mismatch",
    "theorems-ok",
)

#: Codes that make a verdict red.
RED_CODES = frozenset(
    {
        "too-large",
        "unknown-hash",
        "malformed-json",
        "not-an-object",
        "unsupported-schema-version",
        "schema-violation",
        "body-hash-mismatch",
        "unknown-theorem",
        "statement-hash-mismatch",
    }
)

#: Deepest nesting of arrays and objects the verifier accepts (the in-page verifier too).
MAX_DEPTH = 500

#: At most this many schema violations are listed per file.
MAX_SCHEMA_REASONS = 5


class VerifyError(Exception):
    """A usage or I/O problem (exit 2): not a file, unreadable, bad manifest."""


@dataclass(frozen=True)
class Verdict:
    """The outcome for one file: green or red, and why (``"<code>: <detail>"`` lines)."""

    green: bool
    reasons: list[str]
    path: str = ""
    sha256: str = ""
    kind: str = "unknown"  # certificate | manifest | published-file | unknown
    result: str | None = None

    @property
    def codes(self) -> list[str]:
        """The reason codes, without details."""
        return [reason.split(":", 1)[0] for reason in self.reasons]


@dataclass(frozen=True)
class Manifest:
    """A loaded, schema-checked manifest."""

    path: str
    sha256: str
    size: int
    files: dict[str, tuple[str, ...]]  # sha256 -> listed paths
    theorems: dict[str, tuple[str, ...]]  # theorem name -> statement hashes published
    data: dict[str, Any] = field(repr=False)

    def to_browser(self) -> dict[str, Any]:
        """What the in-browser verifier needs: hashes, paths and theorem hashes."""
        return {
            "sha256": self.sha256,
            "files": {sha: list(paths) for sha, paths in sorted(self.files.items())},
            "theorems": {name: list(h) for name, h in sorted(self.theorems.items())},
        }


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"duplicate key {key!r}")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(data: bytes) -> Any:
    """Parse strict JSON from UTF-8 bytes: no NaN/Infinity, no duplicate keys, no BOM.

    Raises ``ValueError`` with a message saying what and where.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte {exc.start})") from None
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    depth = json_depth(obj)
    if depth > MAX_DEPTH:
        raise ValueError(f"nested {depth} levels deep (limit {MAX_DEPTH})")
    try:
        canonical_bytes(obj)
    except CanonicalError as exc:
        raise ValueError(str(exc)) from None
    return obj


def json_depth(obj: Any) -> int:
    """Deepest nesting of arrays and objects in a parsed JSON value (``[]`` is 1), iteratively."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def load_manifest(path: str | Path) -> Manifest:
    """Read and check a manifest; :class:`VerifyError` names the file and the problem."""
    p = Path(path)
    if not p.is_file():
        raise VerifyError(f"manifest {p}: not a file")
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise VerifyError(f"manifest {p}: too large ({size} bytes, limit {MAX_BYTES})")
        data = p.read_bytes()
    except OSError as exc:
        raise VerifyError(f"manifest {p}: cannot read ({exc.strerror})") from None
    try:
        obj = parse_json(data)
    except (ValueError, RecursionError) as exc:
        raise VerifyError(f"manifest {p}: malformed JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise VerifyError(f"manifest {p}: not a JSON object")
    if obj.get("schema_version") not in SUPPORTED_SCHEMA_VERSIONS:
        raise VerifyError(
            f"manifest {p}: unsupported schema_version {obj.get('schema_version')!r} "
            f"(supported: {', '.join(SUPPORTED_SCHEMA_VERSIONS)})"
        )
    errors = schema_errors(obj, "manifest")
    if errors:
        raise VerifyError(f"manifest {p}: schema violation: {errors[0]}")
    files: dict[str, list[str]] = {}
    for entry in obj["files"]:
        files.setdefault(entry["sha256"], []).append(entry["path"])
    theorems: dict[str, list[str]] = {}
    for entry in obj["theorems"]:
        hashes = theorems.setdefault(entry["name"], [])
        if entry["statement_sha256"] not in hashes:
            hashes.append(entry["statement_sha256"])
    return Manifest(
        path=str(p),
        sha256=sha256_bytes(data),
        size=len(data),
        files={k: tuple(v) for k, v in files.items()},
        theorems={k: tuple(v) for k, v in theorems.items()},
        data=obj,
    )


def _kind(obj: dict[str, Any]) -> str:
    if "files" in obj and "result" not in obj:
        return "manifest"
    if "result" in obj or BODY_HASH_KEY in obj:
        return "certificate"
    return "published-file"


def _named_theorems(obj: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(name, statement hash or None) for every theorem an object names in ``theorems``."""
    out: list[tuple[str, str | None]] = []
    items = obj.get("theorems")
    if not isinstance(items, list):
        return out
    for item in items:
        if isinstance(item, str):
            out.append((item, None))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            stated = item.get("statement_sha256")
            out.append((item["name"], stated if isinstance(stated, str) else None))
    return out


def _theorem_reasons(obj: dict[str, Any], manifest: Manifest) -> list[str]:
    unknown: list[str] = []
    mismatched: list[str] = []
    named = _named_theorems(obj)
    for name, stated in named:
        published = manifest.theorems.get(name)
        if published is None:
            unknown.append(f"unknown-theorem: {name} is not a published, audited theorem")
        elif stated is not None and stated not in published:
            mismatched.append(
                f"statement-hash-mismatch: {name}: file says {stated}, "
                f"manifest says {' or '.join(published)}"
            )
    reasons = unknown + mismatched
    if named and not reasons:
        reasons.append(f"theorems-ok: {len(named)} theorem(s) published with the same statement")
    return reasons


def verify_bytes(data: bytes, manifest: Manifest, name: str = "<bytes>") -> Verdict:
    """The verdict on the bytes of one file (the logic the in-browser verifier mirrors)."""
    if len(data) > MAX_BYTES:
        return Verdict(
            False, [f"too-large: {len(data)} bytes (limit {MAX_BYTES})"], name, "", "unknown"
        )
    sha = sha256_bytes(data)
    if sha == manifest.sha256:
        reason = f"is-manifest: identical to the manifest used for verification ({manifest.path})"
        return Verdict(True, [reason], name, sha, "manifest")
    reasons: list[str] = []
    listed = manifest.files.get(sha)
    if listed:
        reasons.append(f"listed: SHA-256 {sha} is published as {', '.join(listed)}")
    else:
        reasons.append(f"unknown-hash: SHA-256 {sha} is not in the manifest (tampered or not ours)")
    try:
        obj = parse_json(data)
    except (ValueError, RecursionError) as exc:
        if listed:
            reasons.append("not-json: a published file that is not JSON; it names no theorems")
            return Verdict(True, reasons, name, sha, "published-file")
        reasons.append(f"malformed-json: {exc}")
        return Verdict(False, reasons, name, sha, "unknown")
    if not isinstance(obj, dict):
        if not listed:
            reasons.append(f"not-an-object: top level is a JSON {type(obj).__name__}")
        kind = "published-file" if listed else "unknown"
        return Verdict(not reasons_red(reasons), reasons, name, sha, kind)
    kind = _kind(obj)
    result = obj.get("result") if isinstance(obj.get("result"), str) else None
    if kind in ("certificate", "manifest"):
        version = obj.get("schema_version")
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            reasons.append(
                f"unsupported-schema-version: {json.dumps(version, ensure_ascii=False)} "
                f"(this verifier knows {', '.join(SUPPORTED_SCHEMA_VERSIONS)})"
            )
        else:
            errors = schema_errors(obj, kind)
            reasons.extend(f"schema-violation: {e}" for e in errors[:MAX_SCHEMA_REASONS])
            if len(errors) > MAX_SCHEMA_REASONS:
                more = len(errors) - MAX_SCHEMA_REASONS
                reasons.append(f"schema-violation: and {more} more")
        if kind == "certificate":
            stated = obj.get(BODY_HASH_KEY)
            actual = body_hash(obj)
            if stated != actual:
                reasons.append(
                    f"body-hash-mismatch: body_sha256 says {stated}, the body hashes to {actual}"
                )
    reasons.extend(_theorem_reasons(obj, manifest))
    return Verdict(not reasons_red(reasons), reasons, name, sha, kind, result)


def reasons_red(reasons: list[str]) -> bool:
    """True if any reason has a red code."""
    return any(reason.split(":", 1)[0] in RED_CODES for reason in reasons)


def verify_file(path: str | Path, manifest: Manifest) -> Verdict:
    """The verdict on one file. :class:`VerifyError` if it is not a readable file."""
    p = Path(path)
    if not p.exists():
        raise VerifyError(f"{p}: no such file")
    if not p.is_file():
        raise VerifyError(f"{p}: not a file")
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            reason = f"too-large: {size} bytes (limit {MAX_BYTES})"
            return Verdict(False, [reason], str(p), "", "unknown")
        data = p.read_bytes()
    except OSError as exc:
        raise VerifyError(f"{p}: cannot read ({exc.strerror})") from None
    return verify_bytes(data, manifest, str(p))


def _print_verdict(verdict: Verdict) -> None:
    label = "GREEN" if verdict.green else "RED"
    what = verdict.kind + (f" {verdict.result}" if verdict.result else "")
    click.echo(f"{label}  {verdict.path}  ({what})")
    for reason in verdict.reasons:
        click.echo(f"  - {reason}")


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--manifest",
    "manifest_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Manifest to verify against (default: certificates/MANIFEST.json of the project).",
)
@click.option("--json", "as_json", is_flag=True, help="Print verdicts as JSON.")
def main(files: tuple[Path, ...], manifest_path: Path | None, as_json: bool) -> None:
    """Verify certificate FILEs offline against a published manifest.

    Exit 0 if every file is green, 1 if any is red, 2 on a usage or I/O error.
    """
    path = manifest_path or project_root() / DEFAULT_MANIFEST
    try:
        manifest = load_manifest(path)
    except VerifyError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    status = 0
    out: list[dict[str, Any]] = []
    for file in files:
        try:
            verdict = verify_file(file, manifest)
        except VerifyError as exc:
            click.echo(f"error: {exc}", err=True)
            status = 2
            continue
        if not verdict.green:
            status = max(status, 1)
        if as_json:
            out.append(asdict(verdict) | {"codes": verdict.codes})
        else:
            _print_verdict(verdict)
    if as_json:
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    sys.exit(status)


if __name__ == "__main__":
    main()
