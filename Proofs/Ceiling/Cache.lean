module

/-!
# No cache beats the traffic: the demand-fetch hit ceiling

We model a cache of block ids (any type `α` with decidable equality) with capacity `k`,
driven by an arbitrary replacement policy, over a request stream `r : List α`.

* **Demand fetch.** A request for a block that is in the cache is a *hit* and leaves the
  cache unchanged. A request for a block that is not in the cache is a *miss*; the block is
  then brought in, and only then (`step`). If the cache already holds `k` or more blocks, the
  policy first evicts one of them. A cache of capacity `0` stores nothing: a miss leaves it
  unchanged, so it never hits (`hits_zero`).
* **Any policy.** A `Policy` chooses the position of the victim from the whole stream `r`,
  the step index `i`, the current cache contents and the incoming block. It may therefore
  look into the future, so offline policies such as Belady's farthest-next-use rule
  (`belady`) are included, as well as online ones (`lru`, `fifo`). Any policy state
  (recency, insertion order) can be recomputed from the stream and the step index.

What is proved:

* `hits_add_distinct_le_length`: for every policy, every capacity and every stream,
  `hits + distinct r ≤ r.length`: the first request of each distinct block is a miss.
  Hence `hits_le_length_sub_distinct` (the hit-rate ceiling `(|r| − distinct r) / |r|`)
  and its cross-multiplied form `hits_mul_le_of_ceiling_le`.
