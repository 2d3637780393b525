"""Prime and probe through eviction on the engines' own cache code (CPU only, no model).

The attack of :mod:`.probe`, with the same parameters except the number of trials, run where
the engines are importable (``.venv-engines``), on two deployments at equal memory:

* ``shared_lru``: one engine cache of ``capacity`` blocks for every tenant, each tenant with its
  own keyed salt (``pytools.admission.salt.keyed_salt``);
* ``partitioned_lru``: one engine cache per tenant, of its quota (one engine per tenant: the
  deployment that closes the channel; neither engine has a per-tenant quota inside one pool).

vLLM: ``KVCacheManager`` with ``capacity + 2`` blocks (its null block, and the request's last,
partial block that it always computes); its own free-block queue decides what is evicted and
when. SGLang: ``RadixCache.create_simulated`` with a no-op allocator, bounded at ``capacity``
pages by this adapter the way its scheduler bounds it (before inserting, the matched prefix is
locked and just enough is evicted with ``RadixCache.evict``, its own LRU over the tree's
leaves). A block is 16 tokens; a prompt of ``n`` blocks is ``16 n + 1`` tokens (the last token
is always computed), so the observation is the number of full blocks served from cache.

The raw record (per trial: the victim's bit, the observation with the victim silent and with it
sending) is written to ``data/leak/probe-<engine>.json``; certify recomputes every figure from
it without the engines (:func:`.probe_record.recheck`, in a module that imports no engine).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytools.files import atomic_write_text

from .engines import BLOCK_SIZE, SglangEngine, VllmEngine
from .probe import Design, ProbeParams, observe
from .probe_record import ENGINES, FORMAT, PARAMS, tenant_salts

TAIL_TOKEN = 31_999


def tokens_of(blocks: Sequence[int]) -> list[int]:
    """A prompt of the given blocks (each id its own 16 tokens) and one last token."""
    return [(b * BLOCK_SIZE + j) % TAIL_TOKEN for b in blocks for j in range(BLOCK_SIZE)] + \
        [TAIL_TOKEN]


class EnginePool:
    """One engine cache seen as a :class:`.probe.Pool`: tenants' salts, blocks as tokens."""

    def __init__(self, session: Any, salts: Sequence[str]) -> None:
        self._session, self._salts = session, salts

    def serve(self, tenant: int, blocks: Sequence[int]) -> int:
        return self._session.serve(tokens_of(blocks), self._salts[tenant]) // BLOCK_SIZE


class PerTenantPools:
    """One engine cache per tenant."""

    def __init__(self, pools: Sequence[EnginePool]) -> None:
        self._pools = pools

    def serve(self, tenant: int, blocks: Sequence[int]) -> int:
        return self._pools[tenant].serve(tenant, blocks)


class _NoAllocator:
    """SGLang's simulated radix cache holds no KV memory: freeing a segment does nothing."""

    device = "cpu"

    def free_segment(self, *args: Any, **kwargs: Any) -> None:
        return None


class BoundedSglangSession:
    """SGLang's ``RadixCache`` bounded at ``capacity_tokens`` (see the module docstring)."""

    def __init__(self, engine: SglangEngine, capacity_tokens: int) -> None:
        from sglang.srt.mem_cache.base_prefix_cache import EvictParams

        self._engine, self._capacity = engine, capacity_tokens
        self._evict_params = EvictParams
        self._tree = engine.RadixCache.create_simulated(page_size=engine.page_size,
                                                        mock_allocator=_NoAllocator())

    def serve(self, tokens: Sequence[int], salt: str | None) -> int:
        e, tree = self._engine, self._tree
        ids = e.array("q", tokens)
        match = tree.match_prefix(e.MatchPrefixParams(
            key=e.RadixKey(ids, cache_salt=salt, limit=max(len(tokens) - 1, 0))))
        hit = int(match.device_prefix_len)
        new = len(tokens) // e.page_size * e.page_size - hit
        tree.inc_lock_ref(match.last_device_node)
        over = tree.evictable_size() + tree.protected_size() + new - self._capacity
        if over > 0:
            tree.evict(self._evict_params(num_tokens=over))
        tree.dec_lock_ref(match.last_device_node)
        tree.insert(e.InsertParams(key=e.RadixKey(ids, cache_salt=salt)))
        return hit


def engine_designs(engine: str, params: ProbeParams = PARAMS) -> tuple[dict[str, Any],
                                                                       tuple[Design, ...]]:
    """The engine's description and the two deployments as designs of :mod:`.probe`."""
    salts = tenant_salts(params)
    session: Callable[[int], Any]
    if engine == "vllm":
        made: dict[int, VllmEngine] = {}

        def session(blocks: int) -> Any:
            if blocks not in made:
                made[blocks] = VllmEngine(block_size=BLOCK_SIZE, num_blocks=blocks + 2)
            return made[blocks].session()

        first = VllmEngine(block_size=BLOCK_SIZE, num_blocks=params.capacity + 2)
        describe = {**first.describe(),
                    "num_blocks": "capacity + 2 (its null block, the partial last block)"}
        version = first.version
    elif engine == "sglang":
        sg = SglangEngine(page_size=BLOCK_SIZE)

        def session(blocks: int) -> Any:
            return BoundedSglangSession(sg, blocks * BLOCK_SIZE)

        describe = {**sg.describe(), "capacity": "capacity pages, bounded by this adapter"}
        version = sg.version
    elif engine == "lmcache":  # one store for every tenant in both designs (.lmcache_pool)
        from .lmcache_pool import LmcacheStore
        from .lmcache_pool import describe as lmcache_describe
        from .lmcache_pool import version as lmc_v

        describe, version = lmcache_describe(), lmc_v()
        return {"name": engine, "version": version, "settings": describe}, (
            Design("shared_lru", lambda p: LmcacheStore(salts, capacity=p.capacity),
                   lambda p: p.capacity),
            Design("partitioned_lru", lambda p: LmcacheStore(salts, quotas=p.quotas()),
                   lambda p: p.quotas()[0]),
        )
    else:
        raise ValueError(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    designs = (
        Design("shared_lru", lambda p: EnginePool(session(p.capacity), salts),
               lambda p: p.capacity),
        Design("partitioned_lru",
               lambda p: PerTenantPools([EnginePool(session(q), salts) for q in p.quotas()]),
               lambda p: p.quotas()[0]),
    )
    return {"name": engine, "version": version, "settings": describe}, designs


def build_evidence(engine: str, params: ProbeParams = PARAMS) -> dict[str, Any]:
    """Run the attack on both deployments of ``engine``; the raw record."""
    described, designs = engine_designs(engine, params)
    return {"format": FORMAT, "engine": described, "params": params.as_dict(),
            "quotas": params.quotas(), "salts": tenant_salts(params),
            "designs": {d.name: observe(d, params) for d in designs}}


def write_evidence(path: Path, doc: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
