module

public import Proofs.Kernel.Provenance

/-!
# Single-owner state movement: every begun transfer settles exactly once under fair delivery

`settled_ticket_refused_forever` (`Proofs.Kernel.Invariants`) says a transfer is settled *at
most* once: once a commit or abort of its ticket is accepted, every later request presenting
that ticket is refused. This file proves it is settled *exactly* once in every run that
delivers one settling request of a party.

**Fairness, stated plainly** (finite-run form): after the kernel accepts the `begin` of a
transfer of block `b` from `p` to `rcv`, the rest of the run delivers to the kernel (the log
records a decision on) at least once a `commit` presented by `rcv` or an `abort` presented by
`p`, with the transfer's ticket. (A party that keeps re-sending its settling request over a
network that eventually delivers a message re-sent infinitely often produces such a run; a
network that never delivers it does not, and then nothing is claimed.)

**Exactly once** (`exactly_once_under_fair_delivery`, `run_settles_exactly_once`): in every
such run (after any logged run from the initial system), exactly one decision of the rest of
the run is an accepted commit or abort of the transfer's ticket (by anybody): none before it
and none after it, whatever else is delivered, duplicated, delayed or forged meanwhile. While
the transfer is pending, every other accepted request leaves the block's record and the epoch
as they are (`escrow_stable`), so the fair delivery, if nothing settled the transfer before,
is accepted.
-/

@[expose] public section

namespace KVCache.Kernel

/-- Request `q` settles with ticket `t`: a commit or an abort presenting `t` (by anybody). -/
def Req.Settles (t : Tkt) : Req → Prop
  | .commit _ t' | .abort _ t' => t' = t
  | _ => False

/-- The ticket of the transfer begun with capability `c`: same block, epoch and generation, the
next nonce. -/
def Cap.transferTkt (c : Cap) : Tkt := ⟨c.blk, c.epoch, c.gen, c.nonce + 1⟩

/-- A settling request presents its ticket. -/
theorem settles_mem_toks {t : Tkt} {q : Req} (h : q.Settles t) : Tok.tkt t ∈ q.toks := by
  cases q <;> simp_all [Req.Settles, Req.toks]

/-- A block in escrow blocks every epoch change. -/
theorem any_escrow {k : Kern} {b : Nat} {x : Blk} {s r : Nat} (hx : k.blocks[b]? = some x)
    (hph : x.phase = .escrow s r) : k.blocks.any (fun y => y.phase.isEscrow) = true :=
  List.any_eq_true.mpr ⟨x, List.mem_of_getElem? hx, by simp [hph, Phase.isEscrow]⟩

