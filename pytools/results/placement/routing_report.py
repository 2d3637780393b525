"""The routing sweep's figures in the pooled-placement certificate, its limits, its table
(CSV and text) and its plot (byte-deterministic SVG), and where the claims' "at 16 hosts pooled
keeps 93.75 % while per-instance falls to 34 %" shape appears on the trace: all computed from a
:class:`.routing.RoutingSweep`, nothing typed in."""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from pathlib import Path
from typing import Any

from pytools.files import atomic_write_bytes
from pytools.paths import mooncake_trace, sha256_file
from pytools.results.spec import InputFile
from pytools.traces.trace import TRACE_INPUT_PATH, TraceError, percent_str

from .instance import PlacementError
from .routing import (
    BOUND_THEOREM,
    CLAIM_HOSTS,
    CLAIM_LINES,
    CLAIM_PER_INSTANCE,
    CLAIM_POOLED,
    KV_AWARE_RULE,
    ROUTING_RULES,
    ROUTINGS,
    RoutingSweep,
    TraceSweeps,
    trace_sweeps,
)

# --------------------------------------------------------------------------- figures

#: The limits of the routing figures, stated next to the result.
ROUTING_LIMITS: tuple[str, ...] = (
    "The routing table is measured on one trace: the Mooncake FAST'25 conversation trace "
    "(its SHA-256 is recorded as an input), replayed request by request in file order from "
    "empty caches; blocks are counted, not sized (every block one unit of capacity).",
    "Equal total memory: a total capacity C (blocks) is one pooled cache of C blocks or "
    "hosts caches of C / hosts blocks (every C is a multiple of 16). Each per-instance cache "
    "is LRU; pooled LRU and Belady are exact stack-distance figures, pooled Belady with "
    "bypass a simulation. No other per-host policy is measured.",
    "Routings as stated in routing.routings: random (seeded), round-robin, prefix hashing "
    "of the first one or two block ids, and " + KV_AWARE_RULE + ". Load is requests routed "
    "so far: no timing, queueing, prefill or decode cost, batching or in-flight requests is "
    "modelled, so the load spreads are request counts, not latencies.",
    "Lean (" + BOUND_THEOREM + ") proves pooled Belady with bypass at the summed capacity a "
    "lower bound on per-instance misses under every routing, adaptive ones included (the "
    "bound holds for the routed trace each produces); the hit rates themselves are Python "
    "simulations, checked against that bound, the wall and each host's own distinct blocks, "
    "not computed by Lean.",
    "routing.window is the same sweep on the claim's window of the trace (lines "
    f"{CLAIM_LINES[0]}-{CLAIM_LINES[1]}, the ceiling result's window), replayed alone from "
    "empty caches: a cache that served the lines before it would face more reuse (the "
    "ceiling result's warm_start figure).",
    "routing.claim compares the claims' '16 hosts: pooled 93.75 %, per-instance 34 %' shape "
    "with this trace: pooled_rate_reachable says whether any cache can reach 93.75 % here "
    "(the trace's ceiling); shape_appears lists the (routing, capacity) pairs whose "
    "per-instance LRU at 16 hosts keeps at most 34/93.75 of pooled LRU's hits at the same "
    "total memory. It is a comparison of shapes on one trace, not a reproduction of the "
    "claims' unpublished instance.",
)


def _pct(num: int, den: int) -> str:
    return percent_str(Fraction(num, den))


def _ratio(value: Fraction) -> float:
    return round(float(value), 4)


#: Where the claim's shape is looked for: per-instance keeps at most this share of the pooled
#: cache's hits (34 / 93.75).
CLAIM_RETAINED = CLAIM_PER_INSTANCE / CLAIM_POOLED


