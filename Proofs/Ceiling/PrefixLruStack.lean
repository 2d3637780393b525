module

public import Proofs.Ceiling.PrefixLru

/-!
# Radix LRU keeps the top of the LRU stack, at every capacity

Radix LRU (`radixLruStep`, `Proofs.Ceiling.PrefixLru`) stores a request's missing tail and then
evicts the least recently used leaf until at most `k` blocks are cached. Recency is the LRU
stack (`lruStack`) of the touches `H`, most recent first, each request's blocks touched tail
first (its first block is the most recent).

* **Hypotheses.** Chained ids: one function `parent` (no id follows two different
  predecessors) and every request follows it (`Chained`); no request repeats a block.
* `parentsBefore_append`: then in the touches every block's parent is touched more recently
  than the block (`ParentsBefore`), so the least recently used cached block is always a leaf.
* `radixLruStep_mem_iff`: so radix LRU's cache after a request is exactly (as a set) the top
  `k` of the LRU stack of the touches so far, at every capacity `k`, below the longest request
  included. `stackCaches` lists those tops, request by request.
* `runHits_radixLru_eq_stackCaches`: radix LRU's prefix hits equal those of the stack tops; the
  tops at capacity `k` are contained in those at `k + 1` (`List.take` of one stack), so radix
  LRU is a stack algorithm and its prefix hits grow with the capacity
  (`runHits_stackCaches_le_succ`).

Flat LRU's cache is the top `k` of the LRU stack of its history (`lru_cacheAt_perm`,
`Proofs.Ceiling.Policies`); over the touches taken tail first that history is the one here.
-/

@[expose] public section

namespace KVCache.Ceiling

open KVCache.Common

universe u

variable {α : Type u} [DecidableEq α]

/-! ## `firstPos` -/

/-- A block of `l` lies at a position below `l.length`. -/
theorem firstPos_lt_length_of_mem {y : α} : ∀ {l : List α}, y ∈ l → firstPos y l < l.length
  | [], h => by simp at h
  | a :: t, h => by
    by_cases hay : a = y
    · simp [firstPos, hay]
    · have ht : y ∈ t := (List.mem_cons.mp h).resolve_left (fun e => hay e.symm)
      have := firstPos_lt_length_of_mem ht
      simp only [firstPos, hay, ↓reduceIte, List.length_cons]
      omega

/-- Two blocks of `l` at the same first position are equal. -/
theorem eq_of_firstPos_eq : ∀ {l : List α} {y z : α}, y ∈ l → z ∈ l →
    firstPos y l = firstPos z l → y = z
  | [], _, _, hy, _, _ => by simp at hy
  | a :: t, y, z, hy, hz, h => by
    simp only [firstPos] at h
    by_cases hay : a = y
    · by_cases haz : a = z
      · exact hay.symm.trans haz
      · rw [if_pos hay, if_neg haz] at h
        omega
    · by_cases haz : a = z
      · rw [if_neg hay, if_pos haz] at h
        omega
      · rw [if_neg hay, if_neg haz] at h
        exact eq_of_firstPos_eq ((List.mem_cons.mp hy).resolve_left (fun e => hay e.symm))
          ((List.mem_cons.mp hz).resolve_left (fun e => haz e.symm)) (by omega)

/-- In a list pairwise related by `R`, a block that comes first is related to a later one. -/
theorem rel_of_firstPos_lt {R : α → α → Prop} : ∀ {l : List α} {y z : α}, l.Pairwise R →
    z ∈ l → firstPos y l < firstPos z l → R y z
  | [], _, _, _, hz, _ => by simp at hz
  | a :: t, y, z, hp, hz, h => by
    rw [List.pairwise_cons] at hp
    simp only [firstPos] at h
    by_cases hay : a = y
    · by_cases haz : a = z
      · rw [if_pos hay, if_pos haz] at h
        omega
      · have hzt : z ∈ t := (List.mem_cons.mp hz).resolve_left (fun e => haz e.symm)
        rw [← hay]
        exact hp.1 z hzt
    · by_cases haz : a = z
      · rw [if_neg hay, if_pos haz] at h
        omega
      · rw [if_neg hay, if_neg haz] at h
        exact rel_of_firstPos_lt hp.2
          ((List.mem_cons.mp hz).resolve_left (fun e => haz e.symm)) (by omega)

