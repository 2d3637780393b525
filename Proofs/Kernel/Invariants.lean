module

public import Proofs.Kernel.Model

/-!
# Single-owner state movement: the invariants

Theorems about the kernel and the system of `Proofs.Kernel.Model`, for every configuration:

* **Accepted means current.** A request the kernel accepts presents a token of the current
  epoch, the block's generation and its latest nonce (`accepted_current`); so stale epochs and
  generations are refused (`stale_epoch_refused`, `stale_gen_refused`), and every refusal
  leaves the state as it was and sends nothing (`refusal_changes_nothing`).
* **Escrow is unreadable** (`escrow_unreadable`).
* **Clocks only move forward.** Every step, accepted or refused, moves each block's
  `(epoch, generation, sequence)` clock forward or leaves it (`step_clockLe`), and so does every
  step of the system, whatever the network does (`sysRun_clockLe`). A token whose slot the
  clock has passed is refused forever (`passed_refused`).
* **A transfer settles at most once.** `commit` hands the block to the receiver, `abort`
  returns it to the sender (`commit_hands_to_receiver`, `abort_restores_sender`); once either
  is accepted, the ticket is refused in every later state of the system, however the network
  duplicates, delays or replays its messages (`settled_ticket_refused_forever`). That it settles
  *exactly* once needs fair delivery: `Proofs.Kernel.Once`.
* **Evict-and-reallocate kills the past.** After `alloc`, every token of the block's older
  generations is refused forever (`realloc_kills_older_forever`).
* **Safety against forgers, with no assumption about holders.** Every field of a token is a
  public counter, so a holder can write any token. For every request in every kernel state:
  an accepted read or move was presented by the block's stored owner (`only_holder_reads`,
  `only_holder_moves`, `forged_capability_refused`); two capabilities that pass the checks for
  one block are equal and presented by one holder (`at_most_one_valid_capability`,
  `at_most_one_reader`); an accepted commit was presented by the transfer's receiver, an
  accepted abort by its sender or receiver, and a bystander's are refused whatever ticket it
  presents (`commit_by_receiver`, `abort_by_party`, `bystander_settle_refused`).
* **Progress, and where it stops.** In every reachable state (`KReach.wf`, `SysReach.wf`), the
  owner's read and evict with the block's current capability are accepted, unconditionally
  (`read_progress`, `evict_progress`); its begin while the sequence counter has room
  (`begin_progress`; refused at the bound, `begin_refused_at_bound`); a pending transfer can be
  committed by its receiver and aborted by its sender, unconditionally (`commit_progress`,
  `abort_progress`); and a free block can be reallocated only while its generation has room
  (`alloc_progress`; at `maxGen` it is refused, `alloc_refused_at_bound`, and generations never
  go down, so such a block is never reallocated). Counters only grow: the general model has
  bounds `maxEpoch`, `maxGen`, `maxSeq` of every size, and progress holds below them.
-/

@[expose] public section

namespace KVCache.Kernel

/-! ## Tokens, clocks and well-formed states -/

/-- The block a token is about. -/
def Tok.blk : Tok → Nat
  | .cap c => c.blk
  | .tkt t => t.blk

/-- The epoch a token was issued in. -/
def Tok.epoch : Tok → Nat
  | .cap c => c.epoch
  | .tkt t => t.epoch

/-- The generation a token was issued for. -/
def Tok.gen : Tok → Nat
  | .cap c => c.gen
  | .tkt t => t.gen

/-- A token's nonce. -/
def Tok.nonce : Tok → Nat
  | .cap c => c.nonce
  | .tkt t => t.nonce

/-- `(e, g, n)` comes strictly before `(e', g', n')`, in lexicographic order. -/
def LexLt (e g n e' g' n' : Nat) : Prop := e < e' ∨ e = e' ∧ (g < g' ∨ g = g' ∧ n < n')

/-- `(e, g, n)` comes before `(e', g', n')` or is equal to it, in lexicographic order. -/
def LexLe (e g n e' g' n' : Nat) : Prop := e < e' ∨ e = e' ∧ (g < g' ∨ g = g' ∧ n ≤ n')

/-- A token slot `(b, e, g, n)` is current in `k`: block `b` exists and the token's epoch,
generation and nonce are the ones the kernel's checks accept. -/
def Kern.Current (k : Kern) (b e g n : Nat) : Prop :=
  ∃ x, k.blocks[b]? = some x ∧ e = k.epoch ∧ g = x.gen ∧ n + 1 = x.seq

/-- The clock of block `b` has passed the token slot `(e, g, n)`: the slot `(e, g, n + 1)` is
strictly before the block's `(epoch, generation, sequence)`. -/
def Kern.Passed (k : Kern) (b e g n : Nat) : Prop :=
  ∃ x, k.blocks[b]? = some x ∧ LexLt e g (n + 1) k.epoch x.gen x.seq

