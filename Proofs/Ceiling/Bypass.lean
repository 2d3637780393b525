module

public import Proofs.Ceiling.Policies

/-!
# Belady with bypass is optimal at every capacity

The demand-fetch model of `Proofs.Ceiling.Cache` forces a missed block into the cache
(no bypass). Here a policy may also decline to store it.

* **The class.** A `BypassPolicy` chooses, on a miss in a full cache (`k` or more blocks),
  one block of `x :: c` to drop: the requested block `x` itself (position `0`: bypass, the
  cache is unchanged) or a cached block (position `j + 1`: evict `c[j]`, then store `x`).
  A hit keeps the cache; a miss with room stores `x`. Like `Policy` it sees the whole stream,
  so offline policies are included. At capacity `0` a miss can only drop `x`, so nothing is
  ever stored (`bhits_zero`).
* **It contains the no-bypass class.** `Policy.toBypass` never drops the requested block and
  scores exactly the hits of the no-bypass policy at every capacity (`bhits_toBypass`).
* **Belady with bypass** (`beladyBypass`): on a full miss, drop the block of `x :: c` whose
  next request lies farthest in the future (a block never requested again counts as
  farthest; on a tie the requested block is dropped, i.e. not stored).

What is proved, for every capacity `k`, every stream `r`, from an empty cache:

* `bhits_le_beladyBypass_bhits`: every bypass policy scores at most Belady-with-bypass.
* `hits_le_beladyBypass_bhits`, `belady_hits_le_beladyBypass_bhits`: the no-bypass optimum
  (Belady, `Proofs.Ceiling.Policies`) is at most the bypass optimum.
* `bypass_gains_example`: the inequality can be strict: on `[1, 2, 1]` at capacity `1`,
  Belady with bypass scores `1` hit while every no-bypass policy scores `0`.
* `bhits_add_distinct_le_length`: the demand-fetch ceiling `hits + distinct r ≤ |r|` holds in
  the bypass class too, and `beladyBypass_bhits_eq_belady_hits_of_distinct_le`: with capacity
  at least `distinct r` both optima are equal (both reach the ceiling).

### The proof

`bopt k c xs` is the most hits any sequence of choices scores on `xs` from cache `c`: on a
full miss the best of dropping any block of `x :: c`. Every bypass policy's run is one such
sequence (`bhitsFrom_le_bopt`). The exchange lemma of `Proofs.Ceiling.Policies` (after van
Roy, IPL 2007), proved there once for every optimum of this best-choice kind
(`exchange_of_best_choice`), holds with the extra bypass option (`bopt_exchange`): for
full caches `a :: S` and `b :: S`, `a :: S` is worth at most one hit more, and no more when
`b` is requested no later than `a`. So dropping the block of `x :: c` requested farthest in
the future keeps a cache worth the most (`bopt_erase_le_of_firstPos`), and Belady with
bypass attains `bopt` (`bopt_le_bhitsFrom_beladyBypass`).

Limits: bypass is allowed only on a miss in a full cache (with room, the block is stored);
blocks are counted, not sized; hits only (no latency or bandwidth).
-/

@[expose] public section

namespace KVCache.Ceiling

open KVCache.Common

universe u

variable {α : Type u} [DecidableEq α]

/-- A replacement policy that may decline to store a missed block. On a miss of block `x`,
requested at step `i` of the stream `r`, in a full cache `c`, `victim r i c x` (taken modulo
`c.length + 1`) is a position in `x :: c`: `0` drops `x` itself (bypass), `j + 1` evicts
`c[j]` and stores `x`.

It differs from `Policy` by that one option (`Policy.toBypass` embeds `Policy` into it); the
step is fixed by `bstep`. `KVCache.Placement.beladyBypassPolicy` (`Proofs.Placement.Optimal`)
turns Belady with bypass into a `KVCache.Placement.Policy`, the placement result's class. -/
structure BypassPolicy (α : Type u) where
  /-- Position in `x :: c` of the block to drop (taken modulo `c.length + 1`). -/
  victim : List α → Nat → List α → α → Nat

