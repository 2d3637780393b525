module

/-!
# Single-owner state movement: the kernel and its theorems

A block of cached state (a KV-cache block) moves between *holders* (a prefill server, a decode
server, a host-memory tier, ...). The kernel below decides every request about that block.

* The block is in exactly one *phase*: `free`, `owned h` (holder `h` holds the one ownership
  capability), or `escrow t` (it is in flight under transfer ticket `t`; nobody may read it).
* A capability is bound to the kernel's current `(epoch, generation)`: every request presents the
  epoch and generation the caller believes in, and a request presenting an old one is refused.
* A *ticket* is issued by `begin` (naming sender, receiver, epoch and generation), and is then
  settled exactly once, by `commit` (ownership goes to the receiver) or by `abort` (it goes back to
  the sender). A settled ticket is `used` forever.
* `evict` frees the block, `realloc` hands a free block to a holder and bumps the generation (so
  every capability and ticket of the older generations is dead), `advance` bumps the epoch.

`step` is a total function: it returns the next state, or a refusal reason; a refusal carries no
state, so the caller keeps the state it had (`apply` makes that explicit). Bounds `maxEpoch` and
`maxGen` model finite counters: advancing past them is refused (`Refusal.bound`). Everything is
parametrised by a `Config` (any number of holders and tickets, any bounds), and every theorem
holds for every configuration. `Reach cfg` is the set of states reachable from `initial cfg`.

The model is a model of the protocol, not of a distributed system: no claim is made here about
networks, partitions, or hardware custody of the bytes.
-/

@[expose] public section

namespace KVCache.Kernel

/-- Domain parameters: the number of holders and tickets, and the counter bounds. -/
structure Config where
  holders : Nat
  tickets : Nat
  maxEpoch : Nat
  maxGen : Nat

/-- Where the block is. -/
inductive Phase where
  | free
  | owned (holder : Nat)
  | escrow (ticket : Nat)
  deriving DecidableEq

/-- The life of one transfer ticket. -/
inductive Ticket where
  | unused
  | pending (sender receiver epoch gen : Nat)
  | used
  deriving DecidableEq

/-- The kernel's whole state. -/
structure State where
  epoch : Nat
  gen : Nat
  phase : Phase
  tickets : List Ticket

/-- The requests. Every request presents the caller's epoch and (except `advance`) generation. -/
inductive Action where
  | begin (ticket sender receiver epoch gen : Nat)
  | commit (ticket epoch gen : Nat)
  | abort (ticket epoch gen : Nat)
  | read (holder epoch gen : Nat)
  | evict (holder epoch gen : Nat)
  | realloc (holder epoch gen : Nat)
  | advance (epoch : Nat)

/-- Why a request was refused. -/
inductive Refusal where
  | staleEpoch
  | staleGen
  | unknownHolder
  | selfTransfer
  | unknownTicket
  | ticketUsed
  | notOwner
  | inEscrow
  | notFree
  | ticketMismatch
  | bound
  deriving DecidableEq

/-- Ticket lookup (by structural recursion, no core list functions). -/
def getT : List Ticket → Nat → Option Ticket
  | [], _ => none
  | x :: _, 0 => some x
  | _ :: xs, n + 1 => getT xs n

/-- Ticket update. -/
def setT : List Ticket → Nat → Ticket → List Ticket
  | [], _, _ => []
  | _ :: xs, 0, y => y :: xs
  | x :: xs, n + 1, y => x :: setT xs n y

/-- `n` fresh tickets. -/
def freshTickets : Nat → List Ticket
  | 0 => []
  | n + 1 => .unused :: freshTickets n

/-- The initial state: epoch 0, generation 0, block free, all tickets unused. -/
def initial (cfg : Config) : State :=
  { epoch := 0, gen := 0, phase := .free, tickets := freshTickets cfg.tickets }

