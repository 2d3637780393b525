module

public import Proofs.Ceiling.Cache
public import Proofs.Common.List

/-!
# Replacement policies at every capacity: Belady is optimal, LRU is a stack algorithm

Two classical facts about the demand-fetch model of `Proofs.Ceiling.Cache`, both for every
capacity and every stream, from an empty cache (one file: they share the model and the
build cost of a module).

## Belady's rule is optimal

In the demand-fetch model of `Proofs.Ceiling.Cache` (a hit keeps the cache; a miss inserts
the requested block, first evicting one cached block when `k` or more are cached), a policy
chooses which block to evict and may look at the whole stream, past and future. Belady's
rule (`belady`, also called MIN or OPT) evicts the cached block whose next request lies
farthest in the future.

* `hits_le_belady_hits`: for every capacity `k`, every policy `P` (online or offline) and
  every stream `r`, `hits k P r ≤ hits k belady r`.
* `belady_hits_le_succ`, `belady_hits_mono`: Belady's hits never decrease when the capacity
  grows.

### The proof

`opt k c xs` is the most hits any sequence of eviction choices can score on the requests
`xs` from cache contents `c` (a maximum over the cached blocks at every full miss).
Every policy's run is one such sequence, so its hits are at most `opt` (`hitsFrom_le_opt`).
The converse for Belady rests on one exchange lemma (`opt_exchange`, after van Roy, "A short
proof of optimality for the MIN cache replacement algorithm", IPL 2007): two full caches
`a :: S` and `b :: S` that differ in one block are worth at most one hit apart, and if `b` is
requested no later than `a` then `b :: S` is worth at least as much as `a :: S`. Evicting
the block requested farthest in the future therefore keeps a cache that is worth the most,
so Belady's run attains `opt` (`opt_le_hitsFrom_belady`). The exchange lemma is proved once,
for every value function with the equations of such an optimum, with or without the option
of bypass (`exchange_of_best_choice`): `opt_exchange` here and `bopt_exchange` in
`Proofs.Ceiling.Bypass` are its two instances. Monotonicity in the capacity
compares `opt` at `k` and `k + 1` on caches `c ⊆ d` (`opt_le_opt_succ`).

The model forces the requested block into the cache on a miss (no bypass) and evicts only
when the cache is full; Belady's optimality is proved within that model. A policy that may
decline to store a missed block can score more (`[1, 2, 1]` at capacity `1`): that class,
which contains this one, and Belady with bypass, optimal in it at every capacity, are in
`Proofs.Ceiling.Bypass`. At capacity `0` nothing is stored and every policy scores `0`
(`hits_zero`); `opt` is used at `k ≥ 1` only.

## LRU is a stack algorithm

Mattson, Gecsei, Slutz and Traiger ("Evaluation techniques for storage hierarchies", IBM
Systems Journal, 1970) call a replacement policy a *stack algorithm* when, on every stream
and at every moment, its cache at capacity `k` is contained in its cache at capacity `k + 1`.
For such a policy one pass over the stream gives the hits at every capacity at once: a
request hits at capacity `k` exactly when its *stack distance*, its position in the policy's
stack, is at most `k`. Both facts are proved here for LRU.

* `cacheAt k P r n`: the cache contents of policy `P` at capacity `k` after the first `n`
  requests of `r`, from an empty cache; `hits_eq_countP_hitAt` counts hits request by
  request.
* `lruStack h`: the LRU stack of a history `h` given most recent first — its distinct blocks,
  most recently requested first. `stackDistance r i` is the (1-based) position of the block
  requested at `i` in the stack of the requests before `i`, or `none` for a first request.
* `lru_cacheAt_perm`: at every capacity `k`, LRU's cache after `n` requests holds exactly the
  top `k` blocks of the LRU stack (none at `k = 0`, where nothing is stored).
* `lru_cache_subset_succ` (inclusion): LRU's cache at capacity `k` is contained in its cache
  at capacity `k + 1`, after every prefix of every stream.
* `lru_hits_le_succ`, `lru_hits_mono`: hence LRU's hits are monotone in the capacity.
* `lru_hits_eq_countP_stackDistance_le`: LRU's hits at capacity `k` are the number of
  requests whose stack distance is at most `k`.
-/

@[expose] public section

namespace KVCache.Ceiling

open KVCache.Common

universe u

variable {α : Type u} [DecidableEq α]

/-! ## A maximum over a list -/

/-- `maxOf f l`: the largest value of `f` on the list `l` (`0` on the empty list). -/
def maxOf (f : α → Nat) : List α → Nat
  | [] => 0
  | y :: ys => max (f y) (maxOf f ys)

omit [DecidableEq α] in
/-- Every value of `f` on the list is at most `maxOf f l`. -/
theorem le_maxOf {f : α → Nat} {l : List α} {y : α} (h : y ∈ l) : f y ≤ maxOf f l := by
  induction l with
  | nil => simp at h
  | cons z zs ih =>
    simp only [maxOf]
    rcases List.mem_cons.mp h with e | e
    · rw [e]; exact Nat.le_max_left _ _
    · exact Nat.le_trans (ih e) (Nat.le_max_right _ _)

omit [DecidableEq α] in
/-- `maxOf f l` is at most any common bound of the values of `f` on `l`. -/
theorem maxOf_le {f : α → Nat} {l : List α} {m : Nat} (h : ∀ y ∈ l, f y ≤ m) :
    maxOf f l ≤ m := by
  induction l with
  | nil => exact Nat.zero_le _
  | cons z zs ih =>
    simp only [maxOf]
    exact Nat.max_le.mpr
      ⟨h z List.mem_cons_self, ih (fun y hy => h y (List.mem_cons_of_mem _ hy))⟩

omit [DecidableEq α] in
/-- `maxOf` depends only on the values of `f` on the list. -/
theorem maxOf_congr {f g : α → Nat} {l : List α} (h : ∀ y ∈ l, f y = g y) :
    maxOf f l = maxOf g l :=
  Nat.le_antisymm (maxOf_le fun y hy => h y hy ▸ le_maxOf hy)
    (maxOf_le fun y hy => (h y hy).symm ▸ le_maxOf hy)

/-! ## The exchange lemma, for every optimum of the demand-fetch kind -/

/-- The first position of a block at the head of the list is `0`. -/
theorem firstPos_cons_self (y : α) (zs : List α) : firstPos y (y :: zs) = 0 := by
  simp [firstPos]

/-- Past a head that is another block, the first position moves up by one. -/
theorem firstPos_cons_of_ne {y z : α} (zs : List α) (h : z ≠ y) :
    firstPos y (z :: zs) = firstPos y zs + 1 := by
  simp [firstPos, h]

/-- **The exchange lemma** (after van Roy, IPL 2007), for every value function `V` obeying
the equations of a best-choice optimum at capacity `k` (`V c xs`: the most hits on the
requests `xs` from cache contents `c`): no requests score nothing (`hnil`), a hit scores one
(`hhit`), a miss in a full cache scores the best of evicting a cached block `y` and, when
`bypass` holds, of keeping the cache as it is (`hfull`), and the order of the cache does not
matter (`hperm`). Then for two full caches `a :: S` and `b :: S` (capacity `k = |S| + 1`, no
duplicates) that differ in one block, `a :: S` is worth at most one hit more than `b :: S`,
and no more when `b` is requested no later than `a`. -/
theorem exchange_of_best_choice (V : List α → List α → Nat) (k : Nat) (bypass : Bool)
    (hnil : ∀ c, V c [] = 0) (hhit : ∀ c x xs, x ∈ c → V c (x :: xs) = 1 + V c xs)
    (hfull : ∀ c x xs, x ∉ c → k ≤ c.length → V c (x :: xs) =
      max (if bypass then V c xs else 0) (maxOf (fun y => V (x :: c.erase y) xs) c))
    (hperm : ∀ xs c d, c.Perm d → V c xs = V d xs) :
    ∀ (xs : List α) (a b : α) (S : List α), (a :: S).Nodup → (b :: S).Nodup → a ≠ b →
      S.length + 1 = k → V (a :: S) xs ≤ V (b :: S) xs + 1 ∧
        (firstPos b xs ≤ firstPos a xs → V (a :: S) xs ≤ V (b :: S) xs)
  | [], _, _, _, _, _, _, _ => by simp [hnil]
  | x :: xs, a, b, S, ha, hb, hab, hk => by
    have haS : a ∉ S := (List.nodup_cons.mp ha).1
    have hbS : b ∉ S := (List.nodup_cons.mp hb).1
    have hS : S.Nodup := (List.nodup_cons.mp ha).2
    have hfa : k ≤ (a :: S).length := by simp only [List.length_cons]; omega
    have hfb : k ≤ (b :: S).length := by simp only [List.length_cons]; omega
    have hyaS : ∀ {y}, a ∉ S.erase y := fun e => haS (List.mem_of_mem_erase e)
    have hybS : ∀ {y}, b ∉ S.erase y := fun e => hbS (List.mem_of_mem_erase e)
    obtain ⟨ih1, ih2⟩ := exchange_of_best_choice V k bypass hnil hhit hfull hperm xs a b S
      ha hb hab hk
    -- evicting `b` from `b :: S` on a miss of `x` leaves `x :: S`
    have hterm : V (x :: (b :: S).erase b) xs ≤
        maxOf (fun z => V (x :: (b :: S).erase z) xs) (b :: S) :=
      le_maxOf (f := fun z => V (x :: (b :: S).erase z) xs) (y := b) List.mem_cons_self
    rw [List.erase_cons_head] at hterm
    by_cases hxS : x ∈ S
    · -- both caches hit
      have hxa : x ≠ a := fun e => haS (e ▸ hxS)
      have hxb : x ≠ b := fun e => hbS (e ▸ hxS)
      rw [hhit _ _ _ (List.mem_cons_of_mem a hxS), hhit _ _ _ (List.mem_cons_of_mem b hxS),
        firstPos_cons_of_ne xs hxa, firstPos_cons_of_ne xs hxb]
      exact ⟨by omega, fun hc => by have := ih2 (by omega); omega⟩
    by_cases hxa : x = a
    · -- `a :: S` hits; `b :: S` misses and may evict `b`; `a` is requested first
      have hxb : x ≠ b := fun e => hab (hxa.symm.trans e)
      have hxd : x ∉ b :: S := fun h => (List.mem_cons.mp h).elim hxb hxS
      have hxc : x ∈ a :: S := by rw [hxa]; exact List.mem_cons_self
      have hb' := Nat.le_max_right (if bypass then V (b :: S) xs else 0)
        (maxOf (fun z => V (x :: (b :: S).erase z) xs) (b :: S))
      rw [hhit _ _ _ hxc, hfull _ _ _ hxd hfb,
        firstPos_cons_of_ne xs hxb, hxa, firstPos_cons_self]
      rw [hxa] at hterm hb'
      exact ⟨by omega, fun h => absurd h (by omega)⟩
    by_cases hxb : x = b
    · -- `a :: S` misses, `b :: S` hits; `b` is requested first
      have hxc : x ∉ a :: S := fun h => (List.mem_cons.mp h).elim hxa hxS
      have hxd : x ∈ b :: S := by rw [hxb]; exact List.mem_cons_self
      rw [hfull _ _ _ hxc hfa, hhit _ _ _ hxd, hxb, firstPos_cons_self]
      have hkeep : (if bypass then V (a :: S) xs else 0) ≤ 1 + V (b :: S) xs := by
        split <;> omega
      have hevict : maxOf (fun y => V (b :: (a :: S).erase y) xs) (a :: S) ≤
          1 + V (b :: S) xs := by
        apply maxOf_le
        intro y hy
        by_cases hya : y = a
        · rw [hya, List.erase_cons_head]
          omega
        · -- evicting `y` of `S`: compare with `b :: S`, which holds `y`
          have hyS : y ∈ S := (List.mem_cons.mp hy).resolve_left hya
          have hyb : y ≠ b := fun e => hbS (e ▸ hyS)
          rw [erase_cons_of_ne S (Ne.symm hya)]
          obtain ⟨ih, -⟩ := exchange_of_best_choice V k bypass hnil hhit hfull hperm xs a y
            (b :: S.erase y) (nodup_cons_cons hab hyaS hybS (hS.erase y))
            (nodup_cons_cons hyb hS.not_mem_erase hybS (hS.erase y)) (fun e => hya e.symm)
            (by rw [length_cons_erase b hyS]; omega)
          rw [hperm xs _ _ (List.Perm.swap a b (S.erase y)),
            hperm xs (b :: S) _
              (((List.perm_cons_erase hyS).cons b).trans (List.Perm.swap y b (S.erase y)))]
          omega
      have := Nat.max_le.mpr ⟨hkeep, hevict⟩
      exact ⟨by omega, fun _ => this⟩
    · -- both caches miss
      have hxc : x ∉ a :: S := fun h => (List.mem_cons.mp h).elim hxa hxS
      have hxd : x ∉ b :: S := fun h => (List.mem_cons.mp h).elim hxb hxS
      rw [hfull _ _ _ hxc hfa, hfull _ _ _ hxd hfb, firstPos_cons_of_ne xs hxa,
        firstPos_cons_of_ne xs hxb]
      -- the best choice for `b :: S`, against each choice for `a :: S`
      generalize hB : maxOf (fun z => V (x :: (b :: S).erase z) xs) (b :: S) = B at hterm ⊢
      have hkeep : (if bypass then V (a :: S) xs else 0) ≤
            (if bypass then V (b :: S) xs else 0) + 1 ∧
          (firstPos b xs ≤ firstPos a xs → (if bypass then V (a :: S) xs else 0) ≤
            (if bypass then V (b :: S) xs else 0)) := by
        by_cases hby : bypass = true
        · rw [if_pos hby, if_pos hby]
          exact ⟨ih1, ih2⟩
        · rw [if_neg hby, if_neg hby]
          exact ⟨Nat.zero_le _, fun _ => Nat.le_refl 0⟩
      have hevict : ∀ y ∈ a :: S, V (x :: (a :: S).erase y) xs ≤ B + 1 ∧
          (firstPos b xs ≤ firstPos a xs → V (x :: (a :: S).erase y) xs ≤ B) := by
        intro y hy
        by_cases hya : y = a
        · -- evict `a` on one side, `b` on the other: both keep `x :: S`
          rw [hya, List.erase_cons_head]
          exact ⟨by omega, fun _ => hterm⟩
        · -- evict the same block `y` of `S` on both sides
          have hyS : y ∈ S := (List.mem_cons.mp hy).resolve_left hya
          have hyb : y ≠ b := fun e => hbS (e ▸ hyS)
          have hy' : V (x :: (b :: S).erase y) xs ≤ B := by
            rw [← hB]
            exact le_maxOf (f := fun z => V (x :: (b :: S).erase z) xs)
              (List.mem_cons_of_mem b hyS)
          rw [erase_cons_of_ne S (Ne.symm hyb)] at hy'
          rw [erase_cons_of_ne S (Ne.symm hya)]
          have hxy : x ∉ S.erase y := fun e => hxS (List.mem_of_mem_erase e)
          obtain ⟨e1, e2⟩ := exchange_of_best_choice V k bypass hnil hhit hfull hperm xs a b
            (x :: S.erase y) (nodup_cons_cons (Ne.symm hxa) hyaS hxy (hS.erase y))
            (nodup_cons_cons (Ne.symm hxb) hybS hxy (hS.erase y)) hab
            (by rw [length_cons_erase x hyS]; omega)
          rw [hperm xs _ _ (List.Perm.swap a x (S.erase y))]
          rw [hperm xs _ _ (List.Perm.swap b x (S.erase y))] at hy'
          exact ⟨by omega, fun hc => by have := e2 hc; omega⟩
      have h1 := maxOf_le (f := fun y => V (x :: (a :: S).erase y) xs) (l := a :: S)
        fun y hy => (hevict y hy).1
      have hB0 := Nat.le_max_left (if bypass then V (b :: S) xs else 0) B
      have hB1 := Nat.le_max_right (if bypass then V (b :: S) xs else 0) B
      have hk1 := hkeep.1
      refine ⟨Nat.max_le.mpr ⟨by omega, by omega⟩, fun hc => Nat.max_le.mpr ⟨?_, ?_⟩⟩
      · exact Nat.le_trans (hkeep.2 (by omega)) hB0
      · exact Nat.le_trans (maxOf_le fun y hy => (hevict y hy).2 (by omega)) hB1

/-! ## The offline optimum -/

-- noncomputable: `∈` and `List.erase` have no compiled code in the registry Lean.
/-- `opt k c xs`: the most hits that any sequence of eviction choices scores on the requests
`xs`, from cache contents `c`, with capacity `k`, under the model's demand-fetch rule (a hit
keeps the cache; a miss inserts the requested block, evicting a cached block of our choice
when `k` or more blocks are cached). -/
noncomputable def opt (k : Nat) : List α → List α → Nat
  | _, [] => 0
  | c, x :: xs =>
    if x ∈ c then 1 + opt k c xs
    else if c.length < k then opt k (x :: c) xs
    else maxOf (fun y => opt k (x :: c.erase y) xs) c

