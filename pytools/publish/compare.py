"""``certify --check`` and ``verify --rebuild``: compare what a run derives with published
files, byte for byte, and say exactly what differs.

Lean's compiled output is not bit-reproducible (two compilations of one source gave
different ``.olean`` bytes, measured), so when a run compiled anew, the comparison is made
again with the recorded ``.olean`` hashes put in; a match then means every other byte was
reproduced, and the report says how many compiled parts differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.lean.audit.certificate import MACHINE_KEYS
from pytools.paths import sha256_file

from . import provenance
from .bundle import CERT_DIR, ENVELOPE, MANIFEST, README, Derived, with_recorded_oleans
from .trust import MACHINE_KEYS as TRUST_MACHINE_KEYS


def compare(root: Path, derived: Derived, same_toolchain: bool,
            skip: frozenset[str] = frozenset()) -> list[str]:
    """Differences between what certify would write now and what is committed under
    ``root`` (files in ``skip`` are not compared)."""
    problems = []
    for rel, data in sorted(derived.files.items()):
        if rel in skip:
            continue
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: missing (run `pytools certify`)")
            continue
        committed = path.read_bytes()
        if committed == data:
            continue
        if not same_toolchain and (rel in (str(README), str(ENVELOPE)) or (
                rel.endswith(".json") and _same_but_toolchain(committed, data))):
            continue
        problems.append(f"{rel}: differs from what the current sources and data give")
    if derived.stale_envelope and str(ENVELOPE) not in skip:
        problems.append(f"{ENVELOPE}: signs another manifest (stale); re-sign with "
                        "`pytools certify --sign-key KEY` or remove it")
    manifest = root / MANIFEST
    if manifest.is_file():
        try:
            listed = json.loads(manifest.read_text())["files"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            problems.append(f"{MANIFEST}: unreadable: {exc}")
            listed = []
        for entry in listed:
            path = root / entry.get("path", "")
            if not path.is_file():
                problems.append(f"{MANIFEST}: lists {entry.get('path')}, which is missing")
            elif sha256_file(path) != entry.get("sha256"):
                problems.append(f"{MANIFEST}: hash of {entry.get('path')} no longer matches")
    return problems


def recorded_oleans(base: Path) -> list[dict[str, str]] | None:
    """The .olean hashes the certificates under ``base`` record (they agree), or None."""
    for path in sorted((base / CERT_DIR).glob("*.json")):
        if path.name == MANIFEST.name:
            continue
        try:
            oleans = json.loads(path.read_text(encoding="utf-8")).get("oleans")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(oleans, list):
            return oleans
    return None


def compare_modulo_oleans(
    root: Path, base: Path, derived: Derived, same_toolchain: bool,
    sign_key: Ed25519PrivateKey | None = None, skip: frozenset[str] = frozenset(),
) -> list[str]:
    """:func:`compare` against the files under ``base``; when they differ and this build's
    .olean hashes are not the recorded ones, compare again with the recorded hashes put in
    (see :func:`with_recorded_oleans`) and, if that matches, say so in ``derived.notes``."""
    problems = compare(base, derived, same_toolchain, skip)
    recorded = recorded_oleans(base)
    built = next(iter(derived.certs.values()), {}).get("oleans")
    if not problems or recorded is None or recorded == built:
        return problems
    alternative = with_recorded_oleans(root, derived, recorded, sign_key)
    again = compare(base, alternative, same_toolchain, skip)
    if again:
        return again
    theirs = {e.get("path"): e.get("sha256") for e in recorded if isinstance(e, dict)}
    ours = {e["path"]: e["sha256"] for e in built or []}
    differ = sum(1 for p in set(theirs) | set(ours) if theirs.get(p) != ours.get(p))
    derived.notes.append(
        f"reproduced every byte except the .olean hashes: {differ} of {len(theirs)} compiled "
        "parts differ from the recorded ones (compiled anew here; Lean's .olean output is not "
        "bit-reproducible), and the audit of the parts built here gives the same certificates"
    )
    return []


def _same_but_toolchain(a: bytes, b: bytes) -> bool:
    """Equal apart from the toolchain record (a native check of wasm-made certificates)."""

    def strip(data: bytes) -> Any:
        obj = json.loads(data)
        if isinstance(obj, dict):
            obj.pop("toolchain", None)
            obj.pop("body_sha256", None)
            obj.pop("oleans", None)  # another Lean compiles other bytes
            for key in MACHINE_KEYS:  # which checks this machine's Lean could run
                if isinstance(obj.get("audit"), dict):
                    obj["audit"].pop(key, None)
            for key in TRUST_MACHINE_KEYS:  # the kernel that checked, and its known issues
                if isinstance(obj.get("trust"), dict):
                    obj["trust"].pop(key, None)
            for entry in obj.get("files", []):
                entry.pop("sha256", None)
                entry.pop("size", None)
        return obj

    try:
        return strip(a) == strip(b)
    except (json.JSONDecodeError, AttributeError):
        return False


def committed_toolchain(root: Path) -> dict[str, str] | None:
    for path in sorted((root / CERT_DIR).glob("*.json")):
        if path.name == MANIFEST.name:
            continue
        try:
            return json.loads(path.read_text()).get("toolchain")
        except (OSError, json.JSONDecodeError):
            return None
    return None


def recorded_source(root: Path) -> provenance.Source | None:
    """The ``source`` block the committed certificates record (they agree), or None."""
    for path in sorted((root / CERT_DIR).glob("*.json")):
        if path.name == MANIFEST.name:
            continue
        try:
            block = json.loads(path.read_text(encoding="utf-8")).get("source")
            return provenance.Source(block["library_tree"], tuple(block["tree_entries"]),
                                     block["commit"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return None


def commit_to_record(root: Path, recorded: provenance.Source | None,
                     notes: list[str]) -> str | None | bool:
    """For a check or a rebuild: the commit the committed certificates name when git agrees
    its library tree is theirs (or git cannot tell); else look it up afresh (True)."""
    if recorded is None or recorded.commit is None:
        return True
    if provenance.check_recorded_commit(root, recorded):
        return True
    if provenance.commit_tree(root, recorded.commit, recorded.tree_entries) is None:
        notes.append(f"recorded commit {recorded.commit} is not in this clone: not verified "
                     "here (the library tree hash, recomputed from the files, is what binds)")
    return recorded.commit
