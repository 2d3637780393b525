module

public import Proofs.Leak.Salted

/-!
# Zero leak is not noninterference: the salted cache under eviction

`Proofs.Leak.Salted` proves that a keyed salt per tenant means no tenant is ever served another
tenant's block. That model never evicts. A real engine keeps one bounded pool (vLLM's free-block
queue, SGLang's radix-tree LRU) and evicts across tenants, so tenant `A`'s traffic evicts tenant
`B`'s salted blocks and `B`'s hits, hence its time to first token, depend on what `A` sent: a
prime-and-probe channel through eviction. Salting closes direct reuse, not this contention.

## The model

* A request that reaches the engine (`Ask`) carries its tenant (its keyed salt: the admission of
  `Proofs.Leak.Salted` binds one salt per tenant) and its prompt as the chain of its full blocks'
  keys. The pool (`Pool`) is the list of its (tenant salt, block key) entries, most recently used
  first. A design (`Policy`) says how a request changes the pool.
* What a tenant observes of its request is what timing reveals: how many leading blocks of its
  prompt are served from cache (`seen`, the `hitLen` of `Proofs.Leak.Salted`, looked up under its
  own salt). `views P t c rs` lists the observations of tenant `t`'s requests in the history `rs`
  (oldest first) served by design `P` from pool `c`; `mine t rs` is `t`'s requests in `rs`.
* The shared pool: `lru k`, least recently used at request granularity with capacity `k`: the
  request's entries become the most recent, then everything beyond the first `k` entries is
  evicted, whoever's it is.
* The partitioned cache: the class `PerTenant q P` of every design whose request never changes
  another tenant's entries (eviction picks only the requester's own), whose requester's part
  afterwards depends only on its part before, and which keeps each tenant within its quota
  `q t`. `quotaLru q` is one member: LRU inside each tenant's part of capacity `q t`.

## Results, in words

1. `perTenant_noninterference`, a sufficient condition: for every quota `q`, every design of the
   class `PerTenant q` (whose fields are the unwinding conditions themselves), every tenant `t`
   and every two histories with the same subsequence of `t`'s requests (from pools that hold
   the same entries of `t`), every request of `t` gets the same observation. Its one instance
   here, `quotaLru`, is `T` disjoint lists: no shared physical pool, no blocks held by running
   requests, no refusals. The theorem about the design a serving engine runs (one physical pool
   split by quotas, held blocks, eviction inside the partition, refusals) is
   `KVCache.Leak.Partition.noninterference` in `Proofs.Leak.Partition`, proved from that
   design's step.
2. `lru_interference`: for every capacity `k ≥ 1`, every `T ≥ 2` tenants and every tenant `t`,
   the shared LRU pool has two histories with the same requests of `t` that give `t` different
   observations (`t` primes one block, another tenant sends `k` blocks or nothing, `t` probes:
   a hit exactly when the other sent nothing). `lru_not_perTenant`: so the shared pool is in no
   class `PerTenant q`. `interference_of_evicts`: more generally, every design in which, after
   some history, a request of another tenant evicts an entry of `t` interferes for `t`.
3. `quota_own_reuse`: under `quotaLru q` every tenant `t` observes exactly what a private LRU
   cache of capacity `q t` that saw only `t`'s requests would show it: the price of isolation
   is exactly "each tenant gets a private cache of its quota".

Limits: the observation is the number of leading blocks served from cache; timing also carries
queueing, batching with other tenants' requests and noise, which this model leaves out and a
quota does not close. LRU here touches a request's blocks at once (request granularity); a
request whose blocks exceed its capacity keeps only the first `k`. Refusals are not modelled.
-/

@[expose] public section

namespace KVCache.Leak

/-- A request that reaches the engine: its tenant (whose keyed salt it carries) and its prompt
as the chain of its full blocks' keys. -/
structure Ask (T : Nat) (κ : Type) where
  /-- The tenant, i.e. the keyed salt the admission layer bound to the request. -/
  tenant : Fin T
  /-- The keys of the prompt's full blocks, in order. -/
  blocks : List κ

