"""``python -m pytools.certify``: build, audit, and publish hashed certificates.

One run: build the library (:mod:`pytools.lean.build`), enumerate and audit every declaration
from the compiled ``.olean`` files (:mod:`pytools.lean.audit`), compute each published
result's figures from its input files (:mod:`pytools.results.registry`), and emit one canonical,
schema-valid certificate per result plus ``certificates/MANIFEST.json``. Nothing is
written when anything is wrong; every file is written atomically, the manifest last.

``--check`` derives the same files in memory and fails if a committed one is missing,
stale or different (CI runs it).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from pytools.lean import audit as audit_mod
from pytools.lean.audit import certificate as audit_certificate
from pytools.lean.audit import reviewed
from pytools.lean.build import BUILD_DIR, build, lake_build, report
from pytools.lean.modules import LIBRARY_ROOTS, BuildError, discover, topological_order
from pytools.lean.toolchain import Toolchain, ToolchainError, find_toolchain
from pytools.paths import project_root, sha256_file
from pytools.results.registry import published_results
from pytools.results.spec import Evidence, ResultSpec

from .canonical import atomic_write_bytes, canonical_bytes, sha256_bytes, validate, with_body_hash

SCHEMA_VERSION = "1"
CERT_DIR = Path("certificates")
MANIFEST = CERT_DIR / "MANIFEST.json"
FIGURES_DIR = CERT_DIR / "figures"
RECEIPT = Path(".lake/build/pytools-receipt.json")
README = Path("README.md")
SUMMARY_START = "<!-- pytools.certify:summary -->"
SUMMARY_END = "<!-- /pytools.certify:summary -->"


@dataclass
class Derived:
    """Everything one certify run would write, as bytes, plus what went wrong."""

    files: dict[str, bytes] = field(default_factory=dict)  # repo-relative path -> bytes
    problems: list[str] = field(default_factory=list)
    rows: list[tuple[str, int, str, str]] = field(default_factory=list)


def library_sources(root: Path) -> list[dict[str, str]]:
    """Every Lean source of the library, ``lean-toolchain`` and ``lakefile.lean``, hashed."""
    modules = discover(root)
    paths = sorted({str(m.path) for m in modules.values()} | {"lean-toolchain", "lakefile.lean"})
    return [{"path": p, "sha256": sha256_file(root / p)} for p in paths if (root / p).is_file()]


def audit_summary(report_: audit_mod.AuditReport,
                  lean: dict[str, str] | None = None) -> dict[str, Any]:
    """The certificate's audit block (written by :mod:`pytools.lean.audit.certificate`)."""
    return audit_certificate.audit_block(report_, lean or {})


def _theorem_entries(
    spec: ResultSpec, by_name: dict[str, audit_mod.Declaration], problems: list[str],
    report_: audit_mod.AuditReport,
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
    report_: audit_mod.AuditReport,
    results: tuple[ResultSpec, ...],
) -> Derived:
    """Compute every certificate, figure file and the manifest, without writing anything."""
    out = Derived()
    for finding in report_.findings:
        out.problems.append(finding.message())
    by_name = {d.name: d for d in report_.declarations}
    sources = library_sources(root)
    summary = audit_summary(report_, toolchain_identity)
    manifest_theorems = []
    for spec in results:
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
            "audit": summary,
            **evidence.extra,
        }
        if spec.artifacts:
            cert["artifacts"] = _derive_artifacts(root, spec, out)
        cert = with_body_hash(cert)
        try:
            validate(cert, "certificate")
        except ValueError as exc:
            out.problems.append(f"{spec.id}: certificate violates its schema: {exc}")
            continue
        out.files[str(CERT_DIR / f"{spec.id}.json")] = canonical_bytes(cert)
        manifest_theorems += [
            {"name": t["name"], "statement_sha256": t["statement_sha256"], "result": spec.id}
            for t in theorems
        ]
        axioms = sorted({a for t in theorems for a in t["axioms"]})
        status = "ok" if theorems and len(theorems) == len(spec.theorems) else "INCOMPLETE"
        out.rows.append((spec.id, len(theorems), ", ".join(axioms) or "none", status))
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "files": [
            {"path": path, "sha256": sha256_bytes(data), "size": len(data)}
            for path, data in sorted(out.files.items())
        ],
        "theorems": sorted(manifest_theorems, key=lambda t: (t["name"], t["result"])),
    }
    try:
        validate(manifest, "manifest")
    except ValueError as exc:
        out.problems.append(f"manifest violates its schema: {exc}")
    out.files[str(MANIFEST)] = canonical_bytes(manifest)
    readme = root / README
    if readme.is_file():
        updated = with_summary(readme.read_text(encoding="utf-8"), summary_block(out, summary))
        if updated is not None:
            out.files[str(README)] = updated.encode("utf-8")
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
            out.files[rel] = data
            listed.append({"path": rel, "sha256": sha256_bytes(data)})
    return listed


