module

public import Proofs.Kernel.Provenance

/-!
# Single-owner state movement: tagged tokens, presenter not trusted

A variant of the system of `Proofs.Kernel.Model` without an authenticated presenter: anybody
(any holder, the network) may send any request naming any presenter. Instead, every token the
kernel issues carries a *tag* the kernel computes with a key only it holds, over the token and
the holder it is issued to: `mac q τ`. The MAC is abstract (any function `mac`); its
unforgeability is the model's one assumption, stated as the adversary's power (`Unforged`): a
request may carry the right tag for a token and presenter only if the kernel issued that token
to that presenter (the adversary knows every tag the kernel ever sent, and can compute no
other). The variant kernel (`mstep`) first checks the tag against the named presenter, then
decides as the ownership kernel does (`step`).

**Custody as provenance without `sentBy`** (`mac_accepted_use_by_custodian`): in every logged
run of the variant from its initial state, whenever the kernel accepts a delivered read, evict
or begin of block `b`, the presenter it names is the custodian of `b` in the run's history
(`Proofs.Kernel.Provenance`: the allocator of the current generation followed through every
committed transfer), and the capability it presents is one the kernel issued to that holder.
So a use is accepted only with the custodian's own credential: by the custodian, or by whoever
the custodian gave its credential to (a bearer credential: the model does not forbid a holder
to hand its own tag to someone else).
-/

@[expose] public section

namespace KVCache.Kernel

/-! ## The variant kernel -/

/-- The holder a request names as its presenter (the kernel's own requests present no token:
0). -/
def Req.presenter : Req → Nat
  | .read p _ | .evict p _ | .begin p _ _ | .commit p _ | .abort p _ | .alloc p _ => p
  | .advance | .resend _ => 0

/-- The kernel's tag check: the tag `g` a request carries is the MAC of the token it presents,
issued to the presenter it names (a request presenting no token passes). -/
def Req.tagged (mac : Nat → Tok → Nat) (g : Nat) : Req → Bool
  | .read p c | .evict p c | .begin p c _ => Nat.beq g (mac p (.cap c))
  | .commit p t | .abort p t => Nat.beq g (mac p (.tkt t))
  | .alloc _ _ | .advance | .resend _ => true

-- noncomputable: calls `step`, which has no compiled code here.
/-- The variant kernel's step on a request carrying tag `g`: a wrong tag is refused (no holder
is established as presenter), state unchanged and nothing sent; a right tag is decided by the
ownership kernel. -/
noncomputable def mstep (cfg : Config) (mac : Nat → Tok → Nat) (k : Kern) (r : Req) (g : Nat) :
    Out :=
  bif r.tagged mac g then step cfg k r else refuse k .unknownPresenter

/-- **A wrong tag is refused and changes nothing.** -/
theorem wrong_tag_refused (cfg : Config) (mac : Nat → Tok → Nat) (k : Kern) (r : Req) (g : Nat)
    (h : r.tagged mac g = false) :
    (mstep cfg mac k r g).verdict = .no .unknownPresenter ∧ (mstep cfg mac k r g).kern = k ∧
      (mstep cfg mac k r g).sends = [] := by
  simp [mstep, h, refuse]

/-- A right tag is decided by the ownership kernel. -/
theorem right_tag_step (cfg : Config) (mac : Nat → Tok → Nat) (k : Kern) (r : Req) (g : Nat)
    (h : r.tagged mac g = true) : mstep cfg mac k r g = step cfg k r := by
  simp [mstep, h]

/-! ## The variant system: no authenticated presenter -/

/-- The (addressee, token) pairs a message of the kernel issues. -/
def Msg.addressed : Msg → List (Nat × Tok)
  | .req _ => []
  | .grant q c => [(q, .cap c)]
  | .ticket q t => [(q, .tkt t)]

