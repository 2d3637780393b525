"""``pytools ceiling``: the ceiling, policy simulations, exact all-capacity curves,
sweeps, sharded and sampled analyses, and the Lean instance of a trace file.

Every command prints the input's path and SHA-256 first; a bad input ends in one line naming
the file (and the line) and a non-zero exit, never a traceback, with nothing half-written.
"""

from __future__ import annotations

import contextlib
import csv
import io
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any, BinaryIO

import click

from pytools.paths import project_root
from pytools.traces.output import OutputError, write_outputs
from pytools.traces.policies import POLICIES, simulate
from pytools.traces.prefix_kernel import KernelUnavailable
from pytools.traces.progress import progress_bar
from pytools.traces.trace import (
    TraceError,
    Window,
    count_distinct,
    percent_str,
    read_stream,
    require_references,
)

# ----------------------------------------------------------------------------- helpers


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


@contextlib.contextmanager
def _errors() -> Iterator[None]:
    """Bad input and failed outputs become one clear line and exit status 1."""
    try:
        yield
    except (TraceError, OutputError, KernelUnavailable) as exc:
        raise _fail(exc) from None
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise _fail(RuntimeError(f"{where}{exc.strerror or exc}")) from None


def _window(ctx: click.Context, param: click.Parameter, value: str | None) -> Window | None:
    if value is None:
        return None
    try:
        return Window.parse(value)
    except TraceError as exc:
        raise click.BadParameter(str(exc)) from None


def _header(file: Path, sha256: str, window: Window | None) -> None:
    click.echo(f"file: {file}")
    click.echo(f"sha256: {sha256}")
    if window:
        click.echo(f"window: {window.label} (1-based, inclusive; sha256 is the whole file's)")


window_option = click.option(
    "--window", "window", metavar="START:END", default=None, callback=_window,
    help="Only lines START..END of FILE (1-based, inclusive).")
quiet_option = click.option("--quiet", "-q", is_flag=True,
                            help="No progress bar (it only shows on a terminal anyway).")
file_argument = click.argument("file", type=click.Path(path_type=Path, dir_okay=False))


@click.group()
def main() -> None:
    """Demand-fetch hit ceiling of a Mooncake JSONL trace (``.jsonl`` or ``.jsonl.gz``)."""


# ----------------------------------------------------------------------------- commands


@main.command("count")
@file_argument
@window_option
@quiet_option
def count_cmd(file: Path, window: Window | None, quiet: bool) -> None:
    """Counts and the hit-rate ceiling (references - distinct) / references of FILE."""
    from pytools.traces.trace import ceiling_counts

    with _errors(), progress_bar(file, quiet) as progress:
        c = ceiling_counts(file, window, progress)
        if c.references == 0:
            raise TraceError(f"{file}: no block references (every request's hash_ids is "
                             "empty): the ceiling is undefined")
        ceiling = c.ceiling
    _header(file, c.sha256, window)
    click.echo(f"requests: {c.requests}")
    click.echo(f"references: {c.references}")
    click.echo(f"distinct: {c.distinct}")
    click.echo(f"max_hits: {c.max_hits}")
    click.echo(f"ceiling: {ceiling.numerator}/{ceiling.denominator} ({c.percent} %)")


@main.command("simulate")
@file_argument
@click.option("--capacity", "-k", type=click.IntRange(min=0), required=True,
              help="Cache capacity in blocks (0: nothing is stored, no hit).")
@click.option("--policy", type=click.Choice([*POLICIES, "all"]), default="all",
              show_default=True)
@window_option
@quiet_option
def simulate_cmd(file: Path, capacity: int, policy: str, window: Window | None,
                 quiet: bool) -> None:
    """Hit counts and rates of a policy (or all) at a capacity on FILE, by direct simulation
    (``curve`` gives LRU and OPT at every capacity at once)."""
    with _errors(), progress_bar(file, quiet) as progress:
        stream = read_stream(file, window, progress)
        require_references(stream.summary)
    refs = stream.summary.references
    distinct = count_distinct(stream.ids)
    ids = stream.ids.tolist()
    _header(file, stream.summary.sha256, window)
    click.echo(f"references: {refs}  distinct: {distinct}  capacity: {capacity}")
    top = percent_str(Fraction(refs - distinct, refs))
    click.echo(f"ceiling: {refs - distinct} hits ({top} %)")
    for name in POLICIES if policy == "all" else (policy,):
        hits = simulate(ids, capacity, name)
        click.echo(f"{name}: {hits} hits ({percent_str(Fraction(hits, refs))} %)")


