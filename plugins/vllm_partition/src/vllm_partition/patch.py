"""Put the partitioned pool into vLLM: the coordinator builds a :class:`PartitionedBlockPool`,
and the ``KVCacheManager`` calls that take a request run with that request's tenant current.

Applied once per process by :func:`vllm_partition.register` (vLLM's ``vllm.general_plugins``
entry point, loaded in the engine-core process before the scheduler is built); nothing is
changed on disk. Idempotent: a second call in the same process does nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .quotas import QuotaSpec, load, resolve

#: ``KVCacheManager`` methods whose first argument is the request they work for.
REQUEST_METHODS = ("get_computed_blocks", "get_computed_blocks_for_connector",
                   "allocate_slots", "estimate_cached_tokens")
_APPLIED = "_pytools_partition_applied"


def _on_behalf(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        pool = self.block_pool
        with pool.serving(pool.plan.tenant_of(getattr(request, "cache_salt", None))):
            return method(self, request, *args, **kwargs)
    return wrapper


def apply(spec: QuotaSpec) -> None:
    """Patch vLLM's v1 KV cache coordinator and manager in this process for ``spec``."""
    from vllm.utils.math_utils import cdiv
    from vllm.v1.core import kv_cache_coordinator, kv_cache_manager

    from .pool import PartitionedBlockPool

    manager = kv_cache_manager.KVCacheManager
    if getattr(manager, _APPLIED, False):
        return

    class Pool(PartitionedBlockPool):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, spec=spec, **kwargs)

    kv_cache_coordinator.BlockPool = Pool  # the name the coordinator builds its pool with
    init = manager.__init__

    @functools.wraps(init)
    def checked_init(self: Any, kv_cache_config: Any, max_model_len: int,
                     scheduler_block_size: int, *args: Any, **kwargs: Any) -> None:
        init(self, kv_cache_config, max_model_len, scheduler_block_size, *args, **kwargs)
        if len(kv_cache_config.kv_cache_groups) != 1:
            raise ValueError(f"{spec.origin}: the partitioned pool supports one KV cache group "
                             f"(this model has {len(kv_cache_config.kv_cache_groups)})")
        pool = self.block_pool
        pool.plan = resolve(spec, pool.num_gpu_blocks - 1,
                            cdiv(max_model_len, scheduler_block_size))

    manager.__init__ = checked_init
    for name in REQUEST_METHODS:
        setattr(manager, name, _on_behalf(getattr(manager, name)))
    setattr(manager, _APPLIED, True)


def apply_from(path: Path) -> QuotaSpec:
    """Read the quota file and :func:`apply` it."""
    spec = load(path)
    apply(spec)
    return spec