/-- The variant system: the kernel, the tagged requests in flight, and every (addressee,
token) pair the kernel has tagged and sent (the adversary knows all their tags). -/
structure MSys where
  /-- The kernel's state. -/
  kern : Kern
  /-- The requests in flight, each with its tag. -/
  net : List (Req × Nat)
  /-- Every token the kernel has issued, with its addressee. -/
  issued : List (Nat × Tok)

-- noncomputable: calls `Kern.init`, which has no compiled code here.
/-- The initial variant system: the initial kernel, nothing in flight, nothing issued. -/
noncomputable def MSys.init (cfg : Config) : MSys := ⟨Kern.init cfg, [], []⟩

/-- The adversary's power over tags (MAC unforgeability): a request carries the right tag for
a token it presents only if the kernel issued that token to the presenter the request names. -/
def Unforged (mac : Nat → Tok → Nat) (issued : List (Nat × Tok)) (r : Req) (g : Nat) : Prop :=
  ∀ τ ∈ r.toks, g = mac r.presenter τ → (r.presenter, τ) ∈ issued

-- noncomputable: calls `mstep`, which has no compiled code here.
/-- The variant kernel decides request `r` with tag `g`: its new state, and what it sends
recorded as issued. -/
noncomputable def MSys.exec (cfg : Config) (mac : Nat → Tok → Nat) (S : MSys) (r : Req)
    (g : Nat) : MSys :=
  ⟨(mstep cfg mac S.kern r g).kern, S.net,
    (mstep cfg mac S.kern r g).sends.flatMap Msg.addressed ++ S.issued⟩

/-- The decisions a delivered request adds to the log: the ownership kernel's decision when the
tag is right; none when the variant kernel refuses it at the tag check. -/
def tagLog (mac : Nat → Tok → Nat) (r : Req) (g : Nat) (v : Verdict) : List Decision :=
  bif r.tagged mac g then [(r, v)] else []

/-- One step of the variant system with the decisions it logs. Anybody sends any request,
naming any presenter, with any tag it can produce (`Unforged`); the network delivers,
duplicates, drops and reorders. -/
inductive MLStep (cfg : Config) (mac : Nat → Tok → Nat) : MSys → List Decision → MSys → Prop
  /-- Anybody sends request `r` with tag `g` (any presenter named). -/
  | send {S : MSys} (r : Req) (g : Nat) : r.internal = false → Unforged mac S.issued r g →
      MLStep cfg mac S [] { S with net := (r, g) :: S.net }
  /-- The kernel acts on its own. -/
  | tick {S : MSys} (r : Req) : r.internal = true →
      MLStep cfg mac S [(r, (step cfg S.kern r).verdict)] (S.exec cfg mac r 0)
  /-- The network delivers a request: the variant kernel decides it. -/
  | deliver {S : MSys} (l₁ l₂ : List (Req × Nat)) (r : Req) (g : Nat) :
      S.net = l₁ ++ (r, g) :: l₂ →
      MLStep cfg mac S (tagLog mac r g (step cfg S.kern r).verdict)
        (MSys.exec cfg mac { S with net := l₁ ++ l₂ } r g)
  /-- The network duplicates a request in flight. -/
  | dup {S : MSys} (l₁ l₂ : List (Req × Nat)) (m : Req × Nat) : S.net = l₁ ++ m :: l₂ →
      MLStep cfg mac S [] { S with net := m :: S.net }
  /-- The network drops a request in flight. -/
  | drop {S : MSys} (l₁ l₂ : List (Req × Nat)) (m : Req × Nat) : S.net = l₁ ++ m :: l₂ →
      MLStep cfg mac S [] { S with net := l₁ ++ l₂ }

/-- Logged runs of the variant system. -/
inductive MLRun (cfg : Config) (mac : Nat → Tok → Nat) : MSys → List Decision → MSys → Prop
  /-- No step. -/
  | refl (S : MSys) : MLRun cfg mac S [] S
  /-- One more step. -/
  | step {S S' S'' : MSys} {l l' : List Decision} :
      MLRun cfg mac S l S' → MLStep cfg mac S' l' S'' → MLRun cfg mac S (l ++ l') S''