/-- Removing another block moves a block at most one position up. -/
theorem firstPos_le_firstPos_erase_add_one {x y : α} (hyx : y ≠ x) : ∀ l : List α,
    firstPos y l ≤ firstPos y (l.erase x) + 1
  | [] => by simp [firstPos]
  | a :: t => by
    by_cases hax : a = x
    · rw [hax, List.erase_cons_head]
      simp [firstPos, Ne.symm hyx]
    · rw [erase_cons_of_ne t hax]
      by_cases hay : a = y
      · simp [firstPos, hay]
      · have := firstPos_le_firstPos_erase_add_one hyx t
        simp only [firstPos, hay, ↓reduceIte]
        omega

/-- A block outside `q` lies no higher in the LRU stack of `q ++ H` than in that of `H`. -/
theorem firstPos_lruStack_le_append {y : α} (H : List α) : ∀ q : List α, y ∉ q →
    firstPos y (lruStack H) ≤ firstPos y (lruStack (q ++ H))
  | [], _ => Nat.le_refl _
  | x :: q, h => by
    have hyx : y ≠ x := fun e => h (e ▸ List.mem_cons_self)
    have ih := firstPos_lruStack_le_append H q (fun e => h (List.mem_cons_of_mem x e))
    have h1 := firstPos_le_firstPos_erase_add_one hyx (lruStack (q ++ H))
    simp only [List.cons_append, lruStack, firstPos, Ne.symm hyx, ↓reduceIte]
    omega

/-- The first position of a block of `q` in `q ++ H` is its first position in `q`. -/
theorem firstPos_append_of_mem {y : α} (H : List α) : ∀ {q : List α}, y ∈ q →
    firstPos y (q ++ H) = firstPos y q
  | [], h => by simp at h
  | a :: t, h => by
    by_cases hay : a = y
    · simp [firstPos, hay]
    · have ht : y ∈ t := (List.mem_cons.mp h).resolve_left (fun e => hay e.symm)
      simp only [List.cons_append, firstPos, hay, ↓reduceIte, firstPos_append_of_mem H ht]

/-- The first position of a block outside `q` in `q ++ H` is `q.length` more than in `H`. -/
theorem firstPos_append_of_not_mem {y : α} (H : List α) : ∀ {q : List α}, y ∉ q →
    firstPos y (q ++ H) = q.length + firstPos y H
  | [], _ => by simp
  | a :: t, h => by
    have hay : a ≠ y := fun e => h (e ▸ List.mem_cons_self)
    have ih := firstPos_append_of_not_mem H (fun e => h (List.mem_cons_of_mem a e))
    simp only [List.cons_append, firstPos, hay, ↓reduceIte, ih, List.length_cons]
    omega

/-! ## Chained touches: parents are more recent -/

/-- `ParentsBefore parent H`: the parent of every block of the touches `H` (most recent first)
is in `H`, touched more recently (at a smaller first position). -/
def ParentsBefore (parent : α → Option α) (H : List α) : Prop :=
  ∀ z ∈ H, ∀ p, parent z = some p → p ∈ H ∧ firstPos p H < firstPos z H

