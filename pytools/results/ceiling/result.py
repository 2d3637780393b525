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
from pytools.results.generated import Generated, regenerate_command
from pytools.results.spec import Evidence, InputFile, ResultSpec, svg_and_csv
from pytools.traces.curve import Curve
from pytools.traces.output import write_outputs
from pytools.traces.prefix import compute_prefix_curve
from pytools.traces.trace import (
    CLAIM_WINDOW,
    TRACE_INPUT_PATH,
    CeilingCounts,
    ScanSummary,
    TraceError,
    TraceRead,
    Window,
    percent_str,
    read_trace,
)

from .bypass_table import BYPASS_THEOREMS, bypass_figures, bypass_rows
from .lean_instance import (
    CLAIM_LINES,
    TRACE_MODULE,
    WINDOW_MODULE,
    StreamCounts,
    counts_of_requests,
    lean_instance,
    stated_constants,
    trace_module,
)
from .prefix_optima_out import prefix_figure_outputs
from .prefix_optima_record import PREFIX_OPTIMA_PATH, PrefixOptimaError, prefix_optima_evidence
from .prefix_theorems import PREFIX_THEOREMS
from .sweep import SweepRow, analysed, counts_from, sweep_capacities, sweep_outputs, sweep_rows

#: Id of the published result whose evidence :func:`evidence` computes.
RESULT_ID = "demand-fetch-ceiling"

#: Title of the published result.
RESULT_TITLE = "No cache beats the traffic: the demand-fetch hit ceiling (Mooncake trace)"

#: Fully qualified Lean theorems the result rests on (Proofs/Ceiling/*.lean), headline first:
#: Belady is optimal at every capacity and monotone in it, Belady with bypass is optimal at
#: every capacity among policies that may decline to store a missed block (and at least
#: Belady without bypass; Proofs/Ceiling/Bypass.lean), LRU is a stack algorithm, the
#: warm-start ceiling (from contents C, and on a window after the lines before it), the cold
#: ceiling, capacity 0 storing nothing, the kernel's counts of the claim's window (cold), of
#: the window after the lines before it (warm) and of the whole trace, and their ceilings;
#: then the prefix (radix) caches' bounds (:data:`PREFIX_THEOREMS`, Proofs/Ceiling/Prefix*.lean).
THEOREMS: tuple[str, ...] = (
    "KVCache.Ceiling.hits_le_belady_hits",
    "KVCache.Ceiling.belady_hits_mono",
    *BYPASS_THEOREMS,
    "KVCache.Ceiling.lru_cache_subset_succ",
    "KVCache.Ceiling.lru_hits_eq_countP_stackDistance_le",
    "KVCache.Ceiling.lru_hits_mono",
    "KVCache.Ceiling.lru_cacheAt_perm",
    "KVCache.Ceiling.warmHits_add_distinct_sdiff_le_length",
    "KVCache.Ceiling.warmHits_add_distinct_sdiff_eq_of_le",
    "KVCache.Ceiling.hitsAfter_add_distinct_sdiff_le_length",
    "KVCache.Ceiling.hits_append",
    "KVCache.Ceiling.hits_add_distinct_le_length",
    "KVCache.Ceiling.hits_le_length_sub_distinct",
    "KVCache.Ceiling.hits_mul_le_of_ceiling_le",
    "KVCache.Ceiling.hits_eq_length_sub_distinct_of_distinct_le",
    "KVCache.Ceiling.evictions_eq_zero_of_distinct_le",
    "KVCache.Ceiling.hits_le_hits_of_distinct_le",
    "KVCache.Ceiling.belady_hits_eq_of_distinct_le",
    "KVCache.Ceiling.hits_eq_unbounded",
    "KVCache.Ceiling.hits_zero",
    "KVCache.Ceiling.Packed.count_spec",
    "KVCache.Ceiling.Mooncake.window_length_distinct",
    "KVCache.Ceiling.Mooncake.window_ceiling_fraction",
    "KVCache.Ceiling.Mooncake.window_hits_le",
    "KVCache.Ceiling.Mooncake.window_hit_rate_le_ceiling",
    "KVCache.Ceiling.Packed.runsRun_spec",
    "KVCache.Ceiling.Packed.length_distinct_of_runs",
    "KVCache.Ceiling.Packed.length_distinct_sdiff_of_runs",
    "KVCache.Ceiling.Mooncake.trace_eq_append",
    "KVCache.Ceiling.Mooncake.traceWindow_length_new",
    "KVCache.Ceiling.Mooncake.warm_ceiling_fraction",
    "KVCache.Ceiling.Mooncake.warm_window_hits_le",
    "KVCache.Ceiling.Mooncake.warm_window_hit_rate_le_ceiling",
    "KVCache.Ceiling.Mooncake.trace_length_distinct",
    "KVCache.Ceiling.Mooncake.ceiling_fraction",
    "KVCache.Ceiling.Mooncake.hit_rate_le_ceiling",
    *PREFIX_THEOREMS,
)

