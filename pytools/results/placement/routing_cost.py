"""The costed prefix routing table: its rows (per-host prefix caches under each routing, the
pooled prefix cache with remote hits charged, at equal total memory), priced, and the rules
that refuse a row contradicting a certified statement, one rule a function.

The rows are plain dicts (the certificate's ``routing_cost`` figures, :mod:`.routing_cost_
report`), so the rules check exactly what is published. The rules and the Lean statements they
apply (each stated with what it covers in :data:`RULES`):

* :func:`rule_host_prefix_le_bypass`: each host's prefix hits are at most the flat Belady with
  bypass hits of that host's routed sub-trace at its capacity
  (``KVCache.Ceiling.runHits_le_beladyBypass_bhits``: every prefix cache, from empty, on the
  requests' blocks taken in order);
* :func:`rule_pool_prefix_le_bypass`: the same for the pooled cache at the total capacity;
* :func:`rule_prefix_wall`: prefix hits plus distinct blocks at most the references, per host
  and pooled (``KVCache.Ceiling.runHits_add_distinct_le_length``);
* :func:`rule_mirror_accounting`: the exact accounting of
  ``KVCache.Placement.pooled_cost_le_perInstance_cost`` on the per-host run viewed as flat LRU
  caches over tail-first touches (see :mod:`.routing_prefix`): with ``e`` the touches missing
  on their host while another host caches the block, the mirroring pool costs
  ``r e + m (misses)``; when ``r <= m`` its cost plus ``(m - r) e`` is ``m x`` the per-host
  flat misses, and at most that; when ``r > m`` it is ``m x`` those plus ``(r - m) e``; for
  every ``r`` the pool declining dear remote hits (``min r m``) costs at most it; and its
  misses plus ``e`` are the per-host misses (``KVCache.Placement.pooled_simulates_
  perInstance``, hosts listed once);
* :func:`rule_counts`: every request routed once, every reference served once (per host, in
  the pool, in the flat run), occupancies within capacity;
* :func:`rule_is_the_curve`: one host, and the pool under every route, have exactly the
  prefix hits of the one-pass curve (:mod:`pytools.traces.prefix`) at that capacity;
* :func:`rule_prices`: each cost is its counts times the stated prices.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from pytools.traces.trace import percent_str

from .instance import PlacementError
from .routing_prefix import PrefixRun, PrefixSweep

Row = dict[str, Any]
Figures = dict[str, Any]

#: The Lean theorems the rules apply (the prefix bounds are certified by the
#: demand-fetch-ceiling result, the cost and simulation theorems by pooled-placement).
PREFIX_BOUND = "KVCache.Ceiling.runHits_le_beladyBypass_bhits"
PREFIX_WALL = "KVCache.Ceiling.runHits_add_distinct_le_length"
COST_THEOREM = "KVCache.Placement.pooled_cost_le_perInstance_cost"
SIMULATION_THEOREM = "KVCache.Placement.pooled_simulates_perInstance"


def _pct(num: int, den: int) -> str:
    return percent_str(Fraction(num, max(den, 1)))


def cost_row(run: PrefixRun, pooled_hits: int, r: int, m: int, references: int,
             tokens: int) -> Row:
    """One row of the table: a (total capacity, hosts, routing), priced at ``r`` and ``m``."""
    misses = sum(run.references) - run.total_hits
    e = run.joint_elsewhere
    return {
        "capacity": run.capacity * run.hosts,
        "hosts": run.hosts,
        "host_capacity": run.capacity,
        "routing": run.routing,
        "hits": run.total_hits,
        "hit_tokens": sum(run.hit_tokens),
        "hit_percent": _pct(run.total_hits, references),
        "hit_tokens_percent": _pct(sum(run.hit_tokens), tokens),
        "misses": misses,
        "cost_us": m * misses,
        "references": sum(run.references),
        "tokens": sum(run.tokens),
        "requests": sum(run.load),
        "load_max": max(run.load),
        "peak_max": max(run.peak),
        "host_hits": list(run.hits),
        "host_bypass_hits": list(run.bypass),
        "host_distinct": list(run.distinct),
        "host_references": list(run.references),
        "flat_misses": run.flat_misses,
        "cached_elsewhere": e,
        "mirror_misses": run.joint_nowhere,
        "mirror_cost_us": r * e + m * run.joint_nowhere,
        "mirror_min_cost_us": min(r, m) * e + m * run.joint_nowhere,
        "pool_local": run.pool_local,
        "pool_remote": run.pool_remote,
        "pool_misses": run.pool_misses,
        "pool_tokens": run.pool_local_tokens + run.pool_remote_tokens + run.pool_miss_tokens,
        "pool_hit_tokens": run.pool_local_tokens + run.pool_remote_tokens,
        "pool_hit_percent": _pct(run.pool_local + run.pool_remote, references),
        "pool_hit_tokens_percent": _pct(run.pool_local_tokens + run.pool_remote_tokens, tokens),
        "pool_cost_us": r * run.pool_remote + m * run.pool_misses,
        "pool_peak_host_blocks": max(run.pool_peak),
        "pooled_curve_hits": pooled_hits,
    }


def cost_rows(sw: PrefixSweep, r: int, m: int) -> list[Row]:
    """Every row of the sweep, in capacity, hosts, routing order."""
    return [cost_row(sw.run(c, h, run.routing), sw.pooled_at(c).hits, r, m, sw.references,
                     sw.tokens)
            for c in sw.capacities for h in sw.hosts
            for run in sw.runs if run.hosts == h and run.capacity * h == c]


def pooled_rows(sw: PrefixSweep) -> list[Row]:
    """One row per total capacity: the pooled prefix cache's exact hits (blocks, tokens) and
    flat Belady with bypass's hits on the whole trace."""
    return [{"capacity": p.capacity, "hits": p.hits, "hit_tokens": p.hit_tokens,
             "hit_percent": _pct(p.hits, sw.references),
             "hit_tokens_percent": _pct(p.hit_tokens, sw.tokens),
             "bypass_hits": p.bypass_hits,
             "bypass_percent": _pct(p.bypass_hits, sw.references)}
            for p in sw.pooled]