-- noncomputable: `∈` and `List.eraseIdx` have no compiled code in the registry Lean.
/-- One step with bypass of a cache of capacity `k` on request `x` at step `i` of `r`: a hit
keeps the cache; a miss with room stores `x`; a miss in a full cache drops the policy's
choice among `x :: c` (dropping `x` leaves the cache unchanged). -/
noncomputable def bstep (k : Nat) (P : BypassPolicy α) (r : List α) (i : Nat) (c : List α)
    (x : α) : List α :=
  if x ∈ c then c
  else if c.length < k then x :: c
  else (x :: c).eraseIdx (P.victim r i c x % (c.length + 1))

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- Hits of the bypass run over the remaining requests `xs`, from step `i` with cache `c`. -/
noncomputable def bhitsFrom (k : Nat) (P : BypassPolicy α) (r : List α) :
    Nat → List α → List α → Nat
  | _, _, [] => 0
  | i, c, x :: xs => (if x ∈ c then 1 else 0) + bhitsFrom k P r (i + 1) (bstep k P r i c x) xs

-- noncomputable: calls `bhitsFrom`.
/-- Hits of the bypass policy `P` with capacity `k` on the stream `r`, from an empty
cache. -/
noncomputable def bhits (k : Nat) (P : BypassPolicy α) (r : List α) : Nat :=
  bhitsFrom k P r 0 [] r

-- noncomputable: `List.length` has no compiled code in the registry Lean.
/-- A no-bypass policy as a bypass policy: it never drops the requested block and evicts the
block the policy names. -/
noncomputable def Policy.toBypass (P : Policy α) : BypassPolicy α where
  victim r i c x := P.victim r i c x % c.length + 1

-- noncomputable: `List.drop` has no compiled code in the registry Lean.
/-- Belady with bypass: on a miss in a full cache, drop the block of `x :: c` (the requested
block or a cached one) whose next request lies farthest in the future; on a tie the requested
block is dropped. -/
noncomputable def beladyBypass : BypassPolicy α where
  victim r i c x := (argmaxBy (fun y => firstPos y (r.drop (i + 1))) (x :: c)).1

-- noncomputable: `∈` and `List.erase` have no compiled code in the registry Lean.
/-- `bopt k c xs`: the most hits that any sequence of choices with bypass scores on the
requests `xs` from cache contents `c` at capacity `k` (a hit keeps the cache, a miss with room
stores the block, a miss in a full cache drops any one block of `x :: c`). -/
noncomputable def bopt (k : Nat) : List α → List α → Nat
  | _, [] => 0
  | c, x :: xs =>
    if x ∈ c then 1 + bopt k c xs
    else if c.length < k then bopt k (x :: c) xs
    else maxOf (fun y => bopt k ((x :: c).erase y) xs) (x :: c)

/-! ## Small lemmas -/

/-- A block in the cache after a bypass step was either the requested block or already
cached. -/
theorem mem_bstep {k : Nat} {P : BypassPolicy α} {r : List α} {i : Nat} {c : List α}
    {x y : α} (h : y ∈ bstep k P r i c x) : y = x ∨ y ∈ c := by
  unfold bstep at h
  by_cases hx : x ∈ c
  · simp only [hx, if_true] at h
    exact Or.inr h
  · by_cases hk : c.length < k
    · simp only [hx, hk, if_true, if_false] at h
      exact List.mem_cons.mp h
    · simp only [hx, hk, if_false] at h
      exact List.mem_cons.mp (List.mem_of_mem_eraseIdx h)

/-- A bypass step never leaves more than `k` blocks in a cache that held at most `k`. -/
theorem length_bstep_le (k : Nat) (P : BypassPolicy α) (r : List α) (i : Nat) (c : List α)
    (x : α) (hc : c.length ≤ k) : (bstep k P r i c x).length ≤ k := by
  unfold bstep
  by_cases hx : x ∈ c
  · simp only [hx, if_true]
    exact hc
  · by_cases hk : c.length < k
    · simp only [hx, hk, if_true, if_false, List.length_cons]
      omega
    · simp only [hx, hk, if_false]
      have hlt : P.victim r i c x % (c.length + 1) < (x :: c).length :=
        Nat.mod_lt _ (by omega)
      rw [List.length_eraseIdx_of_lt hlt, List.length_cons]
      omega

/-- At capacity `0` a bypass step from an empty cache leaves it empty. -/
theorem bstep_zero_nil (P : BypassPolicy α) (r : List α) (i : Nat) (x : α) :
    bstep 0 P r i [] x = [] := by
  simp [bstep, Nat.mod_one]

