"""The exact prefix-cache optimum on trace windows: the CP-SAT model against brute force over
the definition, the record's re-check against planted defects, and the committed record.

Brute force (:func:`brute_force_hits`) enumerates every run of the model of
:mod:`pytools.results.ceiling.prefix_optima_record` (from an empty cache, after each request any
prefix-closed subset of the previous state plus the request's blocks, of at most ``capacity``
blocks; a request hits its longest held leading run), so the model is checked against the
definition, not against itself.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytools.results.ceiling.prefix_model import (
    PrefixOptimaError,
    belady_bypass_kept,
    decode_kept,
    encode_kept,
    prefix_intervals,
    prefix_wall_capacity,
    radix_lru_hits,
    replay_kept,
)
from pytools.results.ceiling.prefix_optima import (
    PREFIX_PARAMS,
    Ladder,
    run_ladder,
    simulator_input,
    solve_prefix,
)
from pytools.results.ceiling.prefix_optima_record import (
    OPTIMAL,
    PREFIX_OPTIMA_PATH,
    check_record,
    check_whole_trace,
)
from pytools.traces.bypass import simulate_belady_bypass
from pytools.traces.trace import TraceRead

Requests = tuple[tuple[int, ...], ...]


def brute_force_hits(requests: Requests, capacity: int) -> int:
    """Most prefix hits over every run of the model fitting ``capacity`` (exhaustive)."""
    parent = {b: (r[j - 1] if j else -1) for r in requests for j, b in enumerate(r)}

    def closed(state: frozenset[int]) -> bool:
        return all(parent[b] < 0 or parent[b] in state for b in state)

    @cache
    def best(t: int, state: frozenset[int]) -> int:
        if t == len(requests):
            return 0
        hit = 0
        for b in requests[t]:
            if b not in state:
                break
            hit += 1
        pool = sorted(state | set(requests[t]))
        out = 0
        for size in range(min(capacity, len(pool)) + 1):
            for nxt in combinations(pool, size):
                s = frozenset(nxt)
                if closed(s):
                    out = max(out, best(t + 1, s))
        return hit + out

    return best(0, frozenset())


def chained(paths: list[list[int]]) -> Requests:
    """Requests from paths in a tree of ids (each list: child indices from the root), so the
    ids are chained: the id of a node names its whole path."""
    names: dict[tuple[int, ...], int] = {}
    out = []
    for path in paths:
        ids = []
        for j in range(1, len(path) + 1):
            ids.append(names.setdefault(tuple(path[:j]), len(names)))
        out.append(tuple(ids))
    return tuple(out)


TINY_PATHS = [[0, 0, 0], [0, 0, 1], [1], [0, 0, 0], [0, 1], [0, 0, 1], [1, 0], [0, 0, 0]]
TINY = chained(TINY_PATHS)

requests_strategy = st.lists(st.lists(st.integers(0, 1), min_size=1, max_size=3),
                             min_size=1, max_size=6).map(chained)


@pytest.mark.parametrize("capacity", [0, 1, 2, 3, 4])
def test_model_equals_brute_force_on_a_tiny_window(capacity: int) -> None:
    solve = solve_prefix(TINY, capacity, 5.0)
    assert solve.status == OPTIMAL and solve.objective == solve.bound
    assert solve.objective == brute_force_hits(TINY, capacity)
    iv = prefix_intervals(TINY)
    assert replay_kept(TINY, capacity, iv, solve.kept) == solve.objective


@settings(max_examples=25, deadline=None)
@given(requests_strategy, st.integers(0, 3))
def test_model_equals_brute_force(requests: Requests, capacity: int) -> None:
    solve = solve_prefix(requests, capacity, 5.0)
    assert solve.status == OPTIMAL
    assert solve.objective == brute_force_hits(requests, capacity)
    stream = [b for r in requests for b in r]
    assert solve.objective <= simulate_belady_bypass(stream, capacity)
    assert solve.objective >= radix_lru_hits(requests, capacity)


@settings(max_examples=40, deadline=None)
@given(requests_strategy, st.integers(0, 3))
def test_belady_with_bypass_runs_a_prefix_cache(requests: Requests, capacity: int) -> None:
    """With chained ids the flat optimum's own run is a prefix cache run: the flat optimum
    is the prefix optimum (brute force over the definition agrees)."""
    iv = prefix_intervals(requests)
    kept, hits = belady_bypass_kept(requests, capacity, iv)
    assert hits == simulate_belady_bypass([b for r in requests for b in r], capacity)
    assert replay_kept(requests, capacity, iv, kept) == hits == brute_force_hits(requests,
                                                                                 capacity)


def test_a_shared_head_is_kept_once() -> None:
    """Requests sharing a head: the best use of two blocks keeps the head and one tail."""
    requests = chained([[0, 0, 0], [1], [0, 0, 0], [0, 0, 0]])
    assert solve_prefix(requests, 2, 5.0).objective == brute_force_hits(requests, 2) == 4


def test_replay_refuses_what_is_not_a_prefix_cache_run() -> None:
    iv = prefix_intervals(TINY)
    everything = [True] * len(iv.blocks)
    assert replay_kept(TINY, prefix_wall_capacity(iv), iv, everything) == len(iv.blocks)
    with pytest.raises(PrefixOptimaError, match="over the capacity"):
        replay_kept(TINY, prefix_wall_capacity(iv) - 1, iv, everything)
    # planted: keep a block's interval without its parent's
    child = next(i for i, b in enumerate(iv.blocks) if iv.parent[b] >= 0)
    only_child = [i == child for i in range(len(iv.blocks))]
    with pytest.raises(PrefixOptimaError, match="closed under prefixes"):
        replay_kept(TINY, 10, iv, only_child)


def test_ids_not_chained_are_refused() -> None:
    with pytest.raises(PrefixOptimaError, match="not chained"):
        prefix_intervals(((1, 2), (3, 2)))
    with pytest.raises(PrefixOptimaError, match="not chained"):
        prefix_intervals(((1, 2, 1),))


@given(st.lists(st.booleans(), max_size=40))
def test_kept_encoding_round_trips(kept: list[bool]) -> None:
    assert decode_kept(encode_kept(kept), len(kept)) == kept


def test_kept_decoding_refuses_bad_text() -> None:
    with pytest.raises(PrefixOptimaError, match="not hex"):
        decode_kept("zz", 3)
    with pytest.raises(PrefixOptimaError, match="bytes"):
        decode_kept("ff00", 3)
    with pytest.raises(PrefixOptimaError, match="past the last"):
        decode_kept("ff", 3)


def test_simulator_input_fills_before_the_window() -> None:
    lines = simulator_input(((5, 6), (5, 7)), 3).splitlines()
    assert len(lines) == 4
    assert lines[0] == '{"input_length":1024,"hash_ids":[8,9]}'
    assert lines[2] == '{"input_length":1024,"hash_ids":[5,6]}'


# --------------------------------------------------------------------------- the record

WINDOW_TRACE = TraceRead("tiny", "0" * 64, [list(r) for r in chained(
    TINY_PATHS + [[0, 0, 0], [1, 1], [0, 1], [1, 0]])])


@pytest.fixture(scope="module")
def tiny_record() -> dict[str, Any]:
    ladder = Ladder(starts=(1, 5), first_lines=4, max_lines=None, fraction=Fraction(1, 2),
                    time_limit=5.0)
    return run_ladder(WINDOW_TRACE.requests, WINDOW_TRACE.sha256, "tiny", ladder, None)


def test_record_rechecks(tiny_record: dict[str, Any]) -> None:
    figures = check_record(tiny_record, WINDOW_TRACE)
    rows = figures["windows"]
    assert rows and all(r["status"] == OPTIMAL for r in rows)
    assert {r["first_line"] for r in rows} == {1, 5} and figures["not_proved"] == []
    for row in rows:
        requests = WINDOW_TRACE.requests[row["first_line"] - 1:row["last_line"]]
        assert row["optimum_hits"] == brute_force_hits(requests, row["capacity"])
        assert row["radix_lru_hits"] <= row["optimum_hits"] <= row["flat_optimum_hits"]


def _planted(record: dict[str, Any], change: Any) -> dict[str, Any]:
    bad = copy.deepcopy(record)
    change(bad["solved"][-1])
    return bad


@pytest.mark.parametrize("change, message", [
    (lambda e: e.update(objective=e["objective"] + 1, bound=e["bound"] + 1), "replays to"),
    (lambda e: e.update(bound=e["bound"] + 1), "differs from the objective"),
    (lambda e: e.update(status="FEASIBLE"), "not OPTIMAL"),
    (lambda e: e.update(capacity=e["capacity"] + 1), "capacity recorded"),
    (lambda e: e.update(kept="ff" * (len(e["kept"]) // 2)), "not a prefix cache run"),
    (lambda e: e.update(requests_sha256="0" * 64), "does not regenerate"),
    (lambda e: e.update(deterministic_seconds=99.0), "over the limit"),
    (lambda e: e.update(objective=0, bound=0, kept="00" * (len(e["kept"]) // 2)),
     "yet Belady with bypass's own run is a prefix cache run"),
    (lambda e: e.update(simulator={"cache_blocks": e["capacity"],
                                   "optimal_hits": e["objective"] + 1, "lru_hits": 0}),
     "above the proved optimum"),
])
def test_planted_defects_are_refused(tiny_record: dict[str, Any], change: Any,
                                     message: str) -> None:
    with pytest.raises(PrefixOptimaError, match=message):
        check_record(_planted(tiny_record, change), WINDOW_TRACE)


def test_a_window_not_larger_than_the_one_before_it_is_refused(
        tiny_record: dict[str, Any]) -> None:
    bad = copy.deepcopy(tiny_record)
    ones = [e for e in bad["solved"] if e["first_line"] == 1]
    assert len(ones) >= 2
    bad["solved"] = [ones[1], ones[0]] + [e for e in bad["solved"] if e["first_line"] != 1]
    with pytest.raises(PrefixOptimaError, match="not larger than the window before it"):
        check_record(bad, WINDOW_TRACE)


def test_an_optimum_above_the_flat_bound_is_refused(tiny_record: dict[str, Any],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A record claiming more hits than the flat optimum is refused, even with a solution
    that replays to it (here the flat bound is planted one below the truth)."""
    import pytools.results.ceiling.prefix_optima_record as rec

    real = rec.simulate_belady_bypass
    monkeypatch.setattr(rec, "simulate_belady_bypass", lambda s, k: real(s, k) - 1)
    with pytest.raises(PrefixOptimaError, match="above the flat optimum"):
        check_record(tiny_record, WINDOW_TRACE)