#: Limits under which the result holds, stated next to it.
RESULT_LIMITS: tuple[str, ...] = (
    "Per trace: the figures are those of one public trace (the Mooncake FAST'25 conversation "
    "trace, identified by its SHA-256), replayed as one block-reference stream in file order.",
    "Demand-fetch model: a block enters the cache only when it is requested and missed; "
    "prefetching, and admitting blocks computed elsewhere, are outside the model.",
    "Starting from an empty cache: the ceiling hits + distinct <= references, its fraction and "
    "every figure here but window.warm_start are for a cold cache. From initial contents C, "
    "Lean proves the warm bound hits + |distinct(r) \\ C| <= |r| instead, and on a window "
    "served after the lines before it, hits + |distinct(window) \\ earlier blocks| <= "
    "|window|.",
    "The ceiling (references - distinct) / references bounds every policy, online or "
    "offline, at every capacity; it is reached exactly once the capacity is at least the "
    "number of distinct blocks.",
    "Belady's farthest-next-use rule is proved optimal at every capacity among the model's "
    "no-bypass policies: any rule, which may see the whole stream, that admits every missed "
    "block and evicts only when the cache is full. With bypass (a policy may decline to store "
    "a block that misses in a full cache), Belady with bypass (drop the block of the cache and "
    "the requested one whose next use is farthest) is proved optimal at every capacity "
    "(bhits_le_beladyBypass_bhits); every no-bypass policy is one of them "
    "(bhits_toBypass), so Belady without bypass scores at most Belady with bypass, strictly "
    "on [1, 2, 1] at capacity 1 (bypass_gains_example), equally once the capacity is at "
    "least the number of distinct blocks. The bypass class stores a missed block whenever "
    "there is room. A cache of capacity 0 stores nothing: every policy scores 0 hits there "
    "(hits_zero, bhits_zero), and every theorem for every capacity k includes that cache. "
    "The LRU, Belady and bypass hit counts below are computed in Python (exact stack "
    "distances, see curve_method; the bypass table by simulation, see bypass.method), not by "
    "Lean.",
    "The window figures replay lines 1201-2000 of the trace file alone, from an empty cache: "
    "they are the public claim's range, not the whole trace. A cache that served lines "
    "1-1200 first (as a running one has) faces the warm figure instead (window.warm_start: "
    "warm_window_hits_le, an instance of hitsAfter_add_distinct_sdiff_le_length whose counts "
    "the Lean kernel computes): blocks of the window requested before it need not miss, so "
    "its ceiling is about twice the cold one.",
    "LRU is proved a stack algorithm (its cache at capacity k is contained in its cache at "
    "k + 1, its hits at k are the references of stack distance <= k); the LRU curve itself is "
    "simulated in Python.",
    "Blocks are the trace's remapped 512-token prefix-block hashes; equal ids are treated as "
    "reusable KV-cache blocks, with no model of tenants, eviction cost or block size.",
    "The Lean kernel counts the references and distinct blocks of the claim's window (lines "
    "1201-2000 of the trace file: kernel_counts, first row) from a packed copy of its stream, "
    "and the whole trace's references and distinct blocks (kernel_counts, second row) and the "
    "window's distinct blocks absent from lines 1-1200 (window.warm_start) from a copy of the "
    "whole stream written as runs of consecutive blocks; pytools regenerates both copies from "
    "the hashed file, compares them byte for byte and checks that its own figures equal the "
    "counts the kernel-checked theorems state. The counting passes check that blocks arrive "
    "in first-occurrence order (the trace numbers them so). The number of requests (lines) "
    "is Python's. The policy hits and the sweep are Python simulations.",
    "Flat and prefix figures (see semantics): every figure but prefix_optima is flat, each "
    "block hitting on its own; engines (vLLM, SGLang, Mooncake) serve a request only the "
    "leading run of its cached blocks. prefix_optima is prefix (radix) semantics on windows "
    "replayed alone from an empty cache, in blocks: the CP-SAT optimum of every prefix "
    "cache with bypass (recorded, re-checked from its committed solution, not proved in "
    "Lean), next to the flat optimum (Belady with bypass, which bounds it: proved, "
    "runHits_le_beladyBypass_bhits) and the trace authors' kvcache-simulator (its "
    "optimal heuristic and its LRU, recorded); flat_run_prefix_hits replays Belady with "
    "bypass's own run as a prefix cache run, which, where it is one, makes the flat optimum "
    "the prefix optimum (a Python replay, not a Lean proof).",
    "Prefix caches in Lean (Proofs/Ceiling/Prefix*.lean): a request hits the leading run of "
    "its cached blocks, the cache stays closed under prefixes, any part of a missed tail may "
    "be stored. Every such run, any policy, bypass included, hits at most Belady with "
    "bypass's flat count from the same cache (runHits_le_beladyBypass_bhits), so the window, "
    "warm-window and whole-trace ceilings bound prefix caches too "
    "(window_prefix_hit_rate_le_ceiling, prefix_hit_rate_le_ceiling). With chained ids (a "
    "block has one parent) and no block repeated in a request, radix LRU (evict the least "
    "recently used leaf, possibly of the request just stored) holds exactly flat LRU's blocks "
    "over tail-first touches at every capacity (radixLru_mem_iff_tailFirstLru), its caches "
    "are the top k of one LRU stack and its hits grow with k (runHits_stackCaches_le_succ). "
    "Not proved: that the engine's variant that never evicts the request's own blocks is "
    "equal (checked on instances and by random search only), and that the Python prefix "
    "curve computes these theorems' counts (it is compared with kvcache-simulator instead); "
    "a cache that stores a request only when all of it fits is no stack algorithm "
    "(allOrNothing_not_stack_example).",
)

