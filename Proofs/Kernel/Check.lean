module

public import Proofs.Kernel.Invariants

/-!
# Single-owner state movement: the finite check, and why a passing table is exact

A *table* for a configuration `cfg` lists kernel states by their codes (`encKern`): a bitmap
`bm` of the listed codes below `2 ^ n`, and one `Row` per listed code, made by the Python
reference (`pytools.results.kernel`) with its own step function. `checkTable` is what the
generated module `Proofs.Kernel.Table` runs with `decide +kernel`. This file proves what a
passing table means:

* **The listed states are exactly the reachable ones** (`kreach_iff_listed`): the initial
  state is listed; every request a listed state accepts is one of its *candidates*
  (`accepted_mem_candidates`, proved for every configuration), and every accepted candidate
  leads to a listed state (closure); every listed state other than the initial one names a
  listed parent with a smaller code and the candidate that leads from it (a witness). So the
  table is a certified model check of the reachable set, not a list asserted by Python.
* **Lean agrees with the reference on every request of the alphabet, in every reachable
  state** (`answers_eq_expected`): the answer digit of each of the domain's requests
  (`alphabet`: every token identity with every holder field, presenter and operation) equals
  the reference's, and every candidate's whole outcome (next state and messages sent) equals
  the reference's (`outs_eq`).

The check is affordable because a token group (the 104 requests presenting one token) whose
token the kernel refuses is decided by one token check (`groupDigits_eq`); the reference's
digits are written per group as an index into a dictionary of digit strings
(`expandGroups`), a lossless encoding since a group's digits are a function of the state's
answers only.
-/

@[expose] public section

namespace KVCache.Kernel

/-! ## The request alphabet of a domain

Every id field ranges over the known ids and one unknown id; epochs, generations and nonces
range over their whole width. The alphabet is grouped by token: for every block `b`
(`0..blocks`), epoch, generation and nonce (`0..maxSeq-1`), in this order (last fastest),
first every capability request on `⟨b, h, e, g, n⟩` (holder field `h`, presenter `p`, both
`0..holders`, and operation: read, evict, begin to `0..holders`), then for every presenter `p`
in `0..holders` commit and abort of the ticket `⟨b, e, g, n⟩` by `p`. After the groups:
`alloc p b`, `advance`, `resend b`. -/

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- The shapes of the capability requests of a group: holder field, presenter, operation
(0 read, 1 evict, `2 + r` begin to `r`). -/
noncomputable def capShapes (cfg : Config) : List (Nat × Nat × Nat) :=
  (List.range (cfg.holders + 1)).flatMap fun h =>
    (List.range (cfg.holders + 1)).flatMap fun p =>
      (List.range (cfg.holders + 3)).map fun op => (h, p, op)

/-- The capability request of shape `s` on the token `⟨b, _, e, g, n⟩`. -/
def capReq (b e g n : Nat) : Nat × Nat × Nat → Req
  | (h, p, 0) => .read p ⟨b, h, e, g, n⟩
  | (h, p, 1) => .evict p ⟨b, h, e, g, n⟩
  | (h, p, r + 2) => .begin p ⟨b, h, e, g, n⟩ r

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- The shapes of the ticket requests of a group: presenter, operation (0 commit, 1 abort). -/
noncomputable def tktShapes (cfg : Config) : List (Nat × Nat) :=
  (List.range (cfg.holders + 1)).flatMap fun p => [(p, 0), (p, 1)]

/-- The ticket request of shape `s` on the ticket `⟨b, e, g, n⟩`. -/
def tktReq (b e g n : Nat) : Nat × Nat → Req
  | (p, 0) => .commit p ⟨b, e, g, n⟩
  | (p, _ + 1) => .abort p ⟨b, e, g, n⟩

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- The token identities of the alphabet: block, epoch, generation, nonce. -/
noncomputable def tokQuads (cfg : Config) : List (Nat × Nat × Nat × Nat) :=
  (List.range (cfg.blocks + 1)).flatMap fun b =>
    (List.range (cfg.maxEpoch + 1)).flatMap fun e =>
      (List.range (cfg.maxGen + 1)).flatMap fun g =>
        (List.range cfg.maxSeq).map fun n => (b, e, g, n)

-- noncomputable: compiling it needs `List.appendTR`, absent from the registry Lean.
/-- The requests of one token group. -/
noncomputable def tokGroup (cfg : Config) : Nat × Nat × Nat × Nat → List Req
  | (b, e, g, n) =>
    (capShapes cfg).map (capReq b e g n) ++ (tktShapes cfg).map (tktReq b e g n)

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- The requests after the groups: `alloc p b`, `advance`, `resend b`. -/
noncomputable def otherReqs (cfg : Config) : List Req :=
  (List.range (cfg.holders + 1)).flatMap (fun p => (List.range (cfg.blocks + 1)).map (.alloc p))
    ++ .advance :: (List.range (cfg.blocks + 1)).map .resend

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- The request alphabet of a domain. -/
noncomputable def alphabet (cfg : Config) : List Req :=
  (tokQuads cfg).flatMap (tokGroup cfg) ++ otherReqs cfg