def test_a_record_of_another_trace_is_refused(tiny_record: dict[str, Any]) -> None:
    other = TraceRead("tiny", "1" * 64, WINDOW_TRACE.requests)
    with pytest.raises(PrefixOptimaError, match="SHA-256"):
        check_record(tiny_record, other)


def test_one_worker_is_required(tiny_record: dict[str, Any]) -> None:
    bad = copy.deepcopy(tiny_record)
    bad["solver"]["params"] = {**PREFIX_PARAMS, "num_workers": 8}
    with pytest.raises(PrefixOptimaError, match="num_workers"):
        check_record(bad, WINDOW_TRACE)


def test_committed_record_rechecks(repo_root: Path, trace_path: Path) -> None:
    from pytools.results.ceiling.prefix_optima_record import prefix_optima_evidence

    assert (repo_root / PREFIX_OPTIMA_PATH).is_file()
    figures = prefix_optima_evidence(repo_root).figures
    assert figures["windows"] and figures["largest"]["status"] == OPTIMAL
    for row in figures["windows"]:
        assert row["capacity"] < min(row["distinct_blocks"], row["prefix_wall_capacity"])
        assert row["simulator_optimal_hits"] is not None
        assert row["heuristic_gap"] == row["optimum_hits"] - row["simulator_optimal_hits"] >= 0