@main.command("sweep")
@file_argument
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              required=True, help="Folder for sweep.csv, sweep.svg, sweep.png.")
@window_option
@quiet_option
def sweep_cmd(file: Path, out_dir: Path, window: Window | None, quiet: bool) -> None:
    """Hit rate against capacity for LRU and OPT, with the ceiling (CSV + SVG + PNG)."""
    from .plot_worker import plot_worker

    with _errors(), plot_worker() as plotter, progress_bar(file, quiet) as progress:
        from pytools.traces.curve import (
            compute_curve,  # after the fork: the plot worker needs no numba
        )
        from pytools.traces.output import check_folder, write_outputs

        from .sweep import sweep_outputs

        check_folder(out_dir)
        summary, curve = compute_curve(file, window, progress)
        _header(file, summary.sha256, window)
        written = write_outputs(out_dir, sweep_outputs(summary, curve, str(file),
                                                       plotter=plotter))
    for w in written:
        click.echo(f"wrote {w.path}  sha256 {w.sha256}")


def _budget(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
            ) -> tuple[tuple[str, float], ...]:
    out = []
    for text in value:
        t = text.strip()
        unit = "GiB" if t.lower().endswith("gib") else "blocks"
        number = t[:-3] if unit == "GiB" else t
        try:
            amount = float(number) if unit == "GiB" else int(number)
        except ValueError:
            raise click.BadParameter(f"{text!r}: expected blocks (an integer) or a size "
                                     "such as 64GiB") from None
        if amount < 0:
            raise click.BadParameter(f"{text!r}: a budget cannot be negative")
        out.append((unit, amount))
    return tuple(out)


@main.command("curve")
@file_argument
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              required=True, help="Folder for curve.csv, curve.svg, curve.png "
              "(prefix: prefix.csv; with --plot, prefix.svg and prefix.png).")
@click.option("--semantics", type=click.Choice(["flat", "prefix"]), default="flat",
              show_default=True,
              help="flat (the default): every block hits on its own, LRU and OPT; prefix: a "
              "request hits only the leading run of its cached blocks (radix LRU, as engines "
              "serve: flat LRU over tail-first touches, proved equal at every capacity for "
              "chained ids; kvcache-simulator's variant agrees from the longest request on, "
              "tested).")
@click.option("--weight", type=click.Choice(["tokens", "blocks"]), default=None,
              help="prefix only: count tokens (from input_length; the default) or blocks.")
@click.option("--warmup-fraction", type=click.FloatRange(0.0, 1.0), default=None,
              help="prefix only: count hits only on requests after the first "
              "floor(F x requests) (the cache is warm from the first); default 0.")
@click.option("--bytes-per-token", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="prefix only: KV bytes a token (512-token blocks): adds capacity_bytes to "
              "prefix.csv and sizes GiB budgets.")
@click.option("--budget", "budgets", multiple=True, callback=_budget,
              metavar="BLOCKS|SIZEGiB",
              help="prefix only, repeatable: print the hits at this capacity, in blocks or "
              "as a byte budget (e.g. 64GiB, needs --bytes-per-token).")
@click.option("--plot/--no-plot", "plot", default=None,
              help="Draw the plot (SVG and PNG) beside the table. Default: on for flat "
              "semantics, off for prefix (prefix.csv alone, without loading matplotlib: the "
              "fast path; --plot adds prefix.svg and prefix.png).")