/-- In a request chained after `o`, a block's parent comes before it in the request, or is
`o` for its first block. -/
theorem parent_before_of_chainedAfter {parent : α → Option α} : ∀ {o : Option α}
    {q : List α}, ChainedAfter parent o q → ∀ z ∈ q, ∀ p, parent z = some p →
      (p ∈ q ∧ firstPos p q < firstPos z q) ∨ o = some p
  | _, [], _, z, hz, _, _ => by simp at hz
  | _, x :: xs, ⟨hx, hxs⟩, z, hz, p, hp => by
    by_cases hxz : x = z
    · right
      rw [← hx, hxz, hp]
    · have hzs : z ∈ xs := (List.mem_cons.mp hz).resolve_left (fun e => hxz e.symm)
      left
      rcases parent_before_of_chainedAfter hxs z hzs p hp with ⟨hpm, hlt⟩ | ho
      · refine ⟨List.mem_cons_of_mem x hpm, ?_⟩
        simp only [firstPos]
        rw [if_neg hxz]
        by_cases hxp : x = p
        · rw [if_pos hxp]
          omega
        · rw [if_neg hxp]
          omega
      · have hxp : x = p := Option.some.inj ho
        refine ⟨?_, ?_⟩
        · rw [← hxp]
          exact List.mem_cons_self
        · simp only [firstPos]
          rw [if_pos hxp, if_neg hxz]
          omega

/-- **Touching a chained request keeps parents more recent.** If the touches `H` have every
parent more recent than its block, so do `q ++ H` for a request `q` that follows `parent`. -/
theorem parentsBefore_append {parent : α → Option α} {H q : List α}
    (hH : ParentsBefore parent H) (hq : Chained parent q) : ParentsBefore parent (q ++ H) := by
  intro z hz p hp
  by_cases hzq : z ∈ q
  · rcases parent_before_of_chainedAfter hq z hzq p hp with ⟨hpq, hlt⟩ | ho
    · refine ⟨List.mem_append.mpr (Or.inl hpq), ?_⟩
      rw [firstPos_append_of_mem H hpq, firstPos_append_of_mem H hzq]
      exact hlt
    · cases ho
  · have hzH : z ∈ H := (List.mem_append.mp hz).resolve_left hzq
    obtain ⟨hpH, hlt⟩ := hH z hzH p hp
    refine ⟨List.mem_append.mpr (Or.inr hpH), ?_⟩
    rw [firstPos_append_of_not_mem H hzq]
    by_cases hpq : p ∈ q
    · rw [firstPos_append_of_mem H hpq]
      have := firstPos_lt_length_of_mem hpq
      omega
    · rw [firstPos_append_of_not_mem H hpq]
      omega

/-- With parents more recent in the touches, a parent lies higher in the LRU stack. -/
theorem firstPos_lruStack_lt_of_parent {parent : α → Option α} {H : List α}
    (hH : ParentsBefore parent H) {z p : α} (hz : z ∈ H) (hp : parent z = some p) :
    p ∈ lruStack H ∧ firstPos p (lruStack H) < firstPos z (lruStack H) := by
  obtain ⟨_, hm, hpw⟩ := lruStack_spec H
  obtain ⟨hpH, hlt⟩ := hH z hz p hp
  have hzS : z ∈ lruStack H := (hm z).mpr hz
  have hpS : p ∈ lruStack H := (hm p).mpr hpH
  refine ⟨hpS, ?_⟩
  rcases Nat.lt_trichotomy (firstPos p (lruStack H)) (firstPos z (lruStack H)) with h | h | h
  · exact h
  · have e := eq_of_firstPos_eq hpS hzS h
    rw [e] at hlt
    omega
  · have h' : firstPos z H < firstPos p H :=
      rel_of_firstPos_lt (R := fun y z => firstPos y H < firstPos z H) hpw hpS h
    omega

/-! ## The least recently used block, and eviction -/

/-- `lruOf` of a non-empty list is some block. -/
theorem lruOf_ne_none_of_mem (S : List α) {y : α} : ∀ {l : List α}, y ∈ l → lruOf S l ≠ none
  | [], h => by simp at h
  | a :: t, _ => by
    cases hr : lruOf S t with
    | none => simp [lruOf, hr]
    | some z =>
      by_cases hle : firstPos z S ≤ firstPos a S
      · simp [lruOf, hr, hle]
      · simp [lruOf, hr, hle]

