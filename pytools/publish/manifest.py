"""The manifest a verification is made against: loaded from bytes, schema-checked, entries
unique, indexed by file hash and by theorem."""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .canonical import sha256_bytes
from .strictjson import MAX_BYTES, parse_json
from .validation import SchemaSet, package_schemas

#: The manifest and certificate format versions this verifier understands.
SUPPORTED_SCHEMA_VERSIONS = ("2",)

#: Where certify writes the manifest, relative to the repository root; the paths it lists are
#: relative to the folder above the manifest's folder.
DEFAULT_MANIFEST = Path("certificates/MANIFEST.json")


class VerifyError(Exception):
    """A usage or I/O problem (exit 2): not a file, unreadable, unusable manifest or key."""


@dataclass(frozen=True)
class PublishedTheorem:
    """One manifest entry of ``theorems``."""

    name: str
    result: str
    statement_sha256: str
    statement_text_sha256: str


@dataclass(frozen=True)
class Manifest:
    """A loaded, schema-checked manifest with unique entries."""

    path: str
    sha256: str
    size: int
    files: dict[str, tuple[str, ...]]  # sha256 -> listed paths
    theorems: dict[str, tuple[PublishedTheorem, ...]]  # theorem name -> its entries
    data: dict[str, Any] = field(repr=False)
    raw: bytes = field(repr=False, default=b"")

    @property
    def results(self) -> tuple[str, ...]:
        return tuple(sorted({t.result for ts in self.theorems.values() for t in ts}))

    def listed_paths(self) -> dict[str, str]:
        """Path -> SHA-256 of every listed file."""
        return {e["path"]: e["sha256"] for e in self.data["files"]}


def uniqueness_errors(obj: Any) -> list[str]:
    """Duplicate paths in ``files`` and duplicate (name, result) in ``theorems``, as
    ``"<pointer>: ..."`` lines like the schema's (JSON Schema cannot say "unique by key")."""
    errors: list[str] = []
    if not isinstance(obj, dict):
        return errors
    for key, fields in (("files", ("path",)), ("theorems", ("name", "result"))):
        items = obj.get(key)
        if not isinstance(items, list):
            continue
        seen: dict[tuple[Any, ...], int] = {}
        for index, item in enumerate(items):
            if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in fields):
                continue
            ident = tuple(item[f] for f in fields)
            if ident in seen:
                what = "path" if key == "files" else "theorem for this result"
                errors.append(f"/{key}/{index}: duplicate {what} (first at /{key}/{seen[ident]})")
            else:
                seen[ident] = index
    return errors


def manifest_problems(obj: Any, schemas: SchemaSet) -> list[str]:
    """Every reason the parsed manifest is unusable (version, schema, uniqueness)."""
    if not isinstance(obj, dict):
        return ["(document): not a JSON object"]
    if obj.get("schema_version") not in SUPPORTED_SCHEMA_VERSIONS:
        version = json.dumps(obj.get("schema_version"), ensure_ascii=False)
        return [f"/schema_version: unsupported {version} "
                f"(supported: {', '.join(SUPPORTED_SCHEMA_VERSIONS)})"]
    return sorted(set(schemas.errors(obj, "manifest") + uniqueness_errors(obj)))


def manifest_from_bytes(
    data: bytes, name: str, schemas: SchemaSet | None = None
) -> Manifest:
    """A manifest from its bytes; :class:`VerifyError` names ``name`` and the problem."""
    schemas = schemas or package_schemas()
    if len(data) > MAX_BYTES:
        raise VerifyError(f"manifest {name}: too large ({len(data)} bytes, limit {MAX_BYTES})")
    try:
        obj = parse_json(data)
    except ValueError as exc:
        raise VerifyError(f"manifest {name}: malformed JSON: {exc}") from None
    problems = manifest_problems(obj, schemas)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise VerifyError(f"manifest {name}: schema violation: {problems[0]}{more}")
    files: dict[str, list[str]] = {}
    for entry in obj["files"]:
        files.setdefault(entry["sha256"], []).append(entry["path"])
    theorems: dict[str, list[PublishedTheorem]] = {}
    for entry in obj["theorems"]:
        theorems.setdefault(entry["name"], []).append(PublishedTheorem(
            entry["name"], entry["result"], entry["statement_sha256"],
            entry["statement_text_sha256"],
        ))
    return Manifest(
        path=name,
        sha256=sha256_bytes(data),
        size=len(data),
        files={k: tuple(v) for k, v in files.items()},
        theorems={k: tuple(v) for k, v in theorems.items()},
        data=obj,
        raw=data,
    )


def missing(path: Path) -> str:
    """Why ``path``, which does not exist as far as ``Path.exists`` says, cannot be opened: no
    such file, a symlink loop, or a symlink whose target is missing."""
    if not os.path.islink(path):
        return "no such file"
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop"
    return "a symlink whose target does not exist"


def read_limited(path: Path, what: str) -> bytes:
    """The bytes of a file no larger than :data:`MAX_BYTES`; :class:`VerifyError` otherwise."""
    if not path.exists():
        raise VerifyError(f"{what} {path}: {missing(path)}")
    if not path.is_file():
        raise VerifyError(f"{what} {path}: not a file")
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise VerifyError(f"{what} {path}: too large ({size} bytes, limit {MAX_BYTES})")
        return path.read_bytes()
    except OSError as exc:
        raise VerifyError(f"{what} {path}: cannot read ({exc.strerror})") from None


def load_manifest(path: str | Path, schemas: SchemaSet | None = None) -> Manifest:
    """Read and check a manifest file; :class:`VerifyError` names the file and the problem."""
    p = Path(path)
    return manifest_from_bytes(read_limited(p, "manifest"), str(p), schemas)


def bundle_root(manifest_path: Path) -> Path:
    """The folder a manifest's paths are relative to: the one above the manifest's folder
    when that folder is ``certificates/`` (certify writes ``certificates/MANIFEST.json``
    listing ``certificates/...``), else the manifest's own folder. Never raises: links are
    followed as far as they lead (a link loop is left as it is, for the reader to report)."""
    folder = Path(os.path.realpath(manifest_path)).parent
    return folder.parent if folder.name == DEFAULT_MANIFEST.parent.name else folder
