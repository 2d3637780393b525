"""Pooled placement on real traffic: per-instance LRU under each routing against pooled caches
(:mod:`pytools.results.placement.routing` and :mod:`.routing_report`).

Each simulator is checked against an obvious reference on small random streams (hypothesis);
the proved invariant, pooled Belady with bypass at the summed capacity misses no more than
every routing and no fewer than the wall, on random instances against a brute-force optimum;
planted defects (an LRU that never evicts, a routing that counts a host twice, a tampered
figure or row) are shown caught; the whole-trace sweep is timed against its one-minute budget.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pytools.paths import sha256_file
from pytools.publish.validation import load_schema
from pytools.results.placement.cli import main
from pytools.results.placement.instance import PlacementError
from pytools.results.placement.result import check_figures
from pytools.results.placement.routing import (
    HOSTS,
    KV_AWARE_SLACK_PERCENT,
    ROUTINGS,
    HostRun,
    Requests,
    check_sweep,
    requests_of,
    run_sweep,
    simulate_hosts,
    static_route,
    sweep_capacities,
)
from pytools.results.placement.routing_report import (
    ROUTING_LIMITS,
    claim_shape,
    routing_csv,
    routing_evidence,
    routing_figures,
    routing_svg,
    table_text,
    write_routing_artifacts,
)
from pytools.results.spec import InputFile
from pytools.traces.policies import simulate_lru
from pytools.traces.progress import delayed_bar
from pytools.traces.trace import TRACE_INPUT_PATH

# ----------------------------------------------------------------------------- references


def ref_routed_lru(reqs: Sequence[Sequence[int]], route: Sequence[int], hosts: int,
                   cap: int) -> list[int]:
    """Hits per host: each host's sub-stream through the ceiling result's plain LRU."""
    return [simulate_lru([x for r, h in zip(reqs, route, strict=True) if h == host for x in r],
                         cap) for host in range(hosts)]


def ref_kv_aware(reqs: Sequence[Sequence[int]], hosts: int, cap: int,
                 slack: int = KV_AWARE_SLACK_PERCENT) -> tuple[list[int], list[int]]:
    """The KV-aware rule written the obvious way: (route, hits per host)."""
    caches: list[OrderedDict[int, None]] = [OrderedDict() for _ in range(hosts)]
    load = [0] * hosts
    hits = [0] * hosts
    route = []
    for i, req in enumerate(reqs):
        eligible = [h for h in range(hosts) if load[h] * hosts * 100 <= (100 + slack) * i]

        def overlap(h: int, req: Sequence[int] = req) -> int:
            n = 0
            for x in req:
                if x not in caches[h]:
                    break
                n += 1
            return n

        best = min(eligible, key=lambda h: (-overlap(h), load[h], h))
        route.append(best)
        load[best] += 1
        cache = caches[best]
        for x in req:
            if x in cache:
                hits[best] += 1
                cache.move_to_end(x)
            elif cap:
                if len(cache) >= cap:
                    cache.popitem(last=False)
                cache[x] = None
    return route, hits


def brute_force_min_misses(stream: Sequence[int], cap: int) -> int:
    """The fewest misses of any demand-fetch cache of ``cap`` blocks (it may decline to store a
    missed block), by exhaustive search over what to keep."""
    n = len(stream)

    @functools.cache
    def best(i: int, cache: frozenset[int]) -> int:
        if i == n:
            return 0
        x = stream[i]
        if x in cache:
            return best(i + 1, cache)
        options = [cache]  # bypass
        if cap:
            if len(cache) < cap:
                options.append(cache | {x})
            else:
                options += [(cache - {v}) | {x} for v in cache]
        return 1 + min(best(i + 1, c) for c in options)

    return best(0, frozenset())


def distinct_ids(reqs: Sequence[Sequence[int]]) -> int:
    return len({x for r in reqs for x in r})


requests_st = st.lists(st.lists(st.integers(0, 9), min_size=0, max_size=5), min_size=1,
                       max_size=25)


# ----------------------------------------------------------------------------- simulators


@settings(max_examples=150, deadline=None)
@given(reqs=requests_st, hosts=st.integers(1, 4), cap=st.integers(0, 5), seed=st.integers(0, 3))
def test_per_host_lru_matches_plain_lru(reqs: list[list[int]], hosts: int, cap: int,
                                        seed: int) -> None:
    r = requests_of(reqs)
    route = np.asarray([(i * 7 + seed) % hosts for i in range(len(reqs))], dtype=np.int64)
    run = simulate_hosts(r, "test", route, hosts, cap)
    assert list(run.hits) == ref_routed_lru(reqs, route.tolist(), hosts, cap)
    assert list(run.load) == [int((route == h).sum()) for h in range(hosts)]
    assert sum(run.references) == sum(map(len, reqs))
    assert list(run.distinct) == [
        len({x for q, h in zip(reqs, route, strict=True) if h == host for x in q})
        for host in range(hosts)]
    assert max(run.peak) <= cap


@settings(max_examples=150, deadline=None)
@given(reqs=requests_st, hosts=st.integers(1, 4), cap=st.integers(0, 5))
def test_kv_aware_matches_the_obvious_router(reqs: list[list[int]], hosts: int,
                                             cap: int) -> None:
    run = simulate_hosts(requests_of(reqs), "kv-aware", None, hosts, cap)
    route, hits = ref_kv_aware(reqs, hosts, cap)
    assert list(run.hits) == hits
    assert list(run.load) == [route.count(h) for h in range(hosts)]


def test_kv_aware_follows_the_cached_prefix_within_the_load_slack() -> None:
    # two conversations alternating: with room, each stays on the host holding its prefix
    reqs = [[0, 1], [0, 5], [0, 1, 2], [0, 5, 6], [0, 1, 2, 3], [0, 5, 6, 7]]
    run = simulate_hosts(requests_of(reqs), "kv-aware", None, 2, 8)
    route, _ = ref_kv_aware(reqs, 2, 8)
    assert route == [0, 1, 0, 1, 0, 1]
    assert run.total_hits == 2 + 2 + 3 + 3  # each later turn hits its whole prefix
    assert run.load_spread == 1


def test_static_routes() -> None:
    reqs = [[0, i, i + 1] for i in range(40)]
    r = requests_of(reqs)
    assert static_route(r, "round-robin", 4).tolist() == [i % 4 for i in range(40)]
    assert set(static_route(r, "prefix-hash-1", 4).tolist()) == {static_route(
        r, "prefix-hash-1", 4)[0]}  # every request starts with block 0: one host
    assert len(set(static_route(r, "prefix-hash-2", 4).tolist())) > 1
    a, b = static_route(r, "random", 4), static_route(r, "random", 4)
    assert a.tolist() == b.tolist() and a.min() >= 0 and a.max() < 4
    # the affinity key is the original ids, not the dense remapping
    shifted = requests_of([[x + 100 for x in q] for q in reqs])
    assert static_route(shifted, "prefix-hash-2", 4).tolist() != \
        static_route(r, "prefix-hash-2", 4).tolist()
    with pytest.raises(ValueError, match="unknown static routing"):
        static_route(r, "kv-aware", 4)


def test_sweep_capacities_split_evenly_across_every_host_count() -> None:
    assert sweep_capacities(100, (1, 2, 4, 8, 16), (16, 64, 256)) == (16, 64, 112)
    assert sweep_capacities(100, (2, 3), (12, 48)) == (12, 48, 102)
    with pytest.raises(ValueError, match="split evenly"):
        sweep_capacities(100, (1, 2, 4, 8, 16), (24,))
    with pytest.raises(PlacementError, match="split evenly"):
        run_sweep(requests_of([[1, 2], [1, 3]]), hosts=(1, 2), capacities=(3,))


def test_requests_are_remapped_densely_in_first_reference_order() -> None:
    r = requests_of([[50, 7], [], [7, 99, 50]], "t", "x")
    assert r.ids.tolist() == [0, 1, 1, 2, 0]
    assert r.offsets.tolist() == [0, 2, 2, 5]
    assert (r.requests, r.references, r.distinct) == (3, 5, 3)
    assert r.first_ids == ((50, 7), (), (7, 99))


# ----------------------------------------------------------------------------- the invariant


small_instances = st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=3), min_size=1,
                           max_size=5)


@settings(max_examples=60, deadline=None)
@given(reqs=small_instances, total=st.sampled_from([2, 4]))
def test_pooled_bypass_bounds_every_routing_and_meets_brute_force(reqs: list[list[int]],
                                                                  total: int) -> None:
    r = requests_of(reqs)
    sw = run_sweep(r, hosts=(1, 2), capacities=(total,))
    stream = r.ids.tolist()
    bypass_misses = len(stream) - sw.pooled_at(total).bypass_hits
    assert bypass_misses == brute_force_min_misses(stream, total)  # the optimum
    assert bypass_misses >= distinct_ids(reqs)  # the wall
    for run in sw.runs:
        assert len(stream) - run.total_hits >= bypass_misses  # Lean's bound, every routing
    assert check_sweep(sw) == []


@settings(max_examples=40, deadline=None)
@given(reqs=requests_st, k=st.integers(0, 3))
def test_sweep_invariants_on_random_traces(reqs: list[list[int]], k: int) -> None:
    if not any(reqs):
        return
    r = requests_of(reqs)
    sw = run_sweep(r, hosts=(1, 2, 4), capacities=(4 * (k + 1), 12))
    refs = r.references
    for c in sw.capacities:
        p = sw.pooled_at(c)
        assert refs - p.bypass_hits >= r.distinct
        for h in sw.hosts:
            for name in ROUTINGS:
                run = sw.run(c, h, name)
                assert refs - run.total_hits >= refs - p.bypass_hits
                assert refs - run.total_hits >= sum(run.distinct) >= r.distinct
    # at 12 >= distinct blocks every block fits: pooled LRU meets the wall
    assert refs - sw.pooled_at(12).lru_hits == r.distinct


# ----------------------------------------------------------------------------- planted defects


PLANT = [[0, 1, 2], [0, 3, 4], [0, 1, 2, 5], [0, 3, 4, 6], [0, 7], [0, 1, 2, 5, 8],
         [0, 9, 10], [0, 3, 4, 6, 11], [0, 12], [0, 1, 13]] * 3


def test_planted_lru_that_never_evicts_is_caught() -> None:
    def never_evicts(reqs: Requests, routing: str, route: np.ndarray | None, hosts: int,
                     cap: int) -> HostRun:
        run = simulate_hosts(reqs, routing, route, hosts, 10**6)
        return dataclasses.replace(run, capacity=cap)

    with pytest.raises(PlacementError, match="perInstanceMisses_ge_pooled_beladyBypass|held"):
        run_sweep(requests_of(PLANT), hosts=(1, 2), capacities=(4,), simulate=never_evicts)


def test_planted_routing_that_counts_a_host_twice_is_caught() -> None:
    def twice(reqs: Requests, routing: str, route: np.ndarray | None, hosts: int,
              cap: int) -> HostRun:
        run = simulate_hosts(reqs, routing, route, hosts, cap)
        dup = lambda xs: (*xs, xs[0])  # noqa: E731 (host 0 listed twice)
        return dataclasses.replace(run, hits=dup(run.hits), references=dup(run.references),
                                   distinct=dup(run.distinct), peak=dup(run.peak),
                                   load=dup(run.load))

    with pytest.raises(PlacementError, match="requests routed|references served"):
        run_sweep(requests_of(PLANT), hosts=(1, 2), capacities=(4,), simulate=twice)


def test_planted_rows_are_caught_by_check_sweep() -> None:
    sw = run_sweep(requests_of(PLANT), hosts=(1, 2), capacities=(4, 16))
    assert check_sweep(sw) == []
    i = next(i for i, r in enumerate(sw.runs) if r.hosts == 2 and r.capacity == 2)
    bad = sw.runs[i]
    better = dataclasses.replace(bad, hits=(bad.hits[0] + sw.references, bad.hits[1]))
    runs = (*sw.runs[:i], better, *sw.runs[i + 1:])
    problems = check_sweep(dataclasses.replace(sw, runs=runs))
    assert any("perInstanceMisses_ge_pooled_beladyBypass" in p for p in problems)
    pooled = (dataclasses.replace(sw.pooled[0], bypass_hits=sw.pooled[0].belady_hits - 1),
              *sw.pooled[1:])
    assert any("bypass" in p for p in check_sweep(dataclasses.replace(sw, pooled=pooled)))


def test_planted_tampered_routing_figure_is_caught() -> None:
    sw = run_sweep(requests_of(PLANT), hosts=(1, 2), capacities=(4, 16))
    fresh = {"routing": routing_figures(sw, "t.jsonl")}
    tampered = json.loads(json.dumps(fresh))
    row = tampered["routing"]["rows"][1]["routings"]["round-robin"]
    row["hit_percent"] = "93.7500"
    assert check_figures(Path("."), fresh, fresh) == []
    problems = check_figures(Path("."), tampered, fresh)
    assert problems and problems[0].startswith("routing: recorded")
    flipped = json.loads(json.dumps(fresh))
    flipped["routing"]["claim"]["pooled_rate_reachable"] = True
    assert check_figures(Path("."), flipped, fresh)


# ----------------------------------------------------------------------------- report


def test_figures_table_plot_are_deterministic_and_computed() -> None:
    sw = run_sweep(requests_of(PLANT), capacities=(16, 32))
    a, b = routing_figures(sw, "t.jsonl"), routing_figures(run_sweep(
        requests_of(PLANT), capacities=(16, 32)), "t.jsonl")
    assert a == b
    assert [r["name"] for r in a["routings"]] == list(ROUTINGS)
    assert len(a["rows"]) == 2 * len(HOSTS)
    claim = a["claim"]
    assert claim["claim_kept_percent"] == "36.2667"  # 34 / 93.75
    assert claim["pooled_rate_reachable"] is (sw.references - sw.distinct >= 0.9375 *
                                             sw.references)
    assert sorted(claim["shape_appears"] + claim["shape_absent"]) == sorted(
        f"{r}@{c}" for r in ROUTINGS for c in sw.capacities)
    svg1, svg2 = routing_svg(sw, "t.jsonl"), routing_svg(sw, "t.jsonl")
    assert svg1 == svg2 and b"<dc:date>" not in svg1
    csv = routing_csv(sw, "t.jsonl").decode()
    assert csv.splitlines()[1] == "# sha256: " and "kv-aware_spread" in csv
    assert "ceiling" in table_text(sw)
    assert any("kv-aware" in limit for limit in ROUTING_LIMITS)


def test_claim_shape_is_where_per_instance_keeps_little() -> None:
    # one conversation per request pair, routed round-robin: the second turn never finds its
    # prefix at 16 hosts, so per-instance keeps almost nothing of pooled's hits
    # (second turns in reverse order: round-robin never sends them where their first went)
    reqs = [[1000 + i, i] for i in range(32)] + [[1000 + i, i, 50 + i]
                                                 for i in reversed(range(32))]
    sw = run_sweep(requests_of(reqs), capacities=(256,))
    rows = {r["routing"]: r for r in claim_shape(sw)["rows"]}
    assert rows["round-robin"]["shape"] is True
    assert rows["prefix-hash-1"]["shape"] is False  # affinity on the conversation's block


def test_delayed_bar_counts_steps_on_a_terminal() -> None:
    class FakeTTY(io.StringIO):
        def isatty(self) -> bool:
            return True

    now = [0.0]
    tty = FakeTTY()
    with delayed_bar(10, "routing sweep", False, tty, 2.0, lambda: now[0]) as update:
        assert update is not None
        update(1)
        assert tty.getvalue() == ""
        now[0] = 3.0
        update(10)
    assert "routing sweep" in tty.getvalue() and "100%" in tty.getvalue()
    with delayed_bar(10, "x", True, FakeTTY()) as update:
        assert update is None


# ----------------------------------------------------------------------------- CLI


def test_cli_writes_table_and_plot(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps({"hash_ids": q}) + "\n" for q in PLANT),
                     encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["routing", "--trace", str(trace), "--out", str(out),
                                  "--quiet"])
    assert r.exit_code == 0, r.output
    assert "kv-aware" in r.output and "sweep time (not a figure)" in r.output
    assert sorted(p.name for p in out.iterdir()) == ["placement_routing.csv",
                                                     "placement_routing.svg"]
    first = (out / "placement_routing.svg").read_bytes()
    r = CliRunner().invoke(main, ["routing", "--trace", str(trace), "--out", str(out),
                                  "--json", "--window", "1:10"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["requests"] == 10 and doc["theorem"].endswith("pooled_beladyBypass")
    assert (out / "placement_routing.svg").read_bytes() != first  # the window's plot


def test_cli_bad_trace_and_window(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hash_ids": [1]}\n{"hash_ids": "x"}\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["routing", "--trace", str(bad)])
    assert r.exit_code != 0 and f"{bad}:2" in r.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"hash_ids": []}\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["routing", "--trace", str(empty)])
    assert r.exit_code != 0 and "no block references" in r.output
    good = tmp_path / "good.jsonl"
    good.write_text('{"hash_ids": [1]}\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["routing", "--trace", str(good), "--window", "2:3"])
    assert r.exit_code != 0 and "window" in r.output


# ----------------------------------------------------------------------------- the trace


#: The issue's budget for the whole host x capacity x routing sweep, one core (seconds).
SWEEP_BUDGET_S = 60.0


@pytest.mark.slow
def test_whole_trace_sweep_within_budget(repo_root: Path, trace_path: Path,
                                         tmp_path: Path) -> None:
    """The evidence's sweep of the shared trace (one parse, every capacity, host count and
    routing) within its one-minute budget, timed in CPU seconds (robust to other processes),
    numba's compiled kernels loaded first; the trace is recorded as an input."""
    simulate_hosts(requests_of([[0]]), "warm", np.zeros(1, dtype=np.int64), 1, 1)
    cpu = time.process_time()
    figs, trace_input = routing_evidence(repo_root)
    cpu = time.process_time() - cpu
    assert cpu < SWEEP_BUDGET_S, f"routing sweep took {cpu:.1f} CPU s"
    assert trace_input == InputFile(TRACE_INPUT_PATH, sha256_file(trace_path))
    assert (figs["requests"], figs["references"], figs["wall"]) == (12031, 288500, 182790)
    assert len(figs["rows"]) == len(figs["capacities"]) * len(HOSTS)
    assert figs["claim"]["pooled_rate_reachable"] is False  # the ceiling is below 93.75 %
    # where the claims' shape appears, as README's placement item says it
    appears = {tuple(p.split("@")) for p in figs["claim"]["shape_appears"]}
    caps = figs["capacities"]
    assert appears == {(r, str(c)) for r in ("random", "round-robin") for c in caps
                       if c >= 16384} | {("prefix-hash-1", "16384"), ("prefix-hash-1", "65536")}
    window = figs["window"]
    assert (window["first_line"], window["last_line"], window["requests"]) == (1201, 2000, 800)
    assert window["claim"]["pooled_rate_reachable"] is False
    assert {tuple(p.split("@")) for p in window["claim"]["shape_appears"]} == {
        (r, str(c)) for r in ("random", "round-robin", "prefix-hash-1")
        for c in window["capacities"][-2:]}
    # the artifacts: both sweeps' tables and plots, byte for byte the same twice
    a = write_routing_artifacts(repo_root, tmp_path / "a")
    b = write_routing_artifacts(repo_root, tmp_path / "b")
    assert [p.name for p in a] == ["placement_routing.csv", "placement_routing.svg",
                                   "placement_routing_window.csv",
                                   "placement_routing_window.svg"]
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    schema = Draft202012Validator(load_schema("figures/pooled-placement")["properties"]["routing"])
    assert [e.message for e in schema.iter_errors(figs)] == []
    figs["rows"][0]["routings"]["kv-aware"]["load_spread"] = 0.5  # below 1: impossible
    assert list(schema.iter_errors(figs))


# -------------------------------------------------------------- numba's cache of inlined lists

def stale_list_records(lists: bytes, callers: dict[str, str]) -> list[str]:
    """The callers (name -> recorded digest) whose record of lru_lists.py is not ``lists``'s
    SHA-256: numba keys a cached kernel by its own file alone, so such a caller could keep
    running old list code it inlined."""
    digest = hashlib.sha256(lists).hexdigest()
    return sorted(name for name, recorded in callers.items() if recorded != digest)


def test_the_callers_record_the_list_code_they_inline() -> None:
    from pytools.results.placement import lru_lists, routing, routing_prefix

    lists = Path(lru_lists.__file__).read_bytes()
    callers = {"routing": routing.LRU_LISTS_SHA256,
               "routing_prefix": routing_prefix.LRU_LISTS_SHA256}
    assert stale_list_records(lists, callers) == []
    # Planted: lru_lists.py edited, the callers' records left as they were.
    assert stale_list_records(lists + b"# edited\n", callers) == ["routing", "routing_prefix"]
