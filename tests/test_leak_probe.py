"""Prime and probe through eviction on the reference of Proofs/Leak/Eviction.lean's two designs:
the Lean counterexample replayed, the published figures recomputed, and planted defects for
every claim certify relies on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytools.results.leak import probe, probe_record, result
from pytools.results.leak.probe import (
    DESIGNS,
    Design,
    PartitionedLru,
    ProbeParams,
    SharedLru,
    mutual_information,
    probe_claims,
    wilson,
)

SMALL = ProbeParams(trials=200)


def test_lean_counterexample_capacity_one() -> None:
    """lru_interference with k = 1: B primes [0], A sends [0] (its own salt) or nothing, B
    probes [0] and misses exactly when A sent; the partitioned cache hits either way."""
    for a_sends, expected in ((True, 0), (False, 1)):
        pool = SharedLru(1)
        assert pool.serve(0, [0]) == 0
        if a_sends:
            assert pool.serve(1, [0]) == 0  # salted: B's entry is not A's
        assert pool.serve(0, [0]) == expected
        part = PartitionedLru([1, 1])
        part.serve(0, [0])
        if a_sends:
            part.serve(1, [0])
        assert part.serve(0, [0]) == 1


def test_shared_lru_follows_the_lean_definition() -> None:
    """The request's entries first, in order, then the others in order, cut at capacity."""
    pool = SharedLru(3)
    pool.serve(0, [1, 2])
    assert pool.entries == [(0, 1), (0, 2)]
    pool.serve(1, [5])
    assert pool.entries == [(1, 5), (0, 1), (0, 2)]
    assert pool.serve(0, [1, 2, 9]) == 2
    assert pool.entries == [(0, 1), (0, 2), (0, 9)]
    pool.serve(1, [6, 7])
    assert pool.entries == [(1, 6), (1, 7), (0, 1)]
    assert pool.serve(0, [1, 2]) == 1  # hits count leading blocks only


def test_equal_quotas_add_up_to_the_pool() -> None:
    assert ProbeParams(capacity=10, tenants=4).quotas() == [3, 3, 2, 2]
    assert sum(probe.DEFAULT.quotas()) == probe.DEFAULT.capacity
    with pytest.raises(ValueError, match="inconsistent"):
        ProbeParams(tenants=2)


def test_wilson_and_mutual_information() -> None:
    assert wilson(50, 100) == pytest.approx((0.403832, 0.596168), abs=1e-6)
    assert wilson(0, 10)[0] == 0.0
    assert mutual_information([(True, 1), (False, 0)] * 10) == pytest.approx(1.0)
    assert mutual_information([(True, 3), (False, 3)] * 10) == 0.0


def test_figures_are_deterministic_and_claims_hold() -> None:
    f = probe.figures(SMALL)
    assert f == probe.figures(SMALL)
    assert all(probe_claims(f).values()), probe_claims(f)
    shared, part = f["designs"]["shared_lru"], f["designs"]["partitioned_lru"]
    assert shared["paired_trials_differing"] == SMALL.trials  # the victim always evicts
    assert part["paired_trials_differing"] == 0


def test_published_figures_recompute(repo_root: Path) -> None:
    cert = json.loads((repo_root / "certificates" / "tenant-leak.json").read_text("utf-8"))
    assert cert["figures"]["prime_and_probe"] == result.prime_and_probe()
    inputs = {i["path"] for i in cert["inputs"]}
    assert "pytools/results/leak/probe.py" in inputs


# --------------------------------------------------------------------------- planted defects


def _swap(name: str, design: Design) -> tuple[Design, ...]:
    return tuple(design if d.name == name else d for d in DESIGNS)


