module

/-!
# General natural-number lemmas

Facts about `Nat` with no cache meaning, taken out of topic files (`Proofs.Isolation`,
`Proofs.Ceiling`) and proved once here, on top of core's `Nat.blt_eq`, `Nat.le_log2` and
`Nat.log2_self_le`.

* Boolean comparisons: `Nat.blt x y = true` gives `x < y` (`lt_of_blt_eq_true`), and
  `Nat.blt x y = false` exactly when `y ≤ x` (`le_of_blt_eq_false`, `blt_eq_false_of_le`).
* Pigeonhole: a collision-free map of the `a` numbers below `a` into the numbers below `b`
  forces `a ≤ b` (`le_of_injOn_lt`).
* `Nat.log2`: `2 ^ k ≤ s` gives `k ≤ Nat.log2 s` (`le_log2_of_two_pow_le`), and `Nat.log2`
  is monotone (`log2_le_log2_of_le`).
-/

public section

namespace KVCache.Common

/-! ## Boolean comparisons -/

/-- `Nat.blt` answers `<`. -/
theorem lt_of_blt_eq_true {x y : Nat} (h : Nat.blt x y = true) : x < y := by
  simpa [Nat.blt_eq] using h

/-- `Nat.blt` answers `<`, negatively. -/
theorem le_of_blt_eq_false {x y : Nat} (h : Nat.blt x y = false) : y ≤ x :=
  Nat.not_lt.mp fun hlt => by
    have ht : Nat.blt x y = true := by simpa [Nat.blt_eq] using hlt
    rw [ht] at h
    cases h

/-- `Nat.blt` of a number no smaller is `false`. -/
theorem blt_eq_false_of_le {x y : Nat} (h : y ≤ x) : Nat.blt x y = false := by
  cases hb : Nat.blt x y
  · rfl
  · exact absurd (lt_of_blt_eq_true hb) (Nat.not_lt.mpr h)

/-! ## Pigeonhole -/

/-- Pigeonhole on natural numbers: if `f` maps the `a` numbers below `a` into the numbers below
`b` without collisions, then `a ≤ b`. -/
theorem le_of_injOn_lt (a : Nat) : ∀ (b : Nat) (f : Nat → Nat), (∀ i, i < a → f i < b) →
    (∀ i j, i < a → j < a → f i = f j → i = j) → a ≤ b := by
  induction a with
  | zero => intro b _ _ _; exact Nat.zero_le b
  | succ a ih =>
    intro b f hlt hinj
    have hfa : f a < b := hlt a (Nat.lt_succ_self a)
    have hne : ∀ i, i < a → f i ≠ f a := fun i hi h => by
      have := hinj i a (by omega) (by omega) h
      omega
    have key : a ≤ b - 1 := by
      apply ih (b - 1) (fun i => if f i < f a then f i else f i - 1)
      · intro i hi
        show (if f i < f a then f i else f i - 1) < b - 1
        have h1 := hlt i (by omega)
        have h2 := hne i hi
        split <;> omega
      · intro i j hi hj h
        change (if f i < f a then f i else f i - 1) = (if f j < f a then f j else f j - 1) at h
        have h1 := hne i hi
        have h2 := hne j hj
        apply hinj i j (by omega) (by omega)
        split at h <;> split at h <;> omega
    omega

/-! ## Binary logarithm -/

/-- `Nat.log2` in the direction we need: `2 ^ k ≤ s` gives `k ≤ Nat.log2 s`. -/
theorem le_log2_of_two_pow_le {k s : Nat} (h : 2 ^ k ≤ s) : k ≤ Nat.log2 s := by
  have hpos := Nat.two_pow_pos k
  exact (Nat.le_log2 (by omega)).2 h

/-- `Nat.log2` is monotone. -/
theorem log2_le_log2_of_le {a b : Nat} (h : a ≤ b) : Nat.log2 a ≤ Nat.log2 b := by
  by_cases ha : a = 0
  · subst ha
    rw [Nat.log2_zero]
    exact Nat.zero_le _
  · exact le_log2_of_two_pow_le (Nat.le_trans (Nat.log2_self_le ha) h)

end KVCache.Common

end
