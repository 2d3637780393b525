"""The publishing stage's commands: ``pytools review-statements``, ``certify``, ``verify``,
``keygen`` and ``site``.

Only what ``verify`` needs is imported with this module: the offline verifier
(:mod:`.verify`), which loads nothing of the audit, the ``.olean`` reader or the results, so
``pytools verify`` runs in an install with the default dependencies alone (click, jsonschema,
cryptography). The other commands import their modules when they run.

``pytools verify [FILE...] [--manifest PATH] [--manifest-sha256 HEX] [--key PUB]...
[--trusted-keys FILE]... [--require-signature] [--json] [--rebuild]``. Without FILE it checks
the manifest and every file it lists. Exit 0 when every file is green, 1 when any is red, 2
on a usage or I/O error (unreadable file, unusable manifest or key).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pytools.lean.cli import lean_option
from pytools.paths import project_root

from .attest import ENVELOPE_NAME
from .codes import ANCHOR_CODES, code_of, is_red
from .manifest import DEFAULT_MANIFEST, VerifyError
from .screen import printable
from .verify import ManifestCheck, Verdict, anchor_options, bundled_keys, run_verify

if TYPE_CHECKING:
    from .bundle import Derived

# --------------------------------------------------------------------------- review-statements


@click.command("review-statements")
@click.option("--accept", is_flag=True,
              help="Rewrite reviewed/statements.json from the library as built now.")
@lean_option
def review_statements(accept: bool, lean: str | None) -> None:
    """Compare (or, with --accept, record) the published theorems' statements."""
    # The published theorems come from the results; the lean layer below does not know them.
    from pytools.lean.audit import reviewed
    from pytools.lean.audit.records import AuditError
    from pytools.lean.modules import BuildError
    from pytools.lean.olean import OleanError
    from pytools.lean.statement_review import review_statements as review
    from pytools.lean.toolchain import ToolchainError, find_toolchain
    from pytools.results.registry import published_theorems

    root = project_root()
    theorems = published_theorems()
    try:
        outcome = review(root, find_toolchain(lean, root), theorems, accept=accept,
                         say=click.echo)
    except (ToolchainError, BuildError, AuditError, OleanError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not outcome.built:
        raise click.ClickException("the library does not build")
    for finding in outcome.findings:
        click.echo(f"FINDING: {finding}", err=True)
    if outcome.written:
        click.echo(f"wrote {reviewed.REVIEWED_FILE}: {len(theorems)} statements; review the "
                   "diff (git diff) before committing it")
        return
    if accept:
        click.echo(f"review-statements FAILED: {len(outcome.findings)} audit finding(s); "
                   f"{reviewed.REVIEWED_FILE} not written", err=True)
        sys.exit(1)
    for problem in outcome.differences:
        click.echo(problem, err=True)
    click.echo(f"{len(theorems)} published statements; {len(outcome.differences)} differences; "
               f"{len(outcome.findings)} audit findings")
    sys.exit(0 if outcome.ok else 1)


# --------------------------------------------------------------------------- certify


def _print_table(derived: Derived, timings: dict[str, float], check: bool) -> None:
    click.echo(f"{'result':<24} {'theorems':>8}  {'axioms':<40} status")
    for result_id, count, axioms, status in derived.rows:
        click.echo(f"{result_id:<24} {count:>8}  {axioms:<40} {status}")
    click.echo(
        "timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
    )
    for note in derived.notes:
        click.echo(f"note: {note}")
    for problem in derived.problems:
        click.echo(f"FINDING: {problem}", err=True)
    verb = "checked" if check else "written"
    if derived.problems:
        click.echo(f"certify FAILED: {len(derived.problems)} finding(s); nothing {verb}.",
                   err=True)
    else:
        click.echo(f"certify ok: {len(derived.files)} files {verb}.")


@click.command()
@click.option("--check", is_flag=True,
              help="Re-derive everything and fail if a committed file is stale or differs.")
@click.option("--lean", default=None, help="A native `lean`, or `wasm` (see `pytools toolchain`).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None)
@click.option("--sign-key", type=click.Path(path_type=Path), default=None,
              help="Ed25519 private key (PEM, mode 0600, never in the repository): sign the "
              f"release into certificates/{ENVELOPE_NAME}.")
def certify(check: bool, lean: str | None, jobs: int | None, sign_key: Path | None) -> None:
    """Build, audit every declaration, and emit (or --check) the certificates."""
    from pytools.lean.audit.records import AuditError
    from pytools.lean.modules import BuildError
    from pytools.lean.olean import OleanError
    from pytools.lean.toolchain import ToolchainError

    from .certify import run
    from .keys import KeyFileError

    try:
        outcome = run(project_root(), check, lean, jobs, sign_key, say=click.echo)
    except (ToolchainError, BuildError, AuditError, OleanError, KeyFileError) as exc:
        raise click.ClickException(str(exc)) from exc
    if outcome.derived is not None:
        _print_table(outcome.derived, outcome.timings, check)
    sys.exit(0 if outcome.ok else 1)


# --------------------------------------------------------------------------- verify


def _say(line: str, err: bool = False) -> None:
    """Print one line of verify's text output, every character from a file or a path that
    could act on the terminal shown escaped (:func:`.screen.printable`)."""
    click.echo(printable(line), err=err)


def _print_anchor(manifest: ManifestCheck) -> None:
    assert manifest.anchor is not None  # a usable manifest has its anchor checked
    _say(f"manifest {manifest.path}  SHA-256 {manifest.sha256}")
    _say(f"  anchor: {manifest.anchor.summary}")
    for reason in manifest.anchor.reasons:
        _say(f"  - {reason}")


def _print_verdict(verdict: Verdict) -> None:
    label = "GREEN" if verdict.green else "RED"
    what = verdict.kind + (f" {verdict.result}" if verdict.result else "")
    _say(f"{label}  {verdict.path}  ({what})")
    for reason in verdict.reasons:
        # The anchor is printed once, above every verdict; a red one is also the reason here.
        if code_of(reason) not in ANCHOR_CODES or is_red([reason]):
            _say(f"  - {reason}")


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
def verify(files: tuple[Path, ...], manifest_path: Path | None, pin: str | None,
           keys: tuple[Path, ...], trusted: tuple[Path, ...], require_signature: bool,
           signature: Path | None, rebuild: bool, lean: str | None, as_json: bool) -> None:
    """Verify certificate FILEs offline against a published, anchored manifest.

    Without FILE: the manifest and every file it lists. Exit 0 if every file is green, 1 if
    any is red, 2 on a usage or I/O error.
    """
    path = manifest_path or project_root() / DEFAULT_MANIFEST
    try:
        options = anchor_options(pin, keys, trusted, require_signature)
    except VerifyError as exc:
        if as_json:
            click.echo(json.dumps({"manifest": {"path": str(path)}, "error": str(exc),
                                   "verdicts": [], "green": False}, indent=2))
        else:
            _say(f"error: {exc}", err=True)
        sys.exit(2)
    report = run_verify(list(files), path, options, signature)
    status = report.status
    out: dict[str, Any] = report.as_json()
    inside = bundled_keys([*keys, *trusted], path)
    if inside:
        out["warnings"] = [f"{k}: this key lies inside the bundle being checked; a key "
                           "that travels with the bundle proves nothing — use one you "
                           "obtained out of band" for k in inside]
        for line in out["warnings"]:
            _say(f"warning: {line}", err=True)
    rebuilt: dict[str, Any] | None = None
    if rebuild and report.manifest.error is None:
        from .rebuild import rebuild_report

        rebuilt = rebuild_report(path, project_root(), lean,
                                 say=lambda line: _say(line, err=True))
        out["rebuild"] = rebuilt
        if not rebuilt["green"]:
            status = max(status, 1)
        out["green"] = out["green"] and rebuilt["green"]
    if as_json:
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        sys.exit(status)
    if report.manifest.error is not None:
        _say(f"error: {report.manifest.error}", err=True)
        sys.exit(2)
    _print_anchor(report.manifest)
    for verdict in report.verdicts:
        if verdict.error is not None:
            _say(f"error: {verdict.error}", err=True)
        else:
            _print_verdict(verdict)
    for line in report.trust.get("lines", []):
        _say(line)
    if rebuilt is not None:
        _say(f"{'GREEN' if rebuilt['green'] else 'RED'}  rebuild  "
             f"({len(rebuilt['compared'])} files compared)")
        for line in rebuilt["problems"] + rebuilt["notes"]:
            _say(f"  - {line}")
    _say(report.summary(None if rebuilt is None else bool(rebuilt["green"])))
    sys.exit(status)


# --------------------------------------------------------------------------- keygen


@click.command()
@click.argument("private", type=click.Path(path_type=Path))
@click.argument("public", type=click.Path(path_type=Path))
def keygen(private: Path, public: Path) -> None:
    """Make an Ed25519 key pair: PRIVATE (PEM, 0600; keep it OUT of the repository) signs with
    `certify --sign-key`; PUBLIC is what auditors pass to `verify --key`, obtained from you
    out of band, never from the bundle."""
    from .keys import KeyFileError, generate

    try:
        kid = generate(private, public)
    except KeyFileError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {private} (private, 0600) and {public}; key id {kid}")


# --------------------------------------------------------------------------- site


@click.command()
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Output folder (default: site/ under the project root): absent or empty, "
              "or an earlier site of this tool with --force. A regular file, a read-only "
              "folder or a non-empty folder that is not a site of this tool is refused and "
              "left untouched.")
@click.option("--force", is_flag=True,
              help="Replace an earlier site at --out (a folder with the .pytools-site.json "
              "marker this tool writes), only if it holds nothing but the files the tool "
              "wrote there, unedited; anything else is named and nothing is replaced.")
@click.option("--manifest", "manifest_path", type=click.Path(path_type=Path), default=None,
              help="Manifest to build from (default: certificates/MANIFEST.json).")
@click.option("--root", "root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Project root the manifest's paths are relative to.")
@click.option("--recompute", is_flag=True,
              help="Recompute every result's figures from its inputs (slower; the page then "
              "says 'recomputed from X' instead of 'hash of X matched').")
@click.option("--key", "keys", multiple=True, type=click.Path(path_type=Path),
              help="The publisher's public key (PEM), for the page's signed samples; the page "
              "never pre-fills or trusts it.")
def site(out: Path | None, force: bool, manifest_path: Path | None, root: Path | None,
         recompute: bool, keys: tuple[Path, ...]) -> None:
    """Build the static product page with its offline verifier."""
    from pytools.traces.progress import progress_line

    from .keys import KeyFileError, load_trusted_keys
    from .site.page import build_site, registry_recompute
    from .site.release import SiteError

    root = (root or project_root()).resolve()
    try:
        publisher = load_trusted_keys(list(keys)) if keys else None
        warnings: list[str] = []  # said once the progress line is closed
        with progress_line("site: recomputing every figure" if recompute else "site"):
            index = build_site(root, out or root / "site", manifest_path,
                               recompute=registry_recompute if recompute else None,
                               publisher_keys=publisher, force=force, warn=warnings.append)
        for line in warnings:
            click.echo(f"warning: {line}", err=True)
    except (SiteError, KeyFileError) as exc:
        hint = ""
        if "MANIFEST.json: no such file" in str(exc):
            hint = " (run pytools certify first)"
        click.echo(f"error: {exc}{hint}", err=True)
        sys.exit(1)
    click.echo(f"wrote {index}")
