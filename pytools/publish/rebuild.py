"""``verify --rebuild``: re-derive a bundle's certificates from the sources they record, with
the Lean this machine has, and compare bytes (Reproducible Builds, for proofs).

Steps, each stopping with the reason when it fails:

1. read the certificates the manifest lists; they record one ``source`` (the library's git
   tree, its entries, the commit), the Lean sources with their SHA-256, the data inputs with
   theirs, and the toolchain;
2. check that the checkout here holds exactly those sources (the tree id is recomputed from
   the files, :mod:`.provenance`) and that every recorded input is here with its hash; a
   recorded commit git knows must have that tree;
3. run certify's pipeline (build, audit, figures) in memory, recording that commit;
4. compare every file the bundle publishes, and the manifest, byte for byte
   (:mod:`.compare`; where the build compiled anew, the ``.olean`` hashes are the one thing
   that cannot match, and the report says how many differ).

The build is incremental (content hashes): where the build folder already holds outputs of
the same sources (certify ran here), nothing is recompiled.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytools.paths import input_path, sha256_file

from . import certify, provenance
from .bundle import ENVELOPE, README
from .compare import compare_modulo_oleans
from .manifest import VerifyError, bundle_root, load_manifest


def _certificates(manifest_path: Path) -> list[tuple[str, dict[str, Any]]]:
    manifest = load_manifest(manifest_path)
    base = bundle_root(manifest_path)
    out = []
    for rel in sorted(manifest.listed_paths()):
        if not rel.endswith(".json"):
            continue
        try:
            obj = json.loads((base / rel).read_bytes())
        except (OSError, ValueError) as exc:
            raise VerifyError(f"{base / rel}: unreadable for the rebuild ({exc})") from None
        if isinstance(obj, dict) and "result" in obj:
            out.append((rel, obj))
    if not out:
        raise VerifyError(f"manifest {manifest_path}: lists no certificate to rebuild")
    return out


def source_problems(root: Path, certs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Why the checkout at ``root`` does not hold the sources and inputs the certificates
    record (empty: it does)."""
    problems: list[str] = []
    blocks = {json.dumps(c.get("source"), sort_keys=True) for _, c in certs}
    if len(blocks) != 1:
        return [f"the certificates record {len(blocks)} different sources; one run makes one"]
    block = certs[0][1].get("source")
    try:
        recorded = provenance.Source(block["library_tree"], tuple(block["tree_entries"]),
                                     block["commit"])
    except (TypeError, KeyError):
        return [f"{certs[0][0]}: records no source block (format 1?)"]
    here = provenance.library_tree(root, recorded.tree_entries)
    if here != recorded.library_tree:
        hint = (f"; check it out: git checkout {recorded.commit} -- "
                + " ".join(recorded.tree_entries)) if recorded.commit else ""
        problems.append(f"the library here (git tree {here}) is not the certified one "
                        f"(tree {recorded.library_tree}){hint}")
    problems += provenance.check_recorded_commit(root, recorded)
    seen: set[str] = set()
    for rel, cert in certs:
        for entry in [*cert.get("sources", []), *cert.get("inputs", [])]:
            path = entry.get("path", "") if isinstance(entry, dict) else ""
            if not path or path in seen:
                continue
            seen.add(path)
            target = input_path(root, path)
            if not target.is_file():
                problems.append(f"{path}: recorded in {rel} but not here")
            elif sha256_file(target) != entry.get("sha256"):
                problems.append(f"{path}: SHA-256 here differs from the one {rel} records")
    return problems


def rebuild_report(manifest_path: Path, root: Path, lean: str | None = None,
                   jobs: int | None = None,
                   say: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Rebuild and compare (see the module doc); a JSON-ready report, ``green`` only when
    every published file and the manifest were reproduced. ``say``: the build's progress
    lines (the verify command sends them to stderr: stdout may be ``--json``)."""
    start = time.monotonic()
    report: dict[str, Any] = {"green": False, "problems": [], "notes": [], "compared": []}
    try:
        certs = _certificates(manifest_path)
    except VerifyError as exc:
        report["problems"].append(str(exc))
        return report
    problems = source_problems(root, certs)
    if problems:
        report["problems"] = problems
        return report
    recorded = certs[0][1]
    produced = certify.produce(root, lean, jobs, source_commit=recorded["source"]["commit"],
                               say=say)
    report["seconds"] = {k: round(v, 1) for k, v in produced.timings.items()}
    derived, toolchain = produced.derived, produced.toolchain
    if derived is None or toolchain is None:
        report["problems"].append("the build failed (see its output above)")
        return report
    if derived.problems:
        report["problems"] += [f"certify: {p}" for p in derived.problems]
        return report
    same = toolchain.identity() == recorded.get("toolchain")
    if not same:
        report["problems"].append(
            f"this machine's Lean is {toolchain.identity()}, the certificates were made with "
            f"{recorded.get('toolchain')}: their bytes cannot be reproduced here")
    skip = frozenset({str(README), str(ENVELOPE)})
    base = bundle_root(manifest_path)
    differ = compare_modulo_oleans(root, base, derived, same, None, skip)
    report["problems"] += differ
    report["notes"] += derived.notes
    report["compared"] = sorted(set(derived.files) - skip)
    report["toolchain"] = toolchain.identity()
    report["library_tree"] = recorded["source"]["library_tree"]
    report["seconds"]["total"] = round(time.monotonic() - start, 1)
    report["green"] = not report["problems"]
    return report
