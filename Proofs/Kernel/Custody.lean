module

public import Proofs.Kernel.Invariants

/-!
# Single-owner state movement: custody of the tokens in circulation

In the system of `Proofs.Kernel.Model` holders present tokens they have received or wrote
themselves, and the network may delay, duplicate, reorder and drop messages. This file proves
that in every reachable state of the system **every token in circulation (received by a holder
or on its way to one) is genuine** (`SysReach.custody`):
its `(epoch, generation, nonce)` slot is no later than its block's clock, and if it is the
block's current slot, it matches the block's phase — a capability of the owner while the block
is held, a ticket while it is in escrow.

The safety of the kernel does not rest on this: only the owner reads, at most one capability
is valid per block, and only a transfer's parties settle it, for every request in every kernel
state, whatever tokens holders write (`Proofs.Kernel.Invariants`). What custody says beyond
them is about what holders *are sent*: the kernel never puts a current token that does not fit
the block's phase into anybody's hands, so an honest holder who received the block's current
capability is its owner, and a leaked token of the current slot is the owner's own capability
(useless to anyone else, `forged_capability_refused`) or a ticket of the pending transfer
(useless to a bystander, `bystander_settle_refused`).

And progress of the whole system: from every reachable state, a pending transfer can be run
to its commit and to its abort (`pending_can_commit`, `pending_can_abort`), and an owner can be
brought to know a capability with which its read and evict are accepted (`owner_can_act`),
whatever messages were lost before: the kernel resends the current token; and where progress
stops: a block that has reached the generation bound is never reallocated, in any later state
(`exhausted_never_reallocated`), since no step lowers a generation. No liveness is
claimed for a network that never delivers (a partition): these are runs that *exist*.
-/

@[expose] public section

namespace KVCache.Kernel

/-! ## Genuine tokens -/

/-- A token fits a block's phase when its slot is the block's current one: a capability of
the owner while the block is held, a ticket while it is in escrow, anything while it is free. -/
def Fits : Phase → Tok → Prop
  | .owned h, .cap c => c.holder = h
  | .owned _, .tkt _ => False
  | .escrow _ _, .tkt _ => True
  | .escrow _ _, .cap _ => False
  | .free, _ => True

/-- A token is genuine in kernel state `k`: its slot is no later than its block's clock, and
if it is the current slot, the token fits the block's phase. -/
def Genuine (k : Kern) (τ : Tok) : Prop :=
  ∀ x : Blk, k.blocks[τ.blk]? = some x →
    LexLe τ.epoch τ.gen (τ.nonce + 1) k.epoch x.gen x.seq ∧
    (τ.epoch = k.epoch → τ.gen = x.gen → τ.nonce + 1 = x.seq → Fits x.phase τ)

/-- The tokens a message hands to a holder: a grant's capability, a ticket message's ticket (a
request hands nothing to anybody). -/
def Msg.issued : Msg → List Tok
  | .req _ => []
  | .grant _ c => [.cap c]
  | .ticket _ t => [.tkt t]

/-- The tokens in circulation: known to some holder, or on their way to one (carried by a
grant or ticket message in flight). Tokens a holder writes into its own requests are not in
circulation: nobody is sent them. -/
def Sys.Circ (S : Sys) (τ : Tok) : Prop :=
  (∃ q, τ ∈ S.know q) ∨ ∃ m, m ∈ S.net ∧ τ ∈ m.issued

/-- A token a message hands to a holder is one it carries. -/
theorem mem_toks_of_issued {m : Msg} {τ : Tok} (h : τ ∈ m.issued) : τ ∈ m.toks := by
  cases m <;> simp_all [Msg.issued, Msg.toks]

/-- The custody invariant: every token in circulation is genuine. -/
def Custody (S : Sys) : Prop := ∀ τ, S.Circ τ → Genuine S.kern τ

/-! ## Old tokens stay genuine -/

/-- Replacing a block's record by one strictly later on its clock keeps every token
genuine. -/
theorem genuine_put_lt {k : Kern} {b : Nat} {x y : Blk} {τ : Tok} (hg : Genuine k τ)
    (hx : k.blocks[b]? = some x) (hlt : x.gen < y.gen ∨ x.gen = y.gen ∧ x.seq < y.seq) :
    Genuine (k.put b y) τ := by
  intro z hz
  simp only [Kern.put] at hz ⊢
  by_cases hb : τ.blk = b
  · rw [hb, getElem?_set_self_of_eq_some hx] at hz
    cases hz
    have hx' : k.blocks[τ.blk]? = some x := by rw [hb]; exact hx
    obtain ⟨hle, -⟩ := hg x hx'
    unfold LexLe at hle ⊢
    refine ⟨by omega, fun he hge hn => ?_⟩
    exfalso
    omega
  · rw [List.getElem?_set_ne (fun h => hb h.symm)] at hz
    exact hg z hz