# --------------------------------------------------------------------------- the rules


def _where(row: Row) -> str:
    return f"{row['routing']}, {row['hosts']} hosts x {row['host_capacity']} blocks"


def rule_host_prefix_le_bypass(fig: Figures) -> list[str]:
    """Each host's prefix hits <= Belady with bypass on its sub-trace at its capacity."""
    out = []
    for row in fig["rows"]:
        for h, (hits, bound) in enumerate(zip(row["host_hits"], row["host_bypass_hits"],
                                              strict=True)):
            if hits > bound:
                out.append(f"{_where(row)}: host {h} has {hits} prefix hits, above Belady with "
                           f"bypass on its sub-trace ({bound}), against {PREFIX_BOUND}")
    return out


def rule_pool_prefix_le_bypass(fig: Figures) -> list[str]:
    """The pooled prefix hits (the pooled row, and the pool under each route) <= Belady with
    bypass on the whole trace at the total capacity."""
    bound = {p["capacity"]: p["bypass_hits"] for p in fig["pooled"]}
    out = [f"pooled at {p['capacity']}: {p['hits']} prefix hits, above Belady with bypass "
           f"({p['bypass_hits']}), against {PREFIX_BOUND}"
           for p in fig["pooled"] if p["hits"] > p["bypass_hits"]]
    for row in fig["rows"]:
        hits = row["pool_local"] + row["pool_remote"]
        if row["capacity"] not in bound:
            out.append(f"{_where(row)}: no pooled row at {row['capacity']}")
        elif hits > bound[row["capacity"]]:
            out.append(f"{_where(row)}: the pool has {hits} prefix hits, above Belady with "
                       f"bypass at {row['capacity']} ({bound[row['capacity']]}), against "
                       f"{PREFIX_BOUND}")
    return out