@window_option
@quiet_option
def curve_cmd(file: Path, out_dir: Path, semantics: str, weight: str | None,
              warmup_fraction: float | None, bytes_per_token: float | None,
              budgets: tuple[tuple[str, float], ...], plot: bool | None, window: Window | None,
              quiet: bool) -> None:
    """Exact hits at every capacity 1..distinct of FILE, in one pass. Flat semantics (the
    default): LRU and OPT (``curve.csv``: capacity,lru_hits,opt_hits; and the plot). Prefix
    semantics: radix-LRU prefix hits (``prefix.csv``: capacity,lru_hit_tokens,
    measured_tokens,...; with ``--plot``, the plot with the ceiling and the flat count)."""
    if semantics == "prefix":
        _prefix_curve(file, out_dir, weight or "tokens", warmup_fraction or 0.0,
                      bytes_per_token, budgets, window, quiet, bool(plot))
        return
    if weight or warmup_fraction is not None or bytes_per_token or budgets:
        raise click.UsageError("--weight, --warmup-fraction, --bytes-per-token and --budget "
                               "need --semantics prefix")
    plot = plot is not False
    workers: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if plot:
        from .plot_worker import plot_worker

        workers = plot_worker()
    with _errors(), workers as plotter, progress_bar(file, quiet) as progress:
        from pytools.traces.curve import (
            compute_curve,  # after the fork: the plot worker needs no numba
        )
        from pytools.traces.output import check_folder, write_outputs

        from .sweep import counts_from, curve_outputs

        check_folder(out_dir)
        summary, curve = compute_curve(file, window, progress)
        _header(file, summary.sha256, window)
        counts = counts_from(summary, curve)
        written = write_outputs(out_dir, curve_outputs(summary, curve, str(file), plotter,
                                                       plot))
    click.echo(f"references: {counts.references}  distinct: {counts.distinct}  "
               f"ceiling: {counts.max_hits} hits ({counts.percent} %)")
    for w in written:
        click.echo(f"wrote {w.path}  sha256 {w.sha256}")


def _prefix_curve(file: Path, out_dir: Path, weight: str, warmup_fraction: float,
                  bytes_per_token: float | None, budgets: tuple[tuple[str, float], ...],
                  window: Window | None, quiet: bool, plot: bool) -> None:
    """``curve --semantics prefix``: the prefix curve, its outputs (the plot only with
    ``plot``: no plot worker, no matplotlib otherwise) and the asked budgets."""
    if any(unit == "GiB" for unit, _ in budgets) and not bytes_per_token:
        raise click.UsageError("a GiB budget needs --bytes-per-token")
    workers: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if plot:
        from .plot_worker import plot_worker

        workers = plot_worker()
    with _errors(), workers as plotter, progress_bar(file, quiet) as progress:
        from pytools.traces.output import check_folder, write_outputs
        from pytools.traces.prefix import budget_blocks, compute_prefix_curve

        from .prefix_out import percent_of, prefix_outputs

        check_folder(out_dir)
        summary, curve = compute_prefix_curve(file, weight, warmup_fraction, window, progress)
        _header(file, summary.sha256, window)
        written = write_outputs(out_dir, prefix_outputs(summary, curve, str(file), plotter,
                                                        bytes_per_token, plot=plot))
    unit = weight
    click.echo(f"requests: {curve.requests} (warm-up {curve.warmup_requests})  references: "
               f"{curve.references}  distinct: {curve.distinct}  longest request: "
               f"{curve.longest} blocks")
    click.echo(f"measured {unit}: {curve.measured}  prefix ceiling: {curve.ceiling} "
               f"({percent_of(curve.ceiling, curve.measured)} %)")
    for kind, amount in budgets:
        blocks = (budget_blocks(amount * 2**30, bytes_per_token or 1.0) if kind == "GiB"
                  else int(amount))
        hits = curve.at(blocks)
        size = f" ({amount:g} GiB)" if kind == "GiB" else ""
        note = "" if blocks >= curve.longest else "  (below the longest request: flat LRU)"
        click.echo(f"capacity {blocks} blocks{size}: {hits} {unit} "
                   f"({percent_of(hits, curve.measured)} %){note}")
    for w in written:
        click.echo(f"wrote {w.path}  sha256 {w.sha256}")


@main.command("lean-instance")
@file_argument
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Repository root to write under (default: the project root).")
def lean_instance_cmd(file: Path, root: Path | None) -> None:
    """Generate the Lean module of the claim's window from FILE, under --root (the committed
    module, from the shared trace: ``pytools regenerate demand-fetch-ceiling``)."""
    from pytools.results.regenerate import regenerate_files

    from .result import window_file

    regenerate_files([window_file(file)], root or project_root(), check=False)