def summary_block(derived: Derived, summary: dict[str, Any]) -> str:
    """The README's generated summary: counts and results, from this run's audit."""
    lines = [
        SUMMARY_START,
        "<!-- generated by `python -m pytools.certify`; do not edit by hand -->",
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
        "| result | theorems | axioms reached | status |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{r}` | {n} | {a} | {s} |" for r, n, a, s in derived.rows]
    lines.append(SUMMARY_END)
    return "\n".join(lines)


def with_summary(text: str, block: str) -> str | None:
    """``text`` with the generated block replaced, or None if it has no markers."""
    start, end = text.find(SUMMARY_START), text.find(SUMMARY_END)
    if start < 0 or end < start:
        return None
    return text[:start] + block + text[end + len(SUMMARY_END):]


def compare(root: Path, derived: Derived, same_toolchain: bool) -> list[str]:
    """Differences between what certify would write now and what is committed."""
    problems = []
    for rel, data in sorted(derived.files.items()):
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: missing (run `python -m pytools.certify`)")
            continue
        committed = path.read_bytes()
        if committed == data:
            continue
        if not same_toolchain and rel.endswith(".json") and _same_but_toolchain(committed, data):
            continue
        problems.append(f"{rel}: differs from what the current sources and data give")
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


def _same_but_toolchain(a: bytes, b: bytes) -> bool:
    """Equal apart from the toolchain record (a native check of wasm-made certificates)."""

    def strip(data: bytes) -> Any:
        obj = json.loads(data)
        if isinstance(obj, dict):
            obj.pop("toolchain", None)
            obj.pop("body_sha256", None)
            for key in audit_certificate.MACHINE_KEYS:  # which checks this machine could run
                if isinstance(obj.get("audit"), dict):
                    obj["audit"].pop(key, None)
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


def write_all(root: Path, derived: Derived) -> None:
    """Write every file atomically, the manifest last; drop figure files no longer made."""
    manifest_key = str(MANIFEST)
    for rel, data in sorted(derived.files.items()):
        if rel != manifest_key:
            atomic_write_bytes(root / rel, data)
    figures = root / FIGURES_DIR
    for old in sorted(figures.rglob("*")) if figures.is_dir() else []:
        if old.is_file() and str(old.relative_to(root)) not in derived.files:
            old.unlink()
    atomic_write_bytes(root / manifest_key, derived.files[manifest_key])


def native_cross_check(
    toolchain: Toolchain, root: Path, modules: list[str], report_: audit_mod.AuditReport,
    results: tuple[ResultSpec, ...],
) -> list[str]:
    """Where a native Lean exists, `#print axioms` must agree with the .olean audit."""
    import os

    theorems = sorted({t for spec in results for t in spec.theorems})
    lean_cmd = [toolchain.lake, "env", "lean"] if toolchain.lake else list(toolchain.lean)
    env = {**os.environ, "LEAN_PATH": os.pathsep.join([str(root / BUILD_DIR),
                                                       str(toolchain.lib_dir)])}
    native = audit_mod.native_axioms(lean_cmd, modules, theorems, cwd=root, env=env)
    return audit_mod.compare_with_native(report_, native)


