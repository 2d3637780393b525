"""The stock-vs-partitioned served record: its figures and claims from a raw record (a
synthetic one: the claims must catch a partition that leaks), and, marked ``engines``, a short
run on the real vLLM with the plugin (``.ci/served``): the plugin serves and partitions."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytools.results.leak import served_partition_record as rec


def synthetic(trials: int = 200, seed: int = 1) -> dict[str, Any]:
    """A record as a run writes it: the partition's probe always served 608 tokens, the stock
    pool's 96 after the victim; TTFT noise alike on the partition, slower on stock."""
    rng = random.Random(seed)
    sent = [rng.randrange(2) for _ in range(trials)]

    def pool(partitioned: bool) -> dict[str, Any]:
        cached = [608 if partitioned or not s else 96 for s in sent]
        ttft = [rng.gauss(30.0, 3.0) + (0 if partitioned or not s else 40.0) for s in sent]
        return {"plugin_on": partitioned, "log_says_partitioned": partitioned,
                "contention": {"sent": sent, "ttft_ms": ttft, "cached_tokens": cached},
                "price": {"seconds": 10.0, "cached_tokens": [320 if partitioned else 480],
                          "prompt_tokens": [1000]}}

    return {"format": rec.FORMAT, "shape": {"prime_tokens": rec.PRIME_TOKENS},
            "pools": {"stock": pool(False), "partitioned": pool(True)}}


def test_own_reuse_prediction_is_the_capped_private_pool() -> None:
    assert rec.own_reuse_prediction() == 608  # 20 blocks cached, the last one recomputed


def test_claims_hold_on_a_closed_partition() -> None:
    doc = synthetic()
    assert rec.recheck(doc) == []
    f = rec.summarise(doc)
    assert all(rec.claims(f).values()), rec.claims(f)
    assert f["price"]["ratios"]["hit_rate_partitioned_over_stock"] == pytest.approx(2 / 3,
                                                                                   abs=1e-3)


def test_a_leaking_partition_fails_its_claims() -> None:
    """Planted: one trial where the victim's requests evicted the attacker's blocks."""
    doc = synthetic()
    c = doc["pools"]["partitioned"]["contention"]
    c["cached_tokens"][c["sent"].index(1)] = 96
    assert not rec.claims(rec.summarise(doc))["partitioned_cached_tokens_identical_victim_or_not"]


def test_a_timing_channel_on_the_partition_fails_its_claims() -> None:
    doc = synthetic()
    c = doc["pools"]["partitioned"]["contention"]
    c["ttft_ms"] = [t + 40.0 * s for t, s in zip(c["ttft_ms"], c["sent"], strict=True)]
    assert not rec.claims(rec.summarise(doc))["partitioned_ttft_auc_interval_contains_half"]


def test_too_few_trials_fail_the_timing_claim() -> None:
    f = rec.summarise(synthetic(trials=100))
    assert not rec.claims(f)["partitioned_ttft_auc_interval_contains_half"]


def test_recheck_names_a_pool_without_the_plugin() -> None:
    doc = copy.deepcopy(synthetic())
    doc["pools"]["partitioned"]["plugin_on"] = False
    assert rec.recheck(doc) == ["partitioned: plugin_on is False"]
    del doc["pools"]["stock"]
    assert "no stock pool" in rec.recheck(doc)


@pytest.mark.engines
def test_partitioned_pool_serves_and_partitions(served_py: Path, tmp_path: Path,
                                                repo_root: Path) -> None:
    """A short run on the real vLLM: the plugin loads from its entry point, and on the
    partitioned pool the attacker's probe is served the same whether the victim sent or not."""
    out = tmp_path / "partition.json"
    done = subprocess.run([sys.executable, "-m", "pytools", "leak", "serve-partition",
                           "--quick", "--python", str(served_py), "--out", str(out)],
                          # two servers start in turn: 201 s measured at load 5, 551 s at
                          # load 13-15, over 900 s beside two Lean builds and another server
                          cwd=repo_root, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert rec.recheck(doc) == []
    part = doc["pools"]["partitioned"]["contention"]
    assert 0 < sum(part["sent"]) < len(part["sent"])
    assert set(part["cached_tokens"]) == {rec.own_reuse_prediction()}
    stock = doc["pools"]["stock"]["contention"]
    evicted = [c for c, s in zip(stock["cached_tokens"], stock["sent"], strict=True) if s]
    assert max(evicted) < rec.own_reuse_prediction()
