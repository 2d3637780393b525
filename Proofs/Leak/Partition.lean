module

/-!
# The partitioned pool that runs: one physical pool, a quota per tenant, noninterference

`Proofs.Leak.Eviction` proves noninterference for a class (`PerTenant`) whose fields are the
unwinding conditions themselves, instantiated by `T` disjoint LRU lists. This file models the
design a serving engine can run instead: **one physical pool** of `C` block slots, as vLLM's
`BlockPool`, shared by `T` tenants and split by a quota vector `q` with `Σ q ≤ C`; running
requests hold their blocks (reference counts), a finished request's blocks stay cached and
evictable, eviction picks the least recently used unheld block *of the requesting tenant*, and
a request whose blocks cannot all be placed is refused and changes nothing. Noninterference is
proved from this step's definition (`noninterference`): nothing is assumed as a class field.

## The model

* The pool (`State`) is a list of physical slots, each free (`none`) or charged to a tenant
  (`some t`), and, per tenant, its partition (`Part`): its blocks (`Blk`: a tenant-local number,
  a content hash, a reference count; `refs = 0` means cached and evictable), kept so that the
  unheld blocks appear in the order they were freed (the first one is the least recently used),
  its running requests with the numbers of the blocks each holds, and its next block number.
* A tenant's event (`Event`) is `submit t r hs` (request `r` of tenant `t` with the hashes `hs`
  of its prompt's full blocks) or `finish t r`. `step q s e` serves it:
  - `submit`: the request is served the longest leading run of `hs` found among `t`'s own blocks
    (`served`, held or cached); it takes a reference on each of them (`touchAll`); each missing
    block needs a slot (`alloc`): a free slot while `t` is under its quota (`room`), else `t`'s
    own least recently used unheld block is evicted and reused, else the request is refused
    and the state is left as it was (vLLM's `allocate_slots` answers `None` and the request
    waits: here it is refused; a retry is a new `submit`).
  - `finish`: the request's blocks are released tail first (vLLM frees a request's blocks in
    reverse order, so its last block is evicted first); a block no request holds any more is
    moved to the end of its tenant's list, the most recently used end.
* What a tenant observes of each of its events (`Seen`): the verdict (admitted, refused,
  finished) and the number of leading blocks served from cache; nothing else. `views q t s es`
  lists `t`'s observations over the history `es` (oldest first); `mine t es` is `t`'s events.
* The shared pool (`sharedStep`): the same blocks and requests in one partition for everybody,
  keyed by (tenant, hash) (salted: no tenant is ever served another's block), with a free slot
  while any is free, then the globally least recently used unheld block evicted, and refusal
  when every slot is held.

## Results, in words

1. `noninterference`, **the theorem about the design**: for every quota vector with `Σ q ≤ C`,
   every tenant `t` and every two histories from the empty pool with the same subsequence of
   `t`'s events, `t` observes the same list. The physical slots a tenant's blocks land in may
   differ between the two histories; what it observes may not. The proof rests on two facts:
   another tenant's event never changes `t`'s partition (`step_part_other`), and when `t` is
   under its quota a free slot exists (`room_eq`, from `Σ q ≤ C` and the invariant).
   `views_eq_of_part_eq` states it from any two states that keep the invariant.
2. `inv_after`: in every state reached from the empty pool every tenant holds at most its quota,
   the slots charged to each tenant are exactly its blocks, and the pool's free slots plus all
   tenants' blocks are exactly `C` (`within_quota`, `within_pool`).
3. The shared pool interferes even when only refusals are observed (`shared_refusal_interference`:
   tenant `0` holding both slots gets tenant `1` refused, where alone it is admitted) and even when
   only hits are observed (`shared_hit_interference`: tenant `0`'s traffic evicts tenant `1`'s
   cached block).

`Proofs.Leak.Eviction`'s `perTenant_noninterference` is a sufficient condition (a class whose
fields are unwinding conditions); `noninterference` here is about the pool a plugin runs.

Limits: blocks are keyed by their hash, as vLLM's chained block hashes under the tenant's salt;
the model is sequential (one event at a time: no batching, no timing); a waiting request is
modelled as refused. What a tenant observes is the verdict and the hits: shared compute and
batching with other tenants' requests are left out, and a quota does not close them.
-/

@[expose] public section

namespace KVCache.Leak.Partition

/-- A physical block of a tenant's partition. -/
structure Blk (κ : Type) where
  /-- The block's number inside its tenant's partition (a tenant-local name, not a slot). -/
  id : Nat
  /-- The hash of the block's content (vLLM's chained block hash under the tenant's salt). -/
  hash : κ
  /-- How many running requests hold it; `0` means cached and evictable. -/
  refs : Nat
deriving DecidableEq

/-- One partition's bookkeeping: requests are named by `ρ`, block contents by `κ`. -/
structure Part (ρ κ : Type) where
  /-- The partition's blocks; the unheld ones in the order they were freed (first = LRU). -/
  blocks : List (Blk κ)
  /-- The running requests, each with the numbers of the blocks it holds, in prompt order. -/
  running : List (ρ × List Nat)
  /-- The number the partition's next new block gets. -/
  next : Nat

