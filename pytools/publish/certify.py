"""``pytools certify``: build, audit, and publish hashed certificates.

One run: build the library (:mod:`pytools.lean.build`), enumerate and audit every declaration
from the compiled ``.olean`` files (:mod:`pytools.lean.audit`), compute each published
result's figures from its input files (:mod:`pytools.results.registry`), and emit one canonical,
schema-valid certificate per result plus ``certificates/MANIFEST.json``. Each certificate
records where it comes from (:mod:`.provenance`: the library's git tree, the commit, every
audited ``.olean`` part) and the audit checks that ran (:mod:`.certificate_policy`); the
manifest carries each theorem's term hash and printed-text hash. With ``--sign-key`` an
in-toto statement over the release is signed into ``certificates/MANIFEST.intoto.jsonl``
(:mod:`.attest`). Nothing is written when anything is wrong; every file is written
atomically, the manifest and then its signature last.

``--check`` derives the same files in memory and fails if a committed one is missing,
stale or different (CI runs it).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.files import atomic_write_bytes
from pytools.lean.audit import certificate as audit_certificate
from pytools.lean.audit import native as audit_native
from pytools.lean.audit import reviewed
from pytools.lean.audit.records import AuditError, AuditReport, Declaration
from pytools.lean.build import BUILD_DIR, BuildResult
from pytools.lean.build_audit import build_and_audit, build_summary, library_files
from pytools.lean.replay import ReplayError, default_workers, replay_modules
from pytools.lean.toolchain import Toolchain, find_toolchain
from pytools.paths import sha256_file
from pytools.results.registry import published_results, published_theorems
from pytools.results.spec import Evidence, ResultSpec

from . import provenance
from .bundle import (
    CERT_DIR,
    ENVELOPE,
    FIGURES_DIR,
    MANIFEST,
    README,
    SCHEMA_VERSION,
    SUMMARY_END,
    SUMMARY_START,
    Derived,
    assemble,
    summary_block,
    with_summary,
    write_all,
)
from .canonical import canonical_bytes, sha256_bytes, with_body_hash
from .compare import (
    commit_to_record,
    committed_toolchain,
    compare,
    compare_modulo_oleans,
    recorded_source,
)
from .keys import load_signing_key
from .strictjson import MAX_BYTES
from .trust import trust_block
from .validation import SchemaSet, package_schemas

RECEIPT = Path(".lake/build/pytools-receipt.json")

__all__ = [
    "CERT_DIR", "ENVELOPE", "FIGURES_DIR", "MANIFEST", "README", "SCHEMA_VERSION",
    "SUMMARY_END", "SUMMARY_START", "Derived", "assemble", "compare", "derive", "run",
    "summary_block", "with_summary", "write_all",
]


def hashed_sources(root: Path) -> list[dict[str, str]]:
    """The certificate's ``sources``: every file of the library (:func:`library_files`) with
    its SHA-256."""
    return [{"path": p, "sha256": sha256_file(root / p)} for p in library_files(root)]


def audit_summary(report_: AuditReport,
                  lean: dict[str, str] | None = None) -> dict[str, Any]:
    """The certificate's audit block (written by :mod:`pytools.lean.audit.certificate`)."""
    return audit_certificate.audit_block(report_, lean or {})


def _theorem_entries(
    spec: ResultSpec, by_name: dict[str, Declaration], problems: list[str],
    report_: AuditReport,
) -> list[dict[str, Any]]:
    entries = []
    if not spec.theorems:
        problems.append(f"{spec.id}: names no theorem")
    for name in spec.theorems:
        decl = by_name.get(name)
        if decl is None:
            problems.append(f"{spec.id}: published theorem {name} is not in the library")
            continue
        if decl.kind != "theorem":
            problems.append(f"{spec.id}: {name} is a {decl.kind}, not a theorem")
            continue
        entries.append(audit_certificate.theorem_entry(decl, report_))
    return entries