/-- A bounded pool: its (tenant salt, block key) entries, most recently used first. -/
abbrev Pool (T : Nat) (κ : Type) : Type := Cache (Fin T) κ

/-- A cache design: the pool after serving a request from a pool. -/
abbrev Policy (T : Nat) (κ : Type) : Type := Pool T κ → Ask T κ → Pool T κ

variable {T : Nat} {κ : Type} [DecidableEq κ]

-- noncomputable: calls `hitLen` (noncomputable in `Proofs.Leak.Salted`)
/-- What the tenant of request `r` observes when `r` is served from pool `c`: how many leading
blocks of its prompt are found under its own salt (served from cache). -/
noncomputable def seen (c : Pool T κ) (r : Ask T κ) : Nat := hitLen c r.tenant r.blocks

-- noncomputable: calls `seen`
/-- The observations of tenant `t`'s requests in the history `rs` (oldest first), served by the
design `P` from the pool `c`: one number per request of `t`, in order. -/
noncomputable def views (P : Policy T κ) (t : Fin T) : Pool T κ → List (Ask T κ) → List Nat
  | _, [] => []
  | c, r :: rs => if r.tenant = t then seen c r :: views P t (P c r) rs else views P t (P c r) rs

/-- The pool after the history `rs` (oldest first) is served by design `P` from pool `c`. -/
def poolAfter (P : Policy T κ) : Pool T κ → List (Ask T κ) → Pool T κ
  | c, [] => c
  | c, r :: rs => poolAfter P (P c r) rs

-- noncomputable: `List.filter` (`List.reverse._redArg`): the WebAssembly build cannot compile it
/-- Tenant `t`'s requests in the history `rs`, in order. -/
noncomputable def mine (t : Fin T) (rs : List (Ask T κ)) : List (Ask T κ) :=
  rs.filter fun r => decide (r.tenant = t)

-- noncomputable: `List.filter` (`List.reverse._redArg`): the WebAssembly build cannot compile it
/-- Tenant `u`'s part of the pool: its entries, in pool order. -/
noncomputable def part (u : Fin T) (c : Pool T κ) : List (Fin T × κ) :=
  c.filter fun e => decide (e.1 = u)

