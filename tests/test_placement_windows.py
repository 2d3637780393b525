"""The exact pooled optimum on trace windows: the interval model against brute force, the
record's re-check against planted defects, and a quick solve of a small real window.

Brute force (:func:`brute_force_misses`) enumerates every demand-fetch run of the Lean model
(``KVCache.Placement.DemandFetch`` and ``FitsIn``: from an empty cache, after each request
any subset of the previous state plus the requested block, of at most ``capacity`` blocks),
so the model, Belady with bypass and the full ``x[block, t]`` model are each checked against
the definition, not against one another.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pytools.cli import cli
from pytools.paths import mooncake_trace
from pytools.results.placement.instance import PlacementError
from pytools.results.placement.paging import (
    OPTIMAL,
    alive_counts,
    replay_kept,
    reuse_intervals,
    solve_paging,
    wall_capacity,
)
from pytools.results.placement.solver import solve_placement
from pytools.results.placement.windows import (
    Ladder,
    ladder_windows,
    run_ladder,
)
from pytools.results.placement.windows_record import (
    WINDOWS_PATH,
    TraceRequests,
    check_record,
    load_record,
)
from pytools.results.records import write_record
from pytools.traces.bypass import simulate_belady_bypass

TINY_TRACE = (b'{"hash_ids": [1, 2, 3]}\n{"hash_ids": [1, 2, 4]}\n{"hash_ids": [1, 5, 3]}\n'
              b'{"hash_ids": [2, 4, 1, 6]}\n{"hash_ids": [3, 5, 6, 2]}\n')


def brute_force_misses(stream: tuple[int, ...], capacity: int) -> int:
    """Fewest misses over every demand-fetch run fitting ``capacity`` (exhaustive)."""

    @cache
    def best(t: int, state: frozenset[int]) -> int:
        if t == len(stream):
            return 0
        block = stream[t]
        missed = 0 if block in state else 1
        pool = sorted(state | {block})
        options = (frozenset(c) for k in range(min(capacity, len(pool)) + 1)
                   for c in combinations(pool, k))
        return missed + min(best(t + 1, s) for s in options)

    return best(0, frozenset())


streams = st.lists(st.integers(0, 4), min_size=0, max_size=9).map(tuple)


@settings(max_examples=60, deadline=None)
@given(stream=streams, capacity=st.integers(0, 4))
def test_interval_model_is_the_demand_fetch_optimum(stream: tuple[int, ...],
                                                    capacity: int) -> None:
    """The interval model's optimum, Belady with bypass and brute force agree, and the
    model's schedule replays to its objective within the capacity."""
    expected = brute_force_misses(stream, capacity)
    result = solve_paging(stream, capacity, 10.0)
    assert result.status == OPTIMAL
    assert result.objective == result.bound == expected
    assert result.kept is not None
    assert replay_kept(stream, capacity, result.kept) == expected
    assert len(stream) - simulate_belady_bypass(stream, capacity) == expected


@settings(max_examples=15, deadline=None)
@given(stream=st.lists(st.integers(0, 3), min_size=1, max_size=7).map(tuple),
       capacity=st.integers(0, 3))
def test_full_model_with_unit_sizes_agrees(stream: tuple[int, ...], capacity: int) -> None:
    """The existing ``x[block, t]`` model with unit sizes (it allows bypass) finds the same
    optimum: the two formulations model one class of policies."""
    full = solve_placement([stream], [capacity], [1] * 4,
                           {"num_workers": 1, "random_seed": 0, "max_time_in_seconds": 10.0})
    assert full.objective == brute_force_misses(stream, capacity)


def test_bypass_is_allowed() -> None:
    """[1, 2, 1] at capacity 1: only a cache that declines to store 2 hits the second 1."""
    assert solve_paging((1, 2, 1), 1, 10.0).objective == 2 == brute_force_misses((1, 2, 1), 1)


def test_wall_capacity_is_where_the_optimum_reaches_the_wall() -> None:
    stream = (1, 2, 3, 1, 2, 4, 1, 5, 3)
    cap = wall_capacity(stream)
    assert cap == max(alive_counts(reuse_intervals(stream))) == 3
    distinct = len(set(stream))
    assert brute_force_misses(stream, cap) == distinct
    assert brute_force_misses(stream, cap - 1) > distinct


def test_replay_catches_a_schedule_over_capacity() -> None:
    stream = (1, 2, 1, 2)
    with pytest.raises(PlacementError, match="over the capacity 1"):
        replay_kept(stream, 1, [True, True])