def rule_prefix_wall(fig: Figures) -> list[str]:
    """Prefix hits + distinct blocks <= references: per host, and for the pool."""
    out = []
    for row in fig["rows"]:
        for h, (hits, dist, refs) in enumerate(zip(row["host_hits"], row["host_distinct"],
                                                   row["host_references"], strict=True)):
            if hits + dist > refs:
                out.append(f"{_where(row)}: host {h}: {hits} hits + {dist} distinct blocks > "
                           f"{refs} references, against {PREFIX_WALL}")
        if row["pool_local"] + row["pool_remote"] + fig["wall"] > fig["references"]:
            out.append(f"{_where(row)}: the pool's hits + the wall exceed the references, "
                       f"against {PREFIX_WALL}")
    out += [f"pooled at {p['capacity']}: {p['hits']} hits + wall {fig['wall']} > "
            f"{fig['references']} references, against {PREFIX_WALL}"
            for p in fig["pooled"] if p["hits"] + fig["wall"] > fig["references"]]
    return out


def rule_mirror_accounting(fig: Figures) -> list[str]:
    """The exact accounting of :data:`COST_THEOREM` on each row's flat view."""
    r, m = fig["prices"]["remote_us"], fig["prices"]["miss_us"]
    out = []
    for row in fig["rows"]:
        e, flat, cost = row["cached_elsewhere"], row["flat_misses"], row["mirror_cost_us"]
        where = f"{_where(row)} (r={r}, m={m}, e={e}, per-host flat misses {flat})"
        if not 0 <= e <= flat:
            out.append(f"{where}: e outside 0..per-host misses")
        if row["mirror_misses"] + e != flat:
            out.append(f"{where}: mirroring pool misses {row['mirror_misses']} + e != per-host "
                       f"misses, against {SIMULATION_THEOREM}")
        if r <= m and (cost + (m - r) * e != m * flat or cost > m * flat):
            out.append(f"{where}: mirroring pool cost {cost} + (m - r) e != m x per-host "
                       f"misses {m * flat}, against {COST_THEOREM}")
        if r > m and cost != m * flat + (r - m) * e:
            out.append(f"{where}: mirroring pool cost {cost} != m x per-host misses + (r - m) "
                       f"e, against {COST_THEOREM}")
        if row["mirror_min_cost_us"] > m * flat:
            out.append(f"{where}: declining pool cost {row['mirror_min_cost_us']} > m x "
                       f"per-host misses, against {COST_THEOREM}")
    return out


def rule_counts(fig: Figures) -> list[str]:
    """Each request routed once and each reference served once (per host and in the pool),
    the per-host caches within their capacity, and their flat misses at least their prefix
    misses (a request's blocks are looked up before its touches, which can only evict)."""
    out = []
    for row in fig["rows"]:
        where = _where(row)
        if row["requests"] != fig["requests"]:
            out.append(f"{where}: {row['requests']} requests routed, the trace has "
                       f"{fig['requests']}")
        if row["references"] != fig["references"] or sum(row["host_references"]) != \
                fig["references"] or len(row["host_references"]) != row["hosts"]:
            out.append(f"{where}: references served differ from the trace's "
                       f"{fig['references']}")
        if row["tokens"] != fig["tokens"] or row["pool_tokens"] != fig["tokens"]:
            out.append(f"{where}: tokens served differ from the trace's {fig['tokens']}")
        if row["pool_local"] + row["pool_remote"] + row["pool_misses"] != fig["references"]:
            out.append(f"{where}: the pool served {row['pool_local'] + row['pool_remote']} "
                       f"hits + {row['pool_misses']} misses, not every reference once")
        if row["hits"] != sum(row["host_hits"]) or row["misses"] != row["references"] - \
                row["hits"]:
            out.append(f"{where}: hits and misses do not add up over hosts")
        if row["peak_max"] > row["host_capacity"]:
            out.append(f"{where}: a host held {row['peak_max']} blocks")
        if not 0 <= row["hit_tokens"] <= row["tokens"]:
            out.append(f"{where}: {row['hit_tokens']} hit tokens")
        if row["flat_misses"] < row["misses"]:  # a touch hits only what was cached before
            out.append(f"{where}: {row['flat_misses']} flat misses, below the "
                       f"{row['misses']} prefix misses of the same caches")
    return out