/-- The class of partitioned designs with quota `q t` per tenant: a request never changes another
tenant's entries (its eviction picks only the requester's own), the requester's part afterwards
depends only on its part before, and it holds at most its quota. -/
structure PerTenant (q : Fin T → Nat) (P : Policy T κ) : Prop where
  /-- A request leaves every other tenant's part of the pool as it was. -/
  others : ∀ (c : Pool T κ) (r : Ask T κ) (u : Fin T), u ≠ r.tenant →
    part u (P c r) = part u c
  /-- The requester's part afterwards depends only on its part before. -/
  own : ∀ (c c' : Pool T κ) (r : Ask T κ), part r.tenant c = part r.tenant c' →
    part r.tenant (P c r) = part r.tenant (P c' r)
  /-- The requester holds at most its quota afterwards. -/
  quota : ∀ (c : Pool T κ) (r : Ask T κ), (part r.tenant (P c r)).length ≤ q r.tenant

-- noncomputable: `++` (`List.appendTR._redArg`), `List.filter`: WebAssembly cannot compile them
/-- The shared pool of capacity `k`, least recently used at request granularity: the request's
entries (its blocks under its tenant's salt) become the most recent, every other entry keeps its
order, and the entries beyond the first `k` (the least recently used) are evicted, whoever's
they are. -/
noncomputable def lru (k : Nat) (c : Pool T κ) (r : Ask T κ) : List (Fin T × κ) :=
  (r.blocks.map (fun b => (r.tenant, b)) ++
    c.filter fun e => !decide (e ∈ r.blocks.map (fun b => (r.tenant, b)))).take k

-- noncomputable: `++` (`List.appendTR._redArg`), `List.filter`: WebAssembly cannot compile them
/-- The partitioned cache with quota `q t` per tenant, LRU inside each part: the requester's part
is served as an LRU cache of capacity `q` of its tenant; no other entry moves. -/
noncomputable def quotaLru (q : Fin T → Nat) (c : Pool T κ) (r : Ask T κ) :
    List (Fin T × κ) :=
  lru (q r.tenant) (part r.tenant c) r ++ c.filter fun e => !decide (e.1 = r.tenant)

/-! ## Observations depend only on the observer's part -/

omit [DecidableEq κ] in
/-- An entry is in tenant `u`'s part iff it is in the pool under `u`'s salt. -/
theorem mem_part {u : Fin T} {c : Pool T κ} {e : Fin T × κ} :
    e ∈ part u c ↔ e ∈ c ∧ e.1 = u := by
  simp [part, List.mem_filter]

/-- A request's observation depends only on its tenant's part of the pool. -/
theorem seen_congr {c c' : Pool T κ} {r : Ask T κ} (h : part r.tenant c = part r.tenant c') :
    seen c r = seen c' r := by
  unfold seen
  apply hitLen_congr
  intro k
  have h1 : (r.tenant, k) ∈ c ↔ (r.tenant, k) ∈ part r.tenant c := by simp [mem_part]
  have h2 : (r.tenant, k) ∈ c' ↔ (r.tenant, k) ∈ part r.tenant c' := by simp [mem_part]
  rw [h1, h2, h]

omit [DecidableEq κ] in
/-- Tenant `t`'s requests in a history headed by one of its own. -/
theorem mine_cons_self {t : Fin T} {r : Ask T κ} (hr : r.tenant = t) (rs : List (Ask T κ)) :
    mine t (r :: rs) = r :: mine t rs := by
  simp [mine, hr]

omit [DecidableEq κ] in
/-- Tenant `t`'s requests in a history headed by another tenant's. -/
theorem mine_cons_other {t : Fin T} {r : Ask T κ} (hr : ¬ r.tenant = t) (rs : List (Ask T κ)) :
    mine t (r :: rs) = mine t rs := by
  simp [mine, hr]

/-! ## Noninterference of the partitioned design -/

/-- Under a per-tenant design, tenant `t`'s observations over a history are those over its own
requests alone, from any pool with the same part of `t`. -/
theorem views_eq_mine {q : Fin T → Nat} {P : Policy T κ} (hP : PerTenant q P) (t : Fin T) :
    ∀ (rs : List (Ask T κ)) (c c' : Pool T κ), part t c = part t c' →
      views P t c rs = views P t c' (mine t rs)
  | [], c, c', _ => by simp [views, mine]
  | r :: rs, c, c', h => by
    by_cases hr : r.tenant = t
    · rw [mine_cons_self hr]
      simp only [views, if_pos hr]
      have h' : part r.tenant c = part r.tenant c' := by rw [hr]; exact h
      have h'' := hP.own c c' r h'
      rw [hr] at h''
      rw [seen_congr h', views_eq_mine hP t rs (P c r) (P c' r) h'']
    · rw [mine_cons_other hr]
      simp only [views, if_neg hr]
      exact views_eq_mine hP t rs (P c r) c'
        ((hP.others c r t (fun h' => hr h'.symm)).trans h)

/-- **A sufficient condition for noninterference.** For every quota `q`, every design `P` of the
class `PerTenant q` (whose fields are the unwinding conditions), every tenant `t` and every two
histories `rs`, `rs'` with the same subsequence of `t`'s requests, served from pools `c`, `c'`
that hold the same entries of `t` (e.g. both empty), every request of `t` gets the same
observation: `t`'s observations are the same list. -/
theorem perTenant_noninterference {q : Fin T → Nat} {P : Policy T κ} (hP : PerTenant q P)
    (t : Fin T) {c c' : Pool T κ} (hc : part t c = part t c') {rs rs' : List (Ask T κ)}
    (h : mine t rs = mine t rs') : views P t c rs = views P t c' rs' := by
  rw [views_eq_mine hP t rs c c' hc, h, ← views_eq_mine hP t rs' c' c' rfl]

/-! ## The partitioned LRU cache is per-tenant -/

omit [DecidableEq κ] in
/-- A pool's part for `u` of two pools joined is the two parts joined. -/
theorem part_append (u : Fin T) (a b : List (Fin T × κ)) :
    part u (a ++ b) = part u a ++ part u b := by
  unfold part
  exact List.filter_append ..

/-- Every entry of the LRU pool after a request is the requester's, if every entry before was. -/
theorem tenant_of_mem_lru {k : Nat} {c : Pool T κ} {r : Ask T κ}
    (hc : ∀ e ∈ c, e.1 = r.tenant) : ∀ e ∈ lru k c r, e.1 = r.tenant := by
  intro e he
  unfold lru at he
  rcases List.mem_append.1 (List.mem_of_mem_take he) with h | h
  · obtain ⟨b, -, rfl⟩ := List.mem_map.1 h
    rfl
  · exact hc e (List.mem_filter.1 h).1

omit [DecidableEq κ] in
/-- Every entry of a tenant's part is that tenant's. -/
theorem tenant_of_mem_part {u : Fin T} {c : Pool T κ} : ∀ e ∈ part u c, e.1 = u :=
  fun _ he => (mem_part.1 he).2

omit [DecidableEq κ] in
/-- A pool of tenant `u`'s entries only is its own part. -/
theorem part_eq_self {u : Fin T} {c : Pool T κ} (hc : ∀ e ∈ c, e.1 = u) : part u c = c :=
  List.filter_eq_self.2 fun e he => decide_eq_true (hc e he)

omit [DecidableEq κ] in
/-- A pool none of whose entries is tenant `u`'s has an empty part for `u`. -/
theorem part_eq_nil {u : Fin T} {c : Pool T κ} (hc : ∀ e ∈ c, e.1 ≠ u) : part u c = [] :=
  List.filter_eq_nil_iff.2 fun e he h => hc e he (of_decide_eq_true h)

/-- Under the partitioned LRU cache the requester's part afterwards is its part before, served
as an LRU cache of capacity its quota. -/
theorem part_quotaLru_self (q : Fin T → Nat) (c : Pool T κ) (r : Ask T κ) :
    part r.tenant (quotaLru q c r) = lru (q r.tenant) (part r.tenant c) r := by
  unfold quotaLru
  rw [part_append, part_eq_self (tenant_of_mem_lru tenant_of_mem_part), List.append_right_eq_self,
    part_eq_nil]
  intro e he h
  rw [List.mem_filter] at he
  simp [h] at he

/-- Under the partitioned LRU cache another tenant's part is left as it was. -/
theorem part_quotaLru_other (q : Fin T → Nat) (c : Pool T κ) (r : Ask T κ) {u : Fin T}
    (hu : u ≠ r.tenant) : part u (quotaLru q c r) = part u c := by
  unfold quotaLru
  rw [part_append,
    part_eq_nil (fun e he h => hu (h.symm.trans (tenant_of_mem_lru tenant_of_mem_part e he))),
    List.nil_append]
  unfold part
  rw [List.filter_filter]
  apply List.filter_congr
  intro e _
  by_cases h : e.1 = u
  · simp [h, hu]
  · simp [h]

/-- **The partitioned LRU cache is a per-tenant design** with quota `q`. -/
theorem quotaLru_perTenant (q : Fin T → Nat) : PerTenant q (quotaLru (κ := κ) q) where
  others c r u hu := part_quotaLru_other q c r hu
  own c c' r h := by rw [part_quotaLru_self, part_quotaLru_self, h]
  quota c r := by
    rw [part_quotaLru_self]
    unfold lru
    exact List.length_take_le ..

/-! ## Own reuse under quotas: a private cache of the quota -/

/-- On a history of tenant `t`'s requests only, the partitioned LRU cache shows `t` what an LRU
cache of capacity `q t` holding only `t`'s entries shows it. -/
theorem views_quotaLru_private (q : Fin T → Nat) (t : Fin T) :
    ∀ (rs : List (Ask T κ)) (c c' : Pool T κ), (∀ r ∈ rs, r.tenant = t) →
      (∀ e ∈ c', e.1 = t) → part t c = c' →
      views (quotaLru q) t c rs = views (lru (q t)) t c' rs
  | [], _, _, _, _, _ => by simp [views]
  | r :: rs, c, c', hrs, hc', h => by
    have hr : r.tenant = t := hrs r (by simp)
    simp only [views, if_pos hr]
    have h1 : part r.tenant c = part r.tenant c' := by
      rw [hr, h, part_eq_self hc']
    have h2 := part_quotaLru_self q c r
    rw [hr, h] at h2
    have h3 : ∀ e ∈ lru (q t) c' r, e.1 = t := fun e he =>
      (tenant_of_mem_lru (k := q t) (fun e he => (hc' e he).trans hr.symm) e he).trans hr
    rw [seen_congr h1, views_quotaLru_private q t rs (quotaLru q c r) (lru (q t) c' r)
      (fun r' hr' => hrs r' (List.mem_cons_of_mem _ hr')) h3 h2]

/-- **Own reuse under quotas equals a private cache of the quota.** Under the partitioned LRU
cache with quota `q`, for every history `rs` starting empty, tenant `t` observes exactly what a
private LRU cache of capacity `q t` that saw only `t`'s requests would show it. -/
theorem quota_own_reuse (q : Fin T → Nat) (t : Fin T) (rs : List (Ask T κ)) :
    views (quotaLru q) t [] rs = views (lru (q t)) t [] (mine t rs) := by
  rw [views_eq_mine (quotaLru_perTenant q) t rs [] [] rfl]
  exact views_quotaLru_private q t (mine t rs) [] []
    (fun r hr => of_decide_eq_true (List.mem_filter.1 hr).2) (fun _ he => by simp at he) rfl

/-! ## Interference of the shared pool -/

/-- A one-block request hits iff its block is in the pool under its tenant's salt. -/
theorem seen_single (c : Pool T κ) (t : Fin T) (b : κ) :
    seen c ⟨t, [b]⟩ = if (t, b) ∈ c then 1 else 0 := by
  simp [seen, hitLen]

/-- With capacity at least one, a request's first block is in the shared pool afterwards. -/
theorem mem_lru_head {k : Nat} (hk : 1 ≤ k) (c : Pool T κ) (t : Fin T) (b : κ) (bs : List κ) :
    (t, b) ∈ lru k c ⟨t, b :: bs⟩ := by
  obtain ⟨j, rfl⟩ : ∃ j, k = j + 1 := ⟨k - 1, by omega⟩
  simp [lru, List.take_succ_cons]

/-- A request of `k` distinct blocks by tenant `u` fills the shared pool of capacity `k`: no
entry of another tenant survives it. -/
theorem not_mem_lru_flood (k : Nat) (c : Pool T Nat) {t u : Fin T} (hu : u ≠ t) (b : Nat) :
    (t, b) ∉ lru k c ⟨u, List.range k⟩ := by
  intro h
  have h1 : lru k c ⟨u, List.range k⟩ = (List.range k).map (fun a => (u, a)) := by
    unfold lru
    exact List.take_left' (by simp)
  rw [h1, List.mem_map] at h
  obtain ⟨a, -, ha⟩ := h
  exact hu (congrArg Prod.fst ha)

/-- **Interference of the shared pool.** For every capacity `k ≥ 1`, every number of tenants
`T ≥ 2` and every tenant `t`, the shared LRU pool of capacity `k` has two histories from the
empty pool with the same requests of `t` that give `t` different observations: `t` sends block
`0`, another tenant sends `k` blocks (in one history) or nothing (in the other), `t` sends block
`0` again and is served it from cache exactly when the other tenant sent nothing. -/
theorem lru_interference {k : Nat} (hk : 1 ≤ k) (hT : 2 ≤ T) (t : Fin T) :
    ∃ rs rs' : List (Ask T Nat), mine t rs = mine t rs' ∧
      views (lru k) t [] rs ≠ views (lru k) t [] rs' := by
  obtain ⟨u, hu⟩ : ∃ u : Fin T, u ≠ t := by
    refine ⟨⟨if t.val = 0 then 1 else 0, by have := t.isLt; split <;> omega⟩, fun h => ?_⟩
    have h' : (if t.val = 0 then 1 else 0) = t.val := congrArg Fin.val h
    split at h' <;> omega
  refine ⟨[⟨t, [0]⟩, ⟨t, [0]⟩], [⟨t, [0]⟩, ⟨u, List.range k⟩, ⟨t, [0]⟩], ?_, ?_⟩
  · simp [mine, hu]
  · have h1 : seen (lru k [] ⟨t, [0]⟩) ⟨t, [0]⟩ = 1 := by
      rw [seen_single, if_pos (mem_lru_head hk [] t 0 [])]
    have h2 : seen (lru k (lru k [] ⟨t, [0]⟩) ⟨u, List.range k⟩) ⟨t, [0]⟩ = 0 := by
      rw [seen_single, if_neg (not_mem_lru_flood k _ hu 0)]
    intro h
    simp [views, hu, h1, h2] at h

/-- A tenant's observations over two histories one after the other. -/
theorem views_append (P : Policy T κ) (t : Fin T) :
    ∀ (hs rest : List (Ask T κ)) (c : Pool T κ),
      views P t c (hs ++ rest) = views P t c hs ++ views P t (poolAfter P c hs) rest
  | [], rest, c => by simp [views, poolAfter]
  | r :: hs, rest, c => by
    by_cases h : r.tenant = t
    · simp only [List.cons_append, views, if_pos h, poolAfter, views_append P t hs rest (P c r)]
    · simp only [List.cons_append, views, if_neg h, poolAfter, views_append P t hs rest (P c r)]

/-- **Every design that lets another tenant evict interferes.** For every design `P`, if after
some history `hs` (from pool `c`) an entry (`t`, `b`) is present and a request `r` of another
tenant then evicts it, then the histories `hs ++ [⟨t, [b]⟩]` and `hs ++ [r, ⟨t, [b]⟩]` have the
same requests of `t` and give `t` different observations (its last probe hits in the first
only). -/
theorem interference_of_evicts (P : Policy T κ) (t : Fin T) (c : Pool T κ)
    (hs : List (Ask T κ)) (r : Ask T κ) (hr : r.tenant ≠ t) (b : κ)
    (hin : (t, b) ∈ poolAfter P c hs) (hout : (t, b) ∉ P (poolAfter P c hs) r) :
    mine t (hs ++ [⟨t, [b]⟩]) = mine t (hs ++ [r, ⟨t, [b]⟩]) ∧
      views P t c (hs ++ [⟨t, [b]⟩]) ≠ views P t c (hs ++ [r, ⟨t, [b]⟩]) := by
  constructor
  · simp [mine, List.filter_append, hr]
  · rw [views_append, views_append]
    intro h
    have h' := List.append_cancel_left h
    simp [views, hr, seen_single, hin, hout] at h'

/-- **The shared pool is not per-tenant.** For `k ≥ 1` and `T ≥ 2` the shared LRU pool of
capacity `k` is in no class `PerTenant q`, whatever the quota `q`. -/
theorem lru_not_perTenant {k : Nat} (hk : 1 ≤ k) (hT : 2 ≤ T) (q : Fin T → Nat) :
    ¬ PerTenant q (lru (T := T) (κ := Nat) k) := by
  intro hP
  obtain ⟨rs, rs', h, hne⟩ := lru_interference hk hT ⟨0, by omega⟩
  exact hne (perTenant_noninterference hP _ rfl h)

end KVCache.Leak

end
