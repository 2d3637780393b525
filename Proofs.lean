module

public import Proofs.Isolation.Floor
public import Proofs.Ceiling.Cache
public import Proofs.Ceiling.Belady
public import Proofs.Ceiling.Mooncake
public import Proofs.Kernel.Basic
public import Proofs.Kernel.Table
public import Proofs.Placement.Wall

/-!
# Proofs: the limits of multi-tenant KV-cache sharing

The library's root: importing `Proofs` brings every published result.

* `Proofs.Isolation.Floor` — zero-leak, full-reuse sharing of n blocks among T tenants
  needs 2^(T·n) isolation states (T^n with single owners); tight.
* `Proofs.Ceiling.Cache` — every demand-fetch cache: hits + distinct ≤ |requests|, reached
  with enough capacity; `Proofs.Ceiling.Mooncake` instantiates it on a public trace.
* `Proofs.Ceiling.Belady` — Belady's farthest-next-use rule is optimal at every capacity.
* `Proofs.Kernel.Basic` — the single-owner state-movement kernel and its invariants;
  `Proofs.Kernel.Table` checks it against an independent reference on a finite domain.
* `Proofs.Placement.Wall` — misses ≥ distinct blocks for every routing and policy; a pooled
  cache reaches the wall, per-instance caches cannot when blocks are shared.
-/
