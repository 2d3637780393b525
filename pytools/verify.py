"""``pytools verify`` (also ``python -m pytools.verify``): verify certificates offline
against a published, anchored manifest; the command over :mod:`pytools.publish.verify`.

``pytools verify [FILE...] [--manifest PATH] [--manifest-sha256 HEX] [--key PUB]...
[--trusted-keys FILE]... [--require-signature] [--json] [--rebuild]``. Without FILE it checks
the manifest and every file it lists. Exit 0 when every file is green, 1 when any is red, 2
on a usage or I/O error (unreadable file, unusable manifest or key).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from pytools.paths import project_root
from pytools.publish.attest import ENVELOPE_NAME
from pytools.publish.codes import ANCHOR_CODES, code_of, is_red
from pytools.publish.manifest import DEFAULT_MANIFEST, VerifyError
from pytools.publish.verify import Verdict, anchor_options, bundled_keys, run_verify


def _print_anchor(manifest: dict[str, Any]) -> None:
    click.echo(f"manifest {manifest['path']}  SHA-256 {manifest['sha256']}")
    click.echo(f"  anchor: {manifest['anchor']['summary']}")
    for reason in manifest["anchor"]["reasons"]:
        click.echo(f"  - {reason}")


def _print_verdict(verdict: Verdict) -> None:
    label = "GREEN" if verdict.green else "RED"
    what = verdict.kind + (f" {verdict.result}" if verdict.result else "")
    click.echo(f"{label}  {verdict.path}  ({what})")
    for reason in verdict.reasons:
        # The anchor is printed once, above every verdict; a red one is also the reason here.
        if code_of(reason) not in ANCHOR_CODES or is_red([reason]):
            click.echo(f"  - {reason}")


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
        options = anchor_options(pin, keys, trusted, require_signature)
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
        from pytools.publish.rebuild import rebuild_report

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
        if entry["error"] is not None:
            click.echo(f"error: {entry['error']}", err=True)
        else:
            _print_verdict(Verdict(entry["green"], entry["reasons"], entry["path"],
                                   entry["sha256"], entry["kind"], entry["result"]))
    for line in report["trust"]["lines"]:
        click.echo(line)
    if "rebuild" in report:
        outcome = report["rebuild"]
        click.echo(f"{'GREEN' if outcome['green'] else 'RED'}  rebuild  "
                   f"({len(outcome['compared'])} files compared)")
        for line in outcome["problems"] + outcome["notes"]:
            click.echo(f"  - {line}")
    sys.exit(status)


if __name__ == "__main__":
    main()