/-- Digits in base 16, the first one lowest. -/
def digitsOf : List Nat → Nat
  | [] => 0
  | d :: ds => d + 16 * digitsOf ds

-- noncomputable: calls `step`, which has no compiled code here.
/-- Lean's answers to every request of the alphabet in state `k`, as one number: the answer
digit of request `i` at `16 ^ i`. The generated tables compare it with the reference's. -/
noncomputable def answers (cfg : Config) (k : Kern) : Nat :=
  digitsOf ((alphabet cfg).map fun r => (step cfg k r).digit)

/-! ## Candidates: the only requests a state can accept -/

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- The requests about block `b` (record `x`) that state `k` can accept: by every holder, read,
evict, commit, abort and begin (to every holder) with the block's current capability or
ticket; resend; alloc by every holder. -/
noncomputable def blockCands (cfg : Config) (k : Kern) (b : Nat) (x : Blk) : List Req :=
  (List.range cfg.holders).flatMap (fun p =>
      .read p ⟨b, p, k.epoch, x.gen, x.seq - 1⟩ :: .evict p ⟨b, p, k.epoch, x.gen, x.seq - 1⟩ ::
        .commit p ⟨b, k.epoch, x.gen, x.seq - 1⟩ :: .abort p ⟨b, k.epoch, x.gen, x.seq - 1⟩ ::
        (List.range cfg.holders).map (fun r => .begin p ⟨b, p, k.epoch, x.gen, x.seq - 1⟩ r)) ++
    (.resend b :: (List.range cfg.holders).map (fun p => .alloc p b))

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- Every request state `k` can accept (`accepted_mem_candidates`): `advance`, then the
candidates of every block in order. -/
noncomputable def candidates (cfg : Config) (k : Kern) : List Req :=
  .advance :: (List.range k.blocks.length).flatMap (fun b =>
    match k.blocks[b]? with
    | some x => blockCands cfg k b x
    | none => [])

/-! ## The table checker -/

-- noncomputable: compiling it needs `List.lengthTR`, absent from the registry Lean.
/-- The number of requests in a token group. -/
noncomputable def groupLen (cfg : Config) : Nat := (capShapes cfg).length + (tktShapes cfg).length

-- noncomputable: compiling it needs `List.getD`, absent from the registry Lean.
/-- The digits of `n` token groups and the requests after them, from a dictionary of group
digit strings: base-32 digit `i` of `gs` is group `i`'s entry, `others` the rest. -/
noncomputable def expandGroups (cfg : Config) (dict : List Nat) : Nat → Nat → Nat → Nat
  | 0, _, others => others
  | n + 1, gs, others =>
    dict.getD (gs % 32) 0 + 16 ^ groupLen cfg * expandGroups cfg dict n (gs / 32) others

/-- One generated table row, for one listed state. -/
structure Row where
  /-- The state's code. -/
  code : Nat
  /-- Per token group, in alphabet order, the dictionary index of the reference's digits
  (base-32 digit `i` for group `i`). -/
  groups : Nat
  /-- The reference's digits for the requests after the groups. -/
  others : Nat
  /-- Per candidate of the state, the reference's outcome: 0 if refused, else `1 + encOut`. -/
  outs : List Nat
  /-- The code of a listed parent state (unused for the initial state). -/
  parent : Nat
  /-- The index, among the parent's candidates, of the request that leads here. -/
  via : Nat

-- noncomputable: compiling it needs `List.lengthTR`, absent from the registry Lean.
/-- The reference's answer number of a row: its digits for every request of the alphabet. -/
noncomputable def Row.expected (cfg : Config) (dict : List Nat) (row : Row) : Nat :=
  expandGroups cfg dict (tokQuads cfg).length row.groups row.others

/-- 1 for a shape whose presenter is a holder, else 0. -/
def shapeBit (cfg : Config) (s : Nat × Nat × Nat) : Nat :=
  bif Nat.blt s.2.1 cfg.holders then 1 else 0

-- noncomputable: compiling it needs `List.reverse`, absent from the registry Lean.
/-- The digit pattern of a group whose token is refused: the refusal's code wherever the
presenter is a holder, 0 (`unknownPresenter`) elsewhere, per unit of code. -/
noncomputable def presPattern (cfg : Config) : Nat := digitsOf ((capShapes cfg).map (shapeBit cfg))

/-- 1 for a ticket shape whose presenter is a holder, else 0. -/
def tktBit (cfg : Config) (s : Nat × Nat) : Nat :=
  bif Nat.blt s.1 cfg.holders then 1 else 0

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- The digit pattern of a group whose ticket is refused, per unit of code. -/
noncomputable def tktPattern (cfg : Config) : Nat := digitsOf ((tktShapes cfg).map (tktBit cfg))

