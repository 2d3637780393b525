module

public import Proofs.Kernel.Invariants

/-!
# Single-owner state movement: custody as provenance over runs

`Proofs.Kernel.Invariants` proves that an accepted read comes from the block's *stored* owner,
a fact about one kernel state. This file proves that the stored owner is the holder the run's
*history* names, a fact about whole runs that links two different things.

A run of the system is logged (`LRun`): every kernel decision in it, the request and the
verdict given, is recorded in order; every system run has such a log (`sysRun_iff_logged`).
From the log alone, without looking at the kernel's state, the *history* of block `b`
(`history`) is computed: its *chain* is the holder that allocated `b`'s current generation
(an accepted `alloc`), followed by the receiver of every committed transfer of that generation
in order (an accepted `begin` names the receiver, an accepted `commit` appends it; an accepted
`abort` appends nothing; an accepted `evict` empties the chain). The *custodian* is the chain's
last holder.

**Provenance** (`accepted_use_by_custodian`): in every logged run from the initial system,
every read, evict or begin of a block `b` the kernel accepts — at any point of the run — was
presented by the custodian of `b` in the history of the decisions before it. Every holder whose
read is accepted is in the chain of the block's current generation, which starts with the
holder that allocated (and so wrote) that generation (`accepted_read_by_chain_member`). An
aborted transfer leaves the chain unchanged (`abort_keeps_chain`), a committed one appends
exactly its receiver (`commit_appends_receiver`).

The assumption is the model's: requests are presented by an authenticated presenter
(`Req.sentBy`, enforced by `SysStep.send`/`SysStep.forge`); the tokens themselves may be
forged, leaked, duplicated, reordered and dropped.
-/

@[expose] public section

namespace KVCache.Kernel

/-! ## Runs with their decision logs -/

/-- A kernel decision: the request decided and the verdict given. -/
abbrev Decision := Req × Verdict

/-- One system step with the kernel decisions it makes, in order (none or one). The same steps
as `SysStep`; a delivered request and a kernel tick each record their decision. -/
inductive LStep (cfg : Config) : Sys → List Decision → Sys → Prop
  /-- Holder `p` sends request `r`, presenting only tokens it knows. -/
  | send {S : Sys} (p : Nat) (r : Req) : p < cfg.holders → r.sentBy p = true →
      (∀ τ ∈ r.toks, τ ∈ S.know p) → LStep cfg S [] { S with net := .req r :: S.net }
  /-- Holder `p` sends request `r` presenting tokens it wrote itself. -/
  | forge {S : Sys} (p : Nat) (r : Req) : p < cfg.holders → r.sentBy p = true →
      LStep cfg S [] { S with net := .req r :: S.net }
  /-- Holder `p` hands a token it knows to holder `q`. -/
  | share {S : Sys} (p q : Nat) (τ : Tok) : q < cfg.holders → τ ∈ S.know p →
      LStep cfg S [] { S with know := learn S.know q τ }
  /-- The kernel acts on its own; the decision is logged. -/
  | tick {S : Sys} (r : Req) : r.internal = true →
      LStep cfg S [(r, (step cfg S.kern r).verdict)] (S.exec cfg r)
  /-- The network delivers a request; the kernel's decision is logged. -/
  | deliverReq {S : Sys} (l₁ l₂ : List Msg) (r : Req) : S.net = l₁ ++ .req r :: l₂ →
      LStep cfg S [(r, (step cfg S.kern r).verdict)]
        (Sys.receive cfg { S with net := l₁ ++ l₂ } (.req r))
  /-- The network delivers a grant. -/
  | deliverGrant {S : Sys} (l₁ l₂ : List Msg) (q : Nat) (c : Cap) :
      S.net = l₁ ++ .grant q c :: l₂ →
      LStep cfg S [] (Sys.receive cfg { S with net := l₁ ++ l₂ } (.grant q c))
  /-- The network delivers a ticket. -/
  | deliverTicket {S : Sys} (l₁ l₂ : List Msg) (q : Nat) (t : Tkt) :
      S.net = l₁ ++ .ticket q t :: l₂ →
      LStep cfg S [] (Sys.receive cfg { S with net := l₁ ++ l₂ } (.ticket q t))
  /-- The network duplicates a message in flight. -/
  | dup {S : Sys} (l₁ l₂ : List Msg) (m : Msg) : S.net = l₁ ++ m :: l₂ →
      LStep cfg S [] { S with net := m :: S.net }
  /-- The network drops a message in flight. -/
  | drop {S : Sys} (l₁ l₂ : List Msg) (m : Msg) : S.net = l₁ ++ m :: l₂ →
      LStep cfg S [] { S with net := l₁ ++ l₂ }

