"""A pure-Python reference model of a salted prefix cache: what certify re-runs without engines.

The model is the Lean model's (``Proofs/Leak/Salted.lean``): the cache holds (salt, block key)
entries, a block's key covers the whole prefix up to and including it (a chained SHA-256, as
the engines chain theirs), a request hits the longest run of leading full blocks present under
its salt, then caches its own full blocks. Like vLLM's scheduler and SGLang's, a request is
served at most ``len(prompt) - 1`` tokens from the cache (the last token is always computed to
produce the next one), rounded down to whole blocks. No eviction: the caches are sized so the
engines evict nothing either.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: Name and version of this model, recorded with its counts.
MODEL = "pytools.results.leak.reference/v1"


def block_keys(tokens: Sequence[int], salt: str | None, block_size: int) -> list[bytes]:
    """The chained key of each full block of ``tokens`` under ``salt``."""
    keys = []
    prev = hashlib.sha256(b"salt\x00" + (salt.encode() if salt is not None else b"\xff")).digest()
    for start in range(0, len(tokens) - block_size + 1, block_size):
        block = ",".join(map(str, tokens[start:start + block_size])).encode()
        prev = hashlib.sha256(prev + block).digest()
        keys.append(prev)
    return keys


@dataclass
class ReferenceSession:
    """One empty reference cache (mutable: it fills as requests are served)."""

    block_size: int
    entries: set[bytes] = field(default_factory=set)

    def serve(self, tokens: Sequence[int], salt: str | None) -> int:
        keys = block_keys(tokens, salt, self.block_size)
        limit = (len(tokens) - 1) // self.block_size
        hit = 0
        while hit < min(limit, len(keys)) and keys[hit] in self.entries:
            hit += 1
        self.entries.update(keys)
        return hit * self.block_size


@dataclass(frozen=True)
class ReferenceEngine:
    """The reference model as an engine (see :class:`.scenarios.CacheEngine`)."""

    block_size: int = 16
    name: str = "reference"
    version: str = MODEL

    def describe(self) -> dict[str, Any]:
        return {"block_size": self.block_size, "model": MODEL}

    def session(self) -> ReferenceSession:
        return ReferenceSession(self.block_size)
