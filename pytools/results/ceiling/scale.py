"""Past one machine: the ceiling over a folder of trace shards, and sampled curves.

* :func:`duckdb_counts`: requests, references and distinct blocks of a folder of JSONL
  (``.jsonl``, ``.jsonl.gz``) or Parquet shards through DuckDB, out of core (a memory limit
  and a spill folder; ``count(DISTINCT ...)`` is exact, not a sketch).
* :func:`dask_counts`: the same through a Dask cluster: each shard is read by a worker and
  its distinct blocks split by a hash of the block id into partitions; partition p of every
  shard goes to one task, so distinct sets never overlap and the distinct count is a sum.
* :func:`sampled_curve`: SHARDS (Waldspurger et al., FAST'15): keep the references whose
  block hash falls under a threshold (a spatial sample at rate R: every reference of a kept
  block, none of the others), compute the exact curve of the sample, and read the full
  trace's hit rate at capacity c off the sample's at capacity floor(c R). The same hash
  partitions blocks across workers, so each partition is itself a sample.

The ceiling needs only counts, which do not depend on order; a curve depends on the order of
the references, so shards are taken in file-name order, lines in file order.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pytools.traces.curve import Curve, CurveEngine
from pytools.traces.trace import (
    CeilingCounts,
    Progress,
    TraceError,
    Window,
    require_references,
    scan_trace,
)

#: Shard file names the folder readers take.
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
PARQUET_SUFFIX = ".parquet"

#: Sampling hashes are compared below ``rate * 2**HASH_BITS``.
HASH_BITS = 24


# ----------------------------------------------------------------------------- shards


@dataclass(frozen=True)
class Shards:
    """The shard files of a folder, in name order, all of one format."""

    folder: Path
    files: tuple[Path, ...]
    fmt: str  # "jsonl" or "parquet"

    def digests(self) -> list[tuple[str, str]]:
        """``(file name, sha256)`` of every shard."""
        out = []
        for f in self.files:
            h = hashlib.sha256()
            with open(f, "rb") as handle:
                while block := handle.read(1 << 20):
                    h.update(block)
            out.append((f.name, h.hexdigest()))
        return out

    def sha256(self) -> str:
        """One digest for the set: SHA-256 of ``"<sha256>  <name>\\n"`` lines in name order
        (the format of ``sha256sum``, so it can be recomputed with standard tools)."""
        listing = "".join(f"{sha}  {name}\n" for name, sha in self.digests())
        return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def find_shards(folder: Path) -> Shards:
    """The JSONL or Parquet shards of ``folder`` (a clear error if none, or if mixed)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TraceError(f"{folder}: not a folder of shards")
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    jsonl = tuple(p for p in files if p.name.endswith(JSONL_SUFFIXES))
    parquet = tuple(p for p in files if p.name.endswith(PARQUET_SUFFIX))
    if jsonl and parquet:
        raise TraceError(f"{folder}: mixes JSONL and Parquet shards; keep one format")
    if not jsonl and not parquet:
        raise TraceError(f"{folder}: no shard (*.jsonl, *.jsonl.gz or *.parquet)")
    return Shards(folder, jsonl or parquet, "jsonl" if jsonl else "parquet")


def _sql_list(files: Sequence[Path]) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def _duckdb_source(shards: Shards) -> str:
    files = _sql_list(shards.files)
    if shards.fmt == "parquet":
        return f"read_parquet({files})"
    return (f"read_json({files}, format='newline_delimited', "
            "columns={'hash_ids': 'UBIGINT[]'})")


# ----------------------------------------------------------------------------- DuckDB


def duckdb_counts(folder: Path, memory_limit: str = "512MB", threads: int = 2,
                  spill: Path | None = None) -> CeilingCounts:
    """Requests, references and distinct blocks of every shard of ``folder`` through DuckDB,
    within ``memory_limit`` (spilling to ``spill``, a temporary folder by default); the
    SHA-256 is :meth:`Shards.sha256`."""
    import duckdb

    shards = find_shards(folder)
    src = _duckdb_source(shards)
    with tempfile.TemporaryDirectory(prefix="pytools-duckdb-") as tmp:
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = '{memory_limit}'")
            con.execute(f"SET threads = {int(threads)}")
            con.execute("SET preserve_insertion_order = false")
            con.execute(f"SET temp_directory = '{spill or tmp}'")
            (requests,) = con.execute(f"SELECT count(*) FROM {src}").fetchone()
            refs, distinct = con.execute(
                f"SELECT count(h), count(DISTINCT h) FROM (SELECT unnest(hash_ids) AS h "
                f"FROM {src})").fetchone()
        except duckdb.Error as exc:
            raise TraceError(f"{shards.folder}: DuckDB could not read the shards: "
                             f"{str(exc).splitlines()[0]}") from None
        finally:
            con.close()
    return CeilingCounts(requests=int(requests), references=int(refs or 0),
                         distinct=int(distinct or 0), sha256=shards.sha256())