# ----------------------------------------------------------------------------- at scale


def _ceiling_lines(c, label: str, sha: str, files: int) -> list[str]:  # type: ignore[no-untyped-def]
    ceiling = c.ceiling
    return [f"folder: {label}", f"shards: {files}",
            f"sha256: {sha}  (sha256 of the shards' `sha256sum` listing, in name order)",
            f"requests: {c.requests}", f"references: {c.references}",
            f"distinct: {c.distinct}", f"max_hits: {c.max_hits}",
            f"ceiling: {ceiling.numerator}/{ceiling.denominator} ({c.percent} %)"]


@main.command("shards-ceiling")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@click.option("--engine", type=click.Choice(["duckdb", "dask"]), default="duckdb",
              show_default=True, help="DuckDB (out of core, one machine) or Dask.")
@click.option("--memory-limit", default="512MB", show_default=True,
              help="DuckDB: memory before it spills to disk.")
@click.option("--scheduler", default=None,
              help="Dask: scheduler address (default: a local cluster on loopback).")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Dask: local worker processes.")
@click.option("--parts", type=click.IntRange(min=1), default=8, show_default=True,
              help="Dask: block-hash partitions.")
def shards_ceiling_cmd(folder: Path, engine: str, memory_limit: str,
                       scheduler: str | None, workers: int, parts: int) -> None:
    """The ceiling over every JSONL (.jsonl, .jsonl.gz) or Parquet shard of FOLDER."""
    from .scale import dask_counts, duckdb_counts, find_shards

    try:
        shards = find_shards(folder)
        if engine == "duckdb":
            c = duckdb_counts(folder, memory_limit=memory_limit)
        else:
            c = dask_counts(folder, scheduler=scheduler, workers=workers, parts=parts)
        if c.references == 0:
            raise TraceError(f"{folder}: no block references: the ceiling is undefined")
        lines = _ceiling_lines(c, str(folder), c.sha256, len(shards.files))
    except (TraceError, OutputError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"engine: {engine}")
    for line in lines:
        click.echo(line)

@main.command("sampled-curve")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--rate", type=float, default=0.01, show_default=True,
              help="SHARDS sampling rate R in (0, 1].")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              required=True, help="Folder for sampled-curve.csv.")
@click.option("--exact/--no-exact", default=False,
              help="Also compute the exact curve and print the sample's error.")
@click.option("--window", "window_spec", metavar="START:END", default=None,
              help="Only lines START..END of FILE (1-based, inclusive).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def sampled_curve_cmd(file: Path, rate: float, out_dir: Path, exact: bool,
                      window_spec: str | None, quiet: bool) -> None:
    """SHARDS: LRU and OPT hit rates at every capacity estimated from a spatial sample
    (block-hash below R); for traces too large to simulate exactly."""
    from pytools.traces.curve import compute_curve
    from pytools.traces.output import check_folder

    from .plot import Source, plot_capacities
    from .scale import sample_error, sampled_curve

    try:
        window = Window.parse(window_spec) if window_spec else None
        check_folder(out_dir)
        with progress_bar(file, quiet) as progress:
            sha, est = sampled_curve(file, rate, window, progress)
        source = Source(str(file), sha, window)
        caps = plot_capacities(est.distinct_estimate, points=2000)
        lru, opt = est.hit_rates(caps)

        def table(handle: BinaryIO) -> None:
            buf = io.StringIO()
            for line in source.comment_lines():
                buf.write(line + "\n")
            buf.write(f"# SHARDS: rate {est.rate:.8f}, {est.sampled_references} of "
                      f"{est.references} references sampled; SHARDS_adj estimates\n")
            w = csv.writer(buf, lineterminator="\n")
            w.writerow(["capacity", "lru_hit_rate_est", "opt_hit_rate_est"])
            for c, a, b in zip(caps.tolist(), lru.tolist(), opt.tolist(), strict=True):
                w.writerow([c, f"{a:.6f}", f"{b:.6f}"])
            handle.write(buf.getvalue().encode("utf-8"))

        click.echo(f"file: {file}")
        click.echo(f"sha256: {sha}")
        if window:
            click.echo(f"window: {window.label}")
        click.echo(f"rate: {est.rate:.8f}  sampled references: {est.sampled_references} "
                   f"of {est.references}  distinct (estimated): {est.distinct_estimate}")
        if exact:
            summary, curve = compute_curve(file, window)
            e = sample_error(curve, est)
            click.echo(f"error vs exact (percentage points of hit rate): "
                       f"LRU mean {e.lru_mean:.3f} max {e.lru_max:.3f} "
                       f"(capacity >= 10/R: {e.lru_max_large:.3f}); "
                       f"OPT mean {e.opt_mean:.3f} max {e.opt_max:.3f} "
                       f"(capacity >= 10/R: {e.opt_max_large:.3f})")
        written = write_outputs(out_dir, {"sampled-curve.csv": table})
    except (TraceError, OutputError) as exc:
        raise click.ClickException(str(exc)) from None
    for wr in written:
        click.echo(f"wrote {wr.path}  sha256 {wr.sha256}")


