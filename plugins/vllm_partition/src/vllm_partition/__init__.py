"""A tenant-partitioned prefix-cache block pool for vLLM 0.32, loaded as a
``vllm.general_plugins`` entry point.

Off unless ``$VLLM_PARTITION_QUOTAS`` names a quota file (:mod:`.quotas`): then every
request's ``cache_salt`` selects its tenant's partition of the physical blocks (:mod:`.pool`),
and the engine refuses to start on a bad quota file. Unset: vLLM's stock pool, untouched.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .quotas import ENV, OTHERS, Plan, QuotaError, QuotaSpec, parse, resolve

__all__ = ["ENV", "OTHERS", "Plan", "QuotaError", "QuotaSpec", "parse", "register", "resolve"]

log = logging.getLogger("vllm_partition")


def register() -> None:
    """vLLM's entry point: install the partitioned pool when ``$VLLM_PARTITION_QUOTAS`` is set."""
    path = os.environ.get(ENV)
    if not path:
        return
    from .patch import apply_from

    spec = apply_from(Path(path))
    log.warning("vllm_partition: tenant-partitioned block pool on (%d tenants + others, %s)",
                len(spec.tenants), path)