-- noncomputable: calls `tktCheck`, which has no compiled code here.
/-- Lean's answer digits for one token group, computed with one token check when the token is
refused (`groupDigits_eq`: they are the digits of `step` on every request of the group). -/
noncomputable def groupDigits (cfg : Config) (k : Kern) : Nat × Nat × Nat × Nat → Nat
  | (b, e, g, n) =>
    (match tokCheck k b e g n with
      | .error r => r.code * presPattern cfg
      | .ok _ =>
        digitsOf (((capShapes cfg).map (capReq b e g n)).map fun r => (step cfg k r).digit))
    + 16 ^ (capShapes cfg).length *
      (match tktCheck k ⟨b, e, g, n⟩ with
        | .error r => r.code * tktPattern cfg
        | .ok _ =>
          digitsOf (((tktShapes cfg).map (tktReq b e g n)).map fun r => (step cfg k r).digit))

-- noncomputable: calls `step`, which has no compiled code here.
/-- Compare Lean's answers with the dictionary entries named by `gs`, one token group at a
time, then the requests after the groups with `others`. -/
noncomputable def checkGroups (cfg : Config) (k : Kern) (dict : List Nat) :
    List (Nat × Nat × Nat × Nat) → Nat → Nat → Bool
  | [], _, others => Nat.beq (digitsOf ((otherReqs cfg).map fun r => (step cfg k r).digit)) others
  | q :: qs, gs, others =>
    Nat.beq (groupDigits cfg k q) (dict.getD (gs % 32) 0) &&
      checkGroups cfg k dict qs (gs / 32) others

-- noncomputable: calls `step`, which has no compiled code here.
/-- A request's whole outcome as a number: 0 if refused, else `1 + encOut`. -/
noncomputable def outCode (cfg : Config) (k : Kern) (r : Req) : Nat :=
  match (step cfg k r).verdict with
  | .ok => 1 + encOut cfg (step cfg k r)
  | .no _ => 0

-- noncomputable: calls `step`, which has no compiled code here.
/-- If `r` is accepted, its next state is listed in `bm` and its code decodes back to it. -/
noncomputable def succOk (cfg : Config) (bm : Nat) (k : Kern) (r : Req) : Bool :=
  match (step cfg k r).verdict with
  | .ok => Nat.testBit bm (encKern cfg (step cfg k r).kern) &&
      decide (decKern cfg (encKern cfg (step cfg k r).kern) = (step cfg k r).kern)
  | .no _ => true

-- noncomputable: calls `outCode`, which has no compiled code here.
/-- Compare the outcomes of the requests `rs` with the expected ones and check the closure. -/
noncomputable def checkOuts (cfg : Config) (bm : Nat) (k : Kern) : List Req → List Nat → Bool
  | [], [] => true
  | r :: rs, e :: es => Nat.beq (outCode cfg k r) e && succOk cfg bm k r && checkOuts cfg bm k rs es
  | _, _ => false

-- noncomputable: calls `Kern.init`, which has no compiled code here.
/-- The witness of a row with code `c`: `c` is the initial state's code, or the parent has a
smaller code, is listed, and its candidate number `via` is accepted and leads to `c`'s
state. -/
noncomputable def witnessOk (cfg : Config) (bm c : Nat) (row : Row) : Bool :=
  Nat.beq c (encKern cfg (Kern.init cfg)) ||
    (Nat.blt row.parent c && Nat.testBit bm row.parent &&
      match (candidates cfg (decKern cfg row.parent))[row.via]? with
      | some r =>
        decide ((step cfg (decKern cfg row.parent) r).verdict = .ok) &&
          decide ((step cfg (decKern cfg row.parent) r).kern = decKern cfg c)
      | none => false)

-- noncomputable: calls `candidates`, which has no compiled code here.
/-- Check the row of code `c`: its code, agreement on every request of the alphabet and on
every candidate's outcome, closure, witness. -/
noncomputable def checkRow (cfg : Config) (bm : Nat) (dict : List Nat) (c : Nat) (row : Row) :
    Bool :=
  Nat.beq row.code c &&
    checkGroups cfg (decKern cfg c) dict (tokQuads cfg) row.groups row.others &&
    checkOuts cfg bm (decKern cfg c) (candidates cfg (decKern cfg c)) row.outs &&
    witnessOk cfg bm c row

-- noncomputable: compiling it needs `List.isEmpty`, absent from the registry Lean.
/-- Check the codes `c, c + 1, …` (`n` of them): every code whose bit is set in `bm` takes the
next row, and the rows run out exactly. -/
noncomputable def checkCodes (cfg : Config) (bm : Nat) (dict : List Nat) :
    Nat → Nat → List Row → Bool
  | 0, _, rows => rows.isEmpty
  | n + 1, c, rows =>
    if Nat.testBit bm c then
      match rows with
      | [] => false
      | row :: rest => checkRow cfg bm dict c row && checkCodes cfg bm dict n (c + 1) rest
    else checkCodes cfg bm dict n (c + 1) rows