/-! ## The variant's runs replay the ownership kernel -/

/-- An internal request presents no token, so its tag check passes. -/
theorem tagged_internal (mac : Nat → Tok → Nat) {r : Req} (h : r.internal = true) (g : Nat) :
    r.tagged mac g = true := by
  cases r <;> simp_all [Req.internal, Req.tagged]

/-- A logged step of the variant moves the kernel by replaying its log, which is faithful. -/
theorem MLStep.replays {cfg : Config} {mac : Nat → Tok → Nat} {S S' : MSys}
    {l : List Decision} (h : MLStep cfg mac S l S') :
    S'.kern = replay cfg S.kern l ∧ Faithful cfg S.kern l := by
  cases h with
  | send => exact ⟨rfl, trivial⟩
  | tick r hr =>
    show (mstep cfg mac S.kern r 0).kern = _ ∧ _
    rw [right_tag_step cfg mac S.kern r 0 (tagged_internal mac hr 0)]
    exact ⟨rfl, rfl, trivial⟩
  | deliver l₁ l₂ r g _ =>
    show (mstep cfg mac S.kern r g).kern = _ ∧ _
    cases ht : r.tagged mac g with
    | true =>
      rw [right_tag_step cfg mac S.kern r g ht]
      simp only [tagLog, ht, cond_true]
      exact ⟨rfl, rfl, trivial⟩
    | false =>
      rw [(wrong_tag_refused cfg mac S.kern r g ht).2.1]
      simp only [tagLog, ht, cond_false]
      exact ⟨rfl, trivial⟩
  | dup => exact ⟨rfl, trivial⟩
  | drop => exact ⟨rfl, trivial⟩

/-- A logged run of the variant moves the kernel by replaying its log, which is faithful. -/
theorem MLRun.replays {cfg : Config} {mac : Nat → Tok → Nat} {S S' : MSys}
    {l : List Decision} (h : MLRun cfg mac S l S') :
    S'.kern = replay cfg S.kern l ∧ Faithful cfg S.kern l := by
  induction h with
  | refl => exact ⟨rfl, trivial⟩
  | step _ hs ih =>
    obtain ⟨hk, hf⟩ := ih
    obtain ⟨hk', hf'⟩ := hs.replays
    refine ⟨by rw [hk', hk, replay_append], faithful_append.mpr ⟨hf, ?_⟩⟩
    rw [← hk]
    exact hf'

/-! ## Requests in flight carry no forged tag -/

/-- The adversary's power grows with what the kernel issues. -/
theorem unforged_mono {mac : Nat → Tok → Nat} {i i' : List (Nat × Tok)} {r : Req} {g : Nat}
    (hi : ∀ a ∈ i, a ∈ i') (h : Unforged mac i r g) : Unforged mac i' r g :=
  fun τ hτ hg => hi _ (h τ hτ hg)

/-- Every request in flight carries no forged tag. -/
def MSys.NoForged (mac : Nat → Tok → Nat) (S : MSys) : Prop :=
  ∀ m ∈ S.net, Unforged mac S.issued m.1 m.2

/-- Every step of the variant keeps the requests in flight free of forged tags. -/
theorem MLStep.noForged {cfg : Config} {mac : Nat → Tok → Nat} {S S' : MSys}
    {l : List Decision} (h : MLStep cfg mac S l S') (hn : S.NoForged mac) : S'.NoForged mac := by
  have grow : ∀ (T : MSys) (r : Req) (g : Nat), ∀ a ∈ T.issued, a ∈ (T.exec cfg mac r g).issued :=
    fun T r g a ha => List.mem_append.mpr (Or.inr ha)
  cases h with
  | send r g _ hu =>
    intro m hm
    rcases List.mem_cons.mp hm with rfl | hm
    · exact hu
    · exact hn m hm
  | tick r _ => exact fun m hm => unforged_mono (grow S r 0) (hn m hm)
  | deliver l₁ l₂ r g hnet =>
    intro m hm
    have hm' : m ∈ S.net := by
      rw [hnet]
      rcases List.mem_append.mp hm with h | h
      · exact List.mem_append.mpr (Or.inl h)
      · exact List.mem_append.mpr (Or.inr (List.mem_cons.mpr (Or.inr h)))
    exact unforged_mono (grow { S with net := l₁ ++ l₂ } r g) (hn m hm')
  | dup l₁ l₂ m' hnet =>
    intro m hm
    rcases List.mem_cons.mp hm with rfl | hm
    · refine hn _ ?_
      rw [hnet]
      exact List.mem_append.mpr (Or.inr (List.mem_cons_self ..))
    · exact hn m hm
  | drop l₁ l₂ m' hnet =>
    intro m hm
    refine hn m ?_
    rw [hnet]
    rcases List.mem_append.mp hm with h | h
    · exact List.mem_append.mpr (Or.inl h)
    · exact List.mem_append.mpr (Or.inr (List.mem_cons.mpr (Or.inr h)))

/-- Every run of the variant keeps the requests in flight free of forged tags. -/
theorem MLRun.noForged {cfg : Config} {mac : Nat → Tok → Nat} {S S' : MSys}
    {l : List Decision} (h : MLRun cfg mac S l S') (hn : S.NoForged mac) : S'.NoForged mac := by
  induction h with
  | refl => exact hn
  | step _ hs ih => exact hs.noForged ih

/-- The presenter, capability and tag of a use: a read, evict or begin names its presenter,
presents its capability, and passes the tag check only with that capability's tag for it. -/
theorem capUse_tag {mac : Nat → Tok → Nat} {r : Req} {p : Nat} {c : Cap} {g : Nat}
    (hu : r.capUse = some (p, c)) (ht : r.tagged mac g = true) :
    r.presenter = p ∧ Tok.cap c ∈ r.toks ∧ g = mac p (.cap c) := by
  cases r <;> simp only [Req.capUse, Option.some.injEq, Prod.mk.injEq, reduceCtorEq] at hu <;>
    obtain ⟨rfl, rfl⟩ := hu <;>
    exact ⟨rfl, List.mem_singleton_self _, Nat.eq_of_beq_eq_true ht⟩

/-- **Custody as provenance with tagged tokens, presenter not trusted.** In every logged run of
the variant system from its initial state (anybody sends anything, naming any presenter, with
any tag the MAC's unforgeability allows), whenever the kernel accepts a read, evict or begin of
a block that is in flight with a right tag, the presenter it names is the block's custodian in
the run's history (allocator of the current generation, then every committed transfer's
receiver), and the capability presented is one the kernel issued to that holder. -/
theorem mac_accepted_use_by_custodian {cfg : Config} {mac : Nat → Tok → Nat}
    {l : List Decision} {S : MSys} (hrun : MLRun cfg mac (MSys.init cfg) l S) {r : Req}
    {g : Nat} (hm : (r, g) ∈ S.net) (ht : r.tagged mac g = true)
    (hv : (mstep cfg mac S.kern r g).verdict = .ok) {p : Nat} {c : Cap}
    (hu : r.capUse = some (p, c)) :
    custodian c.blk l = some p ∧ (p, Tok.cap c) ∈ S.issued := by
  rw [right_tag_step cfg mac S.kern r g ht] at hv
  obtain ⟨hk, hf⟩ := hrun.replays
  obtain ⟨x, hx, hown⟩ := capUse_owned hu hv
  rw [hk] at hx
  refine ⟨(Hist.of_phase_owned ((phase_eq_history hf hx).symm.trans hown)).1, ?_⟩
  have hn := hrun.noForged (fun _ hm => by simp [MSys.init] at hm)
  obtain ⟨hp, hτ, hg⟩ := capUse_tag hu ht
  have hu' : Unforged mac S.issued r g := hn _ hm
  have := hu' (.cap c) hτ (by rw [hp]; exact hg)
  rw [hp] at this
  exact this

end KVCache.Kernel

end