/-- The empty partition. -/
def Part.empty (ρ κ : Type) : Part ρ κ := ⟨[], [], 0⟩

/-- The pool: each physical slot free (`none`) or charged to a tenant, and each tenant's
partition. -/
structure State (T : Nat) (κ : Type) where
  /-- The physical slots of the pool. -/
  slots : List (Option (Fin T))
  /-- Each tenant's partition. -/
  part : Fin T → Part Nat κ

/-- An event of a tenant. -/
inductive Event (T : Nat) (κ : Type) where
  /-- Tenant `t` submits request `r` whose prompt's full blocks have the hashes `hs`. -/
  | submit (t : Fin T) (r : Nat) (hs : List κ)
  /-- Tenant `t`'s request `r` finishes. -/
  | finish (t : Fin T) (r : Nat)

/-- The tenant of an event. -/
def Event.tenant {T : Nat} {κ : Type} : Event T κ → Fin T
  | .submit t _ _ => t
  | .finish t _ => t

/-- The verdict a tenant sees on one of its events. -/
inductive Verdict where
  /-- The request was admitted: all its blocks were placed. -/
  | admitted
  /-- The request was refused: its blocks could not all be placed; nothing changed. -/
  | refused
  /-- The request's finish was taken. -/
  | finished
deriving DecidableEq

/-- What a tenant observes of one of its events: the verdict and the number of leading blocks
served from cache. -/
structure Seen where
  /-- The verdict. -/
  verdict : Verdict
  /-- How many leading blocks of the prompt were served from cache. -/
  hits : Nat
deriving DecidableEq

variable {T : Nat} {ρ κ : Type} [DecidableEq κ]

/-! ## One partition's operations -/

-- noncomputable: `∃ b ∈ bs` on a list (`List.decidableBEx`): WebAssembly cannot compile it
/-- How many leading hashes of `hs` are found among the blocks `bs` (held or cached). -/
noncomputable def served (bs : List (Blk κ)) : List κ → Nat
  | [] => 0
  | h :: hs => if ∃ b ∈ bs, b.hash = h then served bs hs + 1 else 0

/-- Take a reference on the first block with hash `h`: the blocks afterwards and its number. -/
def touch (h : κ) : List (Blk κ) → List (Blk κ) × Nat
  | [] => ([], 0)
  | b :: bs =>
    if b.hash = h then ({ b with refs := b.refs + 1 } :: bs, b.id)
    else (b :: (touch h bs).1, (touch h bs).2)

/-- Take a reference on a block for each hash of `hs`, in order: the blocks afterwards and the
blocks' numbers. -/
def touchAll : List κ → List (Blk κ) → List (Blk κ) × List Nat
  | [], bs => (bs, [])
  | h :: hs, bs =>
    ((touchAll hs (touch h bs).1).1, (touch h bs).2 :: (touchAll hs (touch h bs).1).2)

/-- Whether a block is unheld (cached and evictable). -/
def Blk.unheld (b : Blk κ) : Bool := b.refs == 0

-- noncomputable: `List.eraseP`, `++` (`List.appendTR`): WebAssembly cannot compile it
/-- Place a new block, numbered from `i` on, for each hash of `hs` in turn: in a free slot while
`room` allows, else in place of the first unheld block (the least recently used, evicted);
`none` when neither is possible. Returns the blocks afterwards and the room left. -/
noncomputable def alloc :
    Nat → Nat → List (Blk κ) → List κ → Option (List (Blk κ) × Nat)
  | room, _, bs, [] => some (bs, room)
  | room + 1, i, bs, h :: hs => alloc room (i + 1) (bs ++ [⟨i, h, 1⟩]) hs
  | 0, i, bs, h :: hs =>
    if ∃ b ∈ bs, b.unheld = true then
      alloc 0 (i + 1) (bs.eraseP Blk.unheld ++ [⟨i, h, 1⟩]) hs
    else none

