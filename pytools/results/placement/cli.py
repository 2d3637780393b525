"""``pytools placement``: solve the committed instance, regenerate it, run the sweep."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from pytools.paths import project_root, sha256_file

from .instance import (
    INSTANCE_PARAMS,
    INSTANCE_PATH,
    PlacementError,
    check_instance_generated,
    generate_instance,
    load_instance,
    write_instance,
)
from .lean_instance import LEAN_FILE, check_lean_block, write_lean_block
from .result import evidence
from .solver import certify_instance
from .sweep import SWEEP_PARAMS, sweep, sweep_table, write_sweep

# --------------------------------------------------------------------------- CLI


@click.group(invoke_without_command=True)
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Repository root (default: the project root).")
@click.pass_context
def main(ctx: click.Context, root: Path | None) -> None:
    """Pooled KV placement: CP-SAT certificate on the committed instance (default: solve)."""
    ctx.obj = root or project_root()
    if ctx.invoked_subcommand is None:
        ctx.invoke(solve_cmd)


@main.command("solve")
@click.option("--instance", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Instance file (default: the committed data/placement/instance.json).")
@click.pass_obj
def solve_cmd(root: Path, instance: Path | None) -> None:
    """Solve pooled and per-instance placement, check them, print figures and timings."""
    path = instance or (root / INSTANCE_PATH)
    try:
        inst = load_instance(path)
        cert = certify_instance(inst)
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"instance {path}  sha256 {sha256_file(path)}")
    click.echo(json.dumps(cert.figures, indent=2, sort_keys=True))
    click.echo(f"solve time (not a figure): pooled {cert.pooled_seconds:.3f} s, "
               f"per-instance {cert.per_instance_seconds:.3f} s")


@main.command("generate")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write (default: the committed instance path).")
@click.option("--check", is_flag=True, help="Only check the file matches the generator.")
@click.pass_obj
def generate_cmd(root: Path, out: Path | None, check: bool) -> None:
    """(Re)generate the committed instance from INSTANCE_PARAMS, or check it."""
    path = out or (root / INSTANCE_PATH)
    try:
        if check:
            check_instance_generated(path)
            click.echo(f"{path}: matches generate_instance({INSTANCE_PARAMS})")
            return
        write_instance(path, generate_instance(**INSTANCE_PARAMS))
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {path}  sha256 {sha256_file(path)}")


@main.command("lean-block")
@click.option("--check", is_flag=True, help="Only check the Lean file carries the block.")
@click.pass_obj
def lean_block_cmd(root: Path, check: bool) -> None:
    """(Re)write the generated instance block of Proofs/Placement/Farthest.lean, or check it."""
    path = root / LEAN_FILE
    try:
        inst = check_instance_generated(root / INSTANCE_PATH)
        if check:
            problems = check_lean_block(inst, path)
            if problems:
                raise click.ClickException("; ".join(problems))
            click.echo(f"{path}: its generated block matches {INSTANCE_PATH}")
            return
        write_lean_block(inst, path)
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote the generated block of {path}  sha256 {sha256_file(path)}")


@main.command("sweep")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Also write the CSV table and the SVG plot into this folder.")
def sweep_cmd(out: Path | None) -> None:
    """Pooled against per-instance hit rates over 1..16 hosts."""
    start = time.perf_counter()
    try:
        rows = sweep()
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"sweep seed {SWEEP_PARAMS['seed']}, params {SWEEP_PARAMS}")
    click.echo(sweep_table(rows), nl=False)
    click.echo(f"sweep time (not a figure): {time.perf_counter() - start:.2f} s")
    if out is not None:
        for p in write_sweep(out, rows):
            click.echo(f"wrote {p}")


@main.command("evidence")
@click.pass_obj
def evidence_cmd(root: Path) -> None:
    """Print the evidence (figures and inputs) of the result as JSON."""
    try:
        ev = evidence(root)
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    doc = {"figures": ev.figures,
           "inputs": [{"path": i.path, "sha256": i.sha256} for i in ev.inputs]}
    json.dump(doc, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