#: Which figures count hits flat (each block on its own) and which with prefix semantics.
SEMANTICS: dict[str, object] = {
    "flat": ["max_hits", "ceiling_numerator", "ceiling_denominator", "ceiling_percent",
             "policy_hits", "sweep", "bypass", "kernel_counts", "window"],
    "prefix": ["prefix_optima"],
    "flat_means": "a block hits when it is cached, whatever else of its request is",
    "prefix_means": "a request hits the longest leading run of its blocks that is cached; "
                    "the cache is closed under prefixes (a radix tree), as engines serve it",
}


#: Capacities whose LRU/Belady hits the evidence states (plus the number of distinct blocks).
EVIDENCE_CAPACITIES: tuple[int, ...] = (1024, 16384, 65536)

#: Capacities stated for the window: the one the claim cites for LRU (about 5.5 %), plus the
#: window's number of distinct blocks.
CLAIM_WINDOW_CAPACITIES: tuple[int, ...] = (1693,)

#: How the LRU and Belady (OPT) figures are computed, stated in the certificate.
CURVE_METHOD = (
    "exact stack distances in one pass (pytools.traces.curve): LRU by a Fenwick tree "
    "over reference times, OPT (Belady/MIN) by the track-assignment stack algorithm; hits at "
    "every capacity 1..distinct, read off at the stated capacities"
)


# ----------------------------------------------------------------------------- evidence