# ------------------------------------------------------------------ the record's re-check


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TraceRequests, dict[str, Any]]:
    """A record of the tiny trace, solved once for every planted defect."""
    from pytools.results.placement.windows_record import read_requests

    path = tmp_path_factory.mktemp("tiny") / "trace.jsonl"
    path.write_bytes(TINY_TRACE)
    record = run_ladder(path, Ladder(first_lines=2, time_limit=5.0), str(path))
    return path, read_requests(path), record


def test_record_of_the_tiny_trace_checks(tiny: tuple[Path, TraceRequests, dict[str, Any]]) -> None:
    _path, trace, record = tiny
    figures = check_record(record, trace)
    assert [(w["first_line"], w["last_line"]) for w in figures["windows"]] == [(1, 2), (1, 4),
                                                                             (1, 5)]
    for row in figures["windows"]:
        assert row["objective"] == row["bound"] == row["belady_bypass_misses"] > row["wall"]
        assert row["capacity"] < row["wall_capacity"] <= row["wall"]
    assert figures["largest"] == figures["windows"][-1]
    assert figures["not_proved"] is None


def _planted(record: dict[str, Any], edit: str) -> dict[str, Any]:
    bad = copy.deepcopy(record)
    last = bad["solved"][-1]
    if edit == "objective":
        last["objective"] += 1
        last["bound"] += 1
    elif edit == "status":
        last["status"] = "FEASIBLE"
    elif edit == "bound":
        last["bound"] -= 1
    elif edit == "window":
        last["last_line"] -= 1
    elif edit == "capacity":
        last["capacity"] = last["wall_capacity"]
    elif edit == "trace":
        bad["trace"]["sha256"] = "0" * 64
    elif edit == "workers":
        bad["solver"]["params"]["num_workers"] = 2
    elif edit == "stop-optimal":
        bad["not_proved"] = {**last, "first_line": 1, "last_line": 5}
        bad["solved"] = bad["solved"][:-1]
    return bad


@pytest.mark.parametrize(("edit", "message"), [
    ("objective", "differs from Belady with bypass"),
    ("status", "status FEASIBLE, not OPTIMAL"),
    ("bound", "differs from the objective"),
    ("window", "does not regenerate from the trace"),
    ("capacity", "is not below the wall capacity"),
    ("trace", "the record is for a trace with SHA-256 0000"),
    ("workers", "num_workers 2, not 1"),
    ("stop-optimal", "status OPTIMAL, yet recorded as not proved"),
])
def test_planted_defects_are_caught(tiny: tuple[Path, TraceRequests, dict[str, Any]],
                                    edit: str, message: str) -> None:
    _path, trace, record = tiny
    check_record(record, trace)  # the untouched record passes
    with pytest.raises(PlacementError, match=message):
        check_record(_planted(record, edit), trace)


def test_a_capacity_at_the_wall_is_refused(
        tiny: tuple[Path, TraceRequests, dict[str, Any]]) -> None:
    """A record solved at a capacity >= the wall would say nothing below it."""
    _path, trace, record = tiny
    bad = copy.deepcopy(record)
    bad["capacity_fraction"] = [1, 1]
    with pytest.raises(PlacementError, match="capacity_fraction"):
        check_record(bad, trace)
    entry = bad["solved"][0]
    entry["capacity"] = entry["distinct_blocks"]
    bad["capacity_fraction"] = [1, 2]
    with pytest.raises(PlacementError, match="is not below the wall"):
        check_record(bad, trace)


def test_ladder_windows() -> None:
    assert ladder_windows(Ladder(first_lines=2), 5) == [(1, 2), (1, 4), (1, 5)]
    assert ladder_windows(Ladder(first_line=3, first_lines=1, max_lines=2), 9) == [(3, 3),
                                                                                   (3, 4)]
    with pytest.raises(PlacementError):
        Ladder(fraction=Fraction(1))


def test_record_roundtrip_and_bad_files(tmp_path: Path,
                                        tiny: tuple[Path, TraceRequests, dict[str, Any]]) -> None:
    _path, trace, record = tiny
    out = tmp_path / "windows.json"
    write_record(out, record)
    loaded, sha = load_record(out)
    assert loaded == json.loads(json.dumps(record)) and len(sha) == 64
    check_record(loaded, trace)
    (tmp_path / "bad.json").write_text("[]", encoding="utf-8")
    with pytest.raises(PlacementError, match="bad.json: not a windows record"):
        load_record(tmp_path / "bad.json")
    with pytest.raises(PlacementError, match="missing.json: cannot read"):
        load_record(tmp_path / "missing.json")