# ----------------------------------------------------------------------------- hashing


def block_hash(ids: np.ndarray) -> np.ndarray:
    """A 64-bit mix of each block id (splitmix64's finaliser): sampling and partitioning
    keys that do not depend on how ids were numbered."""
    with np.errstate(over="ignore"):
        z = ids.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _read_shard(path: str, fmt: str) -> tuple[int, np.ndarray]:
    """``(requests, ids)`` of one shard (JSONL through the strict reader)."""
    if fmt == "parquet":
        import duckdb

        con = duckdb.connect(":memory:")
        try:
            src = f"read_parquet({_sql_list([Path(path)])})"
            (requests,) = con.execute(f"SELECT count(*) FROM {src}").fetchone()
            ids = con.execute(f"SELECT unnest(hash_ids) AS h FROM {src}").fetchnumpy()["h"]
        finally:
            con.close()
        return int(requests), np.asarray(ids, dtype=np.int64)
    chunks: list[np.ndarray] = []
    summary = scan_trace(Path(path), chunks.append)
    ids = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    return summary.requests, ids


def _shard_partitions(path: str, fmt: str, parts: int) -> tuple[int, int, list[np.ndarray]]:
    """A worker's map step: ``(requests, references, distinct ids of each partition)``."""
    requests, ids = _read_shard(path, fmt)
    uniq = np.unique(ids)
    owner = block_hash(uniq) % np.uint64(parts)
    return requests, int(ids.size), [uniq[owner == p] for p in range(parts)]


def _piece(mapped: tuple[int, int, list[np.ndarray]], part: int) -> np.ndarray:
    """Partition ``part`` of one shard's map result."""
    return mapped[2][part]


def _partition_distinct(*pieces: np.ndarray) -> int:
    """A worker's reduce step: distinct ids of one partition, over every shard."""
    return int(np.unique(np.concatenate(pieces)).size) if pieces else 0


# ----------------------------------------------------------------------------- Dask


def dask_counts(folder: Path, scheduler: str | None = None, workers: int = 2,
                parts: int = 8, timeout_s: float = 300.0) -> CeilingCounts:
    """The ceiling counts of ``folder`` on a Dask cluster: the scheduler at ``scheduler``, or a
    local cluster of ``workers`` processes on loopback that is shut down on return."""
    from dask.distributed import Client, LocalCluster, wait

    shards = find_shards(folder)
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address="127.0.0.1:0",
                               memory_limit="1GiB", silence_logs=50)
    try:
        with Client(scheduler or cluster, timeout=timeout_s) as client:
            maps = [client.submit(_shard_partitions, str(f), shards.fmt, parts, pure=False)
                    for f in shards.files]
            pieces = [[client.submit(_piece, m, p) for m in maps] for p in range(parts)]
            reduces = [client.submit(_partition_distinct, *pp) for pp in pieces]
            done = wait(maps + reduces, timeout=timeout_s)
            if done.not_done:
                raise TraceError(f"{folder}: the Dask computation did not finish in "
                                 f"{timeout_s:.0f} s")
            failed = [f for f in maps + reduces if f.status == "error"]
            if failed:
                exc = failed[0].exception()
                raise TraceError(str(exc)) if isinstance(exc, TraceError) else exc
            heads = client.gather(maps)
            distinct = sum(client.gather(reduces))
    finally:
        if cluster is not None:
            cluster.close()
    return CeilingCounts(requests=sum(h[0] for h in heads), references=sum(h[1] for h in heads),
                         distinct=int(distinct), sha256=shards.sha256())


# ----------------------------------------------------------------------------- SHARDS


