"""The tenant-partitioned block pool: vLLM's ``BlockPool`` with one physical pool split into
quotas, as the Lean design ``Proofs/Leak/Partition.lean`` (reference:
``pytools/results/leak/partition.py``) describes it.

State, beyond vLLM's blocks:

* ``free_block_queue`` (vLLM's own queue) holds only *uncharged* free blocks: no tenant's, no
  hash (Lean: the free slots).
* ``owner[block_id]``: the tenant a block is charged to, held or cached (Lean: the slot's tenant);
  ``used[t]`` counts them (Lean ``used``).
* ``cached[t]``: tenant ``t``'s unheld blocks that keep a hash, least recently freed first (Lean:
  the unheld blocks of ``part t``, in list order).
* ``stamp[block_id]``: when the block was allocated or last released: the order of Lean's
  partition list, which picks among blocks with the same hash (a chain whose middle was
  evicted is cached again in new blocks) the one a lookup takes.

Rules, each the Lean step's:

* a lookup (``get_cached_block``) sees only the current tenant's blocks;
* a tenant's free count is ``min(quota - used, uncharged free) + its cached blocks``: the
  manager's "enough free blocks?" test (else the request waits: the Lean refusal) reads its own
  partition only;
* ``get_new_blocks`` takes uncharged blocks while the tenant is under its quota, then evicts the
  tenant's own least recently used cached block; never another tenant's;
* ``free_blocks``: a block no request holds any more joins the end of its owner's cached list
  if it has a hash; without a hash (a partial or decode block, which the Lean model has not)
  it is uncharged and goes back to the free queue.

The current tenant is set by the patched ``KVCacheManager`` (:mod:`.patch`) around each call
that takes a request; a call that needs it without one is a bug and raises.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from vllm.v1.core.block_pool import BlockPool
from vllm.v1.core.kv_cache_utils import KVCacheBlock, make_block_hash_with_group_id

from .quotas import Plan, QuotaSpec, resolve


class PartitionedBlockPool(BlockPool):
    """vLLM's block pool with each tenant's blocks inside its quota (module doc)."""

    def __init__(self, *args: Any, spec: QuotaSpec, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # vLLM's null block (block 0) is taken by BlockPool itself: the usable pool is the rest
        self.plan: Plan = resolve(spec, self.num_gpu_blocks - 1)
        self.owner: dict[int, str] = {}
        self.used: dict[str, int] = dict.fromkeys(self.plan.quotas, 0)
        self.cached: dict[str, OrderedDict[int, KVCacheBlock]] = {
            t: OrderedDict() for t in self.plan.quotas}
        self.stamp: dict[int, int] = {}
        self.clock = 0
        self.tenant: str | None = None

    # --- the current tenant -------------------------------------------------------------------

    @contextlib.contextmanager
    def serving(self, tenant: str) -> Iterator[None]:
        """Run the body on behalf of ``tenant`` (nested calls keep the outer tenant)."""
        outer = self.tenant
        self.tenant = tenant
        try:
            yield
        finally:
            self.tenant = outer

    def _current(self) -> str:
        if self.tenant is None:
            raise RuntimeError("partitioned block pool: an allocation outside any request")
        return self.tenant

    def room(self, t: str) -> int:
        """Lean ``room``: uncharged blocks ``t`` may still take."""
        return min(max(self.plan.quotas[t] - self.used[t], 0),
                   self.free_block_queue.num_free_blocks)

    # --- lookups --------------------------------------------------------------------------------

    def _blocks_with(self, key: Any) -> list[KVCacheBlock]:
        found = self.cached_block_hash_to_block._cache.get(key)
        if found is None:
            return []
        return [found] if isinstance(found, KVCacheBlock) else list(found.values())

    def get_cached_block(self, block_hash: Any,
                         kv_cache_group_ids: list[int]) -> list[KVCacheBlock] | None:
        t = self._current()
        out = []
        for group_id in kv_cache_group_ids:
            key = make_block_hash_with_group_id(block_hash, group_id)
            mine = [b for b in self._blocks_with(key) if self.owner.get(b.block_id) == t]
            if not mine:
                return None
            out.append(min(mine, key=lambda b: self.stamp.get(b.block_id, 0)))
        return out

    # --- counts ---------------------------------------------------------------------------------

    def get_num_free_blocks(self) -> int:
        if self.tenant is None:  # the whole pool (usage, reset)
            return self.free_block_queue.num_free_blocks + sum(map(len, self.cached.values()))
        return self.room(self.tenant) + len(self.cached[self.tenant])

    def get_usage(self) -> float:
        outer, self.tenant = self.tenant, None
        try:
            return super().get_usage()
        finally:
            self.tenant = outer

    # --- allocate, touch, free ------------------------------------------------------------------

    def get_new_blocks(self, num_blocks: int) -> list[KVCacheBlock]:
        t = self._current()
        if num_blocks > self.get_num_free_blocks():
            raise ValueError(f"Cannot get {num_blocks} free blocks from tenant's partition")
        fresh = self.free_block_queue.popleft_n(min(num_blocks, self.room(t)))
        for block in fresh:
            self.owner[block.block_id] = t
        self.used[t] += len(fresh)
        evicted = []
        for _ in range(num_blocks - len(fresh)):
            _, block = self.cached[t].popitem(last=False)  # t's least recently used
            evicted.append(block)
        out = fresh + evicted
        if self._reuse_watchers:
            self._notify_reuse(out)
        for block in out:
            self._stamp(block)
            if self.enable_caching:
                self._maybe_evict_cached_block(block)
            assert block.ref_cnt == 0
            block.ref_cnt += 1
            if self.metrics_collector:
                self.metrics_collector.on_block_allocated(block)
        return out

    def touch(self, blocks: Sequence[KVCacheBlock]) -> None:
        for block in blocks:
            if block.ref_cnt == 0 and not block.is_null:
                t = self.owner.get(block.block_id)
                if t is not None and block.block_id in self.cached[t]:
                    del self.cached[t][block.block_id]
                else:
                    self.free_block_queue.remove(block)
            block.ref_cnt += 1
            if self.metrics_collector:
                self.metrics_collector.on_block_accessed(block)

    def _stamp(self, block: KVCacheBlock) -> None:
        self.stamp[block.block_id] = self.clock
        self.clock += 1

    def _uncharge(self, block: KVCacheBlock) -> None:
        t = self.owner.pop(block.block_id, None)
        if t is not None:
            self.used[t] -= 1

    def free_blocks(self, ordered_blocks: Iterable[KVCacheBlock]) -> None:
        uncharged = []
        for block in ordered_blocks:
            if block.pool is not None and block.pool is not self:
                block.pool.free_blocks([block])
                continue
            block.ref_cnt -= 1
            if block.ref_cnt != 0 or block.is_null:
                continue
            t = self.owner.get(block.block_id)
            if t is not None and self.enable_caching and block.block_hash is not None:
                self.cached[t][block.block_id] = block  # most recently used end
                self._stamp(block)
            else:
                self._uncharge(block)
                uncharged.append(block)
        self.free_block_queue.prepend_n(uncharged)

    def unpin_blocks(self, blocks: Iterable[KVCacheBlock], on_reuse: Any) -> None:
        raise NotImplementedError("the partitioned block pool does not support unpin_blocks")

    def reset_prefix_cache(self) -> bool:
        outer, self.tenant = self.tenant, None
        try:
            if self.get_num_free_blocks() != self.num_gpu_blocks - 1:
                return super().reset_prefix_cache()  # logs and refuses, as stock
            back = [b for t in self.cached for b in self.cached[t].values()]
            for t in self.cached:
                self.cached[t].clear()
            for block in back:
                self._uncharge(block)
            self.free_block_queue.append_n(back)
            return super().reset_prefix_cache()
        finally:
            self.tenant = outer

    # --- what a test compares -------------------------------------------------------------------

    def cached_order(self, t: str) -> list[KVCacheBlock]:
        """Tenant ``t``'s cached blocks, least recently used first (its eviction order)."""
        return list(self.cached[t].values())
