"""The costed prefix routing table in the pooled-placement certificate (``routing_cost``), its
limits, its CSV and text tables and its plot (byte-deterministic SVG): all computed from a
:class:`.routing_prefix.PrefixSweep` and checked by :mod:`.routing_cost`, nothing typed in."""

from __future__ import annotations

import csv
import functools
import io
from pathlib import Path
from typing import Any

from pytools.files import atomic_write_bytes
from pytools.results.spec import InputFile
from pytools.traces.trace import TRACE_INPUT_PATH, TraceError

from .instance import PlacementError
from .routing import ROUTING_RULES, ROUTINGS
from .routing_cost import RULES, cost_rows, pooled_rows, require_consistent
from .routing_prefix import PrefixSweep, read_prefix_requests, run_prefix_sweep
from .routing_prices import Prices, price_sources, prices_of

#: How a cache serves a request, as stated in the certificate.
SEMANTICS = (
    "prefix: a request's hits are its leading run of cached blocks, looked up before it "
    "touches anything; then its blocks are touched tail first in one LRU list per cache (a "
    "block's parent is always touched after it, so the cache stays closed under prefixes); "
    "radix LRU (evict the least recently used leaf) for capacities at least the longest "
    "request (Proofs/Ceiling/PrefixLru*.lean), the same tail-first LRU below it; weights: "
    "blocks, and tokens from input_length (512 a block, the last block of a request partial)"
)

#: The pooled prefix cache, as stated in the certificate.
POOL = (
    "pooled: one prefix cache of the total capacity with one global radix LRU (the same "
    "tail-first LRU list over every host's requests); each block lives in the memory of the "
    "host whose request inserted it (a hit does not move it; evicted, it is gone). A request "
    "routed to host g (the per-host run's route, kv-aware's choices included) pays per block "
    "of its leading run 0 if the block lives on g, r if it lives on another host, and m per "
    "block after the run. Roughly Mooncake's store, which differs: its master places each "
    "object (and any replicas) in the memory segments its allocator picks, each host's "
    "segment of fixed size (here a block stays on the host that computed it and a host's "
    "share is not capped: pool_peak_host_blocks says how far it goes), it evicts in batches "
    "by approximate LRU once usage passes a high watermark (here exact LRU, one block at a "
    "time), and it may offload to SSD (here one tier)"
)

#: The limits of the costed table, stated next to the result.
COST_LIMITS: tuple[str, ...] = (
    "routing_cost is measured on one trace, the Mooncake FAST'25 conversation trace (its "
    "SHA-256 recorded), whole, in file order, from empty caches; hits counted on every request "
    "(no warm-up). Costs are per block, in microseconds: m (a block prefilled) and r (a block "
    "read from another host) from the stated public figures and assumptions (prices), a "
    "local hit 0; no queueing, batching, bandwidth contention or overlap of transfer and "
    "compute, so a cost is a sum of per-block prices, not a latency.",
    "The Lean statements behind its rules: prefix hits are bounded by flat Belady with bypass "
    "(KVCache.Ceiling.runHits_le_beladyBypass_bhits) and by the wall "
    "(runHits_add_distinct_le_length) for every prefix cache, the per-host caches and the "
    "pool included. The cost theorem (KVCache.Placement.pooled_cost_le_perInstance_cost) is "
    "about flat demand-fetch caches: its exact accounting is checked on the flat view of the "
    "same per-host caches (flat LRU over the routed tail-first touches: mirror_cost_us, "
    "cached_elsewhere, flat_misses), which is the theorem's statement for that stream. It "
    "does not bound the prefix costs (cost_us, pool_cost_us): Lean proves nothing about a "
    "pooled prefix store run online against per-host prefix caches, and on this trace the "
    "pool is sometimes dearer and sometimes cheaper (Proofs/Placement/Scan.lean: pooled LRU "
    "can lose).",
)

ROUTING_COST_METHOD = (
    "Python + numba (pytools.results.placement.routing_prefix): the trace parsed once with "
    "token weights; per host and for the pool a doubly-linked LRU list over dense block ids, "
    "touched tail first; the one-pass prefix curve (pytools.traces.prefix) for the pooled "
    "hits; Belady with bypass per host sub-trace and for the whole trace (numba, the rule of "
    "pytools.traces.bypass); every row checked by pytools.results.placement.routing_cost"
)


def _order(name: str) -> int:
    return ROUTINGS.index(name) if name in ROUTINGS else len(ROUTINGS)


