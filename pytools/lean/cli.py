"""The Lean stage's commands: ``pytools toolchain``, ``pytools build`` and ``pytools audit``.

Each is a thin layer over its module (:mod:`.toolchain`, :mod:`.build`, :mod:`.audit`); the
builder and the audit are imported when their command runs. ``pytools review-statements``
needs the published theorems, which the results list, so it lives a layer up, in
:mod:`pytools.publish.cli`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pytools.lean.toolchain import (
    WASM_REWRITES,
    ToolchainError,
    find_toolchain,
    wasm_patch_mode,
)
from pytools.paths import project_root

if TYPE_CHECKING:
    from pytools.lean.audit.records import AuditReport

lean_option = click.option(
    "--lean",
    "lean",
    default=None,
    help="A native `lean` executable, or `wasm` for the registry build "
    "(default: $PYTOOLS_LEAN, then PATH, elan, node_modules).",
)


@click.command()
@lean_option
@click.option("--json", "as_json", is_flag=True, help="Print the full record as JSON.")
def toolchain(lean: str | None, as_json: bool) -> None:
    """Say which Lean toolchain the pipeline will use."""
    try:
        chosen = find_toolchain(lean)
        if chosen.kind == "wasm":
            wasm_patch_mode(dict(os.environ))
    except ToolchainError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(chosen.describe(), indent=2, sort_keys=True))
        return
    click.echo(f"kind:     {chosen.kind}")
    click.echo(f"version:  {chosen.version}")
    click.echo(f"commit:   {chosen.commit}")
    click.echo(f"found by: {chosen.found_by}")
    click.echo(f"lean:     {' '.join((*chosen.lean, *chosen.extra_args))}")
    if chosen.kind == "wasm":
        mode = wasm_patch_mode(dict(os.environ))
        applied = "none (lean.js as shipped)" if mode == "off" else ", ".join(WASM_REWRITES)
        click.echo(f"rewrites: {applied} (PYTOOLS_WASM_PATCH={mode}; docs/toolchain.md)")
    click.echo(f"lake:     {chosen.lake or '(none: the pytools module builder is used)'}")
    click.echo(f"core lib: {chosen.lib_dir}")


@click.command("build")
@lean_option
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Modules compiled at once (default: cores, bounded by memory).")
@click.option("--no-lake", is_flag=True, help="Use the pytools builder even where lake exists.")
def build(lean: str | None, jobs: int | None, no_lake: bool) -> None:
    """Compile the library (lake build, or the pytools builder without lake)."""
    from pytools.lean.build import build as build_library
    from pytools.lean.build import lake_build, report
    from pytools.lean.modules import BuildError

    root = project_root()
    try:
        chosen = find_toolchain(lean)
        if chosen.lake and not no_lake:
            result = lake_build(root, chosen)
        else:
            result = build_library(root, chosen, jobs=jobs)
    except (ToolchainError, BuildError) as exc:
        raise click.ClickException(str(exc)) from exc
    report(result)
    sys.exit(0 if result.ok else 1)


def format_table(report: AuditReport, show_aux: bool = False) -> str:
    """The audit as ``pytools audit`` prints it: one row per declaration, the counts, every
    finding and the verdict."""
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
def audit(modules: tuple[str, ...], search_path: tuple[Path, ...], show_aux: bool,
          as_json: bool, no_cache: bool, core: Path | None, root: str | None) -> None:
    """Audit every declaration of MODULES from their .olean files (every rule of
    pytools.lean.audit.rules)."""
    from dataclasses import asdict

    from pytools.lean.audit.records import AuditError
    from pytools.lean.audit.walk import audit_modules
    from pytools.lean.olean import OleanError

    paths = list(search_path) or [Path(p) for p in os.environ.get("LEAN_PATH", "").split(":")
                                  if p]
    try:
        report = audit_modules(list(modules), paths, cache_dir=not no_cache, core_dir=core,
                               root=root)
    except (AuditError, OleanError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps({
            "declarations": [asdict(d) for d in report.declarations],
            "findings": [asdict(f) for f in report.findings],
            "trusted_core": list(report.trusted_core), "counts": report.counts(),
        }, indent=1, sort_keys=True))
    else:
        click.echo(format_table(report, show_aux))
    sys.exit(0 if report.ok() else 1)