/-- Settle ticket `t` (shared by `commit` and `abort`); `toReceiver` picks the new owner. -/
def settle (s : State) (t e g : Nat) (toReceiver : Bool) : Except Refusal State :=
  if e = s.epoch then
    if g = s.gen then
      match getT s.tickets t with
      | none => .error .unknownTicket
      | some .unused => .error .unknownTicket
      | some .used => .error .ticketUsed
      | some (.pending snd rcv te tg) =>
        if te = s.epoch then
          if tg = s.gen then
            match s.phase with
            | .escrow u =>
              if u = t then
                .ok { s with
                  phase := .owned (if toReceiver then rcv else snd)
                  tickets := setT s.tickets t .used }
              else .error .ticketMismatch
            | _ => .error .ticketMismatch
          else .error .staleGen
        else .error .staleEpoch
    else .error .staleGen
  else .error .staleEpoch

/-- Checks shared by `read` and `evict`: the presenter must be the owner, with a fresh capability. -/
def ownerCheck (cfg : Config) (s : State) (h e g : Nat) (k : Except Refusal State) :
    Except Refusal State :=
  if e = s.epoch then
    if g = s.gen then
      if h < cfg.holders then
        match s.phase with
        | .escrow _ => .error .inEscrow
        | .free => .error .notOwner
        | .owned o => if o = h then k else .error .notOwner
      else .error .unknownHolder
    else .error .staleGen
  else .error .staleEpoch

/-- One kernel step: the next state, or why the request is refused. -/
def step (cfg : Config) (s : State) : Action → Except Refusal State
  | .begin t snd rcv e g =>
    if e = s.epoch then
      if g = s.gen then
        if snd < cfg.holders then
          if rcv < cfg.holders then
            if snd = rcv then .error .selfTransfer
            else
              match getT s.tickets t with
              | none => .error .unknownTicket
              | some .used => .error .ticketUsed
              | some (.pending _ _ _ _) => .error .ticketUsed
              | some .unused =>
                match s.phase with
                | .escrow _ => .error .inEscrow
                | .free => .error .notOwner
                | .owned o =>
                  if o = snd then
                    .ok { s with
                      phase := .escrow t
                      tickets := setT s.tickets t (.pending snd rcv e g) }
                  else .error .notOwner
          else .error .unknownHolder
        else .error .unknownHolder
      else .error .staleGen
    else .error .staleEpoch
  | .commit t e g => settle s t e g true
  | .abort t e g => settle s t e g false
  | .read h e g => ownerCheck cfg s h e g (.ok s)
  | .evict h e g => ownerCheck cfg s h e g (.ok { s with phase := .free })
  | .realloc h e g =>
    if e = s.epoch then
      if g = s.gen then
        if h < cfg.holders then
          match s.phase with
          | .free =>
            if s.gen < cfg.maxGen then .ok { s with phase := .owned h, gen := s.gen + 1 }
            else .error .bound
          | _ => .error .notFree
        else .error .unknownHolder
      else .error .staleGen
    else .error .staleEpoch
  | .advance e =>
    if e = s.epoch then
      match s.phase with
      | .escrow _ => .error .inEscrow
      | _ => if s.epoch < cfg.maxEpoch then .ok { s with epoch := s.epoch + 1 } else .error .bound
    else .error .staleEpoch

/-- The state after a request: the successor, or the same state when refused. -/
def apply (cfg : Config) (s : State) (a : Action) : State :=
  match step cfg s a with
  | .ok s' => s'
  | .error _ => s

/-- The epoch a request presents. -/
def Action.epoch : Action → Nat
  | .begin _ _ _ e _ => e
  | .commit _ e _ => e
  | .abort _ e _ => e
  | .read _ e _ => e
  | .evict _ e _ => e
  | .realloc _ e _ => e
  | .advance e => e

/-- The generation a request presents (`advance` presents none). -/
def Action.gen? : Action → Option Nat
  | .begin _ _ _ _ g => some g
  | .commit _ _ g => some g
  | .abort _ _ g => some g
  | .read _ _ g => some g
  | .evict _ _ g => some g
  | .realloc _ _ g => some g
  | .advance _ => none

