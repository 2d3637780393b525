module

public import Proofs.Placement.Wall

/-!
# Placement below the wall: farthest-next-use on the committed instance

`Proofs.Placement.Wall` proves that every demand-fetch policy misses at least the wall (the
number of distinct blocks), at any capacity, and that a pooled cache reaches the wall when
nothing has to be evicted. The committed serving instance (`data/placement/instance.json`)
runs its pooled cache at 21 KV pages, fewer than the pages of its distinct blocks, so
eviction happens there. This file puts that case in the kernel.

## The model
Blocks are natural numbers with sizes in KV pages (`size : Nat → Nat`); a cache is counted in
pages (`pagesOf`). `farthest size cap` is the policy of the solver's replay
(`pytools/results/placement/solver.py`, `simulate_farthest`): serve the request (fetching the
block on a miss), then while the cache holds more than `cap` pages evict the cached block
whose next use lies farthest in the future (never used again counts as farthest; ties: the
larger block, then the smaller id). The requested block itself may be evicted, so a block
larger than the whole capacity is served without being kept.

## What is proved
* For every size function, capacity and trace: `farthest` is a demand-fetch policy
  (`farthest_demandFetch`) and every cache state of its run holds at most `cap` pages
  (`farthest_fitsInPages`).
* On the committed instance (generated block below; `pytools` regenerates it from
  `data/placement/instance.json` and compares it byte for byte): the capacity is below the
  pages of the distinct blocks (`instance_capacity_lt_distinct_pages`), the kernel runs the
  pooled farthest-next-use cache and counts `instanceFarthestMisses` misses
  (`instance_farthest_misses`), which is the wall (`instance_wall_eq`).
* `instance_farthest_optimal`: hence, on this instance, farthest-next-use at the instance's
  capacity is a demand-fetch policy that fits and misses exactly `instanceFarthestMisses`,
  and no demand-fetch policy (at any capacity, sizes or not) misses fewer. The CP-SAT
  optimum that the certificate records is the same number; the certificate checks the two
  agree.

What is not proved: that farthest-next-use is optimal with sizes in general (it is not); the
optimality above holds on this instance because its farthest-next-use run reaches the wall.
-/

@[expose] public section

namespace KVCache.Placement

/-! ## Farthest-next-use with sizes -/

/-- Total size in KV pages of the blocks of a cache. -/
def pagesOf (size : Nat → Nat) : List Nat → Nat
  | [] => 0
  | j :: c => size j + pagesOf size c

/-- The next use of block `j` in the future `f`: its first position, or `f.length` when `j`
is never requested again. -/
def nextUse (j : Nat) : List Nat → Nat
  | [] => 0
  | b :: f => if b = j then 0 else nextUse j f + 1

/-- Whether block `j` is evicted before block `i`: its next use is farther, or as far and
it is larger, or as far, as large and its id is smaller. -/
def evictsBefore (size : Nat → Nat) (f : List Nat) (j i : Nat) : Bool :=
  decide (nextUse i f < nextUse j f) ||
    (decide (nextUse i f = nextUse j f) &&
      (decide (size i < size j) || (decide (size i = size j) && decide (j < i))))

/-- The cached block to evict first (`none` for an empty cache). -/
def pick (size : Nat → Nat) (f : List Nat) : List Nat → Option Nat
  | [] => none
  | j :: c =>
    match pick size f c with
    | none => some j
    | some i => if evictsBefore size f j i then some j else some i

-- noncomputable: `List.erase` has no compiled code in the registry Lean (`List.eraseTR.go`).
/-- Evict blocks in `pick` order until the cache holds at most `cap` pages (`n` bounds the
number of evictions). -/
noncomputable def evictUntil (size : Nat → Nat) (cap : Nat) (f : List Nat) :
    Nat → List Nat → List Nat
  | 0, c => c
  | n + 1, c =>
    if pagesOf size c ≤ cap then c
    else
      match pick size f c with
      | none => c
      | some v => evictUntil size cap f n (c.erase v)

-- noncomputable: `∈` and `List.length` have no compiled code in the registry Lean.
/-- Farthest-next-use with sizes: serve the request (fetching the block on a miss), then
evict farthest-next-use blocks until at most `cap` pages remain. -/
noncomputable def farthest (size : Nat → Nat) (cap : Nat) : Policy Nat where
  step c b f := evictUntil size cap f (c.length + 2) (if b ∈ c then c else b :: c)

