module

/-!
# General list lemmas

Facts about `List` with no cache meaning, used by `Proofs.Ceiling` and `Proofs.Placement`
(one of them was proved in both) and proved once here. Core's `Init` (Lean 4.28) has no
statement of them: its `Nodup` has no length bound for a duplicate-free list contained in
another (that is `Subperm` in Batteries and Mathlib, which the library does not use), so they
are proved from core's lemmas about `List.erase`, `List.take` and `List.eraseIdx`.

* Counting: `u :: z :: T` has no duplicates when `T` has none and holds neither
  (`nodup_cons_cons`); replacing one copy of a block of `S` by a block in front keeps the
  length (`length_cons_erase`); a duplicate-free list contained in `m` is no longer than `m`
  (`length_le_of_nodup_of_subset`), and strictly shorter when `m` still contains `b` after one
  copy of `b` is removed (`length_lt_of_nodup_of_subset_of_dup`).
* `erase`: removing another block keeps the head (`erase_cons_of_ne`); a copy of `b` that
  survives removing one `b` from a part of `l₁ ++ l₂` survives in the whole
  (`mem_erase_append_left`, `mem_erase_append_right`); in a duplicate-free list, removing a
  position removes the block stored there (`eraseIdx_eq_erase_getElem`).
* `take`: moving a block of the first `k` to the front keeps the first `k` up to order
  (`take_cons_erase_perm`); removing a block outside them keeps them
  (`take_erase_of_not_mem_take`).
-/

public section

namespace KVCache.Common

universe u

variable {α : Type u} [DecidableEq α]

/-! ## Removing one copy of a block -/

/-- Removing a block other than the head keeps the head. -/
theorem erase_cons_of_ne {x y : α} (l : List α) (h : x ≠ y) :
    (x :: l).erase y = x :: l.erase y :=
  List.erase_cons_tail (by simpa using h)

/-- If `b` occurs in `l₁` and in `l₂`, a copy of `b` survives removing one copy of `b` from
`l₁ ++ l₂`. -/
theorem mem_erase_append_left (b : α) (l₂ : List α) (hb : b ∈ l₂) (l₁ : List α) :
    b ∈ l₁ → b ∈ (l₁ ++ l₂).erase b := by
  intro h
  rw [List.erase_append_left l₂ h]
  exact List.mem_append.mpr (Or.inr hb)

/-- If a copy of `b` survives removing one copy of `b` from `l₂`, one survives in
`l₁ ++ l₂`. -/
theorem mem_erase_append_right (b : α) (l₂ : List α) (hb : b ∈ l₂.erase b) (l₁ : List α) :
    b ∈ (l₁ ++ l₂).erase b := by
  by_cases h : b ∈ l₁
  · exact mem_erase_append_left b l₂ (List.mem_of_mem_erase hb) l₁ h
  · rw [List.erase_append_right l₂ h]
    exact List.mem_append.mpr (Or.inr hb)

/-- In a list without duplicates, removing position `j` removes the block stored there. -/
theorem eraseIdx_eq_erase_getElem : ∀ (c : List α) (j : Nat) (h : j < c.length),
    c.Nodup → c.eraseIdx j = c.erase (c[j]'h)
  | [], _, h, _ => by simp at h
  | a :: t, 0, _, _ => by simp
  | a :: t, j + 1, h, hn => by
    have hj : j < t.length := by simp at h; omega
    have hat : a ∉ t := (List.nodup_cons.mp hn).1
    have hne : a ≠ t[j] := fun e => hat (e ▸ List.getElem_mem hj)
    rw [List.eraseIdx_cons_succ, List.getElem_cons_succ, erase_cons_of_ne t hne,
      eraseIdx_eq_erase_getElem t j hj (List.nodup_cons.mp hn).2]

/-! ## Duplicate-free lists contained in another -/

omit [DecidableEq α] in
/-- Two different blocks, neither in the duplicate-free list `T`, in front of `T`: no
duplicates. -/
theorem nodup_cons_cons {u z : α} {T : List α} (huz : u ≠ z) (hu : u ∉ T) (hz : z ∉ T)
    (hT : T.Nodup) : (u :: z :: T).Nodup :=
  List.nodup_cons.mpr ⟨fun e => (List.mem_cons.mp e).elim huz hu, List.nodup_cons.mpr ⟨hz, hT⟩⟩

/-- Replacing one copy of a block of `S` by a block in front keeps the length of `S`. -/
theorem length_cons_erase (z : α) {y : α} {S : List α} (h : y ∈ S) :
    (z :: S.erase y).length = S.length := by
  rw [List.length_cons, List.length_erase_of_mem h]
  have := List.length_pos_of_mem h
  omega

/-- A duplicate-free list contained in `m` is no longer than `m`. -/
theorem length_le_of_nodup_of_subset : ∀ (l m : List α), l.Nodup → (∀ y ∈ l, y ∈ m) →
    l.length ≤ m.length
  | [], _, _, _ => Nat.zero_le _
  | a :: l, m, hn, hs => by
    have ham : a ∈ m := hs a List.mem_cons_self
    have hal : a ∉ l := (List.nodup_cons.mp hn).1
    have ih := length_le_of_nodup_of_subset l (m.erase a) (List.nodup_cons.mp hn).2
      (fun y hy => by
        have hya : y ≠ a := fun e => hal (e ▸ hy)
        exact (List.mem_erase_of_ne hya).mpr (hs y (List.mem_cons_of_mem a hy)))
    rw [List.length_erase_of_mem ham] at ih
    have : 0 < m.length := List.length_pos_of_mem ham
    simp only [List.length_cons]
    omega

/-- If moreover `m` still contains `b` after one copy of `b` is removed (`m.erase b`), `l` is
strictly shorter than `m`. -/
theorem length_lt_of_nodup_of_subset_of_dup (l m : List α) (b : α) (hnd : l.Nodup)
    (hsub : ∀ x ∈ l, x ∈ m) (hb : b ∈ m.erase b) : l.length < m.length := by
  have hsub' : ∀ x ∈ l, x ∈ m.erase b := by
    intro x hx
    by_cases e : x = b
    · rw [e]; exact hb
    · exact (List.mem_erase_of_ne e).mpr (hsub x hx)
  have h1 := length_le_of_nodup_of_subset l (m.erase b) hnd hsub'
  have hm := List.mem_of_mem_erase hb
  have h2 := List.length_erase_of_mem hm
  have h3 := List.length_pos_of_mem hm
  omega

/-! ## The first `k` blocks -/

/-- Moving a block of the first `k` of a list to the front keeps the first `k`, up to
order. -/
theorem take_cons_erase_perm (x : α) : ∀ (s : List α) (k : Nat), x ∈ s.take k →
    ((x :: s.erase x).take k).Perm (s.take k)
  | [], _, h => by simp at h
  | _ :: _, 0, h => by simp at h
  | a :: t, k + 1, h => by
    by_cases hax : a = x
    · have e : x :: (a :: t).erase x = a :: t := by rw [hax, List.erase_cons_head]
      rw [e]
    · rw [erase_cons_of_ne t hax]
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
    rw [erase_cons_of_ne t hax, List.take_succ_cons, List.take_succ_cons,
      take_erase_of_not_mem_take x t k (fun hx => h (by simp [hx]))]

end KVCache.Common

end
