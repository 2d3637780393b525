"""One headline sentence per published result, computed from its certificate (its figures, or
for a result without data its headline theorem's printed statement), for README's generated
summary: the README never types a figure by hand.

A headline reads only the certificate it is given; a figure it needs and does not find is a
:class:`HeadlineError` naming the result and the figure, never a silent blank."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Where each result's long description lives (README links every row there).
DOC_DIR = "docs/results"

#: The total memory (blocks) the pooled-placement headline quotes the costed routing table at:
#: the plot's (``PLOT_CAPACITY`` of ``pytools.results.placement.routing_cost_report``, not
#: imported: the headlines read certificates, never the trace machinery).
ROUTING_COST_CAPACITY = 16384


class HeadlineError(ValueError):
    """A certificate lacks a figure its headline needs."""


def _get(cert: dict[str, Any], *path: str | int) -> Any:
    """``cert["figures"][path...]``, or a HeadlineError naming the missing figure."""
    node: Any = cert.get("figures", {})
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            dotted = ".".join(str(p) for p in path)
            raise HeadlineError(f"{cert.get('result', '?')}: no figure `{dotted}` for its "
                                "headline") from None
    return node


def _n(value: int) -> str:
    """An integer as the docs write it: thousands separated by commas."""
    return f"{value:,}"


def _statement(cert: dict[str, Any], name: str) -> str:
    for theorem in cert.get("theorems", []):
        if theorem["name"] == name:
            return str(theorem["statement"])
    raise HeadlineError(f"{cert.get('result', '?')}: no theorem `{name}` for its headline")


def isolation_floor(cert: dict[str, Any]) -> str:
    """A proof, no data: the floor's statement as the certificate prints it."""
    name = "KVCache.Isolation.two_pow_le_of_exact"
    conclusion = _statement(cert, name).rsplit("→ ", 1)[-1]
    return (f"every exact design (zero leak, full reuse) of T tenants over n blocks keeps s "
            f"states with `{conclusion}` (`{name}`), for every T and n: a proof, no data")


def demand_fetch_ceiling(cert: dict[str, Any]) -> str:
    """The kernel-counted ceilings: the claim's window cold and warm, the whole trace."""
    window = _get(cert, "window")
    warm = _get(cert, "window", "warm_start")
    return (f"on the shared Mooncake trace no demand-fetch cache hits more than "
            f"{window['ceiling_percent']} % of the claim's window (lines "
            f"{window['first_line']}–{window['last_line']}, from an empty cache), "
            f"{warm['ceiling_percent']} % of it after lines {warm['prefix_first_line']}–"
            f"{warm['prefix_last_line']}, {_get(cert, 'ceiling_percent')} % of the whole trace "
            f"({_n(_get(cert, 'max_hits'))} of {_n(_get(cert, 'references'))} references); "
            "counted by the Lean kernel")


def single_owner_kernel(cert: dict[str, Any]) -> str:
    """The finite check and the workflow bench."""
    return (f"the finite check lists exactly the {_n(_get(cert, 'reachable_states'))} "
            f"reachable states of one domain ({_get(cert, 'holders')} holders, "
            f"{_get(cert, 'blocks')} block) and agrees with an independent Python reference on "
            f"{_n(_get(cert, 'cases_checked'))} cases; {_get(cert, 'workflows_agree')} of "
            f"{_get(cert, 'workflows')} named workflows agree on Lean's whole system; its "
            f"tagged variant (a toy MAC, presenter untrusted) agrees with its reference in "
            f"every reachable state of its domain ({_get(cert, 'mac_holders')} holders, "
            f"{_n(_get(cert, 'mac_reachable_states'))} states listed) on every tagged case, and "
            f"{_get(cert, 'mac_workflows_agree')} of {_get(cert, 'mac_workflows')} of its "
            "workflows agree")