/-- A bypass run at capacity `0` from an empty cache scores no hit. -/
theorem bhitsFrom_zero (P : BypassPolicy α) (r : List α) : ∀ (xs : List α) (i : Nat),
    bhitsFrom 0 P r i [] xs = 0
  | [], _ => by simp [bhitsFrom]
  | x :: xs, i => by
    simp only [bhitsFrom, bstep_zero_nil, bhitsFrom_zero P r xs (i + 1)]
    simp

/-- **Capacity `0` stores nothing, with bypass too**: every bypass policy scores `0` hits. -/
theorem bhits_zero (P : BypassPolicy α) (r : List α) : bhits 0 P r = 0 :=
  bhitsFrom_zero P r r 0

/-! ## The no-bypass class inside the bypass class -/

/-- At a capacity `k ≥ 1`, the bypass step of `P.toBypass` is the no-bypass step of `P`. -/
theorem bstep_toBypass {k : Nat} (hk : k ≠ 0) (P : Policy α) (r : List α) (i : Nat)
    (c : List α) (x : α) : bstep k P.toBypass r i c x = step k P r i c x := by
  unfold bstep step
  by_cases hx : x ∈ c
  · simp only [hx, if_true]
  · by_cases hlt : c.length < k
    · simp only [hx, hlt, if_true, if_false]
    · simp only [hx, hlt, hk, if_false, Policy.toBypass]
      have hpos : 0 < c.length := by omega
      have hm : P.victim r i c x % c.length < c.length := Nat.mod_lt _ hpos
      rw [Nat.mod_eq_of_lt (by omega : P.victim r i c x % c.length + 1 < c.length + 1),
        List.eraseIdx_cons_succ]

/-- At a capacity `k ≥ 1`, runs of `P.toBypass` and of `P` score the same hits. -/
theorem bhitsFrom_toBypass {k : Nat} (hk : k ≠ 0) (P : Policy α) (r : List α) :
    ∀ (xs : List α) (i : Nat) (c : List α),
      bhitsFrom k P.toBypass r i c xs = hitsFrom k P r i c xs
  | [], _, _ => by simp [bhitsFrom, hitsFrom]
  | x :: xs, i, c => by
    simp only [bhitsFrom, hitsFrom, bstep_toBypass hk,
      bhitsFrom_toBypass hk P r xs (i + 1)]

/-- **Every no-bypass policy is a bypass policy**: at every capacity `k`, `P.toBypass` scores
exactly the hits of `P` on every stream. -/
theorem bhits_toBypass (k : Nat) (P : Policy α) (r : List α) :
    bhits k P.toBypass r = hits k P r := by
  by_cases hk : k = 0
  · subst hk
    rw [bhits_zero, hits_zero]
  · exact bhitsFrom_toBypass hk P r r 0 []

/-! ## The ceiling holds with bypass -/

/-- The counting lemma with bypass: if every cached block has been seen, the hits on the
remaining requests plus their first occurrences (relative to `seen`) are at most their
number. -/
theorem bhitsFrom_add_distinctFrom_le (k : Nat) (P : BypassPolicy α) (r : List α) :
    ∀ (xs : List α) (i : Nat) (c seen : List α), (∀ y, y ∈ c → y ∈ seen) →
      bhitsFrom k P r i c xs + distinctFrom seen xs ≤ xs.length
  | [], _, _, _, _ => by simp [bhitsFrom, distinctFrom]
  | x :: xs, i, c, seen, hsub => by
    by_cases hxs : x ∈ seen
    · have ih := bhitsFrom_add_distinctFrom_le k P r xs (i + 1) (bstep k P r i c x) seen
        (fun y hy => by
          rcases mem_bstep hy with h | h
          · subst h; exact hxs
          · exact hsub y h)
      have hd : distinctFrom seen (x :: xs) = distinctFrom seen xs := by
        simp [distinctFrom, hxs]
      have hh : bhitsFrom k P r i c (x :: xs)
          = (if x ∈ c then 1 else 0) + bhitsFrom k P r (i + 1) (bstep k P r i c x) xs := by
        simp [bhitsFrom]
      rw [hd, hh, List.length_cons]
      split <;> omega
    · have hxc : x ∉ c := fun h => hxs (hsub x h)
      have ih := bhitsFrom_add_distinctFrom_le k P r xs (i + 1) (bstep k P r i c x)
        (x :: seen)
        (fun y hy => by
          rcases mem_bstep hy with h | h
          · subst h; exact List.mem_cons_self
          · exact List.mem_cons_of_mem _ (hsub y h))
      have hd : distinctFrom seen (x :: xs) = distinctFrom (x :: seen) xs + 1 := by
        simp [distinctFrom, hxs]
      have hh : bhitsFrom k P r i c (x :: xs) =
          bhitsFrom k P r (i + 1) (bstep k P r i c x) xs := by
        simp [bhitsFrom, hxc]
      rw [hd, hh, List.length_cons]
      omega