@main.command("prefix-optima")
@click.option("--trace", "trace_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Trace file (default: the shared Mooncake trace).")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Record to write (default: the committed data/ceiling/prefix_optima.json).")
@click.option("--kvsim-python", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Python of kvcache-simulator's venv (default: "
              ".venv-kvsim/bin/python; bash .ci/kvsim/install.sh).")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True, help="CP-SAT limit per window, in deterministic seconds.")
@click.option("--first-line", "first_line", type=click.IntRange(min=1), multiple=True,
              default=(1, 4001, 8001), show_default=True,
              help="Where the windows start (repeatable).")
@click.option("--first-lines", type=click.IntRange(min=1), default=32, show_default=True,
              help="Lines of the first window; each next window has twice as many.")
@click.option("--max-lines", type=click.IntRange(min=1), default=2048, show_default=True)
def prefix_optima_cmd(trace_path: Path | None, out: Path | None, kvsim_python: Path | None,
                      time_limit: float, first_line: tuple[int, ...], first_lines: int,
                      max_lines: int) -> None:
    """Solve the prefix-cache optimum exactly (CP-SAT, one worker) on growing windows of the
    trace at half their prefix wall capacity, with kvcache-simulator's optimal and LRU at the
    same capacities, until one is not proved OPTIMAL, and the simulator on the whole trace at
    its default budgets; write the record certify re-checks."""
    from pytools.files import check_can_write
    from pytools.paths import mooncake_trace
    from pytools.results.records import write_record
    from pytools.traces.trace import TRACE_INPUT_PATH, read_trace

    from .prefix_optima import Ladder, find_simulator, run_ladder
    from .prefix_optima_record import PREFIX_OPTIMA_PATH, PrefixOptimaError

    root = project_root()
    path = trace_path or mooncake_trace(root)
    out = out or (root / PREFIX_OPTIMA_PATH)
    shared = mooncake_trace(root)
    named = (TRACE_INPUT_PATH if shared.is_file() and path.resolve() == shared.resolve()
             else str(path))

    def report(e: dict[str, object]) -> None:
        click.echo(f"lines {e['first_line']}-{e['last_line']}: {e['references']} references, "
                   f"{e['distinct_blocks']} distinct, capacity {e['capacity']} (prefix wall "
                   f"capacity {e['prefix_wall_capacity']}): {e['status']} {e['objective']} "
                   f"hits (bound {e['bound']}) in {e['solve_seconds']} s; simulator "
                   f"{e['simulator']}")

    try:
        check_can_write(out)  # before solving: a bad output path fails now
        sim = find_simulator(kvsim_python or root / ".venv-kvsim/bin/python")
        trace = read_trace(path)
        ladder = Ladder(starts=first_line, first_lines=first_lines, max_lines=max_lines,
                        time_limit=time_limit)
        record = run_ladder(trace.requests, trace.sha256, named, ladder, sim, report)
        record["whole_trace"] = sim[0].whole_trace(path, named)
        write_record(out, record)
    except (PrefixOptimaError, TraceError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or out}: {exc.strerror or exc}") from None
    click.echo(f"total {record['total_seconds']} s; wrote {out}")
