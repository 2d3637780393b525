module

public import Proofs.Placement.Optimal

/-!
# Pooled LRU can miss more than per-host LRU: a scan flushes the shared cache

`Proofs.Placement.Simulation` proves that some pooled policy with the summed capacity misses no
more than per-host caches: an offline policy built from the hosts' runs. This file shows that
the pooled side of that statement cannot be read as "a pooled LRU cache": on a family of
routed traces, one pooled LRU cache with the summed capacity misses strictly more than two
per-host LRU caches.

## The family
`scanTrace n` has `n` rounds; round `i` sends block `0` to host `0`, then blocks `2i + 1` and
`2i + 2` (never requested again) to host `1`. Host `0` reuses one block; host `1` scans.

## What is proved
* `lruPolicy k` (most recent first; a hit moves the block to the front, a miss puts it at the
  front and keeps the first `k` blocks) is a demand-fetch policy (`lruPolicy_demandFetch`)
  whose runs from cold fit in `k` blocks (`lruPolicy_fitsIn`).
* `pooled_lru_scan_misses`: pooled LRU with 2 blocks misses `3 * n` times on `scanTrace n`
  (the scan evicts block `0` every round).
* `perInstance_lru_scan_misses`: LRU with 1 block on each of hosts `0` and `1` misses
  `2 * (n + 1) + 1` times on `scanTrace (n + 1)` (host `0` misses only its first request).
* `pooled_lru_scan_gt_perInstance` (headline): for every `n ≥ 2` rounds, at equal total
  memory (`2 = 1 + 1` blocks), pooled LRU misses `n - 1` more times than per-host LRU.

What is not proved: anything about other online policies, or about how often such traces
occur in practice.
-/

@[expose] public section

namespace KVCache.Placement

open KVCache.Common

variable {α : Type} [DecidableEq α]

-- noncomputable: `∈`, `List.erase` and `List.take` have no compiled code in the registry Lean.
/-- LRU with `k` blocks, most recently used first: a hit moves the block to the front, a miss
puts the block at the front and keeps the first `k` blocks. -/
noncomputable def lruPolicy (k : Nat) : Policy α :=
  ⟨fun c b _ => if b ∈ c then b :: c.erase b else (b :: c).take k⟩

/-- LRU is a demand-fetch policy. -/
theorem lruPolicy_demandFetch (k : Nat) : DemandFetch (lruPolicy k : Policy α) := by
  intro c b f x hx
  change x ∈ (if b ∈ c then b :: c.erase b else (b :: c).take k) at hx
  by_cases hb : b ∈ c
  · rw [if_pos hb, List.mem_cons] at hx
    exact hx.imp_right List.mem_of_mem_erase
  · rw [if_neg hb] at hx
    exact List.mem_cons.mp (List.mem_of_mem_take hx)

/-- Every state of an LRU run with `k` blocks, from a cache of at most `k` blocks, holds at
most `k` blocks. -/
theorem lruPolicy_states_length_le (k : Nat) : ∀ (r c : List α), c.length ≤ k →
    ∀ s ∈ states (lruPolicy k) c r, s.length ≤ k
  | [], c, hc, s, hs => by
    simp only [states, List.mem_cons, List.not_mem_nil, or_false] at hs
    rw [hs]
    exact hc
  | b :: rest, c, hc, s, hs => by
    simp only [states, List.mem_cons] at hs
    rcases hs with e | e
    · rw [e]
      exact hc
    · refine lruPolicy_states_length_le k rest _ ?_ s e
      change (if b ∈ c then b :: c.erase b else (b :: c).take k).length ≤ k
      by_cases hb : b ∈ c
      · rw [if_pos hb, List.length_cons, List.length_erase_of_mem hb]
        have : 0 < c.length := List.length_pos_of_mem hb
        omega
      · rw [if_neg hb, List.length_take]
        exact Nat.min_le_left _ _

/-- An LRU run with `k` blocks fits in `k` blocks on every stream. -/
theorem lruPolicy_fitsIn (k : Nat) (r : List α) : FitsIn k (lruPolicy k) r :=
  lruPolicy_states_length_le k r [] (Nat.zero_le _)

/-! ## The scan family -/

/-- `scanRounds i n`: `n` rounds starting at round `i`; round `i` is `(0, 0)`, `(1, 2i + 1)`,
`(1, 2i + 2)`. -/
def scanRounds : Nat → Nat → List (Nat × Nat)
  | _, 0 => []
  | i, n + 1 => (0, 0) :: (1, 2 * i + 1) :: (1, 2 * i + 2) :: scanRounds (i + 1) n

