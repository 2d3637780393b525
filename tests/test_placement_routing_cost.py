"""The costed prefix routing table (:mod:`pytools.results.placement.routing_prefix`,
:mod:`.routing_cost`, :mod:`.routing_cost_report`, :mod:`.routing_prices`): hand-worked traces,
the kernels against obvious references on random chained traces, one planted defect per
checker rule (a doctored row each rule refuses), a planted faulty simulator, the prices'
derivation, the CLI (bad input included) and the whole-trace sweep against its budget."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from pytools.paths import sha256_file
from pytools.publish.validation import load_schema
from pytools.results.placement.cli import main
from pytools.results.placement.instance import PlacementError
from pytools.results.placement.routing import KV_AWARE_SLACK_PERCENT, static_route
from pytools.results.placement.routing_cost import (
    RULES,
    check_cost_figures,
    require_consistent,
    rule_counts,
    rule_host_prefix_le_bypass,
    rule_is_the_curve,
    rule_mirror_accounting,
    rule_pool_prefix_le_bypass,
    rule_prefix_wall,
    rule_prices,
)
from pytools.results.placement.routing_cost_report import (
    COST_FILES,
    cost_csv,
    cost_figures,
    cost_svg,
    cost_table_text,
    routing_cost_evidence,
    write_cost_artifacts,
)
from pytools.results.placement.routing_prefix import (
    PrefixRequests,
    bypass_hits,
    read_prefix_requests,
    run_prefix_sweep,
    simulate_prefix,
)
from pytools.results.placement.routing_prices import (
    PRESETS,
    Prices,
    bytes_per_token,
    miss_us,
    prices_of,
    remote_us,
)
from pytools.results.spec import InputFile
from pytools.traces.bypass import simulate_belady_bypass
from pytools.traces.trace import TRACE_INPUT_PATH

ROOT = Path(__file__).resolve().parent.parent

# ----------------------------------------------------------------------------- helpers


def write_trace(path: Path, reqs: list[list[int]], tokens: list[int] | None = None) -> Path:
    """A JSON Lines trace: each request's hash_ids and an input_length (full blocks of 512
    but the last, of ``tokens[i] - 512 (n - 1)``; default all full)."""
    lines = []
    for i, r in enumerate(reqs):
        length = tokens[i] if tokens else 512 * len(r)
        lines.append(json.dumps({"timestamp": i, "input_length": length, "hash_ids": r}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: The hand-worked trace: three requests sharing block 0 (a system prompt), the third
#: repeating the first; the first has 1,000 tokens (512 + 488), the others 1,024.
HAND = [[0, 1], [0, 2], [0, 1]]
HAND_TOKENS = [1000, 1024, 1024]


def hand(tmp_path: Path) -> PrefixRequests:
    return read_prefix_requests(write_trace(tmp_path / "hand.jsonl", HAND, HAND_TOKENS))


def chained_trace(rng: random.Random, n: int, alphabet: int = 2,
                  longest: int = 5) -> list[list[int]]:
    """Random requests with chained ids: a request is a random word, the id of its block i
    the id of the word's first i + 1 letters (so shared prefixes share ids)."""
    ids: dict[tuple[int, ...], int] = {}
    out = []
    for _ in range(n):
        word = tuple(rng.randrange(alphabet) for _ in range(rng.randint(1, longest)))
        out.append([ids.setdefault(word[:i + 1], len(ids)) for i in range(len(word))])
    return out


# ----------------------------------------------------------------------------- references