/-- `lruOf S l` is a block of `l` lying at least as deep in `S` as every block of `l`. -/
theorem lruOf_spec (S : List α) : ∀ {l : List α} {w : α}, lruOf S l = some w →
    w ∈ l ∧ ∀ y ∈ l, firstPos y S ≤ firstPos w S
  | [], _, h => by simp [lruOf] at h
  | a :: t, w, h => by
    cases hr : lruOf S t with
    | none =>
      simp only [lruOf, hr, Option.some.injEq] at h
      subst h
      refine ⟨List.mem_cons_self, fun y hy => ?_⟩
      rcases List.mem_cons.mp hy with e | e
      · subst e
        exact Nat.le_refl _
      · exact absurd hr (lruOf_ne_none_of_mem S e)
    | some z =>
      have ih := lruOf_spec S hr
      by_cases hle : firstPos z S ≤ firstPos a S
      · simp only [lruOf, hr, hle, ↓reduceIte, Option.some.injEq] at h
        subst h
        refine ⟨List.mem_cons_self, fun y hy => ?_⟩
        rcases List.mem_cons.mp hy with e | e
        · subst e
          exact Nat.le_refl _
        · exact Nat.le_trans (ih.2 y e) hle
      · simp only [lruOf, hr, hle, ↓reduceIte, Option.some.injEq] at h
        subst h
        refine ⟨List.mem_cons_of_mem a ih.1, fun y hy => ?_⟩
        rcases List.mem_cons.mp hy with e | e
        · subst e
          omega
        · exact ih.2 y e

/-- A list `X` of blocks of the stack `S` (no duplicates) that holds the top `k` of `S` and has
at most `k` entries holds exactly that top `k`. -/
theorem mem_iff_mem_take_of_length_le {S X : List α} {k : Nat} (hS : S.Nodup)
    (hXS : ∀ y ∈ X, y ∈ S) (hTX : ∀ y ∈ S.take k, y ∈ X) (hlen : X.length ≤ k) :
    ∀ y, y ∈ X ↔ y ∈ S.take k := by
  intro y
  refine ⟨fun hy => ?_, hTX y⟩
  apply Classical.byContradiction
  intro hyT
  have hyS := hXS y hy
  have hpos : k ≤ firstPos y S := by
    apply Classical.byContradiction
    intro hlt
    exact hyT ((mem_take_iff_firstPos_lt S k y).mpr ⟨hyS, by omega⟩)
  have hSlen := firstPos_lt_length_of_mem hyS
  have hTn : (S.take k).Nodup := List.Pairwise.sublist (List.take_sublist ..) hS
  have hsub : ∀ z ∈ S.take k, z ∈ X.erase y := fun z hz => by
    have hzy : z ≠ y := fun e => hyT (e ▸ hz)
    exact (List.mem_erase_of_ne hzy).mpr (hTX z hz)
  have h1 := length_le_of_nodup_of_subset _ _ hTn hsub
  rw [List.length_erase_of_mem hy, List.length_take] at h1
  have := List.length_pos_of_mem hy
  omega