/-- Freeing a block (same generation and counter) keeps every token genuine. -/
theorem genuine_put_free {k : Kern} {b : Nat} {x : Blk} {τ : Tok} (hg : Genuine k τ)
    (hx : k.blocks[b]? = some x) : Genuine (k.put b ⟨x.gen, x.seq, .free⟩) τ := by
  intro z hz
  simp only [Kern.put] at hz ⊢
  by_cases hb : τ.blk = b
  · rw [hb, getElem?_set_self_of_eq_some hx] at hz
    cases hz
    have hx' : k.blocks[τ.blk]? = some x := by rw [hb]; exact hx
    obtain ⟨hle, -⟩ := hg x hx'
    exact ⟨hle, fun _ _ _ => by cases τ <;> exact trivial⟩
  · rw [List.getElem?_set_ne (fun h => hb h.symm)] at hz
    exact hg z hz

/-- An epoch change keeps every token genuine (none is of the new epoch). -/
theorem genuine_advance {k : Kern} {τ : Tok} (hg : Genuine k τ) :
    Genuine ⟨k.epoch + 1, k.blocks.map Blk.renew⟩ τ := by
  intro z hz
  simp only [List.getElem?_map] at hz
  cases hx : k.blocks[τ.blk]? with
  | none => rw [hx] at hz; cases hz
  | some x =>
    obtain ⟨hle, -⟩ := hg x hx
    unfold LexLe at hle
    refine ⟨Or.inl (by show τ.epoch < k.epoch + 1; omega), fun he _ _ => ?_⟩
    exfalso
    have he' : τ.epoch = k.epoch + 1 := he
    omega

/-- Every step keeps every genuine token genuine. -/
theorem step_genuine (cfg : Config) {k : Kern} {τ : Tok} (hg : Genuine k τ) (r : Req) :
    Genuine (step cfg k r).kern τ := by
  cases r with
  | read p c =>
    simp only [step, doRead]
    cases capCheck cfg k p c <;> exact hg
  | evict p c =>
    simp only [step, doEvict]
    cases hc : capCheck cfg k p c with
    | error e => exact hg
    | ok x =>
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      exact genuine_put_free hg hb
  | begin p c rcv =>
    simp only [step, doBegin]
    split
    · exact hg
    · rename_i x hc
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      cases Nat.blt rcv cfg.holders <;> cases Nat.beq rcv p <;>
        cases Nat.ble (x.seq + 2) cfg.maxSeq <;>
        first
        | exact hg
        | exact genuine_put_lt (y := ⟨x.gen, x.seq + 1, .escrow p rcv⟩) hg hb
            (Or.inr ⟨rfl, Nat.lt_succ_self _⟩)
  | commit p t =>
    simp only [step, settle]
    cases htk : settleCheck cfg k p t true with
    | error e => exact hg
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      exact genuine_put_lt (y := ⟨x.gen, x.seq + 1, .owned r⟩) hg hb
        (Or.inr ⟨rfl, Nat.lt_succ_self _⟩)
  | abort p t =>
    simp only [step, settle]
    cases htk : settleCheck cfg k p t false with
    | error e => exact hg
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      exact genuine_put_lt (y := ⟨x.gen, x.seq + 1, .owned s⟩) hg hb
        (Or.inr ⟨rfl, Nat.lt_succ_self _⟩)
  | alloc p b =>
    simp only [step, doAlloc]
    cases Nat.blt p cfg.holders with
    | false => exact hg
    | true =>
      split
      · exact hg
      · rename_i x hb
        split
        · cases Nat.blt x.gen cfg.maxGen with
          | false => exact hg
          | true =>
            exact genuine_put_lt (y := ⟨x.gen + 1, 1, .owned p⟩) hg hb
              (Or.inl (Nat.lt_succ_self _))
        · exact hg
  | advance =>
    simp only [step, doAdvance]
    cases k.blocks.any (fun x => x.phase.isEscrow) with
    | true => exact hg
    | false =>
      cases Nat.blt k.epoch cfg.maxEpoch with
      | false => exact hg
      | true => exact genuine_advance hg
  | resend b =>
    simp only [step, doResend]
    split
    · exact hg
    · split <;> exact hg

/-! ## New tokens are genuine -/

