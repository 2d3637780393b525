module

public import Proofs.Placement.Wall
public import Proofs.Ceiling.Bypass

/-!
# One class for both results: Belady with bypass is the demand-fetch optimum at every capacity

The placement results (`Proofs.Placement.Wall`) quantify over every `DemandFetch` policy: after
a request the cache holds only blocks it held and the requested one, so it may evict at any
time, several blocks at once, and may decline to store a missed block (bypass). The ceiling's
optimality results quantify over `KVCache.Ceiling.BypassPolicy` (`Proofs.Ceiling.Bypass`),
which may bypass only on a miss in a full cache and otherwise evicts one block at a time.
This file relates the two classes at every capacity `k`, counting blocks:

* `length_le_misses_add_bopt`: every demand-fetch run whose states hold at most `k` blocks
  scores at most the optimum with bypass `KVCache.Ceiling.bopt`: a cache that keeps fewer
  blocks, or drops blocks early, never does better than one that keeps a superset.
* `beladyBypassPolicy k`: Belady with bypass as a placement policy (it sees the remaining
  future, which is all Belady's rule reads); it is demand-fetch
  (`beladyBypassPolicy_demandFetch`), fits in `k` blocks (`beladyBypassPolicy_fitsIn`) and
  misses exactly `r.length - bhits k beladyBypass r` times (`beladyBypassPolicy_misses`).
* `beladyBypass_demandFetch_optimal`: hence the headline: for every capacity `k` and every
  stream, Belady with bypass is a demand-fetch policy fitting in `k` blocks, and every
  demand-fetch policy fitting in `k` blocks misses at least as often. The no-bypass optimum
  is related by `KVCache.Ceiling.belady_hits_le_beladyBypass_bhits` (at most, strictly on
  `[1, 2, 1]` at capacity `1`).

Limits: blocks are counted, not sized (`Proofs.Placement.Farthest` handles page sizes on one
instance); one cache from a cold start; misses only (no latency or bandwidth).
-/

@[expose] public section

namespace KVCache.Placement

open KVCache.Common

variable {α : Type} [DecidableEq α]

omit [DecidableEq α] in
/-- A run's first state is the cache it starts from. -/
theorem mem_states_self (P : Policy α) (c : List α) : ∀ r : List α, c ∈ states P c r
  | [] => by simp [states]
  | _ :: _ => by simp [states]

/-- The misses of a run, one request at a time. -/
theorem misses_cons (P : Policy α) (c : List α) (b : α) (rest : List α) :
    misses P c (b :: rest) = (if b ∈ c then 0 else 1) + misses P (P.step c b rest) rest := by
  unfold misses
  by_cases hb : b ∈ c
  · simp only [missed, hb, ↓reduceIte, Nat.zero_add]
  · simp only [missed, hb, ↓reduceIte, List.length_cons]
    omega

/-- **Every demand-fetch run is bounded by the optimum with bypass.** A demand-fetch run
whose states hold at most `k` blocks, from a cache `s` contained in a duplicate-free cache
`d` of at most `k` blocks, misses at least `xs.length - bopt k d xs` times on `xs`. -/
theorem length_le_misses_add_bopt (k : Nat) (P : Policy α) (hP : DemandFetch P) :
    ∀ (xs s d : List α), d.Nodup → d.length ≤ k → (∀ y ∈ s, y ∈ d) →
      (∀ t ∈ states P s xs, t.length ≤ k) →
      xs.length ≤ misses P s xs + Ceiling.bopt k d xs
  | [], _, _, _, _, _, _ => by simp
  | x :: xs, s, d, hd, hdk, hsd, hfit => by
    have hfit' : ∀ t ∈ states P (P.step s x xs) xs, t.length ≤ k :=
      fun t ht => hfit t (by simp only [states]; exact List.mem_cons_of_mem _ ht)
    have hs'k : (P.step s x xs).length ≤ k := hfit' _ (mem_states_self P _ xs)
    have hs' : ∀ y ∈ P.step s x xs, y = x ∨ y ∈ s := hP s x xs
    rw [misses_cons, List.length_cons]
    by_cases hxd : x ∈ d
    · -- the optimum hits, and the new state stays inside `d`
      have ih := length_le_misses_add_bopt k P hP xs (P.step s x xs) d hd hdk
        (fun y hy => (hs' y hy).elim (fun e => e ▸ hxd) (hsd y)) hfit'
      rw [Ceiling.bopt_cons_of_mem hxd]
      by_cases hxs : x ∈ s
      · simp only [hxs, ↓reduceIte]
        omega
      · simp only [hxs, ↓reduceIte]
        omega
    · have hxs : x ∉ s := fun h => hxd (hsd x h)
      simp only [hxs, ↓reduceIte]
      have hxdn : (x :: d).Nodup := List.nodup_cons.mpr ⟨hxd, hd⟩
      have hsub : ∀ y ∈ P.step s x xs, y ∈ x :: d := fun y hy =>
        (hs' y hy).elim (fun e => e ▸ List.mem_cons_self)
          (fun h => List.mem_cons_of_mem x (hsd y h))
      by_cases hlt : d.length < k
      · rw [Ceiling.bopt_cons_of_lt hxd hlt]
        have ih := length_le_misses_add_bopt k P hP xs (P.step s x xs) (x :: d) hxdn
          (by simp only [List.length_cons]; omega) hsub hfit'
        omega
      · -- a full cache: some block of `x :: d` is not kept; the optimum may drop it
        have hz : ∃ z ∈ x :: d, z ∉ P.step s x xs := by
          refine Classical.byContradiction fun hno => ?_
          have hall : ∀ y ∈ x :: d, y ∈ P.step s x xs := fun y hy =>
            Classical.byContradiction fun hyc => hno ⟨y, hy, hyc⟩
          have := length_le_of_nodup_of_subset (x :: d) _ hxdn hall
          simp only [List.length_cons] at this
          omega
        obtain ⟨z, hzd, hzs⟩ := hz
        rw [Ceiling.bopt_cons_of_full hxd (by omega)]
        have hterm : Ceiling.bopt k ((x :: d).erase z) xs ≤
            Ceiling.maxOf (fun y => Ceiling.bopt k ((x :: d).erase y) xs) (x :: d) :=
          Ceiling.le_maxOf (f := fun y => Ceiling.bopt k ((x :: d).erase y) xs) hzd
        have hlen : ((x :: d).erase z).length ≤ k := by
          rw [List.length_erase_of_mem hzd, List.length_cons]
          omega
        have ih := length_le_misses_add_bopt k P hP xs (P.step s x xs) ((x :: d).erase z)
          (hxdn.erase z) hlen
          (fun y hy => (List.mem_erase_of_ne (fun e : y = z => hzs (e ▸ hy))).mpr (hsub y hy))
          hfit'
        omega

-- noncomputable: calls `KVCache.Ceiling.bstep`.
/-- Belady with bypass at capacity `k` as a placement policy: the bypass step of
`KVCache.Ceiling.beladyBypass` on the request `b` followed by the future `f` (a hit keeps the
cache, a miss with room stores `b`, a miss in a full cache drops the block of `b :: c` whose
next request is farthest). -/
noncomputable def beladyBypassPolicy (k : Nat) : Policy α :=
  ⟨fun c b f => Ceiling.bstep k Ceiling.beladyBypass (b :: f) 0 c b⟩

/-- Belady with bypass is a demand-fetch policy. -/
theorem beladyBypassPolicy_demandFetch (k : Nat) :
    DemandFetch (beladyBypassPolicy k : Policy α) :=
  fun _ _ _ _ hx => Ceiling.mem_bstep hx

/-- Every state of the run of Belady with bypass, from a cache of at most `k` blocks, holds
at most `k` blocks. -/
theorem beladyBypassPolicy_states_length_le (k : Nat) : ∀ (r c : List α), c.length ≤ k →
    ∀ t ∈ states (beladyBypassPolicy k) c r, t.length ≤ k
  | [], c, hc, t, ht => by
    simp only [states, List.mem_cons, List.not_mem_nil, or_false] at ht
    rw [ht]
    exact hc
  | b :: rest, c, hc, t, ht => by
    simp only [states, List.mem_cons] at ht
    rcases ht with e | e
    · rw [e]
      exact hc
    · exact beladyBypassPolicy_states_length_le k rest _
        (Ceiling.length_bstep_le k Ceiling.beladyBypass (b :: rest) 0 c b hc) t e

/-- Belady with bypass at capacity `k` fits in `k` blocks on every stream. -/
theorem beladyBypassPolicy_fitsIn (k : Nat) (r : List α) :
    FitsIn k (beladyBypassPolicy k) r :=
  beladyBypassPolicy_states_length_le k r [] (Nat.zero_le _)

/-- The run of the placement policy and the bypass run agree: from step `i` of `r`, misses
plus hits are the number of requests. -/
theorem misses_add_bhitsFrom (k : Nat) (r : List α) : ∀ (xs : List α) (i : Nat) (c : List α),
    r.drop i = xs →
      misses (beladyBypassPolicy k) c xs + Ceiling.bhitsFrom k Ceiling.beladyBypass r i c xs =
        xs.length
  | [], _, _, _ => by simp [misses, missed, Ceiling.bhitsFrom]
  | x :: xs, i, c, hr => by
    have hr' : r.drop (i + 1) = xs := by rw [← List.tail_drop, hr]; rfl
    have hstep : (beladyBypassPolicy k).step c x xs =
        Ceiling.bstep k Ceiling.beladyBypass r i c x := by
      simp only [beladyBypassPolicy, Ceiling.bstep, Ceiling.beladyBypass, List.drop_succ_cons,
        List.drop_zero, hr']
    have ih := misses_add_bhitsFrom k r xs (i + 1)
      (Ceiling.bstep k Ceiling.beladyBypass r i c x) hr'
    rw [misses_cons, hstep, List.length_cons]
    simp only [Ceiling.bhitsFrom]
    by_cases hx : x ∈ c
    · simp only [hx, ↓reduceIte]
      omega
    · simp only [hx, ↓reduceIte]
      omega

/-- Belady with bypass, as a placement policy, misses `r.length - bhits k beladyBypass r`
times on `r` from a cold cache. -/
theorem beladyBypassPolicy_misses (k : Nat) (r : List α) :
    misses (beladyBypassPolicy k) [] r = r.length - Ceiling.bhits k Ceiling.beladyBypass r := by
  have := misses_add_bhitsFrom k r r 0 [] List.drop_zero
  unfold Ceiling.bhits
  omega

/-- **Belady with bypass is the demand-fetch optimum at every capacity.** For every capacity
`k` and every request stream `r`, from a cold cache: Belady with bypass is a demand-fetch
policy whose run fits in `k` blocks and misses `r.length - bhits k beladyBypass r` times, and
every demand-fetch policy (any eviction, any bypass, offline included) whose run fits in `k`
blocks misses at least that often. -/
theorem beladyBypass_demandFetch_optimal (k : Nat) (r : List α) :
    (DemandFetch (beladyBypassPolicy k : Policy α) ∧ FitsIn k (beladyBypassPolicy k) r ∧
      misses (beladyBypassPolicy k) [] r = r.length - Ceiling.bhits k Ceiling.beladyBypass r) ∧
    ∀ P : Policy α, DemandFetch P → FitsIn k P r →
      r.length - Ceiling.bhits k Ceiling.beladyBypass r ≤ misses P [] r := by
  refine ⟨⟨beladyBypassPolicy_demandFetch k, beladyBypassPolicy_fitsIn k r,
    beladyBypassPolicy_misses k r⟩, fun P hP hfit => ?_⟩
  have h := length_le_misses_add_bopt k P hP r [] [] List.nodup_nil (Nat.zero_le _)
    (fun _ h => by simp at h) hfit
  rw [← Ceiling.beladyBypass_bhits_eq_bopt] at h
  omega

end KVCache.Placement

end