/-- States reachable from the initial state by accepted steps. -/
inductive Reach (cfg : Config) : State → Prop
  | init : Reach cfg (initial cfg)
  | next {s s' : State} (a : Action) : Reach cfg s → step cfg s a = .ok s' → Reach cfg s'

/-- `Run cfg s s'`: `s'` follows from `s` by zero or more accepted steps. -/
inductive Run (cfg : Config) : State → State → Prop
  | refl (s : State) : Run cfg s s
  | next {s s' s'' : State} (a : Action) : Run cfg s s' → step cfg s' a = .ok s'' → Run cfg s s''

/-- Holder `h` can read in `s` with some capability: it is a live owner. -/
def LiveOwner (cfg : Config) (s : State) (h : Nat) : Prop :=
  ∃ e g, step cfg s (.read h e g) = .ok s

/-- How many custodians the block has: the owner, or the in-flight ticket. -/
def custody : Phase → Nat
  | .free => 0
  | .owned _ => 1
  | .escrow _ => 1

/-- The requests that may change custody on purpose: `evict` and `realloc`. -/
def Action.changesCustody : Action → Bool
  | .evict _ _ _ => true
  | .realloc _ _ _ => true
  | _ => false

/-- The reachable-state invariant. -/
structure Inv (cfg : Config) (s : State) : Prop where
  pending_escrow : ∀ t snd rcv e g, getT s.tickets t = some (.pending snd rcv e g) →
    s.phase = .escrow t ∧ e = s.epoch ∧ g = s.gen
  escrow_pending : ∀ t, s.phase = .escrow t →
    ∃ snd rcv, getT s.tickets t = some (.pending snd rcv s.epoch s.gen) ∧
      snd < cfg.holders ∧ rcv < cfg.holders ∧ snd ≠ rcv
  owned_valid : ∀ h, s.phase = .owned h → h < cfg.holders

/-! ## List lemmas -/

/-- Updating a ticket that exists makes the lookup return the new value. -/
theorem getT_setT_same {l : List Ticket} {t : Nat} {x y : Ticket} (h : getT l t = some x) :
    getT (setT l t y) t = some y := by
  induction l generalizing t with
  | nil => simp [getT] at h
  | cons z zs ih =>
    cases t with
    | zero => simp [setT, getT]
    | succ n => simp only [setT, getT] at h ⊢; exact ih h

/-- Updating one ticket leaves every other ticket's lookup unchanged. -/
theorem getT_setT_ne {l : List Ticket} {t u : Nat} {y : Ticket} (hne : t ≠ u) :
    getT (setT l t y) u = getT l u := by
  induction l generalizing t u with
  | nil => simp [setT]
  | cons z zs ih =>
    cases t with
    | zero => cases u with
      | zero => exact absurd rfl hne
      | succ m => simp [setT, getT]
    | succ n => cases u with
      | zero => simp [setT, getT]
      | succ m => simp only [setT, getT]; exact ih (fun h => hne (by omega))

/-- Every ticket of a fresh ticket book is unused. -/
theorem getT_freshTickets {n t : Nat} {x : Ticket} (h : getT (freshTickets n) t = some x) :
    x = .unused := by
  induction n generalizing t with
  | zero => simp [freshTickets, getT] at h
  | succ n ih =>
    cases t with
    | zero => simp [freshTickets, getT] at h; exact h.symm
    | succ m => simp only [freshTickets, getT] at h; exact ih h

/-! ## What each accepted step does -/

/-- An accepted `begin` had a fresh capability, two distinct known holders, an unused ticket
and the sender as owner; it moves the block to escrow and makes the ticket pending. -/
theorem begin_ok {cfg : Config} {s s' : State} {t snd rcv e g : Nat}
    (h : step cfg s (.begin t snd rcv e g) = .ok s') :
    e = s.epoch ∧ g = s.gen ∧ snd < cfg.holders ∧ rcv < cfg.holders ∧ snd ≠ rcv ∧
    getT s.tickets t = some .unused ∧ s.phase = .owned snd ∧
    s' = { s with phase := .escrow t, tickets := setT s.tickets t (.pending snd rcv e g) } := by
  simp only [step] at h
  repeat' split at h
  all_goals (first | (cases h; done) | simp_all)

/-- An accepted `commit`/`abort` had a fresh capability and settled the in-flight pending
ticket (bound to the current epoch and generation); it gives the block to the receiver or
the sender and uses the ticket up. -/
theorem settle_ok {s s' : State} {t e g : Nat} {b : Bool} (h : settle s t e g b = .ok s') :
    e = s.epoch ∧ g = s.gen ∧ s.phase = .escrow t ∧
    ∃ snd rcv, getT s.tickets t = some (.pending snd rcv s.epoch s.gen) ∧
      s' = { s with phase := .owned (if b then rcv else snd), tickets := setT s.tickets t .used } := by
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
        rw [getT_setT_same hu] at hu'
        cases hu'
        exact ⟨rfl, rfl, rfl⟩
      · rw [getT_setT_ne htu] at hu'
        have := (hi.pending_escrow u a b c d hu').1
        rw [hph] at this; cases this
    · intro u hu'
      cases hu'
      exact ⟨snd, rcv, getT_setT_same hu, hsnd, hrcv, hne⟩
    · intro h' hh; cases hh
  | commit t e g =>
    obtain ⟨rfl, rfl, hph, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
    obtain ⟨snd', rcv', hp', hsnd, hrcv, -⟩ := hi.escrow_pending t hph
    rw [hp] at hp'
    cases hp'
    refine ⟨?_, ?_, ?_⟩
    · intro u a b c d hu'
      by_cases htu : t = u
      · subst htu; rw [getT_setT_same hp] at hu'; cases hu'
      · rw [getT_setT_ne htu] at hu'
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
      · subst htu; rw [getT_setT_same hp] at hu'; cases hu'
      · rw [getT_setT_ne htu] at hu'
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
      have := getT_freshTickets hu'
      cases this
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
    ∃ snd rcv, getT s.tickets t = some (.pending snd rcv s.epoch s.gen) ∧
      s.phase = .escrow t ∧ s'.phase = .owned rcv ∧ getT s'.tickets t = some .used ∧
      s'.epoch = s.epoch ∧ s'.gen = s.gen := by
  obtain ⟨-, -, hph, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
  exact ⟨snd, rcv, hp, hph, by simp, getT_setT_same hp, rfl, rfl⟩

/-- Abort returns ownership to the sender named by the ticket, and uses the ticket up. -/
theorem abort_returns_to_sender (cfg : Config) (s s' : State) (t e g : Nat)
    (hs : step cfg s (.abort t e g) = .ok s') :
    ∃ snd rcv, getT s.tickets t = some (.pending snd rcv s.epoch s.gen) ∧
      s.phase = .escrow t ∧ s'.phase = .owned snd ∧ getT s'.tickets t = some .used ∧
      s'.epoch = s.epoch ∧ s'.gen = s.gen := by
  obtain ⟨-, -, hph, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
  exact ⟨snd, rcv, hp, hph, by simp, getT_setT_same hp, rfl, rfl⟩

/-- A used ticket stays used across every accepted step. -/
theorem used_ticket_stays_used (cfg : Config) (s s' : State) (a : Action) (t : Nat)
    (hu : getT s.tickets t = some .used) (hs : step cfg s a = .ok s') :
    getT s'.tickets t = some .used := by
  cases a with
  | begin u snd rcv e g =>
    obtain ⟨-, -, -, -, -, hu', -, rfl⟩ := begin_ok hs
    by_cases htu : u = t
    · subst htu; rw [hu] at hu'; cases hu'
    · simp only; rw [getT_setT_ne htu]; exact hu
  | commit u e g =>
    obtain ⟨-, -, -, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
    by_cases htu : u = t
    · subst htu; rw [hu] at hp; cases hp
    · simp only; rw [getT_setT_ne htu]; exact hu
  | abort u e g =>
    obtain ⟨-, -, -, snd, rcv, hp, rfl⟩ := settle_ok (by simpa [step] using hs)
    by_cases htu : u = t
    · subst htu; rw [hu] at hp; cases hp
    · simp only; rw [getT_setT_ne htu]; exact hu
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
    (hu : getT s.tickets t = some .used) :
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
    (hr : Run cfg s s') (hu : getT s.tickets t = some .used) : getT s'.tickets t = some .used := by
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
  have hu : getT s'.tickets t = some .used := by
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
  | read => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; exact Nat.le_refl _
  | evict => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; exact Nat.le_refl _
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
  | read => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; exact Nat.le_refl _
  | evict => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; exact Nat.le_refl _
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
    (t : Nat) (tk : Ticket) (htk : getT s.tickets t = some tk) (hissued : tk ≠ .unused)
    (e' g' : Nat) :
    (∃ r, step cfg s'' (.commit t e' g') = .error r) ∧
      (∃ r, step cfg s'' (.abort t e' g') = .error r) := by
  have hi := reachable_invariant cfg s hreach
  obtain ⟨-, -, -, hph, -, rfl⟩ := realloc_ok hs
  have hu : getT s.tickets t = some .used := by
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
  | read => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; rfl
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
  | read => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; exact Or.inl ho
  | evict => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; cases ho
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
    | read => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; exact ih
    | evict => obtain ⟨-, -, -, -, hk⟩ := ownerCheck_ok (by simpa [step] using hs); cases hk; exact ih
    | realloc =>
      obtain ⟨-, -, -, -, hlt, rfl⟩ := realloc_ok hs; exact ⟨ih.1, hlt⟩
    | advance =>
      obtain ⟨-, -, hlt, rfl⟩ := advance_ok hs; exact ⟨hlt, ih.2⟩


/-- Running a list of requests from `s`: the final state and how many requests were refused
(a refused request leaves the state as it was). -/
def runFrom (cfg : Config) : State → List Action → Nat → State × Nat
  | s, [], k => (s, k)
  | s, a :: as, k =>
    match step cfg s a with
    | .ok s' => runFrom cfg s' as k
    | .error _ => runFrom cfg s as (k + 1)

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

/-! ## Finite-domain checkers (used by the generated agreement table `Proofs.Kernel.Table`)

A finite domain fixes a configuration. The generated table lists the domain's request alphabet
and, for each listed state, the answer the Python reference (`pytools/kernelref.py`) gives to
every request of the alphabet; `checkRows` recomputes every answer with `step`. Successor
states are compared through a mixed-radix code (`encState`), which the reference computes with
its own code. -/

/-- A finite domain. -/
structure Dom where
  holders : Nat
  tickets : Nat
  maxEpoch : Nat
  maxGen : Nat

/-- The configuration of a domain. -/
def Dom.cfg (d : Dom) : Config :=
  { holders := d.holders, tickets := d.tickets, maxEpoch := d.maxEpoch, maxGen := d.maxGen }

/-- Number of phase codes. -/
def Dom.nPhase (d : Dom) : Nat := 1 + d.holders + d.tickets

/-- Number of ticket codes. -/
def Dom.nTicket (d : Dom) : Nat := 2 + d.holders * d.holders * (d.maxEpoch + 1) * (d.maxGen + 1)

/-- Phase code: free 0, owned `h` is `1 + h`, escrow `t` is `1 + holders + t`. -/
def encPhase (d : Dom) : Phase → Nat
  | .free => 0
  | .owned h => 1 + h
  | .escrow t => 1 + d.holders + t

/-- Ticket code: unused 0, used 1, pending in mixed radix from 2. -/
def encTicket (d : Dom) : Ticket → Nat
  | .unused => 0
  | .used => 1
  | .pending a b e g => 2 + ((a * d.holders + b) * (d.maxEpoch + 1) + e) * (d.maxGen + 1) + g

/-- Append ticket codes to an accumulated code (first ticket most significant). -/
def encTickets (d : Dom) : List Ticket → Nat → Nat
  | [], acc => acc
  | x :: xs, acc => encTickets d xs (acc * d.nTicket + encTicket d x)

/-- State code: mixed radix (epoch, generation, phase, ticket 0, ticket 1, ...). -/
def encState (d : Dom) (s : State) : Nat :=
  encTickets d s.tickets ((s.epoch * (d.maxGen + 1) + s.gen) * d.nPhase + encPhase d s.phase)

/-- Refusal code (the reference's order). -/
def refusalCode : Refusal → Nat
  | .staleEpoch => 0
  | .staleGen => 1
  | .unknownHolder => 2
  | .selfTransfer => 3
  | .unknownTicket => 4
  | .ticketUsed => 5
  | .notOwner => 6
  | .inEscrow => 7
  | .notFree => 8
  | .ticketMismatch => 9
  | .bound => 10

/-- One table row: a state; the answer digit of request `i` of the alphabet at `16 ^ i` (a
refusal code, or 15 for accepted); the codes of the successors of the accepted requests, in
order. -/
structure Row where
  state : State
  digits : Nat
  successors : List Nat

/-- Check the requests `as` on state `s` against the digits and successor codes. -/
def checkActions (d : Dom) (s : State) : List Action → Nat → List Nat → Bool
  | [], digits, succ =>
    match succ with
    | [] => Nat.beq digits 0
    | _ :: _ => false
  | a :: as, digits, succ =>
    match step d.cfg s a with
    | .error r =>
      Nat.beq (digits % 16) (refusalCode r) && checkActions d s as (digits / 16) succ
    | .ok s' =>
      match succ with
      | [] => false
      | c :: cs =>
        Nat.beq (digits % 16) 15 && Nat.beq (encState d s') c &&
          checkActions d s as (digits / 16) cs

/-- Check every row against every request of the alphabet. -/
def checkRows (d : Dom) (alphabet : List Action) : List Row → Bool
  | [] => true
  | r :: rs => checkActions d r.state alphabet r.digits r.successors && checkRows d alphabet rs

/-- A workflow of the bench: its requests, the code of the final state, the refusal count. -/
structure Workflow where
  actions : List Action
  finalCode : Nat
  refusals : Nat

/-- Check every workflow by running `step` from the initial state. -/
def checkWorkflows (d : Dom) : List Workflow → Bool
  | [] => true
  | w :: ws =>
    Nat.beq (encState d (runFrom d.cfg (initial d.cfg) w.actions 0).1) w.finalCode &&
      Nat.beq (runFrom d.cfg (initial d.cfg) w.actions 0).2 w.refusals && checkWorkflows d ws

/-! ## Self-test of the checkers on a tiny domain

Generated by `pytools.kernelref.render_self_test` and carried here verbatim (a test checks it is
in sync), so that the module defining the checkers also exercises them exhaustively once. -/

/-- The tiny self-test domain (2 holders, 1 ticket, epoch 0..0, generations 0..1). -/
def tinyDom : Dom := { holders := 2, tickets := 1, maxEpoch := 0, maxGen := 1 }

/-- The request alphabet of the tiny domain. -/
def tinyAlphabet : List Action := [
  (.begin 0 0 0 0 0), (.begin 0 0 0 0 1), (.begin 0 0 1 0 0), (.begin 0 0 1 0 1), (.begin 0 0 2 0 0), (.begin 0 0 2 0 1), (.begin 0 1 0 0 0), (.begin 0 1 0 0 1),
  (.begin 0 1 1 0 0), (.begin 0 1 1 0 1), (.begin 0 1 2 0 0), (.begin 0 1 2 0 1), (.begin 0 2 0 0 0), (.begin 0 2 0 0 1), (.begin 0 2 1 0 0), (.begin 0 2 1 0 1),
  (.begin 0 2 2 0 0), (.begin 0 2 2 0 1), (.begin 1 0 0 0 0), (.begin 1 0 0 0 1), (.begin 1 0 1 0 0), (.begin 1 0 1 0 1), (.begin 1 0 2 0 0), (.begin 1 0 2 0 1),
  (.begin 1 1 0 0 0), (.begin 1 1 0 0 1), (.begin 1 1 1 0 0), (.begin 1 1 1 0 1), (.begin 1 1 2 0 0), (.begin 1 1 2 0 1), (.begin 1 2 0 0 0), (.begin 1 2 0 0 1),
  (.begin 1 2 1 0 0), (.begin 1 2 1 0 1), (.begin 1 2 2 0 0), (.begin 1 2 2 0 1), (.commit 0 0 0), (.commit 0 0 1), (.commit 1 0 0), (.commit 1 0 1),
  (.abort 0 0 0), (.abort 0 0 1), (.abort 1 0 0), (.abort 1 0 1), (.read 0 0 0), (.read 0 0 1), (.read 1 0 0), (.read 1 0 1),
  (.read 2 0 0), (.read 2 0 1), (.evict 0 0 0), (.evict 0 0 1), (.evict 1 0 0), (.evict 1 0 1), (.evict 2 0 0), (.evict 2 0 1),
  (.realloc 0 0 0), (.realloc 0 0 1), (.realloc 1 0 0), (.realloc 1 0 1), (.realloc 2 0 0), (.realloc 2 0 1), (.advance 0)
]

/-- Every well-formed state of the tiny domain with the reference's answers. -/
def tinyRows : List Row := [
  ⟨⟨0, 0, .free, [.unused]⟩, 0xA121F1F12161612161614141414121212121314121413121212121316121613, [50, 60]⟩,
  ⟨⟨0, 0, .free, [.used]⟩, 0xA121F1F12161612161614151415121212121314121413121212121315121513, [51, 61]⟩,
  ⟨⟨0, 0, .owned 0, [.unused]⟩, 0xA12181812161F12161F14141414121212121314121413121212121316121F13, [34, 10, 0]⟩,
  ⟨⟨0, 0, .owned 0, [.used]⟩, 0xA12181812161F12161F14151415121212121314121413121212121315121513, [11, 1]⟩,
  ⟨⟨0, 0, .owned 1, [.unused]⟩, 0xA121818121F16121F161414141412121212131412141312121212131F121613, [36, 20, 0]⟩,
  ⟨⟨0, 0, .owned 1, [.used]⟩, 0xA121818121F16121F1614151415121212121314121413121212121315121513, [21, 1]⟩,
  ⟨⟨0, 0, .escrow 0, [.pending 0 1 0 0]⟩, 0x7121818121717121717141F141F121212121314121413121212121315121513, [21, 11]⟩,
  ⟨⟨0, 0, .escrow 0, [.pending 1 0 0 0]⟩, 0x7121818121717121717141F141F121212121314121413121212121315121513, [11, 21]⟩,
  ⟨⟨0, 1, .free, [.unused]⟩, 0xA21A1A121616121616141414141212121213141214131212121213161216131, []⟩,
  ⟨⟨0, 1, .free, [.used]⟩, 0xA21A1A121616121616141514151212121213141214131212121213151215131, []⟩,
  ⟨⟨0, 1, .owned 0, [.unused]⟩, 0xA2181812161F12161F14141414121212121314121413121212121316121F131, [75, 50, 40]⟩,
  ⟨⟨0, 1, .owned 0, [.used]⟩, 0xA2181812161F12161F141514151212121213141214131212121213151215131, [51, 41]⟩,
  ⟨⟨0, 1, .owned 1, [.unused]⟩, 0xA21818121F16121F161414141412121212131412141312121212131F1216131, [77, 60, 40]⟩,
  ⟨⟨0, 1, .owned 1, [.used]⟩, 0xA21818121F16121F16141514151212121213141214131212121213151215131, [61, 41]⟩,
  ⟨⟨0, 1, .escrow 0, [.pending 0 1 0 1]⟩, 0x721818121717121717141F141F1212121213141214131212121213151215131, [61, 51]⟩,
  ⟨⟨0, 1, .escrow 0, [.pending 1 0 0 1]⟩, 0x721818121717121717141F141F1212121213141214131212121213151215131, [51, 61]⟩
]

/-- On every case of the tiny domain, `step` gives the Python reference's answer. -/
theorem tiny_domain_agrees : checkRows tinyDom tinyAlphabet tinyRows = true := by
  decide +kernel

end KVCache.Kernel

end