def derive(
    root: Path,
    toolchain_identity: dict[str, str],
    report_: AuditReport,
    results: tuple[ResultSpec, ...],
    *,
    source_commit: str | None | bool = True,
    sign_key: Ed25519PrivateKey | None = None,
    schemas: SchemaSet | None = None,
) -> Derived:
    """Compute every certificate, figure file and the manifest, without writing anything.

    ``source_commit``: True to look the commit up in git, else the commit to record (a check
    or a rebuild records the commit the committed certificates name, once verified).
    ``sign_key``: sign the release (else a committed signature is kept if it still covers
    the manifest). ``schemas``: the schema set (default: the package's).
    """
    out = Derived()
    schemas = schemas or package_schemas()
    for finding in report_.findings:
        out.problems.append(finding.message())
    by_name = {d.name: d for d in report_.declarations}
    sources = hashed_sources(root)
    summary = audit_summary(report_, toolchain_identity)
    trust = trust_block(toolchain_identity, report_.rules)
    source = provenance.source(root, source_commit).as_json()
    oleans, missing = provenance.olean_parts(root, report_.modules)
    out.problems += [f"{m}: missing, though its module was audited" for m in missing]
    out.summary, out.source = summary, source
    for spec in results:
        if schemas.figures_schema(spec.id) is None:
            out.problems.append(
                f"{spec.id}: no figures schema; add pytools/publish/schemas/figures/"
                f"{spec.id}.schema.json describing its figures (see docs/publish.md)"
            )
            continue
        theorems = _theorem_entries(spec, by_name, out.problems, report_)
        try:
            evidence = spec.evidence(root) if spec.evidence else Evidence(figures={})
        except Exception as exc:  # a result's evidence failing is a finding, not a crash
            out.problems.append(f"{spec.id}: computing its figures failed: {exc}")
            continue
        cert: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "result": spec.id,
            "title": spec.title,
            "theorems": theorems,
            "figures": evidence.figures,
            "inputs": [{"path": i.path, "sha256": i.sha256} for i in evidence.inputs],
            "toolchain": toolchain_identity,
            "limits": list(spec.limits),
            "sources": sources,
            "source": source,
            "oleans": oleans,
            "audit": summary,
            "trust": trust,
            **evidence.extra,
        }
        if spec.artifacts:
            cert["artifacts"] = _derive_artifacts(root, spec, out)
        cert = with_body_hash(cert)
        try:
            schemas.validate(cert, "certificate")
        except ValueError as exc:
            out.problems.append(f"{spec.id}: certificate violates its schema: {exc}")
            continue
        out.certs[str(CERT_DIR / f"{spec.id}.json")] = cert
        out.manifest_theorems += [
            {
                "name": t["name"],
                "result": spec.id,
                "statement_sha256": t["statement_sha256"],
                "statement_text_sha256": sha256_bytes(t["statement"].encode("utf-8")),
            }
            for t in theorems
        ]
        axioms = sorted({a for t in theorems for a in t["axioms"]})
        status = "ok" if theorems and len(theorems) == len(spec.theorems) else "INCOMPLETE"
        out.rows.append((spec.id, len(theorems), ", ".join(axioms) or "none", status))
    assemble(root, out, sign_key, schemas)
    return out


def _derive_artifacts(root: Path, spec: ResultSpec, out: Derived) -> list[dict[str, str]]:
    """Run a result's artifact writer in a temp folder and keep the bytes it wrote."""
    listed = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            written = spec.artifacts(root, Path(tmp)) if spec.artifacts else []
        except Exception as exc:
            out.problems.append(f"{spec.id}: writing its figure files failed: {exc}")
            return []
        for path in sorted(written):
            rel = str(FIGURES_DIR / spec.id / path.name)
            data = path.read_bytes()
            if len(data) > MAX_BYTES:  # verify (and the page) would call it red: too large
                out.problems.append(f"{spec.id}: {rel} is {len(data):,} bytes, over the "
                                    f"{MAX_BYTES:,} a verifier reads")
            out.artifacts[rel] = data
            listed.append({"path": rel, "sha256": sha256_bytes(data)})
    return listed


def _lean_env(toolchain: Toolchain, root: Path) -> dict[str, str]:
    """The environment a native Lean tool needs to find the library and the core library."""
    return {**os.environ, "LEAN_PATH": os.pathsep.join([str(root / BUILD_DIR),
                                                        str(toolchain.lib_dir)])}


def native_cross_check(
    toolchain: Toolchain, root: Path, modules: list[str], report_: AuditReport,
    results: tuple[ResultSpec, ...],
) -> list[str]:
    """Where a native Lean exists, `#print axioms` must agree with the .olean audit."""
    theorems = published_theorems(results)
    lean_cmd = [toolchain.lake, "env", "lean"] if toolchain.lake else list(toolchain.lean)
    env = _lean_env(toolchain, root)
    native = audit_native.native_axioms(lean_cmd, modules, theorems, cwd=root, env=env)
    return audit_native.compare_with_native(report_, native)


def _silent(line: str) -> None:
    """The default progress callback: a library function prints nothing."""


def kernel_replay(toolchain: Toolchain, root: Path, modules: list[str], jobs: int | None = None,
                  say: Callable[[str], None] = _silent) -> list[str]:
    """Replay every library module through the toolchain's kernel (the ``KernelReplay.lean``
    driver, :mod:`pytools.lean.replay`), ``jobs`` processes at once (default: as many as cores
    and memory allow, :func:`pytools.lean.replay.default_workers`); one problem line per module
    it did not accept."""
    try:
        outcome = replay_modules(toolchain, root / BUILD_DIR, modules,
                                 workers=jobs or default_workers())
    except ReplayError as exc:
        return [f"kernel-replay: {exc}"]
    say(f"kernel replay: {len(modules) - len(outcome.reused)} modules replayed, "
        f"{len(outcome.reused)} with the same bytes accepted before, {len(outcome.problems)} "
        f"not accepted, in {outcome.seconds:.0f}s")
    return list(outcome.problems)