-- noncomputable: `List.take` (`List.takeTR`), calls `alloc`: WebAssembly cannot compile it
/-- Serve request `r` with hashes `hs` in partition `p` with `room` free slots it may take:
`none` if refused, else the partition afterwards and the number of free slots taken. -/
noncomputable def submitPart (room : Nat) (p : Part ρ κ) (r : ρ) (hs : List κ) :
    Option (Part ρ κ × Nat) :=
  let k := served p.blocks hs
  let hit := touchAll (hs.take k) p.blocks
  match alloc room p.next hit.1 (hs.drop k) with
  | none => none
  | some (bs, left) =>
    some (⟨bs, (r, hit.2 ++ List.range' p.next (hs.length - k)) :: p.running,
      p.next + (hs.length - k)⟩, room - left)

-- noncomputable: `++` (`List.appendTR`): WebAssembly cannot compile it
/-- Release one reference on block number `i`; a block no request holds any more moves to the
end of the list (the most recently used end). -/
noncomputable def release (i : Nat) : List (Blk κ) → List (Blk κ)
  | [] => []
  | b :: bs =>
    if b.id = i then
      if b.refs ≤ 1 then bs ++ [{ b with refs := 0 }] else { b with refs := b.refs - 1 } :: bs
    else b :: release i bs

-- noncomputable: calls `release`: WebAssembly cannot compile it
/-- Release one reference on each block numbered in `is`, in order. -/
noncomputable def releaseAll : List Nat → List (Blk κ) → List (Blk κ)
  | [], bs => bs
  | i :: is, bs => releaseAll is (release i bs)

/-- Whether a running request is request `r`. -/
def isReq [DecidableEq ρ] (r : ρ) (e : ρ × List Nat) : Bool := decide (e.1 = r)

-- noncomputable: `List.find?`, `List.eraseP`, `List.reverse`: WebAssembly cannot compile it
/-- Finish request `r` in partition `p`: its blocks are released tail first and it stops
running; a request that is not running changes nothing. -/
noncomputable def finishPart [DecidableEq ρ] (p : Part ρ κ) (r : ρ) : Part ρ κ :=
  match p.running.find? (isReq r) with
  | none => p
  | some e => ⟨releaseAll e.2.reverse p.blocks, p.running.eraseP (isReq r), p.next⟩

/-! ## The partitioned pool -/

-- noncomputable: `List.sum` (`List.reverse`): WebAssembly cannot compile it
/-- The sum of the quotas of all tenants. -/
noncomputable def quotaSum (q : Fin T → Nat) : Nat := ((List.finRange T).map q).sum

-- noncomputable: `List.replicate` (`List.replicateTR`): WebAssembly cannot compile it
/-- The empty pool of `C` slots. -/
noncomputable def init (T C : Nat) (κ : Type) : State T κ :=
  ⟨List.replicate C none, fun _ => Part.empty Nat κ⟩

-- noncomputable: `List.length` (`List.lengthTR`): WebAssembly cannot compile it
/-- How many blocks tenant `u` holds in the pool (held or cached). -/
noncomputable def used (s : State T κ) (u : Fin T) : Nat := (s.part u).blocks.length

-- noncomputable: `List.sum` (`List.reverse`): WebAssembly cannot compile it
/-- How many blocks all tenants hold together. -/
noncomputable def usedSum (s : State T κ) : Nat := ((List.finRange T).map (used s)).sum

-- noncomputable: calls `used`, `List.count`: WebAssembly cannot compile it
/-- How many free slots tenant `t` may take: up to its quota, and no more than are free. -/
noncomputable def room (q : Fin T → Nat) (s : State T κ) (t : Fin T) : Nat :=
  min (q t - used s t) (s.slots.count none)

/-- Charge the first `n` free slots to tenant `t`. -/
def takeSlots (t : Fin T) : Nat → List (Option (Fin T)) → List (Option (Fin T))
  | 0, l => l
  | _ + 1, [] => []
  | n + 1, none :: l => some t :: takeSlots t n l
  | n + 1, some u :: l => some u :: takeSlots t (n + 1) l

/-- The partitions with tenant `t`'s replaced by `p`. -/
def setPart (s : State T κ) (t : Fin T) (p : Part Nat κ) : Fin T → Part Nat κ :=
  fun u => if u = t then p else s.part u

-- noncomputable: calls `submitPart`, `room`, `finishPart`: WebAssembly cannot compile it
/-- The partitioned pool with quotas `q`: the state after an event and what its tenant observes. -/
noncomputable def step (q : Fin T → Nat) (s : State T κ) : Event T κ → State T κ × Seen
  | .submit t r hs =>
    match submitPart (room q s t) (s.part t) r hs with
    | none => (s, ⟨.refused, 0⟩)
    | some (p, n) =>
      (⟨takeSlots t n s.slots, setPart s t p⟩, ⟨.admitted, served (s.part t).blocks hs⟩)
  | .finish t r => (⟨s.slots, setPart s t (finishPart (s.part t) r)⟩, ⟨.finished, 0⟩)

-- noncomputable: calls `step`: WebAssembly cannot compile it
/-- The state after the history `es` (oldest first). -/
noncomputable def after (q : Fin T → Nat) : State T κ → List (Event T κ) → State T κ
  | s, [] => s
  | s, e :: es => after q (step q s e).1 es

-- noncomputable: calls `step`: WebAssembly cannot compile it
/-- Tenant `t`'s observations of its events in the history `es` (oldest first) from state `s`. -/
noncomputable def views (q : Fin T → Nat) (t : Fin T) :
    State T κ → List (Event T κ) → List Seen
  | _, [] => []
  | s, e :: es =>
    if e.tenant = t then (step q s e).2 :: views q t (step q s e).1 es
    else views q t (step q s e).1 es

-- noncomputable: `List.filter` (`List.reverse`): WebAssembly cannot compile it
/-- Tenant `t`'s events in the history `es`, in order. -/
noncomputable def mine (t : Fin T) (es : List (Event T κ)) : List (Event T κ) :=
  es.filter fun e => decide (e.tenant = t)

/-- The invariant of the partitioned pool with quotas `q` and `C` slots. -/
structure Inv (q : Fin T → Nat) (C : Nat) (s : State T κ) : Prop where
  /-- The pool has `C` slots. -/
  length : s.slots.length = C
  /-- Free slots and all tenants' blocks together are `C`. -/
  pool : s.slots.count none + usedSum s = C
  /-- The slots charged to each tenant are as many as its blocks. -/
  charged : ∀ u, s.slots.count (some u) = used s u
  /-- Each tenant holds at most its quota. -/
  quota : ∀ u, used s u ≤ q u

/-! ## The shared pool -/

-- noncomputable: calls `submitPart`, `finishPart`: WebAssembly cannot compile it
/-- The shared pool of `C` slots: one partition for all, blocks keyed by (tenant, hash) and
requests by (tenant, request); a free slot while any is free, else the globally least recently
used unheld block is evicted, else the request is refused. -/
noncomputable def sharedStep (C : Nat) (p : Part (Fin T × Nat) (Fin T × κ)) :
    Event T κ → Part (Fin T × Nat) (Fin T × κ) × Seen
  | .submit t r hs =>
    match submitPart (C - p.blocks.length) p (t, r) (hs.map fun h => (t, h)) with
    | none => (p, ⟨.refused, 0⟩)
    | some (p', _) => (p', ⟨.admitted, served p.blocks (hs.map fun h => (t, h))⟩)
  | .finish t r => (finishPart p (t, r), ⟨.finished, 0⟩)

-- noncomputable: calls `sharedStep`: WebAssembly cannot compile it
/-- Tenant `t`'s observations of its events in the history `es` under the shared pool. -/
noncomputable def sharedViews (C : Nat) (t : Fin T) :
    Part (Fin T × Nat) (Fin T × κ) → List (Event T κ) → List Seen
  | _, [] => []
  | p, e :: es =>
    if e.tenant = t then (sharedStep C p e).2 :: sharedViews C t (sharedStep C p e).1 es
    else sharedViews C t (sharedStep C p e).1 es

/-! ## Sums over the tenants -/

/-- The tenants are listed once each. -/
theorem finRange_nodup : ∀ n, (List.finRange n).Nodup
  | 0 => by simp [List.finRange_zero]
  | n + 1 => by
    rw [List.finRange_succ, List.nodup_cons]
    refine ⟨by simp [Fin.succ_ne_zero], ?_⟩
    exact List.pairwise_map.2 (List.Pairwise.imp (fun h h' => h (Fin.succ_inj.1 h'))
      (finRange_nodup n))