def ref_run(reqs: list[list[int]], route: list[int] | None, hosts: int,
            cap: int) -> dict[str, Any]:
    """Per-host prefix caches, their flat view and the pooled cache, written the obvious way
    (an OrderedDict per cache, most recent last; kv-aware when ``route`` is None)."""
    caches: list[OrderedDict[int, None]] = [OrderedDict() for _ in range(hosts)]
    pool: OrderedDict[int, int] = OrderedDict()  # block -> host it lives on
    hits, load = [0] * hosts, [0] * hosts
    joint = [0, 0, 0]
    pooled = [0, 0, 0]
    chosen = []
    for i, req in enumerate(reqs):
        if route is None:
            def run(c: OrderedDict[int, None], req: list[int] = req) -> int:
                k = 0
                while k < len(req) and req[k] in c:
                    k += 1
                return k
            eligible = [h for h in range(hosts)
                        if load[h] * hosts * 100 <= (100 + KV_AWARE_SLACK_PERCENT) * i]
            g = max(eligible, key=lambda h: (run(caches[h]), -load[h], -h))
        else:
            g = route[i]
        chosen.append(g)
        load[g] += 1
        c = caches[g]
        k = 0
        while k < len(req) and req[k] in c:
            k += 1
        hits[g] += k
        for y in reversed(req):  # tail first
            if y in c:
                joint[0] += 1
            elif any(y in caches[h] for h in range(hosts)):
                joint[1] += 1
            else:
                joint[2] += 1
            if y in c:
                c.move_to_end(y)
            elif cap:
                if len(c) >= cap:
                    c.popitem(last=False)
                c[y] = None
        k = 0
        while k < len(req) and req[k] in pool:
            pooled[0 if pool[req[k]] == g else 1] += 1
            k += 1
        pooled[2] += len(req) - k
        for y in reversed(req):
            if y in pool:
                pool.move_to_end(y)
            elif cap:
                if len(pool) >= cap * hosts:
                    pool.popitem(last=False)
                pool[y] = g
    return {"hits": hits, "load": load, "joint": joint, "pooled": pooled, "route": chosen}


# ----------------------------------------------------------------------------- hand-worked


def test_hand_worked_trace(tmp_path: Path) -> None:
    """Round-robin over 2 hosts, 2 blocks each (total 4): r0 [0,1] and r2 [0,1] on host 0,
    r1 [0,2] on host 1.

    Per host: r0 finds host 0 empty (0 hits), touches 1 then 0; r1 finds host 1 empty (0);
    r2 finds 0 and 1 on host 0 (2 hits, 1,024 tokens). Hits 2 of 6 references, misses 4.
    Flat view (touches tail first): r0: 1 nowhere, 0 nowhere; r1: 2 nowhere, 0 on host 0
    (e = 1); r2: 1 local, 0 local. Per-host flat misses 2 + 2 = 4; mirroring pool misses 3.
    Pooled (4 blocks, one LRU): r0 on host 0 misses 2 (0 and 1 now live on host 0); r1 on
    host 1: 0 lives on host 0 (remote 1), 2 missing (miss 1, lives on host 1); r2 on host 0:
    0 and 1 local (2). Local 2, remote 1, misses 3.
    Bypass: host 0's sub-trace 0 1 0 1 at 2 blocks hits 2, host 1's 0 2 hits 0; the whole
    trace 0 1 0 2 0 1 at 4 blocks hits 3.
    At r = 3, m = 10: per-host cost 10 x 4 = 40; pool 3 x 1 + 10 x 3 = 33; mirroring pool
    3 x 1 + 10 x 3 = 33, and 33 + (10 - 3) x 1 = 40 = 10 x 4 (the theorem's equality)."""
    pr = hand(tmp_path)
    run = simulate_prefix(pr, "round-robin", static_route(pr.reqs, "round-robin", 2), 2, 2)
    assert (run.hits, run.hit_tokens, run.references) == ((2, 0), (1024, 0), (4, 2))
    assert run.tokens == (1000 + 1024, 1024)  # 512 + 488, then 512 + 512
    assert (run.flat_misses, run.joint_elsewhere, run.joint_nowhere) == (4, 1, 3)
    assert (run.pool_local, run.pool_remote, run.pool_misses) == (2, 1, 3)
    # tokens: local 0 and 1 of r2 (1,024), remote block 0 of r1 (512), the rest missed
    assert (run.pool_local_tokens, run.pool_remote_tokens) == (1024, 512)
    assert (run.bypass, run.distinct, run.load) == ((2, 0), (2, 2), (2, 1))
    sw = run_prefix_sweep(pr, hosts=(1, 2), capacities=(4,))
    assert sw.pooled_at(4).bypass_hits == 3 and sw.pooled_at(4).hits == 3
    fig = cost_figures(sw, Prices("hand", 3, 10), "hand")
    row = next(r for r in fig["rows"] if r["hosts"] == 2 and r["routing"] == "round-robin")
    assert (row["cost_us"], row["pool_cost_us"], row["mirror_cost_us"]) == (40, 33, 33)
    assert row["mirror_cost_us"] + (10 - 3) * row["cached_elsewhere"] == 10 * row["flat_misses"]
    # kv-aware routes as round-robin here: r1 cannot go to host 0 (load 1 > 1.25 x 1/2)
    kv = next(r for r in fig["rows"] if r["hosts"] == 2 and r["routing"] == "kv-aware")
    assert (kv["hits"], kv["pool_remote"], kv["cached_elsewhere"]) == (2, 1, 1)
    # one host: every routing is the pooled cache, no remote hit: 3 hits, cost 10 x 3
    one = [r for r in fig["rows"] if r["hosts"] == 1]
    assert {(r["hits"], r["cost_us"], r["pool_cost_us"]) for r in one} == {(3, 30, 30)}