def window_file(trace: Path | None = None) -> Generated:
    """The generated window module, from the trace at ``trace`` (default: the shared
    Mooncake trace of the root it is generated under)."""
    return Generated(
        WINDOW_MODULE, regenerate_command(RESULT_ID),
        lambda root: lean_instance(read_trace(trace or mooncake_trace(root)), CLAIM_LINES))


#: The committed window module, generated from the shared trace.
WINDOW_FILE = window_file()


def trace_file(trace: Path | None = None) -> Generated:
    """The generated whole-trace module (the warm window and the whole trace, as runs), from
    the trace at ``trace`` (default: the shared Mooncake trace of the root)."""
    return Generated(
        TRACE_MODULE, regenerate_command(RESULT_ID),
        lambda root: trace_module(read_trace(trace or mooncake_trace(root)), CLAIM_LINES))


#: The committed whole-trace module, generated from the shared trace.
TRACE_FILE = trace_file()


#: The constants of the generated modules that Python's figures must equal: (module, Lean
#: constant) for the cold window, the warm window and the whole trace.
STATED = {
    "window_references": (WINDOW_MODULE, "windowReferences"),
    "window_distinct": (WINDOW_MODULE, "windowDistinct"),
    "warm_references": (TRACE_MODULE, "warmReferences"),
    "warm_new": (TRACE_MODULE, "warmNew"),
    "trace_references": (TRACE_MODULE, "traceReferences"),
    "trace_distinct": (TRACE_MODULE, "traceDistinct"),
}


def check_stated(root: Path, figures: dict[str, int]) -> None:
    """Raise :class:`TraceError` unless every figure equals the constant the committed module
    states for it (:data:`STATED`): the kernel-checked theorems then speak for the figures."""
    texts: dict[Path, dict[str, int]] = {}
    problems = []
    for key, value in figures.items():
        module, const = STATED[key]
        if module not in texts:
            texts[module] = stated_constants((Path(root) / module).read_text(encoding="utf-8"))
        stated = texts[module].get(const)
        if stated != value:
            problems.append(f"{module}: {const} is {stated}, Python counts {key} = {value}")
    if problems:
        raise TraceError("; ".join(problems))


def _count_row(stream: str, c: StreamCounts, computed_by: str, theorem: str | None
               ) -> dict[str, object]:
    return {
        "stream": stream,
        "requests": c.requests,
        "references": c.references,
        "distinct": c.distinct,
        "ceiling_numerator": c.ceiling.numerator,
        "ceiling_denominator": c.ceiling.denominator,
        "ceiling_percent": percent_str(c.ceiling),
        "computed_by": computed_by,
        "theorem": theorem,
    }


#: The Lean theorem of the warm window's bound on the trace (kernel-counted), an instance of
#: ``KVCache.Ceiling.hitsAfter_add_distinct_sdiff_le_length`` (``pre`` = the lines before it).
WARM_THEOREM = "KVCache.Ceiling.Mooncake.warm_window_hits_le"

#: The general theorem :data:`WARM_THEOREM` instantiates.
WARM_GENERAL_THEOREM = "KVCache.Ceiling.hitsAfter_add_distinct_sdiff_le_length"