/-- **Evicting least recently used leaves keeps the top of the stack.** If in the stack `S`
every block's parent lies higher, then from a duplicate-free `X` within `S` that holds the top
`k` of `S`, evicting least recently used leaves (with enough steps) leaves exactly the top
`k`. -/
theorem evictLeaves_spec (parent : α → Option α) (S : List α) (k : Nat) (hS : S.Nodup)
    (hpar : ∀ z ∈ S, ∀ p, parent z = some p → p ∈ S ∧ firstPos p S < firstPos z S) :
    ∀ (n : Nat) (X : List α), X.Nodup → (∀ y ∈ X, y ∈ S) → (∀ y ∈ S.take k, y ∈ X) →
      X.length ≤ n + k → (evictLeaves parent S [] k n X).Nodup ∧
        ∀ y, y ∈ evictLeaves parent S [] k n X ↔ y ∈ S.take k
  | 0, X, hX, hXS, hTX, hlen => by
    simp only [evictLeaves]
    exact ⟨hX, mem_iff_mem_take_of_length_le hS hXS hTX (by omega)⟩
  | n + 1, X, hX, hXS, hTX, hlen => by
    simp only [evictLeaves]
    by_cases hk : X.length ≤ k
    · rw [if_pos hk]
      exact ⟨hX, mem_iff_mem_take_of_length_le hS hXS hTX hk⟩
    · rw [if_neg hk]
      have hne : X ≠ [] := fun e => hk (by simp [e])
      obtain ⟨v, hv⟩ : ∃ v, lruOf S X = some v := by
        cases h : lruOf S X with
        | none =>
          cases X with
          | nil => exact absurd rfl hne
          | cons a t => exact absurd h (lruOf_ne_none_of_mem S List.mem_cons_self)
        | some v => exact ⟨v, rfl⟩
      obtain ⟨hvX, hvmax⟩ := lruOf_spec S hv
      have hleaf : isLeaf parent X v = true := by
        simp only [isLeaf, List.all_eq_true, decide_eq_true_eq]
        intro z hz hzp
        have := (hpar z (hXS z hz) v hzp).2
        have := hvmax z hz
        omega
      have hvL : v ∈ X.filter (fun y => decide (y ∉ ([] : List α)) && isLeaf parent X y) :=
        List.mem_filter.mpr ⟨hvX, by simp [hleaf]⟩
      split
      · rename_i heq
        exact absurd heq (lruOf_ne_none_of_mem S hvL)
      · rename_i w heq
        obtain ⟨hwL, hwmax⟩ := lruOf_spec S heq
        have hwX : w ∈ X := (List.mem_filter.mp hwL).1
        have hwv := hwmax v hvL
        have hwT : w ∉ S.take k := by
          intro hwT
          have hwk := ((mem_take_iff_firstPos_lt S k w).mp hwT).2
          have hXT : ∀ y ∈ X, y ∈ S.take k := fun y hy =>
            (mem_take_iff_firstPos_lt S k y).mpr ⟨hXS y hy, by
              have := hvmax y hy
              omega⟩
          have := length_le_of_nodup_of_subset _ _ hX hXT
          rw [List.length_take] at this
          omega
        refine evictLeaves_spec parent S k hS hpar n (X.erase w) (hX.erase w)
          (fun y hy => hXS y (List.mem_of_mem_erase hy)) (fun y hy => ?_) ?_
        · have hyw : y ≠ w := fun e => hwT (e ▸ hy)
          exact (List.mem_erase_of_ne hyw).mpr (hTX y hy)
        · rw [List.length_erase_of_mem hwX]
          omega

/-! ## One request, then a run -/

/-- A block of `q` outside `c` lies after the leading run of `q` in `c`. -/
theorem mem_drop_leadRun {c : List α} {y : α} (hy : y ∉ c) : ∀ {q : List α}, y ∈ q →
    y ∈ q.drop (leadRun c q)
  | [], h => by simp at h
  | x :: xs, h => by
    by_cases hx : x ∈ c
    · have hxy : x ≠ y := fun e => hy (e ▸ hx)
      have ih := mem_drop_leadRun hy ((List.mem_cons.mp h).resolve_left (fun e => hxy e.symm))
      simp only [leadRun, hx, ↓reduceIte, List.drop_succ_cons]
      exact ih
    · simp only [leadRun, hx, ↓reduceIte, List.drop_zero]
      exact h

omit [DecidableEq α] in
/-- Two duplicate-free lists, the first sharing no block with the second, append to a
duplicate-free list. -/
theorem nodup_append_of_disjoint {l₂ : List α} (h₂ : l₂.Nodup) : ∀ {l₁ : List α},
    l₁.Nodup → (∀ y ∈ l₁, y ∉ l₂) → (l₁ ++ l₂).Nodup
  | [], _, _ => h₂
  | a :: t, h₁, hd => by
    have ht := nodup_append_of_disjoint h₂ (List.nodup_cons.mp h₁).2
      (fun y hy => hd y (List.mem_cons_of_mem a hy))
    refine List.nodup_cons.mpr ⟨fun e => ?_, ht⟩
    rcases List.mem_append.mp e with e | e
    · exact (List.nodup_cons.mp h₁).1 e
    · exact hd a List.mem_cons_self e

