module

public import Proofs.Isolation.Floor
public import Proofs.Ceiling.Cache
public import Proofs.Ceiling.Mooncake
public import Proofs.Kernel.Model
public import Proofs.Kernel.Invariants
public import Proofs.Kernel.Table
public import Proofs.Placement.Wall
public import Proofs.Leak.Salted

/-!
# Proofs: the limits of multi-tenant KV-cache sharing

The library's root: importing `Proofs` brings every published result.

* `Proofs.Isolation.Floor` — zero-leak, full-reuse sharing of n blocks among T tenants
  needs 2^(T·n) isolation states (T^n with single owners); tight.
* `Proofs.Ceiling.Cache` — every demand-fetch cache: hits + distinct ≤ |requests|, reached
  with enough capacity; `Proofs.Ceiling.Mooncake` instantiates it on a public trace.
* `Proofs.Kernel.Model` — the single-owner state-movement kernel and its finite-domain
  checkers; `Proofs.Kernel.Invariants` — its theorems (one live owner, unreadable escrow,
  stale transfers refused, ...); `Proofs.Kernel.Table` checks it against an independent
  reference on a finite domain.
* `Proofs.Placement.Wall` — misses ≥ distinct blocks for every routing and policy; a pooled
  cache reaches the wall, per-instance caches cannot when blocks are shared.
* `Proofs.Leak.Salted` — a prefix cache keyed by (salt, block) with a keyed salt bound at
  admission: zero cross-tenant leak for every history, full own reuse, T copies of a shared
  prefix; an exact design of the isolation floor; unsalted or client-chosen salts leak.
-/
