module

public import Proofs.Ceiling.Belady

/-!
# LRU is a stack algorithm

Mattson, Gecsei, Slutz and Traiger ("Evaluation techniques for storage hierarchies", IBM
Systems Journal, 1970) call a replacement policy a *stack algorithm* when, on every stream
and at every moment, its cache at capacity `k` is contained in its cache at capacity `k + 1`.
For such a policy one pass over the stream gives the hits at every capacity at once: a
request hits at capacity `k` exactly when its *stack distance*, its position in the policy's
stack, is at most `k`. This file proves both facts for LRU in the demand-fetch model of
`Proofs.Ceiling.Cache`.

* `cacheAt k P r n`: the cache contents of policy `P` at capacity `k` after the first `n`
  requests of `r`, from an empty cache; `hits_eq_countP_hitAt` counts hits request by
  request.
* `lruStack h`: the LRU stack of a history `h` given most recent first — its distinct blocks,
  most recently requested first. `stackDistance r i` is the (1-based) position of the block
  requested at `i` in the stack of the requests before `i`, or `none` for a first request.
* `lru_cacheAt_perm`: with capacity `k ≥ 1`, LRU's cache after `n` requests holds exactly the
  top `k` blocks of the LRU stack.
* `lru_cache_subset_succ` (inclusion): LRU's cache at capacity `k` is contained in its cache
  at capacity `k + 1`, after every prefix of every stream.
* `lru_hits_le_succ`, `lru_hits_mono`: hence LRU's hits are monotone in the capacity.
* `lru_hits_eq_countP_stackDistance_le`: with `k ≥ 1`, LRU's hits at capacity `k` are the
  number of requests whose stack distance is at most `k`.
-/

@[expose] public section

namespace KVCache.Ceiling

universe u

variable {α : Type u} [DecidableEq α]

/-! ## Runs request by request -/

-- noncomputable: calls `step`.
/-- The cache contents of policy `P` at capacity `k` after the first `n` requests of `r`,
starting from an empty cache (positions past the end of `r` change nothing). -/
noncomputable def cacheAt (k : Nat) (P : Policy α) (r : List α) : Nat → List α
  | 0 => []
  | n + 1 =>
    match r[n]? with
    | some x => step k P r n (cacheAt k P r n) x
    | none => cacheAt k P r n

-- noncomputable: calls `cacheAt`.
/-- Whether the request at position `j` of `r` hits in the run of `P` at capacity `k`. -/
noncomputable def hitAt (k : Nat) (P : Policy α) (r : List α) (j : Nat) : Bool :=
  match r[j]? with
  | some x => decide (x ∈ cacheAt k P r j)
  | none => false

/-- The cache after request `n` is one step from the cache before it. -/
theorem cacheAt_succ_of_getElem? {k : Nat} {P : Policy α} {r : List α} {n : Nat} {x : α}
    (h : r[n]? = some x) : cacheAt k P r (n + 1) = step k P r n (cacheAt k P r n) x := by
  simp only [cacheAt, h]

/-- Past the end of the stream the cache no longer changes. -/
theorem cacheAt_succ_of_getElem?_eq_none {k : Nat} {P : Policy α} {r : List α} {n : Nat}
    (h : r[n]? = none) : cacheAt k P r (n + 1) = cacheAt k P r n := by
  simp only [cacheAt, h]

