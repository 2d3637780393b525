module

public import Proofs.Common.Nat

/-!
# The T·n isolation floor

This file proves what zero-leak KV-cache sharing must cost: a memory manager that serves `T`
tenants over `n` cached blocks, and that never leaks a block and never refuses a permitted reuse,
has to be able to distinguish at least `2 ^ (T * n)` isolation states, i.e. it has to keep at
least `T * n` bits of isolation state. The bound is tight, and below it every design leaks or
refuses a reuse for some rights matrix.

## The model

* There are `T` tenants and `n` cached blocks. The read rights are a matrix
  `M : Rights T n = Fin T → Fin n → Bool`: `M t b = true` means tenant `t` may reuse block `b`.
* A design with `s` states (`Design T n s`) consists of
  - `encode : Rights T n → Fin s`, the isolation state the memory manager keeps for the rights
    matrix in force (all it may consult later), and
  - `serve : Fin s → Fin T → Fin n → Bool`, its answer to "may tenant `t` reuse block `b`?",
    computed from that state alone.
* A *leak* for `M`, `t`, `b` is `serve (encode M) t b = true` while `M t b = false`: a tenant
  is handed a block it has no right to. A *refused reuse* is `serve (encode M) t b = false` while
  `M t b = true`: a permitted cache hit is thrown away.
* A design is *exact* when `serve (encode M) t b = M t b` for every `M`, `t`, `b`. Since the
  answer is a `Bool`, a wrong answer is either a leak (`true` instead of `false`) or a refused
  reuse (`false` instead of `true`); so exactness is precisely "zero leak and full reuse" for
  every rights matrix, with no third way to fail (`exact_iff_no_leak_no_refused`).

The states are the information the manager keeps; `Fin s` with `s = 2 ^ k` is `k` bits.

## Results, in words

