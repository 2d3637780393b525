"""Prime and probe through eviction, measured on a pure-Python reference of the two designs of
``Proofs/Leak/Eviction.lean``: the shared LRU pool (``KVCache.Leak.lru``) and the partitioned
cache with a quota per tenant, LRU inside each part (``KVCache.Leak.quotaLru``).

Every tenant has its own keyed salt, so no tenant is ever served another's block (the
``tenant-leak`` result). The attack is on the pool, not on reuse: the attacker primes the pool
with a prompt of its own as large as the room it can fill, the victim sends a prompt or does
not (a fair coin), other tenants sometimes send traffic of their own, then the attacker sends
its prompt again and counts the blocks served from cache. It guesses "the victim sent" iff
fewer than all of them were (a rule fixed in advance, not fitted to the trials).

Each trial is run twice from the same random stream, once where the victim sends and once where
it does not, so besides the accuracy (a Wilson interval) the figures count the trials in which
the attacker's observation differs between the two worlds: noninterference
(``perTenant_noninterference``) says there are none for the partitioned design.

Seeded (``ProbeParams.seed``) and deterministic: certify re-runs it and records this file's hash.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

#: Name and version of this model, recorded with its figures.
MODEL = "pytools.results.leak.probe/v1"
ATTACKER, VICTIM = 0, 1
Z_95 = 1.959963984540054  # two-sided 95% normal quantile, for the Wilson interval


@dataclass(frozen=True)
class ProbeParams:
    """One prime-and-probe experiment (tenant 0 attacks, tenant 1 is the victim, the others
    are background traffic)."""

    seed: int = 25
    trials: int = 2000
    tenants: int = 4
    capacity: int = 16  # blocks of the shared pool = the sum of the partitioned quotas
    warm_requests: int = 4  # background requests before the prime
    victim_max_blocks: int = 4  # the victim's prompt: 1..this many blocks
    noise_probability: float = 0.25  # a background request between prime and probe
    noise_max_blocks: int = 4

    def __post_init__(self) -> None:
        if self.tenants < 3 or self.capacity < self.tenants or self.trials < 1:
            raise ValueError(f"inconsistent probe parameters: {self}")

    def quotas(self) -> list[int]:
        """Equal quotas that add up to the shared pool's capacity (the first ones get the
        remainder): equal total memory."""
        base, extra = divmod(self.capacity, self.tenants)
        return [base + (1 if t < extra else 0) for t in range(self.tenants)]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULT = ProbeParams()


class Pool(Protocol):
    """A cache design: serves a tenant's prompt (its block keys) and returns how many leading
    blocks were served from cache."""

    def serve(self, tenant: int, blocks: Sequence[int]) -> int: ...


class SharedLru:
    """``KVCache.Leak.lru``: the request's entries become the most recent, every other entry
    keeps its order, and entries beyond the capacity are evicted, whoever's they are."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.entries: list[tuple[int, int]] = []  # most recently used first

    def serve(self, tenant: int, blocks: Sequence[int]) -> int:
        present = set(self.entries)
        hit = 0
        while hit < len(blocks) and (tenant, blocks[hit]) in present:
            hit += 1
        new = [(tenant, b) for b in blocks]
        fresh = set(new)
        self.entries = (new + [e for e in self.entries if e not in fresh])[: self.capacity]
        return hit


class PartitionedLru:
    """``KVCache.Leak.quotaLru``: each tenant's part is an LRU cache of its quota; a request
    changes only its own tenant's part."""

    def __init__(self, quotas: Sequence[int]) -> None:
        self.parts = [SharedLru(q) for q in quotas]

    def serve(self, tenant: int, blocks: Sequence[int]) -> int:
        return self.parts[tenant].serve(tenant, blocks)


@dataclass(frozen=True)
class Design:
    """A design under test: how to make an empty pool, and how many blocks the attacker primes
    (the room it can fill: the whole pool, or its own quota)."""

    name: str
    make: Callable[[ProbeParams], Pool]
    prime_blocks: Callable[[ProbeParams], int]


DESIGNS: tuple[Design, ...] = (
    Design("shared_lru", lambda p: SharedLru(p.capacity), lambda p: p.capacity),
    Design("partitioned_lru", lambda p: PartitionedLru(p.quotas()),
           lambda p: p.quotas()[ATTACKER]),
)


