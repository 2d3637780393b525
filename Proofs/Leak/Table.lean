module

public import Proofs.Leak.Salted

/-!
# Each block once, with an access table: the floor does not force `T` copies

`Proofs.Leak.Salted` shows that the keyed salted cache is an exact design of the isolation floor
and that it stores a block shared by `T` tenants `T` times. The floor counts isolation *states*
(`T * n` bits), not copies of the data: this file exhibits a design that is exactly as exact,
with every block held once.

## The model

* The store (`store`) is an unsalted cache of the blocks of every admitted request (a request
  that brings its own salt is refused, as under `keyed`): each block once.
* The access table (`table`) holds an entry (tenant `t`, block `b`) iff one of `t`'s admitted
  requests computed `b`: one bit per (tenant, block), `T * n` bits over `n` blocks.
* A request is served the leading blocks that its tenant's row of the table marks
  (`tableAnswer`); every marked block is in the store (`store_of_table`).

## Results, in words

* `tableAnswer_eq_keyed`: for every history and every request, the store with its table serves
  exactly what the keyed salted cache serves (hence zero leak and full own reuse, as proved there).
* `store_nodup`: the store holds each block at most once, whatever the history.
* `table_realises`: after the history of a rights matrix `M`, the table's entry (`t`, `b`) is
  present iff `M t b`: the table is the rights matrix, the floor's `T * n` bits.

Limits: the model counts entries, not bytes; the table's cost (one bit per tenant and block) is
stated, not measured, and no eviction is modelled here (see `Proofs.Leak.Eviction`).
-/

@[expose] public section

namespace KVCache.Leak

open KVCache.Isolation

variable {T : Nat} {γ σ κ : Type} [DecidableEq κ]

/-- The access table's admission: a request that brings no salt is admitted under its tenant's
row of the table; a request that brings one is refused, as `keyed` refuses it. -/
def tableAdmit : Admission T γ (Fin T)
  | t, none => some t
  | _, some _ => none

-- noncomputable: `List.filter` (`List.reverse._redArg`) and `run`
/-- The store: the blocks of every admitted request (no salt of its own), under no salt. -/
noncomputable def store (rs : List (Request T γ κ)) : Cache Unit κ :=
  run unsalted (rs.filter fun r => decide (r.claimed = none))

-- noncomputable: calls `run`
/-- The access table: an entry (tenant `t`, block `b`) for each block of `t`'s admitted requests. -/
noncomputable def table (rs : List (Request T γ κ)) : Cache (Fin T) κ :=
  run tableAdmit rs

-- noncomputable: calls `hitLen` and `table`
/-- How many blocks request `r` is served after the history `rs`: the leading blocks its
tenant's row of the table marks (0 when it brings its own salt and is refused). -/
noncomputable def tableAnswer (rs : List (Request T γ κ)) (r : Request T γ κ) : Nat :=
  match r.claimed with
  | none => hitLen (table rs) r.tenant r.blocks
  | some _ => 0

omit [DecidableEq κ] in
/-- The table admits a request under row `t` iff it is `t`'s and brings no salt. -/
theorem tableAdmit_eq_some_iff {t t' : Fin T} {c : Option γ} :
    tableAdmit t' c = some t ↔ t' = t ∧ c = none := by
  cases c with
  | none => simp [tableAdmit]
  | some g => simp [tableAdmit]

/-- Every block the table marks for some tenant is in the store. -/
theorem store_of_table {rs : List (Request T γ κ)} {t : Fin T} {k : κ}
    (h : (t, k) ∈ table rs) : ((), k) ∈ store rs := by
  unfold table at h
  unfold store
  obtain ⟨r, hr, h1, h2⟩ := mem_run.1 h
  exact mem_run.2 ⟨r, List.mem_filter.2 ⟨hr, decide_eq_true (tableAdmit_eq_some_iff.1 h1).2⟩,
    rfl, h2⟩

/-- **The store with its table serves what the keyed salted cache serves.** For an injective salt
map, every history `rs` and every request `r`, the number of blocks `r` is served is the same. -/
theorem tableAnswer_eq_keyed {salt : Fin T → σ} [DecidableEq σ] (hs : Function.Injective salt)
    (rs : List (Request T σ κ)) (r : Request T σ κ) :
    tableAnswer rs r = answer (keyed salt) (run (keyed salt) rs) r := by
  unfold tableAnswer answer
  cases hc : r.claimed with
  | some g => rfl
  | none =>
    show hitLen (table rs) r.tenant r.blocks =
      hitLen (run (keyed salt) rs) (salt r.tenant) r.blocks
    apply hitLen_congr
    intro k
    unfold table
    rw [mem_run, mem_run]
    simp only [tableAdmit_eq_some_iff, keyed_eq_some_iff hs]

/-- Inserting blocks never duplicates an entry. -/
theorem nodup_insertAll {s : σ} [DecidableEq σ] :
    ∀ (ks : List κ) (c : Cache σ κ), c.Nodup → (insertAll s c ks).Nodup
  | [], _, h => h
  | k :: ks, c, h => by
    rw [insertAll]
    apply nodup_insertAll ks
    by_cases hk : (s, k) ∈ c
    · rw [if_pos hk]; exact h
    · rw [if_neg hk]; exact List.nodup_cons.2 ⟨hk, h⟩

/-- Serving a history never duplicates an entry. -/
theorem nodup_runFrom [DecidableEq σ] (A : Admission T γ σ) :
    ∀ (rs : List (Request T γ κ)) (c : Cache σ κ), c.Nodup → (runFrom A c rs).Nodup
  | [], _, h => h
  | r :: rs, c, h => by
    rw [runFrom]
    apply nodup_runFrom A rs
    unfold step
    cases A r.tenant r.claimed with
    | none => exact h
    | some s => exact nodup_insertAll r.blocks c h

/-- **Each block is stored once.** Whatever the history, the store holds no block twice. -/
theorem store_nodup (rs : List (Request T γ κ)) : (store rs).Nodup := by
  unfold store run
  exact nodup_runFrom _ _ _ List.nodup_nil

/-- **The table is the rights matrix.** After the history of a rights matrix `M`, the table
holds (`t`, `b`) iff `M t b`: `T * n` bits, the isolation floor's, beside one copy of each
block. -/
theorem table_realises {n : Nat} (M : Rights T n) (t : Fin T) (b : Fin n) :
    (t, b) ∈ table (historyOf (γ := γ) M) ↔ M t b = true := by
  unfold table
  rw [mem_run]
  constructor
  · rintro ⟨r, hr, h1, h2⟩
    obtain ⟨t', -, hr'⟩ := List.mem_map.1 hr
    subst hr'
    obtain ⟨h3, -⟩ := tableAdmit_eq_some_iff.1 h1
    have h4 := (List.mem_filter.1 h2).2
    simp only at h3 h4
    rw [← h3]
    exact h4
  · intro h
    exact ⟨_, List.mem_map.2 ⟨t, List.mem_finRange t, rfl⟩, tableAdmit_eq_some_iff.2 ⟨rfl, rfl⟩,
      List.mem_filter.2 ⟨List.mem_finRange b, h⟩⟩

end KVCache.Leak

end