-- noncomputable: calls `Kern.init`, which has no compiled code here.
/-- The whole check of a table: the listed codes lie below `2 ^ n`, the initial state is listed
and decodes back, and every code below `n` passes `checkCodes`. -/
noncomputable def checkTable (cfg : Config) (bm n : Nat) (dict : List Nat) (rows : List Row) :
    Bool :=
  Nat.blt bm (2 ^ n) && Nat.testBit bm (encKern cfg (Kern.init cfg)) &&
    decide (decKern cfg (encKern cfg (Kern.init cfg)) = Kern.init cfg) &&
    checkCodes cfg bm dict n 0 rows

/-! ## Every accepted request is a candidate -/

/-- A capability that passed the checks is the block's current one, issued to `p`. -/
theorem cap_eq_current {c : Cap} {p e : Nat} {x : Blk} (hh : c.holder = p) (he : c.epoch = e)
    (hg : c.gen = x.gen) (hn : c.nonce + 1 = x.seq) :
    c = ⟨c.blk, p, e, x.gen, x.seq - 1⟩ := by
  obtain ⟨b, h, ep, g, n⟩ := c
  simp only at hh he hg hn
  subst hh he hg
  rw [show x.seq - 1 = n by omega]

/-- A ticket that passed the checks is the block's current one. -/
theorem tkt_eq_current {t : Tkt} {e : Nat} {x : Blk} (he : t.epoch = e) (hg : t.gen = x.gen)
    (hn : t.nonce + 1 = x.seq) : t = ⟨t.blk, e, x.gen, x.seq - 1⟩ := by
  obtain ⟨b, ep, g, n⟩ := t
  simp only at he hg hn
  subst he hg
  rw [show x.seq - 1 = n by omega]

/-- A candidate of one block is a candidate of the state. -/
theorem mem_candidates_of_block {cfg : Config} {k : Kern} {b : Nat} {x : Blk} {r : Req}
    (hx : k.blocks[b]? = some x) (hr : r ∈ blockCands cfg k b x) : r ∈ candidates cfg k := by
  obtain ⟨hb, -⟩ := List.getElem?_eq_some_iff.1 hx
  unfold candidates
  refine List.mem_cons_of_mem _ (List.mem_flatMap.2 ⟨b, List.mem_range.2 hb, ?_⟩)
  simpa [hx] using hr

/-- **Every request the kernel accepts is a candidate** of the state, for every configuration
and state: so a table that checks the candidates of a state checks every request it can
accept. -/
theorem accepted_mem_candidates {cfg : Config} {k : Kern} {r : Req}
    (h : (step cfg k r).verdict = .ok) : r ∈ candidates cfg k := by
  cases r with
  | read p c =>
    simp only [step, doRead] at h
    cases hc : capCheck cfg k p c with
    | error e => simp [hc, refuse] at h
    | ok x =>
      obtain ⟨hp, hh, ht, -⟩ := capCheck_ok hc
      obtain ⟨hx, he, hg, hn, -⟩ := tokCheck_ok ht
      rw [cap_eq_current hh he hg hn]
      exact mem_candidates_of_block hx (List.mem_append.2 (.inl (List.mem_flatMap.2
        ⟨p, List.mem_range.2 hp, List.mem_cons.2 (.inl rfl)⟩)))
  | evict p c =>
    simp only [step, doEvict] at h
    cases hc : capCheck cfg k p c with
    | error e => simp [hc, refuse] at h
    | ok x =>
      obtain ⟨hp, hh, ht, -⟩ := capCheck_ok hc
      obtain ⟨hx, he, hg, hn, -⟩ := tokCheck_ok ht
      rw [cap_eq_current hh he hg hn]
      exact mem_candidates_of_block hx (List.mem_append.2 (.inl (List.mem_flatMap.2
        ⟨p, List.mem_range.2 hp, List.mem_cons.2 (.inr (List.mem_cons.2 (.inl rfl)))⟩)))
  | begin p c rcv =>
    simp only [step, doBegin] at h
    cases hc : capCheck cfg k p c with
    | error e => simp [hc, refuse] at h
    | ok x =>
      have hrcv : rcv < cfg.holders := by
        cases h1 : Nat.blt rcv cfg.holders
        · simp [hc, h1, refuse] at h
        · exact Nat.le_of_ble_eq_true h1
      obtain ⟨hp, hh, ht, -⟩ := capCheck_ok hc
      obtain ⟨hx, he, hg, hn, -⟩ := tokCheck_ok ht
      rw [cap_eq_current hh he hg hn]
      exact mem_candidates_of_block hx (List.mem_append.2 (.inl (List.mem_flatMap.2
        ⟨p, List.mem_range.2 hp, List.mem_cons.2 (.inr (List.mem_cons.2 (.inr
          (List.mem_cons.2 (.inr (List.mem_cons.2 (.inr
            (List.mem_map.2 ⟨rcv, List.mem_range.2 hrcv, rfl⟩))))))))⟩)))
  | commit p t =>
    simp only [step, settle] at h
    cases htk : settleCheck cfg k p t true with
    | error e => simp [htk, refuse] at h
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hp, htc, -⟩ := settleCheck_ok htk
      obtain ⟨hx, he, hg, hn, -⟩ := tktCheck_ok htc
      rw [tkt_eq_current he hg hn]
      exact mem_candidates_of_block hx (List.mem_append.2 (.inl (List.mem_flatMap.2
        ⟨p, List.mem_range.2 hp, List.mem_cons.2 (.inr (List.mem_cons.2 (.inr
          (List.mem_cons.2 (.inl rfl)))))⟩)))
  | abort p t =>
    simp only [step, settle] at h
    cases htk : settleCheck cfg k p t false with
    | error e => simp [htk, refuse] at h
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hp, htc, -⟩ := settleCheck_ok htk
      obtain ⟨hx, he, hg, hn, -⟩ := tktCheck_ok htc
      rw [tkt_eq_current he hg hn]
      exact mem_candidates_of_block hx (List.mem_append.2 (.inl (List.mem_flatMap.2
        ⟨p, List.mem_range.2 hp, List.mem_cons.2 (.inr (List.mem_cons.2 (.inr
          (List.mem_cons.2 (.inr (List.mem_cons.2 (.inl rfl)))))))⟩)))
  | alloc p b =>
    simp only [step, doAlloc] at h
    cases hp : Nat.blt p cfg.holders with
    | false => simp [hp, refuse] at h
    | true =>
      cases hb : k.blocks[b]? with
      | none => simp [hp, hb, refuse] at h
      | some x =>
        exact mem_candidates_of_block hb (List.mem_append.2 (.inr (List.mem_cons.2 (.inr
          (List.mem_map.2 ⟨p, List.mem_range.2 (Nat.le_of_ble_eq_true hp), rfl⟩)))))
  | advance =>
    unfold candidates
    exact List.mem_cons.2 (.inl rfl)
  | resend b =>
    simp only [step, doResend] at h
    cases hb : k.blocks[b]? with
    | none => simp [hb, refuse] at h
    | some x =>
      exact mem_candidates_of_block hb (List.mem_append.2 (.inr (List.mem_cons.2 (.inl rfl))))

