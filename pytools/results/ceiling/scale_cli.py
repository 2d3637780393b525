"""The commands of :mod:`.scale`: ``shards-ceiling`` (DuckDB or Dask over a folder of shards)
and ``sampled-curve`` (SHARDS), registered on the ``pytools ceiling`` group."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import BinaryIO

import click

from pytools.traces.output import OutputError, write_outputs
from pytools.traces.trace import TraceError, Window


def _ceiling_lines(c, label: str, sha: str, files: int) -> list[str]:  # type: ignore[no-untyped-def]
    ceiling = c.ceiling
    return [f"folder: {label}", f"shards: {files}",
            f"sha256: {sha}  (sha256 of the shards' `sha256sum` listing, in name order)",
            f"requests: {c.requests}", f"references: {c.references}",
            f"distinct: {c.distinct}", f"max_hits: {c.max_hits}",
            f"ceiling: {ceiling.numerator}/{ceiling.denominator} ({c.percent} %)"]


def register(main: click.Group) -> None:
    """Add the commands to ``main``."""

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
        from pytools.traces.progress import progress_bar

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