def audit_checks(
    toolchain: Toolchain, root: Path, modules: list[str], report_: audit_mod.AuditReport,
    results: tuple[ResultSpec, ...],
) -> tuple[list[str], dict[str, bool], dict[str, str]]:
    """The checks beside the .olean audit: the reviewed statements (always), and where a
    native Lean exists `#print axioms` and a kernel replay (leanchecker) of every module.
    Returns (problems, which checks ran, why the others did not)."""
    import os

    theorems = sorted({t for spec in results for t in spec.theorems})
    try:
        problems = reviewed.check(root, report_, theorems)
    except audit_mod.AuditError as exc:
        problems = [f"{reviewed.REVIEWED_FILE}: cannot compare: {exc}"]
    ran = {"reviewed-statements": True}
    why: dict[str, str] = {}
    if toolchain.kind != "native":
        return problems, ran, why
    problems += native_cross_check(toolchain, root, modules, report_, results)
    ran["print-axioms"] = True
    checker = audit_mod.find_leanchecker(toolchain.lean[0])
    if checker is None:
        why["leanchecker"] = f"no leanchecker next to {toolchain.lean[0]} or on PATH"
        return problems, ran, why
    cmd = [toolchain.lake, "env", checker] if toolchain.lake else [checker]
    env = {**os.environ, "LEAN_PATH": os.pathsep.join([str(root / BUILD_DIR),
                                                       str(toolchain.lib_dir)])}
    problems += audit_mod.run_leanchecker(cmd, modules, cwd=root, env=env)
    ran["leanchecker"] = True
    return problems, ran, why


@dataclass
class Run:
    ok: bool
    timings: dict[str, float]
    derived: Derived | None = None


def run(root: Path, check: bool, lean: str | None = None, jobs: int | None = None) -> Run:
    """The whole job; prints its progress and a table, returns whether it succeeded."""
    timings: dict[str, float] = {}
    toolchain = find_toolchain(lean, root)
    click.echo(f"toolchain: {toolchain.kind} Lean {toolchain.version} ({toolchain.found_by})")

    start = time.monotonic()
    built = lake_build(root, toolchain) if toolchain.lake else build(root, toolchain, jobs=jobs)
    timings["build"] = time.monotonic() - start
    report(built)
    if not built.ok:
        return Run(False, timings)

    start = time.monotonic()
    library = discover(root)
    modules = topological_order(library)
    results = published_results()
    theorems = sorted({t for spec in results for t in spec.theorems})
    audited = audit_mod.audit_modules(
        modules, [root / BUILD_DIR], core_dir=toolchain.lib_dir, root=LIBRARY_ROOTS[0],
        sources=audit_certificate.library_sources(root, library), meanings_for=theorems)
    checks_problems, ran, why = audit_checks(toolchain, root, modules, audited, results)
    audited = audit_certificate.with_checks(audited, ran, why)
    timings["audit"] = time.monotonic() - start

    start = time.monotonic()
    derived = derive(root, toolchain.identity(), audited, results)
    derived.problems += checks_problems
    if check:
        same = committed_toolchain(root) in (None, toolchain.identity())
        derived.problems += compare(root, derived, same)
    elif not derived.problems:
        write_all(root, derived)
    timings["emit"] = time.monotonic() - start

    _print_table(derived, timings, check)
    _write_receipt(root, toolchain, built, timings, derived)
    return Run(not derived.problems, timings, derived)


def _print_table(derived: Derived, timings: dict[str, float], check: bool) -> None:
    click.echo(f"{'result':<24} {'theorems':>8}  {'axioms':<40} status")
    for result_id, count, axioms, status in derived.rows:
        click.echo(f"{result_id:<24} {count:>8}  {axioms:<40} {status}")
    click.echo(
        "timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
    )
    for problem in derived.problems:
        click.echo(f"FINDING: {problem}", err=True)
    verb = "checked" if check else "written"
    if derived.problems:
        click.echo(f"certify FAILED: {len(derived.problems)} finding(s); nothing {verb}.",
                   err=True)
    else:
        click.echo(f"certify ok: {len(derived.files)} files {verb}.")


def _write_receipt(root, toolchain, built, timings, derived) -> None:
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


@click.command()
@click.option("--check", is_flag=True,
              help="Re-derive everything and fail if a committed file is stale or differs.")
@click.option("--lean", default=None, help="A native `lean`, or `wasm` (see `pytools toolchain`).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None)
def main(check: bool, lean: str | None, jobs: int | None) -> None:
    """Build, audit every declaration, and emit (or --check) the certificates."""
    try:
        outcome = run(project_root(), check, lean, jobs)
    except (ToolchainError, BuildError, audit_mod.AuditError) as exc:
        raise click.ClickException(str(exc)) from exc
    sys.exit(0 if outcome.ok else 1)


if __name__ == "__main__":
    main()