/-- Every state of the run of `P` on `r` from a cold cache holds at most `cap` pages. -/
def FitsInPages (size : Nat → Nat) (cap : Nat) (P : Policy Nat) (r : List Nat) : Prop :=
  ∀ s ∈ states P [] r, pagesOf size s ≤ cap

/-- The block `pick` chooses is cached. -/
theorem pick_mem (size : Nat → Nat) (f : List Nat) :
    ∀ (c : List Nat) (v : Nat), pick size f c = some v → v ∈ c
  | [], v, h => by simp [pick] at h
  | j :: c, v, h => by
    cases hp : pick size f c with
    | none =>
      simp only [pick, hp] at h
      cases h
      exact List.mem_cons_self
    | some i =>
      simp only [pick, hp] at h
      by_cases he : evictsBefore size f j i = true
      · rw [if_pos he] at h
        cases h
        exact List.mem_cons_self
      · rw [if_neg he] at h
        cases h
        exact List.mem_cons_of_mem _ (pick_mem size f c _ hp)

/-- `pick` chooses nothing only in an empty cache. -/
theorem pick_eq_none (size : Nat → Nat) (f : List Nat) :
    ∀ c : List Nat, pick size f c = none → c = []
  | [], _ => rfl
  | j :: c, h => by
    simp only [pick] at h
    split at h
    · simp at h
    · split at h <;> simp at h

/-- Eviction only removes blocks. -/
theorem mem_of_mem_evictUntil (size : Nat → Nat) (cap : Nat) (f : List Nat) :
    ∀ (n : Nat) (c : List Nat) (x : Nat), x ∈ evictUntil size cap f n c → x ∈ c
  | 0, _, _, h => h
  | n + 1, c, x, h => by
    simp only [evictUntil] at h
    split at h
    · exact h
    · split at h
      · exact h
      · exact List.mem_of_mem_erase (mem_of_mem_evictUntil size cap f n _ x h)

/-- With more eviction budget than cached blocks, eviction ends within the capacity. -/
theorem pagesOf_evictUntil_le (size : Nat → Nat) (cap : Nat) (f : List Nat) :
    ∀ (n : Nat) (c : List Nat), c.length < n → pagesOf size (evictUntil size cap f n c) ≤ cap
  | 0, _, h => absurd h (Nat.not_lt_zero _)
  | n + 1, c, h => by
    simp only [evictUntil]
    split
    · assumption
    · rename_i hgt
      split
      · rename_i hp
        have hc : c = [] := pick_eq_none size f c hp
        subst hc
        simp [pagesOf] at hgt
      · rename_i v hp
        apply pagesOf_evictUntil_le size cap f n
        have hv := pick_mem size f c v hp
        rw [List.length_erase_of_mem hv]
        have := List.length_pos_of_mem hv
        omega

/-- **Farthest-next-use is a demand-fetch policy**: after a step the cache holds only the
requested block and blocks it held before. -/
theorem farthest_demandFetch (size : Nat → Nat) (cap : Nat) :
    DemandFetch (farthest size cap) := by
  intro c b f x hx
  have hx' : x ∈ evictUntil size cap f (c.length + 2) (if b ∈ c then c else b :: c) := hx
  have h := mem_of_mem_evictUntil size cap f _ _ x hx'
  by_cases hb : b ∈ c
  · rw [if_pos hb] at h
    exact Or.inr h
  · rw [if_neg hb] at h
    exact List.mem_cons.mp h

/-- After every step of farthest-next-use the cache holds at most `cap` pages. -/
theorem farthest_step_pages_le (size : Nat → Nat) (cap : Nat) (c : List Nat) (b : Nat)
    (f : List Nat) : pagesOf size ((farthest size cap).step c b f) ≤ cap := by
  show pagesOf size (evictUntil size cap f (c.length + 2) (if b ∈ c then c else b :: c)) ≤ cap
  apply pagesOf_evictUntil_le
  split <;> simp

/-- A state of a run is its first cache or the result of one step of the policy. -/
theorem mem_states (P : Policy Nat) : ∀ (r c s : List Nat), s ∈ states P c r →
    s = c ∨ ∃ c' b f, s = P.step c' b f
  | [], c, s, h => by
    simp only [states, List.mem_cons, List.not_mem_nil, or_false] at h
    exact Or.inl h
  | b :: rest, c, s, h => by
    simp only [states, List.mem_cons] at h
    rcases h with h | h
    · exact Or.inl h
    · rcases mem_states P rest _ s h with h' | h'
      · exact Or.inr ⟨c, b, rest, h'⟩
      · exact Or.inr h'