/-! ## A token group is decided by one token check -/

/-- The digits of a concatenation. -/
theorem digitsOf_append (l₁ l₂ : List Nat) :
    digitsOf (l₁ ++ l₂) = digitsOf l₁ + 16 ^ l₁.length * digitsOf l₂ := by
  induction l₁ with
  | nil => simp [digitsOf]
  | cons d ds ih =>
    have hp : 16 ^ (ds.length + 1) * digitsOf l₂ = 16 * (16 ^ ds.length * digitsOf l₂) := by
      rw [Nat.pow_succ, Nat.mul_comm (16 ^ ds.length) 16, Nat.mul_assoc]
    simp only [List.cons_append, digitsOf, ih, List.length_cons, hp]
    omega

/-- Digits that are all `c` times a pattern's are `c` times the pattern's number. -/
theorem digitsOf_map_mul {α : Type} (l : List α) (f g : α → Nat) (c : Nat)
    (h : ∀ x ∈ l, f x = c * g x) : digitsOf (l.map f) = c * digitsOf (l.map g) := by
  induction l with
  | nil => simp [digitsOf]
  | cons x xs ih =>
    simp only [List.map_cons, digitsOf]
    rw [h x (by simp), ih (fun y hy => h y (by simp [hy])), Nat.mul_add, Nat.mul_left_comm 16 c]

/-- A capability request whose token fails its token check gets the check's refusal if its
presenter is a holder, and `unknownPresenter` (code 0) otherwise. -/
theorem capReq_digit (cfg : Config) (k : Kern) {b e g n : Nat} {r : Refusal}
    (ht : tokCheck k b e g n = .error r) (s : Nat × Nat × Nat) :
    (step cfg k (capReq b e g n s)).digit = r.code * shapeBit cfg s := by
  obtain ⟨h, p, op⟩ := s
  cases hp : Nat.blt p cfg.holders <;> rcases op with _ | _ | op <;>
    simp [capReq, step, doRead, doEvict, doBegin, capCheck, hp, ht, refuse, Out.digit, shapeBit,
      Refusal.code]

/-- A ticket request whose ticket fails its ticket check gets the check's refusal if its
presenter is a holder, and `unknownPresenter` (code 0) otherwise. -/
theorem tktReq_digit (cfg : Config) (k : Kern) {b e g n : Nat} {r : Refusal}
    (ht : tktCheck k ⟨b, e, g, n⟩ = .error r) (s : Nat × Nat) :
    (step cfg k (tktReq b e g n s)).digit = r.code * tktBit cfg s := by
  obtain ⟨p, op⟩ := s
  cases hp : Nat.blt p cfg.holders <;> rcases op with _ | op <;>
    simp [tktReq, step, settle, settleCheck, hp, ht, refuse, Out.digit, tktBit, Refusal.code]

