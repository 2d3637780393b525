"""Pooled KV placement: CP-SAT certificate on the committed instance, and its checkers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytools.paths import mooncake_trace, sha256_file
from pytools.results.cli import regenerate
from pytools.results.placement.binding import BINDING_PATH
from pytools.results.placement.cli import main
from pytools.results.placement.instance import (
    INSTANCE_PARAMS,
    INSTANCE_PATH,
    Instance,
    PlacementError,
    generate_instance,
    host_walls,
    live_peak,
    load_instance,
    shared_blocks,
    wall,
)
from pytools.results.placement.result import INSTANCE_FILE, RESULT_ID, check_figures, evidence
from pytools.results.placement.solver import (
    SOLVER_NAME,
    certify_instance,
    check_schedule,
    check_solve,
    simulate_farthest,
    solve_per_instance,
    solve_placement,
    solve_pooled,
)
from pytools.results.placement.sweep import SWEEP_PARAMS, sweep, write_sweep
from pytools.results.placement.windows_record import WINDOWS_PATH
from pytools.results.spec import Evidence
from pytools.traces.trace import TRACE_INPUT_PATH


@pytest.fixture(scope="module")
def instance_path(repo_root: Path) -> Path:
    return repo_root / INSTANCE_PATH


@pytest.fixture(scope="module")
def inst(instance_path: Path) -> Instance:
    return load_instance(instance_path)


@pytest.fixture(scope="module")
def ev(repo_root: Path) -> Evidence:
    return evidence(repo_root)


# ------------------------------------------------------------------ the committed instance


def test_committed_instance_is_the_generator_output(repo_root: Path,
                                                   instance_path: Path) -> None:
    assert INSTANCE_FILE.check(repo_root) == []
    assert load_instance(instance_path).generator == INSTANCE_PARAMS


def test_pooled_optimum_is_the_wall(inst: Instance) -> None:
    res = solve_pooled(inst)
    assert res.status == "OPTIMAL"
    assert res.bound == res.objective == wall(inst.stream)
    check_solve(res, inst.block_sizes, [inst.pooled_capacity])
    sim = simulate_farthest(inst.block_sizes, inst.stream, inst.pooled_capacity)
    assert check_schedule(sim, inst.block_sizes, inst.pooled_capacity) == res.objective
    # non-trivial: the pooled cache cannot hold every distinct block at once
    distinct_pages = sum(inst.block_sizes[b] for b in set(inst.stream))
    assert inst.pooled_capacity < distinct_pages


def test_per_instance_optimum_exceeds_the_wall(inst: Instance) -> None:
    res = solve_per_instance(inst)
    assert res.status == "OPTIMAL"
    assert res.bound == res.objective
    check_solve(res, inst.block_sizes, inst.host_capacity)
    w = wall(inst.stream)
    assert shared_blocks(inst), "the committed instance must share a block across hosts"
    assert w < host_walls(inst) <= res.objective


def test_evidence_figures(ev: Evidence, instance_path: Path, inst: Instance) -> None:
    f = ev.figures
    assert f["status"] == "OPTIMAL" and f["per_instance_status"] == "OPTIMAL"
    assert f["objective"] == f["bound"] == f["wall"] == f["pooled_misses"]
    assert f["per_instance_misses"] > f["wall"]
    assert f["per_instance_misses"] == f["per_instance_bound"]
    assert f["solver"] == SOLVER_NAME
    import ortools

    assert f["solver_version"] == ortools.__version__
    assert not any("time" in k or "second" in k for k in f), "timings are not figures"
    assert [(i.path, i.sha256) for i in ev.inputs] == [
        (INSTANCE_PATH.as_posix(), sha256_file(instance_path)),
        (TRACE_INPUT_PATH, sha256_file(mooncake_trace(instance_path.parents[2]))),
        (WINDOWS_PATH.as_posix(), sha256_file(instance_path.parents[2] / WINDOWS_PATH)),
        (BINDING_PATH.as_posix(), sha256_file(instance_path.parents[2] / BINDING_PATH)),
    ]  # the routing table's trace (tests/test_placement_routing.py), the CP-SAT windows
    # record (tests/test_placement_windows.py), the binding instance
    # (tests/test_placement_binding.py)
    assert f["binding_instance"]["optimum"] > f["binding_instance"]["wall"]
    assert len(f["sweep"]) == SWEEP_PARAMS["max_hosts"]
    assert f["sweep_seed"] == SWEEP_PARAMS["seed"]
    json.dumps(f, allow_nan=False)  # canonical-JSON-able


def test_sweep_rows_are_consistent(ev: Evidence) -> None:
    rows = ev.figures["sweep"]
    assert [r["hosts"] for r in rows] == list(range(1, SWEEP_PARAMS["max_hosts"] + 1))
    for r in rows:
        assert r["pooled_misses"] == r["wall"]
        assert r["wall"] <= r["host_walls"] <= r["per_instance_misses"]
    assert rows[0]["per_instance_misses"] == rows[0]["wall"]  # one host: nothing to split
    assert rows[-1]["per_instance_misses"] > rows[-1]["wall"]


def test_sweep_is_deterministic(tmp_path: Path) -> None:
    params = dict(SWEEP_PARAMS, max_hosts=3)
    a = write_sweep(tmp_path / "a", sweep(params))
    b = write_sweep(tmp_path / "b", sweep(params))
    assert [p.name for p in a] == ["placement_sweep.csv", "placement_sweep.svg"]
    for pa, pb in zip(a, b, strict=True):
        assert pa.read_bytes() == pb.read_bytes()
    svg = a[1].read_text()
    assert "<dc:date>" not in svg


# ------------------------------------------------------------------ planted defects


def test_planted_capacity_bug_is_caught(inst: Instance) -> None:
    """A model whose capacity constraint is too loose finds 'better' schedules: caught."""
    true = solve_per_instance(inst)
    loose = [inst.pooled_capacity] * inst.hosts  # bug: each host gets the whole pool
    buggy = solve_placement(
        [inst.on_host(h) for h in range(inst.hosts)], loose, inst.block_sizes
    )
    assert buggy.objective < true.objective  # the bug pays off, so it must show somewhere
    with pytest.raises(PlacementError, match="over the capacity"):
        check_solve(buggy, inst.block_sizes, inst.host_capacity)


def test_planted_prefetch_is_caught(inst: Instance) -> None:
    res = solve_pooled(inst)
    run = res.runs[0]
    late = next(b for b in inst.stream if b != inst.stream[0])
    states = list(run.states)
    states[1] = states[1] | {late}  # block enters before anyone asked for it
    bad = replace(res, runs=(replace(run, states=tuple(states)),))
    with pytest.raises(PlacementError, match="without a request"):
        check_solve(bad, inst.block_sizes, [10**6])


def test_planted_wrong_objective_is_caught(inst: Instance) -> None:
    res = solve_pooled(inst)
    with pytest.raises(PlacementError, match="differ from the solver's objective"):
        check_solve(replace(res, objective=res.objective - 1, bound=res.objective - 1),
                       inst.block_sizes, [inst.pooled_capacity])
    with pytest.raises(PlacementError, match="bound"):
        check_solve(replace(res, bound=res.objective - 1),
                       inst.block_sizes, [inst.pooled_capacity])


def test_planted_tampered_instance_is_caught(tmp_path: Path, instance_path: Path) -> None:
    doc = json.loads(instance_path.read_text())
    doc["requests"][5][1] = (doc["requests"][5][1] + 1) % len(doc["block_sizes"])
    bad = tmp_path / "data" / "placement" / "instance.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps(doc))
    load_instance(bad)  # well-formed, so only the generator check can catch it
    assert "differs from what its generator gives" in INSTANCE_FILE.check(tmp_path)[0]
    with pytest.raises(PlacementError, match=str(bad)):
        evidence(tmp_path)
    res = CliRunner().invoke(regenerate, ["--root", str(tmp_path), "--check", RESULT_ID])
    assert res.exit_code == 1 and f"{bad}: differs" in res.output


def test_planted_wrong_figures_are_caught(ev: Evidence, repo_root: Path) -> None:
    assert check_figures(repo_root, dict(ev.figures), fresh=ev.figures) == []
    wrong = dict(ev.figures, objective=ev.figures["objective"] - 1)
    problems = check_figures(repo_root, wrong, fresh=ev.figures)
    assert len(problems) == 1 and problems[0].startswith("objective:")
    extra = dict(ev.figures, solve_seconds=1.0)
    assert check_figures(repo_root, extra, fresh=ev.figures) == [
        f"solve_seconds: not a figure of {RESULT_ID}"
    ]


def test_certify_rejects_a_pooled_cache_that_misses_the_wall(inst: Instance) -> None:
    """At a capacity below the live peak the pooled optimum exceeds the wall: refused."""
    small = replace(inst, pooled_capacity=inst.pooled_capacity // 3,
                    host_capacity=tuple(c // 3 for c in inst.host_capacity))
    with pytest.raises(PlacementError, match="not the wall"):
        certify_instance(small)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("requests"), "missing field(s) requests"),
        (lambda d: d.update(format="other/1"), "format is 'other/1'"),
        (lambda d: d["requests"].append([99, 0]), "host 99 >= hosts"),
        (lambda d: d["requests"].append([0, 99]), "block 99 has no size"),
        (lambda d: d["requests"].append([0]), "must be [host, block]"),
        (lambda d: d["block_sizes"].__setitem__(0, 0), "block_sizes[0]: expected an integer"),
        (lambda d: d.update(pooled_capacity=1), "not the sum of host_capacity"),
        (lambda d: d.update(host_capacity=[1]), "host_capacity has 1 entries"),
        (lambda d: d.update(hosts=True), "hosts: expected an integer"),
    ],
)
def test_malformed_instance_names_file_and_problem(
    tmp_path: Path, instance_path: Path, mutate, message: str
) -> None:
    doc = json.loads(instance_path.read_text())
    mutate(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(PlacementError) as info:
        load_instance(bad)
    assert str(bad) in str(info.value) and message in str(info.value)


def test_invalid_json_and_missing_file_give_clear_cli_errors(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text("{ not json")
    res = CliRunner().invoke(main, ["solve", "--instance", str(bad)])
    assert res.exit_code == 1
    assert str(bad) in res.output and "not valid JSON" in res.output
    res = CliRunner().invoke(main, ["solve", "--instance", str(tmp_path / "nope.json")])
    assert res.exit_code == 1 and "not found" in res.output


def test_generate_writes_the_committed_bytes(tmp_path: Path, instance_path: Path) -> None:
    assert INSTANCE_FILE.write(tmp_path)
    out = tmp_path / INSTANCE_PATH
    assert out.read_bytes() == instance_path.read_bytes()
    assert [p.name for p in out.parent.iterdir()] == ["instance.json"]  # no temp file left


def test_bad_generator_parameters() -> None:
    with pytest.raises(PlacementError, match="must be >= 1"):
        generate_instance(seed=1, hosts=0, blocks=3, requests=3)


def test_wall_helpers() -> None:
    inst = Instance(2, (1, 1, 1), (2, 1), 3, ((0, 1), (1, 1), (0, 2)), {})
    assert wall(inst.stream) == 2
    assert host_walls(inst) == 3  # the Lean example KVCache.Placement.shared_example
    assert shared_blocks(inst) == [1]
    assert live_peak([1, 1, 1], [1, 2, 1]) == 1


# ------------------------------------------------------------------ Lean (slow)


@pytest.mark.lean
def test_wall_module_rejects_a_wrong_example(
    tmp_path: Path, real_toolchain, repo_root: Path
) -> None:
    """A planted wrong count in Wall.lean is refused by Lean (the clean module itself is
    compiled and audited by `certify --check`)."""
    from planted import import_closure, project_copy

    from pytools.lean import build as b

    root = project_copy(tmp_path / "proj", import_closure("Proofs.Placement.Wall"))
    wall_lean = root / "Proofs" / "Placement" / "Wall.lean"
    text = wall_lean.read_text(encoding="utf-8")
    marker = "hostWalls [0, 1] ([(0, 1), (1, 1), (0, 2)] : List (Nat × Nat)) = 3"
    assert text.count(marker) == 1
    wall_lean.write_text(text.replace(marker, marker[:-1] + "2"), encoding="utf-8")
    bad = b.build(root, real_toolchain, jobs=1, roots=("Proofs",))
    assert not bad.ok
    assert any(d.severity == "error" and d.file.endswith("Wall.lean") for d in bad.diagnostics)


@pytest.mark.lean
def test_simulation_module_rejects_a_wrong_example(
    tmp_path: Path, real_toolchain, repo_root: Path
) -> None:
    """A planted wrong pooled miss count (0 instead of 1) in the strict-case witness of
    Simulation.lean is refused by Lean: the `decide` there checks the numbers."""
    from planted import import_closure, project_copy

    from pytools.lean import build as b

    root = project_copy(tmp_path / "proj", import_closure("Proofs.Placement.Simulation"))
    sim = root / "Proofs" / "Placement" / "Simulation.lean"
    text = sim.read_text(encoding="utf-8")
    marker = "([(0, 1), (1, 1)] : List (Nat × Nat)) = 1 := by\n  decide"
    assert text.count(marker) == 1
    sim.write_text(text.replace(marker, marker.replace("= 1 :=", "= 0 :=")), encoding="utf-8")
    bad = b.build(root, real_toolchain, jobs=1, roots=("Proofs",))
    assert not bad.ok
    errors = [d for d in bad.diagnostics if d.severity == "error"]
    assert errors and all(d.file.endswith("Simulation.lean") for d in errors)