/-- A sum of `f` is at most the sum of `g` when `f ≤ g` on the list. -/
theorem sum_le_sum {l : List (Fin T)} {f g : Fin T → Nat} (h : ∀ u ∈ l, f u ≤ g u) :
    (l.map f).sum ≤ (l.map g).sum := by
  induction l with
  | nil => simp
  | cons a l ih =>
    simp only [List.map_cons, List.sum_cons]
    have h1 := h a (by simp)
    have h2 := ih fun u hu => h u (List.mem_cons_of_mem _ hu)
    omega

/-- Over a list of distinct tenants containing `t`, with `f ≤ g`, the sum of `f` plus the gap
at `t` is at most the sum of `g`. -/
theorem sum_add_gap_le {t : Fin T} {l : List (Fin T)} {f g : Fin T → Nat} (hl : l.Nodup)
    (ht : t ∈ l) (h : ∀ u ∈ l, f u ≤ g u) :
    (l.map f).sum + (g t - f t) ≤ (l.map g).sum := by
  induction l with
  | nil => simp at ht
  | cons a l ih =>
    rw [List.nodup_cons] at hl
    simp only [List.map_cons, List.sum_cons]
    have ha := h a (by simp)
    have hrest : ∀ u ∈ l, f u ≤ g u := fun u hu => h u (List.mem_cons_of_mem _ hu)
    by_cases hat : a = t
    · subst hat
      have := sum_le_sum hrest
      omega
    · have ht' : t ∈ l := by
        rcases List.mem_cons.1 ht with h' | h'
        · exact absurd h'.symm hat
        · exact h'
      have := ih hl.2 ht' hrest
      omega

/-- Sums that agree everywhere on the list but at a tenant `t` not in it are equal. -/
theorem sum_eq_of_not_mem {t : Fin T} {l : List (Fin T)} {f g : Fin T → Nat} (ht : t ∉ l)
    (h : ∀ u, u ≠ t → g u = f u) : (l.map g).sum = (l.map f).sum := by
  rw [List.map_congr_left fun u hu => h u fun h' => ht (h' ▸ hu)]