/-- The grants of an epoch change: one per owned block, with nonce 0. -/
theorem mem_renewGrants {e i : Nat} {xs : List Blk} {m : Msg} (h : m ∈ renewGrants e i xs) :
    ∃ j x o, xs[j]? = some x ∧ x.phase = .owned o ∧ m = .grant o ⟨i + j, o, e, x.gen, 0⟩ := by
  induction xs generalizing i with
  | nil => simp [renewGrants] at h
  | cons x xs ih =>
    simp only [renewGrants] at h
    split at h
    · rename_i o hph
      rcases List.mem_cons.mp h with rfl | h
      · exact ⟨0, x, o, rfl, hph, rfl⟩
      · obtain ⟨j, y, o', hy, hph', rfl⟩ := ih h
        have hij : i + 1 + j = i + (j + 1) := by omega
        exact ⟨j + 1, y, o', by simpa using hy, hph', by rw [hij]⟩
    · obtain ⟨j, y, o', hy, hph', rfl⟩ := ih h
      have hij : i + 1 + j = i + (j + 1) := by omega
      exact ⟨j + 1, y, o', by simpa using hy, hph', by rw [hij]⟩

/-- A token of the current slot that fits the phase is genuine. -/
theorem genuine_current {k : Kern} {τ : Tok} {x : Blk} (hx : k.blocks[τ.blk]? = some x)
    (he : τ.epoch = k.epoch) (hg : τ.gen = x.gen) (hn : τ.nonce + 1 = x.seq)
    (hf : Fits x.phase τ) : Genuine k τ := by
  intro z hz
  rw [hx] at hz
  cases hz
  exact ⟨Or.inr ⟨he, Or.inr ⟨hg, Nat.le_of_eq hn⟩⟩, fun _ _ _ => hf⟩

/-- Every token the kernel sends is genuine in the state it moves to. -/
theorem sends_genuine {cfg : Config} {k : Kern} (hw : WF cfg k) (r : Req) {m : Msg}
    (hm : m ∈ (step cfg k r).sends) {τ : Tok} (hτ : τ ∈ m.toks) :
    Genuine (step cfg k r).kern τ := by
  cases r with
  | read p c =>
    simp only [step, doRead] at hm ⊢
    cases hc : capCheck cfg k p c <;> simp [hc, refuse] at hm
  | evict p c =>
    simp only [step, doEvict] at hm ⊢
    cases hc : capCheck cfg k p c <;> simp [hc, refuse] at hm
  | begin p c rcv =>
    simp only [step, doBegin] at hm ⊢
    cases hc : capCheck cfg k p c with
    | error e => simp [hc, refuse] at hm
    | ok x =>
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, he, -, -, -⟩ := tokCheck_ok ht
      cases h1 : Nat.blt rcv cfg.holders <;> cases h2 : Nat.beq rcv p <;>
        cases h3 : Nat.ble (x.seq + 2) cfg.maxSeq <;> simp [hc, h1, h2, h3, refuse] at hm ⊢
      rcases hm with rfl | rfl
      all_goals
        simp only [Msg.toks, List.mem_singleton] at hτ
        subst hτ
        exact genuine_current (getElem?_set_self_of_eq_some hb) rfl rfl rfl trivial
  | commit p t =>
    simp only [step, settle] at hm ⊢
    cases htk : settleCheck cfg k p t true with
    | error e => simp [htk, refuse] at hm
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      simp [htk] at hm
      subst hm
      simp only [Msg.toks, List.mem_singleton] at hτ
      subst hτ
      exact genuine_current (getElem?_set_self_of_eq_some hb) rfl rfl rfl rfl
  | abort p t =>
    simp only [step, settle] at hm ⊢
    cases htk : settleCheck cfg k p t false with
    | error e => simp [htk, refuse] at hm
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      simp [htk] at hm
      subst hm
      simp only [Msg.toks, List.mem_singleton] at hτ
      subst hτ
      exact genuine_current (getElem?_set_self_of_eq_some hb) rfl rfl rfl rfl
  | alloc p b =>
    simp only [step, doAlloc] at hm ⊢
    cases hp : Nat.blt p cfg.holders with
    | false => simp [hp, refuse] at hm
    | true =>
      cases hb : k.blocks[b]? with
      | none => simp [hp, hb, refuse] at hm
      | some x =>
        cases hg : Nat.blt x.gen cfg.maxGen <;> cases hph : x.phase <;>
          simp [hp, hb, hg, hph, refuse] at hm ⊢
        subst hm
        simp only [Msg.toks, List.mem_singleton] at hτ
        subst hτ
        exact genuine_current (getElem?_set_self_of_eq_some hb) rfl rfl rfl rfl
  | advance =>
    simp only [step, doAdvance] at hm ⊢
    cases ha : k.blocks.any (fun x => x.phase.isEscrow) with
    | true => simp [ha, refuse] at hm
    | false =>
      cases he : Nat.blt k.epoch cfg.maxEpoch with
      | false => simp [ha, he, refuse] at hm
      | true =>
        simp only [ha, he, cond_false, cond_true] at hm ⊢
        obtain ⟨j, x, o, hx, hph, rfl⟩ := mem_renewGrants hm
        simp only [Msg.toks, List.mem_singleton] at hτ
        subst hτ
        refine genuine_current (x := x.renew) (by simp [Tok.blk, hx]) rfl ?_ ?_ ?_
        · simp [Tok.gen, Blk.renew, hph]
        · simp [Tok.nonce, Blk.renew, hph]
        · simp [Fits, Blk.renew, hph]
  | resend b =>
    simp only [step, doResend] at hm ⊢
    cases hb : k.blocks[b]? with
    | none => simp [hb, refuse] at hm
    | some x =>
      cases hph : x.phase with
      | free => simp [hb, hph, refuse] at hm
      | owned h =>
        obtain ⟨n, hn⟩ := seq_succ hw hb (by rw [hph]; exact fun h => Phase.noConfusion h)
        simp [hb, hph] at hm ⊢
        subst hm
        simp only [Msg.toks, List.mem_singleton] at hτ
        subst hτ
        exact genuine_current hb rfl rfl (by show x.seq - 1 + 1 = x.seq; omega)
          (by simp [Fits, hph])
      | escrow s r =>
        obtain ⟨n, hn⟩ := seq_succ hw hb (by rw [hph]; exact fun h => Phase.noConfusion h)
        simp [hb, hph] at hm ⊢
        rcases hm with rfl | rfl
        all_goals
          simp only [Msg.toks, List.mem_singleton] at hτ
          subst hτ
          exact genuine_current hb rfl rfl (by show x.seq - 1 + 1 = x.seq; omega)
            (by simp [Fits, hph])