/-- **One radix-LRU request keeps the top of the LRU stack.** Under chained ids (`parent`, the
request `q` follows it, `H`'s parents are more recent) and a request without repeated blocks,
if the cache `c` (no duplicates) is the top `k` of the LRU stack of the touches `H`, then after
the request it is the top `k` of the LRU stack of `q ++ H`, at every capacity `k`. -/
theorem radixLruStep_mem_iff {k : Nat} {parent : α → Option α} {H c q : List α}
    (hH : ParentsBefore parent H) (hq : Chained parent q) (hqn : q.Nodup) (hc : c.Nodup)
    (hcH : ∀ y, y ∈ c ↔ y ∈ (lruStack H).take k) :
    (radixLruStep k parent H c q).Nodup ∧
      ∀ y, y ∈ radixLruStep k parent H c q ↔ y ∈ (lruStack (q ++ H)).take k := by
  obtain ⟨hSn, hSm, _⟩ := lruStack_spec (q ++ H)
  have hH' := parentsBefore_append hH hq
  have hpar : ∀ z ∈ lruStack (q ++ H), ∀ p, parent z = some p →
      p ∈ lruStack (q ++ H) ∧ firstPos p (lruStack (q ++ H)) < firstPos z (lruStack (q ++ H)) :=
    fun z hz p hp => firstPos_lruStack_lt_of_parent hH' ((hSm z).mp hz) hp
  have hmt : ∀ y, y ∈ missingTail c q ↔ y ∈ q.drop (leadRun c q) ∧ y ∉ c := fun y => by
    simp [missingTail]
  have hmtn : (missingTail c q).Nodup :=
    List.Pairwise.sublist (List.Sublist.trans List.filter_sublist (List.drop_sublist ..)) hqn
  have hXn : (missingTail c q ++ c).Nodup :=
    nodup_append_of_disjoint hc hmtn (fun y hy => ((hmt y).mp hy).2)
  have hXS : ∀ y ∈ missingTail c q ++ c, y ∈ lruStack (q ++ H) := fun y hy => by
    refine (hSm y).mpr ?_
    rcases List.mem_append.mp hy with e | e
    · exact List.mem_append.mpr (Or.inl (List.mem_of_mem_drop ((hmt y).mp e).1))
    · have := List.mem_of_mem_take ((hcH y).mp e)
      exact List.mem_append.mpr (Or.inr (((lruStack_spec H).2.1 y).mp this))
  have hTX : ∀ y ∈ (lruStack (q ++ H)).take k, y ∈ missingTail c q ++ c := fun y hy => by
    by_cases hyc : y ∈ c
    · exact List.mem_append.mpr (Or.inr hyc)
    · by_cases hyq : y ∈ q
      · exact List.mem_append.mpr (Or.inl ((hmt y).mpr ⟨mem_drop_leadRun hyc hyq, hyc⟩))
      · exfalso
        have ⟨hyS, hyk⟩ := (mem_take_iff_firstPos_lt _ k y).mp hy
        have hyH : y ∈ H := (List.mem_append.mp ((hSm y).mp hyS)).resolve_left hyq
        have hle := firstPos_lruStack_le_append H q hyq
        exact hyc ((hcH y).mpr ((mem_take_iff_firstPos_lt _ k y).mpr
          ⟨((lruStack_spec H).2.1 y).mpr hyH, by omega⟩))
  exact evictLeaves_spec parent (lruStack (q ++ H)) k hSn hpar _ _ hXn hXS hTX (by omega)

-- noncomputable: calls `lruStack`.
/-- The tops of the LRU stack at capacity `k` after each request of `rs`, from the touches
`H`: `(lruStack (q ++ H)).take k`, then on with `q ++ H`. -/
noncomputable def stackCaches (k : Nat) : List α → List (List α) → List (List α)
  | _, [] => []
  | H, q :: qs => (lruStack (q ++ H)).take k :: stackCaches k (q ++ H) qs

/-- The leading run of a request depends only on which blocks are cached. -/
theorem leadRun_congr {c d : List α} (h : ∀ y, y ∈ c ↔ y ∈ d) : ∀ q : List α,
    leadRun c q = leadRun d q
  | [] => rfl
  | x :: xs => by
    simp only [leadRun, h x, leadRun_congr h xs]

/-- **Radix LRU scores the prefix hits of the stack tops**, at every capacity `k`, under
chained ids (`parent`; every request follows it; the touches `H` have parents more recent)
and requests without repeated blocks, from a cache (no duplicates) that is the top `k` of the
LRU stack of `H`. -/
theorem runHits_radixLru_eq_stackCaches (k : Nat) (parent : α → Option α) :
    ∀ (rs : List (List α)) (H c : List α), ParentsBefore parent H →
      (∀ q ∈ rs, Chained parent q ∧ q.Nodup) → c.Nodup →
      (∀ y, y ∈ c ↔ y ∈ (lruStack H).take k) →
      runHits c rs (stepCaches (radixLruStep k parent) H c rs) =
        runHits ((lruStack H).take k) rs (stackCaches k H rs)
  | [], _, _, _, _, _, _ => by simp [runHits]
  | q :: qs, H, c, hH, hrs, hc, hcH => by
    obtain ⟨hq, hqn⟩ := hrs q List.mem_cons_self
    obtain ⟨hn', hm'⟩ := radixLruStep_mem_iff (k := k) hH hq hqn hc hcH
    have ih := runHits_radixLru_eq_stackCaches k parent qs (q ++ H)
      (radixLruStep k parent H c q) (parentsBefore_append hH hq)
      (fun q' hq' => hrs q' (List.mem_cons_of_mem q hq')) hn' hm'
    simp only [stepCaches, stackCaches, runHits, ih, leadRun_congr hcH q]

