"""Plugin = model: the vLLM plugin's partitioned block pool (``plugins/vllm_partition``) and the
reference of the Lean design (``pytools/results/leak/partition.py``) driven with the same
random event sequences, compared verdict by verdict and cache content by cache content; and
the planted defect (eviction across partitions) caught. The quota file's checks run here
without vLLM (the module imports nothing of it)."""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytools.results.leak import partition as ref

DRIVER = Path(__file__).with_name("partition_driver.py")
PLUGIN_SRC = Path(__file__).resolve().parents[1] / "plugins" / "vllm_partition" / "src"
CASES, SEED = 300, 20261207
DEFECTS = [None, "cross-evict"]


def quotas_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "vllm_partition_quotas", PLUGIN_SRC / "vllm_partition" / "quotas.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# --- the event sequences ----------------------------------------------------------------------

def random_case(rng: random.Random) -> dict[str, Any]:
    """Several tenants, small quotas, prompts that are prefix chains of a few shared documents
    (the same hashes in two tenants: the partition, not the hash, must keep them apart)."""
    tenants = rng.choice((2, 3))
    quotas = [rng.randint(1, 4) for _ in range(tenants)]
    events: list[list[Any]] = []
    running: list[tuple[int, int]] = []
    for r in range(rng.randint(10, 40)):
        if running and rng.random() < 0.4:
            t, req = running.pop(rng.randrange(len(running)))
            events.append(["f", t, req])
        t = rng.randrange(tenants)
        doc, n = rng.randrange(3), rng.randint(1, 5)
        events.append(["s", t, r, [f"d{doc}.{i}" for i in range(n)]])
        running.append((t, r))
    return {"quotas": quotas, "spare": rng.randint(0, 2), "events": events}


def reference_run(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The reference's verdict, hits and per-tenant cache after each event."""
    q = case["quotas"]
    s = ref.init(len(q), sum(q) + case["spare"])
    out = []
    for ev in case["events"]:
        e = (ref.Finish(ev[1], ev[2]) if ev[0] == "f"
             else ref.Submit(ev[1], ev[2], tuple(ev[3])))
        s, seen = ref.step(q, s, e)
        assert ref.invariant_problems(q, sum(q) + case["spare"], s) == []
        out.append({"verdict": seen.verdict, "hits": seen.hits, "tenants": [
            {"cached": ref.cached_hashes(s, u), "held": sorted(ref.held_hashes(s, u)),
             "used": ref.used(s, u)} for u in range(len(q))]})
    return out


@pytest.fixture(scope="module")
def driven(served_py: Path) -> dict[str, list[Any]]:
    """The plugin's pool on every case, as built and with the planted defect (one process)."""
    done = subprocess.run([str(served_py), str(DRIVER)], capture_output=True, text=True,
                          input=json.dumps({"cases": the_cases(), "defects": DEFECTS}),
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def the_cases() -> list[dict[str, Any]]:
    return [random_case(random.Random(SEED + k)) for k in range(CASES)]


def first_difference(cases: list[dict[str, Any]], got: list[Any]) -> str | None:
    for k, (case, plugin) in enumerate(zip(cases, got, strict=True)):
        for i, (want, have) in enumerate(zip(reference_run(case), plugin, strict=True)):
            if want != have:
                return f"case {k} event {i} {case['events'][i]}: reference {want}, plugin {have}"
    return None


def test_the_cases_exercise_every_rule() -> None:
    """The random cases reach refusals, hits, evictions and cross-tenant shared hashes."""
    cases = the_cases()
    seen = [e for c in cases for e in reference_run(c)]
    assert sum(e["verdict"] == "refused" for e in seen) > 50
    assert sum(e["hits"] > 0 for e in seen) > 50
    assert len(cases) == CASES


@pytest.mark.engines
def test_plugin_pool_equals_the_reference(driven: dict[str, list[Any]]) -> None:
    assert first_difference(the_cases(), driven["None"]) is None


@pytest.mark.engines
def test_cross_partition_eviction_is_caught(driven: dict[str, list[Any]]) -> None:
    """Planted defect: a tenant may evict another tenant's cached block."""
    assert first_difference(the_cases(), driven["cross-evict"]) is not None


# --- the quota file -----------------------------------------------------------------------------

def test_quotas_equal_split_and_others() -> None:
    q = quotas_module()
    plan = q.resolve(q.parse('{"tenants": {"a": null, "b": null}, "others": 5}', "f.json"), 63)
    assert plan.quotas == {"a": 29, "b": 29, q.OTHERS: 5}
    assert plan.tenant_of("a") == "a" and plan.tenant_of("zzz") == q.OTHERS
    assert plan.tenant_of(None) == q.OTHERS and plan.tenant_of(q.OTHERS) == q.OTHERS


@pytest.mark.parametrize(("text", "capacity", "least", "words"), [
    ("{", 63, 1, "not JSON"),
    ("[]", 63, 1, "top level"),
    ('{"tenants": {}}', 63, 1, "non-empty"),
    ('{"tenants": {"a": 1}, "quota": 2}', 63, 1, "unknown key"),
    ('{"tenants": {"a": 0}}', 63, 1, "positive"),
    ('{"tenants": {"a": true}}', 63, 1, "positive"),
    ('{"tenants": {"a": 40, "b": 40}}', 63, 1, "more than the pool"),
    ('{"tenants": {"a": null, "b": null}}', 63, 31, "below the 31"),
    ('{"tenants": {"*others*": 3}}', 63, 1, "cannot be"),
])
def test_bad_quota_files_are_refused(text: str, capacity: int, least: int, words: str) -> None:
    q = quotas_module()
    with pytest.raises(q.QuotaError) as err:
        q.resolve(q.parse(text, "quotas.json"), capacity, least)
    assert str(err.value).startswith("quotas.json: ") and words in str(err.value)
    assert "\n" not in str(err.value)


SWITCH = r"""
import os, sys
from pathlib import Path
from vllm.v1.core import block_pool, kv_cache_coordinator, kv_cache_manager
import vllm_partition
from vllm_partition.pool import PartitionedBlockPool
bad, good = Path(sys.argv[1]), Path(sys.argv[2])
os.environ.pop(vllm_partition.ENV, None)
vllm_partition.register()                      # off: vLLM's own pool, untouched
assert kv_cache_coordinator.BlockPool is block_pool.BlockPool
os.environ[vllm_partition.ENV] = str(bad)
try:
    vllm_partition.register()
except vllm_partition.QuotaError as e:
    print("refused:", e)
assert kv_cache_coordinator.BlockPool is block_pool.BlockPool
os.environ[vllm_partition.ENV] = str(good)
vllm_partition.register()
assert issubclass(kv_cache_coordinator.BlockPool, PartitionedBlockPool)
assert kv_cache_manager.KVCacheManager.allocate_slots.__wrapped__
print("on")
"""


@pytest.mark.engines
def test_the_switch_and_the_start_up_check(served_py: Path, tmp_path: Path) -> None:
    """Unset: vLLM's pool untouched; a bad quota file: refused naming it, nothing patched; a
    good one: the coordinator builds the partitioned pool, the manager's calls are wrapped."""
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text('{"tenants": {"a": 0}}')
    good.write_text('{"tenants": {"a": null, "b": null}}')
    done = subprocess.run([str(served_py), "-c", SWITCH, str(bad), str(good)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[-2] == f"refused: {bad}: tenant a...'s quota must be a positive number of " \
        "blocks or null, not 0"
    assert lines[-1] == "on"