def audit_checks(
    toolchain: Toolchain, root: Path, modules: list[str], report_: AuditReport,
    results: tuple[ResultSpec, ...], jobs: int | None = None,
    say: Callable[[str], None] = _silent,
) -> tuple[list[str], dict[str, bool], dict[str, str]]:
    """The checks beside the .olean audit: the reviewed statements (always); where a native
    Lean exists `#print axioms` and a kernel replay (leanchecker) of every module; wherever
    leanchecker did not run, the kernel replay of every module by the ``KernelReplay.lean``
    driver. Returns (problems, which checks ran, why the others did not)."""
    theorems = published_theorems(results)
    try:
        problems = reviewed.check(root, report_, theorems)
    except AuditError as exc:
        problems = [f"{reviewed.REVIEWED_FILE}: cannot compare: {exc}"]
    ran = {"reviewed-statements": True}
    why: dict[str, str] = {}
    if toolchain.kind == "native":
        problems += native_cross_check(toolchain, root, modules, report_, results)
        ran["print-axioms"] = True
        checker = audit_native.find_leanchecker(toolchain.lean[0])
        if checker is None:
            why["leanchecker"] = f"no leanchecker next to {toolchain.lean[0]} or on PATH"
        else:
            cmd = [toolchain.lake, "env", checker] if toolchain.lake else [checker]
            env = _lean_env(toolchain, root)
            problems += audit_native.run_leanchecker(cmd, modules, cwd=root, env=env)
            ran["leanchecker"] = True
    if ran.get("leanchecker"):
        return problems, ran, why
    problems += kernel_replay(toolchain, root, modules, jobs, say)
    ran["kernel-replay"] = True
    return problems, ran, why


@dataclass
class Run:
    ok: bool
    timings: dict[str, float]
    derived: Derived | None = None
    toolchain: Toolchain | None = None


def produce(
    root: Path,
    lean: str | None = None,
    jobs: int | None = None,
    *,
    source_commit: str | None | bool = True,
    sign_key: Ed25519PrivateKey | None = None,
    say: Callable[[str], None] = _silent,
) -> Run:
    """Build, audit and derive every file in memory (nothing written but the build and its
    receipt). ``say`` receives progress lines: the toolchain chosen, the build's summary."""
    toolchain = find_toolchain(lean, root)
    say(f"toolchain: {toolchain.kind} Lean {toolchain.version} ({toolchain.found_by})")
    results = published_results()
    audited = build_and_audit(root, toolchain, jobs=jobs, meanings_for=published_theorems(results))
    timings = dict(audited.timings)
    say(build_summary(audited.built))
    if audited.report is None:
        return Run(False, timings, None, toolchain)

    start = time.monotonic()
    modules = list(audited.modules)
    disagreements, ran, why = audit_checks(toolchain, root, modules, audited.report, results,
                                             jobs, say)
    report_ = audit_certificate.with_checks(audited.report, ran, why)
    timings["audit"] += time.monotonic() - start  # the checks beside the .olean audit

    start = time.monotonic()
    derived = derive(root, toolchain.identity(), report_, results,
                     source_commit=source_commit, sign_key=sign_key)
    derived.problems += disagreements
    timings["derive"] = time.monotonic() - start
    _write_receipt(root, toolchain, audited.built, timings, derived)
    return Run(not derived.problems, timings, derived, toolchain)


def run(root: Path, check: bool, lean: str | None = None, jobs: int | None = None,
        sign_key: Path | None = None, say: Callable[[str], None] = _silent) -> Run:
    """The whole job: produce, then compare with the committed files (``check``) or write
    them (only when nothing is wrong). ``say``: progress lines (see :func:`produce`)."""
    key = load_signing_key(sign_key) if sign_key is not None else None
    notes: list[str] = []
    commit = commit_to_record(root, recorded_source(root), notes) if check else True
    produced = produce(root, lean, jobs, source_commit=commit, sign_key=key, say=say)
    derived, toolchain = produced.derived, produced.toolchain
    if derived is None or toolchain is None:
        return produced
    derived.notes += notes
    start = time.monotonic()
    if check:
        same = committed_toolchain(root) in (None, toolchain.identity())
        derived.problems += compare_modulo_oleans(root, root, derived, same, key)
    elif not derived.problems:
        write_all(root, derived)
    produced.timings["emit"] = time.monotonic() - start
    return Run(not derived.problems, produced.timings, derived, toolchain)


def _write_receipt(root: Path, toolchain: Toolchain, built: BuildResult,
                   timings: dict[str, float], derived: Derived) -> None:
    """Run metadata (times, machine toolchain) kept apart from the canonical files."""
    receipt = {
        "toolchain": toolchain.describe(),
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "module_seconds": built.seconds,
        "compiled": built.compiled,
        "up_to_date": built.up_to_date,
        "problems": derived.problems if derived else [],
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    atomic_write_bytes(root / RECEIPT, canonical_bytes(receipt))