def test_cli_writes_a_record_that_checks(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(TINY_TRACE)
    out = tmp_path / "out" / "windows.json"
    result = CliRunner().invoke(cli, ["placement", "windows", "--trace", str(trace), "--out",
                                      str(out), "--first-lines", "2", "--time-limit", "5"])
    assert result.exit_code == 0, result.output
    assert "OPTIMAL" in result.output
    from pytools.results.placement.windows_record import read_requests

    check_record(load_record(out)[0], read_requests(trace))


def test_cli_bad_trace_names_the_file_and_writes_nothing(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(b'{"hash_ids": [1, 2]}\n{"hash_ids": "x"}\n')
    out = tmp_path / "windows.json"
    result = CliRunner().invoke(cli, ["placement", "windows", "--trace", str(trace), "--out",
                                      str(out)])
    assert result.exit_code != 0
    assert f"{trace}:2" in result.output
    assert not out.exists()


# ------------------------------------------------------------------ the real trace


@pytest.fixture(scope="module")
def real_trace() -> Path:
    path = mooncake_trace()
    if not path.is_file():
        pytest.skip(f"{path}: the shared Mooncake trace is absent")
    return path


def test_quick_solve_of_a_small_real_window(real_trace: Path) -> None:
    """The first 300 lines (about 8,000 references): OPTIMAL, equal to Belady with bypass,
    above the wall; a second or so on one worker."""
    record = run_ladder(real_trace, Ladder(first_lines=300, max_lines=300, time_limit=20.0),
                        "trace")
    (entry,) = record["solved"]
    assert entry["status"] == OPTIMAL and entry["objective"] == entry["bound"]
    assert entry["capacity"] < entry["wall_capacity"]
    assert entry["objective"] > entry["distinct_blocks"]


@pytest.fixture(scope="module")
def committed(real_trace: Path) -> dict[str, Any]:
    """The figures of the committed record, re-checked against the shared trace."""
    from pytools.paths import project_root
    from pytools.results.placement.windows_record import windows_evidence

    root = project_root()
    if not (root / WINDOWS_PATH).is_file():
        pytest.skip("no committed record")
    return windows_evidence(root).figures


def test_committed_record_checks(committed: dict[str, Any]) -> None:
    """The committed record re-checks against the shared trace (what certify does)."""
    largest = committed["largest"]
    assert largest["status"] == OPTIMAL
    assert largest["objective"] == largest["bound"] == largest["belady_bypass_misses"]


def test_limits_state_the_committed_windows(committed: dict[str, Any]) -> None:
    """The result's limits name the window sizes, the capacity and the time limit of the
    committed record (a new record with other windows must update them) and the figures
    meet their schema."""
    from jsonschema import Draft202012Validator

    from pytools.publish.validation import load_schema
    from pytools.results.placement.result import RESULT_LIMITS

    figures = committed
    schema = load_schema("figures/pooled-placement")["properties"]["optimum_windows"]
    assert not list(Draft202012Validator(schema).iter_errors(figures))
    (limit,) = [text for text in RESULT_LIMITS if text.startswith("optimum_windows")]
    spans = [f"{w['first_line']}-{w['last_line']}" for w in figures["windows"]]
    assert ", ".join(spans[:-1]) + f" and {spans[-1]}" in limit
    largest = figures["largest"]
    assert f"{largest['references']:,} references, {largest['wall']:,} distinct" in limit
    assert f"capacity the wall needs ({largest['capacity']:,} blocks" in limit
    stop = figures["not_proved"]
    assert f"lines {stop['first_line']}-{stop['last_line']} not proved" in limit
    assert f"a limit of {figures['time_limit_deterministic_seconds']:g} deterministic" in limit
    assert figures["solver_params"]["num_workers"] == 1 and "one worker" in limit


def test_a_ladder_that_proves_nothing_is_refused(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(b'{"hash_ids": [1, 2]}\n{"hash_ids": [3]}\n')  # no block used twice
    with pytest.raises(PlacementError, match="no window of the ladder was proved OPTIMAL"):
        run_ladder(trace, Ladder(first_lines=1), "trace")


def test_evidence_names_an_absent_record_or_trace(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """certify's path: no trace, or no record, is a clear error naming the file."""
    from pytools.results.placement.windows_record import windows_evidence

    shared = tmp_path / "shared"
    monkeypatch.setenv("PYTOOLS_SHARED", str(shared))
    with pytest.raises(PlacementError, match="the Mooncake trace is absent"):
        windows_evidence(tmp_path)
    trace = mooncake_trace(tmp_path)
    trace.parent.mkdir(parents=True)
    trace.write_bytes(TINY_TRACE)
    with pytest.raises(PlacementError, match=r"windows\.json: cannot read the windows record"):
        windows_evidence(tmp_path)
    write_record(tmp_path / WINDOWS_PATH, run_ladder(trace, Ladder(first_lines=2), "trace"))
    figures = windows_evidence(tmp_path).figures
    assert figures["largest"]["last_line"] == 5