/-- Logged runs: zero or more logged steps; the log is their decisions in order. -/
inductive LRun (cfg : Config) : Sys → List Decision → Sys → Prop
  /-- No step. -/
  | refl (S : Sys) : LRun cfg S [] S
  /-- One more step. -/
  | step {S S' S'' : Sys} {l l' : List Decision} :
      LRun cfg S l S' → LStep cfg S' l' S'' → LRun cfg S (l ++ l') S''

/-- A logged step is a step of the system. -/
theorem LStep.sysStep {cfg : Config} {S S' : Sys} {l : List Decision} (h : LStep cfg S l S') :
    SysStep cfg S S' := by
  cases h with
  | send p r hp hs hk => exact .send p r hp hs hk
  | forge p r hp hs => exact .forge p r hp hs
  | share p q τ hq hk => exact .share p q τ hq hk
  | tick r hr => exact .tick r hr
  | deliverReq l₁ l₂ r hn => exact .deliver l₁ l₂ _ hn
  | deliverGrant l₁ l₂ q c hn => exact .deliver l₁ l₂ _ hn
  | deliverTicket l₁ l₂ q t hn => exact .deliver l₁ l₂ _ hn
  | dup l₁ l₂ m hn => exact .dup l₁ l₂ m hn
  | drop l₁ l₂ m hn => exact .drop l₁ l₂ m hn

/-- Every step of the system is a logged step, with some log. -/
theorem SysStep.logged {cfg : Config} {S S' : Sys} (h : SysStep cfg S S') :
    ∃ l, LStep cfg S l S' := by
  cases h with
  | send p r hp hs hk => exact ⟨_, .send p r hp hs hk⟩
  | forge p r hp hs => exact ⟨_, .forge p r hp hs⟩
  | share p q τ hq hk => exact ⟨_, .share p q τ hq hk⟩
  | tick r hr => exact ⟨_, .tick r hr⟩
  | deliver l₁ l₂ m hn =>
    cases m with
    | req r => exact ⟨_, .deliverReq l₁ l₂ r hn⟩
    | grant q c => exact ⟨_, .deliverGrant l₁ l₂ q c hn⟩
    | ticket q t => exact ⟨_, .deliverTicket l₁ l₂ q t hn⟩
  | dup l₁ l₂ m hn => exact ⟨_, .dup l₁ l₂ m hn⟩
  | drop l₁ l₂ m hn => exact ⟨_, .drop l₁ l₂ m hn⟩