def warm_start(trace: TraceRead, window: Window, cold: Fraction) -> dict[str, object]:
    """The claim's window after a warm-up on every line before it: the most hits any
    demand-fetch cache can score on the window once it has served lines 1..start-1 is
    ``references - |distinct(window) \\ blocks of those lines|`` (Lean:
    :data:`WARM_THEOREM`), beside ``cold``, the window's ceiling from an empty cache; counted
    here from the hashed trace (the evidence checks the counts against the kernel's,
    :func:`check_stated`)."""
    if window.start < 2:
        raise TraceError(f"window {window.label} has no lines before it to warm up on")
    before = {x for r in trace.window(1, window.start - 1) for x in r}
    stream = [x for r in trace.window(window.start, window.end) for x in r]
    if not stream:
        raise TraceError(f"{trace.name}: window {window.label} has no block references")
    blocks = set(stream)
    new = len(blocks - before)
    top = len(stream) - new
    ceiling = Fraction(top, len(stream))
    return {
        "label": f"the window {window.label} after a cache served lines 1-{window.start - 1} "
                 "first (from an empty cache), whatever they left cached",
        "prefix_first_line": 1,
        "prefix_last_line": window.start - 1,
        "references": len(stream),
        "distinct": len(blocks),
        "distinct_seen_before": len(blocks) - new,
        "distinct_new": new,
        "max_hits": top,
        "ceiling_numerator": ceiling.numerator,
        "ceiling_denominator": ceiling.denominator,
        "ceiling_percent": percent_str(ceiling),
        "cold_ceiling_percent": percent_str(cold),
        "computed_by": "Lean kernel: decide +kernel on KVCache.Ceiling.Packed.runsRun "
                       "(Proofs/Ceiling/MooncakeTrace.lean, traceWindow_length_new); Python's "
                       "count from the hashed trace equals it",
        "theorem": WARM_THEOREM,
        "general_theorem": WARM_GENERAL_THEOREM,
        "which": f"A running cache faces the warm figure ({percent_str(ceiling)} %): it has "
                 f"served the lines before the window. The cold {percent_str(cold)} % holds only "
                 "for a cache that starts the window empty.",
    }


def kernel_counts(root: Path, path: Path, trace: TraceRead | None = None
                  ) -> list[dict[str, object]]:
    """Who computed which counts: the claim's window and the whole trace, both counted by the
    Lean kernel, after checking that the committed modules are exactly the ones the trace at
    ``path`` gives and that Python's counts equal the constants their theorems state (else
    :class:`TraceError`: the Lean theorems would not speak for these figures). The trace is
    read once (or given as ``trace``), for the modules and the counts."""
    trace = trace or read_trace(path)
    problems = WINDOW_FILE.check(root, lean_instance(trace, CLAIM_LINES).encode("utf-8"))
    problems += TRACE_FILE.check(root, trace_module(trace, CLAIM_LINES).encode("utf-8"))
    if problems:
        raise TraceError("; ".join(problems))
    first, last = CLAIM_LINES
    window = counts_of_requests(trace.window(first, last))
    whole = counts_of_requests(trace.requests)
    check_stated(root, {"window_references": window.references,
                        "window_distinct": window.distinct,
                        "trace_references": whole.references,
                        "trace_distinct": whole.distinct})
    return [
        _count_row(f"lines {first}-{last} of the trace", window,
                   "Lean kernel: decide +kernel on KVCache.Ceiling.Packed.count "
                   "(Proofs/Ceiling/Mooncake.lean)",
                   "KVCache.Ceiling.Mooncake.window_length_distinct"),
        _count_row("the whole trace", whole,
                   "Lean kernel: decide +kernel on KVCache.Ceiling.Packed.runsRun "
                   "(Proofs/Ceiling/MooncakeTrace.lean); requests (lines) by Python",
                   "KVCache.Ceiling.Mooncake.trace_length_distinct"),
    ]


def _row_dict(row: SweepRow, refs: int) -> dict[str, object]:
    return {
        "capacity": row.capacity,
        "lru_hits": row.lru_hits,
        "belady_hits": row.belady_hits,
        "lru_percent": percent_str(Fraction(row.lru_hits, refs)),
        "belady_percent": percent_str(Fraction(row.belady_hits, refs)),
    }


def _count_figures(counts: CeilingCounts) -> dict[str, object]:
    return {
        "requests": counts.requests,
        "references": counts.references,
        "distinct": counts.distinct,
        "max_hits": counts.max_hits,
        "ceiling_numerator": counts.ceiling.numerator,
        "ceiling_denominator": counts.ceiling.denominator,
        "ceiling_percent": counts.percent,
    }


def _stated(curve: Curve, capacities: tuple[int, ...]) -> list[SweepRow]:
    return sweep_rows(curve, sorted({c for c in capacities if c < curve.distinct}
                                    | {curve.distinct}))


Analysed = tuple[ScanSummary, Curve]


def _analysed(root: Path) -> tuple[str, Analysed, Analysed]:
    path = mooncake_trace(root)
    if not path.is_file():
        raise TraceError(f"{path}: the Mooncake trace is absent (see data/mooncake/README.md)")
    sha = sha256_file(path)
    return sha, analysed(str(path), sha), analysed(str(path), sha, CLAIM_WINDOW)