/-- **The hit ceiling with bypass.** For every bypass policy, every capacity and every
stream, hits plus distinct blocks is at most the stream length. -/
theorem bhits_add_distinct_le_length (k : Nat) (P : BypassPolicy α) (r : List α) :
    bhits k P r + distinct r ≤ r.length :=
  bhitsFrom_add_distinctFrom_le k P r r 0 [] [] (fun _ h => h)

/-! ## The optimum with bypass -/

/-- `bopt` on a hit. -/
theorem bopt_cons_of_mem {k : Nat} {c xs : List α} {x : α} (h : x ∈ c) :
    bopt k c (x :: xs) = 1 + bopt k c xs := by
  simp only [bopt, h, ↓reduceIte]

/-- `bopt` on a miss with room in the cache. -/
theorem bopt_cons_of_lt {k : Nat} {c xs : List α} {x : α} (h : x ∉ c) (hk : c.length < k) :
    bopt k c (x :: xs) = bopt k (x :: c) xs := by
  simp only [bopt, h, hk, ↓reduceIte]

/-- `bopt` on a miss in a full cache: the best block of `x :: c` to drop. -/
theorem bopt_cons_of_full {k : Nat} {c xs : List α} {x : α} (h : x ∉ c)
    (hk : k ≤ c.length) :
    bopt k c (x :: xs) = maxOf (fun y => bopt k ((x :: c).erase y) xs) (x :: c) := by
  simp only [bopt, h, Nat.not_lt.mpr hk, ↓reduceIte]

