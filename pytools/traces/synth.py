"""Synthetic Mooncake-shaped traces, deterministic by seed, for tests and benchmarks (the
exactness tests must run on traces the code was not tuned on, and the benchmarks at sizes
the public trace does not reach).

A request is a prefix-block list like Mooncake's ``hash_ids``: a few shared system-prompt
blocks, then either a new conversation (fresh blocks) or the next turn of an earlier one (its
whole previous prefix, then fresh blocks). Turns return to conversations chosen uniformly
among the last ``active`` ones, so reuse distances spread over thousands of blocks, as in the
public trace. Ids are numbered in order of first appearance, as Mooncake's remapped ids are.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from pytools.files import atomic_write_bytes


def mooncake_like(references: int, seed: int = 0, active: int = 3000,
                  continue_p: float = 0.32) -> Iterator[list[int]]:
    """Requests (``hash_ids`` lists) totalling at least ``references`` block references."""
    rng = np.random.default_rng(seed)
    fresh = 8  # ids 0..7 are shared system-prompt blocks
    convs: list[list[int]] = []
    total = 0
    while total < references:
        if convs and rng.random() < continue_p:
            k = len(convs) - 1 - int(rng.integers(0, min(active, len(convs))))
            add = int(rng.integers(1, 6))
            ids = convs[k] + list(range(fresh, fresh + add))
            fresh += add
            convs[k] = ids
        else:
            system = int(rng.choice([0, 1, 2, 4], p=[0.5, 0.3, 0.15, 0.05]))
            length = int(min(rng.lognormal(2.4, 1.0), 400)) + 1
            ids = list(range(system)) + list(range(fresh, fresh + length))
            fresh += length
            convs.append(ids)
        total += len(ids)
        yield ids


def write_mooncake_like(path: Path, references: int, seed: int = 0) -> Path:
    """Write a synthetic trace as JSON Lines (``.gz`` suffix: gzip) at ``path``, atomically."""
    path = Path(path)
    # built in memory (tens of MB at the benchmark's 2M references), then written in one go
    raw = io.BytesIO()
    out = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if path.name.endswith(".gz") else raw
    for i, ids in enumerate(mooncake_like(references, seed)):
        out.write(json.dumps({"timestamp": i, "input_length": 512 * len(ids),
                              "output_length": 1, "hash_ids": ids}).encode() + b"\n")
    if out is not raw:
        out.close()
    atomic_write_bytes(path, raw.getvalue(), fsync=False)  # a test/benchmark input, remade at will
    return path