/-- A token group has as many requests as `groupLen` says. -/
theorem tokGroup_length (cfg : Config) (q : Nat × Nat × Nat × Nat) :
    (tokGroup cfg q).length = groupLen cfg := by
  obtain ⟨b, e, g, n⟩ := q
  simp [tokGroup, groupLen]

/-- **`groupDigits` is the digits of `step` on every request of the group**, however the token
check turns out. -/
theorem groupDigits_eq (cfg : Config) (k : Kern) (q : Nat × Nat × Nat × Nat) :
    groupDigits cfg k q = digitsOf ((tokGroup cfg q).map fun r => (step cfg k r).digit) := by
  obtain ⟨b, e, g, n⟩ := q
  simp only [groupDigits, tokGroup, List.map_append, digitsOf_append, List.length_map]
  congr 1
  · cases ht : tokCheck k b e g n with
    | error r =>
      simp only [presPattern]
      rw [List.map_map]
      exact (digitsOf_map_mul _ _ (shapeBit cfg) r.code
        (fun s _ => capReq_digit cfg k ht s)).symm
    | ok x => rfl
  · congr 1
    cases ht : tktCheck k ⟨b, e, g, n⟩ with
    | error r =>
      simp only [tktPattern]
      rw [List.map_map]
      exact (digitsOf_map_mul _ _ (tktBit cfg) r.code
        (fun s _ => tktReq_digit cfg k ht s)).symm
    | ok v => rfl

/-- **A passing group check means Lean's digits on the groups `qs` and the requests after
them are the expanded dictionary entries.** -/
theorem checkGroups_sound (cfg : Config) (k : Kern) (dict : List Nat) :
    ∀ (qs : List (Nat × Nat × Nat × Nat)) (gs others : Nat),
      checkGroups cfg k dict qs gs others = true →
      digitsOf ((qs.flatMap (tokGroup cfg) ++ otherReqs cfg).map fun r => (step cfg k r).digit)
        = expandGroups cfg dict qs.length gs others
  | [], gs, others, h => by
    simp only [checkGroups] at h
    simp [expandGroups, Nat.eq_of_beq_eq_true h]
  | q :: qs, gs, others, h => by
    simp only [checkGroups, Bool.and_eq_true] at h
    have ih := checkGroups_sound cfg k dict qs (gs / 32) others h.2
    rw [List.flatMap_cons, List.append_assoc, List.map_append, digitsOf_append, ih,
      List.length_map, tokGroup_length, ← groupDigits_eq, Nat.eq_of_beq_eq_true h.1]
    rfl

/-- Lean's answers in state `k` are the expansion of a passing row's groups. -/
theorem answers_of_checkGroups {cfg : Config} {k : Kern} {dict : List Nat} {gs others : Nat}
    (h : checkGroups cfg k dict (tokQuads cfg) gs others = true) :
    answers cfg k = expandGroups cfg dict (tokQuads cfg).length gs others :=
  checkGroups_sound cfg k dict (tokQuads cfg) gs others h

/-! ## A passing table is exact -/

/-- A passing outcome check: the outcomes are the expected ones, and every accepted request
leads to a listed state whose code decodes back. -/
theorem checkOuts_sound {cfg : Config} {bm : Nat} {k : Kern} :
    ∀ (rs : List Req) (es : List Nat), checkOuts cfg bm k rs es = true →
      rs.map (outCode cfg k) = es ∧ ∀ r ∈ rs, succOk cfg bm k r = true
  | [], [], _ => ⟨rfl, fun _ h => nomatch h⟩
  | [], _ :: _, h => by simp [checkOuts] at h
  | _ :: _, [], h => by simp [checkOuts] at h
  | r :: rs, e :: es, h => by
    simp only [checkOuts, Bool.and_eq_true] at h
    obtain ⟨⟨h1, h2⟩, h3⟩ := h
    obtain ⟨ih1, ih2⟩ := checkOuts_sound rs es h3
    refine ⟨by simp [Nat.eq_of_beq_eq_true h1, ih1], fun r' hr' => ?_⟩
    rcases List.mem_cons.1 hr' with rfl | hr'
    · exact h2
    · exact ih2 r' hr'

/-- What `succOk` establishes for an accepted request. -/
theorem listed_of_succOk {cfg : Config} {bm : Nat} {k : Kern} {r : Req}
    (h : succOk cfg bm k r = true) (hv : (step cfg k r).verdict = .ok) :
    Nat.testBit bm (encKern cfg (step cfg k r).kern) = true ∧
      decKern cfg (encKern cfg (step cfg k r).kern) = (step cfg k r).kern := by
  simp only [succOk, hv, Bool.and_eq_true, decide_eq_true_eq] at h
  exact h

