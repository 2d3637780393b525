module

public import Proofs.Kernel.Model

/-!
# Single-owner state movement: the invariants

The theorems about the kernel of `Proofs.Kernel.Model`, for every configuration:

* **One live owner.** At most one holder can read in any state (`at_most_one_live_owner`,
  `reachable_at_most_one_live_owner`); only the owner reads, and a read changes nothing
  (`only_owner_reads`).
* **Escrow is unreadable.** No read succeeds while the block is in flight
  (`no_read_in_escrow`, `escrow_has_no_live_owner`), and `begin` revokes the sender at once
  (`begin_revokes_sender`).
* **Transfers settle exactly once.** `commit` hands the block to the ticket's receiver and
  `abort` returns it to the sender, each using the ticket up (`commit_hands_to_receiver`,
  `abort_returns_to_sender`); a used ticket stays used and can never be settled again
  (`used_ticket_stays_used_run`, `used_ticket_refused`, `ticket_single_use`,
  `commit_replay_refused`).
* **Stale requests are refused and change nothing** (`stale_epoch_refused`,
  `stale_gen_refused`, `stale_epoch_state_unchanged`, `stale_gen_state_unchanged`,
  `wrong_gen_refused`, `refusal_leaves_state_unchanged`).
* **Evict-and-reallocate kills the past.** After `realloc`, every capability and every ticket
  of an older generation is refused forever (`realloc_kills_older_capabilities`,
  `realloc_kills_older_tickets`).
* **Conservation.** Custody is neither created nor destroyed except by `evict`/`realloc`
  (`custody_conserved`, `owner_origin`); epoch and generation only grow and stay within their
  bounds (`epoch_monotone`, `gen_monotone_run`, `reachable_within_bounds`).
* **The reachable-state invariant** `Inv` (a pending ticket exists exactly while the block is
  in escrow under it, bound to the current epoch and generation, between two distinct known
  holders; an owner is a known holder) holds in every reachable state
  (`reachable_invariant`), and `runFrom` stays among reachable states (`runFrom_reach`).