/-- `k'` is no earlier than `k` on the clock of every block of `k`. -/
def Kern.ClockLe (k k' : Kern) : Prop :=
  ∀ (b : Nat) (x : Blk), k.blocks[b]? = some x →
    ∃ y : Blk, k'.blocks[b]? = some y ∧ LexLe k.epoch x.gen x.seq k'.epoch y.gen y.seq

/-- A block record of a well-formed state: a held or escrowed block has issued a token in its
epoch and generation, and its holders are known holders, the two ends of a transfer distinct. -/
def BlkOk (cfg : Config) (x : Blk) : Prop :=
  match x.phase with
  | .free => True
  | .owned h => 0 < x.seq ∧ h < cfg.holders
  | .escrow s r => 0 < x.seq ∧ s < cfg.holders ∧ r < cfg.holders ∧ s ≠ r

/-- A well-formed kernel state (every reachable one is: `KReach.wf`, `SysReach.wf`). -/
structure WF (cfg : Config) (k : Kern) : Prop where
  /-- One record per block. -/
  length_eq : k.blocks.length = cfg.blocks
  /-- Every record is well formed. -/
  blk_ok : ∀ x ∈ k.blocks, BlkOk cfg x

/-! ## Bool tests -/

/-- `Nat.blt` of a smaller number. -/
theorem blt_of_lt {a b : Nat} (h : a < b) : Nat.blt a b = true := Nat.ble_eq_true_of_le h

/-- `Nat.ble` of a number no larger. -/
theorem ble_of_le {a b : Nat} (h : a ≤ b) : Nat.ble a b = true := Nat.ble_eq_true_of_le h

/-- `Nat.beq` of two different numbers. -/
theorem beq_of_ne {a b : Nat} (h : a ≠ b) : Nat.beq a b = false := by
  cases h' : Nat.beq a b
  · rfl
  · exact absurd (Nat.eq_of_beq_eq_true h') h

/-- Updating an entry that exists makes the lookup return the new value. -/
theorem getElem?_set_self_of_eq_some {α : Type} {l : List α} {t : Nat} {x y : α}
    (h : l[t]? = some x) : (l.set t y)[t]? = some y := by
  simp [List.getElem?_set_self', h]

/-! ## What the checks establish -/

/-- A token check that passes found the block owned, in the current epoch and generation, with
the token's nonce the latest one. -/
theorem tokCheck_ok {k : Kern} {b e g n : Nat} {x : Blk} (h : tokCheck k b e g n = .ok x) :
    k.blocks[b]? = some x ∧ e = k.epoch ∧ g = x.gen ∧ n + 1 = x.seq ∧
      ∃ o, x.phase = .owned o := by
  unfold tokCheck at h
  cases hb : k.blocks[b]? with
  | none => simp [hb] at h
  | some y =>
    simp only [hb] at h
    cases h1 : Nat.beq e k.epoch <;> cases h2 : Nat.beq g y.gen <;>
      cases h3 : Nat.beq (n + 1) y.seq <;> cases hph : y.phase <;>
      simp [h1, h2, h3, hph] at h
    subst h
    exact ⟨rfl, Nat.eq_of_beq_eq_true h1, Nat.eq_of_beq_eq_true h2, Nat.eq_of_beq_eq_true h3,
      _, hph⟩

/-- `ownedBy p` holds exactly of `owned p`. -/
theorem ownedBy_eq {ph : Phase} {p : Nat} (h : ph.ownedBy p = true) : ph = .owned p := by
  cases ph with
  | owned o =>
    simp only [Phase.ownedBy] at h
    rw [Nat.eq_of_beq_eq_true h]
  | free => simp [Phase.ownedBy] at h
  | escrow s r => simp [Phase.ownedBy] at h

/-- A capability check that passes was made by a known holder, the capability's holder, its
token check passed, and the block's stored owner is the presenter. -/
theorem capCheck_ok {cfg : Config} {k : Kern} {p : Nat} {c : Cap} {x : Blk}
    (h : capCheck cfg k p c = .ok x) :
    p < cfg.holders ∧ c.holder = p ∧ tokCheck k c.blk c.epoch c.gen c.nonce = .ok x ∧
      x.phase = .owned p := by
  unfold capCheck at h
  cases hp : Nat.blt p cfg.holders with
  | false => simp [hp] at h
  | true =>
    cases ht : tokCheck k c.blk c.epoch c.gen c.nonce with
    | error e => simp [hp, ht] at h
    | ok y =>
      cases hh : Nat.beq c.holder p <;> cases ho : y.phase.ownedBy p <;>
        simp [hp, ht, hh, ho] at h
      subst h
      exact ⟨Nat.le_of_ble_eq_true hp, Nat.eq_of_beq_eq_true hh, rfl, ownedBy_eq ho⟩

/-- A ticket check that passes found the block in escrow, in the current epoch and generation,
with the ticket's nonce the latest one. -/
theorem tktCheck_ok {k : Kern} {t : Tkt} {x : Blk} {s r : Nat}
    (h : tktCheck k t = .ok (x, s, r)) :
    k.blocks[t.blk]? = some x ∧ t.epoch = k.epoch ∧ t.gen = x.gen ∧ t.nonce + 1 = x.seq ∧
      x.phase = .escrow s r := by
  unfold tktCheck at h
  cases hb : k.blocks[t.blk]? with
  | none => simp [hb] at h
  | some y =>
    simp only [hb] at h
    cases h1 : Nat.beq t.epoch k.epoch <;> cases h2 : Nat.beq t.gen y.gen <;>
      cases h3 : Nat.beq (t.nonce + 1) y.seq <;> cases hph : y.phase <;>
      simp [h1, h2, h3, hph] at h
    obtain ⟨rfl, rfl, rfl⟩ := h
    exact ⟨rfl, Nat.eq_of_beq_eq_true h1, Nat.eq_of_beq_eq_true h2, Nat.eq_of_beq_eq_true h3,
      hph⟩

/-- A settlement check that passes was made by a known holder allowed to settle the pending
transfer, and its ticket check passed. -/
theorem settleCheck_ok {cfg : Config} {k : Kern} {p : Nat} {t : Tkt} {b : Bool} {x : Blk}
    {s r : Nat} (h : settleCheck cfg k p t b = .ok (x, s, r)) :
    p < cfg.holders ∧ tktCheck k t = .ok (x, s, r) ∧ maySettle p s r b = true := by
  unfold settleCheck at h
  cases hp : Nat.blt p cfg.holders with
  | false => simp [hp] at h
  | true =>
    cases ht : tktCheck k t with
    | error e => simp [hp, ht] at h
    | ok v =>
      obtain ⟨y, s', r'⟩ := v
      cases hm : maySettle p s' r' b <;> simp [hp, ht, hm] at h
      obtain ⟨rfl, rfl, rfl⟩ := h
      exact ⟨Nat.le_of_ble_eq_true hp, rfl, hm⟩

/-! ## Accepted requests present current tokens; refusals change nothing -/

/-- Every token an accepted request presents is current. -/
theorem accepted_current {cfg : Config} {k : Kern} {r : Req} {τ : Tok} (hr : τ ∈ r.toks)
    (h : (step cfg k r).verdict = .ok) : k.Current τ.blk τ.epoch τ.gen τ.nonce := by
  cases r with
  | read p c =>
    simp only [Req.toks, List.mem_singleton] at hr
    subst hr
    simp only [step, doRead] at h
    cases hc : capCheck cfg k p c with
    | error e => simp [hc, refuse] at h
    | ok x =>
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, he, hg, hn, -⟩ := tokCheck_ok ht
      exact ⟨x, hb, he, hg, hn⟩
  | evict p c =>
    simp only [Req.toks, List.mem_singleton] at hr
    subst hr
    simp only [step, doEvict] at h
    cases hc : capCheck cfg k p c with
    | error e => simp [hc, refuse] at h
    | ok x =>
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, he, hg, hn, -⟩ := tokCheck_ok ht
      exact ⟨x, hb, he, hg, hn⟩
  | begin p c rcv =>
    simp only [Req.toks, List.mem_singleton] at hr
    subst hr
    simp only [step, doBegin] at h
    cases hc : capCheck cfg k p c with
    | error e => simp [hc, refuse] at h
    | ok x =>
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, he, hg, hn, -⟩ := tokCheck_ok ht
      exact ⟨x, hb, he, hg, hn⟩
  | commit p t =>
    simp only [Req.toks, List.mem_singleton] at hr
    subst hr
    simp only [step, settle] at h
    cases htk : settleCheck cfg k p t true with
    | error e => simp [htk, refuse] at h
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, he, hg, hn, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      exact ⟨x, hb, he, hg, hn⟩
  | abort p t =>
    simp only [Req.toks, List.mem_singleton] at hr
    subst hr
    simp only [step, settle] at h
    cases htk : settleCheck cfg k p t false with
    | error e => simp [htk, refuse] at h
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, he, hg, hn, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      exact ⟨x, hb, he, hg, hn⟩
  | alloc p b => simp [Req.toks] at hr
  | advance => simp [Req.toks] at hr
  | resend b => simp [Req.toks] at hr

/-- A request presenting a token of another epoch is refused. -/
theorem stale_epoch_refused {cfg : Config} {k : Kern} {r : Req} {τ : Tok} (hr : τ ∈ r.toks)
    (he : τ.epoch ≠ k.epoch) : (step cfg k r).verdict ≠ .ok := fun h => by
  obtain ⟨x, -, he', -, -⟩ := accepted_current hr h
  exact he he'

/-- A request presenting a token of another generation of the block is refused. -/
theorem stale_gen_refused {cfg : Config} {k : Kern} {r : Req} {τ : Tok} {x : Blk}
    (hr : τ ∈ r.toks) (hx : k.blocks[τ.blk]? = some x) (hg : τ.gen ≠ x.gen) :
    (step cfg k r).verdict ≠ .ok := fun h => by
  obtain ⟨y, hy, -, hg', -⟩ := accepted_current hr h
  rw [hx] at hy
  cases hy
  exact hg hg'

/-- Every refused request returns the state unchanged and sends nothing. -/
theorem refusal_changes_nothing (cfg : Config) (k : Kern) (r : Req)
    (h : (step cfg k r).verdict ≠ .ok) :
    (step cfg k r).kern = k ∧ (step cfg k r).sends = [] := by
  cases r with
  | read p c =>
    simp only [step, doRead] at h ⊢
    cases hc : capCheck cfg k p c with
    | error e => exact ⟨rfl, rfl⟩
    | ok x => simp [hc] at h
  | evict p c =>
    simp only [step, doEvict] at h ⊢
    cases hc : capCheck cfg k p c with
    | error e => exact ⟨rfl, rfl⟩
    | ok x => simp [hc] at h
  | begin p c rcv =>
    simp only [step, doBegin] at h ⊢
    cases hc : capCheck cfg k p c with
    | error e => exact ⟨rfl, rfl⟩
    | ok x =>
      cases h1 : Nat.blt rcv cfg.holders <;> cases h2 : Nat.beq rcv p <;>
        cases h3 : Nat.ble (x.seq + 2) cfg.maxSeq <;>
        simp [hc, h1, h2, h3, refuse] at h ⊢
  | commit p t =>
    simp only [step, settle] at h ⊢
    cases htk : settleCheck cfg k p t true with
    | error e => exact ⟨rfl, rfl⟩
    | ok v => simp [htk] at h
  | abort p t =>
    simp only [step, settle] at h ⊢
    cases htk : settleCheck cfg k p t false with
    | error e => exact ⟨rfl, rfl⟩
    | ok v => simp [htk] at h
  | alloc p b =>
    simp only [step, doAlloc] at h ⊢
    cases hp : Nat.blt p cfg.holders with
    | false => simp [refuse]
    | true =>
      cases hb : k.blocks[b]? with
      | none => simp [refuse]
      | some x =>
        cases hg : Nat.blt x.gen cfg.maxGen <;> cases hph : x.phase <;>
          simp [hp, hb, hg, hph, refuse] at h ⊢
  | advance =>
    simp only [step, doAdvance] at h ⊢
    cases ha : k.blocks.any (fun x => x.phase.isEscrow) with
    | true => exact ⟨rfl, rfl⟩
    | false =>
      cases he : Nat.blt k.epoch cfg.maxEpoch <;> simp [ha, he, refuse] at h ⊢
  | resend b =>
    simp only [step, doResend] at h ⊢
    cases hb : k.blocks[b]? with
    | none => exact ⟨rfl, rfl⟩
    | some x => cases hph : x.phase <;> simp [hb, hph, refuse] at h ⊢

/-- A stale epoch is refused and changes nothing. -/
theorem stale_epoch_changes_nothing {cfg : Config} {k : Kern} {r : Req} {τ : Tok}
    (hr : τ ∈ r.toks) (he : τ.epoch ≠ k.epoch) :
    (step cfg k r).kern = k ∧ (step cfg k r).sends = [] :=
  refusal_changes_nothing cfg k r (stale_epoch_refused hr he)

/-- A stale generation is refused and changes nothing. -/
theorem stale_gen_changes_nothing {cfg : Config} {k : Kern} {r : Req} {τ : Tok} {x : Blk}
    (hr : τ ∈ r.toks) (hx : k.blocks[τ.blk]? = some x) (hg : τ.gen ≠ x.gen) :
    (step cfg k r).kern = k ∧ (step cfg k r).sends = [] :=
  refusal_changes_nothing cfg k r (stale_gen_refused hr hx hg)

/-- No read succeeds while the block is in escrow, whatever capability is presented. -/
theorem escrow_unreadable {cfg : Config} {k : Kern} {p : Nat} {c : Cap} {x : Blk} {s r : Nat}
    (hx : k.blocks[c.blk]? = some x) (hph : x.phase = .escrow s r) :
    (step cfg k (.read p c)).verdict ≠ .ok := by
  intro h
  simp only [step, doRead] at h
  cases hc : capCheck cfg k p c with
  | error e => simp [hc, refuse] at h
  | ok y =>
    obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
    obtain ⟨hy, -, -, -, o, ho⟩ := tokCheck_ok ht
    rw [hx] at hy
    cases hy
    rw [hph] at ho
    cases ho

/-! ## Settling a transfer -/

/-- An accepted `commit` hands the block to the transfer's receiver, with a new capability. -/
theorem commit_hands_to_receiver {cfg : Config} {k : Kern} {p : Nat} {t : Tkt} {x : Blk} {s r : Nat}
    (hx : k.blocks[t.blk]? = some x) (hph : x.phase = .escrow s r)
    (h : (step cfg k (.commit p t)).verdict = .ok) :
    (step cfg k (.commit p t)).kern.blocks[t.blk]? = some ⟨x.gen, x.seq + 1, .owned r⟩ ∧
      (step cfg k (.commit p t)).sends = [.grant r ⟨t.blk, r, k.epoch, x.gen, x.seq⟩] := by
  simp only [step, settle] at h ⊢
  cases htk : settleCheck cfg k p t _ with
  | error e => simp [htk, refuse] at h
  | ok v =>
    obtain ⟨y, s', r'⟩ := v
    obtain ⟨hy, -, -, -, hph'⟩ := tktCheck_ok (settleCheck_ok htk).2.1
    rw [hx] at hy
    cases hy
    rw [hph] at hph'
    cases hph'
    exact ⟨getElem?_set_self_of_eq_some hx, rfl⟩

/-- An accepted `abort` returns the block to the transfer's sender, with a new capability. -/
theorem abort_restores_sender {cfg : Config} {k : Kern} {p : Nat} {t : Tkt} {x : Blk} {s r : Nat}
    (hx : k.blocks[t.blk]? = some x) (hph : x.phase = .escrow s r)
    (h : (step cfg k (.abort p t)).verdict = .ok) :
    (step cfg k (.abort p t)).kern.blocks[t.blk]? = some ⟨x.gen, x.seq + 1, .owned s⟩ ∧
      (step cfg k (.abort p t)).sends = [.grant s ⟨t.blk, s, k.epoch, x.gen, x.seq⟩] := by
  simp only [step, settle] at h ⊢
  cases htk : settleCheck cfg k p t _ with
  | error e => simp [htk, refuse] at h
  | ok v =>
    obtain ⟨y, s', r'⟩ := v
    obtain ⟨hy, -, -, -, hph'⟩ := tktCheck_ok (settleCheck_ok htk).2.1
    rw [hx] at hy
    cases hy
    rw [hph] at hph'
    cases hph'
    exact ⟨getElem?_set_self_of_eq_some hx, rfl⟩

/-! ## Clocks move forward -/

/-- Every state is no earlier than itself. -/
theorem clockLe_refl (k : Kern) : k.ClockLe k :=
  fun _ x hx => ⟨x, hx, Or.inr ⟨rfl, Or.inr ⟨rfl, Nat.le_refl _⟩⟩⟩

/-- `ClockLe` is transitive. -/
theorem clockLe_trans {k₁ k₂ k₃ : Kern} (h₁ : k₁.ClockLe k₂) (h₂ : k₂.ClockLe k₃) :
    k₁.ClockLe k₃ := by
  intro b x hx
  obtain ⟨y, hy, hxy⟩ := h₁ b x hx
  obtain ⟨z, hz, hyz⟩ := h₂ b y hy
  exact ⟨z, hz, by unfold LexLe at *; omega⟩

/-- Replacing a block's record by one no earlier on its clock moves the state forward. -/
theorem clockLe_put {k : Kern} {b : Nat} {x y : Blk} (hx : k.blocks[b]? = some x)
    (hxy : LexLe k.epoch x.gen x.seq k.epoch y.gen y.seq) : k.ClockLe (k.put b y) := by
  intro b' x' hx'
  by_cases hb : b = b'
  · subst hb
    rw [hx] at hx'
    cases hx'
    exact ⟨y, getElem?_set_self_of_eq_some hx, hxy⟩
  · refine ⟨x', ?_, Or.inr ⟨rfl, Or.inr ⟨rfl, Nat.le_refl _⟩⟩⟩
    show (k.blocks.set b y)[b']? = some x'
    rw [List.getElem?_set_ne hb]
    exact hx'

/-- An epoch change moves every block's clock forward. -/
theorem clockLe_advance (k : Kern) : k.ClockLe ⟨k.epoch + 1, k.blocks.map Blk.renew⟩ :=
  fun _ x hx => ⟨x.renew, by simp [hx], Or.inl (Nat.lt_succ_self _)⟩

/-- Every step, accepted or refused, moves every block's clock forward or leaves it. -/
theorem step_clockLe (cfg : Config) (k : Kern) (r : Req) : k.ClockLe (step cfg k r).kern := by
  cases r with
  | read p c =>
    simp only [step, doRead]
    cases capCheck cfg k p c <;> exact clockLe_refl k
  | evict p c =>
    simp only [step, doEvict]
    cases hc : capCheck cfg k p c with
    | error e => exact clockLe_refl k
    | ok x =>
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      exact clockLe_put hb (Or.inr ⟨rfl, Or.inr ⟨rfl, Nat.le_refl _⟩⟩)
  | begin p c rcv =>
    simp only [step, doBegin]
    split
    · exact clockLe_refl k
    · rename_i x hc
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      cases Nat.blt rcv cfg.holders <;> cases Nat.beq rcv p <;>
        cases Nat.ble (x.seq + 2) cfg.maxSeq <;>
        first
        | exact clockLe_refl k
        | exact clockLe_put (y := ⟨x.gen, x.seq + 1, .escrow p rcv⟩) hb
            (Or.inr ⟨rfl, Or.inr ⟨rfl, Nat.le_succ _⟩⟩)
  | commit p t =>
    simp only [step, settle]
    cases htk : settleCheck cfg k p t true with
    | error e => exact clockLe_refl k
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      exact clockLe_put hb (Or.inr ⟨rfl, Or.inr ⟨rfl, Nat.le_succ _⟩⟩)
  | abort p t =>
    simp only [step, settle]
    cases htk : settleCheck cfg k p t false with
    | error e => exact clockLe_refl k
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      exact clockLe_put hb (Or.inr ⟨rfl, Or.inr ⟨rfl, Nat.le_succ _⟩⟩)
  | alloc p b =>
    simp only [step, doAlloc]
    cases Nat.blt p cfg.holders with
    | false => exact clockLe_refl k
    | true =>
      split
      · exact clockLe_refl k
      · rename_i x hb
        split
        · cases Nat.blt x.gen cfg.maxGen with
          | false => exact clockLe_refl k
          | true =>
            exact clockLe_put (y := ⟨x.gen + 1, 1, .owned p⟩) hb
              (Or.inr ⟨rfl, Or.inl (Nat.lt_succ_self _)⟩)
        · exact clockLe_refl k
  | advance =>
    simp only [step, doAdvance]
    cases k.blocks.any (fun x => x.phase.isEscrow) with
    | true => exact clockLe_refl k
    | false =>
      cases Nat.blt k.epoch cfg.maxEpoch with
      | false => exact clockLe_refl k
      | true => exact clockLe_advance k
  | resend b =>
    simp only [step, doResend]
    split
    · exact clockLe_refl k
    · split <;> exact clockLe_refl k

/-- A passed slot stays passed in every later state. -/
theorem passed_of_clockLe {k k' : Kern} {b e g n : Nat} (hp : k.Passed b e g n)
    (hc : k.ClockLe k') : k'.Passed b e g n := by
  obtain ⟨x, hx, hlt⟩ := hp
  obtain ⟨y, hy, hle⟩ := hc b x hx
  exact ⟨y, hy, by unfold LexLt LexLe at *; omega⟩

/-- A request presenting a token whose slot the clock has passed is refused. -/
theorem passed_refused {cfg : Config} {k : Kern} {r : Req} {τ : Tok} (hr : τ ∈ r.toks)
    (hp : k.Passed τ.blk τ.epoch τ.gen τ.nonce) : (step cfg k r).verdict ≠ .ok := by
  intro h
  obtain ⟨x, hx, he, hg, hn⟩ := accepted_current hr h
  obtain ⟨y, hy, hlt⟩ := hp
  rw [hx] at hy
  cases hy
  unfold LexLt at hlt
  omega

/-- Every step of the system moves the kernel's clocks forward or leaves them: the network and
the holders change nothing in the kernel, which only ever takes a step. -/
theorem sysStep_clockLe {cfg : Config} {S S' : Sys} (h : SysStep cfg S S') :
    S.kern.ClockLe S'.kern := by
  cases h with
  | send p r _ _ _ => exact clockLe_refl _
  | forge p r _ _ => exact clockLe_refl _
  | share p q τ _ _ => exact clockLe_refl _
  | tick r _ => exact step_clockLe cfg S.kern r
  | deliver l₁ l₂ m _ =>
    cases m with
    | req r => exact step_clockLe cfg S.kern r
    | grant q c => exact clockLe_refl _
    | ticket q t => exact clockLe_refl _
  | dup l₁ l₂ m _ => exact clockLe_refl _
  | drop l₁ l₂ m _ => exact clockLe_refl _

/-- Every run of the system moves the kernel's clocks forward or leaves them. -/
theorem sysRun_clockLe {cfg : Config} {S S' : Sys} (h : SysRun cfg S S') :
    S.kern.ClockLe S'.kern := by
  induction h with
  | refl => exact clockLe_refl _
  | step _ hs ih => exact clockLe_trans ih (sysStep_clockLe hs)

/-! ## At most once, and reallocation -/

/-- A settled ticket's slot is passed at once. -/
theorem settle_passes {cfg : Config} {k : Kern} {p : Nat} {t : Tkt} {b : Bool}
    (h : (settle cfg k p t b).verdict = .ok) :
    (settle cfg k p t b).kern.Passed t.blk t.epoch t.gen t.nonce := by
  unfold settle at h ⊢
  cases htk : settleCheck cfg k p t b with
  | error e => simp [htk, refuse] at h
  | ok v =>
    obtain ⟨x, s, r⟩ := v
    obtain ⟨hb, he, hg, hn, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
    exact ⟨_, getElem?_set_self_of_eq_some hb,
      Or.inr ⟨he, Or.inr ⟨hg, by show t.nonce + 1 < x.seq + 1; omega⟩⟩⟩

/-- **At most once.** Once the kernel accepts a `commit` or an `abort` of ticket `t` (by
anyone), every request presenting `t` (by anyone) is refused in every later state of the
system, whatever the network does afterwards (duplicate, delay, reorder or replay the settling
message). -/
theorem settled_ticket_refused_forever {cfg : Config} {S S' : Sys} {p : Nat} {t : Tkt}
    {b : Bool} (hb : (step cfg S.kern (cond b (.commit p t) (.abort p t))).verdict = .ok)
    (hrun : SysRun cfg (S.exec cfg (cond b (.commit p t) (.abort p t))) S') {r : Req}
    (hr : .tkt t ∈ r.toks) : (step cfg S'.kern r).verdict ≠ .ok := by
  have hp : (step cfg S.kern (cond b (.commit p t) (.abort p t))).kern.Passed
      t.blk t.epoch t.gen t.nonce := by
    cases b with
    | true => exact settle_passes hb
    | false => exact settle_passes hb
  exact passed_refused hr (passed_of_clockLe hp (sysRun_clockLe hrun))

/-- After an accepted reallocation of block `b`, every slot of `b` from an earlier epoch or
generation is passed. -/
theorem realloc_passes {cfg : Config} {k : Kern} {p b : Nat} {x : Blk}
    (hx : k.blocks[b]? = some x) (ha : (step cfg k (.alloc p b)).verdict = .ok)
    {e g n : Nat} (he : e ≤ k.epoch) (hg : g ≤ x.gen) :
    (step cfg k (.alloc p b)).kern.Passed b e g n := by
  simp only [step, doAlloc] at ha ⊢
  cases hp : Nat.blt p cfg.holders <;> cases hph : x.phase <;>
    cases hgen : Nat.blt x.gen cfg.maxGen <;> simp [hp, hx, hph, hgen, refuse] at ha ⊢
  refine ⟨⟨x.gen + 1, 1, .owned p⟩, getElem?_set_self_of_eq_some hx, ?_⟩
  show LexLt e g (n + 1) k.epoch (x.gen + 1) 1
  unfold LexLt
  omega

/-- **Evict-and-reallocate kills the past.** After the kernel accepts the reallocation of
block `b`, every token of `b` issued before it (of an epoch and generation no later than the
block's then) is refused in every later state of the system, whatever the network does. -/
theorem realloc_kills_older_forever {cfg : Config} {S S' : Sys} {p b : Nat} {x : Blk}
    (hx : S.kern.blocks[b]? = some x) (ha : (step cfg S.kern (.alloc p b)).verdict = .ok)
    (hrun : SysRun cfg (S.exec cfg (.alloc p b)) S') {τ : Tok} (hτ : τ.blk = b)
    (he : τ.epoch ≤ S.kern.epoch) (hg : τ.gen ≤ x.gen) {r : Req} (hr : τ ∈ r.toks) :
    (step cfg S'.kern r).verdict ≠ .ok := by
  subst hτ
  exact passed_refused hr (passed_of_clockLe (realloc_passes hx ha he hg) (sysRun_clockLe hrun))

/-! ## Well-formed states -/

/-- The initial state is well formed. -/
theorem wf_init (cfg : Config) : WF cfg (Kern.init cfg) :=
  ⟨by simp [Kern.init], fun x hx => by
    have : x = ⟨0, 0, .free⟩ := List.eq_of_mem_replicate hx
    subst this
    exact trivial⟩

/-- Replacing a record by a well-formed one keeps a state well formed. -/
theorem wf_put {cfg : Config} {k : Kern} {b : Nat} {y : Blk} (hw : WF cfg k)
    (hy : BlkOk cfg y) : WF cfg (k.put b y) :=
  ⟨by simp [Kern.put, hw.length_eq], fun x hx => by
    rcases List.mem_or_eq_of_mem_set hx with hx | rfl
    · exact hw.blk_ok x hx
    · exact hy⟩

/-- Every step keeps a state well formed. -/
theorem step_wf {cfg : Config} {k : Kern} (hw : WF cfg k) (r : Req) :
    WF cfg (step cfg k r).kern := by
  cases r with
  | read p c =>
    simp only [step, doRead]
    cases capCheck cfg k p c <;> exact hw
  | evict p c =>
    simp only [step, doEvict]
    cases capCheck cfg k p c with
    | error e => exact hw
    | ok x => exact wf_put (y := ⟨x.gen, x.seq, .free⟩) hw trivial
  | begin p c rcv =>
    simp only [step, doBegin]
    split
    · exact hw
    · rename_i x hc
      obtain ⟨hp, -, -, -⟩ := capCheck_ok hc
      cases h1 : Nat.blt rcv cfg.holders with
      | false => exact hw
      | true =>
        cases h2 : Nat.beq rcv p with
        | true => exact hw
        | false =>
          cases Nat.ble (x.seq + 2) cfg.maxSeq with
          | false => exact hw
          | true =>
            exact wf_put (y := ⟨x.gen, x.seq + 1, .escrow p rcv⟩) hw
              ⟨Nat.succ_pos _, hp, Nat.le_of_ble_eq_true h1,
                fun he => Nat.ne_of_beq_eq_false h2 he.symm⟩
  | commit p t =>
    simp only [step, settle]
    cases htk : settleCheck cfg k p t true with
    | error e => exact hw
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, hph⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      have hok := hw.blk_ok x (List.mem_of_getElem? hb)
      simp only [BlkOk, hph] at hok
      exact wf_put (y := ⟨x.gen, x.seq + 1, .owned r⟩) hw ⟨Nat.succ_pos _, hok.2.2.1⟩
  | abort p t =>
    simp only [step, settle]
    cases htk : settleCheck cfg k p t false with
    | error e => exact hw
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, hph⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      have hok := hw.blk_ok x (List.mem_of_getElem? hb)
      simp only [BlkOk, hph] at hok
      exact wf_put (y := ⟨x.gen, x.seq + 1, .owned s⟩) hw ⟨Nat.succ_pos _, hok.2.1⟩
  | alloc p b =>
    simp only [step, doAlloc]
    cases hp : Nat.blt p cfg.holders with
    | false => exact hw
    | true =>
      split
      · exact hw
      · rename_i x hb
        split
        · cases Nat.blt x.gen cfg.maxGen with
          | false => exact hw
          | true =>
            exact wf_put (y := ⟨x.gen + 1, 1, .owned p⟩) hw
              ⟨Nat.succ_pos _, Nat.le_of_ble_eq_true hp⟩
        · exact hw
  | advance =>
    simp only [step, doAdvance]
    cases ha : k.blocks.any (fun x => x.phase.isEscrow) with
    | true => exact hw
    | false =>
      cases Nat.blt k.epoch cfg.maxEpoch with
      | false => exact hw
      | true =>
        show WF cfg ⟨k.epoch + 1, k.blocks.map Blk.renew⟩
        refine ⟨by simp [hw.length_eq], fun y hy => ?_⟩
        obtain ⟨x, hx, rfl⟩ := List.mem_map.mp hy
        have hok := hw.blk_ok x hx
        have hne : x.phase.isEscrow = false := by
          have := List.any_eq_false.mp ha x hx
          simpa using this
        unfold Blk.renew
        cases hph : x.phase with
        | free => exact trivial
        | owned h =>
          simp only [BlkOk, hph] at hok
          exact ⟨Nat.succ_pos _, hok.2⟩
        | escrow s r => simp [hph, Phase.isEscrow] at hne
  | resend b =>
    simp only [step, doResend]
    split
    · exact hw
    · split <;> exact hw

/-- Every kernel state reachable by accepted requests (forged tokens included) is well
formed. -/
theorem KReach.wf {cfg : Config} {k : Kern} (h : KReach cfg k) : WF cfg k := by
  induction h with
  | init => exact wf_init cfg
  | step r _ _ ih => exact step_wf ih r

/-- Every step of the system keeps the kernel well formed. -/
theorem sysStep_wf {cfg : Config} {S S' : Sys} (h : SysStep cfg S S') (hw : WF cfg S.kern) :
    WF cfg S'.kern := by
  cases h with
  | send p r _ _ _ => exact hw
  | forge p r _ _ => exact hw
  | share p q τ _ _ => exact hw
  | tick r _ => exact step_wf hw r
  | deliver l₁ l₂ m _ =>
    cases m with
    | req r => exact step_wf hw r
    | grant q c => exact hw
    | ticket q t => exact hw
  | dup l₁ l₂ m _ => exact hw
  | drop l₁ l₂ m _ => exact hw

/-- Every run of the system keeps the kernel well formed. -/
theorem sysRun_wf {cfg : Config} {S S' : Sys} (h : SysRun cfg S S') (hw : WF cfg S.kern) :
    WF cfg S'.kern := by
  induction h with
  | refl => exact hw
  | step _ hs ih => first | exact sysStep_wf hs (ih hw) | exact sysStep_wf hs ih

/-- In every reachable state of the system the kernel is well formed. -/
theorem SysReach.wf {cfg : Config} {S : Sys} (h : SysReach cfg S) : WF cfg S.kern :=
  sysRun_wf h (wf_init cfg)

/-! ## Progress -/

/-- In a well-formed state, an owned or escrowed block has issued a token: its sequence counter
is some `n + 1`. -/
theorem seq_succ {cfg : Config} {k : Kern} {b : Nat} {x : Blk} (hw : WF cfg k)
    (hx : k.blocks[b]? = some x) (hph : x.phase ≠ .free) : ∃ n, n + 1 = x.seq := by
  have hok := hw.blk_ok x (List.mem_of_getElem? hx)
  cases hp : x.phase with
  | free => exact absurd hp hph
  | owned h =>
    simp only [BlkOk, hp] at hok
    exact ⟨x.seq - 1, by omega⟩
  | escrow s r =>
    simp only [BlkOk, hp] at hok
    exact ⟨x.seq - 1, by omega⟩

/-- An owner in a well-formed state is a known holder. -/
theorem owner_known {cfg : Config} {k : Kern} {b h : Nat} {x : Blk} (hw : WF cfg k)
    (hx : k.blocks[b]? = some x) (hph : x.phase = .owned h) : h < cfg.holders := by
  have hok := hw.blk_ok x (List.mem_of_getElem? hx)
  simp only [BlkOk, hph] at hok
  exact hok.2

/-- **Progress (read).** In a well-formed state, the owner of a block reads it with the
block's current capability `⟨b, h, epoch, gen, n⟩` (`n + 1` the sequence counter).
Unconditional: no counter bound is involved. -/
theorem read_progress {cfg : Config} {k : Kern} {b h n : Nat} {x : Blk} (hw : WF cfg k)
    (hx : k.blocks[b]? = some x) (hph : x.phase = .owned h) (hn : n + 1 = x.seq) :
    (step cfg k (.read h ⟨b, h, k.epoch, x.gen, n⟩)).verdict = .ok := by
  simp [step, doRead, capCheck, tokCheck, hx, hph, hn, Phase.ownedBy,
    blt_of_lt (owner_known hw hx hph)]

/-- **Progress (evict).** In a well-formed state, the owner of a block evicts it with the
block's current capability. Unconditional: no counter bound is involved. -/
theorem evict_progress {cfg : Config} {k : Kern} {b h n : Nat} {x : Blk} (hw : WF cfg k)
    (hx : k.blocks[b]? = some x) (hph : x.phase = .owned h) (hn : n + 1 = x.seq) :
    (step cfg k (.evict h ⟨b, h, k.epoch, x.gen, n⟩)).verdict = .ok := by
  simp [step, doEvict, capCheck, tokCheck, hx, hph, hn, Phase.ownedBy,
    blt_of_lt (owner_known hw hx hph)]

/-- **Progress (begin), with its condition.** In a well-formed state, the owner of a block
starts a transfer to any other known holder with the block's current capability, *provided*
the sequence counter has room for the ticket and the capability that settles it
(`seq + 2 ≤ maxSeq`). At the bound the request is refused (`begin_refused_at_bound`); the
counter restarts only with a new epoch (`advance`, itself refused once `epoch = maxEpoch`) or a
new generation (evict and `alloc`, refused once `gen = maxGen`): so once all three counters are
exhausted, the block's owner can still read and evict it but it can never be transferred. -/
theorem begin_progress {cfg : Config} {k : Kern} {b h n rcv : Nat} {x : Blk} (hw : WF cfg k)
    (hx : k.blocks[b]? = some x) (hph : x.phase = .owned h) (hn : n + 1 = x.seq)
    (hr : rcv < cfg.holders) (hne : rcv ≠ h) (hseq : x.seq + 2 ≤ cfg.maxSeq) :
    (step cfg k (.begin h ⟨b, h, k.epoch, x.gen, n⟩ rcv)).verdict = .ok := by
  simp [step, doBegin, capCheck, tokCheck, hx, hph, hn, Phase.ownedBy,
    blt_of_lt (owner_known hw hx hph), blt_of_lt hr, beq_of_ne hne, ble_of_le hseq]

/-- **The sequence bound.** A `begin` on a block whose sequence counter has no room for a
ticket and its settling capability (`maxSeq < seq + 2`) is refused, whoever presents whatever
capability. -/
theorem begin_refused_at_bound {cfg : Config} {k : Kern} {p rcv : Nat} {c : Cap} {x : Blk}
    (hx : k.blocks[c.blk]? = some x) (hseq : cfg.maxSeq < x.seq + 2) :
    (step cfg k (.begin p c rcv)).verdict ≠ .ok := by
  intro h
  simp only [step, doBegin] at h
  cases hc : capCheck cfg k p c with
  | error e => simp [hc, refuse] at h
  | ok y =>
    obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
    obtain ⟨hy, -, -, -, -⟩ := tokCheck_ok ht
    rw [hx] at hy
    cases hy
    have hb : Nat.ble (x.seq + 2) cfg.maxSeq = false := by
      cases h3 : Nat.ble (x.seq + 2) cfg.maxSeq
      · rfl
      · exact absurd (Nat.le_of_ble_eq_true h3) (by omega)
    cases h1 : Nat.blt rcv cfg.holders <;> cases h2 : Nat.beq rcv p <;>
      simp [hc, h1, h2, hb, refuse] at h

/-- **Progress (commit).** A pending transfer is committed by its receiver `r` (a known
holder) with its current ticket `⟨b, epoch, gen, n⟩` (`n + 1` the sequence counter).
Unconditional: settling never needs room in a counter (`begin` reserved it). -/
theorem commit_progress {k : Kern} {cfg : Config} {b s r n : Nat} {x : Blk}
    (hx : k.blocks[b]? = some x) (hph : x.phase = .escrow s r) (hn : n + 1 = x.seq)
    (hr : r < cfg.holders) :
    (step cfg k (.commit r ⟨b, k.epoch, x.gen, n⟩)).verdict = .ok := by
  simp [step, settle, settleCheck, tktCheck, maySettle, hx, hph, hn, blt_of_lt hr]

/-- **Progress (abort).** A pending transfer is aborted by its sender `s` (a known holder)
with its current ticket; unconditional. -/
theorem abort_progress {k : Kern} {cfg : Config} {b s r n : Nat} {x : Blk}
    (hx : k.blocks[b]? = some x) (hph : x.phase = .escrow s r) (hn : n + 1 = x.seq)
    (hs : s < cfg.holders) :
    (step cfg k (.abort s ⟨b, k.epoch, x.gen, n⟩)).verdict = .ok := by
  simp [step, settle, settleCheck, tktCheck, maySettle, hx, hph, hn, blt_of_lt hs]

/-- **No stuck transfer.** In a well-formed state, a block in escrow from `s` to `r` has a
current ticket with which `r`'s commit and `s`'s abort are both accepted. -/
theorem pending_settles {cfg : Config} {k : Kern} {b s r : Nat} {x : Blk} (hw : WF cfg k)
    (hx : k.blocks[b]? = some x) (hph : x.phase = .escrow s r) :
    ∃ t : Tkt, t.blk = b ∧ (step cfg k (.commit r t)).verdict = .ok ∧
      (step cfg k (.abort s t)).verdict = .ok := by
  obtain ⟨n, hn⟩ := seq_succ hw hx (by rw [hph]; exact fun h => Phase.noConfusion h)
  have hok := hw.blk_ok x (List.mem_of_getElem? hx)
  simp only [BlkOk, hph] at hok
  exact ⟨⟨b, k.epoch, x.gen, n⟩, rfl, commit_progress hx hph hn hok.2.2.1,
    abort_progress hx hph hn hok.2.1⟩

/-- **No stuck owner.** In a well-formed state, the owner of a block has a current capability
with which `read` and `evict` are accepted. -/
theorem owned_acts {cfg : Config} {k : Kern} {b h : Nat} {x : Blk} (hw : WF cfg k)
    (hx : k.blocks[b]? = some x) (hph : x.phase = .owned h) :
    ∃ c : Cap, c.blk = b ∧ c.holder = h ∧ (step cfg k (.read h c)).verdict = .ok ∧
      (step cfg k (.evict h c)).verdict = .ok := by
  obtain ⟨n, hn⟩ := seq_succ hw hx (by rw [hph]; exact fun h => Phase.noConfusion h)
  exact ⟨⟨b, h, k.epoch, x.gen, n⟩, rfl, rfl, read_progress hw hx hph hn,
    evict_progress hw hx hph hn⟩

/-- **Progress (alloc), with its condition.** A free block is reallocated to any known holder
*provided* its generation has room (`gen < maxGen`). At the bound the request is refused
(`alloc_refused_at_bound`), and no request ever lowers a block's generation: a block freed in
generation `maxGen` can never be reallocated. -/
theorem alloc_progress {cfg : Config} {k : Kern} {p b : Nat} {x : Blk}
    (hx : k.blocks[b]? = some x) (hph : x.phase = .free) (hp : p < cfg.holders)
    (hg : x.gen < cfg.maxGen) : (step cfg k (.alloc p b)).verdict = .ok := by
  simp [step, doAlloc, hx, hph, blt_of_lt hp, blt_of_lt hg]

/-- **The generation bound.** An `alloc` of a block whose generation is exhausted
(`maxGen ≤ gen`) is refused, whoever asks. -/
theorem alloc_refused_at_bound {cfg : Config} {k : Kern} {p b : Nat} {x : Blk}
    (hx : k.blocks[b]? = some x) (hg : cfg.maxGen ≤ x.gen) :
    (step cfg k (.alloc p b)).verdict ≠ .ok := by
  intro h
  have hb : Nat.blt x.gen cfg.maxGen = false := by
    cases h3 : Nat.blt x.gen cfg.maxGen
    · rfl
    · exact absurd (Nat.le_of_ble_eq_true h3) (by omega)
  simp only [step, doAlloc] at h
  cases hp : Nat.blt p cfg.holders <;> cases hph : x.phase <;>
    simp [hp, hx, hph, hb, refuse] at h

/-! ## Safety against a holder who writes its own tokens

Every field of a token is a public counter, so a holder can present any token. The theorems
below hold for **every request in every kernel state** (reachable or not, whatever tokens
anybody holds, every configuration): they rest on what the kernel stores, not on which tokens
holders present. -/

/-- **Only the owner reads.** In every kernel state, a `read` the kernel accepts, of whatever
capability (every field chosen by the presenter), was presented by the block's stored owner. -/
theorem only_holder_reads {cfg : Config} {k : Kern} {p : Nat} {c : Cap}
    (hr : (step cfg k (.read p c)).verdict = .ok) :
    ∃ x, k.blocks[c.blk]? = some x ∧ x.phase = .owned p := by
  simp only [step, doRead] at hr
  cases hv : capCheck cfg k p c with
  | error e => simp [hv, refuse] at hr
  | ok x =>
    obtain ⟨-, -, ht, ho⟩ := capCheck_ok hv
    exact ⟨x, (tokCheck_ok ht).1, ho⟩

/-- **Only the owner moves a block.** In every kernel state, an accepted `evict` or `begin`,
of whatever capability, was presented by the block's stored owner. -/
theorem only_holder_moves {cfg : Config} {k : Kern} {p rcv : Nat} {c : Cap}
    (hr : (step cfg k (.evict p c)).verdict = .ok ∨
      (step cfg k (.begin p c rcv)).verdict = .ok) :
    ∃ x, k.blocks[c.blk]? = some x ∧ x.phase = .owned p := by
  have hv : ∃ x, capCheck cfg k p c = .ok x := by
    rcases hr with hr | hr
    · simp only [step, doEvict] at hr
      cases hv : capCheck cfg k p c with
      | error e => simp [hv, refuse] at hr
      | ok x => exact ⟨x, rfl⟩
    · simp only [step, doBegin] at hr
      cases hv : capCheck cfg k p c with
      | error e => simp [hv, refuse] at hr
      | ok x => exact ⟨x, rfl⟩
  obtain ⟨x, hv⟩ := hv
  obtain ⟨-, -, ht, ho⟩ := capCheck_ok hv
  exact ⟨x, (tokCheck_ok ht).1, ho⟩

/-- **A forged capability reads nothing.** In every kernel state, when block `b` is owned by
`h`, a holder `p ≠ h` presenting any capability for `b` it wrote itself (its own id in the
holder field, the current epoch, generation and nonce copied from the public counters) is
refused. -/
theorem forged_capability_refused {cfg : Config} {k : Kern} {p h : Nat} {c : Cap} {x : Blk}
    (hx : k.blocks[c.blk]? = some x) (hph : x.phase = .owned h) (hne : p ≠ h) :
    (step cfg k (.read p c)).verdict ≠ .ok := fun hr => by
  obtain ⟨y, hy, ho⟩ := only_holder_reads hr
  rw [hx] at hy
  cases hy
  rw [hph] at ho
  exact hne (Phase.owned.inj ho).symm

/-- Two capabilities with the same fields are equal. -/
theorem cap_eq {c₁ c₂ : Cap} (hb : c₁.blk = c₂.blk) (hh : c₁.holder = c₂.holder)
    (he : c₁.epoch = c₂.epoch) (hg : c₁.gen = c₂.gen) (hn : c₁.nonce = c₂.nonce) :
    c₁ = c₂ := by
  cases c₁
  cases c₂
  try simp only at hb hh he hg hn
  subst hb hh he hg hn
  rfl

/-- **At most one valid capability per block.** In every kernel state, two capabilities for
the same block that both pass the kernel's checks, presented by whoever (every field chosen
by the presenter), are the same capability, presented by the same holder. -/
theorem at_most_one_valid_capability {cfg : Config} {k : Kern} {p₁ p₂ : Nat} {c₁ c₂ : Cap}
    {x₁ x₂ : Blk} (hv₁ : capCheck cfg k p₁ c₁ = .ok x₁) (hv₂ : capCheck cfg k p₂ c₂ = .ok x₂)
    (hb : c₁.blk = c₂.blk) : c₁ = c₂ ∧ p₁ = p₂ := by
  obtain ⟨-, hh₁, ht₁, ho₁⟩ := capCheck_ok hv₁
  obtain ⟨-, hh₂, ht₂, ho₂⟩ := capCheck_ok hv₂
  obtain ⟨hb₁, he₁, hg₁, hn₁, -⟩ := tokCheck_ok ht₁
  obtain ⟨hb₂, he₂, hg₂, hn₂, -⟩ := tokCheck_ok ht₂
  rw [← hb, hb₁] at hb₂
  cases hb₂
  rw [ho₁] at ho₂
  have hp : p₁ = p₂ := Phase.owned.inj ho₂
  exact ⟨cap_eq hb (hh₁.trans (hp.trans hh₂.symm)) (he₁.trans he₂.symm) (hg₁.trans hg₂.symm)
    (by omega), hp⟩

/-- **At most one reader per block.** In every kernel state, two reads of the same block that
the kernel accepts, of whatever capabilities, were presented by the same holder with the same
capability. -/
theorem at_most_one_reader {cfg : Config} {k : Kern} {p₁ p₂ : Nat} {c₁ c₂ : Cap}
    (h₁ : (step cfg k (.read p₁ c₁)).verdict = .ok)
    (h₂ : (step cfg k (.read p₂ c₂)).verdict = .ok) (hb : c₁.blk = c₂.blk) :
    p₁ = p₂ ∧ c₁ = c₂ := by
  simp only [step, doRead] at h₁ h₂
  cases hv₁ : capCheck cfg k p₁ c₁ with
  | error e => simp [hv₁, refuse] at h₁
  | ok x₁ =>
    cases hv₂ : capCheck cfg k p₂ c₂ with
    | error e => simp [hv₂, refuse] at h₂
    | ok x₂ =>
      obtain ⟨hc, hp⟩ := at_most_one_valid_capability hv₁ hv₂ hb
      exact ⟨hp, hc⟩

/-- **Only the receiver commits.** In every kernel state, a `commit` the kernel accepts, of
whatever ticket, was presented by the receiver of the block's pending transfer. -/
theorem commit_by_receiver {cfg : Config} {k : Kern} {p : Nat} {t : Tkt}
    (h : (step cfg k (.commit p t)).verdict = .ok) :
    ∃ x s, k.blocks[t.blk]? = some x ∧ x.phase = .escrow s p := by
  simp only [step, settle] at h
  cases htk : settleCheck cfg k p t true with
  | error e => simp [htk, refuse] at h
  | ok v =>
    obtain ⟨x, s, r⟩ := v
    obtain ⟨-, ht, hm⟩ := settleCheck_ok htk
    obtain ⟨hb, -, -, -, hph⟩ := tktCheck_ok ht
    simp only [maySettle, cond_true] at hm
    rw [← Nat.eq_of_beq_eq_true hm] at hph
    exact ⟨x, s, hb, hph⟩

/-- **Only a party aborts.** In every kernel state, an `abort` the kernel accepts, of whatever
ticket, was presented by the sender or the receiver of the block's pending transfer. -/
theorem abort_by_party {cfg : Config} {k : Kern} {p : Nat} {t : Tkt}
    (h : (step cfg k (.abort p t)).verdict = .ok) :
    ∃ x s r, k.blocks[t.blk]? = some x ∧ x.phase = .escrow s r ∧ (p = s ∨ p = r) := by
  simp only [step, settle] at h
  cases htk : settleCheck cfg k p t false with
  | error e => simp [htk, refuse] at h
  | ok v =>
    obtain ⟨x, s, r⟩ := v
    obtain ⟨-, ht, hm⟩ := settleCheck_ok htk
    obtain ⟨hb, -, -, -, hph⟩ := tktCheck_ok ht
    simp only [maySettle, cond_false, Bool.or_eq_true] at hm
    exact ⟨x, s, r, hb, hph, hm.imp Nat.eq_of_beq_eq_true Nat.eq_of_beq_eq_true⟩

/-- **A leaked ticket decides nothing.** In every kernel state, while block `b` is in escrow
from `s` to `r`, a bystander `p` (neither `s` nor `r`) presenting any ticket for `b` (leaked
to it, or written by it) has its `commit` and its `abort` refused. -/
theorem bystander_settle_refused {cfg : Config} {k : Kern} {p s r : Nat} {t : Tkt} {x : Blk}
    (hx : k.blocks[t.blk]? = some x) (hph : x.phase = .escrow s r) (hs : p ≠ s) (hr : p ≠ r) :
    (step cfg k (.commit p t)).verdict ≠ .ok ∧ (step cfg k (.abort p t)).verdict ≠ .ok := by
  refine ⟨fun h => ?_, fun h => ?_⟩
  · obtain ⟨y, s', hy, hph'⟩ := commit_by_receiver h
    rw [hx] at hy
    cases hy
    rw [hph] at hph'
    cases hph'
    exact hr rfl
  · obtain ⟨y, s', r', hy, hph', hp⟩ := abort_by_party h
    rw [hx] at hy
    cases hy
    rw [hph] at hph'
    cases hph'
    rcases hp with rfl | rfl
    · exact hs rfl
    · exact hr rfl

end KVCache.Kernel

end