def claim_shape(sw: RoutingSweep) -> dict[str, Any]:
    """Where the claims' "at 16 hosts pooled keeps 93.75 % while per-instance falls to 34 %"
    shape appears on this trace: the pooled rate itself (reachable only if the ceiling is at
    least 93.75 %), and, at :data:`CLAIM_HOSTS` hosts, each (capacity, routing) whose
    per-instance LRU keeps at most 34 / 93.75 of pooled LRU's hits at the same total memory."""
    ceiling = Fraction(sw.references - sw.distinct, sw.references)
    rows = []
    hosts = CLAIM_HOSTS if CLAIM_HOSTS in sw.hosts else max(sw.hosts)
    routings = sorted({r.routing for r in sw.runs}, key=_routing_order)
    for c in sw.capacities:
        pooled = sw.pooled_at(c).lru_hits
        for name in routings:
            hits = sw.run(c, hosts, name).total_hits
            kept = Fraction(hits, pooled) if pooled else Fraction(1)
            rows.append({"capacity": c, "routing": name,
                         "per_instance_percent": _pct(hits, sw.references),
                         "pooled_lru_percent": _pct(pooled, sw.references),
                         "kept_of_pooled_percent": percent_str(kept),
                         "shape": kept <= CLAIM_RETAINED})
    appears = [f"{r['routing']}@{r['capacity']}" for r in rows if r["shape"]]
    absent = [f"{r['routing']}@{r['capacity']}" for r in rows if not r["shape"]]
    return {
        "claim_pooled_percent": percent_str(CLAIM_POOLED),
        "claim_per_instance_percent": percent_str(CLAIM_PER_INSTANCE),
        "claim_kept_percent": percent_str(CLAIM_RETAINED),
        "ceiling_percent": percent_str(ceiling),
        "pooled_rate_reachable": ceiling >= CLAIM_POOLED,
        "hosts": hosts,
        "rows": rows,
        "shape_appears": appears,
        "shape_absent": absent,
    }


def _routing_order(name: str) -> int:
    return ROUTINGS.index(name) if name in ROUTINGS else len(ROUTINGS)


ROUTING_METHOD = (
    "Python + numba (pytools.results.placement.routing): the trace parsed once, request by "
    "request; per host a doubly-linked LRU list over dense block ids; pooled LRU and Belady "
    "read off the exact stack-distance curve (pytools.traces.curve), pooled Belady "
    "with bypass simulated at each total capacity (pytools.traces.bypass)"
)


def routing_figures(sw: RoutingSweep, label: str) -> dict[str, Any]:
    """The certificate's ``routing`` figures: the table (one row per total capacity and host
    count: pooled and each routing's hit rate, each routing's load spread), the rules, and
    where the claim's shape appears."""
    refs = sw.references
    routings = sorted({r.routing for r in sw.runs}, key=_routing_order)
    rows = []
    for c in sw.capacities:
        p = sw.pooled_at(c)
        for h in sw.hosts:
            per = {}
            for name in routings:
                run = sw.run(c, h, name)
                per[name] = {
                    "hits": run.total_hits,
                    "misses": refs - run.total_hits,
                    "hit_percent": _pct(run.total_hits, refs),
                    "load_max": max(run.load),
                    "load_spread": _ratio(run.load_spread),
                }
            rows.append({
                "capacity": c,
                "hosts": h,
                "host_capacity": c // h,
                "pooled_lru_percent": _pct(p.lru_hits, refs),
                "pooled_belady_percent": _pct(p.belady_hits, refs),
                "pooled_belady_bypass_percent": _pct(p.bypass_hits, refs),
                "pooled_belady_bypass_misses": refs - p.bypass_hits,
                "routings": per,
            })
    return {
        "label": f"{label}: per-instance LRU under each routing against pooled caches of the "
                 "same total memory (capacities in blocks, from an empty cache)",
        "source": label,
        "requests": sw.requests,
        "references": refs,
        "wall": sw.distinct,
        "ceiling_percent": _pct(refs - sw.distinct, refs),
        "hosts": list(sw.hosts),
        "capacities": list(sw.capacities),
        "routings": [{"name": n, "rule": ROUTING_RULES[n]} for n in routings],
        "theorem": BOUND_THEOREM,
        "method": ROUTING_METHOD,
        "computed_by": "Python (pytools), from the hashed trace file; not computed by the Lean "
                       "kernel",
        "rows": rows,
        "claim": claim_shape(sw),
    }


# --------------------------------------------------------------------------- table and plot

#: The total capacity the hosts panel of the plot is drawn at.
PLOT_CAPACITY = 16384


def routing_csv(sw: RoutingSweep, label: str) -> bytes:
    """The table as CSV bytes (LF line ends): one row per (total capacity, hosts), hit rates
    in percent (exact fractions rounded half up), load spreads as max/mean requests."""
    routings = sorted({r.routing for r in sw.runs}, key=_routing_order)
    buf = io.StringIO()
    buf.write(f"# source: {label}\n# sha256: {sw.sha256}\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["capacity", "hosts", "host_capacity", "ceiling_percent",
                     "pooled_lru_percent", "pooled_belady_percent",
                     "pooled_belady_bypass_percent",
                     *(f"{n}_percent" for n in routings), *(f"{n}_spread" for n in routings)])
    refs = sw.references
    for c in sw.capacities:
        p = sw.pooled_at(c)
        for h in sw.hosts:
            runs = [sw.run(c, h, n) for n in routings]
            writer.writerow([c, h, c // h, _pct(refs - sw.distinct, refs),
                             _pct(p.lru_hits, refs), _pct(p.belady_hits, refs),
                             _pct(p.bypass_hits, refs),
                             *(_pct(r.total_hits, refs) for r in runs),
                             *(f"{_ratio(r.load_spread):.4f}" for r in runs)])
    return buf.getvalue().encode("utf-8")