def trial(design: Design, params: ProbeParams, stream: int, sent: bool) -> int:
    """One prime and probe; returns the attacker's observation (blocks served at the probe).
    ``stream`` seeds everything but ``sent``, so both worlds see the same other traffic."""
    rng = random.Random(stream)
    pool = design.make(params)
    ids = itertools.count()
    noise = range(2, params.tenants)

    def fresh(n: int) -> list[int]:
        return [next(ids) for _ in range(n)]

    for _ in range(params.warm_requests):
        pool.serve(rng.choice(noise), fresh(rng.randint(1, params.noise_max_blocks)))
    prime = fresh(design.prime_blocks(params))
    pool.serve(ATTACKER, prime)
    victim = fresh(rng.randint(1, params.victim_max_blocks))  # drawn in both worlds
    if sent:
        pool.serve(VICTIM, victim)
    if rng.random() < params.noise_probability:
        pool.serve(rng.choice(noise), fresh(rng.randint(1, params.noise_max_blocks)))
    return pool.serve(ATTACKER, prime)


def wilson(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion."""
    phat = successes / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return (round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6))


def mutual_information(pairs: Sequence[tuple[bool, int]]) -> float:
    """Plug-in mutual information, in bits, between the victim's bit and the observation."""
    n = len(pairs)
    joint = Counter(pairs)
    xs = Counter(x for x, _ in pairs)
    ys = Counter(y for _, y in pairs)
    mi = sum(c / n * math.log2(c * n / (xs[x] * ys[y])) for (x, y), c in joint.items())
    return round(max(0.0, mi), 6)


def observe(design: Design, params: ProbeParams = DEFAULT) -> dict[str, Any]:
    """The raw record of the attack on one design: per trial, the victim's bit (a seeded fair
    coin) and the attacker's observation in the world where the victim stayed silent and in
    the one where it sent (same other traffic)."""
    coin = random.Random(params.seed)
    raw: dict[str, Any] = {"prime_blocks": design.prime_blocks(params), "sent": [],
                           "seen_silent": [], "seen_sent": []}
    for i in range(params.trials):
        stream = params.seed * 1_000_003 + i
        raw["seen_silent"].append(trial(design, params, stream, False))
        raw["seen_sent"].append(trial(design, params, stream, True))
        raw["sent"].append(int(coin.random() < 0.5))
    return raw


def summarise(raw: dict[str, Any]) -> dict[str, Any]:
    """The attack's figures, computed from its raw record (:func:`observe`): the attacker
    guesses "sent" iff its probe is served fewer blocks than it primed."""
    prime, sent = raw["prime_blocks"], raw["sent"]
    trials = len(sent)
    if not trials or not len(raw["seen_silent"]) == len(raw["seen_sent"]) == trials:
        raise ValueError("a prime-and-probe record needs as many observations as trials")
    seen = [(raw["seen_sent"] if s else raw["seen_silent"])[i] for i, s in enumerate(sent)]
    correct = sum(1 for s, o in zip(sent, seen, strict=True) if (o < prime) == bool(s))
    return {
        "prime_blocks": prime,
        "trials": trials,
        "victim_sent": sum(sent),
        "correct_guesses": correct,
        "accuracy": round(correct / trials, 6),
        "accuracy_wilson_95": list(wilson(correct, trials)),
        "bits_per_probe": mutual_information([(bool(s), o) for s, o in zip(sent, seen,
                                                                          strict=True)]),
        "paired_trials_differing": sum(1 for a, b in zip(raw["seen_silent"], raw["seen_sent"],
                                                         strict=True) if a != b),
    }


def measure(design: Design, params: ProbeParams = DEFAULT) -> dict[str, Any]:
    """The attack's figures on one design."""
    return summarise(observe(design, params))


def figures(params: ProbeParams = DEFAULT,
            designs: Sequence[Design] = DESIGNS) -> dict[str, Any]:
    """The certificate's ``prime_and_probe`` figures: both designs at equal total memory."""
    return {
        "model": MODEL,
        "params": params.as_dict(),
        "quotas": params.quotas(),
        "guess_rule": "victim sent iff the probe is served fewer blocks than were primed",
        "designs": {d.name: measure(d, params) for d in designs},
    }


def probe_claims(f: dict[str, Any]) -> dict[str, bool]:
    """The issue's claims on the figures: the shared pool leaks well above chance, the
    partitioned cache is at chance and its observations never depend on the victim."""
    shared, part = f["designs"]["shared_lru"], f["designs"]["partitioned_lru"]
    low, high = part["accuracy_wilson_95"]
    return {
        "shared_above_chance": shared["accuracy_wilson_95"][0] > 0.5,
        "shared_observation_depends_on_victim": shared["paired_trials_differing"] > 0,
        "partitioned_at_chance": low <= 0.5 <= high,
        "partitioned_observation_independent_of_victim": part["paired_trials_differing"] == 0,
        "partitioned_carries_no_information": part["bits_per_probe"] == 0,
    }