/-- **A pending transfer is stable.** While block `b` is in escrow, every accepted request
that does not settle its current ticket leaves `b`'s record and the epoch as they are. -/
theorem escrow_stable {cfg : Config} {k : Kern} {q : Req} {b s r : Nat} {x : Blk}
    (hx : k.blocks[b]? = some x) (hph : x.phase = .escrow s r)
    (hv : (step cfg k q).verdict = .ok) (hns : ¬ q.Settles ⟨b, k.epoch, x.gen, x.seq - 1⟩) :
    (step cfg k q).kern.blocks[b]? = some x ∧ (step cfg k q).kern.epoch = k.epoch := by
  cases q with
  | read p c => rw [read_kern]; exact ⟨hx, rfl⟩
  | resend b' => rw [resend_kern_same]; exact ⟨hx, rfl⟩
  | evict p c =>
    simp only [step, doEvict] at hv ⊢
    cases hc : capCheck cfg k p c with
    | error e => rw [hc] at hv; simp [refuse] at hv
    | ok x0 =>
      obtain ⟨-, -, ht, hown⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      by_cases hcb : c.blk = b
      · subst hcb
        obtain rfl : x0 = x := Option.some.inj (hb.symm.trans hx)
        rw [hph] at hown
        cases hown
      · exact ⟨put_other hcb hx, rfl⟩
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
        rw [hph] at hown
        cases hown
      · exact ⟨put_other hcb hx, rfl⟩
  | commit p t =>
    simp only [step, settle] at hv ⊢
    cases hs : settleCheck cfg k p t true with
    | error e => rw [hs] at hv; simp [refuse] at hv
    | ok v =>
      obtain ⟨x0, s', r'⟩ := v
      obtain ⟨hb, he, hg, hn, -⟩ := tktCheck_ok (settleCheck_ok hs).2.1
      by_cases htb : t.blk = b
      · subst htb
        obtain rfl : x0 = x := Option.some.inj (hb.symm.trans hx)
        exfalso
        apply hns
        show t = _
        have hn' : t.nonce = x0.seq - 1 := by omega
        cases t
        simp only at he hg hn'
        subst he hg hn'
        rfl
      · exact ⟨put_other htb hx, rfl⟩
  | abort p t =>
    simp only [step, settle] at hv ⊢
    cases hs : settleCheck cfg k p t false with
    | error e => rw [hs] at hv; simp [refuse] at hv
    | ok v =>
      obtain ⟨x0, s', r'⟩ := v
      obtain ⟨hb, he, hg, hn, -⟩ := tktCheck_ok (settleCheck_ok hs).2.1
      by_cases htb : t.blk = b
      · subst htb
        obtain rfl : x0 = x := Option.some.inj (hb.symm.trans hx)
        exfalso
        apply hns
        show t = _
        have hn' : t.nonce = x0.seq - 1 := by omega
        cases t
        simp only at he hg hn'
        subst he hg hn'
        rfl
      · exact ⟨put_other htb hx, rfl⟩
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
          obtain rfl : x0 = x := Option.some.inj (hb.symm.trans hx)
          rw [hph] at hph0
          cases hph0
        · exact ⟨put_other hbb hx, rfl⟩
  | advance =>
    simp only [step, doAdvance] at hv
    rw [any_escrow hx hph] at hv
    simp [refuse] at hv

/-- Replaying a log moves every block's clock forward or leaves it. -/
theorem replay_clockLe (cfg : Config) (k : Kern) (l : List Decision) :
    k.ClockLe (replay cfg k l) := by
  induction l generalizing k with
  | nil => exact clockLe_refl k
  | cons d l ih => exact clockLe_trans (step_clockLe cfg k d.1) (ih _)

/-- **At most once.** After an accepted settlement of ticket `t`, no decision of a faithful log
is an accepted settlement of `t`. -/
theorem no_settle_after_settle {cfg : Config} {k : Kern} {q : Req} {t : Tkt}
    (hv : (step cfg k q).verdict = .ok) (hq : q.Settles t) {l : List Decision}
    (hf : Faithful cfg (step cfg k q).kern l) : ∀ d ∈ l, d.2 = .ok → ¬ d.1.Settles t := by
  have hpass : (step cfg k q).kern.Passed t.blk t.epoch t.gen t.nonce := by
    cases q with
    | commit p t' =>
      simp only [Req.Settles] at hq
      subst hq
      exact settle_passes hv
    | abort p t' =>
      simp only [Req.Settles] at hq
      subst hq
      exact settle_passes hv
    | _ => simp [Req.Settles] at hq
  intro d hd hok hds
  obtain ⟨a, b', rfl⟩ := List.append_of_mem hd
  obtain ⟨-, hdv, -⟩ := faithful_append.mp hf
  have hp' := passed_of_clockLe hpass (replay_clockLe cfg _ a)
  exact passed_refused (settles_mem_toks hds) hp' (hdv.symm.trans hok)