class MisroutedPartition(PartitionedLru):
    """A partitioned cache with a routing bug: tenants 2i and 2i + 1 share part i, so the
    victim's eviction picks the attacker's entries."""

    def serve(self, tenant: int, blocks: list[int]) -> int:  # type: ignore[override]
        return self.parts[tenant // 2].serve(tenant, blocks)


LEAKY = Design("partitioned_lru", lambda p: MisroutedPartition(p.quotas()),
               lambda p: p.quotas()[probe.ATTACKER])


def test_planted_partition_that_evicts_across_tenants_is_caught() -> None:
    """A "partitioned" cache whose eviction picks another tenant's entry interferes: the claims
    certify checks fail."""
    claims = probe_claims(probe.figures(SMALL, _swap("partitioned_lru", LEAKY)))
    assert not claims["partitioned_observation_independent_of_victim"]
    assert not claims["partitioned_at_chance"]
    assert not claims["partitioned_carries_no_information"]


def test_planted_shared_pool_that_cannot_be_probed_is_caught() -> None:
    quiet = Design("shared_lru", lambda p: PartitionedLru(p.quotas()), lambda p: p.capacity)
    claims = probe_claims(probe.figures(SMALL, _swap("shared_lru", quiet)))
    assert not claims["shared_above_chance"]
    assert not claims["shared_observation_depends_on_victim"]


def test_certify_refuses_failing_probe_claims(repo_root: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(result, "probe_figures",
                        lambda: probe.figures(SMALL, _swap("partitioned_lru", LEAKY)))
    checked = result.rechecked_evidence(repo_root)
    assert any("prime and probe: claim partitioned_at_chance fails" in p
               for p in checked.problems)
    with pytest.raises(result.EvidenceError, match="prime and probe"):
        result.evidence(repo_root)


# --------------------------------------------------------------------------- the engines' records


def _copy_records(repo_root: Path, tmp_path: Path) -> Path:
    out = tmp_path / "data" / "leak"
    out.mkdir(parents=True)
    for engine in probe_record.ENGINES:
        src = probe_record.evidence_path(repo_root, engine)
        (out / src.name).write_bytes(src.read_bytes())
    return tmp_path


def test_engine_records_recompute_the_published_figures(repo_root: Path) -> None:
    figures, problems, inputs = result.engines_prime_and_probe(repo_root)
    assert problems == []
    cert = json.loads((repo_root / "certificates" / "tenant-leak.json").read_text("utf-8"))
    assert cert["figures"]["prime_and_probe_engines"] == figures
    recorded = {i["path"]: i["sha256"] for i in cert["inputs"]}
    for i in inputs:
        assert recorded[i.path] == i.sha256
    for engine in probe_record.ENGINES:
        assert all(figures[engine]["claims"].values())
        assert figures[engine]["designs"]["shared_lru"]["trials"] >= 1000


def test_planted_engine_record_where_the_partition_interferes(repo_root: Path,
                                                               tmp_path: Path) -> None:
    root = _copy_records(repo_root, tmp_path)
    path = probe_record.evidence_path(root, "vllm")
    doc = json.loads(path.read_text("utf-8"))
    raw = doc["designs"]["partitioned_lru"]
    raw["seen_sent"] = [v - 1 for v in raw["seen_sent"]]  # the victim now evicts the attacker
    path.write_text(json.dumps(doc), encoding="utf-8")
    _, problems, _ = result.engines_prime_and_probe(root)
    assert any("claim partitioned_observation_independent_of_victim fails" in p
               for p in problems)
    assert any("claim partitioned_at_chance fails" in p for p in problems)


def test_planted_engine_record_with_other_parameters_or_torn(repo_root: Path,
                                                            tmp_path: Path) -> None:
    root = _copy_records(repo_root, tmp_path)
    path = probe_record.evidence_path(root, "sglang")
    doc = json.loads(path.read_text("utf-8"))
    doc["params"]["noise_probability"] = 0.0
    doc["designs"]["shared_lru"]["sent"] = doc["designs"]["shared_lru"]["sent"][:-1]
    path.write_text(json.dumps(doc), encoding="utf-8")
    _, problems, _ = result.engines_prime_and_probe(root)
    assert any("parameters differ" in p for p in problems)
    assert any("shared_lru: malformed record" in p for p in problems)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(result.EvidenceError, match="cannot be read as JSON"):
        result.engines_prime_and_probe(root)
    path.unlink()
    with pytest.raises(result.EvidenceError, match="probe-sglang.json"):
        result.engines_prime_and_probe(root)


def test_lmcache_absent_is_engine_unavailable() -> None:
    """Without LMCache in this interpreter the adapter says so (the CLI then re-runs itself
    with .venv-lmcache's interpreter); it never falls back to another cache."""
    from pytools.results.leak import lmcache_pool
    from pytools.results.leak.engines import EngineUnavailable

    try:
        import lmcache  # noqa: F401
    except ImportError:
        with pytest.raises(EngineUnavailable, match="LMCache cannot be imported"):
            lmcache_pool.LmcacheStore(["a", "b"], capacity=4)
    else:  # pragma: no cover (LMCache installed here)
        pytest.skip("LMCache is importable here; the engines test runs it")


def test_lmcache_record_is_the_reference_trial_by_trial(repo_root: Path) -> None:
    """LMCache's policies driven by the adapter give the reference designs' observations in
    every trial (same seed and parameters): its record equals the reference's raw record."""
    doc = json.loads(probe_record.evidence_path(repo_root, "lmcache").read_text("utf-8"))
    reference = {d.name: probe.observe(d, probe_record.PARAMS) for d in probe.DESIGNS}
    assert doc["designs"] == reference