* The ceiling is reached: with capacity `k ≥ distinct r` every policy never evicts
  (`evictions_eq_zero_of_distinct_le`) and scores exactly `hits = |r| − distinct r`
  (`hits_eq_length_sub_distinct_of_distinct_le`), so such a cache, under any policy, scores
  at least as many hits as any policy at any capacity (`hits_le_hits_of_distinct_le`: every
  policy ties there, which is not Belady's optimality); Belady's policy reaches the ceiling
  there (`belady_hits_eq_of_distinct_le`), and so does every policy with unbounded capacity
  (`hits_eq_unbounded`, capacity `|r|`).
* `length_step_le`: one step never leaves more than `k` blocks in a cache that held at most
  `k`; `hits_zero`: at capacity `0` every policy scores `0` hits.
* Warm caches: `hits` starts from an empty cache. From initial contents `C`,
  `warmHits_add_distinct_sdiff_le_length`: `warmHits + |distinct(r) \ C| ≤ |r|`, where the
  distinct blocks of `r` outside `C` are counted as `distinct (r.filter (· ∉ C))`; the bound
  is reached with enough capacity (`warmHits_add_distinct_sdiff_eq_of_le`).
* After a warm-up: in the run over `pre ++ w` from an empty cache, the hits on `w`
  (`hitsAfter`, `hits_append`) plus the distinct blocks of `w` absent from `pre` are at most
  `|w|` (`hitsAfter_add_distinct_sdiff_le_length`).

Belady's optimality at every capacity and LRU's stack property are proved in
`Proofs.Ceiling.Policies`, for this no-bypass model: a missed block is always stored. Policies
that may decline to store a missed block (bypass) are modelled in `Proofs.Ceiling.Bypass`,
where Belady with bypass is optimal at every capacity and scores at least Belady.
-/

@[expose] public section

namespace KVCache.Ceiling

universe u

variable {α : Type u} [DecidableEq α]

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- `distinctFrom seen l`: the number of positions of `l` holding a block that occurs
neither in `seen` nor earlier in `l` (first occurrences, counted left to right). -/
noncomputable def distinctFrom : List α → List α → Nat
  | _, [] => 0
  | seen, x :: xs => if x ∈ seen then distinctFrom seen xs else distinctFrom (x :: seen) xs + 1

-- noncomputable: calls `distinctFrom`.
/-- The number of distinct blocks of a stream (the number of first occurrences). It reduces
in the kernel, so `decide` can evaluate it on a concrete list. -/
noncomputable def distinct (l : List α) : Nat := distinctFrom [] l

/-- A replacement policy. `victim r i c x` is the position (taken modulo `c.length`) of the
block to evict from the cache contents `c` when block `x`, requested at step `i` of the
stream `r`, misses in a full cache. It sees the whole stream, so it may be offline.

It chooses the victim only: the step itself is fixed (`step`: a missed block is always stored,
and a block is evicted only from a full cache). The library's other policy notions differ in
meaning, so they stay apart: a `BypassPolicy` (`Proofs.Ceiling.Bypass`) may also decline to
store the missed block; a `KVCache.Placement.Policy` (`Proofs.Placement.Wall`) is any map
from cache, request and future to the next cache, with demand fetch and capacity as separate
hypotheses (`DemandFetch`, `FitsIn`); a `KVCache.Leak.Policy` (`Proofs.Leak.Eviction`) maps
a pool of (tenant, block) entries and one tenant's whole prompt to the next pool. -/
structure Policy (α : Type u) where
  /-- Position of the block to evict (taken modulo the cache size). -/
  victim : List α → Nat → List α → α → Nat

-- noncomputable: `∈` and `List.eraseIdx` have no compiled code in the registry Lean.
/-- One demand-fetch step of a cache of capacity `k` on request `x` at step `i` of `r`:
a hit keeps the cache; a miss inserts `x`, after evicting the policy's victim if the cache
already holds `k` or more blocks, except at capacity `0`, where a miss stores nothing and
leaves the cache unchanged. Nothing enters the cache except a requested, missed block. -/
noncomputable def step (k : Nat) (P : Policy α) (r : List α) (i : Nat) (c : List α) (x : α) :
    List α :=
  if x ∈ c then c
  else if c.length < k then x :: c
  else if k = 0 then c
  else x :: c.eraseIdx (P.victim r i c x % c.length)

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- Hits of the run over the remaining requests `xs`, starting at step `i` with cache `c`. -/
noncomputable def hitsFrom (k : Nat) (P : Policy α) (r : List α) :
    Nat → List α → List α → Nat
  | _, _, [] => 0
  | i, c, x :: xs => (if x ∈ c then 1 else 0) + hitsFrom k P r (i + 1) (step k P r i c x) xs

-- noncomputable: calls `hitsFrom`.
/-- Number of hits of policy `P` with capacity `k` on the stream `r`, from an empty cache. -/
noncomputable def hits (k : Nat) (P : Policy α) (r : List α) : Nat := hitsFrom k P r 0 [] r

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- Evictions of the run over the remaining requests `xs`, from step `i` with cache `c`
(a miss in a full cache of capacity `k ≥ 1`; at capacity `0` nothing is stored, so nothing is
evicted). -/
noncomputable def evictionsFrom (k : Nat) (P : Policy α) (r : List α) :
    Nat → List α → List α → Nat
  | _, _, [] => 0
  | i, c, x :: xs =>
    (if x ∉ c ∧ k ≤ c.length ∧ k ≠ 0 then 1 else 0) +
      evictionsFrom k P r (i + 1) (step k P r i c x) xs

-- noncomputable: calls `evictionsFrom`.
/-- Number of evictions of policy `P` with capacity `k` on the stream `r`. -/
noncomputable def evictions (k : Nat) (P : Policy α) (r : List α) : Nat :=
  evictionsFrom k P r 0 [] r

/-- Position of the first occurrence of `y` in `l`, or `l.length` when `y` does not occur. -/
def firstPos (y : α) : List α → Nat
  | [] => 0
  | z :: zs => if z = y then 0 else firstPos y zs + 1

/-- `(position, score)` of the first element of `c` with the largest score `f`. -/
def argmaxBy (f : α → Nat) : List α → Nat × Nat
  | [] => (0, 0)
  | y :: ys =>
    match argmaxBy f ys with
    | (j, s) => if s ≤ f y then (0, f y) else (j + 1, s)

-- noncomputable: `List.drop` has no compiled code in the registry Lean.
/-- Belady's offline policy: evict the cached block whose next request lies farthest in
the future (a block never requested again counts as farthest). -/
noncomputable def belady : Policy α where
  victim r i c _ := (argmaxBy (fun y => firstPos y (r.drop (i + 1))) c).1

-- noncomputable: `List.take` has no compiled code in the registry Lean.
/-- Least recently used: evict the cached block whose last request lies farthest back. -/
noncomputable def lru : Policy α where
  victim r i c _ := (argmaxBy (fun y => firstPos y (r.take i).reverse) c).1

-- noncomputable: `List.length` has no compiled code in the registry Lean.
/-- First in, first out: the cache lists blocks newest first, so evict the last one. -/
noncomputable def fifo : Policy α where
  victim _ _ c _ := c.length - 1

/-- A block in the cache after a step was either the requested block or already cached. -/
theorem mem_step {k : Nat} {P : Policy α} {r : List α} {i : Nat} {c : List α} {x y : α}
    (h : y ∈ step k P r i c x) : y = x ∨ y ∈ c := by
  unfold step at h
  by_cases hx : x ∈ c
  · simp only [hx, if_true] at h
    exact Or.inr h
  · by_cases hk : c.length < k
    · simp only [hx, hk, if_true, if_false] at h
      exact List.mem_cons.mp h
    · by_cases hk0 : k = 0
      · subst hk0
        simp [hx] at h
        exact Or.inr h
      · simp only [hx, hk, hk0, if_false] at h
        rcases List.mem_cons.mp h with h | h
        · exact Or.inl h
        · exact Or.inr (List.mem_of_mem_eraseIdx h)

/-- At every capacity `k`, a step never leaves more than `k` blocks in a cache that held at
most `k`: demand fetch with eviction respects the capacity (at `0` nothing is stored). -/
theorem length_step_le (k : Nat) (P : Policy α) (r : List α) (i : Nat) (c : List α) (x : α)
    (hc : c.length ≤ k) : (step k P r i c x).length ≤ k := by
  unfold step
  by_cases hx : x ∈ c
  · simp only [hx, if_true]
    exact hc
  · by_cases hk : c.length < k
    · simp only [hx, hk, if_true, if_false, List.length_cons]
      omega
    · by_cases hk0 : k = 0
      · subst hk0
        simpa [hx] using hc
      simp only [hx, hk, hk0, if_false]
      cases c with
      | nil => simp only [List.eraseIdx_nil, List.length_cons, List.length_nil]; omega
      | cons y ys =>
        have hlt : P.victim r i (y :: ys) x % (y :: ys).length < (y :: ys).length :=
          Nat.mod_lt _ (by simp)
        rw [List.length_cons, List.length_eraseIdx_of_lt hlt]
        simp only [List.length_cons] at hc ⊢
        omega

/-- A step at capacity `0` leaves the cache unchanged: a hit keeps it, a miss stores
nothing. -/
theorem step_zero (P : Policy α) (r : List α) (i : Nat) (c : List α) (x : α) :
    step 0 P r i c x = c := by
  unfold step
  by_cases hx : x ∈ c
  · simp [hx]
  · simp [hx]

/-- A run at capacity `0` from an empty cache scores no hit: the cache stays empty. -/
theorem hitsFrom_zero (P : Policy α) (r : List α) : ∀ (xs : List α) (i : Nat),
    hitsFrom 0 P r i [] xs = 0
  | [], _ => by simp [hitsFrom]
  | x :: xs, i => by
    simp only [hitsFrom, step_zero, hitsFrom_zero P r xs (i + 1)]
    simp

/-- **Capacity `0` stores nothing.** For every policy and every request stream, a cache of
capacity `0` (from an empty cache) scores `0` hits: a missed block is never stored, so no
request hits. -/
theorem hits_zero (P : Policy α) (r : List α) : hits 0 P r = 0 :=
  hitsFrom_zero P r r 0

/-- The core counting lemma: if every cached block has been seen, then the hits on the
remaining requests plus the first occurrences among them (relative to `seen`) are at most
the number of remaining requests. -/
theorem hitsFrom_add_distinctFrom_le (k : Nat) (P : Policy α) (r : List α) :
    ∀ (xs : List α) (i : Nat) (c seen : List α), (∀ y, y ∈ c → y ∈ seen) →
      hitsFrom k P r i c xs + distinctFrom seen xs ≤ xs.length
  | [], _, _, _, _ => by simp [hitsFrom, distinctFrom]
  | x :: xs, i, c, seen, hsub => by
    by_cases hxs : x ∈ seen
    · have ih := hitsFrom_add_distinctFrom_le k P r xs (i + 1) (step k P r i c x) seen
        (fun y hy => by
          rcases mem_step hy with h | h
          · subst h; exact hxs
          · exact hsub y h)
      have hd : distinctFrom seen (x :: xs) = distinctFrom seen xs := by
        simp [distinctFrom, hxs]
      have hh : hitsFrom k P r i c (x :: xs)
          = (if x ∈ c then 1 else 0) + hitsFrom k P r (i + 1) (step k P r i c x) xs := by
        simp [hitsFrom]
      rw [hd, hh, List.length_cons]
      split <;> omega
    · have hxc : x ∉ c := fun h => hxs (hsub x h)
      have ih := hitsFrom_add_distinctFrom_le k P r xs (i + 1) (step k P r i c x) (x :: seen)
        (fun y hy => by
          rcases mem_step hy with h | h
          · subst h; exact List.mem_cons_self
          · exact List.mem_cons_of_mem _ (hsub y h))
      have hd : distinctFrom seen (x :: xs) = distinctFrom (x :: seen) xs + 1 := by
        simp [distinctFrom, hxs]
      have hh : hitsFrom k P r i c (x :: xs) = hitsFrom k P r (i + 1) (step k P r i c x) xs := by
        simp [hitsFrom, hxc]
      rw [hd, hh, List.length_cons]
      omega

/-- **The demand-fetch hit ceiling.** For every replacement policy (online or offline),
every capacity and every request stream, hits plus distinct blocks is at most the stream
length: the first request for each distinct block is necessarily a miss. -/
theorem hits_add_distinct_le_length (k : Nat) (P : Policy α) (r : List α) :
    hits k P r + distinct r ≤ r.length :=
  hitsFrom_add_distinctFrom_le k P r r 0 [] [] (fun _ h => h)

/-- The hit-count ceiling: every policy at every capacity has at most
`r.length - distinct r` hits on the stream `r`. -/
theorem hits_le_length_sub_distinct (k : Nat) (P : Policy α) (r : List α) :
    hits k P r ≤ r.length - distinct r := by
  have := hits_add_distinct_le_length k P r
  omega

/-- A stream has at most as many distinct blocks as requests. -/
theorem distinct_le_length (r : List α) : distinct r ≤ r.length := by
  have := hits_add_distinct_le_length 0 (fifo : Policy α) r
  omega

/-- The hit-rate ceiling as a fraction: if `num / den` is at least the ceiling
`(r.length - distinct r) / r.length` (cross-multiplied), then every policy's hit rate
`hits / r.length` is at most `num / den`. -/
theorem hits_mul_le_of_ceiling_le (k : Nat) (P : Policy α) (r : List α) (num den : Nat)
    (h : (r.length - distinct r) * den ≤ num * r.length) :
    hits k P r * den ≤ num * r.length :=
  Nat.le_trans (Nat.mul_le_mul_right den (hits_le_length_sub_distinct k P r)) h

/-- When the cache equals the list of blocks seen so far and the capacity covers them plus
all new blocks to come, the run hits exactly on every request that is not a first
occurrence. -/
theorem hitsFrom_exact (k : Nat) (P : Policy α) (r : List α) :
    ∀ (xs : List α) (i : Nat) (seen : List α), seen.length + distinctFrom seen xs ≤ k →
      hitsFrom k P r i seen xs + distinctFrom seen xs = xs.length
  | [], _, _, _ => by simp [hitsFrom, distinctFrom]
  | x :: xs, i, seen, hk => by
    by_cases hxs : x ∈ seen
    · have hd : distinctFrom seen (x :: xs) = distinctFrom seen xs := by
        simp [distinctFrom, hxs]
      have hstep : step k P r i seen x = seen := by simp [step, hxs]
      have hh : hitsFrom k P r i seen (x :: xs) = 1 + hitsFrom k P r (i + 1) seen xs := by
        simp [hitsFrom, hxs, hstep]
      have ih := hitsFrom_exact k P r xs (i + 1) seen (by omega)
      rw [hd, hh, List.length_cons]
      omega
    · have hd : distinctFrom seen (x :: xs) = distinctFrom (x :: seen) xs + 1 := by
        simp [distinctFrom, hxs]
      have hlt : seen.length < k := by omega
      have hstep : step k P r i seen x = x :: seen := by simp [step, hxs, hlt]
      have hh : hitsFrom k P r i seen (x :: xs) = hitsFrom k P r (i + 1) (x :: seen) xs := by
        simp [hitsFrom, hxs, hstep]
      have ih := hitsFrom_exact k P r xs (i + 1) (x :: seen)
        (by simp only [List.length_cons]; omega)
      rw [hd, hh, List.length_cons]
      omega

/-- Under the same hypothesis as `hitsFrom_exact`, the run never evicts. -/
theorem evictionsFrom_eq_zero (k : Nat) (P : Policy α) (r : List α) :
    ∀ (xs : List α) (i : Nat) (seen : List α), seen.length + distinctFrom seen xs ≤ k →
      evictionsFrom k P r i seen xs = 0
  | [], _, _, _ => by simp [evictionsFrom]
  | x :: xs, i, seen, hk => by
    by_cases hxs : x ∈ seen
    · have hd : distinctFrom seen (x :: xs) = distinctFrom seen xs := by
        simp [distinctFrom, hxs]
      have hstep : step k P r i seen x = seen := by simp [step, hxs]
      have ih := evictionsFrom_eq_zero k P r xs (i + 1) seen (by omega)
      simp [evictionsFrom, hxs, hstep, ih]
    · have hd : distinctFrom seen (x :: xs) = distinctFrom (x :: seen) xs + 1 := by
        simp [distinctFrom, hxs]
      have hlt : seen.length < k := by omega
      have hstep : step k P r i seen x = x :: seen := by simp [step, hxs, hlt]
      have ih := evictionsFrom_eq_zero k P r xs (i + 1) (x :: seen)
        (by simp only [List.length_cons]; omega)
      have hnk : ¬ k ≤ seen.length := by omega
      simp [evictionsFrom, hxs, hstep, ih, hnk]

/-- **The ceiling is reached.** With capacity at least the number of distinct blocks,
every demand-fetch policy scores exactly `hits + distinct r = r.length`. -/
theorem hits_add_distinct_eq_of_distinct_le (k : Nat) (P : Policy α) (r : List α)
    (hk : distinct r ≤ k) : hits k P r + distinct r = r.length :=
  hitsFrom_exact k P r r 0 [] (by simpa [distinct] using hk)

/-- With capacity at least the number of distinct blocks, every policy's hits equal the
ceiling `r.length - distinct r` exactly. -/
theorem hits_eq_length_sub_distinct_of_distinct_le (k : Nat) (P : Policy α) (r : List α)
    (hk : distinct r ≤ k) : hits k P r = r.length - distinct r := by
  have := hits_add_distinct_eq_of_distinct_le k P r hk
  omega

/-- With capacity at least the number of distinct blocks, no policy ever needs to evict. -/
theorem evictions_eq_zero_of_distinct_le (k : Nat) (P : Policy α) (r : List α)
    (hk : distinct r ≤ k) : evictions k P r = 0 :=
  evictionsFrom_eq_zero k P r r 0 [] (by simpa [distinct] using hk)

/-- A cache of capacity at least `distinct r`, under any policy `P`, has at least as many
hits as any policy `Q` at any capacity `k'` (every policy reaches the ceiling there; for
Belady's optimality at every capacity see `hits_le_belady_hits`). -/
theorem hits_le_hits_of_distinct_le (k k' : Nat) (P Q : Policy α) (r : List α)
    (hk : distinct r ≤ k) : hits k' Q r ≤ hits k P r := by
  rw [hits_eq_length_sub_distinct_of_distinct_le k P r hk]
  exact hits_le_length_sub_distinct k' Q r

/-- Belady's offline policy reaches the ceiling once the capacity covers the distinct
blocks. -/
theorem belady_hits_eq_of_distinct_le (k : Nat) (r : List α) (hk : distinct r ≤ k) :
    hits k belady r = r.length - distinct r :=
  hits_eq_length_sub_distinct_of_distinct_le k belady r hk

/-- Unbounded capacity (capacity `r.length`, which no run can exceed): every policy reaches
the ceiling exactly. -/
theorem hits_eq_unbounded (P : Policy α) (r : List α) :
    hits r.length P r = r.length - distinct r :=
  hits_eq_length_sub_distinct_of_distinct_le r.length P r (distinct_le_length r)

/-! ## Warm caches -/

-- noncomputable: calls `hitsFrom`.
/-- Hits of policy `P` with capacity `k` on the stream `r`, starting from the cache contents
`C` (a warm cache). From an empty cache these are `hits` (`hits_eq_warmHits_nil`). -/
noncomputable def warmHits (k : Nat) (P : Policy α) (C r : List α) : Nat := hitsFrom k P r 0 C r

/-- `hits` is the warm-cache count from an empty cache. -/
theorem hits_eq_warmHits_nil (k : Nat) (P : Policy α) (r : List α) :
    hits k P r = warmHits k P [] r := rfl

/-- First occurrences relative to `T ++ C` are first occurrences, relative to `T`, in the
stream with the blocks of `C` removed. -/
theorem distinctFrom_append_eq_filter (C : List α) : ∀ (l T : List α),
    distinctFrom (T ++ C) l = distinctFrom T (l.filter (· ∉ C))
  | [], T => by simp [distinctFrom]
  | x :: l, T => by
    by_cases hC : x ∈ C
    · rw [List.filter_cons_of_neg (by simpa using hC)]
      have h1 : x ∈ T ++ C := List.mem_append.mpr (Or.inr hC)
      simp only [distinctFrom, if_pos h1]
      exact distinctFrom_append_eq_filter C l T
    · rw [List.filter_cons_of_pos (by simpa using hC)]
      by_cases hT : x ∈ T
      · have h1 : x ∈ T ++ C := List.mem_append.mpr (Or.inl hT)
        simp only [distinctFrom, if_pos h1, if_pos hT]
        exact distinctFrom_append_eq_filter C l T
      · have h1 : x ∉ T ++ C := fun h => (List.mem_append.mp h).elim hT hC
        simp only [distinctFrom, if_neg h1, if_neg hT]
        have ih := distinctFrom_append_eq_filter C l (x :: T)
        simp only [List.cons_append] at ih
        rw [ih]

/-- `distinctFrom C r` is the number of distinct blocks of `r` that are not in `C`, i.e. the
size of `distinct(r) \ C`. -/
theorem distinctFrom_eq_distinct_filter (C r : List α) :
    distinctFrom C r = distinct (r.filter (· ∉ C)) := by
  have := distinctFrom_append_eq_filter C r []
  simpa [distinct] using this

/-- **The warm-start ceiling.** From initial cache contents `C`, for every policy, every
capacity and every stream `r`: hits plus the number of distinct blocks of `r` that are not in
`C` is at most `r.length` (the first request of each block outside `C` misses). -/
theorem warmHits_add_distinct_sdiff_le_length (k : Nat) (P : Policy α) (C r : List α) :
    warmHits k P C r + distinct (r.filter (· ∉ C)) ≤ r.length := by
  rw [← distinctFrom_eq_distinct_filter]
  exact hitsFrom_add_distinctFrom_le k P r r 0 C C (fun _ h => h)

/-- The warm-start ceiling is reached when the capacity holds `C` and every new block:
then every policy scores exactly `r.length - distinct (r.filter (· ∉ C))` hits. -/
theorem warmHits_add_distinct_sdiff_eq_of_le (k : Nat) (P : Policy α) (C r : List α)
    (hk : C.length + distinct (r.filter (· ∉ C)) ≤ k) :
    warmHits k P C r + distinct (r.filter (· ∉ C)) = r.length := by
  rw [← distinctFrom_eq_distinct_filter] at hk ⊢
  exact hitsFrom_exact k P r r 0 C hk

/-! ## The window after a warm-up -/

-- noncomputable: calls `step`.
/-- The cache contents after the run over the requests `xs`, from step `i` with cache `c`. -/
noncomputable def runFrom (k : Nat) (P : Policy α) (r : List α) :
    Nat → List α → List α → List α
  | _, c, [] => c
  | i, c, x :: xs => runFrom k P r (i + 1) (step k P r i c x) xs

-- noncomputable: calls `hitsFrom` and `runFrom`.
/-- `hitsAfter k P pre w`: the hits of policy `P` at capacity `k` on the requests of `w` in
its run over the stream `pre ++ w` from an empty cache, i.e. after it has served `pre` first
(whatever that run left in the cache; the policy sees the whole stream `pre ++ w`). -/
noncomputable def hitsAfter (k : Nat) (P : Policy α) (pre w : List α) : Nat :=
  hitsFrom k P (pre ++ w) pre.length (runFrom k P (pre ++ w) 0 [] pre) w

/-- A run over `xs ++ ys` scores its hits on `xs`, then on `ys` from the cache `xs` left. -/
theorem hitsFrom_append (k : Nat) (P : Policy α) (r : List α) :
    ∀ (xs ys : List α) (i : Nat) (c : List α),
      hitsFrom k P r i c (xs ++ ys) =
        hitsFrom k P r i c xs + hitsFrom k P r (i + xs.length) (runFrom k P r i c xs) ys
  | [], ys, i, c => by simp [hitsFrom, runFrom]
  | x :: xs, ys, i, c => by
    have ih := hitsFrom_append k P r xs ys (i + 1) (step k P r i c x)
    have e : i + 1 + xs.length = i + (xs.length + 1) := by omega
    simp only [List.cons_append, hitsFrom, runFrom, ih, List.length_cons, e]
    omega

/-- A block in the cache after a run was in the cache before it or requested during it. -/
theorem mem_runFrom (k : Nat) (P : Policy α) (r : List α) :
    ∀ (xs : List α) (i : Nat) (c : List α) (y : α), y ∈ runFrom k P r i c xs → y ∈ c ∨ y ∈ xs
  | [], _, _, _, h => Or.inl (by simpa [runFrom] using h)
  | x :: xs, i, c, y, h => by
    rcases mem_runFrom k P r xs (i + 1) (step k P r i c x) y h with h' | h'
    · rcases mem_step h' with e | e
      · rw [e]
        exact Or.inr List.mem_cons_self
      · exact Or.inl e
    · exact Or.inr (List.mem_cons_of_mem x h')

/-- The hits of a run over `pre ++ w` from an empty cache are its hits on `pre` plus its hits
on `w` (`hitsAfter`). -/
theorem hits_append (k : Nat) (P : Policy α) (pre w : List α) :
    hits k P (pre ++ w) = hitsFrom k P (pre ++ w) 0 [] pre + hitsAfter k P pre w := by
  unfold hits hitsAfter
  rw [hitsFrom_append k P (pre ++ w) pre w 0 [], Nat.zero_add]

/-- **The window after a warm-up.** For every policy (online or offline), every capacity and
all streams `pre` and `w`: in the run over `pre ++ w` from an empty cache, the hits on the
requests of `w` plus the number of distinct blocks of `w` that never occur in `pre` are at most
`w.length`. Whatever serving `pre` left in the cache, the first request in `w` of each block
new to `pre` misses. -/
theorem hitsAfter_add_distinct_sdiff_le_length (k : Nat) (P : Policy α) (pre w : List α) :
    hitsAfter k P pre w + distinct (w.filter (· ∉ pre)) ≤ w.length := by
  rw [← distinctFrom_eq_distinct_filter]
  exact hitsFrom_add_distinctFrom_le k P (pre ++ w) w pre.length _ pre
    (fun y hy => (mem_runFrom k P (pre ++ w) pre 0 [] y hy).resolve_left (by simp))

/-- A stream on which LRU and FIFO are far from the ceiling and Belady reaches it:
two hot blocks reused around scans of one-shot blocks, capacity 3. -/
def scanStream : List Nat := [1, 2, 10, 11, 1, 2, 12, 13, 1, 2]

/-- On `scanStream` at capacity 3: the ceiling is 4 hits, Belady gets 4, LRU and FIFO 0
(checked by the kernel). -/
theorem scanStream_hits :
    distinct scanStream = 6 ∧ scanStream.length = 10 ∧ hits 3 belady scanStream = 4 ∧
      hits 3 lru scanStream = 0 ∧ hits 3 fifo scanStream = 0 := by
  decide +kernel

end KVCache.Ceiling

end