#: Settings the plot is drawn under: SVG ids from a fixed salt, glyphs as paths (as the
#: ceiling's and the placement sweep's plots).
PLOT_RC = {"svg.hashsalt": "kvcache-placement-routing", "svg.fonttype": "path",
           "path.simplify": True}


def routing_svg(sw: RoutingSweep, label: str) -> bytes:
    """The plot (:func:`routing_figure`), byte-deterministic (fixed hash salt, no date)."""
    import matplotlib

    with matplotlib.rc_context(PLOT_RC):
        fig = routing_figure(sw, label)
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None,
                                                 "Title": Path(label).name, "Source": label})
    return buf.getvalue()


def routing_figure(sw: RoutingSweep, label: str) -> Any:
    """The plot's figure: left, hit rate against hosts at :data:`PLOT_CAPACITY` blocks of
    total memory; right, hit rate against total capacity at the largest host count; pooled
    caches and the ceiling on both. Capacity labels that would print over one another are
    left out (:func:`~pytools.results.ticks.thin_x_tick_labels`)."""
    import matplotlib
    from matplotlib.figure import Figure

    from pytools.results.ticks import thin_x_tick_labels

    refs = sw.references
    routings = sorted({r.routing for r in sw.runs}, key=_routing_order)
    ceiling = 100 * (refs - sw.distinct) / refs
    at = PLOT_CAPACITY if PLOT_CAPACITY in sw.capacities else sw.capacities[len(
        sw.capacities) // 2]
    most = max(sw.hosts)
    with matplotlib.rc_context(PLOT_RC):
        fig = Figure(figsize=(10.0, 4.4), dpi=100)
        fig.subplots_adjust(left=0.06, right=0.985, top=0.86, bottom=0.24, wspace=0.18)
        left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        p = sw.pooled_at(at)
        for i, name in enumerate(routings):
            left.plot(sw.hosts, [100 * sw.run(at, h, name).total_hits / refs for h in sw.hosts],
                      marker="os^vD"[i % 5], color=f"C{i}", label=f"per-instance LRU, {name}")
            right.plot(sw.capacities,
                       [100 * sw.run(c, most, name).total_hits / refs for c in sw.capacities],
                       marker="os^vD"[i % 5], color=f"C{i}")
        for value, style, text in ((p.bypass_hits, "-", "pooled Belady with bypass"),
                                   (p.lru_hits, "--", "pooled LRU")):
            left.axhline(100 * value / refs, color="black", linestyle=style, linewidth=1,
                         label=text)
        right.plot(sw.capacities, [100 * q.bypass_hits / refs for q in sw.pooled], "-",
                   color="black", linewidth=1)
        right.plot(sw.capacities, [100 * q.lru_hits / refs for q in sw.pooled], "--",
                   color="black", linewidth=1)
        for ax in (left, right):
            ax.axhline(ceiling, color="grey", linestyle=":", linewidth=1)
            ax.set_xscale("log", base=2)
            ax.set_ylim(0, min(100.0, 1.15 * ceiling + 1))
            ax.set_ylabel("hit rate (% of block references)")
            ax.grid(True, alpha=0.3)
        left.set_xticks(list(sw.hosts), [str(h) for h in sw.hosts])
        left.minorticks_off()
        left.set_xlabel(f"hosts (total memory {at:,} blocks, split evenly)")
        right.set_xticks(list(sw.capacities), [f"{c:,}" for c in sw.capacities],
                         fontsize=6.5, rotation=35, ha="right")
        right.minorticks_off()
        right.set_xlabel(f"total capacity (blocks), {most} hosts")
        left.text(sw.hosts[0], ceiling, f" ceiling {ceiling:.2f} % (wall)", fontsize=7,
                  va="bottom", color="dimgrey")
        fig.legend(loc="lower center", ncol=4, fontsize=7, frameon=False)
        fig.suptitle(f"{Path(label).name}: {sw.requests:,} requests, {refs:,} references, "
                     f"{sw.distinct:,} distinct blocks\nper-instance LRU by routing vs pooled "
                     "caches at equal total memory", fontsize=9)
        fig.text(0.01, 0.01, f"source: {label}   sha256 {sw.sha256}", fontsize=5.5,
                 color="dimgrey")
        thin_x_tick_labels(fig, right)
    return fig


def table_text(sw: RoutingSweep) -> str:
    """The sweep as a fixed-width text table (hit rates in percent, load spread in brackets)."""
    refs = sw.references
    routings = sorted({r.routing for r in sw.runs}, key=_routing_order)
    head = ["capacity", "hosts", "pool-LRU", "pool-OPT", "pool-byp", *routings]
    widths = [9, 5, 8, 8, 8, *(max(len(n), 15) for n in routings)]
    out = io.StringIO()
    out.write(" ".join(f"{t:>{w}}" for t, w in zip(head, widths, strict=True)) + "\n")
    for c in sw.capacities:
        p = sw.pooled_at(c)
        for h in sw.hosts:
            cells = [str(c), str(h), *(f"{100 * v / refs:.2f}" for v in (
                p.lru_hits, p.belady_hits, p.bypass_hits))]
            for n in routings:
                run = sw.run(c, h, n)
                cells.append(f"{100 * run.total_hits / refs:.2f} [{float(run.load_spread):.2f}]")
            out.write(" ".join(f"{t:>{w}}" for t, w in zip(cells, widths, strict=True)) + "\n")
    out.write(f"wall {sw.distinct:,} distinct blocks; ceiling "
              f"{100 * (refs - sw.distinct) / refs:.2f} %; [max/mean requests per host]\n")
    return out.getvalue()


# --------------------------------------------------------------------------- the trace


def shared_trace(root: Path) -> tuple[Path, str]:
    """The shared Mooncake trace of ``root`` and its SHA-256 (:class:`PlacementError` when it
    is absent)."""
    path = mooncake_trace(root)
    if not path.is_file():
        raise PlacementError(f"{path}: the Mooncake trace is absent (see "
                             "data/mooncake/README.md)")
    return path, sha256_file(path)


def routing_trace_sweeps(root: Path) -> tuple[TraceSweeps, str]:
    """The sweeps of the shared trace of ``root`` (whole, and the claim's window) and the
    trace's path as certificates record it (:class:`PlacementError` when the trace is absent
    or unreadable)."""
    path, sha = shared_trace(root)
    try:
        return trace_sweeps(str(path), sha), TRACE_INPUT_PATH
    except TraceError as exc:
        raise PlacementError(str(exc)) from None


def window_label(label: str, lines: tuple[int, int]) -> str:
    """How a window of the trace is named (as the ceiling result names it)."""
    return f"{label} (lines {lines[0]}-{lines[1]})"


def routing_evidence(root: Path) -> tuple[dict[str, Any], InputFile]:
    """The ``routing`` figures of the pooled-placement result, from the shared trace (the
    whole trace, and under ``window`` the claim's window replayed alone from empty caches),
    and the trace as an input (path as certificates record it, SHA-256)."""
    sweeps, label = routing_trace_sweeps(root)
    first, last = sweeps.lines
    figures = routing_figures(sweeps.whole, label)
    figures["window"] = {
        **routing_figures(sweeps.window, window_label(label, sweeps.lines)),
        "first_line": first,
        "last_line": last,
    }
    return figures, InputFile(label, sweeps.whole.sha256)


#: The files :func:`write_routing` writes (``placement_routing`` or another stem).
ROUTING_FILES = ("placement_routing.csv", "placement_routing.svg")


def write_routing(out_dir: Path, sw: RoutingSweep, label: str,
                  stem: str = "placement_routing") -> list[Path]:
    """Write the table and the plot into ``out_dir`` as ``STEM.csv`` and ``STEM.svg`` (both
    rendered first, each written atomically)."""
    data = (routing_csv(sw, label), routing_svg(sw, label))
    paths = [Path(out_dir) / f"{stem}.{ext}" for ext in ("csv", "svg")]
    for path, blob in zip(paths, data, strict=True):
        atomic_write_bytes(path, blob)
    return paths


def write_routing_artifacts(root: Path, out_dir: Path) -> list[Path]:
    """The whole trace's and the claim's window's tables and plots, as published next to the
    certificate."""
    sweeps, label = routing_trace_sweeps(root)
    return [*write_routing(out_dir, sweeps.whole, label),
            *write_routing(out_dir, sweeps.window, window_label(label, sweeps.lines),
                           "placement_routing_window")]