/-- `bopt` depends on the cache contents only, not on their order. -/
theorem bopt_perm (k : Nat) : ∀ (xs : List α) {c d : List α}, c.Perm d →
    bopt k c xs = bopt k d xs
  | [], _, _, _ => by simp [bopt]
  | x :: xs, c, d, h => by
    by_cases hx : x ∈ c
    · rw [bopt_cons_of_mem hx, bopt_cons_of_mem (h.mem_iff.mp hx), bopt_perm k xs h]
    · have hx' : x ∉ d := fun e => hx (h.mem_iff.mpr e)
      have hl := h.length_eq
      by_cases hk : c.length < k
      · rw [bopt_cons_of_lt hx hk, bopt_cons_of_lt hx' (by omega), bopt_perm k xs (h.cons x)]
      · rw [bopt_cons_of_full hx (by omega), bopt_cons_of_full hx' (by omega)]
        have hf : (fun y => bopt k ((x :: c).erase y) xs) =
            (fun y => bopt k ((x :: d).erase y) xs) :=
          funext fun y => bopt_perm k xs ((h.cons x).erase y)
        rw [hf]
        exact Nat.le_antisymm
          (maxOf_le fun y hy =>
            le_maxOf (f := fun y => bopt k ((x :: d).erase y) xs) ((h.cons x).mem_iff.mp hy))
          (maxOf_le fun y hy =>
            le_maxOf (f := fun y => bopt k ((x :: d).erase y) xs) ((h.cons x).mem_iff.mpr hy))

/-- `bopt` on a miss in a full cache, in the form of `exchange_of_best_choice`: the best of
bypass (the cache stays `c`) and of evicting a cached block. -/
theorem bopt_cons_of_full_eq_max {k : Nat} {c xs : List α} {x : α} (h : x ∉ c)
    (hk : k ≤ c.length) : bopt k c (x :: xs) =
      max (if true then bopt k c xs else 0) (maxOf (fun y => bopt k (x :: c.erase y) xs) c) := by
  rw [bopt_cons_of_full h hk, if_pos (rfl : true = true)]
  show max (bopt k ((x :: c).erase x) xs) (maxOf (fun y => bopt k ((x :: c).erase y) xs) c) = _
  rw [List.erase_cons_head]
  congr 1
  exact maxOf_congr fun y hy => by
    show bopt k ((x :: c).erase y) xs = bopt k (x :: c.erase y) xs
    rw [erase_cons_of_ne c (fun e : x = y => h (e ▸ hy))]

/-- **The exchange lemma with bypass.** For two full caches `a :: S` and `b :: S` (capacity
`k = |S| + 1`, no duplicates) that differ in one block, `a :: S` is worth at most one hit
more than `b :: S`, and no more when `b` is requested no later than `a`
(`exchange_of_best_choice`, with bypass). -/
theorem bopt_exchange (k : Nat) : ∀ (xs : List α) (a b : α) (S : List α),
    (a :: S).Nodup → (b :: S).Nodup → a ≠ b → S.length + 1 = k →
    bopt k (a :: S) xs ≤ bopt k (b :: S) xs + 1 ∧
      (firstPos b xs ≤ firstPos a xs → bopt k (a :: S) xs ≤ bopt k (b :: S) xs) :=
  exchange_of_best_choice (bopt k) k true (fun _ => by simp [bopt])
    (fun _ _ _ h => bopt_cons_of_mem h) (fun _ _ _ h hk => bopt_cons_of_full_eq_max h hk)
    (fun xs _ _ h => bopt_perm k xs h)

/-! ## Every bypass policy is bounded by `bopt`; Belady with bypass attains it -/

/-- Every bypass policy's run, from a duplicate-free cache, scores at most `bopt` on the
remaining requests, at every capacity. -/
theorem bhitsFrom_le_bopt (k : Nat) (P : BypassPolicy α) (r : List α) :
    ∀ (xs : List α) (i : Nat) (c : List α), c.Nodup → bhitsFrom k P r i c xs ≤ bopt k c xs
  | [], _, _, _ => by simp [bhitsFrom]
  | x :: xs, i, c, hc => by
    by_cases hx : x ∈ c
    · have hstep : bstep k P r i c x = c := by simp [bstep, hx]
      have hh : bhitsFrom k P r i c (x :: xs) = 1 + bhitsFrom k P r (i + 1) c xs := by
        simp [bhitsFrom, hx, hstep]
      rw [hh, bopt_cons_of_mem hx]
      have := bhitsFrom_le_bopt k P r xs (i + 1) c hc
      omega
    · have hL : (x :: c).Nodup := List.nodup_cons.mpr ⟨hx, hc⟩
      by_cases hlt : c.length < k
      · have hstep : bstep k P r i c x = x :: c := by simp [bstep, hx, hlt]
        have hh : bhitsFrom k P r i c (x :: xs) = bhitsFrom k P r (i + 1) (x :: c) xs := by
          simp [bhitsFrom, hx, hstep]
        rw [hh, bopt_cons_of_lt hx hlt]
        exact bhitsFrom_le_bopt k P r xs (i + 1) (x :: c) hL
      · have hj : P.victim r i c x % (c.length + 1) < (x :: c).length :=
          Nat.mod_lt _ (by simp)
        have hstep : bstep k P r i c x =
            (x :: c).erase ((x :: c)[P.victim r i c x % (c.length + 1)]'hj) := by
          simp only [bstep, hx, hlt, ↓reduceIte]
          rw [eraseIdx_eq_erase_getElem (x :: c) _ hj hL]
        have hh : bhitsFrom k P r i c (x :: xs) = bhitsFrom k P r (i + 1)
            ((x :: c).erase ((x :: c)[P.victim r i c x % (c.length + 1)]'hj)) xs := by
          simp only [bhitsFrom, hx, ↓reduceIte, hstep, Nat.zero_add]
        rw [hh, bopt_cons_of_full hx (by omega)]
        exact Nat.le_trans (bhitsFrom_le_bopt k P r xs (i + 1) _ (hL.erase _))
          (le_maxOf (f := fun y => bopt k ((x :: c).erase y) xs) (List.getElem_mem hj))

/-- In a full choice among the blocks of `L` (no duplicates, `k + 1` of them), dropping a
block `m` requested no earlier than `y` leaves a cache worth at least as much as dropping
`y`. -/
theorem bopt_erase_le_of_firstPos (k : Nat) (xs L : List α) (hL : L.Nodup)
    (hlen : L.length = k + 1) {y m : α} (hy : y ∈ L) (hm : m ∈ L) (hym : y ≠ m)
    (hf : firstPos y xs ≤ firstPos m xs) : bopt k (L.erase y) xs ≤ bopt k (L.erase m) xs := by
  have hmy : m ∈ L.erase y := (List.mem_erase_of_ne (fun e => hym e.symm)).mpr hm
  have hym' : y ∈ L.erase m := (List.mem_erase_of_ne hym).mpr hy
  have p1 : (L.erase y).Perm (m :: (L.erase y).erase m) := List.perm_cons_erase hmy
  have p2 : (L.erase m).Perm (y :: (L.erase y).erase m) := by
    have q : (L.erase m).Perm (y :: (L.erase m).erase y) := List.perm_cons_erase hym'
    rwa [List.erase_comm m y] at q
  have n1 : (m :: (L.erase y).erase m).Nodup := p1.nodup_iff.mp (hL.erase y)
  have n2 : (y :: (L.erase y).erase m).Nodup := p2.nodup_iff.mp (hL.erase m)
  have hl : ((L.erase y).erase m).length + 1 = k := by
    have h1 := p1.length_eq
    rw [List.length_erase_of_mem hy, List.length_cons] at h1
    omega
  rw [bopt_perm k xs p1, bopt_perm k xs p2]
  exact (bopt_exchange k xs m y _ n1 n2 (fun e => hym e.symm) hl).2 hf

/-- Belady's run with bypass, from a duplicate-free cache holding at most `k` blocks and
positioned at the remaining requests of its stream, scores at least `bopt`. -/
theorem bopt_le_bhitsFrom_beladyBypass (k : Nat) (r : List α) :
    ∀ (xs : List α) (i : Nat) (c : List α), r.drop i = xs → c.Nodup → c.length ≤ k →
      bopt k c xs ≤ bhitsFrom k beladyBypass r i c xs
  | [], _, _, _, _, _ => by simp [bopt]
  | x :: xs, i, c, hr, hc, hck => by
    have hr' : r.drop (i + 1) = xs := by rw [← List.tail_drop, hr]; rfl
    by_cases hx : x ∈ c
    · have hstep : bstep k beladyBypass r i c x = c := by simp [bstep, hx]
      have hh : bhitsFrom k beladyBypass r i c (x :: xs) =
          1 + bhitsFrom k beladyBypass r (i + 1) c xs := by
        simp [bhitsFrom, hx, hstep]
      rw [hh, bopt_cons_of_mem hx]
      have := bopt_le_bhitsFrom_beladyBypass k r xs (i + 1) c hr' hc hck
      omega
    · have hL : (x :: c).Nodup := List.nodup_cons.mpr ⟨hx, hc⟩
      by_cases hlt : c.length < k
      · have hstep : bstep k beladyBypass r i c x = x :: c := by simp [bstep, hx, hlt]
        have hh : bhitsFrom k beladyBypass r i c (x :: xs) =
            bhitsFrom k beladyBypass r (i + 1) (x :: c) xs := by
          simp [bhitsFrom, hx, hstep]
        rw [hh, bopt_cons_of_lt hx hlt]
        exact bopt_le_bhitsFrom_beladyBypass k r xs (i + 1) (x :: c) hr' hL
          (by simp only [List.length_cons]; omega)
      · have hne : (x :: c) ≠ [] := List.cons_ne_nil x c
        rcases hp : argmaxBy (fun y => firstPos y (r.drop (i + 1))) (x :: c) with ⟨j, s⟩
        obtain ⟨hmax, hidx⟩ := argmaxBy_spec _ (x :: c) j s hp
        obtain ⟨hj0, hval⟩ := hidx hne
        -- the dropped block `(x :: c)[j]` is requested farthest in the future
        have hm : ∀ y ∈ x :: c, firstPos y xs ≤ firstPos ((x :: c)[j]'hj0) xs := by
          intro y hy
          have h1 := hmax y hy
          rw [← hval] at h1
          simp only [hr'] at h1
          exact h1
        have hj1 : j < c.length + 1 := by simpa using hj0
        have hstep : bstep k beladyBypass r i c x = (x :: c).erase ((x :: c)[j]'hj0) := by
          simp only [bstep, hx, hlt, ↓reduceIte, beladyBypass, hp]
          rw [Nat.mod_eq_of_lt hj1, eraseIdx_eq_erase_getElem (x :: c) j hj0 hL]
        generalize hmdef : (x :: c)[j]'hj0 = m at hm hstep
        have hmc : m ∈ x :: c := by rw [← hmdef]; exact List.getElem_mem hj0
        have hh : bhitsFrom k beladyBypass r i c (x :: xs) =
            bhitsFrom k beladyBypass r (i + 1) ((x :: c).erase m) xs := by
          simp only [bhitsFrom, hx, ↓reduceIte, hstep, Nat.zero_add]
        have hlen : ((x :: c).erase m).length ≤ k := by
          rw [List.length_erase_of_mem hmc, List.length_cons]
          omega
        rw [hh, bopt_cons_of_full hx (by omega)]
        refine Nat.le_trans ?_
          (bopt_le_bhitsFrom_beladyBypass k r xs (i + 1) _ hr' (hL.erase m) hlen)
        apply maxOf_le
        intro y hy
        by_cases hym : y = m
        · rw [hym]; exact Nat.le_refl _
        · exact bopt_erase_le_of_firstPos k xs (x :: c) hL
            (by simp only [List.length_cons]; omega) hy hmc hym (hm y hy)

/-! ## The headline theorems -/

/-- Belady with bypass attains the optimum with bypass `bopt`, at every capacity. -/
theorem beladyBypass_bhits_eq_bopt (k : Nat) (r : List α) :
    bhits k beladyBypass r = bopt k [] r :=
  Nat.le_antisymm (bhitsFrom_le_bopt k beladyBypass r r 0 [] List.nodup_nil)
    (bopt_le_bhitsFrom_beladyBypass k r r 0 [] List.drop_zero List.nodup_nil (Nat.zero_le _))

/-- **Belady with bypass is optimal at every capacity.** For every capacity `k`, every
policy `P` that may decline to store a missed block (online or offline) and every request
stream `r`, from an empty cache, `P` scores at most as many hits as Belady with bypass
(drop the block of the cache and the requested one whose next request is farthest). -/
theorem bhits_le_beladyBypass_bhits (k : Nat) (P : BypassPolicy α) (r : List α) :
    bhits k P r ≤ bhits k beladyBypass r := by
  rw [beladyBypass_bhits_eq_bopt]
  exact bhitsFrom_le_bopt k P r r 0 [] List.nodup_nil

/-- Every no-bypass policy, at every capacity and on every stream, scores at most Belady
with bypass. -/
theorem hits_le_beladyBypass_bhits (k : Nat) (P : Policy α) (r : List α) :
    hits k P r ≤ bhits k beladyBypass r := by
  rw [← bhits_toBypass]
  exact bhits_le_beladyBypass_bhits k _ r

/-- **The no-bypass optimum is at most the bypass optimum**: at every capacity and on every
stream, Belady (no bypass) scores at most Belady with bypass. -/
theorem belady_hits_le_beladyBypass_bhits (k : Nat) (r : List α) :
    hits k belady r ≤ bhits k beladyBypass r :=
  hits_le_beladyBypass_bhits k belady r

/-- **Where they are equal**: with capacity at least the number of distinct blocks, Belady
with and without bypass both reach the ceiling `r.length - distinct r`. -/
theorem beladyBypass_bhits_eq_belady_hits_of_distinct_le (k : Nat) (r : List α)
    (hk : distinct r ≤ k) :
    bhits k beladyBypass r = hits k belady r ∧ hits k belady r = r.length - distinct r := by
  have h1 := bhits_add_distinct_le_length k (beladyBypass : BypassPolicy α) r
  have h2 := belady_hits_le_beladyBypass_bhits k r
  have h3 := hits_add_distinct_eq_of_distinct_le k (belady : Policy α) r hk
  omega

/-- **Bypass can gain.** On the stream `[1, 2, 1]` at capacity `1`, Belady with bypass
scores `1` hit (it does not store `2`), while every no-bypass policy scores `0`. -/
theorem bypass_gains_example :
    bhits 1 beladyBypass ([1, 2, 1] : List Nat) = 1 ∧
      ∀ P : Policy Nat, hits 1 P [1, 2, 1] = 0 := by
  have hb : hits 1 (belady : Policy Nat) [1, 2, 1] = 0 := by decide +kernel
  refine ⟨by decide +kernel, fun P => ?_⟩
  have := hits_le_belady_hits 1 P [1, 2, 1]
  omega

end KVCache.Ceiling

end