1. `two_pow_le_of_exact`: an exact design has at least `2 ^ (T * n)` states.
2. `mul_le_log2_of_exact`: in bits, an exact design keeps at least `T * n` bits:
   `T * n ≤ Nat.log2 s` (`Nat.log2` rounds down, and the statement holds as written because
   `2 ^ (T * n) ≤ s` already forces it; core's `Nat.le_log2` is the exact equivalence).
3. `leak_or_refused_of_lt`: with fewer than `2 ^ (T * n)` states, every design leaks or refuses
   a reuse for some rights matrix, tenant and block.
4. `exists_exact_design`: the floor is tight: a design with exactly `2 ^ (T * n)` states
   (the rights matrix written as a binary number, one bit per tenant-block pair) is exact;
   `exists_exact_iff` combines both directions.
5. Single owner: when every block has one owning tenant (`Owners T n = Fin n → Fin T`, a
   tenant may reuse exactly its own blocks), an exact design needs `T ^ n` states
   (`pow_le_of_ownerExact`), this is tight (`exists_ownerExact_design`), and in bits
   `n * Nat.log2 T ≤ Nat.log2 s` (`mul_log2_le_log2_of_ownerExact`) and the sharper
   `Nat.log2 (T ^ n) ≤ Nat.log2 s` (`log2_pow_le_log2_of_ownerExact`). Below `T ^ n` states,
   every single-owner design leaks or refuses (`ownerLeak_or_refused_of_lt`). The single-owner
   matrices are a special case of general rights (`ownerRights`, `Design.toOwner_exact`): even a
   manager that only ever has to enforce single-owner policies needs `T ^ n` states.
6. The counting underneath: pigeonhole for `Fin` (`le_of_injective_fin`); an injective map
   `(Fin k → Fin m) → Fin s` forces `m ^ k ≤ s` (`pow_le_of_injective`), and an injective map
   `(Fin k → Bool) → Fin s` forces `2 ^ k ≤ s` (`two_pow_le_of_injective`).

The counting is done by hand (core Lean has no `Fintype`): numbers below `m ^ k` are read as
`k` base-`m` digits (`toDigits`), which is injective, and written back (`ofDigits`); the
pigeonhole principle on numbers is proved by induction (`le_of_injOn_lt`, in
`Proofs.Common.Nat` with the `Nat.log2` lemmas used here).
-/

@[expose] public section

namespace KVCache.Isolation

open KVCache.Common

/-! ## Pigeonhole -/

/-- Pigeonhole for `Fin`: an injective map `Fin a → Fin b` forces `a ≤ b`. -/
theorem le_of_injective_fin {a b : Nat} (f : Fin a → Fin b) (hf : Function.Injective f) :
    a ≤ b := by
  apply le_of_injOn_lt a b (fun i => if h : i < a then (f ⟨i, h⟩).val else 0)
  · intro i hi
    show (if h : i < a then (f ⟨i, h⟩).val else 0) < b
    rw [dif_pos hi]
    exact (f ⟨i, hi⟩).isLt
  · intro i j hi hj h
    change (if h : i < a then (f ⟨i, h⟩).val else 0) = (if h : j < a then (f ⟨j, h⟩).val else 0)
      at h
    rw [dif_pos hi, dif_pos hj] at h
    exact congrArg Fin.val (hf (Fin.ext h))

/-! ## Base-`m` digits -/

/-- Digit `i` of the number `x` written in base `m`. -/
def digit (m i x : Nat) : Nat := x / m ^ i % m

/-- Digit `0` of `x` in base `m` is `x % m`. -/
theorem digit_zero (m x : Nat) : digit m 0 x = x % m := by
  unfold digit
  rw [Nat.pow_zero, Nat.div_one]

/-- Digit `i + 1` of `x` is digit `i` of `x / m`. -/
theorem digit_succ (m i x : Nat) : digit m (i + 1) x = digit m i (x / m) := by
  unfold digit
  rw [Nat.div_div_eq_div_mul, Nat.pow_succ, Nat.mul_comm (m ^ i) m]

/-- Two numbers below `m ^ k` with the same `k` base-`m` digits are equal. -/
theorem eq_of_digit_eq (m k : Nat) : ∀ (x y : Nat), x < m ^ k → y < m ^ k →
    (∀ i, i < k → digit m i x = digit m i y) → x = y := by
  induction k with
  | zero =>
    intro x y hx hy _
    rw [Nat.pow_zero] at hx hy
    omega
  | succ k ih =>
    intro x y hx hy h
    have hm : 0 < m := Nat.pos_of_ne_zero fun h0 => by
      subst h0
      rw [Nat.zero_pow (Nat.succ_pos k)] at hx
      exact Nat.not_lt_zero _ hx
    have hx' : x / m < m ^ k := (Nat.div_lt_iff_lt_mul hm).2 (by rw [← Nat.pow_succ]; exact hx)
    have hy' : y / m < m ^ k := (Nat.div_lt_iff_lt_mul hm).2 (by rw [← Nat.pow_succ]; exact hy)
    have hq : x / m = y / m := ih (x / m) (y / m) hx' hy' fun i hi => by
      rw [← digit_succ, ← digit_succ]
      exact h (i + 1) (by omega)
    have h0 : x % m = y % m := by
      have := h 0 (by omega)
      rwa [digit_zero, digit_zero] at this
    calc x = m * (x / m) + x % m := (Nat.div_add_mod x m).symm
      _ = m * (y / m) + y % m := by rw [hq, h0]
      _ = y := Nat.div_add_mod y m

-- noncomputable: `Fin.succ` has no compiled code in the registry Lean.
/-- The number whose `k` base-`m` digits are `φ 0, φ 1, …` (least significant first). -/
noncomputable def ofDigitsNat (m : Nat) : (k : Nat) → (Fin k → Fin m) → Nat
  | 0, _ => 0
  | k + 1, φ => (φ ⟨0, Nat.zero_lt_succ k⟩).val + m * ofDigitsNat m k (fun i => φ i.succ)

/-- A number with `k` base-`m` digits is below `m ^ k`. -/
theorem ofDigitsNat_lt (m : Nat) : ∀ (k : Nat) (φ : Fin k → Fin m), ofDigitsNat m k φ < m ^ k
  | 0, _ => by
    show 0 < m ^ 0
    rw [Nat.pow_zero]
    exact Nat.one_pos
  | k + 1, φ => by
    have h1 := ofDigitsNat_lt m k (fun i => φ i.succ)
    have h2 := (φ ⟨0, Nat.zero_lt_succ k⟩).isLt
    have h3 : m * (ofDigitsNat m k (fun i => φ i.succ) + 1) ≤ m * m ^ k :=
      Nat.mul_le_mul_left m h1
    rw [Nat.left_distrib, Nat.mul_one] at h3
    show (φ ⟨0, Nat.zero_lt_succ k⟩).val + m * ofDigitsNat m k (fun i => φ i.succ) < m ^ (k + 1)
    rw [Nat.pow_succ, Nat.mul_comm (m ^ k) m]
    omega

/-- Reading digit `i` back from `ofDigitsNat` gives `φ i`. -/
theorem digit_ofDigitsNat (m : Nat) : ∀ (k : Nat) (φ : Fin k → Fin m) (i : Fin k),
    digit m i (ofDigitsNat m k φ) = (φ i).val
  | 0, _, i => i.elim0
  | k + 1, φ, ⟨0, _⟩ => by
    show digit m 0 ((φ ⟨0, Nat.zero_lt_succ k⟩).val + m * ofDigitsNat m k (fun i => φ i.succ))
      = (φ ⟨0, Nat.zero_lt_succ k⟩).val
    rw [digit_zero, Nat.add_mul_mod_self_left, Nat.mod_eq_of_lt (φ _).isLt]
  | k + 1, φ, ⟨i + 1, hi⟩ => by
    have hm : 0 < m := Nat.lt_of_le_of_lt (Nat.zero_le _) (φ ⟨0, Nat.zero_lt_succ k⟩).isLt
    show digit m (i + 1)
      ((φ ⟨0, Nat.zero_lt_succ k⟩).val + m * ofDigitsNat m k (fun i => φ i.succ))
      = (φ ⟨i + 1, hi⟩).val
    rw [digit_succ, Nat.add_mul_div_left _ _ hm, Nat.div_eq_of_lt (φ _).isLt, Nat.zero_add]
    exact digit_ofDigitsNat m k (fun i => φ i.succ) ⟨i, by omega⟩

/-- If `Fin (m ^ k)` has an element and `k > 0`, the base `m` is positive. -/
theorem base_pos {m k : Nat} (x : Fin (m ^ k)) (i : Fin k) : 0 < m :=
  Nat.pos_of_ne_zero fun h => by
    subst h
    have hk : 0 < k := Nat.lt_of_le_of_lt (Nat.zero_le _) i.isLt
    have hx : x.val < 0 := Nat.lt_of_lt_of_eq x.isLt (Nat.zero_pow hk)
    exact Nat.not_lt_zero _ hx

/-- The `k` base-`m` digits of a number below `m ^ k`. -/
def toDigits {m k : Nat} (x : Fin (m ^ k)) (i : Fin k) : Fin m :=
  ⟨digit m i x, Nat.mod_lt _ (base_pos x i)⟩

-- noncomputable: calls `ofDigitsNat`.
/-- The number below `m ^ k` with the given `k` base-`m` digits. -/
noncomputable def ofDigits {m k : Nat} (φ : Fin k → Fin m) : Fin (m ^ k) :=
  ⟨ofDigitsNat m k φ, ofDigitsNat_lt m k φ⟩

/-- Writing digits as a number and reading them back returns the digits. -/
theorem toDigits_ofDigits {m k : Nat} (φ : Fin k → Fin m) : toDigits (ofDigits φ) = φ :=
  funext fun i => Fin.ext (digit_ofDigitsNat m k φ i)

/-- Distinct numbers below `m ^ k` have distinct digit strings. -/
theorem toDigits_injective {m k : Nat} :
    Function.Injective (toDigits : Fin (m ^ k) → Fin k → Fin m) := by
  intro x y h
  apply Fin.ext
  apply eq_of_digit_eq m k x y x.isLt y.isLt
  intro i hi
  exact congrArg Fin.val (congrFun h ⟨i, hi⟩)

/-! ## The counting lemmas -/

/-- Counting: an injective map from the functions `Fin k → Fin m` into `Fin s` forces
`m ^ k ≤ s` (there are `m ^ k` such functions). -/
theorem pow_le_of_injective {k m s : Nat} (f : (Fin k → Fin m) → Fin s)
    (hf : Function.Injective f) : m ^ k ≤ s :=
  le_of_injective_fin (fun x => f (toDigits x)) (by
    intro x y h
    exact toDigits_injective (hf h))

/-- Counting with an alphabet: if `Fin a` embeds into `X`, an injective map from the functions
`Fin k → X` into `Fin s` forces `a ^ k ≤ s`. -/
theorem pow_le_of_injective_of_embedding {a k s : Nat} {X : Type} (e : Fin a → X)
    (he : Function.Injective e) (f : (Fin k → X) → Fin s) (hf : Function.Injective f) :
    a ^ k ≤ s :=
  pow_le_of_injective (fun φ => f (fun i => e (φ i))) (by
    intro φ ψ h
    have h' := hf h
    funext i
    exact he (congrFun h' i))

/-- The bit `Fin 2 → Bool`: `1` is `true`, `0` is `false`. -/
def bitOf (j : Fin 2) : Bool := decide (j.val = 1)

/-- The bit of `0 : Fin 2` and `1 : Fin 2` differ. -/
theorem bitOf_injective : Function.Injective bitOf := by
  intro x y h
  have hx := x.isLt
  have hy := y.isLt
  apply Fin.ext
  unfold bitOf at h
  by_cases h1 : x.val = 1 <;> by_cases h2 : y.val = 1 <;> simp [h1, h2] at h <;> omega

/-- Counting, Boolean form: an injective map from the functions `Fin k → Bool` into `Fin s`
forces `2 ^ k ≤ s` (there are `2 ^ k` bit strings of length `k`). -/
theorem two_pow_le_of_injective {k s : Nat} (f : (Fin k → Bool) → Fin s)
    (hf : Function.Injective f) : 2 ^ k ≤ s :=
  pow_le_of_injective_of_embedding bitOf bitOf_injective f hf

/-! ## Rights, designs, leaks and refused reuses -/

/-- Read rights of `T` tenants over `n` cached blocks: `M t b = true` iff tenant `t` may reuse
block `b`. -/
abbrev Rights (T n : Nat) : Type := Fin T → Fin n → Bool

/-- A design with `s` isolation states: the memory manager keeps only `encode M : Fin s` of the
rights matrix `M`, and answers "may tenant `t` reuse block `b`?" by `serve (encode M) t b`. -/
structure Design (T n s : Nat) where
  /-- The isolation state kept for a rights matrix. -/
  encode : Rights T n → Fin s
  /-- The reuse decision, computed from the state alone. -/
  serve : Fin s → Fin T → Fin n → Bool

variable {T n s : Nat}

/-- A design is exact when its answer equals the rights matrix everywhere. -/
def Design.Exact (D : Design T n s) : Prop :=
  ∀ (M : Rights T n) (t : Fin T) (b : Fin n), D.serve (D.encode M) t b = M t b

/-- A leak: the design lets tenant `t` reuse block `b` although `M` forbids it. -/
def Design.Leak (D : Design T n s) (M : Rights T n) (t : Fin T) (b : Fin n) : Prop :=
  D.serve (D.encode M) t b = true ∧ M t b = false

/-- A refused reuse: the design denies tenant `t` block `b` although `M` permits it. -/
def Design.RefusedReuse (D : Design T n s) (M : Rights T n) (t : Fin T) (b : Fin n) : Prop :=
  D.serve (D.encode M) t b = false ∧ M t b = true

/-- Exactness is exactly "no leak and no refused reuse, for every rights matrix": a wrong
Boolean answer is one of the two. -/
theorem exact_iff_no_leak_no_refused (D : Design T n s) :
    D.Exact ↔ ∀ M t b, ¬ D.Leak M t b ∧ ¬ D.RefusedReuse M t b := by
  constructor
  · intro h M t b
    refine ⟨fun hl => ?_, fun hr => ?_⟩
    · have := h M t b
      rw [hl.1, hl.2] at this
      exact Bool.noConfusion this
    · have := h M t b
      rw [hr.1, hr.2] at this
      exact Bool.noConfusion this
  · intro h M t b
    cases hM : M t b <;> cases hS : D.serve (D.encode M) t b
    · rfl
    · exact ((h M t b).1 ⟨hS, hM⟩).elim
    · exact ((h M t b).2 ⟨hS, hM⟩).elim
    · rfl

/-- An exact design never maps two different rights matrices to the same state. -/
theorem Design.encode_injective_of_exact {D : Design T n s} (h : D.Exact) :
    Function.Injective D.encode := by
  intro M M' hM
  funext t b
  rw [← h M t b, ← h M' t b, hM]

/-! ## The floor -/

/-- A row of rights read off a number below `2 ^ n`, one bit per block. -/
def rowOf {n : Nat} (x : Fin (2 ^ n)) : Fin n → Bool := fun b => bitOf (toDigits x b)

/-- Distinct numbers below `2 ^ n` give distinct rows. -/
theorem rowOf_injective {n : Nat} : Function.Injective (rowOf (n := n)) := by
  intro x y h
  apply toDigits_injective
  funext b
  exact bitOf_injective (congrFun h b)

/-- **Theorem 1 (the floor).** An exact design (zero leak, full reuse) for `T` tenants and `n`
blocks has at least `2 ^ (T * n)` isolation states. -/
theorem two_pow_le_of_exact (D : Design T n s) (h : D.Exact) : 2 ^ (T * n) ≤ s := by
  have := pow_le_of_injective_of_embedding rowOf rowOf_injective D.encode
    (Design.encode_injective_of_exact h)
  rwa [← Nat.pow_mul, Nat.mul_comm] at this

/-- **Theorem 2 (the floor in bits).** An exact design keeps at least `T * n` bits of isolation
state: `T * n ≤ Nat.log2 s`. -/
theorem mul_le_log2_of_exact (D : Design T n s) (h : D.Exact) : T * n ≤ Nat.log2 s :=
  le_log2_of_two_pow_le (two_pow_le_of_exact D h)

/-- **Theorem 3 (no third option).** With fewer than `2 ^ (T * n)` states, every design has a
rights matrix `M`, a tenant `t` and a block `b` where it leaks or refuses a permitted reuse. -/
theorem leak_or_refused_of_lt (hs : s < 2 ^ (T * n)) (D : Design T n s) :
    ∃ (M : Rights T n) (t : Fin T) (b : Fin n), D.Leak M t b ∨ D.RefusedReuse M t b := by
  apply Classical.byContradiction
  intro hno
  apply Nat.not_le_of_lt hs
  apply two_pow_le_of_exact D
  intro M t b
  cases hM : M t b <;> cases hS : D.serve (D.encode M) t b
  · rfl
  · exact (hno ⟨M, t, b, Or.inl ⟨hS, hM⟩⟩).elim
  · exact (hno ⟨M, t, b, Or.inr ⟨hS, hM⟩⟩).elim
  · rfl

/-- The bit of a Boolean, as an element of `Fin 2`. -/
def fin2OfBool (c : Bool) : Fin 2 := if c then ⟨1, by decide⟩ else ⟨0, by decide⟩

/-- `bitOf` reads back the Boolean `fin2OfBool` wrote. -/
theorem bitOf_fin2OfBool (c : Bool) : bitOf (fin2OfBool c) = c := by
  cases c <;> rfl

-- noncomputable: calls `ofDigits`.
/-- A row of rights written as a number below `2 ^ n`, one bit per block. -/
noncomputable def rowCode {n : Nat} (r : Fin n → Bool) : Fin (2 ^ n) :=
  ofDigits (fun b => fin2OfBool (r b))

/-- Reading back a written row returns it. -/
theorem rowOf_rowCode {n : Nat} (r : Fin n → Bool) : rowOf (rowCode r) = r := by
  funext b
  show bitOf (toDigits (ofDigits (fun b => fin2OfBool (r b))) b) = r b
  rw [toDigits_ofDigits]
  exact bitOf_fin2OfBool (r b)

-- noncomputable: calls `ofDigits` and `rowCode`.
/-- The binary design: the rights matrix is stored as the number whose base-`2 ^ n` digit `t`
is row `t` written in binary (so bit `t * n + b` is `M t b`), and `serve` reads that bit back. -/
noncomputable def binaryDesign (T n : Nat) : Design T n ((2 ^ n) ^ T) where
  encode M := ofDigits (fun t => rowCode (M t))
  serve x t := rowOf (toDigits x t)

/-- The binary design is exact. -/
theorem binaryDesign_exact (T n : Nat) : (binaryDesign T n).Exact := by
  intro M t b
  show rowOf (toDigits (ofDigits (fun t => rowCode (M t))) t) b = M t b
  simp only [toDigits_ofDigits, rowOf_rowCode]

/-- **Theorem 4 (the floor is tight).** There is an exact design with exactly `2 ^ (T * n)`
states. -/
theorem exists_exact_design (T n : Nat) : ∃ D : Design T n (2 ^ (T * n)), D.Exact := by
  rw [Nat.mul_comm, Nat.pow_mul]
  exact ⟨binaryDesign T n, binaryDesign_exact T n⟩

/-- A design with `s` states, run with `s' ≥ s` states (the extra states are never used). -/
def Design.widen {s' : Nat} (hle : s ≤ s') (D : Design T n s) : Design T n s' where
  encode M := Fin.castLE hle (D.encode M)
  serve x t b := if hx : x.val < s then D.serve ⟨x.val, hx⟩ t b else false

/-- Widening keeps a design exact. -/
theorem Design.widen_exact {s' : Nat} (hle : s ≤ s') {D : Design T n s} (h : D.Exact) :
    (D.widen hle).Exact := by
  intro M t b
  show (if hx : (D.encode M).val < s then D.serve ⟨(D.encode M).val, hx⟩ t b else false) = M t b
  rw [dif_pos (D.encode M).isLt]
  exact h M t b

/-- Exact designs with `s` states exist exactly when `2 ^ (T * n) ≤ s`. -/
theorem exists_exact_iff (T n s : Nat) :
    (∃ D : Design T n s, D.Exact) ↔ 2 ^ (T * n) ≤ s := by
  constructor
  · intro ⟨D, h⟩
    exact two_pow_le_of_exact D h
  · intro hle
    obtain ⟨D, h⟩ := exists_exact_design T n
    exact ⟨D.widen hle, Design.widen_exact hle h⟩

/-! ## Single owner -/

/-- Single-owner rights: block `b` is owned by tenant `o b`. -/
abbrev Owners (T n : Nat) : Type := Fin n → Fin T

/-- The rights matrix of an owner map: a tenant may reuse exactly its own blocks. -/
def ownerRights (o : Owners T n) : Rights T n := fun t b => decide (o b = t)

/-- A design for single-owner rights with `s` states. -/
structure OwnerDesign (T n s : Nat) where
  /-- The isolation state kept for an owner map. -/
  encode : Owners T n → Fin s
  /-- The reuse decision, computed from the state alone. -/
  serve : Fin s → Fin T → Fin n → Bool

/-- Exact on all single-owner matrices: tenant `t` is served block `b` iff `t` owns `b`. -/
def OwnerDesign.Exact (D : OwnerDesign T n s) : Prop :=
  ∀ (o : Owners T n) (t : Fin T) (b : Fin n), D.serve (D.encode o) t b = decide (o b = t)

/-- A leak under single ownership: tenant `t` is served block `b` that it does not own. -/
def OwnerDesign.Leak (D : OwnerDesign T n s) (o : Owners T n) (t : Fin T) (b : Fin n) : Prop :=
  D.serve (D.encode o) t b = true ∧ decide (o b = t) = false

/-- A refused reuse under single ownership: tenant `t` is denied its own block `b`. -/
def OwnerDesign.RefusedReuse (D : OwnerDesign T n s) (o : Owners T n) (t : Fin T) (b : Fin n) :
    Prop :=
  D.serve (D.encode o) t b = false ∧ decide (o b = t) = true

/-- Any design for general rights is in particular a single-owner design: keep the state of the
owner map's rights matrix. -/
def Design.toOwner (D : Design T n s) : OwnerDesign T n s where
  encode o := D.encode (ownerRights o)
  serve := D.serve

/-- A design exact on all rights matrices is exact on the single-owner ones. -/
theorem Design.toOwner_exact {D : Design T n s} (h : D.Exact) : D.toOwner.Exact :=
  fun o t b => h (ownerRights o) t b

/-- An exact single-owner design never maps two different owner maps to the same state. -/
theorem OwnerDesign.encode_injective_of_exact {D : OwnerDesign T n s} (h : D.Exact) :
    Function.Injective D.encode := by
  intro o o' ho
  funext b
  have h1 := h o (o b) b
  have h2 := h o' (o b) b
  rw [ho, h2] at h1
  exact (of_decide_eq_true (h1.trans (decide_eq_true rfl))).symm

/-- **Theorem 5a (single-owner floor).** A design exact on all single-owner rights matrices has
at least `T ^ n` states. -/
theorem pow_le_of_ownerExact (D : OwnerDesign T n s) (h : D.Exact) : T ^ n ≤ s :=
  pow_le_of_injective D.encode (OwnerDesign.encode_injective_of_exact h)

-- noncomputable: calls `ofDigits`.
/-- The digit design: the owner map is stored as the number whose base-`T` digit `b` is the owner
of block `b`; `serve` compares that digit with the tenant. -/
noncomputable def digitDesign (T n : Nat) : OwnerDesign T n (T ^ n) where
  encode o := ofDigits o
  serve x t b := decide (toDigits x b = t)

/-- The digit design is exact. -/
theorem digitDesign_exact (T n : Nat) : (digitDesign T n).Exact := by
  intro o t b
  show decide (toDigits (ofDigits o) b = t) = decide (o b = t)
  rw [toDigits_ofDigits]

/-- **Theorem 5b (the single-owner floor is tight).** There is a design with exactly `T ^ n`
states that is exact on all single-owner rights matrices. -/
theorem exists_ownerExact_design (T n : Nat) : ∃ D : OwnerDesign T n (T ^ n), D.Exact :=
  ⟨digitDesign T n, digitDesign_exact T n⟩

/-- **Theorem 5c (single-owner floor in bits).** An exact single-owner design keeps at least
`n * Nat.log2 T` bits: `n * Nat.log2 T ≤ Nat.log2 s` (as `2 ^ (n * log2 T) ≤ T ^ n ≤ s`). -/
theorem mul_log2_le_log2_of_ownerExact (D : OwnerDesign T n s) (h : D.Exact) :
    n * Nat.log2 T ≤ Nat.log2 s := by
  by_cases hT : T = 0
  · subst hT
    rw [Nat.log2_zero, Nat.mul_zero]
    exact Nat.zero_le _
  · apply le_log2_of_two_pow_le
    calc 2 ^ (n * Nat.log2 T) = (2 ^ Nat.log2 T) ^ n := by rw [Nat.mul_comm, Nat.pow_mul]
      _ ≤ T ^ n := Nat.pow_le_pow_left (Nat.log2_self_le hT) n
      _ ≤ s := pow_le_of_ownerExact D h

/-- **Theorem 5d (sharper bits form).** An exact single-owner design has
`Nat.log2 (T ^ n) ≤ Nat.log2 s`. -/
theorem log2_pow_le_log2_of_ownerExact (D : OwnerDesign T n s) (h : D.Exact) :
    Nat.log2 (T ^ n) ≤ Nat.log2 s :=
  log2_le_log2_of_le (pow_le_of_ownerExact D h)

/-- **Theorem 5e (no third option, single owner).** With fewer than `T ^ n` states, every
single-owner design leaks a block to a non-owner or denies an owner its block, for some owner
map, tenant and block. -/
theorem ownerLeak_or_refused_of_lt (hs : s < T ^ n) (D : OwnerDesign T n s) :
    ∃ (o : Owners T n) (t : Fin T) (b : Fin n), D.Leak o t b ∨ D.RefusedReuse o t b := by
  apply Classical.byContradiction
  intro hno
  apply Nat.not_le_of_lt hs
  apply pow_le_of_ownerExact D
  intro o t b
  cases hM : decide (o b = t) <;> cases hS : D.serve (D.encode o) t b
  · rfl
  · exact (hno ⟨o, t, b, Or.inl ⟨hS, hM⟩⟩).elim
  · exact (hno ⟨o, t, b, Or.inr ⟨hS, hM⟩⟩).elim
  · rfl

end KVCache.Isolation

end