/-- Over a list of distinct tenants containing `t`, raising `f` by `n` at `t` alone raises its
sum by `n`. -/
theorem sum_bump {t : Fin T} {l : List (Fin T)} {f g : Fin T → Nat} {n : Nat} (hl : l.Nodup)
    (ht : t ∈ l) (h : ∀ u, u ≠ t → g u = f u) (hn : g t = f t + n) :
    (l.map g).sum = (l.map f).sum + n := by
  induction l with
  | nil => simp at ht
  | cons a l ih =>
    rw [List.nodup_cons] at hl
    simp only [List.map_cons, List.sum_cons]
    by_cases hat : a = t
    · subst hat
      rw [sum_eq_of_not_mem hl.1 h, hn]
      omega
    · have ht' : t ∈ l := by
        rcases List.mem_cons.1 ht with h' | h'
        · exact absurd h'.symm hat
        · exact h'
      rw [ih hl.2 ht', h a hat]
      omega

/-- A sum of zeros is zero. -/
theorem sum_map_zero (l : List (Fin T)) : (l.map fun _ => 0).sum = 0 := by
  induction l with
  | nil => rfl
  | cons a l ih => simp [ih]

/-! ## Counting a partition's blocks -/

/-- Taking references leaves the number of blocks as it was. -/
theorem length_touch (h : κ) : ∀ bs : List (Blk κ), (touch h bs).1.length = bs.length
  | [] => rfl
  | b :: bs => by
    unfold touch
    split
    · rfl
    · simp [length_touch h bs]

/-- Taking references for a list of hashes leaves the number of blocks as it was. -/
theorem length_touchAll :
    ∀ (hs : List κ) (bs : List (Blk κ)), (touchAll hs bs).1.length = bs.length
  | [], _ => rfl
  | h :: hs, bs => by
    simp only [touchAll]
    rw [length_touchAll hs, length_touch]

omit [DecidableEq κ] in
/-- Placing blocks: the room left is at most the room given, and blocks plus room are kept. -/
theorem alloc_spec : ∀ (room i : Nat) (bs : List (Blk κ)) (hs : List κ) (bs' : List (Blk κ))
    (left : Nat), alloc room i bs hs = some (bs', left) →
      left ≤ room ∧ bs'.length + left = bs.length + room
  | room, _, bs, [], bs', left, h => by
    simp only [alloc, Option.some.injEq, Prod.mk.injEq] at h
    obtain ⟨rfl, rfl⟩ := h
    omega
  | room + 1, i, bs, h :: hs, bs', left, hr => by
    simp only [alloc] at hr
    have := alloc_spec room (i + 1) _ hs bs' left hr
    simp only [List.length_append, List.length_singleton] at this
    omega
  | 0, i, bs, h :: hs, bs', left, hr => by
    simp only [alloc] at hr
    split at hr
    · rename_i hex
      obtain ⟨b, hb, hbu⟩ := hex
      have := alloc_spec 0 (i + 1) _ hs bs' left hr
      rw [List.length_append, List.length_eraseP_of_mem hb hbu, List.length_singleton] at this
      have : 0 < bs.length := by
        cases bs with
        | nil => simp at hb
        | cons => simp
      omega
    · simp at hr

/-- An admitted request takes at most the room it is given, and its partition grows by exactly
the free slots it takes. -/
theorem submitPart_spec {room : Nat} {p : Part ρ κ} {r : ρ} {hs : List κ} {p' : Part ρ κ}
    {n : Nat} (h : submitPart room p r hs = some (p', n)) :
    n ≤ room ∧ p'.blocks.length = p.blocks.length + n := by
  unfold submitPart at h
  simp only at h
  split at h
  · simp at h
  · rename_i bs left ha
    simp only [Option.some.injEq, Prod.mk.injEq] at h
    obtain ⟨rfl, rfl⟩ := h
    have := alloc_spec _ _ _ _ _ _ ha
    rw [length_touchAll] at this
    show room - left ≤ room ∧ bs.length = p.blocks.length + (room - left)
    omega

omit [DecidableEq κ] in
/-- Releasing a reference leaves the number of blocks as it was. -/
theorem length_release (i : Nat) : ∀ bs : List (Blk κ), (release i bs).length = bs.length
  | [] => rfl
  | b :: bs => by
    unfold release
    split
    · split <;> simp
    · simp [length_release i bs]

omit [DecidableEq κ] in
/-- Releasing references leaves the number of blocks as it was. -/
theorem length_releaseAll : ∀ (is : List Nat) (bs : List (Blk κ)),
    (releaseAll is bs).length = bs.length
  | [], _ => rfl
  | i :: is, bs => by rw [releaseAll, length_releaseAll is, length_release]

omit [DecidableEq κ] in
/-- Finishing a request leaves the number of its partition's blocks as it was. -/
theorem length_finishPart [DecidableEq ρ] (p : Part ρ κ) (r : ρ) :
    (finishPart p r).blocks.length = p.blocks.length := by
  unfold finishPart
  split
  · rfl
  · exact length_releaseAll _ _

/-! ## Charging free slots -/

/-- Charging slots keeps the number of slots. -/
theorem length_takeSlots (t : Fin T) :
    ∀ (n : Nat) (l : List (Option (Fin T))), (takeSlots t n l).length = l.length
  | 0, _ => by simp [takeSlots]
  | _ + 1, [] => by simp [takeSlots]
  | n + 1, none :: l => by simp [takeSlots, length_takeSlots t n l]
  | n + 1, some u :: l => by simp [takeSlots, length_takeSlots t (n + 1) l]

/-- Charging `n` slots removes `n` free slots (all of them, if fewer). -/
theorem count_none_takeSlots (t : Fin T) : ∀ (n : Nat) (l : List (Option (Fin T))),
    (takeSlots t n l).count none = l.count none - n
  | 0, _ => by simp [takeSlots]
  | _ + 1, [] => by simp [takeSlots]
  | n + 1, none :: l => by
    simp only [takeSlots, List.count_cons, count_none_takeSlots t n l]
    simp <;> omega
  | n + 1, some u :: l => by
    simp only [takeSlots, List.count_cons, count_none_takeSlots t (n + 1) l]
    simp

/-- Charging `n ≤` free slots to `t` gives `t` `n` more slots. -/
theorem count_self_takeSlots (t : Fin T) : ∀ (n : Nat) (l : List (Option (Fin T))),
    n ≤ l.count none → (takeSlots t n l).count (some t) = l.count (some t) + n
  | 0, _, _ => by simp [takeSlots]
  | _ + 1, [], h => by simp at h
  | n + 1, none :: l, h => by
    simp only [takeSlots, List.count_cons]
    simp only [List.count_cons] at h
    rw [count_self_takeSlots t n l (by simp at h; omega)]
    simp <;> omega
  | n + 1, some u :: l, h => by
    simp only [takeSlots, List.count_cons]
    simp only [List.count_cons] at h
    rw [count_self_takeSlots t (n + 1) l (by simpa using h)]
    omega

/-- Charging slots to `t` leaves every other tenant's slots as they were. -/
theorem count_other_takeSlots (t : Fin T) {u : Fin T} (hu : u ≠ t) :
    ∀ (n : Nat) (l : List (Option (Fin T))),
      (takeSlots t n l).count (some u) = l.count (some u)
  | 0, _ => by simp [takeSlots]
  | _ + 1, [] => by simp [takeSlots]
  | n + 1, none :: l => by
    simp only [takeSlots, List.count_cons, count_other_takeSlots t hu n l]
    simp [Ne.symm hu]
  | n + 1, some v :: l => by
    simp only [takeSlots, List.count_cons, count_other_takeSlots t hu (n + 1) l]

/-! ## The invariant -/

omit [DecidableEq κ] in
/-- The empty pool keeps the invariant. -/
theorem inv_init (q : Fin T → Nat) (C : Nat) : Inv q C (init T C κ) where
  length := by simp [init]
  pool := by
    have h1 : usedSum (init T C κ) = 0 := sum_map_zero (List.finRange T)
    have h2 : (List.replicate C (none : Option (Fin T))).count none = C := by simp
    show (List.replicate C none).count none + usedSum (init T C κ) = C
    simp only [h1, h2, Nat.add_zero]
  charged u := by simp [init, used, Part.empty, List.count_replicate]
  quota u := by simp [init, used, Part.empty]

omit [DecidableEq κ] in
/-- **Under its quota, a tenant finds free slots**: in a state keeping the invariant, with
`Σ q ≤ C`, the free slots are at least what tenant `t` may still take. -/
theorem gap_le_free {q : Fin T → Nat} {C : Nat} {s : State T κ} (hs : Inv q C s)
    (hq : quotaSum q ≤ C) (t : Fin T) : q t - used s t ≤ s.slots.count none := by
  have h := sum_add_gap_le (finRange_nodup T) (List.mem_finRange t) fun u _ => hs.quota u
  have h2 := hs.pool
  unfold quotaSum at hq
  unfold usedSum at h2
  omega

omit [DecidableEq κ] in
/-- In a state keeping the invariant, with `Σ q ≤ C`, the room of tenant `t` is what its quota
leaves it. -/
theorem room_eq {q : Fin T → Nat} {C : Nat} {s : State T κ} (hs : Inv q C s)
    (hq : quotaSum q ≤ C) (t : Fin T) : room q s t = q t - used s t :=
  Nat.min_eq_left (gap_le_free hs hq t)

/-- Another tenant's event leaves tenant `t`'s partition as it was. -/
theorem step_part_other (q : Fin T → Nat) (s : State T κ) (e : Event T κ) {t : Fin T}
    (h : e.tenant ≠ t) : (step q s e).1.part t = s.part t := by
  cases e with
  | submit u r hs =>
    have h' : t ≠ u := fun h'' => h (h''.symm)
    simp only [step]
    split
    · rfl
    · simp [setPart, h']
  | finish u r =>
    have h' : t ≠ u := fun h'' => h (h''.symm)
    simp [step, setPart, h']

/-- **Every event keeps the invariant** when `Σ q ≤ C`. -/
theorem inv_step {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) {s : State T κ}
    (hs : Inv q C s) (e : Event T κ) : Inv q C (step q s e).1 := by
  cases e with
  | finish t r =>
    have hu : ∀ u, used (step q s (.finish t r)).1 u = used s u := by
      intro u
      simp only [step, used, setPart]
      split
      · subst u; exact length_finishPart _ _
      · rfl
    have hsum : usedSum (step q s (.finish t r)).1 = usedSum s := by
      unfold usedSum
      rw [List.map_congr_left fun u _ => hu u]
    exact ⟨hs.length, by rw [hsum]; exact hs.pool, fun u => by rw [hu]; exact hs.charged u,
      fun u => by rw [hu]; exact hs.quota u⟩
  | submit t r hs' =>
    simp only [step]
    split
    · exact hs
    · rename_i p n hsub
      suffices Inv q C ⟨takeSlots t n s.slots, setPart s t p⟩ by exact this
      obtain ⟨hn, hp⟩ := submitPart_spec hsub
      have hroom := room_eq hs hq t
      have hfree : n ≤ s.slots.count none := by
        have := gap_le_free hs hq t
        omega
      have hu : ∀ u, u ≠ t →
          used ⟨takeSlots t n s.slots, setPart s t p⟩ u = used s u := by
        intro u hu
        simp [used, setPart, hu]
      have ht : used ⟨takeSlots t n s.slots, setPart s t p⟩ t = used s t + n := by
        have hpt : setPart s t p t = p := by simp [setPart]
        show (setPart s t p t).blocks.length = (s.part t).blocks.length + n
        rw [hpt]
        exact hp
      have hsum : usedSum ⟨takeSlots t n s.slots, setPart s t p⟩ = usedSum s + n :=
        sum_bump (finRange_nodup T) (List.mem_finRange t) hu ht
      refine ⟨?_, ?_, ?_, ?_⟩
      · show (takeSlots t n s.slots).length = C
        rw [length_takeSlots]; exact hs.length
      · show (takeSlots t n s.slots).count none + _ = C
        rw [count_none_takeSlots, hsum]
        have := hs.pool
        omega
      · intro u
        show (takeSlots t n s.slots).count (some u) = _
        by_cases hut : u = t
        · subst hut
          rw [count_self_takeSlots u n _ hfree, ht, hs.charged]
        · rw [count_other_takeSlots t hut n s.slots, hu u hut, hs.charged]
      · intro u
        by_cases hut : u = t
        · subst hut
          rw [ht]
          have := hs.quota u
          omega
        · rw [hu u hut]; exact hs.quota u

/-- Every state reached by a history keeps the invariant when `Σ q ≤ C`. -/
theorem inv_after_of {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) :
    ∀ (s : State T κ) (es : List (Event T κ)), Inv q C s → Inv q C (after q s es)
  | _, [], hs => hs
  | s, e :: es, hs => inv_after_of hq (step q s e).1 es (inv_step hq hs e)

/-- **The invariant of the partitioned pool.** For every quota vector with `Σ q ≤ C`, every
state reached from the empty pool of `C` slots keeps it: `C` slots, free slots plus all blocks
equal to `C`, each tenant charged exactly its blocks, each within its quota. -/
theorem inv_after {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) (es : List (Event T κ)) :
    Inv q C (after q (init T C κ) es) :=
  inv_after_of hq _ es (inv_init q C)

/-- **Every tenant stays within its quota**: in every state reached from the empty pool, when
`Σ q ≤ C`, tenant `u` holds at most `q u` blocks. -/
theorem within_quota {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) (es : List (Event T κ))
    (u : Fin T) : used (after q (init T C κ) es) u ≤ q u :=
  (inv_after hq es).quota u

/-- **The pool stays within its slots**: in every state reached from the empty pool, when
`Σ q ≤ C`, all tenants together hold at most `C` blocks. -/
theorem within_pool {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) (es : List (Event T κ)) :
    usedSum (after q (init T C κ) es) ≤ C := by
  have := (inv_after hq es).pool
  omega

/-! ## Noninterference -/

/-- Two states keeping the invariant that agree on tenant `t`'s partition agree on it after an
event of `t`, and `t` observes the same. -/
theorem step_self {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) {s s' : State T κ}
    (hs : Inv q C s) (hs' : Inv q C s') {t : Fin T} (h : s.part t = s'.part t) (e : Event T κ)
    (he : e.tenant = t) :
    (step q s e).1.part t = (step q s' e).1.part t ∧ (step q s e).2 = (step q s' e).2 := by
  cases e with
  | finish u r =>
    simp only [Event.tenant] at he
    subst he
    simp [step, setPart, h]
  | submit u r hs'' =>
    simp only [Event.tenant] at he
    subst he
    have hr : room q s u = room q s' u := by
      rw [room_eq hs hq, room_eq hs' hq, used, used, h]
    simp only [step, hr, h]
    cases hsub : submitPart (room q s' u) (s'.part u) r hs'' with
    | none => simp [h]
    | some pn =>
      obtain ⟨p, n⟩ := pn
      simp [setPart]

/-- Under the partitioned pool, tenant `t`'s observations over a history are those over its own
events alone, from any state keeping the invariant with the same partition of `t`. -/
theorem views_eq_mine {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) (t : Fin T) :
    ∀ (es : List (Event T κ)) (s s' : State T κ), Inv q C s → Inv q C s' →
      s.part t = s'.part t → views q t s es = views q t s' (mine t es)
  | [], _, _, _, _, _ => by simp [views, mine]
  | e :: es, s, s', hs, hs', h => by
    by_cases he : e.tenant = t
    · have hm : mine t (e :: es) = e :: mine t es := by simp [mine, he]
      rw [hm]
      simp only [views, if_pos he]
      obtain ⟨h1, h2⟩ := step_self hq hs hs' h e he
      rw [h2, views_eq_mine hq t es _ _ (inv_step hq hs e) (inv_step hq hs' e) h1]
    · have hm : mine t (e :: es) = mine t es := by simp [mine, he]
      rw [hm]
      simp only [views, if_neg he]
      exact views_eq_mine hq t es _ s' (inv_step hq hs e) hs'
        ((step_part_other q s e he).trans h)

/-- **Noninterference from any two states.** For every quota vector with `Σ q ≤ C`, from two
states keeping the invariant with the same partition of tenant `t`, two histories with the same
subsequence of `t`'s events give `t` the same observations. -/
theorem views_eq_of_part_eq {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) (t : Fin T)
    {s s' : State T κ} (hs : Inv q C s) (hs' : Inv q C s') (h : s.part t = s'.part t)
    {es es' : List (Event T κ)} (he : mine t es = mine t es') :
    views q t s es = views q t s' es' := by
  rw [views_eq_mine hq t es s s' hs hs' h, he, ← views_eq_mine hq t es' s' s' hs' hs' rfl]

/-- **Noninterference of the partitioned pool.** For every quota vector `q` with `Σ q ≤ C`,
every tenant `t` and every two histories from the empty pool of `C` slots with the same
subsequence of `t`'s events, `t` observes the same verdicts and hits. -/
theorem noninterference {q : Fin T → Nat} {C : Nat} (hq : quotaSum q ≤ C) (t : Fin T)
    {es es' : List (Event T κ)} (h : mine t es = mine t es') :
    views q t (init T C κ) es = views q t (init T C κ) es' :=
  views_eq_of_part_eq hq t (inv_init q C) (inv_init q C) rfl h

/-! ## The shared pool interferes -/

/-- **The shared pool interferes through refusals.** With two slots and two tenants, tenant `1`
submitting one block is refused after tenant `0` submitted two blocks (still running), and
admitted when tenant `0` sent nothing: the same events of tenant `1`, different verdicts. -/
theorem shared_refusal_interference :
    mine (1 : Fin 2) [Event.submit 0 0 [1, 2], Event.submit 1 0 [(3 : Nat)]] =
      mine 1 [Event.submit (1 : Fin 2) 0 [(3 : Nat)]] ∧
    sharedViews 2 1 (Part.empty _ _) [Event.submit (0 : Fin 2) 0 [1, 2], .submit 1 0 [(3 : Nat)]] =
      [⟨.refused, 0⟩] ∧
    sharedViews 2 1 (Part.empty _ _) [Event.submit (1 : Fin 2) 0 [(3 : Nat)]] =
      [⟨.admitted, 0⟩] := by
  refine ⟨?_, ?_, ?_⟩
  · first | rfl | simp [mine, Event.tenant]
  · decide +kernel
  · decide +kernel

/-- **The shared pool interferes through hits.** With two slots and two tenants, tenant `1`
caches block `5` (submit, finish); if tenant `0` then submits and finishes two blocks, tenant
`1`'s next submission of block `5` is served no block from cache, and one block when tenant `0`
sent nothing: every verdict is "admitted", only the hits differ. -/
theorem shared_hit_interference :
    sharedViews 2 1 (Part.empty _ _)
        [Event.submit (1 : Fin 2) 0 [(5 : Nat)], .finish 1 0, .submit 0 0 [1, 2], .finish 0 0,
          .submit 1 1 [5]] =
      [⟨.admitted, 0⟩, ⟨.finished, 0⟩, ⟨.admitted, 0⟩] ∧
    sharedViews 2 1 (Part.empty _ _)
        [Event.submit (1 : Fin 2) 0 [(5 : Nat)], .finish 1 0, .submit 1 1 [5]] =
      [⟨.admitted, 0⟩, ⟨.finished, 0⟩, ⟨.admitted, 1⟩] := by
  decide +kernel

/-- On the refusal witness's history, the partitioned pool with one slot per tenant admits
tenant `1`'s request: tenant `0`'s two-block request is refused inside its own partition. -/
theorem partition_admits_on_witness :
    views (fun _ => 1) (1 : Fin 2) (init 2 2 Nat)
        [Event.submit 0 0 [1, 2], .submit 1 0 [3]] = [⟨.admitted, 0⟩] := by
  decide +kernel

end KVCache.Leak.Partition

end