/-- The hits of the run from request `i` on are the requests from `i` on that hit. -/
theorem hitsFrom_cacheAt_eq_countP (k : Nat) (P : Policy α) (r : List α) :
    ∀ (m i : Nat), i + m = r.length →
      hitsFrom k P r i (cacheAt k P r i) (r.drop i) = (List.range' i m).countP (hitAt k P r)
  | 0, i, h => by
    rw [List.drop_of_length_le (by omega)]
    simp [hitsFrom]
  | m + 1, i, h => by
    have hi : i < r.length := by omega
    have hget : r[i]? = some r[i] := List.getElem?_eq_getElem hi
    rw [List.drop_eq_getElem_cons hi, List.range'_succ, List.countP_cons]
    simp only [hitsFrom]
    rw [← cacheAt_succ_of_getElem? hget,
      hitsFrom_cacheAt_eq_countP k P r m (i + 1) (by omega)]
    by_cases hm : r[i] ∈ cacheAt k P r i
    · simp [hitAt, hget, hm] <;> omega
    · simp [hitAt, hget, hm]

/-- Hits, counted request by request: `hits k P r` is the number of positions of `r` whose
request hits. -/
theorem hits_eq_countP_hitAt (k : Nat) (P : Policy α) (r : List α) :
    hits k P r = (List.range r.length).countP (hitAt k P r) := by
  have h := hitsFrom_cacheAt_eq_countP k P r r.length 0 (Nat.zero_add _)
  simp only [cacheAt, List.drop_zero] at h
  rw [List.range_eq_range']
  exact h

/-- At capacity `0` the model keeps the last missed block, as at capacity `1`. -/
theorem cacheAt_zero (P : Policy α) (r : List α) : ∀ n,
    cacheAt 0 P r n = cacheAt 1 P r n
  | 0 => rfl
  | n + 1 => by
    cases h : r[n]? with
    | none =>
      rw [cacheAt_succ_of_getElem?_eq_none h, cacheAt_succ_of_getElem?_eq_none h,
        cacheAt_zero P r n]
    | some x =>
      rw [cacheAt_succ_of_getElem? h, cacheAt_succ_of_getElem? h, cacheAt_zero P r n,
        step_zero]

/-! ## The LRU stack -/

-- noncomputable: `List.erase` has no compiled code in the registry Lean (`List.eraseTR.go`).
/-- The LRU stack of a history `h` listed most recent first: the distinct blocks of `h`,
most recently requested first. -/
noncomputable def lruStack : List α → List α
  | [] => []
  | y :: ys => y :: (lruStack ys).erase y

/-- The LRU stack has no duplicates, holds exactly the blocks of the history, and lists them
by recency: a block comes before another iff its last request is more recent. -/
theorem lruStack_spec : ∀ h : List α, (lruStack h).Nodup ∧ (∀ y, y ∈ lruStack h ↔ y ∈ h) ∧
    (lruStack h).Pairwise (fun y z => firstPos y h < firstPos z h)
  | [] => by simp [lruStack]
  | w :: h => by
    obtain ⟨hn, hm, hp⟩ := lruStack_spec h
    have hmem : ∀ y, y ∈ (lruStack h).erase w ↔ y ≠ w ∧ y ∈ h := fun y => by
      rw [hn.mem_erase_iff, hm]
    refine ⟨List.nodup_cons.mpr ⟨hn.not_mem_erase, hn.erase w⟩, fun y => ?_, ?_⟩
    · simp only [lruStack, List.mem_cons, hmem]
      by_cases e : y = w <;> simp [e]
    · simp only [lruStack]
      rw [List.pairwise_cons]
      refine ⟨fun z hz => ?_, ?_⟩
      · have hzw : z ≠ w := ((hmem z).mp hz).1
        simp [firstPos, Ne.symm hzw]
      · refine (hp.sublist List.erase_sublist).imp_of_mem ?_
        intro y z hy hz hyz
        have hyw := ((hmem y).mp hy).1
        have hzw := ((hmem z).mp hz).1
        simp only [firstPos, Ne.symm hyw, Ne.symm hzw, ↓reduceIte]
        omega

/-- A block is among the first `k` of a list iff it occurs and its first position is
below `k`. -/
theorem mem_take_iff_firstPos_lt : ∀ (l : List α) (k : Nat) (x : α),
    x ∈ l.take k ↔ x ∈ l ∧ firstPos x l < k
  | [], _, _ => by simp
  | a :: t, 0, x => by simp
  | a :: t, k + 1, x => by
    by_cases hax : a = x
    · simp [hax, firstPos]
    · have ih := mem_take_iff_firstPos_lt t k x
      simp only [List.take_succ_cons, List.mem_cons, firstPos, hax, ↓reduceIte]
      constructor
      · rintro (e | e)
        · exact absurd e.symm hax
        · exact ⟨Or.inr (ih.mp e).1, by have := (ih.mp e).2; omega⟩
      · rintro ⟨e | e, hlt⟩
        · exact absurd e.symm hax
        · exact Or.inr (ih.mpr ⟨e, by omega⟩)

/-- Moving a block of the top `k` of a list to the front keeps the top `k`, up to order. -/
theorem take_cons_erase_perm (x : α) : ∀ (s : List α) (k : Nat), x ∈ s.take k →
    ((x :: s.erase x).take k).Perm (s.take k)
  | [], _, h => by simp at h
  | _ :: _, 0, h => by simp at h
  | a :: t, k + 1, h => by
    by_cases hax : a = x
    · have e : x :: (a :: t).erase x = a :: t := by rw [hax, List.erase_cons_head]
      rw [e]
    · have hne : ¬ (a == x) = true := by simp [hax]
      rw [List.erase_cons_tail hne]
      have hxt : x ∈ t.take k := by
        simp only [List.take_succ_cons, List.mem_cons] at h
        exact h.resolve_left (fun e => hax e.symm)
      cases k with
      | zero => simp at hxt
      | succ k =>
        have ih := take_cons_erase_perm x t (k + 1) hxt
        simp only [List.take_succ_cons] at ih ⊢
        exact (List.Perm.swap a x _).trans (ih.cons a)

/-- Removing a block that is not among the first `k` leaves the first `k` unchanged. -/
theorem take_erase_of_not_mem_take (x : α) : ∀ (s : List α) (k : Nat), x ∉ s.take k →
    (s.erase x).take k = s.take k
  | [], _, _ => by simp
  | _ :: _, 0, _ => by simp
  | a :: t, k + 1, h => by
    have hax : a ≠ x := fun e => h (by simp [e])
    have hne : ¬ (a == x) = true := by simp [hax]
    rw [List.erase_cons_tail hne, List.take_succ_cons, List.take_succ_cons,
      take_erase_of_not_mem_take x t k (fun hx => h (by simp [hx]))]

/-! ## LRU's cache is the top of the LRU stack -/

/-- One LRU step at capacity `k ≥ 1`: if the cache is the top `k` of the stack of the
history before request `n` (up to order), then after serving `x` it is the top `k` of the
stack of the history with `x` added. -/
theorem lru_step_perm (k : Nat) (hk : 1 ≤ k) (r : List α) (n : Nat) (c : List α) (x : α)
    (hc : c.Perm ((lruStack (r.take n).reverse).take k)) :
    (step k lru r n c x).Perm ((lruStack (x :: (r.take n).reverse)).take k) := by
  obtain ⟨k, rfl⟩ : ∃ k', k = k' + 1 := ⟨k - 1, by omega⟩
  simp only [step, lru]
  generalize (r.take n).reverse = h at hc ⊢
  obtain ⟨hsn, -, hsp⟩ := lruStack_spec h
  simp only [lruStack]
  generalize lruStack h = s at hc hsn hsp ⊢
  have hcn : c.Nodup := hc.nodup_iff.mpr (hsn.sublist (List.take_sublist _ _))
  by_cases hx : x ∈ c
  · rw [if_pos hx]
    exact hc.trans (take_cons_erase_perm x s (k + 1) (hc.mem_iff.mp hx)).symm
  · rw [if_neg hx]
    have hxs : x ∉ s.take (k + 1) := fun e => hx (hc.mem_iff.mpr e)
    have hlen := hc.length_eq
    rw [List.length_take, Nat.min_def] at hlen
    by_cases hlt : c.length < k + 1
    · rw [if_pos hlt]
      have hsl : s.length ≤ k + 1 := by split at hlen <;> omega
      have hts : s.take (k + 1) = s := List.take_of_length_le hsl
      rw [hts] at hc hxs
      have hsl' : s.length < k + 1 := by split at hlen <;> omega
      rw [List.erase_of_not_mem hxs,
        List.take_of_length_le (by simp only [List.length_cons]; omega)]
      exact hc.cons x
    · rw [if_neg hlt]
      have hv : k < s.length := by split at hlen <;> omega
      have htake : s.take (k + 1) = s.take k ++ [s[k]] := (List.take_append_getElem hv).symm
      have hpw : (s.take (k + 1)).Pairwise (fun y z => firstPos y h < firstPos z h) :=
        hsp.sublist (List.take_sublist _ _)
      rw [htake, List.pairwise_append] at hpw
      have hrec : ∀ y ∈ s.take k, firstPos y h < firstPos s[k] h :=
        fun y hy => hpw.2.2 y hy s[k] (List.mem_singleton.mpr rfl)
      have hvs : s[k] ∉ s.take k := fun e => Nat.lt_irrefl _ (hrec _ e)
      have hvc : s[k] ∈ c := hc.mem_iff.mpr (by
        rw [htake]; exact List.mem_append_right _ (List.mem_singleton.mpr rfl))
      have hne : c ≠ [] := fun e => by rw [e] at hvc; simp at hvc
      rcases hp : argmaxBy (fun y => firstPos y h) c with ⟨j, sv⟩
      obtain ⟨hmax, hidx⟩ := argmaxBy_spec _ c j sv hp
      obtain ⟨hj, hval⟩ := hidx hne
      have hcj : c[j] = s[k] := by
        refine Classical.byContradiction fun hne' => ?_
        have h1 : c[j] ∈ s.take k := by
          have : c[j] ∈ s.take (k + 1) := hc.mem_iff.mp (List.getElem_mem hj)
          rw [htake, List.mem_append] at this
          exact this.resolve_right (fun e => hne' (List.mem_singleton.mp e))
        have h2 := hrec _ h1
        have h3 : firstPos s[k] h ≤ sv := hmax _ hvc
        have h4 : firstPos c[j] h = sv := hval
        omega
      simp only [Nat.mod_eq_of_lt hj]
      rw [eraseIdx_eq_erase_getElem c j hj hcn, hcj, List.take_succ_cons,
        take_erase_of_not_mem_take x s k
          (fun e => hxs (List.take_subset_take_left s (Nat.le_succ k) e))]
      refine (hc.erase s[k]).trans ?_ |>.cons x
      rw [htake, List.erase_append_right _ hvs, List.erase_cons_head, List.append_nil]

/-- **LRU's cache is the top of the LRU stack.** With capacity `k ≥ 1`, after the first `n`
requests of `r`, LRU's cache is (up to order) the `k` most recently requested distinct
blocks. -/
theorem lru_cacheAt_perm (k : Nat) (hk : 1 ≤ k) (r : List α) :
    ∀ n, (cacheAt k lru r n).Perm ((lruStack (r.take n).reverse).take k)
  | 0 => by simp [cacheAt, lruStack]
  | n + 1 => by
    have ih := lru_cacheAt_perm k hk r n
    cases hrn : r[n]? with
    | none =>
      rw [cacheAt_succ_of_getElem?_eq_none hrn]
      have ht : r.take (n + 1) = r.take n := by simp [List.take_add_one, hrn]
      rw [ht]
      exact ih
    | some x =>
      rw [cacheAt_succ_of_getElem? hrn]
      have ht : (r.take (n + 1)).reverse = x :: (r.take n).reverse := by
        simp [List.take_add_one, hrn]
      rw [ht]
      exact lru_step_perm k hk r n _ x ih

/-- A block is in LRU's cache at capacity `k ≥ 1` after `n` requests iff it is among the
top `k` of the LRU stack. -/
theorem mem_lru_cacheAt_iff (k : Nat) (hk : 1 ≤ k) (r : List α) (n : Nat) (y : α) :
    y ∈ cacheAt k lru r n ↔ y ∈ (lruStack (r.take n).reverse).take k :=
  (lru_cacheAt_perm k hk r n).mem_iff

/-! ## The stack property and stack distances -/

/-- **LRU is a stack algorithm (inclusion).** For every capacity `k`, every stream `r` and
every prefix length `n`, LRU's cache at capacity `k` is contained in its cache at capacity
`k + 1`. -/
theorem lru_cache_subset_succ (k : Nat) (r : List α) (n : Nat) :
    ∀ y ∈ cacheAt k lru r n, y ∈ cacheAt (k + 1) lru r n := by
  intro y hy
  cases k with
  | zero => rw [← cacheAt_zero]; exact hy
  | succ k =>
    rw [mem_lru_cacheAt_iff (k + 1) (by omega) r n y] at hy
    rw [mem_lru_cacheAt_iff (k + 1 + 1) (by omega) r n y]
    exact List.take_subset_take_left _ (Nat.le_succ _) hy

/-- **LRU's hits grow with the capacity**, one slot at a time (a consequence of
inclusion). -/
theorem lru_hits_le_succ (k : Nat) (r : List α) : hits k lru r ≤ hits (k + 1) lru r := by
  rw [hits_eq_countP_hitAt, hits_eq_countP_hitAt]
  apply List.countP_mono_left
  intro j _ hj
  unfold hitAt at hj ⊢
  cases h : r[j]? with
  | none => simp [h] at hj
  | some x =>
    simp only [h, decide_eq_true_eq] at hj ⊢
    exact lru_cache_subset_succ k r j x hj

/-- **LRU's hits are monotone in the capacity**: `k ≤ k'` implies
`hits k lru r ≤ hits k' lru r`. -/
theorem lru_hits_mono {k k' : Nat} (h : k ≤ k') (r : List α) :
    hits k lru r ≤ hits k' lru r := by
  induction h with
  | refl => exact Nat.le_refl _
  | step _ ih => exact Nat.le_trans ih (lru_hits_le_succ _ r)

-- noncomputable: `List.take` and `∈` have no compiled code in the registry Lean.
/-- The stack distance of the request at position `i` of `r`: the (1-based) position of its
block in the LRU stack of the requests before `i`, i.e. the number of distinct blocks
requested since its previous request, itself included; `none` for a first request (and past
the end of `r`). -/
noncomputable def stackDistance (r : List α) (i : Nat) : Option Nat :=
  match r[i]? with
  | some x =>
    if x ∈ lruStack (r.take i).reverse then
      some (firstPos x (lruStack (r.take i).reverse) + 1)
    else none
  | none => none

/-- With capacity `k ≥ 1`, the request at position `j` hits in LRU's run iff its stack
distance is at most `k`. -/
theorem lru_hitAt_eq (k : Nat) (hk : 1 ≤ k) (r : List α) (j : Nat) :
    hitAt k lru r j = (stackDistance r j).any (fun d => decide (d ≤ k)) := by
  cases hj : r[j]? with
  | none => simp [hitAt, stackDistance, hj]
  | some x =>
    have hp := mem_lru_cacheAt_iff k hk r j x
    rw [mem_take_iff_firstPos_lt] at hp
    by_cases hm : x ∈ lruStack (r.take j).reverse
    · simp only [hitAt, stackDistance, hj, hm, ↓reduceIte, Option.any, hp, true_and,
        decide_eq_decide]
      exact ⟨fun h => by omega, fun h => by omega⟩
    · simp only [hitAt, stackDistance, hj, hm, ↓reduceIte, Option.any, hp, false_and,
        decide_false]

/-- **LRU's hits are counted by stack distances** (Mattson et al.): with capacity `k ≥ 1`,
LRU's hits on `r` are the number of positions of `r` whose stack distance is at most `k`. -/
theorem lru_hits_eq_countP_stackDistance_le (k : Nat) (hk : 1 ≤ k) (r : List α) :
    hits k lru r = (List.range r.length).countP
      (fun i => (stackDistance r i).any (fun d => decide (d ≤ k))) := by
  rw [hits_eq_countP_hitAt]
  congr 1
  funext j
  exact lru_hitAt_eq k hk r j

end KVCache.Ceiling

end