The proofs first characterise each accepted step (`begin_ok`, `settle_ok`, `ownerCheck_ok`,
`read_ok`, `evict_ok`, `realloc_ok`, `advance_ok`), then build the headline theorems from
those. Ticket-book lookups and updates are core's `l[t]?` and `List.set`, reasoned about with
core's lemmas (`List.getElem?_set_self'`, `List.getElem?_set_ne`, `List.getElem?_replicate`).
-/

@[expose] public section

namespace KVCache.Kernel

/-! ## The reachable-state invariant -/

/-- The reachable-state invariant. -/
structure Inv (cfg : Config) (s : State) : Prop where
  /-- A pending ticket is the one the block is in escrow under, bound to the current epoch and
  generation. -/
  pending_escrow : ∀ t snd rcv e g, s.tickets[t]? = some (.pending snd rcv e g) →
    s.phase = .escrow t ∧ e = s.epoch ∧ g = s.gen
  /-- In escrow under `t`, ticket `t` is pending, bound to the current epoch and generation,
  between two distinct known holders. -/
  escrow_pending : ∀ t, s.phase = .escrow t →
    ∃ snd rcv, s.tickets[t]? = some (.pending snd rcv s.epoch s.gen) ∧
      snd < cfg.holders ∧ rcv < cfg.holders ∧ snd ≠ rcv
  /-- An owner is a known holder. -/
  owned_valid : ∀ h, s.phase = .owned h → h < cfg.holders

/-! ## The ticket book -/

/-- Updating an entry that exists makes the lookup return the new value. -/
theorem getElem?_set_self_of_eq_some {α : Type} {l : List α} {t : Nat} {x y : α}
    (h : l[t]? = some x) : (l.set t y)[t]? = some y := by
  simp [List.getElem?_set_self', h]

/-! ## What each accepted step does -/

/-- An accepted `begin` had a fresh capability, two distinct known holders, an unused ticket
and the sender as owner; it moves the block to escrow and makes the ticket pending. -/
theorem begin_ok {cfg : Config} {s s' : State} {t snd rcv e g : Nat}
    (h : step cfg s (.begin t snd rcv e g) = .ok s') :
    e = s.epoch ∧ g = s.gen ∧ snd < cfg.holders ∧ rcv < cfg.holders ∧ snd ≠ rcv ∧
    s.tickets[t]? = some .unused ∧ s.phase = .owned snd ∧
    s' = { s with phase := .escrow t, tickets := s.tickets.set t (.pending snd rcv e g) } := by
  simp only [step] at h
  repeat' split at h
  all_goals (first | (cases h; done) | simp_all)

/-- An accepted `commit`/`abort` had a fresh capability and settled the in-flight pending
ticket (bound to the current epoch and generation); it gives the block to the receiver or
the sender and uses the ticket up. -/
theorem settle_ok {s s' : State} {t e g : Nat} {b : Bool} (h : settle s t e g b = .ok s') :
    e = s.epoch ∧ g = s.gen ∧ s.phase = .escrow t ∧
    ∃ snd rcv, s.tickets[t]? = some (.pending snd rcv s.epoch s.gen) ∧
      s' = { s with
        phase := .owned (if b then rcv else snd), tickets := s.tickets.set t .used } := by
  simp only [settle] at h
  repeat' split at h
  all_goals first
    | (cases h; done)
    | (simp_all; done)
    | (simp_all; exact ⟨_, _, ⟨rfl, rfl⟩, h.symm⟩)
    | (simp_all; exact ⟨_, _, rfl, h.symm⟩)

/-- A request that passed the owner check came from the owner with a fresh capability. -/
theorem ownerCheck_ok {cfg : Config} {s s' : State} {h e g : Nat} {k : Except Refusal State}
    (hk : ownerCheck cfg s h e g k = .ok s') :
    e = s.epoch ∧ g = s.gen ∧ h < cfg.holders ∧ s.phase = .owned h ∧ k = .ok s' := by
  simp only [ownerCheck] at hk
  repeat' split at hk
  all_goals (first | (cases hk; done) | simp_all)

/-- An accepted `read` came from the owner with a fresh capability, and changes nothing. -/
theorem read_ok {cfg : Config} {s s' : State} {h e g : Nat}
    (hs : step cfg s (.read h e g) = .ok s') :
    e = s.epoch ∧ g = s.gen ∧ h < cfg.holders ∧ s.phase = .owned h ∧ s' = s := by
  obtain ⟨h1, h2, h3, h4, h5⟩ := ownerCheck_ok (by simpa [step] using hs)
  cases h5
  exact ⟨h1, h2, h3, h4, rfl⟩

/-- An accepted `evict` came from the owner with a fresh capability, and frees the block. -/
theorem evict_ok {cfg : Config} {s s' : State} {h e g : Nat}
    (hs : step cfg s (.evict h e g) = .ok s') :
    e = s.epoch ∧ g = s.gen ∧ h < cfg.holders ∧ s.phase = .owned h ∧
      s' = { s with phase := .free } := by
  obtain ⟨h1, h2, h3, h4, h5⟩ := ownerCheck_ok (by simpa [step] using hs)
  cases h5
  exact ⟨h1, h2, h3, h4, rfl⟩

/-- An accepted `realloc` found the block free and below the generation bound; it gives the
block to the holder and bumps the generation. -/
theorem realloc_ok {cfg : Config} {s s' : State} {h e g : Nat}
    (hs : step cfg s (.realloc h e g) = .ok s') :
    e = s.epoch ∧ g = s.gen ∧ h < cfg.holders ∧ s.phase = .free ∧ s.gen < cfg.maxGen ∧
    s' = { s with phase := .owned h, gen := s.gen + 1 } := by
  simp only [step] at hs
  repeat' split at hs
  all_goals (first | (cases hs; done) | simp_all)

/-- An accepted `advance` was outside escrow and below the epoch bound; it bumps the epoch. -/
theorem advance_ok {cfg : Config} {s s' : State} {e : Nat}
    (hs : step cfg s (.advance e) = .ok s') :
    e = s.epoch ∧ (∀ t, s.phase ≠ .escrow t) ∧ s.epoch < cfg.maxEpoch ∧
    s' = { s with epoch := s.epoch + 1 } := by
  simp only [step] at hs
  repeat' split at hs
  all_goals (first | (cases hs; done) | simp_all)

/-! ## Headline theorems -/

/-- A refused request leaves the state exactly as it was. -/
theorem refusal_leaves_state_unchanged (cfg : Config) (s : State) (a : Action) (r : Refusal)
    (h : step cfg s a = .error r) : apply cfg s a = s := by
  simp [apply, h]

/-- A request presenting a stale epoch is refused with `staleEpoch`, whatever it asks. -/
theorem stale_epoch_refused (cfg : Config) (s : State) (a : Action)
    (h : a.epoch ≠ s.epoch) : step cfg s a = .error .staleEpoch := by
  cases a <;> simp_all [step, settle, ownerCheck, Action.epoch]

/-- A request presenting the current epoch but a stale generation is refused with `staleGen`. -/
theorem stale_gen_refused (cfg : Config) (s : State) (a : Action) (g : Nat)
    (hg : a.gen? = some g) (he : a.epoch = s.epoch) (hne : g ≠ s.gen) :
    step cfg s a = .error .staleGen := by
  cases a <;> simp_all [step, settle, ownerCheck, Action.epoch, Action.gen?]

/-- A stale epoch leaves the state unchanged. -/
theorem stale_epoch_state_unchanged (cfg : Config) (s : State) (a : Action)
    (h : a.epoch ≠ s.epoch) : apply cfg s a = s :=
  refusal_leaves_state_unchanged cfg s a _ (stale_epoch_refused cfg s a h)

/-- A stale generation leaves the state unchanged. -/
theorem stale_gen_state_unchanged (cfg : Config) (s : State) (a : Action) (g : Nat)
    (hg : a.gen? = some g) (he : a.epoch = s.epoch) (hne : g ≠ s.gen) : apply cfg s a = s :=
  refusal_leaves_state_unchanged cfg s a _ (stale_gen_refused cfg s a g hg he hne)

/-- Any request presenting a generation other than the current one is refused. -/
theorem wrong_gen_refused (cfg : Config) (s : State) (a : Action) (g : Nat)
    (hg : a.gen? = some g) (hne : g ≠ s.gen) : ∃ r, step cfg s a = .error r := by
  by_cases he : a.epoch = s.epoch
  · exact ⟨_, stale_gen_refused cfg s a g hg he hne⟩
  · exact ⟨_, stale_epoch_refused cfg s a he⟩

/-- Only the owner reads: a successful read was made by the owner with the current capability,
and it changes nothing. -/
theorem only_owner_reads (cfg : Config) (s s' : State) (h e g : Nat)
    (hr : step cfg s (.read h e g) = .ok s') :
    s.phase = .owned h ∧ e = s.epoch ∧ g = s.gen ∧ s' = s := by
  have := ownerCheck_ok (by simpa [step] using hr)
  obtain ⟨h1, h2, -, h4, h5⟩ := this
  cases h5
  exact ⟨h4, h1, h2, rfl⟩

/-- No read succeeds while the block is in escrow. -/
theorem no_read_in_escrow (cfg : Config) (s : State) (t h e g : Nat)
    (hs : s.phase = .escrow t) : ∃ r, step cfg s (.read h e g) = .error r := by
  cases hr : step cfg s (.read h e g) with
  | error r => exact ⟨r, rfl⟩
  | ok s' =>
    have := (only_owner_reads cfg s s' h e g hr).1
    rw [hs] at this
    cases this

/-- At most one live owner, in every state: two holders that can both read are the same. -/
theorem at_most_one_live_owner (cfg : Config) (s : State) (h₁ h₂ : Nat)
    (l₁ : LiveOwner cfg s h₁) (l₂ : LiveOwner cfg s h₂) : h₁ = h₂ := by
  obtain ⟨e₁, g₁, r₁⟩ := l₁
  obtain ⟨e₂, g₂, r₂⟩ := l₂
  have a := (only_owner_reads cfg s s h₁ e₁ g₁ r₁).1
  have b := (only_owner_reads cfg s s h₂ e₂ g₂ r₂).1
  rw [a] at b
  cases b
  rfl

/-- Every accepted step preserves the invariant. -/
theorem inv_step (cfg : Config) (s s' : State) (a : Action) (hi : Inv cfg s)
    (hs : step cfg s a = .ok s') : Inv cfg s' := by
  cases a with
  | begin t snd rcv e g =>
    obtain ⟨rfl, rfl, hsnd, hrcv, hne, hu, hph, rfl⟩ := begin_ok hs
    refine ⟨?_, ?_, ?_⟩
    · intro u a b c d hu'
      by_cases htu : t = u
      · subst htu
        rw [getElem?_set_self_of_eq_some hu] at hu'
        cases hu'
        exact ⟨rfl, rfl, rfl⟩
      · rw [List.getElem?_set_ne htu] at hu'
        have := (hi.pending_escrow u a b c d hu').1
        rw [hph] at this; cases this
    · intro u hu'
      cases hu'
      exact ⟨snd, rcv, getElem?_set_self_of_eq_some hu, hsnd, hrcv, hne⟩
    · intro h' hh; cases hh
  | commit t e g =>
    obtain ⟨rfl, rfl, hph, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
    obtain ⟨snd', rcv', hp', hsnd, hrcv, -⟩ := hi.escrow_pending t hph
    rw [hp] at hp'
    cases hp'
    refine ⟨?_, ?_, ?_⟩
    · intro u a b c d hu'
      by_cases htu : t = u
      · subst htu; rw [getElem?_set_self_of_eq_some hp] at hu'; cases hu'
      · rw [List.getElem?_set_ne htu] at hu'
        have := (hi.pending_escrow u a b c d hu').1
        rw [hph] at this; cases this; exact absurd rfl htu
    · intro u hu'; cases hu'
    · intro h' hh; cases hh; exact hrcv
  | abort t e g =>
    obtain ⟨rfl, rfl, hph, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
    obtain ⟨snd', rcv', hp', hsnd, hrcv, -⟩ := hi.escrow_pending t hph
    rw [hp] at hp'
    cases hp'
    refine ⟨?_, ?_, ?_⟩
    · intro u a b c d hu'
      by_cases htu : t = u
      · subst htu; rw [getElem?_set_self_of_eq_some hp] at hu'; cases hu'
      · rw [List.getElem?_set_ne htu] at hu'
        have := (hi.pending_escrow u a b c d hu').1
        rw [hph] at this; cases this; exact absurd rfl htu
    · intro u hu'; cases hu'
    · intro h' hh; cases hh; exact hsnd
  | read h e g =>
    obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs)
    cases hk
    exact hi
  | evict h e g =>
    obtain ⟨-, -, -, hph, hk⟩ := ownerCheck_ok (by simpa [step] using hs)
    cases hk
    refine ⟨?_, ?_, ?_⟩
    · intro u a b c d hu'
      have := (hi.pending_escrow u a b c d hu').1
      rw [hph] at this; cases this
    · intro u hu'; cases hu'
    · intro h' hh; cases hh
  | realloc h e g =>
    obtain ⟨-, -, hh, hph, -, rfl⟩ := realloc_ok hs
    refine ⟨?_, ?_, ?_⟩
    · intro u a b c d hu'
      have := (hi.pending_escrow u a b c d hu').1
      rw [hph] at this; cases this
    · intro u hu'; cases hu'
    · intro h' hh'; cases hh'; exact hh
  | advance e =>
    obtain ⟨-, hph, -, rfl⟩ := advance_ok hs
    refine ⟨?_, ?_, ?_⟩
    · intro u a b c d hu'
      have := (hi.pending_escrow u a b c d hu').1
      exact absurd this (hph u)
    · intro u hu'; exact absurd hu' (hph u)
    · intro h' hh'; exact hi.owned_valid h' hh'

/-- Every reachable state satisfies the invariant: a pending ticket exists exactly while the
block is in escrow under that ticket, bound to the current epoch and generation, between two
distinct known holders; an owner is a known holder. -/
theorem reachable_invariant (cfg : Config) (s : State) (h : Reach cfg s) : Inv cfg s := by
  induction h with
  | init =>
    refine ⟨?_, ?_, ?_⟩
    · intro u a b c d hu'
      simp [initial, List.getElem?_replicate] at hu'
    · intro u hu'; cases hu'
    · intro h' hh'; cases hh'
  | next a _ hs ih => exact inv_step cfg _ _ a ih hs

/-- Every reachable state has at most one live owner. -/
theorem reachable_at_most_one_live_owner (cfg : Config) (s : State) (_ : Reach cfg s)
    (h₁ h₂ : Nat) (l₁ : LiveOwner cfg s h₁) (l₂ : LiveOwner cfg s h₂) : h₁ = h₂ :=
  at_most_one_live_owner cfg s h₁ h₂ l₁ l₂

/-- In escrow nobody is a live owner. -/
theorem escrow_has_no_live_owner (cfg : Config) (s : State) (t h : Nat)
    (hs : s.phase = .escrow t) : ¬ LiveOwner cfg s h := by
  intro ⟨e, g, hr⟩
  obtain ⟨r, hr'⟩ := no_read_in_escrow cfg s t h e g hs
  rw [hr] at hr'
  cases hr'

/-- Commit hands ownership to the receiver named by the ticket, and uses the ticket up. -/
theorem commit_hands_to_receiver (cfg : Config) (s s' : State) (t e g : Nat)
    (hs : step cfg s (.commit t e g) = .ok s') :
    ∃ snd rcv, s.tickets[t]? = some (.pending snd rcv s.epoch s.gen) ∧
      s.phase = .escrow t ∧ s'.phase = .owned rcv ∧ s'.tickets[t]? = some .used ∧
      s'.epoch = s.epoch ∧ s'.gen = s.gen := by
  obtain ⟨-, -, hph, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
  exact ⟨snd, rcv, hp, hph, by simp, getElem?_set_self_of_eq_some hp, rfl, rfl⟩

/-- Abort returns ownership to the sender named by the ticket, and uses the ticket up. -/
theorem abort_returns_to_sender (cfg : Config) (s s' : State) (t e g : Nat)
    (hs : step cfg s (.abort t e g) = .ok s') :
    ∃ snd rcv, s.tickets[t]? = some (.pending snd rcv s.epoch s.gen) ∧
      s.phase = .escrow t ∧ s'.phase = .owned snd ∧ s'.tickets[t]? = some .used ∧
      s'.epoch = s.epoch ∧ s'.gen = s.gen := by
  obtain ⟨-, -, hph, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
  exact ⟨snd, rcv, hp, hph, by simp, getElem?_set_self_of_eq_some hp, rfl, rfl⟩

/-- A used ticket stays used across every accepted step. -/
theorem used_ticket_stays_used (cfg : Config) (s s' : State) (a : Action) (t : Nat)
    (hu : s.tickets[t]? = some .used) (hs : step cfg s a = .ok s') :
    s'.tickets[t]? = some .used := by
  cases a with
  | begin u snd rcv e g =>
    obtain ⟨-, -, -, -, -, hu', -, rfl⟩ := begin_ok hs
    by_cases htu : u = t
    · subst htu; rw [hu] at hu'; cases hu'
    · simp only; rw [List.getElem?_set_ne htu]; exact hu
  | commit u e g =>
    obtain ⟨-, -, -, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
    by_cases htu : u = t
    · subst htu; rw [hu] at hp; cases hp
    · simp only; rw [List.getElem?_set_ne htu]; exact hu
  | abort u e g =>
    obtain ⟨-, -, -, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
    by_cases htu : u = t
    · subst htu; rw [hu] at hp; cases hp
    · simp only; rw [List.getElem?_set_ne htu]; exact hu
  | read h e g =>
    obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs)
    cases hk; exact hu
  | evict h e g =>
    obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs)
    cases hk; exact hu
  | realloc h e g =>
    obtain ⟨-, -, -, -, -, rfl⟩ := realloc_ok hs
    exact hu
  | advance e =>
    obtain ⟨-, -, -, rfl⟩ := advance_ok hs
    exact hu

/-- A used ticket can be neither committed nor aborted. -/
theorem used_ticket_refused (cfg : Config) (s : State) (t e g : Nat)
    (hu : s.tickets[t]? = some .used) :
    (∃ r, step cfg s (.commit t e g) = .error r) ∧ (∃ r, step cfg s (.abort t e g) = .error r) := by
  constructor
  · cases hc : step cfg s (.commit t e g) with
    | error r => exact ⟨r, rfl⟩
    | ok s' =>
      obtain ⟨-, -, -, snd, rcv, hp, -⟩ := settle_ok (by simpa [step] using hc)
      rw [hu] at hp; cases hp
  · cases hc : step cfg s (.abort t e g) with
    | error r => exact ⟨r, rfl⟩
    | ok s' =>
      obtain ⟨-, -, -, snd, rcv, hp, -⟩ := settle_ok (by simpa [step] using hc)
      rw [hu] at hp; cases hp

/-- A used ticket stays used along every run. -/
theorem used_ticket_stays_used_run (cfg : Config) (s s' : State) (t : Nat)
    (hr : Run cfg s s') (hu : s.tickets[t]? = some .used) : s'.tickets[t]? = some .used := by
  induction hr with
  | refl => exact hu
  | next a _ hs ih => exact used_ticket_stays_used cfg _ _ a t ih hs

/-- A ticket is single-use: once a commit or an abort of ticket `t` succeeds, every later
commit or abort of `t`, after any run, is refused. -/
theorem ticket_single_use (cfg : Config) (s s' s'' : State) (t e g : Nat) (settleAct : Action)
    (hact : settleAct = .commit t e g ∨ settleAct = .abort t e g)
    (hs : step cfg s settleAct = .ok s') (hr : Run cfg s' s'') (e' g' : Nat) :
    (∃ r, step cfg s'' (.commit t e' g') = .error r) ∧
      (∃ r, step cfg s'' (.abort t e' g') = .error r) := by
  have hu : s'.tickets[t]? = some .used := by
    rcases hact with rfl | rfl
    · exact (commit_hands_to_receiver cfg s s' t e g hs).choose_spec.choose_spec.2.2.2.1
    · exact (abort_returns_to_sender cfg s s' t e g hs).choose_spec.choose_spec.2.2.2.1
  exact used_ticket_refused cfg s'' t e' g' (used_ticket_stays_used_run cfg s' s'' t hr hu)

/-- Commit hands ownership over exactly once: after a successful commit of `t`, a replay of the
same commit is refused as a used ticket (the epoch and generation it presents are still
current). -/
theorem commit_replay_refused (cfg : Config) (s s' : State) (t : Nat)
    (hs : step cfg s (.commit t s.epoch s.gen) = .ok s') :
    step cfg s' (.commit t s.epoch s.gen) = .error .ticketUsed := by
  obtain ⟨snd, rcv, -, -, -, hu, he, hg⟩ := commit_hands_to_receiver cfg s s' t _ _ hs
  simp [step, settle, hu, he, hg]

/-- The generation never decreases along an accepted step. -/
theorem gen_monotone (cfg : Config) (s s' : State) (a : Action) (hs : step cfg s a = .ok s') :
    s.gen ≤ s'.gen := by
  cases a with
  | begin => obtain ⟨-, -, -, -, -, -, -, rfl⟩ := begin_ok hs; exact Nat.le_refl _
  | commit =>
    obtain ⟨-, -, -, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs); exact Nat.le_refl _
  | abort =>
    obtain ⟨-, -, -, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs); exact Nat.le_refl _
  | read => obtain ⟨-, -, -, -, rfl⟩ := read_ok hs; exact Nat.le_refl _
  | evict => obtain ⟨-, -, -, -, rfl⟩ := evict_ok hs; exact Nat.le_refl _
  | realloc => obtain ⟨-, -, -, -, -, rfl⟩ := realloc_ok hs; exact Nat.le_succ _
  | advance => obtain ⟨-, -, -, rfl⟩ := advance_ok hs; exact Nat.le_refl _

/-- The epoch never decreases along an accepted step. -/
theorem epoch_monotone (cfg : Config) (s s' : State) (a : Action) (hs : step cfg s a = .ok s') :
    s.epoch ≤ s'.epoch := by
  cases a with
  | begin => obtain ⟨-, -, -, -, -, -, -, rfl⟩ := begin_ok hs; exact Nat.le_refl _
  | commit =>
    obtain ⟨-, -, -, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs); exact Nat.le_refl _
  | abort =>
    obtain ⟨-, -, -, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs); exact Nat.le_refl _
  | read => obtain ⟨-, -, -, -, rfl⟩ := read_ok hs; exact Nat.le_refl _
  | evict => obtain ⟨-, -, -, -, rfl⟩ := evict_ok hs; exact Nat.le_refl _
  | realloc => obtain ⟨-, -, -, -, -, rfl⟩ := realloc_ok hs; exact Nat.le_refl _
  | advance => obtain ⟨-, -, -, rfl⟩ := advance_ok hs; exact Nat.le_succ _

/-- The generation never decreases along a run. -/
theorem gen_monotone_run (cfg : Config) (s s' : State) (hr : Run cfg s s') : s.gen ≤ s'.gen := by
  induction hr with
  | refl => exact Nat.le_refl _
  | next a _ hs ih => exact Nat.le_trans ih (gen_monotone cfg _ _ a hs)

/-- Evict-and-reallocate makes every older capability dead: after a reallocation, in every
later state, any request presenting a generation of before the reallocation is refused. -/
theorem realloc_kills_older_capabilities (cfg : Config) (s s' s'' : State) (h e g : Nat)
    (hs : step cfg s (.realloc h e g) = .ok s') (hr : Run cfg s' s'')
    (a : Action) (g' : Nat) (hg : a.gen? = some g') (hold : g' ≤ s.gen) :
    ∃ r, step cfg s'' a = .error r := by
  obtain ⟨-, -, -, -, -, rfl⟩ := realloc_ok hs
  have := gen_monotone_run cfg _ _ hr
  exact wrong_gen_refused cfg s'' a g' hg (by simp at this; omega)

/-- Evict-and-reallocate makes every older ticket dead: in a reachable state, every ticket issued
before a reallocation can never again be committed or aborted. -/
theorem realloc_kills_older_tickets (cfg : Config) (s s' s'' : State) (h e g : Nat)
    (hreach : Reach cfg s) (hs : step cfg s (.realloc h e g) = .ok s') (hr : Run cfg s' s'')
    (t : Nat) (tk : Ticket) (htk : s.tickets[t]? = some tk) (hissued : tk ≠ .unused)
    (e' g' : Nat) :
    (∃ r, step cfg s'' (.commit t e' g') = .error r) ∧
      (∃ r, step cfg s'' (.abort t e' g') = .error r) := by
  have hi := reachable_invariant cfg s hreach
  obtain ⟨-, -, -, hph, -, rfl⟩ := realloc_ok hs
  have hu : s.tickets[t]? = some .used := by
    cases tk with
    | unused => exact absurd rfl hissued
    | used => exact htk
    | pending a b c d =>
      have := (hi.pending_escrow t a b c d htk).1
      rw [hph] at this; cases this
  exact used_ticket_refused cfg s'' t e' g' (used_ticket_stays_used_run cfg _ s'' t hr hu)

/-- Ownership is conserved: a step other than `evict`/`realloc` neither creates nor destroys
custody (the owner or the in-flight ticket). -/
theorem custody_conserved (cfg : Config) (s s' : State) (a : Action)
    (hs : step cfg s a = .ok s') (ha : a.changesCustody = false) :
    custody s'.phase = custody s.phase := by
  cases a with
  | begin =>
    obtain ⟨-, -, -, -, -, -, hph, rfl⟩ := begin_ok hs
    simp [custody, hph]
  | commit =>
    obtain ⟨-, -, hph, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs)
    simp [custody, hph]
  | abort =>
    obtain ⟨-, -, hph, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs)
    simp [custody, hph]
  | read => obtain ⟨-, -, -, -, rfl⟩ := read_ok hs; rfl
  | evict => simp [Action.changesCustody] at ha
  | realloc => simp [Action.changesCustody] at ha
  | advance => obtain ⟨-, -, -, rfl⟩ := advance_ok hs; rfl

/-- Ownership is never created from nothing: after an accepted step, a holder owns the block
only if it owned it before, or it received it by settling the in-flight ticket, or it got the
free block by `realloc`. -/
theorem owner_origin (cfg : Config) (s s' : State) (a : Action) (h : Nat)
    (hs : step cfg s a = .ok s') (ho : s'.phase = .owned h) :
    s.phase = .owned h ∨
      (∃ t e g, s.phase = .escrow t ∧ (a = .commit t e g ∨ a = .abort t e g)) ∨
      (∃ e g, s.phase = .free ∧ a = .realloc h e g) := by
  cases a with
  | begin => obtain ⟨-, -, -, -, -, -, -, rfl⟩ := begin_ok hs; cases ho
  | commit t e g =>
    obtain ⟨-, -, hph, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs)
    exact Or.inr (Or.inl ⟨t, e, g, hph, Or.inl rfl⟩)
  | abort t e g =>
    obtain ⟨-, -, hph, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs)
    exact Or.inr (Or.inl ⟨t, e, g, hph, Or.inr rfl⟩)
  | read => obtain ⟨-, -, -, -, rfl⟩ := read_ok hs; exact Or.inl ho
  | evict => obtain ⟨-, -, -, -, rfl⟩ := evict_ok hs; cases ho
  | realloc h' e g =>
    obtain ⟨-, -, -, hph, -, rfl⟩ := realloc_ok hs
    cases ho
    exact Or.inr (Or.inr ⟨e, g, hph, rfl⟩)
  | advance => obtain ⟨-, -, -, rfl⟩ := advance_ok hs; exact Or.inl ho

/-- Ownership is never duplicated by a transfer: while a ticket is in flight the sender has
lost the block (no live owner at all), and a settled transfer leaves exactly one owner. -/
theorem begin_revokes_sender (cfg : Config) (s s' : State) (t snd rcv e g : Nat)
    (hs : step cfg s (.begin t snd rcv e g) = .ok s') :
    s.phase = .owned snd ∧ s'.phase = .escrow t ∧ ∀ h, ¬ LiveOwner cfg s' h := by
  obtain ⟨-, -, -, -, -, -, hph, rfl⟩ := begin_ok hs
  exact ⟨hph, rfl, fun h => escrow_has_no_live_owner cfg _ t h rfl⟩

/-- Epoch and generation stay within their bounds in every reachable state. -/
theorem reachable_within_bounds (cfg : Config) (s : State) (h : Reach cfg s) :
    s.epoch ≤ cfg.maxEpoch ∧ s.gen ≤ cfg.maxGen := by
  induction h with
  | init => simp [initial]
  | next a _ hs ih =>
    cases a with
    | begin => obtain ⟨-, -, -, -, -, -, -, rfl⟩ := begin_ok hs; exact ih
    | commit =>
      obtain ⟨-, -, -, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs); exact ih
    | abort =>
      obtain ⟨-, -, -, -, -, -, rfl⟩ := settle_ok (by simpa [step] using hs); exact ih
    | read => obtain ⟨-, -, -, -, rfl⟩ := read_ok hs; exact ih
    | evict => obtain ⟨-, -, -, -, rfl⟩ := evict_ok hs; exact ih
    | realloc =>
      obtain ⟨-, -, -, -, hlt, rfl⟩ := realloc_ok hs; exact ⟨ih.1, hlt⟩
    | advance =>
      obtain ⟨-, -, hlt, rfl⟩ := advance_ok hs; exact ⟨hlt, ih.2⟩


/-- Whatever a run of requests does, it ends in a state reachable from where it started. -/
theorem runFrom_reach (cfg : Config) (s : State) (as : List Action) (k : Nat)
    (h : Reach cfg s) : Reach cfg (runFrom cfg s as k).1 := by
  induction as generalizing s k with
  | nil => exact h
  | cons a as ih =>
    simp only [runFrom]
    split
    · next s' hs => exact ih s' k (Reach.next a h hs)
    · exact ih s (k + 1) h

end KVCache.Kernel

end