/-- **Exactly once from a pending transfer.** From a state in which block `b` is in escrow
from `s` to `r` (known holders) with current ticket `t`, in every faithful log that decides at
least once `r`'s commit or `s`'s abort of `t` (fair delivery), exactly one decision is an
accepted settlement of `t` (by anybody): none before it, none after it. -/
theorem settles_once_from_escrow {cfg : Config} {b s r : Nat} {x : Blk} {n : Nat}
    (hph : x.phase = .escrow s r) (hs : s < cfg.holders) (hr : r < cfg.holders)
    (hn : n + 1 = x.seq) {l : List Decision} :
    ∀ {k : Kern} {t : Tkt}, k.blocks[b]? = some x → t = ⟨b, k.epoch, x.gen, n⟩ →
    Faithful cfg k l → (∃ d ∈ l, d.1 = .commit r t ∨ d.1 = .abort s t) →
    ∃ (m₁ : List Decision) (q : Req) (m₂ : List Decision),
      l = m₁ ++ (q, .ok) :: m₂ ∧ q.Settles t ∧
      (∀ d ∈ m₁, d.2 = .ok → ¬ d.1.Settles t) ∧ (∀ d ∈ m₂, d.2 = .ok → ¬ d.1.Settles t) := by
  induction l with
  | nil =>
    intro k t _ _ _ hfair
    obtain ⟨d, hd, -⟩ := hfair
    cases hd
  | cons e l ih =>
    intro k t hx ht hf hfair
    obtain ⟨q, v⟩ := e
    obtain ⟨hv, hfl⟩ := hf
    simp only at hv hfl
    by_cases hset : v = .ok ∧ q.Settles t
    · obtain ⟨rfl, hq⟩ := hset
      exact ⟨[], q, l, rfl, hq, by simp, no_settle_after_settle hv.symm hq hfl⟩
    · have hstay : (step cfg k q).kern.blocks[b]? = some x ∧
          (step cfg k q).kern.epoch = k.epoch := by
        cases hres : (step cfg k q).verdict with
        | ok =>
          refine escrow_stable hx hph hres (fun hq => hset ⟨hv.trans hres, ?_⟩)
          have hseq : x.seq - 1 = n := by omega
          rw [ht, ← hseq]
          exact hq
        | no e =>
          have hk := (refusal_changes_nothing cfg k q
            (by rw [hres]; exact Verdict.noConfusion)).1
          rw [hk]
          exact ⟨hx, rfl⟩
      have hfair' : ∃ d ∈ l, d.1 = .commit r t ∨ d.1 = .abort s t := by
        obtain ⟨d, hd, hdq⟩ := hfair
        rcases List.mem_cons.mp hd with rfl | hd
        · exfalso
          apply hset
          rcases hdq with hdq | hdq
          · simp only at hdq
            subst hdq
            refine ⟨?_, rfl⟩
            rw [hv, ht]
            exact commit_progress hx hph hn hr
          · simp only at hdq
            subst hdq
            refine ⟨?_, rfl⟩
            rw [hv, ht]
            exact abort_progress hx hph hn hs
        · exact ⟨d, hd, hdq⟩
      obtain ⟨m₁, q', m₂, hl, hq', h₁, h₂⟩ :=
        ih hstay.1 (by rw [hstay.2]; exact ht) hfl hfair'
      refine ⟨(q, v) :: m₁, q', m₂, by rw [hl, List.cons_append], hq', ?_, h₂⟩
      intro d hd hok
      rcases List.mem_cons.mp hd with rfl | hd
      · exact fun hq => hset ⟨hok, hq⟩
      · exact h₁ d hd hok

/-- What an accepted `begin` establishes: the capability is current for a block owned by the
presenter (a known holder), the receiver is a known holder, and the block goes into escrow with
the next sequence number. -/
theorem begin_accepted {cfg : Config} {k : Kern} {p rcv : Nat} {c : Cap}
    (hv : (step cfg k (.begin p c rcv)).verdict = .ok) :
    ∃ x, k.blocks[c.blk]? = some x ∧ c.epoch = k.epoch ∧ c.gen = x.gen ∧ c.nonce + 1 = x.seq ∧
      p < cfg.holders ∧ rcv < cfg.holders ∧
      (step cfg k (.begin p c rcv)).kern = k.put c.blk ⟨x.gen, x.seq + 1, .escrow p rcv⟩ := by
  simp only [step, doBegin] at hv ⊢
  cases hc : capCheck cfg k p c with
  | error e => rw [hc] at hv; simp [refuse] at hv
  | ok x =>
    rw [hc] at hv
    obtain ⟨hp, -, ht, -⟩ := capCheck_ok hc
    obtain ⟨hb, he, hg, hn, -⟩ := tokCheck_ok ht
    cases h1 : Nat.blt rcv cfg.holders <;> cases h2 : Nat.beq rcv p <;>
      cases h3 : Nat.ble (x.seq + 2) cfg.maxSeq <;> simp [h1, h2, h3, refuse] at hv
    refine ⟨x, hb, he, hg, hn, hp, Nat.le_of_ble_eq_true h1, ?_⟩
    simp [h3]