def rule_is_the_curve(fig: Figures) -> list[str]:
    """At one host every routing, and the pool under every route, hit exactly the one-pass
    prefix curve at the capacity (blocks; tokens too at one host and for the pool)."""
    pooled = {p["capacity"]: p for p in fig["pooled"]}
    out = []
    for row in fig["rows"]:
        p = pooled.get(row["capacity"])
        if p is None:
            out.append(f"{_where(row)}: no pooled row at {row['capacity']}")
            continue
        if row["pool_local"] + row["pool_remote"] != p["hits"] or \
                row["pool_hit_tokens"] != p["hit_tokens"] or row["pooled_curve_hits"] != p["hits"]:
            out.append(f"{_where(row)}: the pool hit {row['pool_local'] + row['pool_remote']} "
                       f"blocks, the prefix curve at {row['capacity']} has {p['hits']}")
        if row["hosts"] == 1 and (row["hits"] != p["hits"] or row["hit_tokens"] !=
                                  p["hit_tokens"] or row["pool_remote"] != 0):
            out.append(f"{_where(row)}: one host hit {row['hits']} blocks, the prefix curve at "
                       f"{row['capacity']} has {p['hits']}")
    return out


def rule_prices(fig: Figures) -> list[str]:
    """Each cost is its counts times the stated prices."""
    r, m = fig["prices"]["remote_us"], fig["prices"]["miss_us"]
    out = []
    for row in fig["rows"]:
        if row["cost_us"] != m * row["misses"]:
            out.append(f"{_where(row)}: per-host cost {row['cost_us']} != m x misses")
        if row["pool_cost_us"] != r * row["pool_remote"] + m * row["pool_misses"]:
            out.append(f"{_where(row)}: pool cost {row['pool_cost_us']} != r x remote + m x "
                       "misses")
        if row["mirror_cost_us"] != r * row["cached_elsewhere"] + m * row["mirror_misses"]:
            out.append(f"{_where(row)}: mirroring cost != r e + m x its misses")
        if row["mirror_min_cost_us"] != min(r, m) * row["cached_elsewhere"] + \
                m * row["mirror_misses"]:
            out.append(f"{_where(row)}: declining cost != min(r, m) e + m x its misses")
    return out


#: Every rule, with the statement it applies and what it covers.
RULES: tuple[tuple[str, Callable[[Figures], list[str]], str], ...] = (
    ("host_prefix_le_bypass", rule_host_prefix_le_bypass,
     f"{PREFIX_BOUND} (certified by demand-fetch-ceiling): each host's prefix hits <= flat "
     "Belady with bypass on its routed sub-trace (its requests' blocks in file order) at its "
     "capacity"),
    ("pool_prefix_le_bypass", rule_pool_prefix_le_bypass,
     f"{PREFIX_BOUND} (demand-fetch-ceiling): the pooled prefix hits <= flat Belady with "
     "bypass on the whole trace at the total capacity"),
    ("prefix_wall", rule_prefix_wall,
     f"{PREFIX_WALL} (demand-fetch-ceiling): prefix hits + distinct blocks <= references, per "
     "host and pooled"),
    ("mirror_accounting", rule_mirror_accounting,
     f"{COST_THEOREM} and {SIMULATION_THEOREM}, on the flat view of the per-host caches (flat "
     "LRU over the routed tail-first touches): mirroring pool cost + (m - r) e = m x per-host "
     "flat misses and <= it when r <= m; = m x misses + (r - m) e when r > m; min(r, m) form "
     "<= m x misses; mirroring misses + e = per-host misses"),
    ("counts", rule_counts, "every request routed once, every reference and token served "
     "once (per host and pooled), per-host occupancy within capacity, flat misses >= prefix "
     "misses"),
    ("is_the_curve", rule_is_the_curve, "one host, and the pool under every route, hit "
     "exactly the one-pass prefix curve (pytools.traces.prefix) at the capacity"),
    ("prices", rule_prices, "every cost is its counts times the stated r and m"),
)


def check_cost_figures(fig: Figures) -> list[str]:
    """Every way the costed table contradicts a rule of :data:`RULES` (empty: none)."""
    return [p for _name, rule, _what in RULES for p in rule(fig)]


def require_consistent(fig: Figures) -> Figures:
    """``fig`` itself, or :class:`PlacementError` listing the rules it breaks."""
    problems = check_cost_figures(fig)
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more"
                                           if len(problems) > 5 else "")
        raise PlacementError("costed routing table contradicts the checks: " + shown)
    return fig
