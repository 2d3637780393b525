module

public import Proofs.Common.List
public import Proofs.Common.Nat
public import Proofs.Isolation.Floor
public import Proofs.Ceiling.Cache
public import Proofs.Ceiling.Policies
public import Proofs.Ceiling.Bypass
public import Proofs.Ceiling.Prefix
public import Proofs.Ceiling.PrefixLru
public import Proofs.Ceiling.PrefixLruStack
public import Proofs.Ceiling.PrefixLruFlat
public import Proofs.Ceiling.PrefixLruDistances
public import Proofs.Ceiling.Count
public import Proofs.Ceiling.Mooncake
public import Proofs.Ceiling.MooncakeTrace
public import Proofs.Ceiling.PrefixMooncake
public import Proofs.Kernel.Model
public import Proofs.Kernel.Invariants
public import Proofs.Kernel.Custody
public import Proofs.Kernel.Provenance
public import Proofs.Kernel.Mac
public import Proofs.Kernel.Once
public import Proofs.Kernel.Check
public import Proofs.Kernel.Table
public import Proofs.Kernel.Workflows
public import Proofs.Kernel.MacCheck
public import Proofs.Kernel.MacTable
public import Proofs.Kernel.MacWorkflows
public import Proofs.Placement.Wall
public import Proofs.Leak.Salted
public import Proofs.Leak.Eviction
public import Proofs.Leak.Partition
public import Proofs.Leak.PartitionCases
public import Proofs.Leak.Table
public import Proofs.Placement.Farthest
public import Proofs.Placement.Optimal
public import Proofs.Placement.Simulation
public import Proofs.Placement.Cost
public import Proofs.Placement.Scan
public import Proofs.Placement.Binding

/-!
# Proofs: the limits of multi-tenant KV-cache sharing

The library's root: importing `Proofs` brings every published result.

* `Proofs.Common.List`, `Proofs.Common.Nat` — general lemmas about lists and natural numbers
  (no cache meaning), proved once and used by several topics.

* `Proofs.Isolation.Floor` — zero-leak, full-reuse sharing of n blocks among T tenants
  needs 2^(T·n) isolation states (T^n with single owners); tight.
* `Proofs.Ceiling.Cache` — every demand-fetch cache: hits + distinct ≤ |requests|, reached
  with enough capacity; from warm contents C, hits + |distinct(r) \ C| ≤ |requests|.
* `Proofs.Ceiling.Policies` — Belady's farthest-next-use rule is optimal at every capacity
  and its hits are monotone in the capacity; LRU is a stack algorithm (inclusion, monotone
  hits, stack distances). `Proofs.Ceiling.Bypass` — with bypass (a policy may decline to
  store a missed block), Belady with bypass is optimal at every capacity, at least Belady
  without bypass, strictly on `[1, 2, 1]` at capacity 1, equal once capacity ≥ distinct.
* `Proofs.Ceiling.Prefix` — prefix (radix) caches: every prefix cache (any policy, bypass
  included) scores at most the flat optimum with bypass on the same blocks, so Belady with
  bypass and the flat ceilings bound it; `Proofs.Ceiling.PrefixMooncake` states the Mooncake
  window, warm-window and whole-trace ceilings for them; `Proofs.Ceiling.PrefixLru` defines
  radix LRU (evict the least recently used leaf) and flat LRU over tail-first touches, with
  kernel-checked instances; `Proofs.Ceiling.PrefixLruStack` — under chained ids, radix LRU's
  cache is the top of the LRU stack of the tail-first touches at every capacity, so it is a
  stack algorithm and its prefix hits come from one stack; `Proofs.Ceiling.PrefixLruFlat` —
  hence radix LRU is flat LRU over tail-first touches, at every capacity;
  `Proofs.Ceiling.PrefixLruDistances` — and its prefix hits at every capacity are a count over
  one list of stack distances, computed in one pass.
* `Proofs.Ceiling.Count` — counting passes proved to compute (length, distinct) of a packed
  stream, one block or one run of consecutive blocks a step; `Proofs.Ceiling.Mooncake` has the
  kernel count the public claim's window from an empty cache, `Proofs.Ceiling.MooncakeTrace`
  the whole trace and the window after the lines before it (the warm figure).