def cost_figures(sw: PrefixSweep, prices: Prices, label: str) -> dict[str, Any]:
    """The certificate's ``routing_cost`` figures, checked by every rule of
    :data:`.routing_cost.RULES` (:class:`PlacementError` when one fails)."""
    routings = sorted({r.routing for r in sw.runs}, key=_order)
    fig = {
        "label": f"{label}: per-host prefix caches under each routing against a pooled prefix "
                 "cache with remote hits charged, at equal total memory (capacities in blocks, "
                 "from empty caches)",
        "source": label,
        "requests": sw.requests,
        "references": sw.references,
        "tokens": sw.tokens,
        "wall": sw.distinct,
        "longest_request": sw.longest,
        "hosts": list(sw.hosts),
        "capacities": list(sw.capacities),
        "routings": [{"name": n, "rule": ROUTING_RULES[n]} for n in routings],
        "semantics": SEMANTICS,
        "pool": POOL,
        "prices": price_sources(prices),
        "rules": [{"name": n, "statement": what} for n, _rule, what in RULES],
        "method": ROUTING_COST_METHOD,
        "computed_by": "Python (pytools), from the hashed trace file; not computed by the Lean "
                       "kernel",
        "pooled": pooled_rows(sw),
        "rows": cost_rows(sw, prices.remote, prices.miss),
    }
    return require_consistent(fig)


# --------------------------------------------------------------------------- tables

#: The CSV's columns, in order (each a key of a row, but ``pooled_bypass_percent``).
CSV_COLUMNS: tuple[str, ...] = (
    "capacity", "hosts", "host_capacity", "routing", "hit_percent", "hit_tokens_percent",
    "misses", "cost_us", "pool_hit_percent", "pool_hit_tokens_percent", "pool_local",
    "pool_remote", "pool_misses", "pool_cost_us", "pool_peak_host_blocks",
    "pooled_bypass_percent", "flat_misses", "cached_elsewhere", "mirror_cost_us", "load_max",
)