/-- **Farthest-next-use fits**: every state of its run, from a cold cache, holds at most
`cap` pages. -/
theorem farthest_fitsInPages (size : Nat → Nat) (cap : Nat) (r : List Nat) :
    FitsInPages size cap (farthest size cap) r := by
  intro s hs
  rcases mem_states _ r [] s hs with h | ⟨c, b, f, h⟩
  · subst h
    simp [pagesOf]
  · subst h
    exact farthest_step_pages_le size cap c b f

/-! ## The committed instance -/

-- BEGIN GENERATED by pytools.results.placement.lean_instance from data/placement/instance.json

/-- Sizes in KV pages of the instance's blocks `0, 1, …`. -/
def instanceSizes : List Nat :=
  [2, 3, 4, 1, 2, 4, 3, 3, 2, 1, 1, 3, 1, 3, 4, 2]

/-- The instance's routed requests `(host, block)`, in arrival order. -/
def instanceTrace : List (Nat × Nat) :=
  [(3, 0), (2, 5), (3, 12), (2, 3), (2, 2), (1, 0), (2, 0), (2, 11), (2, 0), (3, 0), (1, 7), (1, 2),
    (3, 10), (1, 0), (3, 1), (2, 0), (2, 0), (0, 10), (2, 0), (1, 6), (1, 0), (2, 0), (0, 0),
    (0, 2), (1, 7), (1, 0), (0, 5), (0, 2), (0, 2), (2, 5), (2, 0), (3, 15), (3, 6), (2, 0), (3, 0),
    (3, 12), (0, 0), (2, 0), (3, 12), (1, 7), (0, 0), (0, 8), (3, 3), (3, 1), (0, 14), (0, 4),
    (1, 1), (3, 2)]

/-- The pooled cache's capacity in KV pages. -/
def instanceCapacity : Nat := 21

/-- Misses of the pooled farthest-next-use cache at that capacity, as replayed in Python;
the kernel recomputes them (`instance_farthest_misses`). -/
def instanceFarthestMisses : Nat := 14

-- END GENERATED

-- noncomputable: `List.getD` has no compiled code in the registry Lean.
/-- Size in KV pages of block `j` of the instance. -/
noncomputable def instanceSize (j : Nat) : Nat := instanceSizes.getD j 0

/-- The instance's pooled capacity is below the pages of its distinct blocks: a pooled
cache must evict (checked by the kernel). -/
theorem instance_capacity_lt_distinct_pages :
    instanceCapacity < pagesOf instanceSize (dedup (blocks instanceTrace)) := by
  decide +kernel

/-- The kernel runs the pooled farthest-next-use cache at the instance's capacity and counts
its misses. -/
theorem instance_farthest_misses :
    pooledMisses (farthest instanceSize instanceCapacity) instanceTrace =
      instanceFarthestMisses := by
  decide +kernel

/-- The instance's wall (its number of distinct blocks), counted by the kernel. -/
theorem instance_wall_eq : wall (blocks instanceTrace) = instanceFarthestMisses := by
  decide +kernel

/-- **Farthest-next-use is optimal on the committed instance, below the wall's capacity.**
At the instance's capacity (fewer pages than its distinct blocks need), farthest-next-use is
a demand-fetch policy, fits in the capacity at every step, and misses exactly
`instanceFarthestMisses` times; no demand-fetch policy misses fewer times, at any capacity.
So the kernel-computed farthest-next-use count is the optimum, the number the CP-SAT
certificate reports. (On this instance only: with sizes, farthest-next-use is not optimal in
general.) -/
theorem instance_farthest_optimal :
    DemandFetch (farthest instanceSize instanceCapacity) ∧
      FitsInPages instanceSize instanceCapacity (farthest instanceSize instanceCapacity)
        (blocks instanceTrace) ∧
      pooledMisses (farthest instanceSize instanceCapacity) instanceTrace =
        instanceFarthestMisses ∧
      ∀ P : Policy Nat, DemandFetch P → instanceFarthestMisses ≤ pooledMisses P instanceTrace :=
  ⟨farthest_demandFetch _ _, farthest_fitsInPages _ _ _, instance_farthest_misses,
    fun P hP => instance_wall_eq ▸ wall_le_pooledMisses P hP instanceTrace⟩

end KVCache.Placement

end