/-- The scan trace with `n` rounds: host `0` reuses block `0`, host `1` scans fresh blocks. -/
def scanTrace (n : Nat) : List (Nat × Nat) := scanRounds 0 n

/-- From round `i + 1` on, with the two scan blocks of round `i` cached, pooled LRU with 2
blocks misses every request. -/
theorem pooled_lru_scanRounds (n : Nat) : ∀ i : Nat,
    misses (lruPolicy 2) [2 * i + 2, 2 * i + 1] (blocks (scanRounds (i + 1) n)) = 3 * n := by
  induction n with
  | zero => intro i; simp [scanRounds, blocks, misses, missed]
  | succ n ih =>
    intro i
    have h0 : (0 : Nat) ∉ [2 * i + 2, 2 * i + 1] := by
      simp only [List.mem_cons, List.not_mem_nil, or_false]; omega
    have h1 : 2 * (i + 1) + 1 ∉ [0, 2 * i + 2] := by
      simp only [List.mem_cons, List.not_mem_nil, or_false]; omega
    have h2 : 2 * (i + 1) + 2 ∉ [2 * (i + 1) + 1, 0] := by
      simp only [List.mem_cons, List.not_mem_nil, or_false]; omega
    have s0 : ∀ f : List Nat, (lruPolicy 2).step [2 * i + 2, 2 * i + 1] 0 f = [0, 2 * i + 2] :=
      fun f => by simp [lruPolicy, h0]
    have s1 : ∀ f : List Nat, (lruPolicy 2).step [0, 2 * i + 2] (2 * (i + 1) + 1) f =
        [2 * (i + 1) + 1, 0] := fun f => by simp only [lruPolicy, if_neg h1]; rfl
    have s2 : ∀ f : List Nat,
        (lruPolicy 2).step [2 * (i + 1) + 1, 0] (2 * (i + 1) + 2) f =
          [2 * (i + 1) + 2, 2 * (i + 1) + 1] := fun f => by simp only [lruPolicy, if_neg h2]; rfl
    simp only [scanRounds, blocks]
    rw [misses_cons, if_neg h0, s0, misses_cons, if_neg h1, s1, misses_cons, if_neg h2, s2,
      ih (i + 1)]
    omega

/-- **Pooled LRU misses every request of the scan family.** One pooled LRU cache with 2
blocks misses `3 * n` times on the `n` rounds of `scanTrace n`. -/
theorem pooled_lru_scan_misses (n : Nat) :
    pooledMisses (lruPolicy 2) (scanTrace n) = 3 * n := by
  cases n with
  | zero => rfl
  | succ n =>
    have h1 : (1 : Nat) ∉ [0] := by simp
    have h2 : (2 : Nat) ∉ [1, 0] := by simp
    have s0 : ∀ f : List Nat, (lruPolicy 2).step [] 0 f = [0] := fun f => by simp [lruPolicy]
    have s1 : ∀ f : List Nat, (lruPolicy 2).step [0] 1 f = [1, 0] :=
      fun f => by simp only [lruPolicy, if_neg h1]; rfl
    have s2 : ∀ f : List Nat, (lruPolicy 2).step [1, 0] 2 f = [2, 1] :=
      fun f => by simp only [lruPolicy, if_neg h2]; rfl
    have e := pooled_lru_scanRounds n 0
    simp only [pooledMisses, scanTrace, scanRounds, blocks]
    rw [misses_cons, if_neg List.not_mem_nil, s0, misses_cons, if_neg h1, s1, misses_cons,
      if_neg h2, s2, e]
    omega

/-- Host `0`'s sub-stream of `n` rounds is block `0`, `n` times. -/
theorem onHost_zero_scanRounds : ∀ (n i : Nat),
    onHost 0 (scanRounds i n) = List.replicate n 0
  | 0, _ => rfl
  | n + 1, i => by
    simp [scanRounds, onHost, onHost_zero_scanRounds n (i + 1), List.replicate_succ]

/-- LRU with 1 block, holding block `0`, hits every request of a stream of `0`s. -/
theorem lru_one_replicate_zero : ∀ n : Nat, misses (lruPolicy 1) [0] (List.replicate n 0) = 0
  | 0 => rfl
  | n + 1 => by
    rw [List.replicate_succ, misses_cons]
    simp only [List.mem_cons, List.not_mem_nil, or_false, if_true]
    have : (lruPolicy 1).step [0] 0 (List.replicate n 0) = [0] := by
      simp [lruPolicy]
    rw [this, lru_one_replicate_zero n]

