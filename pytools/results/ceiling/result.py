"""The published result ``demand-fetch-ceiling``: its theorems, its limits and its evidence,
computed from the shared Mooncake trace (whose SHA-256 the certificate records).

A demand-fetch cache only brings a block in when it is requested and missed, so the first
request of every distinct block is a miss, whatever the policy and the capacity:
``hits + distinct <= references`` (Lean: ``KVCache.Ceiling.hits_add_distinct_le_length``).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from pytools.paths import mooncake_trace, sha256_file
from pytools.results.spec import Evidence, InputFile, ResultSpec, svg_and_csv

from .lean_instance import kernel_counts
from .sweep import SweepRow, analysed, sweep_rows, write_sweep
from .trace import TRACE_INPUT_PATH, TraceError, percent_str

#: Id of the published result whose evidence :func:`evidence` computes.
RESULT_ID = "demand-fetch-ceiling"

#: Title of the published result.
RESULT_TITLE = "No cache beats the traffic: the demand-fetch hit ceiling (Mooncake trace)"

#: Fully qualified Lean theorems the result rests on (Proofs/Ceiling/*.lean), headline first:
#: Belady is optimal at every capacity and monotone in it, LRU is a stack algorithm, the
#: warm-start ceiling, the cold ceiling, the kernel's counts of the claim's window, and the
#: whole trace's ceiling fraction from Python's counts.
THEOREMS: tuple[str, ...] = (
    "KVCache.Ceiling.hits_le_belady_hits",
    "KVCache.Ceiling.belady_hits_mono",
    "KVCache.Ceiling.lru_cache_subset_succ",
    "KVCache.Ceiling.lru_hits_eq_countP_stackDistance_le",
    "KVCache.Ceiling.lru_hits_mono",
    "KVCache.Ceiling.lru_cacheAt_perm",
    "KVCache.Ceiling.warmHits_add_distinct_sdiff_le_length",
    "KVCache.Ceiling.warmHits_add_distinct_sdiff_eq_of_le",
    "KVCache.Ceiling.hits_add_distinct_le_length",
    "KVCache.Ceiling.hits_le_length_sub_distinct",
    "KVCache.Ceiling.hits_mul_le_of_ceiling_le",
    "KVCache.Ceiling.hits_eq_length_sub_distinct_of_distinct_le",
    "KVCache.Ceiling.evictions_eq_zero_of_distinct_le",
    "KVCache.Ceiling.hits_le_hits_of_distinct_le",
    "KVCache.Ceiling.belady_hits_eq_of_distinct_le",
    "KVCache.Ceiling.hits_eq_unbounded",
    "KVCache.Ceiling.Packed.count_spec",
    "KVCache.Ceiling.Mooncake.window_length_distinct",
    "KVCache.Ceiling.Mooncake.window_ceiling_fraction",
    "KVCache.Ceiling.Mooncake.window_hits_le",
    "KVCache.Ceiling.Mooncake.window_hit_rate_le_ceiling",
    "KVCache.Ceiling.Mooncake.ceiling_fraction",
    "KVCache.Ceiling.Mooncake.hit_rate_le_ceiling",
)

#: Limits under which the result holds, stated next to it.
RESULT_LIMITS: tuple[str, ...] = (
    "Per trace: the figures are those of one public trace (the Mooncake FAST'25 conversation "
    "trace, identified by its SHA-256), replayed as one block-reference stream in file order.",
    "Demand-fetch model: a block enters the cache only when it is requested and missed; "
    "prefetching, and admitting blocks computed elsewhere, are outside the model.",
    "Starting from an empty cache: the ceiling hits + distinct <= references, its fraction and "
    "every figure here are for a cold cache. From initial contents C, Lean proves the warm "
    "bound hits + |distinct(r) \\ C| <= |r| instead.",
    "The ceiling (references - distinct) / references bounds every policy, online or "
    "offline, at every capacity; it is reached exactly once the capacity is at least the "
    "number of distinct blocks.",
    "Belady's farthest-next-use rule is proved optimal at every capacity among the model's "
    "policies: any rule, which may see the whole stream, that admits every missed block and "
    "evicts only when the cache is full (no bypass; with bypass allowed an optimum can score "
    "more). The LRU and Belady hit counts below are Python simulations of these policies, not "
    "Lean computations.",
    "LRU is proved a stack algorithm (its cache at capacity k is contained in its cache at "
    "k + 1, its hits at k are the references of stack distance <= k); the LRU curve itself is "
    "simulated in Python.",
    "Blocks are the trace's remapped 512-token prefix-block hashes; equal ids are treated as "
    "reusable KV-cache blocks, with no model of tenants, eviction cost or block size.",
    "The Lean kernel counts the references and distinct blocks of the claim's window (lines "
    "1201-2000 of the trace file: kernel_counts, first row) from a packed copy of its stream "
    "that pytools regenerates from the hashed file and compares byte for byte; the counting "
    "pass keeps a bitmap of old blocks and checks that newer ones arrive in first-occurrence "
    "order. The whole trace's counts (the top-level requests, references, distinct and "
    "ceiling; kernel_counts, second row) are computed in Python only: Lean checks their "
    "ceiling fraction, not the counts. The policy hits and the sweep are Python simulations.",
)


#: Capacities whose LRU/Belady hits the evidence states (plus the number of distinct blocks).
EVIDENCE_CAPACITIES: tuple[int, ...] = (1024, 16384, 65536)


# ----------------------------------------------------------------------------- evidence


def evidence(root: Path) -> Evidence:
    """Figures of the result ``demand-fetch-ceiling``, computed from the shared trace."""
    path = mooncake_trace(root)
    if not path.is_file():
        raise TraceError(f"{path}: the Mooncake trace is absent (see data/mooncake/README.md)")
    sha = sha256_file(path)
    trace, counts, sweep = analysed(str(path), sha)
    refs = counts.references
    stated = sorted({c for c in EVIDENCE_CAPACITIES if c < counts.distinct} | {counts.distinct})
    stated_rows = sweep_rows(trace.stream, stated)

    def row_dict(row: SweepRow) -> dict[str, object]:
        return {
            "capacity": row.capacity,
            "lru_hits": row.lru_hits,
            "belady_hits": row.belady_hits,
            "lru_percent": percent_str(Fraction(row.lru_hits, refs)),
            "belady_percent": percent_str(Fraction(row.belady_hits, refs)),
        }

    figures: dict[str, object] = {
        "requests": counts.requests,
        "references": refs,
        "distinct": counts.distinct,
        "max_hits": counts.max_hits,
        "ceiling_numerator": counts.ceiling.numerator,
        "ceiling_denominator": counts.ceiling.denominator,
        "ceiling_percent": counts.percent,
        "policy_hits": [row_dict(r) for r in stated_rows],
        "sweep": [row_dict(r) for r in sweep],
        "kernel_counts": kernel_counts(root, path),
    }
    return Evidence(figures=figures, inputs=(InputFile(path=TRACE_INPUT_PATH, sha256=sha),))


def artifacts(root: Path, out: Path) -> list[Path]:
    """The sweep's table and plot, as published next to the certificate."""
    return svg_and_csv(write_sweep(mooncake_trace(root), out))


SPEC = ResultSpec(
    id=RESULT_ID,
    title=RESULT_TITLE,
    theorems=THEOREMS,
    limits=RESULT_LIMITS,
    evidence=evidence,
    artifacts=artifacts,
)