def pooled_placement(cert: dict[str, Any]) -> str:
    """What is proved for every routing (the pooled offline optimum bounds it; pooled LRU can
    miss more), the committed instance's optimum and the largest trace window CP-SAT proved."""
    windows = _get(cert, "optimum_windows", "windows")
    largest = _get(cert, "optimum_windows", "largest")
    same = sum(1 for w in windows if w["objective"] == w["belady_bypass_misses"])
    return ("for every routing the pooled offline optimum misses no more than per-host caches "
            "and, remote hits priced no dearer than a miss, costs no more (proved); pooled LRU "
            "can miss more than per-host LRU (proved, a family of traces); "
            f"on the committed instance pooled caching misses {_get(cert, 'pooled_misses')} "
            f"times (the wall: {_get(cert, 'wall')}), per-instance caches at best "
            f"{_get(cert, 'per_instance_misses')} (CP-SAT: "
            f"{str(_get(cert, 'per_instance_status')).lower()}); "
            f"on trace windows up to {_n(largest['requests'])} requests CP-SAT's exact pooled "
            f"optimum equals Belady with bypass's misses on {same} of {len(windows)} windows "
            f"(largest: {_n(largest['objective'])} misses, wall {_n(largest['wall'])}); where "
            f"capacity binds (a committed instance, {_get(cert, 'binding_instance', 'requests')} "
            f"requests at capacity {_get(cert, 'binding_instance', 'capacity')}), CP-SAT's "
            f"proved optimum and the Lean kernel's Belady-with-bypass count agree: "
            f"{_get(cert, 'binding_instance', 'optimum')} misses, wall "
            f"{_get(cert, 'binding_instance', 'wall')}; {_routing_cost(cert)}")


def _routing_cost(cert: dict[str, Any]) -> str:
    """The costed routing table at the plot's memory and the largest host count: the cheapest
    per-host routing against the pooled prefix cache under that routing."""
    prices = _get(cert, "routing_cost", "prices")
    rows = _get(cert, "routing_cost", "rows")
    capacity = ROUTING_COST_CAPACITY
    if not any(r["capacity"] == capacity for r in rows):
        raise HeadlineError(f"{cert.get('result', '?')}: no row of `routing_cost` at "
                            f"{capacity} blocks for its headline")
    hosts = max(r["hosts"] for r in rows)
    best = min((r for r in rows if r["capacity"] == capacity and r["hosts"] == hosts),
               key=lambda r: r["cost_us"])
    return (f"on the shared trace as prefix caches, remote hits priced (r = "
            f"{_n(prices['remote_us'])} µs, m = {_n(prices['miss_us'])} µs per block, from public "
            f"figures), {hosts} per-host caches of {_n(capacity)} blocks in all cost "
            f"{best['cost_us'] / 1e6:,.1f} s under the cheapest routing ({best['routing']}), the "
            f"pooled cache {best['pool_cost_us'] / 1e6:,.1f} s under it (sums of prices, not "
            "latencies); every row checked in Python against the bounds the Lean theorems state "
            "(measured, one trace)")


def _values(values: list[int]) -> str:
    return " or ".join(_n(v) for v in values)


def tenant_leak(cert: dict[str, Any]) -> str:
    """The leak on the engine's cache code, its closure by the keyed salt, and the eviction
    channel on the served engine: stock pool against the partitioned pool."""
    totals = _get(cert, "totals")
    bound = _get(cert, "upper_bounds", "keyed_salt")
    engine = _get(cert, "engine")
    part = _get(cert, "served_partition", "partitioned")
    stock = _get(cert, "served_partition", "stock")
    low, high = part["auc_95"]
    return (f"on {engine['name']} {engine['version']}'s cache code, unsalted, tenant B is "
            f"served {_n(totals['cross_tenant_hit_tokens_unsalted'])} of tenant A's cached "
            f"tokens on {len(_get(cert, 'prompt_tokens'))} prompts; with the admission layer's "
            f"keyed salt, {_n(totals['adversary_hit_tokens_keyed_salt'])} tokens, and "
            f"{bound['leaking_pairs']} of {_n(bound['pairs'])} random pairs leak (95 % upper "
            f"bound {bound['upper_bound_exact_95'] * 100:.2f} %); served, an attacker's probe "
            f"is served {_values(stock['cached_tokens_when_sent'])} cached tokens when the "
            f"victim sent and {_values(stock['cached_tokens_when_not_sent'])} when not on the "
            f"stock pool, {_values(part['cached_tokens_when_sent'])} and "
            f"{_values(part['cached_tokens_when_not_sent'])} on the partitioned pool "
            f"({part['trials']} trials, TTFT AUC {low:.2f}–{high:.2f})")


#: The headline of each published result, by result id.
HEADLINES: dict[str, Callable[[dict[str, Any]], str]] = {
    "isolation-floor": isolation_floor,
    "demand-fetch-ceiling": demand_fetch_ceiling,
    "single-owner-kernel": single_owner_kernel,
    "pooled-placement": pooled_placement,
    "tenant-leak": tenant_leak,
}


def headline(cert: dict[str, Any]) -> str | None:
    """The headline of ``cert``'s result, or None for a result without one."""
    make = HEADLINES.get(str(cert.get("result")))
    return make(cert) if make else None


def doc_link(result_id: str) -> str:
    """The repository-relative path of a result's long description."""
    return f"{DOC_DIR}/{result_id}.md"
