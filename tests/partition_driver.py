"""Drive the vLLM plugin's partitioned block pool with event sequences; print what it did.

Run by ``tests/test_leak_partition_plugin.py`` with the served venv's interpreter (vLLM and the
plugin ``vllm_partition`` installed there by ``.ci/served/install.sh``): reads
``{"cases": [...], "defects": [null, "cross-evict"]}`` on stdin (one vLLM import for all),
writes ``{"None": [per case], "cross-evict": [per case]}``.

A case: ``quotas`` (blocks per tenant), ``spare`` (blocks no quota covers) and ``events``:
``["s", tenant, request, [hash, ...]]`` (submit) or ``["f", tenant, request]`` (finish). Each
event is applied to a real ``PartitionedBlockPool`` the way vLLM's ``KVCacheManager`` does it
(``get_computed_blocks``: the longest leading run of hashes ``get_cached_block`` finds;
``allocate_slots``: refused, i.e. the request waits, when the missing blocks plus the hit
blocks that were free exceed ``get_num_free_blocks()``; else ``touch`` the hits,
``get_new_blocks`` the rest and ``cache_full_blocks`` them; ``free``: ``free_blocks`` of the
request's blocks tail first). After each event: the verdict, the hits, and per tenant its
cached hashes in eviction order, its held hashes (sorted) and its charged block count.

``cross-evict`` is the planted defect: a tenant's free count includes every tenant's cached
blocks and, when its own run out, it evicts another tenant's least recently used one.
"""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace
from typing import Any

from vllm.v1.core.kv_cache_utils import get_block_hash
from vllm_partition.pool import PartitionedBlockPool
from vllm_partition.quotas import QuotaSpec


class CrossEvict(PartitionedBlockPool):
    """Planted defect: eviction allowed across partitions."""

    def get_num_free_blocks(self) -> int:
        if self.tenant is None:
            return super().get_num_free_blocks()
        return self.room(self.tenant) + sum(map(len, self.cached.values()))

    def get_new_blocks(self, num_blocks: int) -> list[Any]:
        t = self._current()
        own = min(num_blocks, self.room(t) + len(self.cached[t]))
        out = super().get_new_blocks(own) if own else []
        for _ in range(num_blocks - own):  # the rest from another tenant's cached blocks
            u = next(u for u in self.cached if u != t and self.cached[u])
            _, block = self.cached[u].popitem(last=False)
            self.used[u] -= 1
            self.used[t] += 1
            self.owner[block.block_id] = t
            self._maybe_evict_cached_block(block)
            block.ref_cnt += 1
            self._stamp(block)
            out.append(block)
        return out


def names(n: int) -> list[str]:
    return [f"tenant-{i}" for i in range(n)]


def run_case(case: dict[str, Any], defect: str | None) -> list[dict[str, Any]]:
    quotas, spare = case["quotas"], case["spare"]
    tenants = names(len(quotas))
    spec = QuotaSpec("case", tuple(zip(tenants, quotas, strict=True)), others=1)
    cls = CrossEvict if defect == "cross-evict" else PartitionedBlockPool
    # + 1: vLLM's null block; + 1: the others partition (never used here)
    pool = cls(sum(quotas) + spare + 2, True, 1, spec=spec)
    running: dict[tuple[int, int], list[Any]] = {}
    out = []
    for ev in case["events"]:
        t, r = ev[1], ev[2]
        name = tenants[t]
        hits, verdict = 0, "finished"
        if ev[0] == "f":
            blocks = running.pop((t, r), None)
            if blocks is not None:
                pool.free_blocks(reversed(blocks))
        else:
            hashes = [h.encode() for h in ev[3]]
            with pool.serving(name):
                found = []
                for h in hashes:
                    got = pool.get_cached_block(h, [0])
                    if got is None:
                        break
                    found.append(got[0])
                need = len(hashes) - len(found)
                if need + sum(b.ref_cnt == 0 for b in found) > pool.get_num_free_blocks():
                    verdict = "refused"
                else:
                    verdict, hits = "admitted", len(found)
                    pool.touch(found)
                    new = pool.get_new_blocks(need)
                    request = SimpleNamespace(block_hashes=hashes)
                    pool.cache_full_blocks(request, found + new, len(found), len(hashes), 1, 0)
                    running[(t, r)] = found + new
        out.append({"verdict": verdict, "hits": hits, "tenants": [
            {"cached": [text(b) for b in pool.cached_order(u)],
             "held": sorted(text(pool.blocks[i]) for i, owner in pool.owner.items()
                            if owner == u and pool.blocks[i].ref_cnt > 0),
             "used": pool.used[u]}
            for u in tenants]})
    return out


def text(block: Any) -> str | None:
    """A block's hash as the case wrote it (None: the block has none)."""
    return None if block.block_hash is None else get_block_hash(block.block_hash).decode()


def main() -> None:
    doc = json.load(sys.stdin)
    json.dump({str(d): [run_case(case, d) for case in doc["cases"]] for d in doc["defects"]},
              sys.stdout)


if __name__ == "__main__":
    main()