@dataclass(frozen=True, eq=False)
class SampledCurve:
    """A SHARDS estimate of the LRU and OPT hit rates at every capacity 1..``distinct``."""

    rate: float  # the sampling rate asked for (threshold / 2**HASH_BITS)
    references: int  # of the full stream
    sampled_references: int
    sample: Curve  # the exact curve of the sample

    def hit_rates(self, capacities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Estimated LRU and OPT hit rates (fractions) at full-trace ``capacities``.

        SHARDS_adj: a reference is a hit at capacity c when its distance in the sample is at
        most floor(c R); the sample's hit counts are corrected by the difference between the
        expected sample size R N and the actual one (a hot block in or out of the sample
        shifts the count, mostly at the shortest distances) and divided by R N.
        """
        s = np.floor(np.asarray(capacities, dtype=np.float64) * self.rate).astype(np.int64)
        s = np.minimum(s, self.sample.distinct)
        expected = self.rate * self.references
        excess = expected - self.sampled_references
        lru = np.zeros(s.shape, dtype=np.float64)
        opt = np.zeros(s.shape, dtype=np.float64)
        ok = s >= 1
        if expected > 0:
            lru[ok] = (self.sample.lru_hits[s[ok] - 1] + excess) / expected
            opt[ok] = (self.sample.opt_hits[s[ok] - 1] + excess) / expected
        return np.clip(lru, 0.0, 1.0), np.clip(opt, 0.0, 1.0)

    @property
    def distinct_estimate(self) -> int:
        """The full trace's distinct blocks, estimated: the sample's over the rate."""
        return max(1, round(self.sample.distinct / self.rate))


def sample_threshold(rate: float) -> int:
    """The hash threshold of a sampling rate in (0, 1]."""
    if not 0 < rate <= 1:
        raise TraceError(f"sampling rate {rate} is not in (0, 1]")
    return max(1, round(rate * (1 << HASH_BITS)))


def sampled_curve(path: Path, rate: float, window: Window | None = None,
                  progress: Progress | None = None) -> tuple[str, SampledCurve]:
    """SHARDS at ``rate`` over the trace at ``path`` (one pass; the sample's ids are remapped
    densely, so memory follows the sample). Returns the file's SHA-256 and the estimate."""
    threshold = np.uint64(sample_threshold(rate))
    mask = np.uint64((1 << HASH_BITS) - 1)
    kept: list[np.ndarray] = []

    def keep(chunk: np.ndarray) -> None:
        kept.append(chunk[(block_hash(chunk) & mask) < threshold])

    summary = scan_trace(Path(path), keep, window, progress)
    require_references(summary)
    ids = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)
    kept.clear()
    _, dense = np.unique(ids, return_inverse=True)
    engine = CurveEngine(max(int(ids.size), 1) + 1)
    for start in range(0, dense.shape[0], 1 << 16):
        engine.feed(dense[start : start + (1 << 16)])
    lru, opt = engine.finish()
    sample = Curve(references=int(ids.size), distinct=int(lru.shape[0]), lru_hits=lru,
                   opt_hits=opt)
    est = SampledCurve(rate=float(threshold) / (1 << HASH_BITS),
                       references=summary.references, sampled_references=int(ids.size),
                       sample=sample)
    return summary.sha256, est


@dataclass(frozen=True)
class SampleError:
    """Absolute hit-rate error of a sampled curve against the exact one, in percentage
    points: the mean over every capacity 1..distinct (SHARDS' own measure), the maximum over
    every capacity, and the maximum over capacities of at least 10 / R blocks (below that a
    sample holds fewer than ten blocks, where SHARDS is known to be coarse)."""

    rate: float
    sampled_references: int
    lru_mean: float
    opt_mean: float
    lru_max: float
    opt_max: float
    lru_max_large: float
    opt_max_large: float


def sample_error(exact: Curve, est: SampledCurve) -> SampleError:
    """How far the sampled hit rates are from the exact ones, at every capacity."""
    caps = np.arange(1, exact.distinct + 1, dtype=np.int64)
    lru, opt = est.hit_rates(caps)
    d_lru = np.abs(lru - exact.lru_hits / exact.references) * 100
    d_opt = np.abs(opt - exact.opt_hits / exact.references) * 100
    large = caps >= 10 / est.rate
    if not large.any():
        large = caps == exact.distinct
    return SampleError(rate=est.rate, sampled_references=est.sampled_references,
                       lru_mean=float(d_lru.mean()), opt_mean=float(d_opt.mean()),
                       lru_max=float(d_lru.max()), opt_max=float(d_opt.max()),
                       lru_max_large=float(d_lru[large].max()),
                       opt_max_large=float(d_opt[large].max()))
