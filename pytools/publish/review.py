"""``python -m pytools review-statements [--accept]``: show, or deliberately accept, what the
published theorems now say (``reviewed/statements.json``, see
:mod:`pytools.lean.audit.reviewed`).

Without ``--accept`` it lists every difference between the library and the reviewed file and
exits 1 if there is any (certify reports the same differences). With ``--accept`` it rewrites
the file from the library as built, so the change shows up as a diff to read and commit.
"""

from __future__ import annotations

import sys

import click

from pytools.lean import audit as audit_mod
from pytools.lean.audit import reviewed
from pytools.lean.build import BUILD_DIR, build, lake_build, report
from pytools.lean.modules import BuildError, discover, topological_order
from pytools.lean.toolchain import ToolchainError, find_toolchain
from pytools.paths import project_root
from pytools.results.registry import published_results

ROOT_MODULE = "Proofs"


@click.command()
@click.option("--accept", is_flag=True,
              help="Rewrite reviewed/statements.json from the library as built now.")
@click.option("--lean", default=None, help="A native `lean`, or `wasm`.")
def main(accept: bool, lean: str | None) -> None:
    """Compare (or, with --accept, record) the published theorems' statements."""
    root = project_root()
    try:
        toolchain = find_toolchain(lean, root)
        built = lake_build(root, toolchain) if toolchain.lake else build(root, toolchain)
        report(built)
        if not built.ok:
            raise click.ClickException("the library does not build")
        modules = topological_order(discover(root))
        theorems = sorted({t for spec in published_results() for t in spec.theorems})
        audited = audit_mod.audit_modules(modules, [root / BUILD_DIR],
                                          core_dir=toolchain.lib_dir, root=ROOT_MODULE,
                                          meanings_for=theorems)
    except (ToolchainError, BuildError, audit_mod.AuditError) as exc:
        raise click.ClickException(str(exc)) from exc
    if accept:
        reviewed.accept(root, audited, theorems)
        click.echo(f"wrote {reviewed.REVIEWED_FILE}: {len(theorems)} statements; review the "
                   "diff (git diff) before committing it")
        return
    problems = reviewed.check(root, audited, theorems)
    for problem in problems:
        click.echo(problem, err=True)
    click.echo(f"{len(theorems)} published statements; {len(problems)} differences")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