/-- `opt` on a hit. -/
theorem opt_cons_of_mem {k : Nat} {c xs : List α} {x : α} (h : x ∈ c) :
    opt k c (x :: xs) = 1 + opt k c xs := by
  simp only [opt, h, ↓reduceIte]

/-- `opt` on a miss with room in the cache. -/
theorem opt_cons_of_lt {k : Nat} {c xs : List α} {x : α} (h : x ∉ c) (hk : c.length < k) :
    opt k c (x :: xs) = opt k (x :: c) xs := by
  simp only [opt, h, hk, ↓reduceIte]

/-- `opt` on a miss in a full cache: the best choice of a victim. -/
theorem opt_cons_of_full {k : Nat} {c xs : List α} {x : α} (h : x ∉ c) (hk : k ≤ c.length) :
    opt k c (x :: xs) = maxOf (fun y => opt k (x :: c.erase y) xs) c := by
  simp only [opt, h, Nat.not_lt.mpr hk, ↓reduceIte]

/-- `opt` depends on the cache contents only, not on their order. -/
theorem opt_perm (k : Nat) : ∀ (xs : List α) {c d : List α}, c.Perm d →
    opt k c xs = opt k d xs
  | [], _, _, _ => by simp [opt]
  | x :: xs, c, d, h => by
    by_cases hx : x ∈ c
    · rw [opt_cons_of_mem hx, opt_cons_of_mem (h.mem_iff.mp hx), opt_perm k xs h]
    · have hx' : x ∉ d := fun e => hx (h.mem_iff.mpr e)
      have hl := h.length_eq
      by_cases hk : c.length < k
      · rw [opt_cons_of_lt hx hk, opt_cons_of_lt hx' (by omega), opt_perm k xs (h.cons x)]
      · rw [opt_cons_of_full hx (by omega), opt_cons_of_full hx' (by omega)]
        have hf : (fun y => opt k (x :: c.erase y) xs) = (fun y => opt k (x :: d.erase y) xs) :=
          funext fun y => opt_perm k xs ((h.erase y).cons x)
        rw [hf]
        exact Nat.le_antisymm
          (maxOf_le fun y hy =>
            le_maxOf (f := fun y => opt k (x :: d.erase y) xs) (h.mem_iff.mp hy))
          (maxOf_le fun y hy =>
            le_maxOf (f := fun y => opt k (x :: d.erase y) xs) (h.mem_iff.mpr hy))

/-- A cached `b` is worth a cached `a` minus at most one hit, and at least as much when `b`
is requested no later than `a`: the exchange lemma, for two full caches `a :: S` and `b :: S`
that differ in one block (`exchange_of_best_choice`, without bypass). -/
theorem opt_exchange (k : Nat) : ∀ (xs : List α) (a b : α) (S : List α),
    (a :: S).Nodup → (b :: S).Nodup → a ≠ b → S.length + 1 = k →
    opt k (a :: S) xs ≤ opt k (b :: S) xs + 1 ∧
      (firstPos b xs ≤ firstPos a xs → opt k (a :: S) xs ≤ opt k (b :: S) xs) :=
  exchange_of_best_choice (opt k) k false (fun _ => by simp [opt])
    (fun _ _ _ h => opt_cons_of_mem h)
    (fun _ _ _ h hk => by
      rw [opt_cons_of_full h hk, if_neg (by decide : ¬false = true),
        Nat.max_eq_right (Nat.zero_le _)])
    (fun xs _ _ h => opt_perm k xs h)

/-! ## Every policy is bounded by the optimum; Belady attains it -/

/-- Every policy's run, from a duplicate-free cache, scores at most `opt` on the remaining
requests (capacity at least one). -/
theorem hitsFrom_le_opt (k : Nat) (hk : 1 ≤ k) (P : Policy α) (r : List α) :
    ∀ (xs : List α) (i : Nat) (c : List α), c.Nodup → hitsFrom k P r i c xs ≤ opt k c xs
  | [], _, _, _ => by simp [hitsFrom]
  | x :: xs, i, c, hc => by
    by_cases hx : x ∈ c
    · have hstep : step k P r i c x = c := by simp [step, hx]
      have hh : hitsFrom k P r i c (x :: xs) = 1 + hitsFrom k P r (i + 1) c xs := by
        simp [hitsFrom, hx, hstep]
      rw [hh, opt_cons_of_mem hx]
      have := hitsFrom_le_opt k hk P r xs (i + 1) c hc
      omega
    · by_cases hlt : c.length < k
      · have hstep : step k P r i c x = x :: c := by simp [step, hx, hlt]
        have hh : hitsFrom k P r i c (x :: xs) = hitsFrom k P r (i + 1) (x :: c) xs := by
          simp [hitsFrom, hx, hstep]
        rw [hh, opt_cons_of_lt hx hlt]
        exact hitsFrom_le_opt k hk P r xs (i + 1) (x :: c) (List.nodup_cons.mpr ⟨hx, hc⟩)
      · have hpos : 0 < c.length := by omega
        have hk0 : ¬ k = 0 := by omega
        have hj : P.victim r i c x % c.length < c.length := Nat.mod_lt _ hpos
        have hstep : step k P r i c x =
            x :: c.erase (c[P.victim r i c x % c.length]'hj) := by
          simp only [step, hx, hlt, hk0, ↓reduceIte]
          rw [eraseIdx_eq_erase_getElem c _ hj hc]
        have hh : hitsFrom k P r i c (x :: xs) = hitsFrom k P r (i + 1)
            (x :: c.erase (c[P.victim r i c x % c.length]'hj)) xs := by
          simp only [hitsFrom, hx, ↓reduceIte, hstep, Nat.zero_add]
        rw [hh, opt_cons_of_full hx (by omega)]
        have hn : (x :: c.erase (c[P.victim r i c x % c.length]'hj)).Nodup :=
          List.nodup_cons.mpr ⟨fun e => hx (List.mem_of_mem_erase e), hc.erase _⟩
        exact Nat.le_trans (hitsFrom_le_opt k hk P r xs (i + 1) _ hn)
          (le_maxOf (f := fun y => opt k (x :: c.erase y) xs) (List.getElem_mem hj))

omit [DecidableEq α] in
/-- If `argmaxBy f c = (j, s)` then `s` is the largest value of `f` on `c` and, when `c` is
not empty, `j` is a position of `c` whose value is `s`. -/
theorem argmaxBy_spec (f : α → Nat) : ∀ (c : List α) (j s : Nat), argmaxBy f c = (j, s) →
    (∀ y ∈ c, f y ≤ s) ∧ (c ≠ [] → ∃ h : j < c.length, f (c[j]'h) = s)
  | [], _, _, _ => ⟨by simp, fun hne => absurd rfl hne⟩
  | y :: ys, j, s, h => by
    rcases hp : argmaxBy f ys with ⟨j', s'⟩
    obtain ⟨ih1, ih2⟩ := argmaxBy_spec f ys j' s' hp
    by_cases hs : s' ≤ f y
    · have he : argmaxBy f (y :: ys) = (0, f y) := by simp [argmaxBy, hp, hs]
      rw [he] at h
      obtain ⟨rfl, rfl⟩ := Prod.mk.inj h
      refine ⟨fun z hz => ?_, fun _ => ⟨by simp, rfl⟩⟩
      rcases List.mem_cons.mp hz with e | e
      · rw [e]; exact Nat.le_refl _
      · exact Nat.le_trans (ih1 z e) hs
    · have he : argmaxBy f (y :: ys) = (j' + 1, s') := by simp [argmaxBy, hp, hs]
      rw [he] at h
      obtain ⟨rfl, rfl⟩ := Prod.mk.inj h
      refine ⟨fun z hz => ?_, fun _ => ?_⟩
      · rcases List.mem_cons.mp hz with e | e
        · rw [e]; omega
        · exact ih1 z e
      · have hne : ys ≠ [] := by
          intro e
          rw [e] at hp
          simp [argmaxBy] at hp
          omega
        obtain ⟨hj, hv⟩ := ih2 hne
        exact ⟨by simp only [List.length_cons]; omega, by simpa using hv⟩

/-- Belady's run, from a duplicate-free cache holding at most `k` blocks and positioned at
the remaining requests of its stream, scores at least `opt`. -/
theorem opt_le_hitsFrom_belady (k : Nat) (hk : 1 ≤ k) (r : List α) :
    ∀ (xs : List α) (i : Nat) (c : List α), r.drop i = xs → c.Nodup → c.length ≤ k →
      opt k c xs ≤ hitsFrom k belady r i c xs
  | [], _, _, _, _, _ => by simp [opt]
  | x :: xs, i, c, hr, hc, hck => by
    have hr' : r.drop (i + 1) = xs := by rw [← List.tail_drop, hr]; rfl
    by_cases hx : x ∈ c
    · have hstep : step k belady r i c x = c := by simp [step, hx]
      have hh : hitsFrom k belady r i c (x :: xs) = 1 + hitsFrom k belady r (i + 1) c xs := by
        simp [hitsFrom, hx, hstep]
      rw [hh, opt_cons_of_mem hx]
      have := opt_le_hitsFrom_belady k hk r xs (i + 1) c hr' hc hck
      omega
    · by_cases hlt : c.length < k
      · have hstep : step k belady r i c x = x :: c := by simp [step, hx, hlt]
        have hh : hitsFrom k belady r i c (x :: xs) =
            hitsFrom k belady r (i + 1) (x :: c) xs := by
          simp [hitsFrom, hx, hstep]
        rw [hh, opt_cons_of_lt hx hlt]
        exact opt_le_hitsFrom_belady k hk r xs (i + 1) (x :: c) hr'
          (List.nodup_cons.mpr ⟨hx, hc⟩) (by simp only [List.length_cons]; omega)
      · have hne : c ≠ [] := by
          intro e
          rw [e] at hlt
          simp at hlt
          omega
        have hpos : 0 < c.length := by omega
        rcases hp : argmaxBy (fun y => firstPos y (r.drop (i + 1))) c with ⟨j, s⟩
        obtain ⟨hmax, hidx⟩ := argmaxBy_spec _ c j s hp
        obtain ⟨hj0, hval⟩ := hidx hne
        -- the victim `c[j]` is requested farthest in the future
        have hm : ∀ y ∈ c, firstPos y xs ≤ firstPos (c[j]'hj0) xs := by
          intro y hy
          have h1 := hmax y hy
          rw [← hval] at h1
          simp only [hr'] at h1
          exact h1
        have hk0 : ¬ k = 0 := by omega
        have hstep : step k belady r i c x = x :: c.erase (c[j]'hj0) := by
          simp only [step, hx, hlt, hk0, ↓reduceIte, belady, hp]
          rw [Nat.mod_eq_of_lt hj0, eraseIdx_eq_erase_getElem c j hj0 hc]
        generalize hmdef : c[j]'hj0 = m at hm hstep
        have hmc : m ∈ c := by rw [← hmdef]; exact List.getElem_mem hj0
        have hh : hitsFrom k belady r i c (x :: xs) =
            hitsFrom k belady r (i + 1) (x :: c.erase m) xs := by
          simp only [hitsFrom, hx, ↓reduceIte, hstep, Nat.zero_add]
        have hn : (x :: c.erase m).Nodup :=
          List.nodup_cons.mpr ⟨fun e => hx (List.mem_of_mem_erase e), hc.erase m⟩
        have hlen : (x :: c.erase m).length ≤ k := by
          rw [List.length_cons, List.length_erase_of_mem hmc]
          omega
        rw [hh, opt_cons_of_full hx (by omega)]
        refine Nat.le_trans ?_ (opt_le_hitsFrom_belady k hk r xs (i + 1) _ hr' hn hlen)
        apply maxOf_le
        intro y hy
        by_cases hym : y = m
        · rw [hym]; exact Nat.le_refl _
        · -- exchange `m` (requested later) for `y`
          have hmy : m ∈ c.erase y := (List.mem_erase_of_ne (fun e => hym e.symm)).mpr hmc
          have hym' : y ∈ c.erase m := (List.mem_erase_of_ne hym).mpr hy
          have hT : ((c.erase y).erase m).Nodup := (hc.erase y).erase m
          have hxT : x ∉ (c.erase y).erase m :=
            fun e => hx (List.mem_of_mem_erase (List.mem_of_mem_erase e))
          have hmT : m ∉ (c.erase y).erase m := (hc.erase y).not_mem_erase
          have hyT : y ∉ (c.erase y).erase m :=
            fun e => hc.not_mem_erase (List.mem_of_mem_erase e)
          have hxm : m ≠ x := fun e => hx (e ▸ hmc)
          have hxy : y ≠ x := fun e => hx (e ▸ hy)
          have n1 : (m :: x :: (c.erase y).erase m).Nodup :=
            List.nodup_cons.mpr ⟨fun e => (List.mem_cons.mp e).elim hxm hmT,
              List.nodup_cons.mpr ⟨hxT, hT⟩⟩
          have n2 : (y :: x :: (c.erase y).erase m).Nodup :=
            List.nodup_cons.mpr ⟨fun e => (List.mem_cons.mp e).elim hxy hyT,
              List.nodup_cons.mpr ⟨hxT, hT⟩⟩
          have hlen2 : (x :: (c.erase y).erase m).length + 1 = k := by
            rw [List.length_cons, List.length_erase_of_mem hmy, List.length_erase_of_mem hy]
            have : 2 ≤ c.length := by
              have h1 := List.length_erase_of_mem hy
              have h2 : 0 < (c.erase y).length := List.length_pos_of_mem hmy
              omega
            omega
          have ex := (opt_exchange k xs m y (x :: (c.erase y).erase m) n1 n2
            (fun e => hym e.symm) hlen2).2 (hm y hy)
          have p1 : (x :: c.erase y).Perm (m :: x :: (c.erase y).erase m) :=
            ((List.perm_cons_erase hmy).cons x).trans (List.Perm.swap m x _)
          have p2 : (x :: c.erase m).Perm (y :: x :: (c.erase y).erase m) := by
            have q : (c.erase m).Perm (y :: (c.erase m).erase y) := List.perm_cons_erase hym'
            rw [List.erase_comm m y] at q
            exact (q.cons x).trans (List.Perm.swap y x _)
          rw [opt_perm k xs p1, opt_perm k xs p2]
          exact ex

/-! ## The headline theorems -/

/-- With capacity at least one, Belady's hits equal the offline optimum `opt`. -/
theorem belady_hits_eq_opt (k : Nat) (hk : 1 ≤ k) (r : List α) :
    hits k belady r = opt k [] r :=
  Nat.le_antisymm (hitsFrom_le_opt k hk belady r r 0 [] List.nodup_nil)
    (opt_le_hitsFrom_belady k hk r r 0 [] List.drop_zero List.nodup_nil (Nat.zero_le _))

/-- Belady's rule is optimal at every capacity `k ≥ 1` (see `hits_le_belady_hits`). -/
theorem hits_le_belady_hits_of_one_le (k : Nat) (hk : 1 ≤ k) (P : Policy α) (r : List α) :
    hits k P r ≤ hits k belady r := by
  rw [belady_hits_eq_opt k hk r]
  exact hitsFrom_le_opt k hk P r r 0 [] List.nodup_nil

/-- **Belady's rule is optimal at every capacity.** For every capacity `k`, every
demand-fetch policy `P` of the model (which may see the whole stream, future included) and
every request stream `r`, starting from an empty cache, `P` scores at most as many hits as
Belady's farthest-next-use rule. (At capacity `0` every policy scores `0`, see
`hits_zero`.) -/
theorem hits_le_belady_hits (k : Nat) (P : Policy α) (r : List α) :
    hits k P r ≤ hits k belady r := by
  cases k with
  | zero =>
    rw [hits_zero]
    exact Nat.zero_le _
  | succ k => exact hits_le_belady_hits_of_one_le (k + 1) (by omega) P r

/-- One more slot never hurts the optimum: from caches `c ⊆ d` (without duplicates) holding
at most `k` and `k + 1` blocks, `opt` at capacity `k + 1` from `d` is at least `opt` at
capacity `k` from `c`. -/
theorem opt_le_opt_succ (k : Nat) : ∀ (xs c d : List α), c.Nodup → d.Nodup →
    (∀ y ∈ c, y ∈ d) → c.length ≤ k → d.length ≤ k + 1 → opt k c xs ≤ opt (k + 1) d xs
  | [], _, _, _, _, _, _, _ => by simp [opt]
  | x :: xs, c, d, hc, hd, hsub, hck, hdk => by
    by_cases hx : x ∈ c
    · rw [opt_cons_of_mem hx, opt_cons_of_mem (hsub x hx)]
      have := opt_le_opt_succ k xs c d hc hd hsub hck hdk
      omega
    · -- the cache `c` misses; every choice it can make stays inside a choice of `d`
      have hcx : (x :: c).Nodup := List.nodup_cons.mpr ⟨hx, hc⟩
      have herase : ∀ y ∈ c, (x :: c.erase y).Nodup ∧ (x :: c.erase y).length ≤ k := by
        intro y hy
        refine ⟨List.nodup_cons.mpr ⟨fun e => hx (List.mem_of_mem_erase e), hc.erase y⟩, ?_⟩
        rw [List.length_cons, List.length_erase_of_mem hy]
        have : 0 < c.length := List.length_pos_of_mem hy
        omega
      -- a bound on the left side from a bound for every cache `c'` reachable in one step
      have hleft : ∀ m : Nat, (∀ c' : List α, c'.Nodup → c'.length ≤ k →
          (∀ y ∈ c', y = x ∨ y ∈ c) → opt k c' xs ≤ m) → opt k c (x :: xs) ≤ m := by
        intro m hm
        by_cases hlt : c.length < k
        · rw [opt_cons_of_lt hx hlt]
          exact hm _ hcx (by simp only [List.length_cons]; omega)
            (fun y hy => (List.mem_cons.mp hy).imp id id)
        · rw [opt_cons_of_full hx (by omega)]
          apply maxOf_le
          intro y hy
          exact hm _ (herase y hy).1 (herase y hy).2 (fun z hz =>
            (List.mem_cons.mp hz).imp id (fun e => List.mem_of_mem_erase e))
      by_cases hxd : x ∈ d
      · rw [opt_cons_of_mem hxd]
        apply hleft
        intro c' hc' hlen hmem
        have := opt_le_opt_succ k xs c' d hc' hd
          (fun y hy => (hmem y hy).elim (fun e => e ▸ hxd) (hsub y)) hlen hdk
        omega
      · by_cases hdlt : d.length < k + 1
        · rw [opt_cons_of_lt hxd hdlt]
          apply hleft
          intro c' hc' hlen hmem
          exact opt_le_opt_succ k xs c' (x :: d) hc' (List.nodup_cons.mpr ⟨hxd, hd⟩)
            (fun y hy => (hmem y hy).elim (fun e => e ▸ List.mem_cons_self)
              (fun h => List.mem_cons_of_mem x (hsub y h)))
            hlen (by simp only [List.length_cons]; omega)
        · -- `d` is full and larger than `c`: it holds a block `z` outside `c`; evict it
          have hz : ∃ z ∈ d, z ∉ c := by
            refine Classical.byContradiction fun hno => ?_
            have hall : ∀ y ∈ d, y ∈ c := fun y hy =>
              Classical.byContradiction fun hyc => hno ⟨y, hy, hyc⟩
            have := length_le_of_nodup_of_subset d c hd hall
            omega
          obtain ⟨z, hzd, hzc⟩ := hz
          rw [opt_cons_of_full hxd (by omega)]
          have hterm : opt (k + 1) (x :: d.erase z) xs ≤
              maxOf (fun y => opt (k + 1) (x :: d.erase y) xs) d :=
            le_maxOf (f := fun y => opt (k + 1) (x :: d.erase y) xs) hzd
          apply hleft
          intro c' hc' hlen hmem
          have hdz : (x :: d.erase z).Nodup :=
            List.nodup_cons.mpr ⟨fun e => hxd (List.mem_of_mem_erase e), hd.erase z⟩
          have hdzl : (x :: d.erase z).length ≤ k + 1 := by
            rw [List.length_cons, List.length_erase_of_mem hzd]
            omega
          have := opt_le_opt_succ k xs c' (x :: d.erase z) hc' hdz
            (fun y hy => (hmem y hy).elim (fun e => e ▸ List.mem_cons_self)
              (fun h => List.mem_cons_of_mem x
                ((List.mem_erase_of_ne (fun e : y = z => hzc (e ▸ h))).mpr (hsub y h))))
            hlen hdzl
          omega

/-- **Belady's hits grow with the capacity**, one slot at a time. -/
theorem belady_hits_le_succ (k : Nat) (r : List α) :
    hits k belady r ≤ hits (k + 1) belady r := by
  cases k with
  | zero => rw [hits_zero]; exact Nat.zero_le _
  | succ k =>
    rw [belady_hits_eq_opt (k + 1) (by omega) r, belady_hits_eq_opt (k + 1 + 1) (by omega) r]
    exact opt_le_opt_succ (k + 1) r [] [] List.nodup_nil List.nodup_nil (fun _ h => h)
      (Nat.zero_le _) (Nat.zero_le _)

/-- **Belady's hits are monotone in the capacity**: `k ≤ k'` implies
`hits k belady r ≤ hits k' belady r`. -/
theorem belady_hits_mono {k k' : Nat} (h : k ≤ k') (r : List α) :
    hits k belady r ≤ hits k' belady r := by
  induction h with
  | refl => exact Nat.le_refl _
  | step _ ih => exact Nat.le_trans ih (belady_hits_le_succ _ r)

/-! ## LRU: runs request by request -/

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

/-- At capacity `0` the cache stays empty: a miss stores nothing. -/
theorem cacheAt_zero (P : Policy α) (r : List α) : ∀ n, cacheAt 0 P r n = []
  | 0 => rfl
  | n + 1 => by
    cases h : r[n]? with
    | none => rw [cacheAt_succ_of_getElem?_eq_none h, cacheAt_zero P r n]
    | some x => rw [cacheAt_succ_of_getElem? h, cacheAt_zero P r n, step_zero]

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
    · rw [if_neg hlt, if_neg (Nat.succ_ne_zero k)]
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

/-- With capacity `k ≥ 1`, after the first `n` requests of `r`, LRU's cache is (up to order)
the `k` most recently requested distinct blocks (every capacity: `lru_cacheAt_perm`). -/
theorem lru_cacheAt_perm_of_one_le (k : Nat) (hk : 1 ≤ k) (r : List α) :
    ∀ n, (cacheAt k lru r n).Perm ((lruStack (r.take n).reverse).take k)
  | 0 => by simp [cacheAt, lruStack]
  | n + 1 => by
    have ih := lru_cacheAt_perm_of_one_le k hk r n
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

/-- **LRU's cache is the top of the LRU stack.** For every capacity `k`, after the first `n`
requests of `r`, LRU's cache is (up to order) the `k` most recently requested distinct
blocks (none at capacity `0`). -/
theorem lru_cacheAt_perm (k : Nat) (r : List α) (n : Nat) :
    (cacheAt k lru r n).Perm ((lruStack (r.take n).reverse).take k) := by
  cases k with
  | zero => simp [cacheAt_zero]
  | succ k => exact lru_cacheAt_perm_of_one_le (k + 1) (by omega) r n

/-- A block is in LRU's cache at capacity `k` after `n` requests iff it is among the top `k`
of the LRU stack. -/
theorem mem_lru_cacheAt_iff (k : Nat) (r : List α) (n : Nat) (y : α) :
    y ∈ cacheAt k lru r n ↔ y ∈ (lruStack (r.take n).reverse).take k :=
  (lru_cacheAt_perm k r n).mem_iff

/-! ## The stack property and stack distances -/

/-- **LRU is a stack algorithm (inclusion).** For every capacity `k`, every stream `r` and
every prefix length `n`, LRU's cache at capacity `k` is contained in its cache at capacity
`k + 1`. -/
theorem lru_cache_subset_succ (k : Nat) (r : List α) (n : Nat) :
    ∀ y ∈ cacheAt k lru r n, y ∈ cacheAt (k + 1) lru r n := by
  intro y hy
  rw [mem_lru_cacheAt_iff k r n y] at hy
  rw [mem_lru_cacheAt_iff (k + 1) r n y]
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

/-- At every capacity `k`, the request at position `j` hits in LRU's run iff its stack
distance is at most `k`. -/
theorem lru_hitAt_eq (k : Nat) (r : List α) (j : Nat) :
    hitAt k lru r j = (stackDistance r j).any (fun d => decide (d ≤ k)) := by
  cases hj : r[j]? with
  | none => simp [hitAt, stackDistance, hj]
  | some x =>
    have hp := mem_lru_cacheAt_iff k r j x
    rw [mem_take_iff_firstPos_lt] at hp
    by_cases hm : x ∈ lruStack (r.take j).reverse
    · simp only [hitAt, stackDistance, hj, hm, ↓reduceIte, Option.any, hp, true_and,
        decide_eq_decide]
      exact ⟨fun h => by omega, fun h => by omega⟩
    · simp only [hitAt, stackDistance, hj, hm, ↓reduceIte, Option.any, hp, false_and,
        decide_false]

/-- **LRU's hits are counted by stack distances** (Mattson et al.): at every capacity `k`,
LRU's hits on `r` are the number of positions of `r` whose stack distance is at most `k`
(stack distances are at least `1`, so none at capacity `0`). -/
theorem lru_hits_eq_countP_stackDistance_le (k : Nat) (r : List α) :
    hits k lru r = (List.range r.length).countP
      (fun i => (stackDistance r i).any (fun d => decide (d ≤ k))) := by
  rw [hits_eq_countP_hitAt]
  congr 1
  funext j
  exact lru_hitAt_eq k r j

end KVCache.Ceiling

end
