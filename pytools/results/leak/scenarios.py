"""The four scenarios of the leak reproduction, run against any prefix-cache engine.

An engine is anything with the :class:`CacheEngine` shape: a name, a version, a description
of its settings, and fresh empty caches (:class:`CacheSession`) that serve one request at a
time and say how many prompt tokens came from the cache. The adapters in :mod:`.engines` wrap
vLLM's ``KVCacheManager`` and SGLang's ``RadixCache``; :mod:`.reference` is the pure-Python
model certify re-runs; a later adapter (e.g. a GPU server with a real model, reading
``usage.prompt_tokens_details.cached_tokens``) plugs in the same way.

Per prompt pair, each scenario on a fresh cache, tenant A the victim, tenant B the other:

* ``unsalted``: A sends its prompt, B its own (sharing all but A's last tokens), A again;
* ``per_tenant_salt``: the same, each client sending its own guessable salt (its tenant id);
* ``guessable_salt``: A with its guessable salt, then B sends A's guessable salt;
* ``keyed_salt``: every request goes through the admission policy
  (:func:`pytools.admission.request_policy.admit`, the deployed code): A's request gets A's
  keyed salt; B's request carrying A's guessable salt is refused (counted); B's request
  without a salt gets B's keyed salt; then A again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pytools.admission.request_policy import Admitted, admit
from pytools.admission.salt import keyed_salt

from .prompts import PromptPair

VICTIM = "tenant-a"
OTHER = "tenant-b"

#: The per-pair counts every run records, in this order.
METRICS: tuple[str, ...] = (
    "cross_tenant_hit_tokens_unsalted",
    "own_hit_tokens_unsalted",
    "cross_tenant_hit_tokens_salted",
    "own_hit_tokens_salted",
    "adversary_hit_tokens_guessable_salt",
    "adversary_hit_tokens_keyed_salt",
    "own_hit_tokens_keyed_salt",
    "adversary_salt_claims_refused",
)


class CacheSession(Protocol):
    """One empty prefix cache, serving requests in order."""

    def serve(self, tokens: Sequence[int], salt: str | None) -> int:
        """Serve one request: look its prompt up, then cache its blocks (the request finishes).

        Returns the number of prompt tokens served from the cache.
        """
        ...


class CacheEngine(Protocol):
    """A prefix-cache implementation to run the scenarios on."""

    name: str
    version: str

    def describe(self) -> dict[str, Any]:
        """Settings and environment that the counts depend on (recorded in the evidence)."""
        ...

    def session(self) -> CacheSession:
        """A fresh, empty cache."""
        ...


def throwaway_secret(seed: int) -> bytes:
    """The reproduction's server secret, derived from the seed: public by design, so certify can
    recompute the keyed salts. A deployment's secret is random and never written down."""
    return hashlib.sha256(b"pytools.leak throw-away secret\x00" + str(seed).encode()).digest()


def guessable_salt(tenant: str) -> str:
    """The per-tenant salt a client would pick: its tenant id, which anyone can guess."""
    return tenant


@dataclass(frozen=True)
class Salts:
    """The salts of one run."""

    secret: bytes
    keyed: dict[str, str]
    guessable: dict[str, str]

    @staticmethod
    def for_seed(seed: int) -> Salts:
        secret = throwaway_secret(seed)
        tenants = (VICTIM, OTHER)
        return Salts(secret=secret, keyed={t: keyed_salt(secret, t) for t in tenants},
                     guessable={t: guessable_salt(t) for t in tenants})


def admitted(tokens: Sequence[int], tenant: str, secret: bytes,
             claimed: str | None = None) -> tuple[list[int], str | None] | None:
    """A completions request through the admission policy: (prompt, salt) as forwarded, or
    None when it is refused."""
    doc: dict[str, Any] = {"model": "synthetic", "prompt": list(tokens), "max_tokens": 1}
    if claimed is not None:
        doc["cache_salt"] = claimed
    outcome = admit(json.dumps(doc).encode(), tenant, secret)
    if not isinstance(outcome, Admitted):
        return None
    forwarded = json.loads(outcome.body)
    return forwarded["prompt"], forwarded.get("cache_salt")


def run_pair(engine: CacheEngine, pair: PromptPair, salts: Salts) -> dict[str, int]:
    """The four scenarios on one prompt pair, each on a fresh cache."""
    a, b = pair.victim, pair.other
    ga, gb = salts.guessable[VICTIM], salts.guessable[OTHER]
    out: dict[str, int] = {}

    cache = engine.session()
    cache.serve(a, None)
    out["cross_tenant_hit_tokens_unsalted"] = cache.serve(b, None)
    out["own_hit_tokens_unsalted"] = cache.serve(a, None)

    cache = engine.session()
    cache.serve(a, ga)
    out["cross_tenant_hit_tokens_salted"] = cache.serve(b, gb)
    out["own_hit_tokens_salted"] = cache.serve(a, ga)

    cache = engine.session()
    cache.serve(a, ga)
    out["adversary_hit_tokens_guessable_salt"] = cache.serve(b, ga)

    cache = engine.session()
    first = admitted(a, VICTIM, salts.secret)
    assert first is not None
    cache.serve(*first)
    # B first claims A's guessable salt: the admission must refuse it; were it forwarded, what
    # it reads counts against the keyed scenario
    claimed = admitted(b, OTHER, salts.secret, claimed=ga)
    out["adversary_salt_claims_refused"] = int(claimed is None)
    through_claim = cache.serve(*claimed) if claimed is not None else 0
    second = admitted(b, OTHER, salts.secret)
    assert second is not None
    out["adversary_hit_tokens_keyed_salt"] = through_claim + cache.serve(*second)
    again = admitted(a, VICTIM, salts.secret)
    assert again is not None
    out["own_hit_tokens_keyed_salt"] = cache.serve(*again)
    return {m: out[m] for m in METRICS}


def run_pairs(engine: CacheEngine, pairs: list[PromptPair], salts: Salts) -> dict[str, list[int]]:
    """Every metric as a list over the pairs, in order."""
    rows = [run_pair(engine, pair, salts) for pair in pairs]
    return {m: [row[m] for row in rows] for m in METRICS}