/-- **Exactly once under fair delivery.** After the kernel accepts `p`'s `begin` of a transfer
to `rcv` with capability `c`, every faithful log that decides at least once `rcv`'s commit or
`p`'s abort with the transfer's ticket (fair delivery) contains exactly one accepted commit or
abort of that ticket (by anybody): none before it, none after it. -/
theorem exactly_once_under_fair_delivery {cfg : Config} {k : Kern}
    {p rcv : Nat} {c : Cap} (hv : (step cfg k (.begin p c rcv)).verdict = .ok)
    {l : List Decision} (hf : Faithful cfg (step cfg k (.begin p c rcv)).kern l)
    (hfair : ∃ d ∈ l, d.1 = .commit rcv c.transferTkt ∨ d.1 = .abort p c.transferTkt) :
    ∃ (m₁ : List Decision) (q : Req) (m₂ : List Decision),
      l = m₁ ++ (q, .ok) :: m₂ ∧ q.Settles c.transferTkt ∧
      (∀ d ∈ m₁, d.2 = .ok → ¬ d.1.Settles c.transferTkt) ∧
      (∀ d ∈ m₂, d.2 = .ok → ¬ d.1.Settles c.transferTkt) := by
  obtain ⟨x, hb, he, hg, hn, hp, hr, hk⟩ := begin_accepted hv
  rw [hk] at hf
  have hy : (k.put c.blk ⟨x.gen, x.seq + 1, .escrow p rcv⟩).blocks[c.blk]? =
      some ⟨x.gen, x.seq + 1, .escrow p rcv⟩ := getElem?_set_self_of_eq_some hb
  refine settles_once_from_escrow (x := ⟨x.gen, x.seq + 1, .escrow p rcv⟩) (n := x.seq) rfl
    hp hr rfl hy ?_ hf hfair
  show (⟨c.blk, c.epoch, c.gen, c.nonce + 1⟩ : Tkt) = ⟨c.blk, k.epoch, x.gen, x.seq⟩
  rw [he, hg, hn]

/-- **Exactly once under fair delivery, over runs.** In every logged run from the initial
system in which the kernel accepts `p`'s `begin` of a transfer to `rcv` with capability `c`
and the rest of the run delivers at least once `rcv`'s commit or `p`'s abort with the
transfer's ticket (fair delivery), the rest of the run contains exactly one accepted commit or
abort of that ticket (by anybody): none before it, none after it. -/
theorem run_settles_exactly_once {cfg : Config} {l₁ l₂ : List Decision} {S : Sys}
    {p rcv : Nat} {c : Cap}
    (hrun : LRun cfg (Sys.init cfg) (l₁ ++ (.begin p c rcv, .ok) :: l₂) S)
    (hfair : ∃ d ∈ l₂, d.1 = .commit rcv c.transferTkt ∨ d.1 = .abort p c.transferTkt) :
    ∃ (m₁ : List Decision) (q : Req) (m₂ : List Decision),
      l₂ = m₁ ++ (q, .ok) :: m₂ ∧ q.Settles c.transferTkt ∧
      (∀ d ∈ m₁, d.2 = .ok → ¬ d.1.Settles c.transferTkt) ∧
      (∀ d ∈ m₂, d.2 = .ok → ¬ d.1.Settles c.transferTkt) := by
  obtain ⟨-, hf⟩ := hrun.replays
  obtain ⟨-, hv, hf₂⟩ := faithful_append.mp hf
  exact exactly_once_under_fair_delivery hv.symm hf₂ hfair

end KVCache.Kernel

end