def test_below_the_longest_request_the_cache_is_tail_first_lru(tmp_path: Path) -> None:
    """Capacity 1, [0, 1] twice: the first request touches 1, then 0 (evicting 1): block 0
    stays, so the second hits 1 block. (The simulator's radix LRU would keep nothing: the
    documented difference below the longest request, pytools.traces.prefix.)"""
    pr = read_prefix_requests(write_trace(tmp_path / "t.jsonl", [[0, 1], [0, 1]]))
    run = simulate_prefix(pr, "round-robin", np.zeros(2, dtype=np.int64), 1, 1)
    assert run.hits == (1,) and pr.curve_blocks.at(1) == 1
    # flat touches: 1 miss, 0 miss, then 1 miss (0 was cached, 1 evicts it), 0 miss
    assert run.flat_hits == (0,) and run.flat_misses == 4


# ----------------------------------------------------------------------------- references


@pytest.mark.parametrize("seed", range(12))
def test_kernels_match_the_obvious_reference(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    reqs = chained_trace(rng, rng.randint(1, 40), alphabet=rng.choice((2, 3)))
    pr = read_prefix_requests(write_trace(tmp_path / "r.jsonl", reqs))
    for hosts in (1, 2, 3):
        for cap in (0, 1, 2, 4):
            for routing in ("random", "kv-aware"):
                route = None if routing == "kv-aware" else static_route(pr.reqs, routing, hosts)
                run = simulate_prefix(pr, routing, route, hosts, cap)
                # the dense ids keep the trace's order of first reference: remap the reference
                dense = pr.reqs.ids.tolist()
                off = pr.reqs.offsets.tolist()
                dreqs = [dense[off[i]:off[i + 1]] for i in range(len(reqs))]
                ref = ref_run(dreqs, None if route is None else route.tolist(), hosts, cap)
                assert list(run.hits) == ref["hits"], (hosts, cap, routing)
                assert list(run.load) == ref["load"]
                assert [run.joint_local, run.joint_elsewhere, run.joint_nowhere] == \
                    ref["joint"]
                assert [run.pool_local, run.pool_remote, run.pool_misses] == ref["pooled"]
                for h in range(hosts):
                    sub = [x for r, g in zip(dreqs, ref["route"], strict=True) if g == h
                           for x in r]
                    assert run.bypass[h] == simulate_belady_bypass(sub, cap)
                    assert run.distinct[h] == len(set(sub))


def test_numba_bypass_is_the_python_rule() -> None:
    rng = random.Random(7)
    for _ in range(300):
        stream = [rng.randrange(9) for _ in range(rng.randrange(0, 50))]
        for cap in range(0, 7):
            assert bypass_hits(np.asarray(stream, dtype=np.int64), cap, 9) == \
                simulate_belady_bypass(stream, cap)


def test_random_traces_pass_every_rule(tmp_path: Path) -> None:
    rng = random.Random(3)
    for i in range(6):
        reqs = chained_trace(rng, 60, alphabet=3, longest=6)
        pr = read_prefix_requests(write_trace(tmp_path / f"{i}.jsonl", reqs))
        sw = run_prefix_sweep(pr, hosts=(1, 2, 4), capacities=(4, 8, 16))
        for prices in (Prices("cheap remote", 2, 9), Prices("dear remote", 11, 5)):
            fig = cost_figures(sw, prices, "random")
            assert check_cost_figures(fig) == []


# ----------------------------------------------------------------------------- planted


@pytest.fixture
def figures(tmp_path: Path) -> dict[str, Any]:
    rng = random.Random(11)
    pr = read_prefix_requests(write_trace(tmp_path / "p.jsonl",
                                          chained_trace(rng, 80, 3, 6)))
    return cost_figures(run_prefix_sweep(pr, hosts=(1, 2, 4), capacities=(4, 8)),
                        Prices("planted", 3, 10), "planted")


def _row(fig: dict[str, Any], hosts: int, routing: str = "random") -> dict[str, Any]:
    return next(r for r in fig["rows"] if r["hosts"] == hosts and r["routing"] == routing)


def _doctored(fig: dict[str, Any], edit: Any) -> dict[str, Any]:
    bad = copy.deepcopy(fig)
    edit(bad)
    return bad


def test_each_rule_refuses_its_planted_row(figures: dict[str, Any]) -> None:
    """One doctored figure per rule: the rule refuses it (the untouched figures pass), and so
    does the whole checker (require_consistent raises)."""

    def host_above_bypass(f: dict[str, Any]) -> None:
        r = _row(f, 2)
        r["host_hits"][0] = r["host_bypass_hits"][0] + 1

    def pool_above_bypass(f: dict[str, Any]) -> None:
        f["pooled"][0]["bypass_hits"] = f["pooled"][0]["hits"] - 1

    def below_the_wall(f: dict[str, Any]) -> None:
        r = _row(f, 4)
        r["host_distinct"][1] = r["host_references"][1] - r["host_hits"][1] + 1

    def e_shifted(f: dict[str, Any]) -> None:
        _row(f, 4, "round-robin")["cached_elsewhere"] += 1  # the cost left as it was

    def request_lost(f: dict[str, Any]) -> None:
        _row(f, 2, "kv-aware")["requests"] -= 1

    def one_host_off_the_curve(f: dict[str, Any]) -> None:
        r = _row(f, 1, "prefix-hash-2")
        r["hits"] += 1
        r["host_hits"][0] += 1
        r["misses"] -= 1
        r["cost_us"] -= 10

    def cost_off_by_one(f: dict[str, Any]) -> None:
        _row(f, 2, "prefix-hash-1")["pool_cost_us"] += 1

    planted = {
        rule_host_prefix_le_bypass: host_above_bypass,
        rule_pool_prefix_le_bypass: pool_above_bypass,
        rule_prefix_wall: below_the_wall,
        rule_mirror_accounting: e_shifted,
        rule_counts: request_lost,
        rule_is_the_curve: one_host_off_the_curve,
        rule_prices: cost_off_by_one,
    }
    assert set(planted) == {rule for _n, rule, _w in RULES}  # one planted defect a rule
    for rule, edit in planted.items():
        assert rule(figures) == [], rule.__name__
        bad = _doctored(figures, edit)
        assert rule(bad), f"{rule.__name__} let its planted row through"
        with pytest.raises(PlacementError, match="contradicts the checks"):
            require_consistent(bad)


def test_flat_misses_below_prefix_misses_are_refused(figures: dict[str, Any]) -> None:
    """A request's blocks are looked up before its touches, which can only evict: its flat
    misses are at least its prefix misses; a row claiming fewer is refused by the counts."""
    bad = copy.deepcopy(figures)
    row = _row(bad, 4, "kv-aware")
    row["flat_misses"] = row["misses"] - 1
    assert any("flat misses, below" in p for p in rule_counts(bad))


def test_mirror_accounting_for_r_above_m(figures: dict[str, Any]) -> None:
    """r > m: the mirroring pool costs m x per-host misses + (r - m) e exactly; a row priced
    as if r <= m is refused."""
    f = copy.deepcopy(figures)
    f["prices"]["remote_us"], f["prices"]["miss_us"] = 12, 5
    for row in f["rows"]:
        e, rest = row["cached_elsewhere"], row["mirror_misses"]
        row["mirror_cost_us"] = 12 * e + 5 * rest
        row["mirror_min_cost_us"] = 5 * e + 5 * rest
    assert rule_mirror_accounting(f) == []
    row = next(r for r in f["rows"] if r["cached_elsewhere"])
    row["mirror_min_cost_us"] = row["mirror_cost_us"]  # dear remote hits not declined
    assert rule_mirror_accounting(f)


def test_planted_simulator_counting_flat_hits_is_refused(tmp_path: Path) -> None:
    """A simulator that counts the flat touch hits as prefix hits: on [0, 1] twice at one
    block, 0 against the curve's 1; the sweep's figures are refused."""
    pr = read_prefix_requests(write_trace(tmp_path / "t.jsonl", [[0, 1], [0, 1]]))

    def flat(pr: PrefixRequests, routing: str, route: Any, hosts: int, cap: int) -> Any:
        run = simulate_prefix(pr, routing, route, hosts, cap)
        return dataclasses.replace(run, hits=run.flat_hits)

    sw = run_prefix_sweep(pr, hosts=(1,), capacities=(1,), simulate=flat)
    with pytest.raises(PlacementError, match="prefix curve"):
        cost_figures(sw, Prices("p", 1, 2), "t")


# ----------------------------------------------------------------------------- prices


def test_prices_follow_from_their_sources() -> None:
    """DeepSeek-V3, BF16: 61 layers x (512 + 64) values x 2 bytes = 70,272 bytes a token (the
    kvcache-simulator's deepseek-v3 figure), 35,979,264 a 512-token block. m: 73,700 tokens/s
    x 266/608 computed = 32,243.75 tokens/s, 512 tokens in 15,879.0 us. r: 35,979,264 x 8 bits
    at 100 Gb/s = 2,878.3 us, at 400 Gb/s 719.6 us."""
    assert bytes_per_token() == 70272
    assert miss_us() == 15879
    assert (remote_us(100), remote_us(400)) == (2878, 720)
    assert [(p.remote, p.miss) for p in PRESETS.values()] == [(2878, 15879), (720, 15879)]
    assert prices_of() == PRESETS["deepseek-v3-h800-100g"]
    assert (prices_of(remote=5).remote, prices_of(miss=7).miss) == (5, 7)
    with pytest.raises(ValueError, match="unknown prices"):
        prices_of("tpu")
    with pytest.raises(ValueError, match="non-negative"):
        Prices("x", -1, 3)


def test_docs_price_table_is_the_code() -> None:
    """The docs page's price table states each preset's r and m as the code computes them."""
    text = (ROOT / "docs/results/pooled-placement.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(deepseek-v3-[\w-]+)` \| ([\d,]+) \| ([\d,]+) \|", text, re.M)
    assert {n: (int(r.replace(",", "")), int(m.replace(",", ""))) for n, r, m in rows} == {
        n: (p.remote, p.miss) for n, p in PRESETS.items()}


# ----------------------------------------------------------------------------- CLI


def test_cli_prefix_table_json_and_files(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "hand.jsonl", HAND, HAND_TOKENS)
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["routing", "--trace", str(trace), "--semantics", "prefix",
                                  "--remote-cost", "3", "--miss-cost", "10", "--json",
                                  "--quiet", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert (doc["prices"]["remote_us"], doc["prices"]["miss_us"]) == (3, 10)
    assert doc["requests"] == 3 and doc["references"] == 6 and doc["tokens"] == 3048
    assert sorted(p.name for p in out.iterdir()) == sorted(COST_FILES)
    r = CliRunner().invoke(main, ["routing", "--trace", str(trace), "--semantics", "prefix",
                                  "--prices", "deepseek-v3-h800-400g", "--quiet"])
    assert r.exit_code == 0 and "r = 720 us, m = 15879 us" in r.output


@pytest.mark.parametrize(("args", "message"), [
    (["--remote-cost", "-1", "--semantics", "prefix"], "-1"),
    (["--miss-cost", "x", "--semantics", "prefix"], "'x'"),
    (["--prices", "tpu", "--semantics", "prefix"], "tpu"),
    (["--miss-cost", "5"], "need --semantics prefix"),
])
def test_cli_bad_prices(tmp_path: Path, args: list[str], message: str) -> None:
    trace = write_trace(tmp_path / "hand.jsonl", HAND, HAND_TOKENS)
    r = CliRunner().invoke(main, ["routing", "--trace", str(trace), *args])
    assert r.exit_code != 0 and message in r.output
    assert "Traceback" not in r.output


def test_cli_bad_prefix_traces(tmp_path: Path) -> None:
    """A line without input_length, an input_length that does not fit its blocks, ids that
    are not chained: one error naming the file and line each, nothing written."""
    cases = {
        "no_length.jsonl": ('{"hash_ids": [0, 1]}\n', ":1: missing 'input_length'"),
        "too_long.jsonl": ('{"hash_ids": [0], "input_length": 600}\n', ":1: input_length"),
        "unchained.jsonl": ('{"hash_ids": [0, 1], "input_length": 1024}\n'
                            '{"hash_ids": [2, 1], "input_length": 1024}\n', ":2: a block id"),
    }
    out = tmp_path / "out"
    for name, (body, message) in cases.items():
        path = tmp_path / name
        path.write_text(body, encoding="utf-8")
        r = CliRunner().invoke(main, ["routing", "--trace", str(path), "--semantics", "prefix",
                                      "--quiet", "--out", str(out)])
        assert r.exit_code != 0 and f"{path}{message}" in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1
        assert not out.exists() or not list(out.iterdir())


# ----------------------------------------------------------------------------- the trace

#: The budget for the whole costed sweep of the shared trace, one core (CPU seconds).
COST_BUDGET_S = 60.0


@pytest.mark.slow
def test_whole_trace_costed_sweep(repo_root: Path, trace_path: Path, tmp_path: Path) -> None:
    """The evidence's costed sweep of the shared trace within its budget (CPU seconds, numba
    kernels loaded first), every row checked, schema-valid, its artifacts byte-deterministic;
    a figure contradicting the schema is refused."""
    warm = read_prefix_requests(write_trace(tmp_path / "w.jsonl", HAND, HAND_TOKENS))
    run_prefix_sweep(warm, hosts=(1, 2), capacities=(2,))
    cpu = time.process_time()
    fig, trace_input = routing_cost_evidence(repo_root)
    cpu = time.process_time() - cpu
    assert cpu < COST_BUDGET_S, f"costed sweep took {cpu:.1f} CPU s"
    assert trace_input == InputFile(TRACE_INPUT_PATH, sha256_file(trace_path))
    assert (fig["requests"], fig["references"], fig["wall"]) == (12031, 288500, 182790)
    assert len(fig["rows"]) == len(fig["capacities"]) * 5 * 5
    assert check_cost_figures(fig) == []
    # at the wall every prefix cache keeps every block it sees: pooled hits = the ceiling
    top = fig["pooled"][-1]
    assert top["hits"] == top["bypass_hits"] == fig["references"] - fig["wall"]
    schema = Draft202012Validator(
        load_schema("figures/pooled-placement")["properties"]["routing_cost"])
    assert [e.message for e in schema.iter_errors(fig)] == []
    bad = copy.deepcopy(fig)
    bad["rows"][0]["hit_percent"] = "4.2"  # not four decimals
    assert list(schema.iter_errors(bad))
    a = write_cost_artifacts(repo_root, tmp_path / "a")
    b = write_cost_artifacts(repo_root, tmp_path / "b")
    assert [p.name for p in a] == list(COST_FILES)
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    assert cost_csv(fig) == a[0].read_bytes() and cost_svg(fig) == a[1].read_bytes()
    assert "every row checked" in cost_table_text(fig)
