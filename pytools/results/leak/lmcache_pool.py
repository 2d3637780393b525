"""LMCache's own eviction policies as a bounded block store, for prime and probe (CPU only).

LMCache keeps KV chunks in tiers; which chunk of a full tier goes is decided by its eviction
policy, fed the keys a request creates and touches. Two of them run here, each over one store
that every tenant shares:

* ``shared_lru``: ``lmcache.v1.distributed.eviction_policy.LRUEvictionPolicy``, one recency
  list over every key, bounded at ``capacity`` keys;
* ``partitioned_lru``: ``IsolatedLRUEvictionPolicy``, one recency list per ``cache_salt``, each
  salt bounded at its quota (LMCache's ``QuotaManager`` semantics: eviction scoped to the salt
  that is over its quota). A per-tenant quota inside one pool: what neither vLLM nor SGLang has.

A block is one ``ObjectKey`` (its id as the chunk hash, the tenant's keyed salt as
``cache_salt``). A request is served as a prefix cache serves it: its leading keys found in the
store are its hits; then its found keys are touched (``on_keys_touched``) and all of its keys
reported created (``on_keys_created``, which puts the prompt's first key most recent). The
trigger is this adapter's: right after each request, exactly enough keys to get back within
the bound are taken from the policy's ``get_eviction_actions`` (LMCache's own controller runs
every second in a background thread, against a watermark and an eviction ratio). LMCache is
imported only here.
"""

from __future__ import annotations

import importlib.metadata
import logging
import platform
from collections.abc import Sequence
from typing import Any

from .engines import EngineUnavailable


def _policies() -> tuple[Any, Any, Any]:
    try:
        from lmcache.v1.distributed.api import ObjectKey
        from lmcache.v1.distributed.eviction_policy import (
            IsolatedLRUEvictionPolicy,
            LRUEvictionPolicy,
        )
    except ImportError as exc:
        raise EngineUnavailable(f"LMCache cannot be imported here: {exc}") from exc
    logging.getLogger("lmcache").setLevel(logging.WARNING)
    return ObjectKey, LRUEvictionPolicy, IsolatedLRUEvictionPolicy


def version() -> str:
    _policies()
    return importlib.metadata.version("lmcache")


def describe() -> dict[str, Any]:
    _policies()
    env = {"python": platform.python_version()}
    for package in ("lmcache", "torch"):
        try:
            env[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            env[package] = "absent"
    return {"cache": "lmcache.v1.distributed.eviction_policy: LRUEvictionPolicy (shared_lru), "
                     "IsolatedLRUEvictionPolicy with a quota per cache_salt (partitioned_lru)",
            "capacity": "keys; exactly enough evicted after each request by this adapter",
            "environment": env}


class LmcacheStore:
    """One store shared by every tenant: ``capacity`` keys in all (``quotas`` None, global LRU),
    or ``quotas[t]`` keys for tenant ``t`` (per-salt isolated LRU)."""

    def __init__(self, salts: Sequence[str], capacity: int | None = None,
                 quotas: Sequence[int] | None = None) -> None:
        object_key, lru, isolated = _policies()
        self._key = object_key
        self._salts, self._capacity, self._quotas = list(salts), capacity, quotas
        self._policy = lru() if quotas is None else isolated()
        self._store: set[Any] = set()

    def _keys(self, tenant: int, blocks: Sequence[int]) -> list[Any]:
        salt = self._salts[tenant]
        return [self._key(chunk_hash=b.to_bytes(8, "big"), model_name="pytools-probe",
                          kv_rank=0, cache_salt=salt) for b in blocks]

    def _evict(self, count: int, salt: str | None) -> None:
        held = sum(1 for k in self._store if salt is None or k.cache_salt == salt)
        ratio = (count + 0.5) / held  # LMCache takes int(held * ratio) keys: exactly count
        scope = {} if salt is None else {"cache_salt": salt}
        keys = [k for a in self._policy.get_eviction_actions(ratio, **scope) for k in a.keys]
        if len(keys) != count:
            raise RuntimeError(f"LMCache returned {len(keys)} keys to evict, not {count}")
        self._store.difference_update(keys)
        self._policy.on_keys_removed(keys)

    def serve(self, tenant: int, blocks: Sequence[int]) -> int:
        keys = self._keys(tenant, blocks)
        hit = 0
        while hit < len(keys) and keys[hit] in self._store:
            hit += 1
        self._policy.on_keys_touched([k for k in keys if k in self._store])
        self._policy.on_keys_created(keys)
        self._store.update(keys)
        if self._quotas is None:
            assert self._capacity is not None
            over, salt = len(self._store) - self._capacity, None
        else:
            salt = self._salts[tenant]
            held = sum(1 for k in self._store if k.cache_salt == salt)
            over = held - self._quotas[tenant]
        if over > 0:
            self._evict(over, salt)
        return hit