def cost_csv(fig: dict[str, Any]) -> bytes:
    """The table as CSV bytes (LF line ends): one line per (capacity, hosts, routing), the
    pooled cache's figures beside the per-host ones; the prices in the header comments."""
    p = fig["prices"]
    bypass = {q["capacity"]: q["bypass_percent"] for q in fig["pooled"]}
    buf = io.StringIO()
    buf.write(f"# source: {fig['source']}\n# prices: {p['name']}: r = {p['remote_us']} us, "
              f"m = {p['miss_us']} us per block of {p['block_tokens']} tokens\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in fig["rows"]:
        writer.writerow([bypass[row["capacity"]] if c == "pooled_bypass_percent" else row[c]
                         for c in CSV_COLUMNS])
    return buf.getvalue().encode("utf-8")


def _seconds(us: int) -> str:
    return f"{us / 1e6:.1f}"


def cost_table_text(fig: dict[str, Any]) -> str:
    """The table as fixed-width text: per (capacity, hosts, routing), the per-host hit rate
    and cost against the pooled cache's under the same route (costs in seconds)."""
    head = ("capacity", "hosts", "routing", "hit%", "tok%", "cost s", "pool hit%",
            "pool cost s", "remote", "e (flat)")
    widths = (9, 5, 14, 7, 7, 11, 9, 11, 8, 9)
    out = io.StringIO()
    out.write(" ".join(f"{t:>{w}}" for t, w in zip(head, widths, strict=True)) + "\n")
    for row in fig["rows"]:
        cells = (row["capacity"], row["hosts"], row["routing"], row["hit_percent"],
                 row["hit_tokens_percent"], _seconds(row["cost_us"]), row["pool_hit_percent"],
                 _seconds(row["pool_cost_us"]), row["pool_remote"], row["cached_elsewhere"])
        out.write(" ".join(f"{t:>{w}}" for t, w in zip(cells, widths, strict=True)) + "\n")
    p = fig["prices"]
    out.write(f"prices {p['name']}: r = {p['remote_us']} us, m = {p['miss_us']} us per block; "
              f"wall {fig['wall']:,} distinct blocks; every row checked ({len(RULES)} rules)\n")
    return out.getvalue()


# --------------------------------------------------------------------------- plot

#: The total capacity the plot is drawn at.
PLOT_CAPACITY = 16384

#: Settings the plot is drawn under (as the routing sweep's plot).
PLOT_RC = {"svg.hashsalt": "kvcache-placement-routing-cost", "svg.fonttype": "path",
           "path.simplify": True}


def cost_svg(fig: dict[str, Any]) -> bytes:
    """The plot (:func:`cost_figure`), byte-deterministic (fixed hash salt, no date)."""
    import matplotlib

    with matplotlib.rc_context(PLOT_RC):
        figure = cost_figure(fig)
        buf = io.BytesIO()
        figure.savefig(buf, format="svg", metadata={"Date": None, "Creator": None,
                                                    "Title": Path(fig["source"]).name,
                                                    "Source": fig["source"]})
    return buf.getvalue()


def cost_figure(fig: dict[str, Any]) -> Any:
    """Left: cost against hosts at :data:`PLOT_CAPACITY` blocks of total memory, per-host
    prefix caches (solid) and the pool under the same routing (dashed); right: hit rate."""
    import matplotlib
    from matplotlib.figure import Figure

    caps = fig["capacities"]
    at = PLOT_CAPACITY if PLOT_CAPACITY in caps else caps[len(caps) // 2]
    rows = [r for r in fig["rows"] if r["capacity"] == at]
    hosts = fig["hosts"]
    routings = [r["name"] for r in fig["routings"]]
    refs = fig["references"]
    p = fig["prices"]
    with matplotlib.rc_context(PLOT_RC):
        figure = Figure(figsize=(10.0, 4.4), dpi=100)
        figure.subplots_adjust(left=0.07, right=0.985, top=0.86, bottom=0.27, wspace=0.2)
        left, right = figure.add_subplot(1, 2, 1), figure.add_subplot(1, 2, 2)
        for i, name in enumerate(routings):
            mine = sorted((r for r in rows if r["routing"] == name), key=lambda r: r["hosts"])
            xs = [r["hosts"] for r in mine]
            left.plot(xs, [r["cost_us"] / 1e6 for r in mine], marker="os^vD"[i % 5],
                      color=f"C{i}", label=f"per-host prefix, {name}")
            left.plot(xs, [r["pool_cost_us"] / 1e6 for r in mine], linestyle="--",
                      marker="os^vD"[i % 5], color=f"C{i}", alpha=0.6,
                      label=f"pooled, routed {name}")
            right.plot(xs, [100 * r["hits"] / refs for r in mine], marker="os^vD"[i % 5],
                       color=f"C{i}")
        pooled = next(q for q in fig["pooled"] if q["capacity"] == at)
        right.axhline(100 * pooled["hits"] / refs, color="black", linestyle="--", linewidth=1,
                      label="pooled prefix LRU")
        right.axhline(100 * pooled["bypass_hits"] / refs, color="black", linewidth=1,
                      label="flat Belady with bypass (bound)")
        for ax in (left, right):
            ax.set_xscale("log", base=2)
            ax.set_xticks(hosts, [str(h) for h in hosts])
            ax.minorticks_off()
            ax.set_xlabel(f"hosts (total memory {at:,} blocks, split evenly)")
            ax.grid(True, alpha=0.3)
        left.set_ylabel("cost (s of prefill + transfer, sum of per-block prices)")
        right.set_ylabel("prefix hit rate (% of block references)")
        right.set_ylim(0, None)
        figure.legend(loc="lower center", bbox_to_anchor=(0.5, 0.03), ncol=6, fontsize=6.5,
                      frameon=False)
        figure.suptitle(f"{Path(fig['source']).name}: {fig['requests']:,} requests, "
                        f"{refs:,} block references; prefix caches, r = {p['remote_us']} us, "
                        f"m = {p['miss_us']} us per block ({p['name']})", fontsize=9)
        figure.text(0.01, 0.01, f"source: {fig['source']}", fontsize=5.5, color="dimgrey")
    return figure


# --------------------------------------------------------------------------- the trace


@functools.lru_cache(maxsize=2)
def trace_cost_sweep(path: str, sha256: str) -> PrefixSweep:
    """The costed sweep of the trace at ``path`` (computed once per content hash); the bytes
    read must be those of ``sha256``."""
    pr = read_prefix_requests(Path(path))
    if pr.reqs.sha256 != sha256:
        raise TraceError(f"{path}: changed while it was read (sha256 {pr.reqs.sha256}, "
                         f"expected {sha256})")
    return run_prefix_sweep(pr)


def routing_cost_evidence(root: Path, prices: Prices | None = None
                          ) -> tuple[dict[str, Any], InputFile]:
    """The ``routing_cost`` figures of the shared trace of ``root`` at ``prices`` (default:
    the default preset), and the trace as an input."""
    from .routing_report import shared_trace

    path, sha = shared_trace(root)
    try:
        sw = trace_cost_sweep(str(path), sha)
    except TraceError as exc:
        raise PlacementError(str(exc)) from None
    return cost_figures(sw, prices or prices_of(), TRACE_INPUT_PATH), InputFile(
        TRACE_INPUT_PATH, sw.sha256)


#: The files :func:`write_cost` writes.
COST_FILES = ("placement_routing_cost.csv", "placement_routing_cost.svg")


def write_cost(out_dir: Path, fig: dict[str, Any]) -> list[Path]:
    """Write the table and the plot into ``out_dir`` (both rendered first, each atomically)."""
    data = (cost_csv(fig), cost_svg(fig))
    paths = [Path(out_dir) / name for name in COST_FILES]
    for path, blob in zip(paths, data, strict=True):
        atomic_write_bytes(path, blob)
    return paths


def write_cost_artifacts(root: Path, out_dir: Path) -> list[Path]:
    """The shared trace's costed table and plot, as published next to the certificate."""
    fig, _input = routing_cost_evidence(root)
    return write_cost(out_dir, fig)