/-! ## The custody invariant holds in every reachable state -/

/-- A kernel step keeps custody: old tokens stay genuine, sent tokens are genuine. -/
theorem exec_custody {cfg : Config} {S : Sys} {net : List Msg} (hw : WF cfg S.kern)
    (hc : ∀ τ, ((∃ q, τ ∈ S.know q) ∨ ∃ m, m ∈ net ∧ τ ∈ m.issued) → Genuine S.kern τ)
    (r : Req) :
    Custody ⟨(step cfg S.kern r).kern, (step cfg S.kern r).sends ++ net, S.know⟩ := by
  intro τ hτ
  rcases hτ with ⟨q, hq⟩ | ⟨m, hm, hτm⟩
  · exact step_genuine cfg (hc τ (Or.inl ⟨q, hq⟩)) r
  · rcases List.mem_append.mp hm with hm | hm
    · exact sends_genuine hw r hm (mem_toks_of_issued hτm)
    · exact step_genuine cfg (hc τ (Or.inr ⟨m, hm, hτm⟩)) r

/-- Learning a token in circulation keeps the tokens known among those in circulation. -/
theorem mem_learn {know : Nat → List Tok} {q q' : Nat} {τ τ' : Tok}
    (h : τ' ∈ learn know q τ q') : τ' = τ ∨ τ' ∈ know q' := by
  unfold learn at h
  by_cases hq : q' = q
  · subst hq
    simpa using h
  · simp [hq] at h
    exact Or.inr h