/-- From round `i` on, LRU with 1 block on host `1`, holding only blocks below `2i + 1`, misses
every request: `2 * n` misses in `n` rounds. -/
theorem lru_one_scan_host_one : ∀ (n i : Nat) (c : List Nat), (∀ x ∈ c, x < 2 * i + 1) →
    misses (lruPolicy 1) c (onHost 1 (scanRounds i n)) = 2 * n
  | 0, _, _, _ => rfl
  | n + 1, i, c, hc => by
    have h1 : 2 * i + 1 ∉ c := fun h => by have := hc _ h; omega
    have h2 : 2 * i + 2 ∉ [2 * i + 1] := by
      simp only [List.mem_cons, List.not_mem_nil, or_false]; omega
    have ih := lru_one_scan_host_one n (i + 1) [2 * i + 2] (by
      intro x hx
      simp only [List.mem_cons, List.not_mem_nil, or_false] at hx
      omega)
    simp only [scanRounds, onHost, show ¬ ((0 : Nat) = 1) by omega, if_false, if_true,
      misses_cons]
    have s1 : ∀ f : List Nat, (lruPolicy 1).step c (2 * i + 1) f = [2 * i + 1] :=
      fun f => by simp only [lruPolicy, if_neg h1]; rfl
    have s2 : ∀ f : List Nat, (lruPolicy 1).step [2 * i + 1] (2 * i + 2) f = [2 * i + 2] :=
      fun f => by simp only [lruPolicy, if_neg h2]; rfl
    rw [if_neg h1, s1, if_neg h2, s2, ih]
    omega

/-- **Per-host LRU on the scan family.** LRU with 1 block on each of hosts `0` and `1` misses
`2 * (n + 1) + 1` times on the `n + 1` rounds of `scanTrace (n + 1)`: host `0` misses once,
host `1` misses every request. -/
theorem perInstance_lru_scan_misses (n : Nat) :
    perInstanceMisses (fun _ => (lruPolicy 1 : Policy Nat)) [0, 1] (scanTrace (n + 1)) =
      2 * (n + 1) + 1 := by
  have h0 : misses (lruPolicy 1) [] (onHost 0 (scanTrace (n + 1))) = 1 := by
    rw [scanTrace, onHost_zero_scanRounds, List.replicate_succ, misses_cons]
    have : (lruPolicy 1).step [] 0 (List.replicate n 0) = [0] := by simp [lruPolicy]
    simp only [List.not_mem_nil, if_false]
    rw [this, lru_one_replicate_zero]
  have h1 : misses (lruPolicy 1) [] (onHost 1 (scanTrace (n + 1))) = 2 * (n + 1) :=
    lru_one_scan_host_one (n + 1) 0 [] (by simp)
  simp only [perInstanceMisses, sumOver]
  rw [h0, h1]
  omega

/-- **Pooled LRU misses more than per-host LRU on the scan family.** For every `n ≥ 2`, on
the routed trace `scanTrace n`: LRU with 1 block per host (hosts `0` and `1`) and one pooled
LRU cache with their 2 blocks are demand-fetch policies fitting their capacities, and the
pooled cache misses exactly `n - 1` more times than the per-host caches summed. -/
theorem pooled_lru_scan_gt_perInstance (n : Nat) (hn : 2 ≤ n) :
    DemandFetch (lruPolicy 1 : Policy Nat) ∧ DemandFetch (lruPolicy 2 : Policy Nat) ∧
      (∀ h, FitsIn 1 (lruPolicy 1 : Policy Nat) (onHost h (scanTrace n))) ∧
      FitsIn (sumOver (fun _ => 1) [0, 1]) (lruPolicy 2 : Policy Nat) (blocks (scanTrace n)) ∧
      perInstanceMisses (fun _ => (lruPolicy 1 : Policy Nat)) [0, 1] (scanTrace n) + (n - 1) =
        pooledMisses (lruPolicy 2) (scanTrace n) ∧
      perInstanceMisses (fun _ => (lruPolicy 1 : Policy Nat)) [0, 1] (scanTrace n) <
        pooledMisses (lruPolicy 2) (scanTrace n) := by
  obtain ⟨k, rfl⟩ : ∃ k, n = k + 1 := ⟨n - 1, by omega⟩
  have hp := pooled_lru_scan_misses (k + 1)
  have hi := perInstance_lru_scan_misses k
  refine ⟨lruPolicy_demandFetch 1, lruPolicy_demandFetch 2, fun h => lruPolicy_fitsIn 1 _,
    lruPolicy_fitsIn 2 _, ?_, ?_⟩
  · rw [hp, hi]; omega
  · rw [hp, hi]; omega

end KVCache.Placement

end
