"""``python -m pytools.traces``: the ceiling, policy simulations, sweeps and the Lean instance of a
trace file."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import click

from pytools.paths import project_root, sha256_file

from .lean_instance import write_lean_instance
from .policies import POLICIES, simulate
from .sweep import write_sweep
from .trace import TraceError, ceiling_counts, count_distinct, load_trace, percent_str

# ----------------------------------------------------------------------------- CLI


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


@click.group()
def main() -> None:
    """Demand-fetch hit ceiling of a Mooncake JSONL trace."""


@main.command("ceiling")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
def ceiling_cmd(file: Path) -> None:
    """Counts and the hit-rate ceiling (references - distinct) / references of FILE."""
    try:
        c = ceiling_counts(file)
        ceiling = c.ceiling
    except TraceError as exc:
        raise _fail(exc) from None
    click.echo(f"file: {file}")
    click.echo(f"sha256: {c.sha256}")
    click.echo(f"requests: {c.requests}")
    click.echo(f"references: {c.references}")
    click.echo(f"distinct: {c.distinct}")
    click.echo(f"max_hits: {c.max_hits}")
    click.echo(f"ceiling: {ceiling.numerator}/{ceiling.denominator} ({c.percent} %)")


@main.command("simulate")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--capacity", "-k", type=click.IntRange(min=1), required=True,
              help="Cache capacity in blocks.")
@click.option("--policy", type=click.Choice([*POLICIES, "all"]), default="all",
              show_default=True)
def simulate_cmd(file: Path, capacity: int, policy: str) -> None:
    """Hit counts and rates of a policy (or all) at a capacity on FILE."""
    try:
        trace = load_trace(file)
    except TraceError as exc:
        raise _fail(exc) from None
    refs = len(trace.stream)
    distinct = count_distinct(trace.stream)
    click.echo(f"references: {refs}  distinct: {distinct}  capacity: {capacity}")
    top = percent_str(Fraction(refs - distinct, refs))
    click.echo(f"ceiling: {refs - distinct} hits ({top} %)")
    for name in POLICIES if policy == "all" else (policy,):
        hits = simulate(trace.stream, capacity, name)
        click.echo(f"{name}: {hits} hits ({percent_str(Fraction(hits, refs))} %)")


@main.command("sweep")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              required=True, help="Folder for sweep.csv, sweep.svg, sweep.png.")
def sweep_cmd(file: Path, out_dir: Path) -> None:
    """Hit rate against capacity for LRU and Belady, with the ceiling (CSV + SVG + PNG)."""
    try:
        paths = write_sweep(file, out_dir)
    except TraceError as exc:
        raise _fail(exc) from None
    for p in paths:
        click.echo(f"wrote {p}  sha256 {sha256_file(p)}")


@main.command("lean-instance")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Output (default: Proofs/Ceiling/Mooncake.lean).")
def lean_instance_cmd(file: Path, out: Path | None) -> None:
    """Generate the Lean module of the claim's window (counted by the kernel) and the whole
    trace's ceiling fraction."""
    target = out or project_root() / "Proofs" / "Ceiling" / "Mooncake.lean"
    try:
        write_lean_instance(file, target)
    except TraceError as exc:
        raise _fail(exc) from None
    click.echo(f"wrote {target}  sha256 {sha256_file(target)}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
