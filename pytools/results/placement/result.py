"""The published result ``pooled-placement``: the pooled offline optimum bounds every routing's
per-host misses (and, with remote hits priced, its cost), with CP-SAT certificates on committed
instances.

The Lean side (``Proofs/Placement/Wall.lean``, namespace ``KVCache.Placement``) proves, for
every routing, every demand-fetch policy, every capacity and every trace, that a cache
started cold misses at least once per distinct block (*the wall*), that per-instance caches
(one per host, each serving only its own requests) miss at least the sum over hosts of the
distinct blocks each host sees, and that this sum exceeds the wall as soon as one block is
requested on two hosts. At every capacity, ``Proofs/Placement/Simulation.lean`` proves that
for every routing and every family of per-host demand-fetch policies within their capacities,
some pooled demand-fetch policy within the summed capacity misses no more (strictly fewer when
a request misses on its host while another host caches its block; with each host listed once,
exactly that many fewer). ``Proofs/Placement/Cost.lean`` prices it: a local hit costs 0, a
remote hit ``r``, a miss ``m``; the pooled layout's cost is at most the per-host cost when
``r <= m`` (exactly, plus ``(m - r)`` per remote hit), ``(r - m)`` more per remote hit when
``r > m``, and at most it for every ``r`` when remote hits dearer than a miss are declined.
``Proofs/Placement/Scan.lean`` proves the other direction for online caches: on a family of
traces pooled LRU misses strictly more than per-host LRU at equal memory. This module checks
the story on one concrete instance with an independent solver, Google OR-Tools CP-SAT
(:mod:`.solver`).

Below the wall's capacity, ``Proofs/Placement/Farthest.lean`` has the Lean kernel run the
pooled farthest-next-use cache (with sizes) on the same instance, whose data it carries in a
block generated from the instance file (:mod:`.lean_instance`): its misses equal the wall, so
no demand-fetch policy does better, and the evidence checks that CP-SAT's certified optimum is
that same number.

On real traffic (``optimum_windows``, :mod:`.windows_record`): CP-SAT's exact optimum of one
pooled cache of unit blocks, at half the capacity the wall needs, on growing windows of the shared
Mooncake trace, solved once into ``data/placement/windows.json`` and re-checked here: the
windows regenerate from the trace, each is OPTIMAL with bound = objective, and each optimum
equals the misses of Belady with bypass, which ``Proofs/Placement/Optimal.lean`` proves the
demand-fetch optimum at every capacity.

With prices, online (``routing_cost``, :mod:`.routing_prefix`, :mod:`.routing_cost`): per-host
prefix caches under each routing against one pooled prefix cache whose remote hits cost ``r``
and misses ``m`` (per block, from stated public figures, :mod:`.routing_prices`), at equal total
memory on the shared trace; every row checked against the prefix caches' Lean bounds and, on
the flat view of the per-host caches, against the exact accounting of
``pooled_cost_le_perInstance_cost``.

Where the capacity binds (``binding_instance``, :mod:`.binding`): a committed stream of unit
blocks at half the capacity the wall needs, whose optimum CP-SAT proves OPTIMAL and the Lean
kernel computes as Belady with bypass's misses (``Proofs/Placement/Binding.lean``): one number,
strictly above the wall.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytools.paths import sha256_file
from pytools.results.generated import Generated, regenerate_command
from pytools.results.spec import Evidence, InputFile, ResultSpec, svg_and_csv
from pytools.traces.trace import TRACE_INPUT_PATH

from .binding import (
    BINDING_LEAN_FILE,
    BINDING_PATH,
    binding_figures,
    binding_instance_text,
    binding_lean_text,
    load_binding,
)
from .instance import (
    INSTANCE_PARAMS,
    INSTANCE_PATH,
    Instance,
    PlacementError,
    generate_instance,
    instance_bytes,
    load_instance,
)
from .lean_instance import LEAN_FILE, farthest_misses, lean_file_text
from .routing_cost_report import COST_LIMITS, routing_cost_evidence, write_cost_artifacts
from .routing_report import ROUTING_LIMITS, routing_evidence, write_routing_artifacts
from .solver import certify_instance
from .sweep import SWEEP_PARAMS, sweep, write_sweep
from .windows_record import WINDOWS_PATH, windows_evidence

#: Id of the published result whose evidence :func:`evidence` computes.
RESULT_ID = "pooled-placement"

#: Title of the published result.
RESULT_TITLE = ("The pooled offline optimum bounds every routing's per-host misses and cost; "
                "pooled caching reaches the compulsory-miss wall")

#: Fully qualified Lean theorems the result rests on (Proofs/Placement/Wall.lean,
#: Proofs/Placement/Farthest.lean, Proofs/Placement/Simulation.lean,
#: Proofs/Placement/Optimal.lean, Proofs/Placement/Cost.lean, Proofs/Placement/Scan.lean and
#: Proofs/Placement/Binding.lean), headline first: on the committed instance, below the
#: capacity the wall needs, the kernel-computed farthest-next-use misses are the optimum; at
#: every capacity, pooled simulates per-instance (priced: the pooled layout's cost bounds the
#: per-host cost), pooled LRU can miss more than per-host LRU, (counting blocks) Belady with
#: bypass is the demand-fetch optimum, and on the binding instance its kernel-computed misses
#: are that optimum, above the wall.
THEOREMS: tuple[str, ...] = (
    "KVCache.Placement.instance_farthest_optimal",
    "KVCache.Placement.pooled_cost_le_perInstance_cost",
    "KVCache.Placement.layoutCost_jointStep",
    "KVCache.Placement.pooled_lru_scan_gt_perInstance",
    "KVCache.Placement.pooled_lru_scan_misses",
    "KVCache.Placement.perInstance_lru_scan_misses",
    "KVCache.Placement.binding_optimal",
    "KVCache.Placement.binding_beladyBypass_misses",
    "KVCache.Placement.binding_wall_eq",
    "KVCache.Placement.pooled_simulates_perInstance",
    "KVCache.Placement.perInstanceMisses_ge_of_pooled_bound",
    "KVCache.Placement.perInstanceMisses_ge_pooled_beladyBypass",
    "KVCache.Placement.follow_simulates",
    "KVCache.Placement.follow_demandFetch",
    "KVCache.Placement.missesCachedElsewhere_example",
    "KVCache.Placement.instance_farthest_misses",
    "KVCache.Placement.instance_wall_eq",
    "KVCache.Placement.instance_capacity_lt_distinct_pages",
    "KVCache.Placement.farthest_demandFetch",
    "KVCache.Placement.farthest_fitsInPages",
    "KVCache.Placement.wall_le_misses",
    "KVCache.Placement.wall_le_pooledMisses",
    "KVCache.Placement.hostWalls_le_perInstanceMisses",
    "KVCache.Placement.wall_le_perInstanceMisses",
    "KVCache.Placement.wall_lt_hostWalls_of_shared",
    "KVCache.Placement.wall_lt_perInstanceMisses_of_shared",
    "KVCache.Placement.keepAll_misses_eq_wall",
    "KVCache.Placement.keepAll_fitsIn_of_wall_le",
    "KVCache.Placement.pooled_reaches_wall",
    "KVCache.Placement.pooled_optimum_eq_wall",
    "KVCache.Placement.perInstance_keepAll_eq_hostWalls",
    "KVCache.Placement.pooled_lt_perInstance_of_shared",
    "KVCache.Placement.beladyBypass_demandFetch_optimal",
    "KVCache.Placement.length_le_misses_add_bopt",
)

#: The limits stated next to the result.
RESULT_LIMITS: tuple[str, ...] = (
    "The CP-SAT optimum is certified for one committed, synthetic instance as modelled "
    "(its SHA-256 is recorded), not for a production fleet; it is not a benchmark.",
    "Model: demand fetch from a cold cache, sizes in KV pages, capacity on the resident "
    "pages between requests; no prefetch, no latency, bandwidth or recomputation cost, "
    "no partial blocks, no replication or migration between caches.",
    "Per-instance caches get the same total memory as the pooled cache, split evenly "
    "across hosts; the routing is random and cache-unaware (a cache-aware router would "
    "reduce, not remove, the gap).",
    "The Lean lower bounds count blocks, not sizes: misses >= wall, and per-instance >= sum "
    "of per-host distinct blocks > wall when a block is shared, hold for every routing, "
    "policy, capacity and trace, from a cold cache; in general Lean proves the pooled cache "
    "reaches the wall only for capacity >= the number of distinct blocks.",
    "At every capacity Lean proves a simulation, counting blocks: for every routing and every "
    "family of per-host demand-fetch policies fitting capacities cap(h), some pooled "
    "demand-fetch policy fitting the sum of cap(h) over the listed hosts misses no more, "
    "strictly fewer when some request misses on its own host while another listed host caches "
    "its block, and (each host listed once) exactly that many fewer. The pooled policy of the "
    "proof is offline (built from the trace and the hosts' policies); the theorem compares "
    "against it, it does not compute the pooled optimum at that capacity. A host listed twice "
    "would count twice on both sides; the equality assumes the host list has no repeats.",
    "Below that capacity Lean speaks for the committed instance only: at its pooled capacity "
    "(fewer KV pages than its distinct blocks need, kernel-checked) the Lean kernel runs "
    "farthest-next-use with sizes (the solver's replay policy) and counts its misses; they "
    "equal the wall, so no demand-fetch policy misses fewer there, and they equal CP-SAT's "
    "certified optimum. With sizes, farthest-next-use is not optimal in general; nothing "
    "beyond this instance is claimed.",
    "Counting blocks, not sizes, at every capacity k: Lean proves Belady with bypass (drop "
    "the block of the cache and the requested one whose next use is farthest) is a "
    "demand-fetch policy that fits in k blocks, and every demand-fetch policy fitting in k "
    "blocks misses at least as often (beladyBypass_demandFetch_optimal), for one cache from "
    "a cold start; it is the optimum of the ceiling result's bypass class too "
    "(KVCache.Ceiling.bhits_le_beladyBypass_bhits). No figure of this result is computed "
    "from it: the committed instance has sizes.",
    "The sweep uses small generated instances (one stream, 1..16 hosts); its hit rates "
    "illustrate the trend and are not measurements.",
    "Priced (Proofs/Placement/Cost.lean): a request costs 0 when its host's memory holds the "
    "block, r when another host's memory holds it (a remote hit), m otherwise (a miss), per "
    "block, naturals. For every routing and every family of per-host demand-fetch policies "
    "fitting cap(h), hosts listed once, the pooled layout that keeps blocks where the hosts' "
    "policies put them and reads the other hosts' memory costs exactly m per miss and r per "
    "remote hit: at most the per-host cost m * misses when r <= m (the difference is (m - r) "
    "per remote hit), (r - m) more per remote hit when r > m, and at most the per-host cost "
    "for every r when a remote hit dearer than a miss is declined. The pooled layout is "
    "offline (built from the hosts' runs): it bounds the pooled offline optimum, it is not a "
    "policy a store runs online; no bandwidth limits, queueing or block sizes.",
    "Online caches are not covered by the bound (Proofs/Placement/Scan.lean): on the family "
    "scanTrace n (host 0 reuses one block, host 1 scans fresh blocks), for every n >= 2, one "
    "pooled LRU cache of 2 blocks misses n - 1 more times than LRU with 1 block on each of "
    "the two hosts.",
    "binding_instance: one committed, synthetic stream (48 requests, unit blocks, generated "
    "from a seed, data/placement/binding.json) at half the capacity the wall needs; CP-SAT's "
    "interval model proves its optimum (solved at certify time) and the Lean kernel computes "
    "Belady with bypass's misses on the same stream (a generated block of "
    "Proofs/Placement/Binding.lean), which binding_optimal proves the demand-fetch optimum; "
    "the certificate requires the two equal and strictly above the wall. One cache from a "
    "cold start; no hosts.",
    *ROUTING_LIMITS,
    *COST_LIMITS,
    "optimum_windows (CP-SAT on real windows): one trace, the shared Mooncake conversation "
    "trace (its SHA-256 recorded); windows of its first lines only, each replayed alone from "
    "an empty cache: lines 1-256, 1-512, 1-1024, 1-2048 and 1-4096 (the largest: 108,192 "
    "references, 73,046 distinct blocks) proved OPTIMAL, lines 1-8192 not proved within the "
    "limit; one pooled cache; unit block sizes (blocks counted, not sized); capacity = half "
    "the capacity the wall needs (3,152 blocks on the largest window). CP-SAT with one "
    "worker and a limit of 8 deterministic seconds per window (CP-SAT's count of work, so "
    "the outcome does not depend on the machine's load: a rerun reproduced every status, "
    "objective, bound and deterministic time; the largest solve took 269 s of wall clock on "
    "a busy two-core machine). 'Not proved within the limit' says nothing against larger "
    "windows: Lean's theorem gives their optimum as Belady with bypass. The solves are "
    "recorded once (data/placement/windows.json, `pytools placement windows`); the "
    "certificate re-checks the record (window hashes, OPTIMAL, bound = objective = Belady "
    "with bypass simulated now, capacity below the wall), it does not re-solve.",
)


# --------------------------------------------------------------------------- evidence

#: The committed instance (generated from :data:`INSTANCE_PARAMS`), then the Lean block
#: generated from it: regenerated in this order.
INSTANCE_FILE = Generated(
    INSTANCE_PATH, regenerate_command(RESULT_ID),
    lambda _root: instance_bytes(generate_instance(**INSTANCE_PARAMS)), errors=(PlacementError,))
FARTHEST_FILE = Generated(LEAN_FILE, regenerate_command(RESULT_ID), lean_file_text,
                          errors=(PlacementError, OSError, ValueError))
#: The binding instance (generated from its parameters), then its Lean block.
BINDING_FILE = Generated(BINDING_PATH, regenerate_command(RESULT_ID), binding_instance_text,
                         errors=(PlacementError,))
BINDING_LEAN = Generated(BINDING_LEAN_FILE, regenerate_command(RESULT_ID), binding_lean_text,
                         errors=(PlacementError, OSError, ValueError))


def _checked(root: Path, generated: Generated) -> None:
    """Raise :class:`PlacementError` unless the committed ``generated`` file is up to date
    (the figures would not be the committed files')."""
    problems = generated.check(root)
    if problems:
        raise PlacementError("; ".join(problems))


def evidence(root: Path) -> Evidence:
    """Figures of the result ``pooled-placement``, from the committed instance file (which
    must be exactly the generator's output: a hand-edited instance is refused), and the
    routing tables (``routing``: flat; ``routing_cost``: prefix caches, priced) from the
    shared Mooncake trace."""
    path = Path(root) / INSTANCE_PATH
    _checked(root, INSTANCE_FILE)
    inst = load_instance(path)
    cert = certify_instance(inst)
    figures = dict(cert.figures)
    figures["kernel_counts"] = kernel_counts(root, inst, cert.figures)
    figures["sweep_seed"] = SWEEP_PARAMS["seed"]
    figures["sweep_params"] = dict(SWEEP_PARAMS)
    figures["sweep"] = sweep()
    figures["routing"], trace_input = routing_evidence(root)
    figures["routing_cost"], cost_input = routing_cost_evidence(root)
    if cost_input != trace_input:
        raise PlacementError(f"{trace_input.path}: changed while it was read")
    windows = windows_evidence(root)  # the CP-SAT record, re-checked against the trace
    if windows.trace_sha256 != trace_input.sha256:
        raise PlacementError(f"{trace_input.path}: changed while it was read")
    figures["optimum_windows"] = windows.figures
    figures["binding_instance"] = binding_evidence(root)
    binding_path = Path(root) / BINDING_PATH
    return Evidence(
        figures=figures,
        inputs=(InputFile(INSTANCE_PATH.as_posix(), sha256_file(path)), trace_input,
                InputFile(WINDOWS_PATH.as_posix(), windows.record_sha256),
                InputFile(BINDING_PATH.as_posix(), sha256_file(binding_path))),
    )


def binding_evidence(root: Path) -> dict[str, Any]:
    """The binding instance's figures (:func:`.binding.binding_figures`), once its committed
    file and Lean block are checked to be the generated ones (the kernel's count is then the
    count of this stream). Raises :class:`PlacementError` otherwise."""
    _checked(root, BINDING_FILE)
    _checked(root, BINDING_LEAN)
    return binding_figures(load_binding(Path(root) / BINDING_PATH))


def kernel_counts(root: Path, inst: Instance, solver_figures: dict[str, Any]) -> dict[str, Any]:
    """The counts the Lean kernel computes on the instance, and their agreement with CP-SAT.

    Raises :class:`PlacementError` when the committed Lean block is not the one generated
    from the instance file, or when the farthest-next-use misses, the wall and the solver's
    optimum are not one number (the Lean theorem would then not speak for this certificate).
    """
    _checked(root, FARTHEST_FILE)
    misses = farthest_misses(inst)
    if not misses == solver_figures["wall"] == solver_figures["objective"]:
        raise PlacementError(
            f"farthest-next-use misses {misses}, wall {solver_figures['wall']} and CP-SAT "
            f"optimum {solver_figures['objective']} differ"
        )
    return {
        "computed_by": "Lean kernel (decide +kernel), Proofs/Placement/Farthest.lean",
        "capacity_pages": inst.pooled_capacity,
        "distinct_pages": solver_figures["distinct_pages"],
        "farthest_misses": misses,
        "wall": solver_figures["wall"],
        "theorem": "KVCache.Placement.instance_farthest_optimal",
        "equals_solver_optimum": True,
    }


def check_figures(
    root: Path, figures: dict[str, Any], fresh: dict[str, Any] | None = None
) -> list[str]:
    """List every recorded figure that differs from the recomputed one (empty: all agree).

    ``fresh`` is the recomputed figures (default: :func:`evidence` of ``root`` now).
    """
    fresh = evidence(root).figures if fresh is None else fresh
    problems = []
    for key in sorted(set(fresh) | set(figures)):
        if key not in figures:
            problems.append(f"{key}: missing")
        elif key not in fresh:
            problems.append(f"{key}: not a figure of {RESULT_ID}")
        elif figures[key] != fresh[key]:
            problems.append(f"{key}: recorded {figures[key]!r}, recomputed {fresh[key]!r}")
    return problems


def artifacts(root: Path, out: Path) -> list[Path]:
    """The sweep's table and plot, and the routing tables and plots on the shared trace (flat,
    and prefix caches priced), as published next to the certificate."""
    return svg_and_csv([*write_sweep(out), *write_routing_artifacts(root, out),
                        *write_cost_artifacts(root, out)])


SPEC = ResultSpec(
    id=RESULT_ID,
    title=RESULT_TITLE,
    theorems=THEOREMS,
    limits=RESULT_LIMITS,
    evidence=evidence,
    generated=(INSTANCE_FILE, FARTHEST_FILE, BINDING_FILE, BINDING_LEAN),
    artifacts=artifacts,
    # the instance's figures come from instance.json alone (see :func:`evidence`)
    input_figures={TRACE_INPUT_PATH: ("routing", "routing_cost", "optimum_windows"),
                   WINDOWS_PATH.as_posix(): ("optimum_windows",)},
)