/-- Every step of the system keeps custody. -/
theorem sysStep_custody {cfg : Config} {S S' : Sys} (h : SysStep cfg S S')
    (hw : WF cfg S.kern) (hc : Custody S) : Custody S' := by
  cases h with
  | send p r _ _ _ =>
    intro τ hτ
    rcases hτ with ⟨q, hq⟩ | ⟨m, hm, hτm⟩
    · exact hc τ (Or.inl ⟨q, hq⟩)
    · rcases List.mem_cons.mp hm with rfl | hm
      · simp [Msg.issued] at hτm
      · exact hc τ (Or.inr ⟨m, hm, hτm⟩)
  | forge p r _ _ =>
    intro τ hτ
    rcases hτ with ⟨q, hq⟩ | ⟨m, hm, hτm⟩
    · exact hc τ (Or.inl ⟨q, hq⟩)
    · rcases List.mem_cons.mp hm with rfl | hm
      · simp [Msg.issued] at hτm
      · exact hc τ (Or.inr ⟨m, hm, hτm⟩)
  | share p q τ' _ hk =>
    intro τ hτ
    rcases hτ with ⟨q', hq'⟩ | ⟨m, hm, hτm⟩
    · rcases mem_learn hq' with rfl | hq'
      · exact hc _ (Or.inl ⟨p, hk⟩)
      · exact hc _ (Or.inl ⟨q', hq'⟩)
    · exact hc τ (Or.inr ⟨m, hm, hτm⟩)
  | tick r _ => exact exec_custody hw hc r
  | deliver l₁ l₂ m hnet =>
    have hsub : ∀ m', m' ∈ l₁ ++ l₂ → m' ∈ S.net := fun m' hm' => by
      rw [hnet]
      rcases List.mem_append.mp hm' with h | h
      · exact List.mem_append.mpr (Or.inl h)
      · exact List.mem_append.mpr (Or.inr (List.mem_cons.mpr (Or.inr h)))
    have hmem : m ∈ S.net := by
      rw [hnet]; exact List.mem_append.mpr (Or.inr (List.mem_cons.mpr (Or.inl rfl)))
    cases m with
    | req r =>
      exact exec_custody (net := l₁ ++ l₂) hw (fun τ hτ => by
        rcases hτ with hk | ⟨m', hm', hτm⟩
        · exact hc τ (Or.inl hk)
        · exact hc τ (Or.inr ⟨m', hsub m' hm', hτm⟩)) r
    | grant q c =>
      intro τ hτ
      rcases hτ with ⟨q', hq'⟩ | ⟨m', hm', hτm⟩
      · rcases mem_learn hq' with rfl | hq'
        · exact hc _ (Or.inr ⟨_, hmem, List.mem_singleton_self _⟩)
        · exact hc _ (Or.inl ⟨q', hq'⟩)
      · exact hc τ (Or.inr ⟨m', hsub m' hm', hτm⟩)
    | ticket q t =>
      intro τ hτ
      rcases hτ with ⟨q', hq'⟩ | ⟨m', hm', hτm⟩
      · rcases mem_learn hq' with rfl | hq'
        · exact hc _ (Or.inr ⟨_, hmem, List.mem_singleton_self _⟩)
        · exact hc _ (Or.inl ⟨q', hq'⟩)
      · exact hc τ (Or.inr ⟨m', hsub m' hm', hτm⟩)
  | dup l₁ l₂ m hnet =>
    have hmem : m ∈ S.net := by
      rw [hnet]; exact List.mem_append.mpr (Or.inr (List.mem_cons.mpr (Or.inl rfl)))
    intro τ hτ
    rcases hτ with ⟨q, hq⟩ | ⟨m', hm', hτm⟩
    · exact hc τ (Or.inl ⟨q, hq⟩)
    · rcases List.mem_cons.mp hm' with rfl | hm'
      · exact hc τ (Or.inr ⟨_, hmem, hτm⟩)
      · exact hc τ (Or.inr ⟨m', hm', hτm⟩)
  | drop l₁ l₂ m hnet =>
    intro τ hτ
    rcases hτ with ⟨q, hq⟩ | ⟨m', hm', hτm⟩
    · exact hc τ (Or.inl ⟨q, hq⟩)
    · refine hc τ (Or.inr ⟨m', ?_, hτm⟩)
      rw [hnet]
      rcases List.mem_append.mp hm' with h | h
      · exact List.mem_append.mpr (Or.inl h)
      · exact List.mem_append.mpr (Or.inr (List.mem_cons.mpr (Or.inr h)))

/-- Every run of the system from a well-formed state with custody keeps both. -/
theorem sysRun_custody {cfg : Config} {S S' : Sys} (h : SysRun cfg S S')
    (hw : WF cfg S.kern) (hc : Custody S) : WF cfg S'.kern ∧ Custody S' := by
  induction h with
  | refl => exact ⟨hw, hc⟩
  | step _ hs ih =>
    first
    | exact ⟨sysStep_wf hs (ih hw hc).1, sysStep_custody hs (ih hw hc).1 (ih hw hc).2⟩
    | exact ⟨sysStep_wf hs ih.1, sysStep_custody hs ih.1 ih.2⟩

/-- **Custody.** In every reachable state of the system (forging holders included), every
token in circulation (received by a holder, or on its way to one) is genuine. The kernel's
safety does not need it (see `only_holder_reads`, `at_most_one_valid_capability`,
`commit_by_receiver`, which hold for every request in every kernel state); what it says beyond
them is what holders are sent, even with forgers about: a current token anybody has received
or is being sent fits the block's phase, so the block's current capability names its owner, no
current capability circulates while the block is in escrow and no current ticket while it is
held. -/
theorem SysReach.custody {cfg : Config} {S : Sys} (h : SysReach cfg S) : Custody S :=
  (sysRun_custody h (wf_init cfg) (fun _ hτ => by
    rcases hτ with ⟨q, hq⟩ | ⟨m, hm, _⟩
    · simp [Sys.init] at hq
    · simp [Sys.init] at hm)).2

/-! ## Progress of the system -/

/-- The kernel's `resend` of a held or escrowed block changes no kernel state. -/
theorem resend_kern {cfg : Config} {k : Kern} {b : Nat} {x : Blk} (hx : k.blocks[b]? = some x)
    (hph : x.phase ≠ .free) : (step cfg k (.resend b)).kern = k := by
  cases hp : x.phase with
  | free => exact absurd hp hph
  | owned h => simp [step, doResend, hx, hp]
  | escrow s r => simp [step, doResend, hx, hp]

/-- **A pending transfer can always be committed.** From every reachable state in which block
`b` is in escrow from `s` to `r`, the system can run to a state in which the kernel has handed
the block to `r` — whatever the network did before (messages dropped included): the kernel
resends the ticket, the network delivers it to `r`, `r` sends `commit`, the network delivers
it. -/
theorem pending_can_commit {cfg : Config} {S : Sys} (h : SysReach cfg S) {b s r : Nat}
    {x : Blk} (hx : S.kern.blocks[b]? = some x) (hph : x.phase = .escrow s r) :
    ∃ S', SysRun cfg S S' ∧ S'.kern.blocks[b]? = some ⟨x.gen, x.seq + 1, .owned r⟩ := by
  have hw := SysReach.wf h
  have hok := hw.blk_ok x (List.mem_of_getElem? hx)
  simp only [BlkOk, hph] at hok
  have hne : x.phase ≠ .free := by rw [hph]; exact fun h => Phase.noConfusion h
  have hk1 := resend_kern (cfg := cfg) hx hne
  have hn : x.seq - 1 + 1 = x.seq := by omega
  have hacc := commit_progress (cfg := cfg) hx hph hn hok.2.2.1
  refine ⟨_, .step (.step (.step (.step (.refl S) (.tick (.resend b) rfl))
      (.deliver [.ticket s ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩] S.net
        (.ticket r ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩) ?_))
      (.send r (.commit r ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩) hok.2.2.1 (by simp [Req.sentBy]) ?_))
      (.deliver [] _ (.req (.commit r ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩)) rfl), ?_⟩
  · simp [Sys.exec, step, doResend, hx, hph]
  · intro τ hτ
    simp only [Req.toks, List.mem_singleton] at hτ
    subst hτ
    simp [Sys.receive, learn]
  · show (step cfg (step cfg S.kern (.resend b)).kern
      (.commit r ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩)).kern.blocks[b]? = _
    rw [hk1]
    exact (commit_hands_to_receiver hx hph hacc).1

/-- **A pending transfer can always be aborted.** From every reachable state in which block `b`
is in escrow from `s` to `r`, the system can run to a state in which the kernel has returned
the block to `s` (the ticket is resent, delivered to `s`, who sends `abort`). -/
theorem pending_can_abort {cfg : Config} {S : Sys} (h : SysReach cfg S) {b s r : Nat}
    {x : Blk} (hx : S.kern.blocks[b]? = some x) (hph : x.phase = .escrow s r) :
    ∃ S', SysRun cfg S S' ∧ S'.kern.blocks[b]? = some ⟨x.gen, x.seq + 1, .owned s⟩ := by
  have hw := SysReach.wf h
  have hok := hw.blk_ok x (List.mem_of_getElem? hx)
  simp only [BlkOk, hph] at hok
  have hne : x.phase ≠ .free := by rw [hph]; exact fun h => Phase.noConfusion h
  have hk1 := resend_kern (cfg := cfg) hx hne
  have hn : x.seq - 1 + 1 = x.seq := by omega
  have hacc := abort_progress (cfg := cfg) hx hph hn hok.2.1
  refine ⟨_, .step (.step (.step (.step (.refl S) (.tick (.resend b) rfl))
      (.deliver [] (.ticket r ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩ :: S.net)
        (.ticket s ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩) ?_))
      (.send s (.abort s ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩) hok.2.1 (by simp [Req.sentBy]) ?_))
      (.deliver [] _ (.req (.abort s ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩)) rfl), ?_⟩
  · simp [Sys.exec, step, doResend, hx, hph]
  · intro τ hτ
    simp only [Req.toks, List.mem_singleton] at hτ
    subst hτ
    simp [Sys.receive, learn]
  · show (step cfg (step cfg S.kern (.resend b)).kern
      (.abort s ⟨b, S.kern.epoch, x.gen, x.seq - 1⟩)).kern.blocks[b]? = _
    rw [hk1]
    exact (abort_restores_sender hx hph hacc).1

/-- **An owner can always act.** From every reachable state in which holder `h` owns block `b`,
the system can run, without any kernel state change, to a state in which `h` knows a
capability with which its `read` and its `evict` of `b` are accepted (the kernel resends the
capability and the network delivers it, whatever was lost before). -/
theorem owner_can_act {cfg : Config} {S : Sys} (hreach : SysReach cfg S) {b h : Nat}
    {x : Blk} (hx : S.kern.blocks[b]? = some x) (hph : x.phase = .owned h) :
    ∃ S', SysRun cfg S S' ∧ S'.kern = S.kern ∧ ∃ c : Cap, c.blk = b ∧ .cap c ∈ S'.know h ∧
      (step cfg S'.kern (.read h c)).verdict = .ok ∧
      (step cfg S'.kern (.evict h c)).verdict = .ok := by
  have hw := SysReach.wf hreach
  have hok := hw.blk_ok x (List.mem_of_getElem? hx)
  simp only [BlkOk, hph] at hok
  have hne : x.phase ≠ .free := by rw [hph]; exact fun h => Phase.noConfusion h
  have hk1 := resend_kern (cfg := cfg) hx hne
  have hn : x.seq - 1 + 1 = x.seq := by omega
  refine ⟨_, .step (.step (.refl S) (.tick (.resend b) rfl))
      (.deliver [] S.net (.grant h ⟨b, h, S.kern.epoch, x.gen, x.seq - 1⟩) ?_), hk1,
      ⟨b, h, S.kern.epoch, x.gen, x.seq - 1⟩, rfl, ?_, ?_, ?_⟩
  · simp [Sys.exec, step, doResend, hx, hph]
  · simp [Sys.receive, learn]
  · show (step cfg (step cfg S.kern (.resend b)).kern _).verdict = _
    rw [hk1]
    exact read_progress hw hx hph hn
  · show (step cfg (step cfg S.kern (.resend b)).kern _).verdict = _
    rw [hk1]
    exact evict_progress hw hx hph hn

/-! ## Counters at their bounds -/

/-- `k'` has, for every block of `k`, a record whose generation is no lower. -/
def Kern.GenLe (k k' : Kern) : Prop :=
  ∀ (b : Nat) (x : Blk), k.blocks[b]? = some x → ∃ y : Blk, k'.blocks[b]? = some y ∧ x.gen ≤ y.gen

/-- Every state has its own generations. -/
theorem genLe_refl (k : Kern) : k.GenLe k := fun _ x hx => ⟨x, hx, Nat.le_refl _⟩

/-- `GenLe` is transitive. -/
theorem genLe_trans {k₁ k₂ k₃ : Kern} (h₁ : k₁.GenLe k₂) (h₂ : k₂.GenLe k₃) : k₁.GenLe k₃ := by
  intro b x hx
  obtain ⟨y, hy, hxy⟩ := h₁ b x hx
  obtain ⟨z, hz, hyz⟩ := h₂ b y hy
  exact ⟨z, hz, Nat.le_trans hxy hyz⟩

/-- Replacing a block's record by one of no lower generation keeps every generation. -/
theorem genLe_put {k : Kern} {b : Nat} {x y : Blk} (hx : k.blocks[b]? = some x)
    (hxy : x.gen ≤ y.gen) : k.GenLe (k.put b y) := by
  intro b' x' hx'
  by_cases hb : b = b'
  · subst hb
    rw [hx] at hx'
    cases hx'
    exact ⟨y, getElem?_set_self_of_eq_some hx, hxy⟩
  · refine ⟨x', ?_, Nat.le_refl _⟩
    show (k.blocks.set b y)[b']? = some x'
    rw [List.getElem?_set_ne hb]
    exact hx'

/-- Every step, accepted or refused, keeps or raises every block's generation. -/
theorem step_genLe (cfg : Config) (k : Kern) (r : Req) : k.GenLe (step cfg k r).kern := by
  cases r with
  | read p c =>
    simp only [step, doRead]
    cases capCheck cfg k p c <;> exact genLe_refl k
  | evict p c =>
    simp only [step, doEvict]
    cases hc : capCheck cfg k p c with
    | error e => exact genLe_refl k
    | ok x =>
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      exact genLe_put hb (Nat.le_refl _)
  | begin p c rcv =>
    simp only [step, doBegin]
    split
    · exact genLe_refl k
    · rename_i x hc
      obtain ⟨-, -, ht, -⟩ := capCheck_ok hc
      obtain ⟨hb, -, -, -, -⟩ := tokCheck_ok ht
      cases Nat.blt rcv cfg.holders <;> cases Nat.beq rcv p <;>
        cases Nat.ble (x.seq + 2) cfg.maxSeq <;>
        first
        | exact genLe_refl k
        | exact genLe_put (y := ⟨x.gen, x.seq + 1, .escrow p rcv⟩) hb (Nat.le_refl _)
  | commit p t =>
    simp only [step, settle]
    cases htk : settleCheck cfg k p t true with
    | error e => exact genLe_refl k
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      exact genLe_put hb (Nat.le_refl _)
  | abort p t =>
    simp only [step, settle]
    cases htk : settleCheck cfg k p t false with
    | error e => exact genLe_refl k
    | ok v =>
      obtain ⟨x, s, r⟩ := v
      obtain ⟨hb, -, -, -, -⟩ := tktCheck_ok (settleCheck_ok htk).2.1
      exact genLe_put hb (Nat.le_refl _)
  | alloc p b =>
    simp only [step, doAlloc]
    cases Nat.blt p cfg.holders with
    | false => exact genLe_refl k
    | true =>
      split
      · exact genLe_refl k
      · rename_i x hb
        split
        · cases Nat.blt x.gen cfg.maxGen with
          | false => exact genLe_refl k
          | true =>
            exact genLe_put (y := ⟨x.gen + 1, 1, .owned p⟩) hb (Nat.le_succ _)
        · exact genLe_refl k
  | advance =>
    simp only [step, doAdvance]
    cases k.blocks.any (fun x => x.phase.isEscrow) with
    | true => exact genLe_refl k
    | false =>
      cases Nat.blt k.epoch cfg.maxEpoch with
      | false => exact genLe_refl k
      | true =>
        intro b x hx
        refine ⟨x.renew, by simp [hx], ?_⟩
        unfold Blk.renew
        split <;> exact Nat.le_refl _
  | resend b =>
    simp only [step, doResend]
    split
    · exact genLe_refl k
    · split <;> exact genLe_refl k

/-- Every step of the system keeps or raises every block's generation. -/
theorem sysStep_genLe {cfg : Config} {S S' : Sys} (h : SysStep cfg S S') :
    S.kern.GenLe S'.kern := by
  cases h with
  | send p r _ _ _ => exact genLe_refl _
  | forge p r _ _ => exact genLe_refl _
  | share p q τ _ _ => exact genLe_refl _
  | tick r _ => exact step_genLe cfg S.kern r
  | deliver l₁ l₂ m _ =>
    cases m with
    | req r => exact step_genLe cfg S.kern r
    | grant q c => exact genLe_refl _
    | ticket q t => exact genLe_refl _
  | dup l₁ l₂ m _ => exact genLe_refl _
  | drop l₁ l₂ m _ => exact genLe_refl _

/-- Every run of the system keeps or raises every block's generation. -/
theorem sysRun_genLe {cfg : Config} {S S' : Sys} (h : SysRun cfg S S') :
    S.kern.GenLe S'.kern := by
  induction h with
  | refl => exact genLe_refl _
  | step _ hs ih => exact genLe_trans ih (sysStep_genLe hs)

/-- **An exhausted generation is never reallocated.** Once block `b` has reached the
generation bound (`maxGen ≤ gen`), every `alloc` of `b`, by anyone, is refused in every later
state of the system, whatever happens meanwhile: generations never go down. -/
theorem exhausted_never_reallocated {cfg : Config} {S S' : Sys} (hrun : SysRun cfg S S')
    {b : Nat} {x : Blk} (hx : S.kern.blocks[b]? = some x) (hg : cfg.maxGen ≤ x.gen) (p : Nat) :
    (step cfg S'.kern (.alloc p b)).verdict ≠ .ok := by
  obtain ⟨y, hy, hxy⟩ := sysRun_genLe hrun b x hx
  exact alloc_refused_at_bound hy (Nat.le_trans hg hxy)

end KVCache.Kernel

end