/-- From an empty cache and no touches: **radix LRU's prefix hits are those of the stack
tops**, at every capacity `k`, for requests that follow the chained ids `parent` and repeat
no block. -/
theorem runHits_radixLru_eq_stackCaches_nil (k : Nat) (parent : α → Option α)
    (rs : List (List α)) (hrs : ∀ q ∈ rs, Chained parent q ∧ q.Nodup) :
    runHits [] rs (stepCaches (radixLruStep k parent) [] [] rs) =
      runHits [] rs (stackCaches k [] rs) := by
  have h := runHits_radixLru_eq_stackCaches k parent rs [] [] (fun z hz => by simp at hz) hrs
    List.nodup_nil (fun y => by simp [lruStack])
  simpa [lruStack] using h

/-- More cached blocks give a leading run at least as long. -/
theorem leadRun_le_of_subset {c d : List α} (h : ∀ y ∈ c, y ∈ d) : ∀ q : List α,
    leadRun c q ≤ leadRun d q
  | [] => Nat.le_refl _
  | x :: xs => by
    have ih := leadRun_le_of_subset h xs
    by_cases hx : x ∈ c
    · simp only [leadRun, hx, h x hx, ↓reduceIte]
      omega
    · simp only [leadRun, hx, ↓reduceIte]
      exact Nat.zero_le _

/-- **The stack tops are a stack algorithm**: their prefix hits at capacity `k` are at most
those at capacity `k + 1`, from the touches `H`, on every list of requests. -/
theorem runHits_stackCaches_le_succ (k : Nat) : ∀ (rs : List (List α)) (H : List α),
    runHits ((lruStack H).take k) rs (stackCaches k H rs) ≤
      runHits ((lruStack H).take (k + 1)) rs (stackCaches (k + 1) H rs)
  | [], _ => by simp [runHits]
  | q :: qs, H => by
    have ih := runHits_stackCaches_le_succ k qs (q ++ H)
    have hl := leadRun_le_of_subset (c := (lruStack H).take k)
      (fun y hy => List.take_subset_take_left _ (Nat.le_add_right k 1) hy) q
    simp only [stackCaches, runHits]
    omega

end KVCache.Ceiling

end