def evidence(root: Path) -> Evidence:
    """Figures of the result ``demand-fetch-ceiling``, computed from the shared trace: the
    whole trace, and the claim's window side by side (labelled as a window)."""
    sha, (summary, curve), (w_summary, w_curve) = _analysed(root)
    trace = read_trace(mooncake_trace(root))
    if trace.sha256 != sha:
        raise TraceError(f"{mooncake_trace(root)}: changed while it was read")
    counts = counts_from(summary, curve)
    refs = counts.references
    sweep = sweep_rows(curve, sweep_capacities(curve.distinct))
    stream = [x for r in trace.requests for x in r]
    figures: dict[str, object] = {
        **_count_figures(counts),
        "policy_hits": [_row_dict(r, refs) for r in _stated(curve, EVIDENCE_CAPACITIES)],
        "sweep": [_row_dict(r, refs) for r in sweep],
        "bypass": bypass_figures(
            bypass_rows(stream, [(r.capacity, r.belady_hits) for r in sweep]), refs),
        "curve_method": CURVE_METHOD,
        "kernel_counts": kernel_counts(root, mooncake_trace(root), trace),
    }
    w_counts = counts_from(w_summary, w_curve)
    figures["window"] = {
        "label": f"window of the trace: {CLAIM_WINDOW.label} (1-based, inclusive), replayed "
                 "alone from an empty cache; not the whole trace",
        "first_line": CLAIM_WINDOW.start,
        "last_line": CLAIM_WINDOW.end,
        **_count_figures(w_counts),
        "policy_hits": [_row_dict(r, w_counts.references)
                        for r in _stated(w_curve, CLAIM_WINDOW_CAPACITIES)],
        "warm_start": warm_start(trace, CLAIM_WINDOW, w_counts.ceiling),
    }
    warm = figures["window"]["warm_start"]
    check_stated(root, {"warm_references": warm["references"], "warm_new": warm["distinct_new"]})
    try:  # the CP-SAT record of prefix-cache optima, re-checked against the trace
        optima = prefix_optima_evidence(root, trace)
    except PrefixOptimaError as exc:
        raise TraceError(str(exc)) from None
    figures["prefix_optima"] = optima.figures
    figures["semantics"] = SEMANTICS
    return Evidence(figures=figures, inputs=(
        InputFile(path=TRACE_INPUT_PATH, sha256=sha),
        InputFile(path=PREFIX_OPTIMA_PATH.as_posix(), sha256=optima.record_sha256)))


def artifacts(root: Path, out: Path) -> list[Path]:
    """The sweep's table and plot, for the whole trace (``sweep.*``) and for the claim's window
    (``window-sweep.*``), and the prefix figures (``prefix.*``: the whole trace's prefix curve
    with the simulator's budgets; ``prefix-optima.*``: the windows' CP-SAT optima), as
    published next to the certificate."""
    _, (summary, curve), (w_summary, w_curve) = _analysed(root)
    outputs = {**sweep_outputs(summary, curve, TRACE_INPUT_PATH),
               **sweep_outputs(w_summary, w_curve, TRACE_INPUT_PATH, stem="window-sweep")}
    try:  # the prefix curve and the CP-SAT prefix optima, from the re-checked record
        optima = prefix_optima_evidence(root)
    except PrefixOptimaError as exc:
        raise TraceError(str(exc)) from None
    p_summary, p_curve = compute_prefix_curve(mooncake_trace(root), "tokens", 0.5)
    outputs.update(prefix_figure_outputs(optima.figures, p_summary, p_curve, TRACE_INPUT_PATH))
    return svg_and_csv([w.path for w in write_outputs(out, outputs)])


SPEC = ResultSpec(
    id=RESULT_ID,
    title=RESULT_TITLE,
    theorems=THEOREMS,
    limits=RESULT_LIMITS,
    evidence=evidence,
    artifacts=artifacts,
    generated=(WINDOW_FILE, TRACE_FILE),
)