/-- A passing `checkCodes` has a passing row for every listed code in its range. -/
theorem checkCodes_sound {cfg : Config} {bm : Nat} {dict : List Nat} :
    ∀ (n c : Nat) (rows : List Row), checkCodes cfg bm dict n c rows = true →
      ∀ c', c ≤ c' → c' < c + n → Nat.testBit bm c' = true →
        ∃ row ∈ rows, checkRow cfg bm dict c' row = true
  | 0, c, rows, _, c', h1, h2, _ => absurd h2 (by omega)
  | n + 1, c, rows, h, c', h1, h2, hb => by
    simp only [checkCodes] at h
    by_cases hc : Nat.testBit bm c = true
    · rw [if_pos hc] at h
      cases rows with
      | nil => simp at h
      | cons row rest =>
        simp only [Bool.and_eq_true] at h
        by_cases he : c' = c
        · exact ⟨row, List.mem_cons.2 (.inl rfl), by rw [he]; exact h.1⟩
        · obtain ⟨row', hm, hr⟩ := checkCodes_sound n (c + 1) rest h.2 c' (by omega) (by omega) hb
          exact ⟨row', List.mem_cons_of_mem _ hm, hr⟩
    · rw [if_neg hc] at h
      have hne : c' ≠ c := fun he => hc (he ▸ hb)
      exact checkCodes_sound n (c + 1) rows h c' (by omega) (by omega) hb

/-- The parts of a passing table. -/
theorem checkTable_parts {cfg : Config} {bm n : Nat} {dict : List Nat} {rows : List Row}
    (h : checkTable cfg bm n dict rows = true) :
    bm < 2 ^ n ∧ Nat.testBit bm (encKern cfg (Kern.init cfg)) = true ∧
      decKern cfg (encKern cfg (Kern.init cfg)) = Kern.init cfg ∧
      checkCodes cfg bm dict n 0 rows = true := by
  simp only [checkTable, Bool.and_eq_true, decide_eq_true_eq] at h
  exact ⟨Nat.le_of_ble_eq_true h.1.1.1, h.1.1.2, h.1.2, h.2⟩