* `Proofs.Kernel.Model` — the single-owner state-movement kernel (several blocks,
  kernel-issued capabilities and tickets) and a system around it (holders' tokens, a network
  that delays, duplicates, reorders and drops); `Proofs.Kernel.Invariants` — stale tokens
  refused, unreadable escrow, at-most-once settlement, reallocation kills the past, progress;
  `Proofs.Kernel.Custody` — at most one valid capability per block and only its holder reads,
  in every reachable system state; `Proofs.Kernel.Provenance` — over logged runs, every
  accepted use comes from the custodian the run's history names (allocator, then committed
  receivers); `Proofs.Kernel.Mac` — the same without an authenticated presenter, tokens tagged
  by an unforgeable MAC; `Proofs.Kernel.Once` — a begun transfer settles exactly once under
  fair delivery; `Proofs.Kernel.Check` — a passing table lists exactly the
  reachable states; `Proofs.Kernel.Table` — that table for one finite domain, checked against
  an independent reference; `Proofs.Kernel.Workflows` — the named workflows on both (their count
  is the certificate's `workflows` figure, not typed here); `Proofs.Kernel.MacCheck`,
  `Proofs.Kernel.MacTable`, `Proofs.Kernel.MacWorkflows` — the tagged variant's finite check
  (a smaller domain, every request with right and wrong tags, under a toy MAC) and its workflow
  bench (the first bench's workflows and forged requests without an authenticated presenter).
* `Proofs.Placement.Wall` — misses ≥ distinct blocks for every routing and policy; a pooled
  cache reaches the wall, per-instance caches cannot when blocks are shared;
  `Proofs.Placement.Farthest` — farthest-next-use with page sizes is a demand-fetch policy that
  fits its capacity, and on the committed instance, below the pages the wall needs, the kernel
  runs it and counts the wall's misses (optimal there); `Proofs.Placement.Optimal` — at every
  capacity (blocks counted), Belady with bypass is the optimum of every demand-fetch policy
  that fits: one class for the ceiling's and placement's optimality results;
  `Proofs.Placement.Simulation` — at every capacity, under every routing, a pooled
  demand-fetch cache with the summed capacity misses no more than per-instance caches
  (strictly less when a request misses on its host while another host caches its block), so
  pooled Belady with bypass at the summed capacity bounds every routing's misses from below;
  `Proofs.Placement.Cost` — priced (remote hit `r`, miss `m`): for every routing, a pooled
  layout costs at most the per-host caches when `r ≤ m` (exactly `m - r` less per remote hit),
  and at most them for every `r` when remote hits dearer than a miss are declined;
  `Proofs.Placement.Scan` — on a family of traces pooled LRU misses more than per-host LRU at
  equal memory; `Proofs.Placement.Binding` — on a committed stream below the wall's capacity
  the kernel counts Belady with bypass's misses: the optimum, strictly above the wall.
* `Proofs.Leak.Salted` — a prefix cache keyed by (salt, block) with a keyed salt bound at
  admission: zero cross-tenant leak for every history, full own reuse, T copies of a shared
  prefix; an exact design of the isolation floor; unsalted or client-chosen salts leak.
* `Proofs.Leak.Eviction` — the salted cache under eviction: a partitioned cache (every
  per-tenant policy with quotas) is noninterferent for tenants and gives each tenant exactly a
  private cache of its quota; a shared LRU pool is not (prime and probe through eviction).
* `Proofs.Leak.Partition` — the design a serving engine runs: one physical pool of `C` slots
  split by quotas with `Σ q ≤ C`, running requests holding their blocks, freed blocks cached
  and evicted only inside their tenant's partition, refusal when the partition is exhausted:
  noninterferent for tenants (verdicts and hits), proved from the step's definition; the same
  pool shared without quotas interferes through refusals and through hits.
  `Proofs.Leak.PartitionCases` — the kernel runs that step on 3 fixed histories and gets the
  observations the Python reference (`pytools/results/leak/partition.py`) computes.
* `Proofs.Leak.Table` — an exact design that stores each block once beside a T·n-bit access
  table, serving exactly what the keyed salted cache serves: the floor counts bits, not copies.
-/
