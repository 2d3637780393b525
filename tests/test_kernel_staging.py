"""Tests of the staged kernel model's Python side (``staging/``, see ``staging/README.md``):
the system reference, the workflow bench and the generator of its Lean theorems."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STAGING = ROOT / "staging"
sys.path.insert(0, str(STAGING))

from kernelref import system  # noqa: E402
from kernelref import workflows_lean as wl  # noqa: E402
from kernelref.model import Domain, KernelRefError, Outcome  # noqa: E402

WORKFLOWS = STAGING / "kernelref" / "workflows.json"
LEAN = STAGING / "Proofs" / "Kernel" / "Workflows.lean"
FAMILIES = {"commit", "abort", "evict-and-reallocate", "duplicate", "reorder", "drop"}


def test_bench_size_and_families() -> None:
    _, flows = wl.load_workflows(WORKFLOWS)
    assert len(flows) >= 24
    assert {w["family"] for w in flows} >= FAMILIES


def test_every_workflow_runs_with_the_stated_refusals() -> None:
    dom, flows = wl.load_workflows(WORKFLOWS)
    for w in flows:
        res = system.run_workflow(dom, w["actions"])
        assert res is not None, w["name"]
        assert res[1] == w["expect_refusals"], w["name"]


def test_committed_lean_bench_is_generated_from_the_json() -> None:
    dom, flows = wl.load_workflows(WORKFLOWS)
    sha = hashlib.sha256(WORKFLOWS.read_bytes()).hexdigest()
    assert LEAN.read_text(encoding="utf-8") == wl.render(dom, flows, WORKFLOWS.name, sha)


def test_lean_bench_within_100_columns() -> None:
    for n, line in enumerate(LEAN.read_text(encoding="utf-8").splitlines(), 1):
        assert len(line) <= 100, f"{LEAN}:{n}"


def test_planted_wrong_expectation_is_refused(tmp_path: Path) -> None:
    data = json.loads(WORKFLOWS.read_text(encoding="utf-8"))
    data["workflows"][0]["expect_refusals"] += 1
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    dom, flows = wl.load_workflows(bad)
    with pytest.raises(KernelRefError, match=data["workflows"][0]["name"]):
        wl.render(dom, flows, bad.name, "0" * 64)


def test_planted_bad_action_names_the_file(tmp_path: Path) -> None:
    data = json.loads(WORKFLOWS.read_text(encoding="utf-8"))
    data["workflows"][0]["actions"].append(["deliver"])
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(KernelRefError, match="w.json"):
        wl.load_workflows(bad)
    assert wl.main([str(bad), str(tmp_path / "out.lean")]) == 1
    assert not (tmp_path / "out.lean").exists()


def test_planted_kernel_defect_changes_a_stated_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that accepts a replayed commit (no nonce check) changes what the bench states:
    the Lean theorems would then disagree with Lean's `step`."""
    dom, flows = wl.load_workflows(WORKFLOWS)
    honest = {w["name"]: system.run_workflow(dom, w["actions"]) for w in flows}
    real = system.kernel_step

    def replay_accepting(d: Domain, st, req) -> Outcome:
        out = real(d, st, req)
        if req.kind == "commit" and out.refusal == "notPending":
            return Outcome(st, (), None)
        return out

    monkeypatch.setattr(system, "kernel_step", replay_accepting)
    changed = [w["name"] for w in flows if system.run_workflow(dom, w["actions"])
               != honest[w["name"]]]
    assert "dup_commit" in changed


def test_flatten_layout() -> None:
    dom = Domain(2, 1, 1, 1, 3)
    st, refused = system.run_workflow(dom, [["alloc", 0, 0], ["deliver", 0], ["deliver", 0]])
    # epoch; block 0: gen 1, seq 1, owned by 0; no message; holder 0 knows one capability
    assert system.flatten(st) == [0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0]
    assert refused == 0


def test_kernel_trajectory_counts_the_refusals() -> None:
    dom, flows = wl.load_workflows(WORKFLOWS)
    for w in flows:
        log: list[system.Event] = []
        _, refused = system.run_workflow(dom, w["actions"], log)
        assert sum(out.refusal is not None for _, _, out in log) == refused, w["name"]
        # each event starts in the state the previous one ended in
        for (_, _, prev), (_, before, _) in zip(log, log[1:], strict=False):
            assert prev.state == before, w["name"]