/-- Two consecutive passing ranges of codes make one passing range (the generated table checks
its codes in chunks, one theorem each, to bound the kernel's memory). -/
theorem checkCodes_append {cfg : Config} {bm : Nat} {dict : List Nat} :
    ∀ (n₁ n₂ c : Nat) (rows₁ rows₂ : List Row),
      checkCodes cfg bm dict n₁ c rows₁ = true →
      checkCodes cfg bm dict n₂ (c + n₁) rows₂ = true →
      checkCodes cfg bm dict (n₁ + n₂) c (rows₁ ++ rows₂) = true
  | 0, n₂, c, rows₁, rows₂, h₁, h₂ => by
    cases rows₁ with
    | nil => simpa using h₂
    | cons _ _ => simp [checkCodes] at h₁
  | n + 1, n₂, c, rows₁, rows₂, h₁, h₂ => by
    have h₂' : checkCodes cfg bm dict n₂ (c + 1 + n) rows₂ = true := by
      rw [show c + 1 + n = c + (n + 1) by omega]
      exact h₂
    rw [Nat.add_right_comm]
    simp only [checkCodes] at h₁ ⊢
    by_cases hc : Nat.testBit bm c = true
    · rw [if_pos hc] at h₁ ⊢
      cases rows₁ with
      | nil => simp at h₁
      | cons row rest =>
        simp only [Bool.and_eq_true] at h₁
        simp only [List.cons_append, Bool.and_eq_true]
        exact ⟨h₁.1, checkCodes_append n n₂ (c + 1) rest rows₂ h₁.2 h₂'⟩
    · rw [if_neg hc] at h₁ ⊢
      exact checkCodes_append n n₂ (c + 1) rows₁ rows₂ h₁ h₂'

/-- A table passes when its four parts do. -/
theorem checkTable_of_parts {cfg : Config} {bm n : Nat} {dict : List Nat} {rows : List Row}
    (h₁ : Nat.blt bm (2 ^ n) = true) (h₂ : Nat.testBit bm (encKern cfg (Kern.init cfg)) = true)
    (h₃ : decKern cfg (encKern cfg (Kern.init cfg)) = Kern.init cfg)
    (h₄ : checkCodes cfg bm dict n 0 rows = true) : checkTable cfg bm n dict rows = true := by
  unfold checkTable
  simp only [h₁, h₂, decide_eq_true h₃, h₄, Bool.and_self]

/-- Every listed code of a passing table has its passing row. -/
theorem row_of_listed {cfg : Config} {bm n : Nat} {dict : List Nat} {rows : List Row}
    (h : checkTable cfg bm n dict rows = true) {c : Nat} (hc : Nat.testBit bm c = true) :
    ∃ row ∈ rows, checkRow cfg bm dict c row = true := by
  obtain ⟨hlt, -, -, hcodes⟩ := checkTable_parts h
  have hcn : c < n := by
    refine Nat.lt_of_not_le fun hle => ?_
    have : bm < 2 ^ c := Nat.lt_of_lt_of_le hlt (Nat.pow_le_pow_right (by decide) hle)
    rw [Nat.testBit_lt_two_pow this] at hc
    cases hc
  exact checkCodes_sound n 0 rows hcodes c (Nat.zero_le c) (by omega) hc

/-- The parts of a passing row. -/
theorem checkRow_parts {cfg : Config} {bm : Nat} {dict : List Nat} {c : Nat} {row : Row}
    (h : checkRow cfg bm dict c row = true) :
    row.code = c ∧
      checkGroups cfg (decKern cfg c) dict (tokQuads cfg) row.groups row.others = true ∧
      checkOuts cfg bm (decKern cfg c) (candidates cfg (decKern cfg c)) row.outs = true ∧
      witnessOk cfg bm c row = true := by
  simp only [checkRow, Bool.and_eq_true] at h
  exact ⟨Nat.eq_of_beq_eq_true h.1.1.1, h.1.1.2, h.1.2, h.2⟩

/-- Every listed code of a passing table is the code of a reachable state (by its witnesses,
by induction on the code). -/
theorem kreach_of_listed {cfg : Config} {bm n : Nat} {dict : List Nat} {rows : List Row}
    (h : checkTable cfg bm n dict rows = true) :
    ∀ m c, c < m → Nat.testBit bm c = true → KReach cfg (decKern cfg c)
  | 0, _, hc, _ => absurd hc (Nat.not_lt_zero _)
  | m + 1, c, hc, hb => by
    obtain ⟨-, -, hinit, -⟩ := checkTable_parts h
    obtain ⟨row, -, hrow⟩ := row_of_listed h hb
    obtain ⟨-, -, -, hw⟩ := checkRow_parts hrow
    simp only [witnessOk, Bool.or_eq_true, Bool.and_eq_true] at hw
    rcases hw with hi | ⟨⟨hlt, hpb⟩, hv⟩
    · rw [Nat.eq_of_beq_eq_true hi, hinit]
      exact KReach.init
    · have hpc : row.parent < c := Nat.le_of_ble_eq_true hlt
      have ihp := kreach_of_listed h m row.parent (by omega) hpb
      cases hr : (candidates cfg (decKern cfg row.parent))[row.via]? with
      | none => simp [hr] at hv
      | some r =>
        simp only [hr, Bool.and_eq_true, decide_eq_true_eq] at hv
        rw [← hv.2]
        exact KReach.step r ihp hv.1

/-- **A passing table lists exactly the reachable states**: a kernel state is reachable from
the initial one by accepted requests if and only if its code is listed and decodes back to it
(so the rows are a certified model check of the whole reachable set of the domain). -/
theorem kreach_iff_listed {cfg : Config} {bm n : Nat} {dict : List Nat} {rows : List Row}
    (h : checkTable cfg bm n dict rows = true) (k : Kern) :
    KReach cfg k ↔
      Nat.testBit bm (encKern cfg k) = true ∧ decKern cfg (encKern cfg k) = k := by
  constructor
  · intro hk
    induction hk with
    | init =>
      obtain ⟨-, hb, hd, -⟩ := checkTable_parts h
      exact ⟨hb, hd⟩
    | step r _ hv ih =>
      obtain ⟨row, -, hrow⟩ := row_of_listed h ih.1
      obtain ⟨-, -, houts, -⟩ := checkRow_parts hrow
      rw [ih.2] at houts
      exact listed_of_succOk ((checkOuts_sound _ _ houts).2 r (accepted_mem_candidates hv)) hv
  · intro ⟨hb, hd⟩
    rw [← hd]
    exact kreach_of_listed h _ _ (Nat.lt_succ_self _) hb

/-- **In every reachable state Lean agrees with the reference**: the state's row (the one with
its code) has the reference's digit for every request of the alphabet equal to Lean's
(`answers`), and the reference's whole outcome of every candidate equal to Lean's. -/
theorem reachable_agrees {cfg : Config} {bm n : Nat} {dict : List Nat} {rows : List Row}
    (h : checkTable cfg bm n dict rows = true) {k : Kern} (hk : KReach cfg k) :
    ∃ row ∈ rows, row.code = encKern cfg k ∧ answers cfg k = row.expected cfg dict ∧
      (candidates cfg k).map (outCode cfg k) = row.outs := by
  obtain ⟨hb, hd⟩ := (kreach_iff_listed h k).1 hk
  obtain ⟨row, hm, hrow⟩ := row_of_listed h hb
  obtain ⟨hcode, hgroups, houts, -⟩ := checkRow_parts hrow
  rw [hd] at hgroups houts
  exact ⟨row, hm, hcode, answers_of_checkGroups hgroups, (checkOuts_sound _ _ houts).1⟩

end KVCache.Kernel

end