def test_an_absent_record_is_an_error_naming_it(tmp_path: Path) -> None:
    from pytools.results.ceiling.prefix_optima_record import prefix_optima_evidence

    with pytest.raises(PrefixOptimaError, match="prefix_optima.json: cannot read"):
        prefix_optima_evidence(tmp_path, WINDOW_TRACE)


# --------------------------------------------------------------------------- the whole trace


def _whole(curve: Any) -> dict[str, Any]:
    """A whole_trace section that agrees with ``curve`` (bytes per block 512: one GiB is
    2**21 blocks, so 2**-21 GiB is one block)."""
    points = [{"gib": k / 2**21, "cache_blocks": k, "lru_hit_tokens": curve.at(k),
               "optimal_hit_tokens": curve.ceiling} for k in (3, 4)]
    return {"trace": "t", "bytes_per_block": 512.0, "warmup_requests": curve.warmup_requests,
            "measured_tokens": curve.measured, "ceiling_hit_tokens": curve.ceiling,
            "points": points}


@pytest.fixture(scope="module")
def small_curve(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import json

    from pytools.traces.prefix import compute_prefix_curve

    path = tmp_path_factory.mktemp("whole") / "t.jsonl"
    path.write_text("".join(json.dumps({"input_length": 512 * len(r), "hash_ids": list(r)})
                            + "\n" for r in WINDOW_TRACE.requests))
    return compute_prefix_curve(path, "tokens", 0.5)[1]


def test_whole_trace_rechecks(small_curve: Any) -> None:
    figures = check_whole_trace(_whole(small_curve), small_curve)
    assert [r["capacity"] for r in figures["budgets"]] == [3, 4]
    assert all(r["lru_checked_equal"] for r in figures["budgets"])  # longest request: 3


@pytest.mark.parametrize("change, message", [
    (lambda w: w["points"][0].update(lru_hit_tokens=w["points"][0]["lru_hit_tokens"] + 1),
     "simulator LRU"),
    (lambda w: w["points"][1].update(optimal_hit_tokens=w["ceiling_hit_tokens"] + 1),
     "above the prefix ceiling"),
    (lambda w: w["points"][0].update(cache_blocks=5), "not floor"),
    (lambda w: w.update(measured_tokens=w["measured_tokens"] - 1), "measured_tokens"),
    (lambda w: w.update(warmup_requests=0), "warmup_requests"),
])
def test_whole_trace_planted_defects(small_curve: Any, change: Any, message: str) -> None:
    whole = _whole(small_curve)
    change(whole)
    with pytest.raises(PrefixOptimaError, match=message):
        check_whole_trace(whole, small_curve)


def test_prefix_figures_are_written_from_the_checked_figures(
        tiny_record: dict[str, Any], small_curve: Any, tmp_path: Path) -> None:
    from pytools.results.ceiling.prefix_optima_out import OPTIMA_COLUMNS, prefix_figure_outputs
    from pytools.traces.output import write_outputs
    from pytools.traces.trace import ScanSummary

    figures = check_record(tiny_record, WINDOW_TRACE)
    figures["whole_trace"] = check_whole_trace(_whole(small_curve), small_curve)
    summary = ScanSummary(path=Path("t.jsonl"), sha256="0" * 64, requests=12, references=1,
                          lines=12, window=None)
    written = write_outputs(tmp_path, prefix_figure_outputs(figures, summary, small_curve,
                                                            "t.jsonl"))
    assert sorted(w.path.name for w in written) == sorted(
        f"{s}.{e}" for s in ("prefix", "prefix-optima") for e in ("csv", "svg", "png"))
    rows = [line.split(",") for line in (tmp_path / "prefix-optima.csv").read_text()
            .splitlines() if not line.startswith("#")]
    assert rows[0] == list(OPTIMA_COLUMNS)
    assert [[str(r[c]) for c in OPTIMA_COLUMNS] for r in figures["windows"]] == rows[1:]
    svg = (tmp_path / "prefix.svg").read_text()
    assert "kvcache-simulator optimal" in svg and "<svg" in svg


def test_cli_without_the_simulator_fails_in_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pytools.results.ceiling.cli import main

    trace = tmp_path / "t.jsonl"
    trace.write_text('{"hash_ids": [1, 2]}\n{"hash_ids": [1, 2]}\n')
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["prefix-optima", "--trace", str(trace), "--out", str(out),
                                    "--kvsim-python", str(tmp_path / "no-python")])
    assert res.exit_code == 1 and "no kvcache-simulator" in res.output
    assert len(res.output.strip().splitlines()) == 1 and not out.exists()
