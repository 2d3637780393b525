"""``pytools audit MODULE...``: the audit as a table (or JSON)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from pytools.lean.olean import OleanError

from .records import AuditError, AuditReport
from .walk import audit_modules


def format_table(report: AuditReport, show_aux: bool = False) -> str:
    rows = [("declaration", "kind", "module", "line", "axioms")]
    for d in report.declarations:
        if d.auxiliary and not show_aux:
            continue
        rows.append((d.name, d.kind, d.module, "" if d.line is None else str(d.line),
                     ", ".join(d.axioms) or "-"))
    widths = [min(60, max(len(r[i]) for r in rows)) for i in range(4)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows]
    c = report.counts()
    lines.append(
        f"{c['declarations']} declarations ({c['user_facing']} user-facing, "
        f"{c['auxiliary']} auxiliary), {c['theorems']} theorems; {c['trusted_core']} trusted "
        f"core constants (bodies absent, axioms not re-derived); {report.library_modules} "
        f"library modules read; {report.seconds:.2f} s")
    for f in report.findings:
        lines.append("FINDING " + f.message())
    lines.append("OK: no findings" if report.ok() else f"FAIL: {len(report.findings)} findings")
    return "\n".join(lines)


@click.command()
@click.argument("modules", nargs=-1, required=True)
@click.option("--search-path", "search_path", multiple=True, type=click.Path(path_type=Path),
              help="Directory of .olean files, like one LEAN_PATH entry (repeatable). "
                   "Default: $LEAN_PATH.")
@click.option("--all", "show_aux", is_flag=True, help="Also list auxiliary declarations.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-cache", is_flag=True, help="Do not use the on-disk library index cache.")
@click.option("--core", "core", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The toolchain's core library folder (Init.olean...): allowed axioms are "
                   "recognised only as read from it. Without it every allowed-looking axiom "
                   "is a finding.")
@click.option("--root", "root", default=None,
              help="The library's root module: every module must be in its import closure.")
def main(modules: tuple[str, ...], search_path: tuple[Path, ...], show_aux: bool,
         as_json: bool, no_cache: bool, core: Path | None, root: str | None) -> None:
    """Audit every declaration of MODULES from their .olean files (every rule of
    pytools.lean.audit.rules)."""
    paths = list(search_path) or [Path(p) for p in os.environ.get("LEAN_PATH", "").split(":")
                                  if p]
    try:
        report = audit_modules(list(modules), paths, cache_dir=not no_cache, core_dir=core,
                               root=root)
    except (AuditError, OleanError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if as_json:
        from dataclasses import asdict
        click.echo(json.dumps({
            "declarations": [asdict(d) for d in report.declarations],
            "findings": [asdict(f) for f in report.findings],
            "trusted_core": list(report.trusted_core), "counts": report.counts(),
        }, indent=1, sort_keys=True))
    else:
        click.echo(format_table(report, show_aux))
    sys.exit(0 if report.ok() else 1)


if __name__ == "__main__":
    main()
