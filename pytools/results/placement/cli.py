"""``pytools placement``: solve the committed instance, run the sweep, sweep the routings on a
trace (``routing``), print the evidence (the generated instance and Lean block: ``pytools
regenerate pooled-placement``)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from pytools.files import check_can_write
from pytools.paths import mooncake_trace, sha256_file
from pytools.results.command import result_group
from pytools.results.records import write_record
from pytools.traces.progress import delayed_bar, progress_line
from pytools.traces.trace import TRACE_INPUT_PATH, TraceError, Window

from .instance import INSTANCE_PATH, PlacementError, load_instance
from .result import evidence
from .routing import run_sweep, sweep_capacities, sweep_steps, trace_requests
from .routing_cost_report import COST_FILES, cost_figures, cost_table_text, write_cost
from .routing_prefix import read_prefix_requests, run_prefix_sweep
from .routing_prices import DEFAULT_PRICES, PRESETS, prices_of
from .routing_report import ROUTING_FILES, routing_figures, table_text, write_routing
from .solver import certify_instance
from .sweep import SWEEP_PARAMS, sweep, sweep_table, write_sweep
from .windows import Ladder, run_ladder
from .windows_record import WINDOWS_PATH

# --------------------------------------------------------------------------- CLI


@result_group(default="solve")
def main() -> None:
    """Pooled KV placement: CP-SAT certificate on the committed instance (default: solve)."""


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


@main.command("sweep")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Also write the CSV table and the SVG plot into this folder.")
def sweep_cmd(out: Path | None) -> None:
    """Pooled against per-instance hit rates over 1..16 hosts."""
    if out is not None:  # before the sweep: a bad folder fails now, not after it
        try:
            check_can_write(out / "placement_sweep.csv")
        except OSError as exc:
            raise click.ClickException(f"{out}: cannot write the sweep there: "
                                       f"{exc.filename}: {exc.strerror or exc}") from None
    start = time.perf_counter()
    try:
        rows = sweep()
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"sweep seed {SWEEP_PARAMS['seed']}, params {SWEEP_PARAMS}")
    click.echo(sweep_table(rows), nl=False)
    click.echo(f"sweep time (not a figure): {time.perf_counter() - start:.2f} s")
    if out is not None:
        try:
            written = write_sweep(out, rows)
        except OSError as exc:
            raise click.ClickException(f"{exc.filename or out}: cannot write the sweep: "
                                       f"{exc.strerror or exc}") from None
        for p in written:
            click.echo(f"wrote {p}")


@main.command("routing")
@click.option("--trace", "trace", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Trace file (JSON Lines with hash_ids; default: the shared "
              "Mooncake trace).")
@click.option("--window", default=None, metavar="START:END",
              help="Only lines START..END of the trace (1-based, inclusive).")
@click.option("--semantics", type=click.Choice(["flat", "prefix"]), default="flat",
              show_default=True, help="flat: every block hits on its own (LRU per host, "
              "pooled LRU/Belady/bypass); prefix: a request hits on its leading run of cached "
              "blocks (radix LRU per host, a pooled prefix cache with remote hits charged, "
              "costs at --prices; needs input_length on every line).")
@click.option("--prices", "preset", type=click.Choice(list(PRESETS)), default=None,
              help=f"Per-block prices with --semantics prefix (default {DEFAULT_PRICES}).")
@click.option("--remote-cost", type=click.IntRange(min=0), default=None, metavar="US",
              help="Remote hit price r, microseconds per block (overrides --prices).")
@click.option("--miss-cost", type=click.IntRange(min=0), default=None, metavar="US",
              help="Miss price m, microseconds per block (overrides --prices).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Also write the CSV table and the SVG plot into this folder.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON, not a table.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.pass_obj
def routing_cmd(root: Path, trace: Path | None, window: str | None, semantics: str,
                preset: str | None, remote_cost: int | None, miss_cost: int | None,
                out: Path | None, as_json: bool, quiet: bool) -> None:
    """Per-instance caches under random, round-robin, prefix-hash and KV-aware routing against
    pooled caches at equal total memory, over hosts 1..16 and capacities across the curve:
    flat LRU against pooled LRU, Belady, Belady with bypass and the wall, or (--semantics
    prefix) per-host prefix caches against a pooled prefix cache, priced."""
    from pytools.paths import mooncake_trace

    priced = preset is not None or remote_cost is not None or miss_cost is not None
    if priced and semantics != "prefix":
        raise click.UsageError("--prices, --remote-cost and --miss-cost need --semantics prefix")
    path = trace or mooncake_trace(root)
    names = COST_FILES if semantics == "prefix" else ROUTING_FILES
    if out is not None:  # before the sweep: a bad folder fails now, not after it
        try:
            for name in names:
                check_can_write(out / name)
        except OSError as exc:
            raise click.ClickException(f"{out}: cannot write the routing table there: "
                                       f"{exc.filename}: {exc.strerror or exc}") from None
    start = time.perf_counter()
    try:
        lines = Window.parse(window) if window else None
        label = str(path) if lines is None else f"{path} ({lines.label})"
        if semantics == "prefix":
            prices = prices_of(preset, remote_cost, miss_cost)
            pr = read_prefix_requests(path, lines)
            steps = sweep_steps(sweep_capacities(pr.reqs.distinct))
            with delayed_bar(steps, "costed routing sweep", quiet) as update:
                psw = run_prefix_sweep(pr, progress=(lambda done, _all: update(done))
                                       if update else None)
            fig = cost_figures(psw, prices, label)
            sha, text = psw.sha256, cost_table_text(fig)
        else:
            reqs = trace_requests(path, lines)
            steps = sweep_steps(sweep_capacities(reqs.distinct))
            with delayed_bar(steps, "routing sweep", quiet) as update:
                sw = run_sweep(reqs, progress=(lambda done, _all: update(done))
                               if update else None)
            fig = routing_figures(sw, label)
            sha, text = sw.sha256, table_text(sw)
    except (TraceError, PlacementError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    elapsed = time.perf_counter() - start
    if as_json:
        json.dump(fig, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        click.echo(f"trace {label}  sha256 {sha}")
        click.echo(text, nl=False)
    click.echo(f"sweep time (not a figure): {elapsed:.2f} s", err=as_json)
    if out is not None:
        try:
            written = (write_cost(out, fig) if semantics == "prefix"
                       else write_routing(out, sw, label))
        except OSError as exc:
            raise click.ClickException(f"{exc.filename or out}: cannot write the routing "
                                       f"table: {exc.strerror or exc}") from None
        for p in written:
            click.echo(f"wrote {p}", err=as_json)


@main.command("windows")
@click.option("--trace", "trace_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Trace file (default: the shared Mooncake trace).")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Record to write (default: the committed data/placement/windows.json).")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True),
              default=Ladder.time_limit, show_default=True,
              help="CP-SAT limit per window, in deterministic seconds (its count of work).")
@click.option("--first-line", type=click.IntRange(min=1), default=1, show_default=True,
              help="First line of every window (1-based).")
@click.option("--first-lines", type=click.IntRange(min=1), default=256, show_default=True,
              help="Lines of the first window; each next window has twice as many.")
@click.option("--max-lines", type=click.IntRange(min=1), default=None,
              help="Lines of the largest window tried (default: to the trace's end).")
@click.pass_obj
def windows_cmd(root: Path, trace_path: Path | None, out: Path | None, time_limit: float,
                first_line: int, first_lines: int, max_lines: int | None) -> None:
    """Solve pooled placement exactly (CP-SAT, one worker) on growing windows of the trace
    at half their wall capacity, until one is not proved OPTIMAL in the time limit; write
    the record that the certificate re-checks."""
    path = trace_path or mooncake_trace(root)
    out = out or (root / WINDOWS_PATH)
    try:  # before solving: a bad output path fails now, not minutes later
        check_can_write(out)
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or out}: cannot write the record there: "
                                   f"{exc.strerror or exc}") from None
    shared = mooncake_trace(root)
    named = TRACE_INPUT_PATH if shared.is_file() and path.resolve() == shared.resolve() \
        else str(path)

    def report(entry: dict[str, object]) -> None:
        click.echo(f"lines {entry['first_line']}-{entry['last_line']}: "
                   f"{entry['references']} references, wall {entry['distinct_blocks']}, "
                   f"capacity {entry['capacity']} (wall capacity {entry['wall_capacity']}): "
                   f"{entry['status']} objective {entry['objective']} bound {entry['bound']} "
                   f"in {entry['solve_seconds']} s")

    try:
        ladder = Ladder(first_line=first_line, first_lines=first_lines, max_lines=max_lines,
                        time_limit=time_limit)
        record = run_ladder(path, ladder, named, report)
        write_record(out, record)
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or out}: cannot write the record: "
                                   f"{exc.strerror or exc}") from None
    click.echo(f"total {record['total_seconds']} s; wrote {out}")


@main.command("evidence")
@click.pass_obj
def evidence_cmd(root: Path) -> None:
    """Print the evidence (figures and inputs) of the result as JSON."""
    try:
        with progress_line("placement evidence: solving and re-checking"):
            ev = evidence(root)
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    doc = {"figures": ev.figures,
           "inputs": [{"path": i.path, "sha256": i.sha256} for i in ev.inputs]}
    json.dump(doc, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