/-- The runs of the system are exactly the logged runs (with some log). -/
theorem sysRun_iff_logged {cfg : Config} {S S' : Sys} :
    SysRun cfg S S' ↔ ∃ l, LRun cfg S l S' := by
  constructor
  · intro h
    induction h with
    | refl => exact ⟨[], .refl _⟩
    | step _ hs ih =>
      obtain ⟨l, hl⟩ := ih
      obtain ⟨l', hl'⟩ := hs.logged
      exact ⟨_, .step hl hl'⟩
  · intro ⟨l, h⟩
    induction h with
    | refl => exact .refl _
    | step _ hs ih => exact .step ih hs.sysStep

/-! ## Replaying a log on the kernel -/

-- noncomputable: calls `step`, which has no compiled code here.
/-- The kernel state after deciding the log's requests in order, from `k`. -/
noncomputable def replay (cfg : Config) : Kern → List Decision → Kern
  | k, [] => k
  | k, d :: l => replay cfg (step cfg k d.1).kern l

/-- A log is faithful from `k`: every verdict in it is the kernel's verdict on its request in
the state reached by the decisions before it. -/
def Faithful (cfg : Config) : Kern → List Decision → Prop
  | _, [] => True
  | k, d :: l => d.2 = (step cfg k d.1).verdict ∧ Faithful cfg (step cfg k d.1).kern l

/-- Replaying two logs one after the other. -/
theorem replay_append (cfg : Config) (k : Kern) (l₁ l₂ : List Decision) :
    replay cfg k (l₁ ++ l₂) = replay cfg (replay cfg k l₁) l₂ := by
  induction l₁ generalizing k with
  | nil => rfl
  | cons d l ih => exact ih _

/-- A log is faithful from `k` exactly when its two parts are, the second from where the first
leaves the kernel. -/
theorem faithful_append {cfg : Config} {k : Kern} {l₁ l₂ : List Decision} :
    Faithful cfg k (l₁ ++ l₂) ↔ Faithful cfg k l₁ ∧ Faithful cfg (replay cfg k l₁) l₂ := by
  induction l₁ generalizing k with
  | nil => exact ⟨fun h => ⟨trivial, h⟩, fun h => h.2⟩
  | cons d l ih =>
    constructor
    · intro ⟨hv, h⟩
      exact ⟨⟨hv, (ih.mp h).1⟩, (ih.mp h).2⟩
    · intro ⟨⟨hv, h₁⟩, h₂⟩
      exact ⟨hv, ih.mpr ⟨h₁, h₂⟩⟩

/-- A logged step moves the kernel by replaying its log, and its log is faithful. -/
theorem LStep.replays {cfg : Config} {S S' : Sys} {l : List Decision} (h : LStep cfg S l S') :
    S'.kern = replay cfg S.kern l ∧ Faithful cfg S.kern l := by
  cases h with
  | tick r _ => exact ⟨rfl, rfl, trivial⟩
  | deliverReq l₁ l₂ r _ => exact ⟨rfl, rfl, trivial⟩
  | send => exact ⟨rfl, trivial⟩
  | forge => exact ⟨rfl, trivial⟩
  | share => exact ⟨rfl, trivial⟩
  | deliverGrant => exact ⟨rfl, trivial⟩
  | deliverTicket => exact ⟨rfl, trivial⟩
  | dup => exact ⟨rfl, trivial⟩
  | drop => exact ⟨rfl, trivial⟩

/-- A logged run moves the kernel by replaying its log, and its log is faithful. -/
theorem LRun.replays {cfg : Config} {S S' : Sys} {l : List Decision} (h : LRun cfg S l S') :
    S'.kern = replay cfg S.kern l ∧ Faithful cfg S.kern l := by
  induction h with
  | refl => exact ⟨rfl, trivial⟩
  | step _ hs ih =>
    obtain ⟨hk, hf⟩ := ih
    obtain ⟨hk', hf'⟩ := hs.replays
    refine ⟨by rw [hk', hk, replay_append], faithful_append.mpr ⟨hf, ?_⟩⟩
    rw [← hk]
    exact hf'

/-- Replaying any log keeps a state well formed. -/
theorem replay_wf {cfg : Config} {k : Kern} (hw : WF cfg k) (l : List Decision) :
    WF cfg (replay cfg k l) := by
  induction l generalizing k with
  | nil => exact hw
  | cons d l ih => exact ih (step_wf hw d.1)

/-! ## The history of a block, computed from the log -/

/-- A block's history: its chain of holders in the current generation (the allocator, then the
receiver of every committed transfer, in order) and the receiver of the transfer begun and not
yet settled, if any. -/
structure Hist where
  /-- The allocator of the current generation, then every committed transfer's receiver. -/
  chain : List Nat
  /-- The receiver named by the begun, unsettled transfer. -/
  pending : Option Nat

/-- The history before any decision: no chain, nothing pending. -/
def Hist.empty : Hist := ⟨[], none⟩

-- noncomputable: compiling it needs `List.appendTR`, absent from the registry Lean.
/-- What an accepted request does to block `b`'s history: an `alloc` of `b` starts a new chain
with its requester, an `evict` of `b` ends the chain, a `begin` of `b` records the named
receiver, a `commit` of `b` appends the recorded receiver, an `abort` of `b` forgets it;
everything else leaves the history as it was. -/
noncomputable def Req.histStep (b : Nat) (H : Hist) : Req → Hist
  | .alloc p b' => if b' = b then ⟨[p], none⟩ else H
  | .evict _ c => if c.blk = b then ⟨[], none⟩ else H
  | .begin _ c rcv => if c.blk = b then ⟨H.chain, some rcv⟩ else H
  | .commit _ t =>
    if t.blk = b then
      match H.pending with
      | some r => ⟨H.chain ++ [r], none⟩
      | none => H
    else H
  | .abort _ t => if t.blk = b then ⟨H.chain, none⟩ else H
  | _ => H

-- noncomputable: calls `Req.histStep`, which has no compiled code here.
/-- Block `b`'s history after the log's decisions from `H`: accepted decisions act
(`Req.histStep`), refused ones leave it as it was. -/
noncomputable def history (b : Nat) : Hist → List Decision → Hist
  | H, [] => H
  | H, (r, v) :: l =>
    match v with
    | .ok => history b (r.histStep b H) l
    | .no _ => history b H l

/-- The history after two logs one after the other. -/
theorem history_append (b : Nat) (H : Hist) (l₁ l₂ : List Decision) :
    history b H (l₁ ++ l₂) = history b (history b H l₁) l₂ := by
  induction l₁ generalizing H with
  | nil => rfl
  | cons d l ih =>
    obtain ⟨r, v⟩ := d
    cases v <;> exact ih _

-- noncomputable: calls `history`, which has no compiled code here.
/-- Block `b`'s chain in a log: the holder that allocated its current generation, then the
receiver of every committed transfer of that generation, in order. -/
noncomputable def chain (b : Nat) (l : List Decision) : List Nat := (history b Hist.empty l).chain

-- noncomputable: compiling it needs `List.getLast?`, absent from the registry Lean.
/-- Block `b`'s custodian in a log: the last holder of its chain. -/
noncomputable def custodian (b : Nat) (l : List Decision) : Option Nat := (chain b l).getLast?

-- noncomputable: compiling it needs `List.getLast?`, absent from the registry Lean.
/-- The phase a history stands for: free without a chain, held by the chain's last holder
when nothing is pending, in escrow from it to the recorded receiver otherwise. -/
noncomputable def Hist.phase (H : Hist) : Phase :=
  match H.chain.getLast?, H.pending with
  | none, _ => .free
  | some h, none => .owned h
  | some s, some r => .escrow s r

/-- A history standing for `owned h` ends its chain with `h` and has nothing pending. -/
theorem Hist.of_phase_owned {H : Hist} {h : Nat} (e : H.phase = .owned h) :
    H.chain.getLast? = some h ∧ H.pending = none := by
  unfold Hist.phase at e
  cases hc : H.chain.getLast? <;> cases hp : H.pending <;> simp [hc, hp] at e
  exact ⟨by rw [e], rfl⟩

/-- A history standing for `escrow s r` ends its chain with `s` and has `r` pending. -/
theorem Hist.of_phase_escrow {H : Hist} {s r : Nat} (e : H.phase = .escrow s r) :
    H.chain.getLast? = some s ∧ H.pending = some r := by
  unfold Hist.phase at e
  cases hc : H.chain.getLast? <;> cases hp : H.pending <;> simp [hc, hp] at e
  exact ⟨by rw [e.1], by rw [e.2]⟩

/-! ## The kernel follows the history -/

/-- Replacing another block's record leaves block `b`'s record as it was. -/
theorem put_other {k : Kern} {b b' : Nat} {x y : Blk} (h : b' ≠ b)
    (hx : k.blocks[b]? = some x) : (k.put b' y).blocks[b]? = some x := by
  show (k.blocks.set b' y)[b]? = some x
  rw [List.getElem?_set_ne h]
  exact hx

/-- A read changes no kernel state. -/
theorem read_kern (cfg : Config) (k : Kern) (p : Nat) (c : Cap) :
    (step cfg k (.read p c)).kern = k := by
  simp only [step, doRead]
  split <;> rfl

/-- A resend changes no kernel state. -/
theorem resend_kern_same (cfg : Config) (k : Kern) (b : Nat) :
    (step cfg k (.resend b)).kern = k := by
  simp only [step, doResend]
  split
  · rfl
  · split <;> rfl

/-- An epoch change keeps every block's phase. -/
theorem renew_phase (x : Blk) : x.renew.phase = x.phase := by
  unfold Blk.renew
  split <;> rfl

/-- **One accepted step follows the history.** If block `b`'s phase is the one its history
stands for, then after an accepted request it is the one the history stands for after that
request. -/
theorem step_follows_history {cfg : Config} {k : Kern} {r : Req} {b : Nat} {x : Blk}
    {H : Hist} (hv : (step cfg k r).verdict = .ok) (hx : k.blocks[b]? = some x)
    (hph : x.phase = H.phase) :
    ∃ y, (step cfg k r).kern.blocks[b]? = some y ∧ y.phase = (r.histStep b H).phase := by
  cases r with
  | read p c =>
    rw [read_kern]
    exact ⟨x, hx, hph⟩
  | resend b' =>
    rw [resend_kern_same]
    exact ⟨x, hx, hph⟩
  | evict p c =>
    simp only [step, doEvict] at hv ⊢
    cases hc : capCheck cfg k p c with
    | error e => rw [hc] at hv; simp [refuse] at hv
    | ok x0 =>
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      by_cases hcb : c.blk = b
      · subst hcb
        refine ⟨⟨x0.gen, x0.seq, .free⟩, getElem?_set_self_of_eq_some hb, ?_⟩
        simp [Req.histStep, Hist.phase]
      · exact ⟨x, put_other hcb hx, by simp [Req.histStep, hcb, hph]⟩
  | begin p c rcv =>
    simp only [step, doBegin] at hv ⊢
    cases hc : capCheck cfg k p c with
    | error e => rw [hc] at hv; simp [refuse] at hv
    | ok x0 =>
      rw [hc] at hv
      obtain ⟨-, -, ht, hown⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      cases h1 : Nat.blt rcv cfg.holders <;> cases h2 : Nat.beq rcv p <;>
        cases h3 : Nat.ble (x0.seq + 2) cfg.maxSeq <;> simp [h1, h2, h3, refuse] at hv
      simp only [h3, cond_true, cond_false]
      by_cases hcb : c.blk = b
      · subst hcb
        obtain rfl : x0 = x := Option.some.inj (hb.symm.trans hx)
        obtain ⟨hl, -⟩ := Hist.of_phase_owned (hph.symm.trans hown)
        refine ⟨⟨x0.gen, x0.seq + 1, .escrow p rcv⟩, getElem?_set_self_of_eq_some hb, ?_⟩
        simp [Req.histStep, Hist.phase, hl]
      · exact ⟨x, put_other hcb hx, by simp [Req.histStep, hcb, hph]⟩
  | commit p t =>
    simp only [step, settle] at hv ⊢
    cases hs : settleCheck cfg k p t true with
    | error e => rw [hs] at hv; simp [refuse] at hv
    | ok v =>
      obtain ⟨x0, s, r⟩ := v
      obtain ⟨hb, -, -, -, hesc⟩ := tktCheck_ok (settleCheck_ok hs).2.1
      by_cases htb : t.blk = b
      · subst htb
        obtain rfl : x0 = x := Option.some.inj (hb.symm.trans hx)
        obtain ⟨-, hp⟩ := Hist.of_phase_escrow (hph.symm.trans hesc)
        refine ⟨⟨x0.gen, x0.seq + 1, .owned r⟩, getElem?_set_self_of_eq_some hb, ?_⟩
        simp [Req.histStep, Hist.phase, hp]
      · exact ⟨x, put_other htb hx, by simp [Req.histStep, htb, hph]⟩
  | abort p t =>
    simp only [step, settle] at hv ⊢
    cases hs : settleCheck cfg k p t false with
    | error e => rw [hs] at hv; simp [refuse] at hv
    | ok v =>
      obtain ⟨x0, s, r⟩ := v
      obtain ⟨hb, -, -, -, hesc⟩ := tktCheck_ok (settleCheck_ok hs).2.1
      by_cases htb : t.blk = b
      · subst htb
        obtain rfl : x0 = x := Option.some.inj (hb.symm.trans hx)
        obtain ⟨hl, -⟩ := Hist.of_phase_escrow (hph.symm.trans hesc)
        refine ⟨⟨x0.gen, x0.seq + 1, .owned s⟩, getElem?_set_self_of_eq_some hb, ?_⟩
        simp [Req.histStep, Hist.phase, hl]
      · exact ⟨x, put_other htb hx, by simp [Req.histStep, htb, hph]⟩
  | alloc p b' =>
    simp only [step, doAlloc] at hv ⊢
    cases hp : Nat.blt p cfg.holders with
    | false => rw [hp] at hv; simp [refuse] at hv
    | true =>
      rw [hp] at hv
      cases hb : k.blocks[b']? with
      | none => rw [hb] at hv; simp [refuse] at hv
      | some x0 =>
        rw [hb] at hv
        cases hg : Nat.blt x0.gen cfg.maxGen <;> cases hph0 : x0.phase <;>
          simp [hg, hph0, refuse] at hv
        simp only [hg, hph0, cond_true]
        by_cases hbb : b' = b
        · subst hbb
          refine ⟨⟨x0.gen + 1, 1, .owned p⟩, getElem?_set_self_of_eq_some hb, ?_⟩
          simp [Req.histStep, Hist.phase]
        · exact ⟨x, put_other hbb hx, by simp [Req.histStep, hbb, hph]⟩
  | advance =>
    simp only [step, doAdvance] at hv ⊢
    cases ha : k.blocks.any (fun x => x.phase.isEscrow) with
    | true => rw [ha] at hv; simp [refuse] at hv
    | false =>
      rw [ha] at hv
      cases he : Nat.blt k.epoch cfg.maxEpoch with
      | false => rw [he] at hv; simp [refuse] at hv
      | true =>
        simp only [cond_false, cond_true]
        exact ⟨x.renew, by simp [hx], by rw [renew_phase]; exact hph⟩

/-- **The kernel follows the history over a faithful log.** If block `b`'s phase is the one
its history stands for, it still is after replaying any faithful log, the history computed
from the log alone. -/
theorem replay_follows_history {cfg : Config} {k : Kern} {l : List Decision} {b : Nat}
    {x : Blk} {H : Hist} (hf : Faithful cfg k l) (hx : k.blocks[b]? = some x)
    (hph : x.phase = H.phase) :
    ∃ y, (replay cfg k l).blocks[b]? = some y ∧ y.phase = (history b H l).phase := by
  induction l generalizing k x H with
  | nil => exact ⟨x, hx, hph⟩
  | cons d l ih =>
    obtain ⟨r, v⟩ := d
    obtain ⟨hv, hl⟩ := hf
    simp only at hv hl
    subst hv
    show ∃ y, (replay cfg (step cfg k r).kern l).blocks[b]? = some y ∧
      y.phase = (history b H ((r, (step cfg k r).verdict) :: l)).phase
    cases hres : (step cfg k r).verdict with
    | ok =>
      obtain ⟨y, hy, hyph⟩ := step_follows_history hres hx hph
      exact ih hl hy hyph
    | no e =>
      have hk := (refusal_changes_nothing cfg k r (by rw [hres]; exact Verdict.noConfusion)).1
      rw [hk] at hl ⊢
      exact ih hl hx hph

/-- In a well-formed state every record a block index finds is below the block count. -/
theorem lt_blocks_of_some {cfg : Config} {k : Kern} {b : Nat} {x : Blk} (hw : WF cfg k)
    (hx : k.blocks[b]? = some x) : b < cfg.blocks := by
  rw [← hw.length_eq]
  exact (List.getElem?_eq_some_iff.mp hx).1

/-- **The kernel's phase is the history's, in every run.** After any faithful log from the
initial kernel, every block's phase is the one its history (computed from the log alone)
stands for. -/
theorem phase_eq_history {cfg : Config} {l : List Decision} (hf : Faithful cfg (Kern.init cfg) l)
    {b : Nat} {y : Blk} (hy : (replay cfg (Kern.init cfg) l).blocks[b]? = some y) :
    y.phase = (history b Hist.empty l).phase := by
  have hb : b < cfg.blocks := lt_blocks_of_some (replay_wf (wf_init cfg) l) hy
  have h0 : (Kern.init cfg).blocks[b]? = some ⟨0, 0, .free⟩ := by
    simp [Kern.init, hb]
  obtain ⟨y', hy', hph⟩ := replay_follows_history (H := Hist.empty) hf h0
    (by simp [Hist.phase, Hist.empty])
  rw [hy] at hy'
  cases hy'
  exact hph

/-! ## Provenance -/

/-- The presenter and capability of a request that uses a block: a read, an evict or a begin
(a move); none for the others. -/
def Req.capUse : Req → Option (Nat × Cap)
  | .read p c | .evict p c | .begin p c _ => some (p, c)
  | _ => none

/-- An accepted use of a block finds it owned by the presenter. -/
theorem capUse_owned {cfg : Config} {k : Kern} {r : Req} {p : Nat} {c : Cap}
    (hu : r.capUse = some (p, c)) (hv : (step cfg k r).verdict = .ok) :
    ∃ x, k.blocks[c.blk]? = some x ∧ x.phase = .owned p := by
  have hcheck : ∃ x, capCheck cfg k p c = .ok x := by
    cases r with
    | read p' c' =>
      simp only [Req.capUse, Option.some.injEq, Prod.mk.injEq] at hu
      obtain ⟨rfl, rfl⟩ := hu
      simp only [step, doRead] at hv
      cases hc : capCheck cfg k p' c' with
      | error e => rw [hc] at hv; simp [refuse] at hv
      | ok x => exact ⟨x, rfl⟩
    | evict p' c' =>
      simp only [Req.capUse, Option.some.injEq, Prod.mk.injEq] at hu
      obtain ⟨rfl, rfl⟩ := hu
      simp only [step, doEvict] at hv
      cases hc : capCheck cfg k p' c' with
      | error e => rw [hc] at hv; simp [refuse] at hv
      | ok x => exact ⟨x, rfl⟩
    | begin p' c' rcv =>
      simp only [Req.capUse, Option.some.injEq, Prod.mk.injEq] at hu
      obtain ⟨rfl, rfl⟩ := hu
      simp only [step, doBegin] at hv
      cases hc : capCheck cfg k p' c' with
      | error e => rw [hc] at hv; simp [refuse] at hv
      | ok x => exact ⟨x, rfl⟩
    | _ => simp [Req.capUse] at hu
  obtain ⟨x, hc⟩ := hcheck
  obtain ⟨-, -, ht, hown⟩ := capCheck_ok hc
  exact ⟨x, (tokCheck_ok ht).1, hown⟩

/-- **Custody as provenance over runs.** In every logged run from the initial system (forged,
leaked, duplicated, reordered and dropped messages included), every read, evict or begin of a
block that the kernel accepts, at any point of the run, was presented by the block's custodian
in the history of the decisions before it: the holder that allocated the block's current
generation, followed through every committed transfer of that generation in order. -/
theorem accepted_use_by_custodian {cfg : Config} {l₁ l₂ : List Decision} {S : Sys} {r : Req}
    (hrun : LRun cfg (Sys.init cfg) (l₁ ++ (r, .ok) :: l₂) S) {p : Nat} {c : Cap}
    (hu : r.capUse = some (p, c)) : custodian c.blk l₁ = some p := by
  obtain ⟨-, hf⟩ := hrun.replays
  obtain ⟨hf₁, hv, -⟩ := faithful_append.mp hf
  obtain ⟨x, hx, hown⟩ := capUse_owned hu hv.symm
  have hph := phase_eq_history hf₁ hx
  exact (Hist.of_phase_owned (hph.symm.trans hown)).1

/-- **Custody as provenance, at the end of a run.** In every logged run from the initial
system, a read, evict or begin the kernel would accept in the final state is presented by the
block's custodian in the run's history. -/
theorem accepted_use_by_custodian_now {cfg : Config} {l : List Decision} {S : Sys} {r : Req}
    (hrun : LRun cfg (Sys.init cfg) l S) {p : Nat} {c : Cap} (hu : r.capUse = some (p, c))
    (hv : (step cfg S.kern r).verdict = .ok) : custodian c.blk l = some p := by
  obtain ⟨hk, hf⟩ := hrun.replays
  obtain ⟨x, hx, hown⟩ := capUse_owned hu hv
  rw [hk] at hx
  exact (Hist.of_phase_owned ((phase_eq_history hf hx).symm.trans hown)).1

/-- **Content is read only within the chain.** In every logged run from the initial system,
every holder whose read of a block the kernel accepts, at any point of the run, is in the
block's chain in the history before it: the chain of the current generation, whose first
holder allocated it (and so wrote its content). -/
theorem accepted_read_by_chain_member {cfg : Config} {l₁ l₂ : List Decision} {S : Sys}
    {p : Nat} {c : Cap} (hrun : LRun cfg (Sys.init cfg) (l₁ ++ (.read p c, .ok) :: l₂) S) :
    p ∈ chain c.blk l₁ :=
  List.mem_of_getLast? (accepted_use_by_custodian hrun rfl)

/-! ## How the chain moves -/

/-- **An aborted transfer leaves the chain unchanged.** A begin of block `b` followed by an
accepted abort of `b` leaves `b`'s chain as it was (whether the begin was accepted or not). -/
theorem abort_keeps_chain (b : Nat) (l : List Decision) (p q rcv : Nat) (c : Cap) (t : Tkt)
    (v : Verdict) (hc : c.blk = b) (ht : t.blk = b) :
    chain b (l ++ [(.begin p c rcv, v), (.abort q t, .ok)]) = chain b l := by
  have hs : ∀ H : Hist, history b H [(.begin p c rcv, v), (.abort q t, .ok)] =
      ⟨H.chain, none⟩ := by
    intro H
    cases v <;> simp [history, Req.histStep, hc, ht]
  simp only [chain]
  rw [history_append, hs]

/-- **A committed transfer appends exactly its receiver.** An accepted begin of block `b`
towards `rcv` followed by an accepted commit of `b` appends `rcv` to `b`'s chain. -/
theorem commit_appends_receiver (b : Nat) (l : List Decision) (p q rcv : Nat) (c : Cap)
    (t : Tkt) (hc : c.blk = b) (ht : t.blk = b) :
    chain b (l ++ [(.begin p c rcv, .ok), (.commit q t, .ok)]) = chain b l ++ [rcv] := by
  simp only [chain]
  rw [history_append]
  simp [history, Req.histStep, hc, ht]

end KVCache.Kernel

end
