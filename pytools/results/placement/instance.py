"""The serving instance: hosts, blocks with sizes in KV pages, a request stream and a routing;
generated deterministically from a seed, written and read as canonical JSON.

:func:`generate_instance` builds a serving instance from a seed (block sizes in KV pages, a
Zipf-like request stream, a random cache-unaware routing, a pooled capacity equal to the
largest "live" working set — blocks already seen and needed again — and the same total
memory split evenly across the hosts). The committed instance ``data/placement/instance.json``
is its output for :data:`INSTANCE_PARAMS`, a generated file of the result
(:data:`.result.INSTANCE_FILE`): the evidence regenerates it byte for byte.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The committed instance, relative to the repository root.
INSTANCE_PATH = Path("data/placement/instance.json")

#: Format tag written into (and required from) every instance file.
INSTANCE_FORMAT = "kvcache-placement-instance/1"

#: Parameters of the committed instance (:func:`generate_instance` keyword arguments).
INSTANCE_PARAMS: dict[str, int] = {"seed": 2026, "hosts": 4, "blocks": 16, "requests": 48}


#: Largest block size the generator draws (KV pages).
MAX_BLOCK_SIZE = 4


class PlacementError(Exception):
    """Bad input (an instance file, parameters) or a check that failed; the message says which."""


# --------------------------------------------------------------------------- instances


@dataclass(frozen=True)
class Instance:
    """A serving instance: hosts, block sizes, capacities and routed requests."""

    hosts: int
    block_sizes: tuple[int, ...]
    host_capacity: tuple[int, ...]
    pooled_capacity: int
    requests: tuple[tuple[int, int], ...]  # (host, block), in arrival order
    generator: dict[str, int]

    @property
    def stream(self) -> list[int]:
        """The block stream (what a pooled cache serves)."""
        return [b for _, b in self.requests]

    def on_host(self, host: int) -> list[int]:
        """The sub-stream routed to ``host`` (what its own cache serves)."""
        return [b for h, b in self.requests if h == host]


def wall(stream: Sequence[int]) -> int:
    """The wall: the number of distinct blocks in a stream."""
    return len(set(stream))


def host_walls(inst: Instance) -> int:
    """Sum over hosts of the distinct blocks each host sees (the per-instance floor)."""
    return sum(wall(inst.on_host(h)) for h in range(inst.hosts))


def shared_blocks(inst: Instance) -> list[int]:
    """Blocks requested on at least two different hosts."""
    seen: dict[int, set[int]] = {}
    for h, b in inst.requests:
        seen.setdefault(b, set()).add(h)
    return sorted(b for b, hs in seen.items() if len(hs) >= 2)


def live_peak(sizes: Sequence[int], stream: Sequence[int]) -> int:
    """Largest total size of the blocks that must stay resident to miss only once each.

    After serving request ``t`` a block is *live* when it was requested at or before ``t``
    and is requested again later. A cache of this capacity that keeps exactly the live
    blocks misses once per distinct block.
    """
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for t, b in enumerate(stream):
        first.setdefault(b, t)
        last[b] = t
    peak = 0
    for t in range(len(stream)):
        peak = max(peak, sum(sizes[b] for b in first if first[b] <= t < last[b]))
    return peak


def generate_instance(seed: int, hosts: int, blocks: int, requests: int) -> Instance:
    """Build an instance deterministically from ``seed``.

    * block sizes: uniform in 1..:data:`MAX_BLOCK_SIZE` KV pages;
    * stream: ``requests`` draws, block ``j`` with weight ``1/(j+1)`` (a few hot prefixes,
      a tail of cold ones);
    * routing: each request to a uniformly random host (cache-unaware load balancing);
    * pooled capacity: :func:`live_peak` of the stream (at least the largest block);
    * per-host capacity: the pooled capacity split evenly (the remainder to the first hosts),
      so both placements have the same total memory.

    The stream depends only on ``seed``, ``blocks`` and ``requests``; the routing also on
    ``hosts``. ``random.Random`` seeded with a string is stable across Python versions.
    """
    if hosts < 1 or blocks < 1 or requests < 1:
        raise PlacementError(
            f"generate_instance: hosts, blocks and requests must be >= 1 "
            f"(got {hosts}, {blocks}, {requests})"
        )
    rng = random.Random(f"kvcache-placement:{seed}:{blocks}:{requests}:stream")
    sizes = [rng.randint(1, MAX_BLOCK_SIZE) for _ in range(blocks)]
    weights = [1.0 / (j + 1) for j in range(blocks)]
    stream = rng.choices(range(blocks), weights=weights, k=requests)
    route_rng = random.Random(f"kvcache-placement:{seed}:{blocks}:{requests}:route:{hosts}")
    route = [route_rng.randrange(hosts) for _ in range(requests)]
    pooled = max(live_peak(sizes, stream), max(sizes[b] for b in stream))
    base, extra = divmod(pooled, hosts)
    caps = tuple(base + (1 if h < extra else 0) for h in range(hosts))
    return Instance(
        hosts=hosts,
        block_sizes=tuple(sizes),
        host_capacity=caps,
        pooled_capacity=pooled,
        requests=tuple(zip(route, stream, strict=True)),
        generator={"seed": seed, "hosts": hosts, "blocks": blocks, "requests": requests},
    )


def instance_bytes(inst: Instance) -> bytes:
    """The instance file's bytes: readable JSON (one request a line), same instance, same bytes."""

    def ints(xs: Sequence[int]) -> str:
        return "[" + ", ".join(str(int(x)) for x in xs) + "]"

    gen = ", ".join(f'"{k}": {int(v)}' for k, v in sorted(inst.generator.items()))
    lines = [
        "{",
        f'  "format": "{INSTANCE_FORMAT}",',
        '  "description": "Synthetic serving instance for the pooled-placement certificate. '
        'Generated by pytools.results.placement.instance.generate_instance from the parameters '
        'below; sizes and capacities in KV pages; requests are [host, block] in arrival order.",',
        f'  "generator": {{{gen}}},',
        f'  "hosts": {inst.hosts},',
        f'  "block_sizes": {ints(inst.block_sizes)},',
        f'  "host_capacity": {ints(inst.host_capacity)},',
        f'  "pooled_capacity": {inst.pooled_capacity},',
        '  "requests": [',
    ]
    reqs = [f"    {ints(r)}" for r in inst.requests]
    lines.append(",\n".join(reqs))
    lines.append("  ]")
    lines.append("}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _int(value: Any, where: str, lo: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise PlacementError(f"{where}: expected an integer >= {lo}, got {value!r}")
    return value


def _int_list(value: Any, where: str, lo: int = 0) -> list[int]:
    if not isinstance(value, list):
        raise PlacementError(f"{where}: expected a list of integers, got {type(value).__name__}")
    return [_int(v, f"{where}[{i}]", lo) for i, v in enumerate(value)]


def parse_instance(doc: Any, source: str) -> Instance:
    """Check a decoded instance document; every problem names ``source`` and the field."""
    if not isinstance(doc, dict):
        raise PlacementError(f"{source}: top level must be a JSON object")
    required = ("format", "generator", "hosts", "block_sizes", "host_capacity",
                "pooled_capacity", "requests")
    missing = [k for k in required if k not in doc]
    if missing:
        raise PlacementError(f"{source}: missing field(s) {', '.join(missing)}")
    if doc["format"] != INSTANCE_FORMAT:
        raise PlacementError(
            f"{source}: format is {doc['format']!r}, expected {INSTANCE_FORMAT!r}"
        )
    hosts = _int(doc["hosts"], f"{source}: hosts", 1)
    sizes = _int_list(doc["block_sizes"], f"{source}: block_sizes", 1)
    if not sizes:
        raise PlacementError(f"{source}: block_sizes is empty")
    caps = _int_list(doc["host_capacity"], f"{source}: host_capacity", 0)
    if len(caps) != hosts:
        raise PlacementError(
            f"{source}: host_capacity has {len(caps)} entries for {hosts} hosts"
        )
    pooled = _int(doc["pooled_capacity"], f"{source}: pooled_capacity", 0)
    if pooled != sum(caps):
        raise PlacementError(
            f"{source}: pooled_capacity {pooled} is not the sum of host_capacity ({sum(caps)})"
        )
    raw = doc["requests"]
    if not isinstance(raw, list) or not raw:
        raise PlacementError(f"{source}: requests must be a non-empty list of [host, block]")
    reqs: list[tuple[int, int]] = []
    for i, r in enumerate(raw):
        if not isinstance(r, list) or len(r) != 2:
            raise PlacementError(f"{source}: requests[{i}] must be [host, block], got {r!r}")
        h = _int(r[0], f"{source}: requests[{i}] host")
        b = _int(r[1], f"{source}: requests[{i}] block")
        if h >= hosts:
            raise PlacementError(f"{source}: requests[{i}] host {h} >= hosts ({hosts})")
        if b >= len(sizes):
            raise PlacementError(
                f"{source}: requests[{i}] block {b} has no size (only {len(sizes)} blocks)"
            )
        reqs.append((h, b))
    gen = doc["generator"]
    if not isinstance(gen, dict):
        raise PlacementError(f"{source}: generator must be an object")
    generator = {str(k): _int(v, f"{source}: generator.{k}") for k, v in gen.items()}
    return Instance(hosts, tuple(sizes), tuple(caps), pooled, tuple(reqs), generator)


def load_instance(path: Path) -> Instance:
    """Read and check an instance file; :class:`PlacementError` names the file and the problem."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlacementError(f"{path}: instance file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlacementError(f"{path}: cannot read instance file ({exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlacementError(f"{path}: not valid JSON ({exc})") from None
    return parse_instance(doc, str(path))
