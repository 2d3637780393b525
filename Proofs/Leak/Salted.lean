module

public import Proofs.Isolation.Floor

/-!
# The cross-tenant prefix-cache leak, and the keyed salt that closes it

A serving engine's prefix cache (vLLM's `KVCacheManager`, SGLang's `RadixCache`) keeps the KV
blocks of earlier prompts and hands them to any later request whose prompt starts with the same
blocks. Unsalted, that request may come from another tenant: the cache answers "these blocks are
already computed" and so tells the second tenant what the first one sent (the leak that
`pytools.leak` reproduces on the engines' own cache code). vLLM and SGLang key each cached block
by a `cache_salt` as well, so a salt per tenant separates the tenants, but only if the salt is
bound to the tenant: a client that may choose its salt can send the victim's.

## The model

* A client request (`Request`) carries the tenant that the admission layer authenticated (a ghost
  field: the engine never sees it), the `cache_salt` the client put in its body, if any
  (`claimed`), and its prompt as the chain of its full blocks' keys (`blocks`; an engine's block
  hash already covers the whole prefix up to that block).
* An admission policy (`Admission`) decides which salt the engine gets with a request, or refuses
  it (`none`: the request never reaches the engine). `keyed salt` is the admission layer of
  `pytools.admission`: a request that brings its own salt is refused, any other gets its tenant's
  keyed salt `salt t` (HMAC-SHA256 of a server secret and the tenant id in the deployed code;
  here any map, injective on tenants). `trusting d` is the engine as shipped: the client's salt
  goes through, no salt means the shared default `d` (the unsalted cache). `unsalted` gives every
  request the same salt.
* The engine's cache (`Cache`) is the list of its (salt, block key) entries. A request served with
  salt `s` hits the longest run of leading blocks found under `s` (`hitLen`), then its blocks are
  cached under `s` (`insertAll`). `run A rs` is the cache after the history `rs`, oldest first;
  `answer A c r` is the number of blocks request `r` is served from cache `c` (0 if refused).
  Nothing is evicted (see the limits below).

## Results, in words

1. `no_leak_of_binding`: for every admission policy that never gives two tenants the same salt
   (`Binding`), every history and every request, each block a request is served from the cache
   was cached by an earlier request of the same tenant: zero leak, for every sequence.
   `keyed_binding`: the keyed admission is binding when the salt map is injective, hence
   `keyed_zero_leak`, and `keyed_first_contact` (a tenant with no history of its own is served
   nothing, whatever the others sent).
2. `keyed_own_reuse`: under the keyed admission, a tenant's request is served exactly as much as
   an unsalted cache that had seen only that tenant's own admitted requests would serve it: full
   own reuse. Together with 1 the keyed salted cache is exact in the sense of the isolation floor
   (zero leak and no refused reuse).
3. `keyed_refuses_claimed`: a request that brings its own salt is refused and changes nothing.
4. The leak: `shared_salt_leak` (two tenants that get the same salt share everything), hence
   `unsalted_leak` (the engine as shipped, no salt) and `guessable_leak` (the victim's salt sent
   by another tenant, when clients may choose salts).
5. The cost: `copies_le`, `copies_eq_of_shared` and `shared_prefix_entries`: a block is held
   once per tenant that computed it, at most `T` times; a prefix of `n` blocks shared by all `T`
   tenants takes `T * n` entries where the unsalted cache takes `n`.
6. The floor: `keyed_realises`, `saltedDesign_exact` and `salted_meets_floor`: read as a design of
   the isolation floor (`Proofs.Isolation.Floor`), with rights "tenant `t` may reuse block `b`
   iff `t` computed it", the salted cache is exact for every rights matrix, and its state, one
   presence bit per (tenant salt, block) entry, is exactly the floor's `2 ^ (T * n)` states.
   `keyed_contents_injective`: the cache's own contents (not only their coding) determine the
   rights matrix: the map from matrices to contents is injective.
   `unsaltedDesign_leaks`: the unsalted cache keeps `n` bits and leaks (for `T ≥ 2`, `n ≥ 1`).

Limits: the model keys entries by (salt, block key) exactly; the engines fold the salt into the
first block's hash, so the guarantee carries over to them only as far as their block hashes do not
collide. There is no eviction here: `Proofs.Leak.Eviction` adds a bounded pool, where eviction
across tenants is a channel that salting does not close. The salt's secrecy (HMAC) is not
modelled: `keyed` refuses client salts, so no client can present another tenant's salt at all.
-/

@[expose] public section

namespace KVCache.Leak

open KVCache.Isolation

/-- A client request: the tenant the admission layer authenticated (never seen by the engine),
the `cache_salt` the client put in its body, if any, and its prompt as a chain of block keys. -/
structure Request (T : Nat) (γ κ : Type) where
  /-- The authenticated tenant. -/
  tenant : Fin T
  /-- The salt the client claimed in its request, if any. -/
  claimed : Option γ
  /-- The keys of the prompt's full blocks, in order. -/
  blocks : List κ

/-- An admission policy: the salt the engine receives with a tenant's request that claims `c`,
or `none` when the request is refused (it never reaches the engine). -/
abbrev Admission (T : Nat) (γ σ : Type) : Type := Fin T → Option γ → Option σ

/-- The engine's prefix cache: the (salt, block key) entries it holds. -/
abbrev Cache (σ κ : Type) : Type := List (σ × κ)

variable {T : Nat} {γ σ κ : Type} [DecidableEq σ] [DecidableEq κ]

-- noncomputable: `∈` on a list (`instBEqOfDecidableEq`): the WebAssembly build cannot compile it
/-- The number of leading blocks of `ks` found in the cache under salt `s`. -/
noncomputable def hitLen (c : Cache σ κ) (s : σ) : List κ → Nat
  | [] => 0
  | k :: ks => if (s, k) ∈ c then hitLen c s ks + 1 else 0

-- noncomputable: `∈` on a list (`instBEqOfDecidableEq`): the WebAssembly build cannot compile it
/-- Cache the blocks `ks` under salt `s` (those not cached yet). -/
noncomputable def insertAll (s : σ) : Cache σ κ → List κ → Cache σ κ
  | c, [] => c
  | c, k :: ks => insertAll s (if (s, k) ∈ c then c else (s, k) :: c) ks

-- noncomputable: calls `insertAll`
/-- One request through admission `A`: refused, or its blocks cached under the salt it gets. -/
noncomputable def step (A : Admission T γ σ) (c : Cache σ κ) (r : Request T γ κ) : Cache σ κ :=
  match A r.tenant r.claimed with
  | none => c
  | some s => insertAll s c r.blocks

-- noncomputable: calls `step`
/-- The cache after the requests `rs` (oldest first), starting from cache `c`. -/
noncomputable def runFrom (A : Admission T γ σ) : Cache σ κ → List (Request T γ κ) → Cache σ κ
  | c, [] => c
  | c, r :: rs => runFrom A (step A c r) rs

-- noncomputable: calls `runFrom`
/-- The cache after the history `rs` (oldest first), starting empty. -/
noncomputable def run (A : Admission T γ σ) (rs : List (Request T γ κ)) : Cache σ κ :=
  runFrom A [] rs

-- noncomputable: calls `hitLen`
/-- How many blocks request `r` is served from cache `c` (0 when admission refuses it). -/
noncomputable def answer (A : Admission T γ σ) (c : Cache σ κ) (r : Request T γ κ) : Nat :=
  match A r.tenant r.claimed with
  | none => 0
  | some s => hitLen c s r.blocks

/-- The admission layer of `pytools.admission`: a request that brings its own salt is refused;
any other gets its tenant's keyed salt. -/
def keyed (salt : Fin T → σ) : Admission T σ σ
  | t, none => some (salt t)
  | _, some _ => none

/-- The engine as shipped: the client's salt goes through; no salt means the default `d`. -/
def trusting (d : σ) : Admission T σ σ := fun _ c => some (c.getD d)

/-- The unsalted cache: every request gets the same (unit) salt. -/
def unsalted : Admission T γ Unit := fun _ _ => some ()

/-- An admission policy is binding when it never gives two different tenants the same salt. -/
def Binding (A : Admission T γ σ) : Prop :=
  ∀ (t t' : Fin T) (c c' : Option γ) (s : σ), A t c = some s → A t' c' = some s → t = t'

-- noncomputable: `List.filter` (`List.reverse._redArg`): the WebAssembly build cannot compile it
/-- A tenant's own admitted history: its requests that brought no salt of their own. -/
noncomputable def own (t : Fin T) (rs : List (Request T γ κ)) : List (Request T γ κ) :=
  rs.filter fun r => decide (r.tenant = t ∧ r.claimed = none)

/-! ## What the cache holds -/

/-- An entry is in the cache after `insertAll s c ks` iff it was in `c` or is a block of `ks`
under salt `s`. -/
theorem mem_insertAll {s s' : σ} {k : κ} (ks : List κ) :
    ∀ (c : Cache σ κ), (s', k) ∈ insertAll s c ks ↔ (s', k) ∈ c ∨ (s' = s ∧ k ∈ ks) := by
  induction ks with
  | nil => intro c; simp [insertAll]
  | cons j ks ih =>
    intro c
    rw [insertAll, ih]
    by_cases h : (s, j) ∈ c
    · rw [if_pos h]
      constructor
      · rintro (h1 | ⟨h1, h2⟩)
        · exact Or.inl h1
        · exact Or.inr ⟨h1, List.mem_cons_of_mem _ h2⟩
      · rintro (h1 | ⟨h1, h2⟩)
        · exact Or.inl h1
        · rcases List.mem_cons.1 h2 with h3 | h3
          · subst h1; subst h3; exact Or.inl h
          · exact Or.inr ⟨h1, h3⟩
    · rw [if_neg h]
      simp only [List.mem_cons, Prod.mk.injEq]
      constructor
      · rintro ((⟨h1, h2⟩ | h1) | ⟨h1, h2⟩)
        · exact Or.inr ⟨h1, Or.inl h2⟩
        · exact Or.inl h1
        · exact Or.inr ⟨h1, Or.inr h2⟩
      · rintro (h1 | ⟨h1, h2 | h2⟩)
        · exact Or.inl (Or.inr h1)
        · exact Or.inl (Or.inl ⟨h1, h2⟩)
        · exact Or.inr ⟨h1, h2⟩

/-- One step adds exactly the request's blocks under the salt admission gave it. -/
theorem mem_step {A : Admission T γ σ} {c : Cache σ κ} {r : Request T γ κ} {s : σ} {k : κ} :
    (s, k) ∈ step A c r ↔ (s, k) ∈ c ∨ (A r.tenant r.claimed = some s ∧ k ∈ r.blocks) := by
  unfold step
  cases h : A r.tenant r.claimed with
  | none => simp
  | some s0 =>
    simp only [mem_insertAll, Option.some.injEq]
    constructor
    · rintro (h1 | ⟨h1, h2⟩)
      · exact Or.inl h1
      · exact Or.inr ⟨h1.symm, h2⟩
    · rintro (h1 | ⟨h1, h2⟩)
      · exact Or.inl h1
      · exact Or.inr ⟨h1.symm, h2⟩

/-- The cache after a history holds exactly the blocks of the admitted requests, each under the
salt its request got. -/
theorem mem_runFrom {A : Admission T γ σ} {s : σ} {k : κ} (rs : List (Request T γ κ)) :
    ∀ (c : Cache σ κ), (s, k) ∈ runFrom A c rs ↔
      (s, k) ∈ c ∨ ∃ r ∈ rs, A r.tenant r.claimed = some s ∧ k ∈ r.blocks := by
  induction rs with
  | nil => intro c; simp [runFrom]
  | cons r rs ih =>
    intro c
    rw [runFrom, ih, mem_step]
    constructor
    · rintro ((h1 | h1) | ⟨r', hr', h2⟩)
      · exact Or.inl h1
      · exact Or.inr ⟨r, List.mem_cons.2 (Or.inl rfl), h1⟩
      · exact Or.inr ⟨r', List.mem_cons_of_mem _ hr', h2⟩
    · rintro (h1 | ⟨r', hr', h2⟩)
      · exact Or.inl (Or.inl h1)
      · rcases List.mem_cons.1 hr' with h3 | h3
        · subst h3; exact Or.inl (Or.inr h2)
        · exact Or.inr ⟨r', h3, h2⟩

/-- **The cache's content.** After the history `rs`, the entry (salt `s`, block `k`) is cached iff
some request of `rs` was admitted with salt `s` and has block `k`. -/
theorem mem_run {A : Admission T γ σ} {rs : List (Request T γ κ)} {s : σ} {k : κ} :
    (s, k) ∈ run A rs ↔ ∃ r ∈ rs, A r.tenant r.claimed = some s ∧ k ∈ r.blocks := by
  unfold run
  rw [mem_runFrom]
  simp

/-! ## Hits -/

/-- The hit length depends only on which blocks are present under the salt looked up. -/
theorem hitLen_congr {σ' : Type} [DecidableEq σ'] {c : Cache σ κ} {s : σ} {c' : Cache σ' κ}
    {s' : σ'} (h : ∀ k, (s, k) ∈ c ↔ (s', k) ∈ c') :
    ∀ ks : List κ, hitLen c s ks = hitLen c' s' ks
  | [] => rfl
  | k :: ks => by
    rw [hitLen, hitLen]
    by_cases hk : (s, k) ∈ c
    · rw [if_pos hk, if_pos ((h k).1 hk), hitLen_congr h ks]
    · rw [if_neg hk, if_neg (fun h' => hk ((h k).2 h'))]

/-- Every block counted in a hit is present under the salt looked up. -/
theorem mem_of_mem_take_hitLen {c : Cache σ κ} {s : σ} :
    ∀ {ks : List κ} {k : κ}, k ∈ ks.take (hitLen c s ks) → (s, k) ∈ c
  | [], k, h => by simp at h
  | j :: ks, k, h => by
    by_cases hj : (s, j) ∈ c
    · rw [hitLen, if_pos hj, List.take_succ_cons] at h
      rcases List.mem_cons.1 h with h' | h'
      · subst h'; exact hj
      · exact mem_of_mem_take_hitLen h'
    · rw [hitLen, if_neg hj] at h
      simp at h

/-- When every block is present, the whole prompt is a hit. -/
theorem hitLen_eq_length {c : Cache σ κ} {s : σ} :
    ∀ {ks : List κ}, (∀ k ∈ ks, (s, k) ∈ c) → hitLen c s ks = ks.length
  | [], _ => rfl
  | k :: ks, h => by
    rw [hitLen, if_pos (h k (List.mem_cons.2 (Or.inl rfl))),
      hitLen_eq_length (fun k' hk' => h k' (List.mem_cons_of_mem _ hk')), List.length_cons]

/-! ## Zero leak -/

/-- Under a binding admission, an entry found under a salt that tenant `t` is given was cached
by a request of `t` itself. -/
theorem owner_of_binding {A : Admission T γ σ} (hA : Binding A) {rs : List (Request T γ κ)}
    {t : Fin T} {c : Option γ} {s : σ} {k : κ} (ht : A t c = some s) (hk : (s, k) ∈ run A rs) :
    ∃ r ∈ rs, r.tenant = t ∧ k ∈ r.blocks := by
  obtain ⟨r, hr, h1, h2⟩ := mem_run.1 hk
  exact ⟨r, hr, hA _ _ _ _ _ h1 ht, h2⟩

/-- **Zero leak, for any binding admission.** For every history `rs` and every request `r`, each
block `r` is served from the cache was cached by an earlier request of `r`'s own tenant. -/
theorem no_leak_of_binding {A : Admission T γ σ} (hA : Binding A) (rs : List (Request T γ κ))
    (r : Request T γ κ) :
    ∀ k ∈ r.blocks.take (answer A (run A rs) r),
      ∃ r' ∈ rs, r'.tenant = r.tenant ∧ k ∈ r'.blocks := by
  intro k hk
  unfold answer at hk
  cases h : A r.tenant r.claimed with
  | none => rw [h] at hk; simp at hk
  | some s =>
    rw [h] at hk
    exact owner_of_binding hA h (mem_of_mem_take_hitLen hk)

omit [DecidableEq σ] in
/-- The keyed admission gives tenant `t`'s salt exactly to `t`'s requests that bring no salt. -/
theorem keyed_eq_some_iff {salt : Fin T → σ} (hs : Function.Injective salt) {t t' : Fin T}
    {c : Option σ} : keyed salt t' c = some (salt t) ↔ t' = t ∧ c = none := by
  cases c with
  | none =>
    simp only [keyed, Option.some.injEq]
    constructor
    · intro h; exact ⟨hs h, by simp⟩
    · rintro ⟨h, -⟩; rw [h]
  | some g => simp [keyed]

omit [DecidableEq σ] in
/-- **The keyed admission is binding** when the salt map is injective on tenants. -/
theorem keyed_binding {salt : Fin T → σ} (hs : Function.Injective salt) :
    Binding (keyed (T := T) salt) := by
  intro t t' c c' s h h'
  cases c with
  | some g => simp [keyed] at h
  | none =>
    cases c' with
    | some g => simp [keyed] at h'
    | none =>
      simp only [keyed, Option.some.injEq] at h h'
      exact hs (h.trans h'.symm)

/-- **Zero leak under the keyed salt.** For every history and every request (whatever salts
the clients claimed), each block a request is served from the cache was cached by an earlier
request of the same tenant. -/
theorem keyed_zero_leak {salt : Fin T → σ} (hs : Function.Injective salt)
    (rs : List (Request T σ κ)) (r : Request T σ κ) :
    ∀ k ∈ r.blocks.take (answer (keyed salt) (run (keyed salt) rs) r),
      ∃ r' ∈ rs, r'.tenant = r.tenant ∧ k ∈ r'.blocks :=
  no_leak_of_binding (keyed_binding hs) rs r

/-- **First contact is served nothing.** Under the keyed salt, a tenant none of whose requests
is in the history is served no block, whatever the other tenants sent. -/
theorem keyed_first_contact {salt : Fin T → σ} (hs : Function.Injective salt)
    (rs : List (Request T σ κ)) (r : Request T σ κ) (h : ∀ r' ∈ rs, r'.tenant ≠ r.tenant) :
    answer (keyed salt) (run (keyed salt) rs) r = 0 := by
  cases hb : r.blocks with
  | nil =>
    unfold answer
    cases keyed salt r.tenant r.claimed with
    | none => rfl
    | some s => rw [hb]; rfl
  | cons k ks =>
    cases ha : answer (keyed salt) (run (keyed salt) rs) r with
    | zero => rfl
    | succ m =>
      have hk : k ∈ r.blocks.take (answer (keyed salt) (run (keyed salt) rs) r) := by
        rw [ha, hb, List.take_succ_cons]
        exact List.mem_cons.2 (Or.inl rfl)
      obtain ⟨r', hr', ht, -⟩ := keyed_zero_leak hs rs r k hk
      exact absurd ht (h r' hr')

/-- **Client salts are refused.** Under the keyed admission a request that brings its own salt
is served nothing and leaves the cache as it was. -/
theorem keyed_refuses_claimed (salt : Fin T → σ) (c : Cache σ κ) (r : Request T σ κ)
    (h : r.claimed ≠ none) : step (keyed salt) c r = c ∧ answer (keyed salt) c r = 0 := by
  cases hc : r.claimed with
  | none => exact absurd hc h
  | some g =>
    unfold step answer
    rw [hc]
    exact ⟨rfl, rfl⟩

/-! ## Full own reuse -/

/-- **Full own reuse under the keyed salt.** A request that brings no salt of its own is served
exactly as many blocks as an unsalted cache that had seen only its tenant's own admitted
requests would serve it. -/
theorem keyed_own_reuse {salt : Fin T → σ} (hs : Function.Injective salt)
    (rs : List (Request T σ κ)) (r : Request T σ κ) (hr : r.claimed = none) :
    answer (keyed salt) (run (keyed salt) rs) r =
      answer unsalted (run unsalted (own r.tenant rs)) r := by
  unfold answer
  rw [hr]
  show hitLen (run (keyed salt) rs) (salt r.tenant) r.blocks =
    hitLen (run unsalted (own r.tenant rs)) () r.blocks
  apply hitLen_congr
  intro k
  rw [mem_run, mem_run]
  constructor
  · rintro ⟨r', hr', h1, h2⟩
    obtain ⟨h3, h4⟩ := (keyed_eq_some_iff hs).1 h1
    exact ⟨r', List.mem_filter.2 ⟨hr', by simp [h3, h4]⟩, rfl, h2⟩
  · rintro ⟨r', hr', -, h2⟩
    obtain ⟨hr'', h3⟩ := List.mem_filter.1 hr'
    simp only [decide_eq_true_eq] at h3
    exact ⟨r', hr'', (keyed_eq_some_iff hs).2 h3, h2⟩

/-! ## The leak -/

/-- **Two tenants that get the same salt share everything.** If admission gives tenant `u`'s
request and tenant `t`'s request the same salt, then once `u` has sent its prompt (followed by
any other requests), `t` sending the same prompt is served all of it from `u`'s blocks. -/
theorem shared_salt_leak (A : Admission T γ σ) (u t : Fin T) (cu ct : Option γ) (s : σ)
    (hu : A u cu = some s) (ht : A t ct = some s) (ks : List κ) (rs : List (Request T γ κ)) :
    answer A (run A (⟨u, cu, ks⟩ :: rs)) ⟨t, ct, ks⟩ = ks.length := by
  simp only [answer, ht]
  apply hitLen_eq_length
  intro k hk
  exact mem_run.2 ⟨_, List.mem_cons.2 (Or.inl rfl), hu, hk⟩

/-- **The unsalted leak.** With the engine as shipped and no salt, any tenant sending a prompt
another tenant sent before is served all of its blocks. -/
theorem unsalted_leak (d : σ) (u t : Fin T) (ks : List κ) (rs : List (Request T σ κ)) :
    answer (trusting d) (run (trusting d) (⟨u, none, ks⟩ :: rs)) ⟨t, none, ks⟩ = ks.length :=
  shared_salt_leak (trusting d) u t none none d rfl rfl ks rs

/-- **The guessable-salt leak.** When clients choose their salts, a tenant that sends the
victim's salt `g` (a per-tenant salt it can guess) is served all of the victim's blocks. -/
theorem guessable_leak (d g : σ) (u t : Fin T) (ks : List κ) (rs : List (Request T σ κ)) :
    answer (trusting d) (run (trusting d) (⟨u, some g, ks⟩ :: rs)) ⟨t, some g, ks⟩ =
      ks.length :=
  shared_salt_leak (trusting d) u t (some g) (some g) g rfl rfl ks rs

omit [DecidableEq σ] in
/-- Trusting client salts is not binding as soon as there are two tenants. -/
theorem trusting_not_binding (d : σ) (u t : Fin T) (hut : u ≠ t) :
    ¬ Binding (trusting (T := T) d) :=
  fun hA => hut (hA u t none none d rfl rfl)

/-! ## The cost -/

-- noncomputable: `∈` on a list (`instBEqOfDecidableEq`): the WebAssembly build cannot compile it
/-- How many tenants' keyed salts hold block `k` in cache `c`: the copies of `k` it stores. -/
noncomputable def copies (salt : Fin T → σ) (c : Cache σ κ) (k : κ) : Nat :=
  (List.finRange T).countP fun t => decide ((salt t, k) ∈ c)

/-- A block is stored at most `T` times (once per tenant). -/
theorem copies_le (salt : Fin T → σ) (c : Cache σ κ) (k : κ) : copies salt c k ≤ T := by
  unfold copies
  have h := List.countP_le_length (p := fun t => decide ((salt t, k) ∈ c)) (l := List.finRange T)
  rwa [List.length_finRange] at h

/-- **A block every tenant computed is stored `T` times** under the keyed salt (the unsalted
cache stores it once). -/
theorem copies_eq_of_shared {salt : Fin T → σ} (hs : Function.Injective salt)
    (rs : List (Request T σ κ)) (k : κ)
    (h : ∀ t : Fin T, ∃ r ∈ rs, r.tenant = t ∧ r.claimed = none ∧ k ∈ r.blocks) :
    copies salt (run (keyed salt) rs) k = T := by
  unfold copies
  rw [List.countP_eq_length.2, List.length_finRange]
  intro t _
  obtain ⟨r, hr, h1, h2, h3⟩ := h t
  exact decide_eq_true (mem_run.2 ⟨r, hr, (keyed_eq_some_iff hs).2 ⟨h1, h2⟩, h3⟩)

/-- The unsalted cache holds a block under its single salt iff some request had it. -/
theorem mem_run_unsalted {rs : List (Request T γ κ)} {k : κ} :
    ((), k) ∈ run unsalted rs ↔ ∃ r ∈ rs, k ∈ r.blocks := by
  rw [mem_run]
  constructor
  · rintro ⟨r, hr, -, h⟩; exact ⟨r, hr, h⟩
  · rintro ⟨r, hr, h⟩; exact ⟨r, hr, rfl, h⟩

/-- **The cost of isolation.** A prefix of blocks `ks` that all `T` tenants computed takes
`T * ks.length` entries of the keyed salted cache, counted block by block. -/
theorem shared_prefix_entries {salt : Fin T → σ} (hs : Function.Injective salt)
    (rs : List (Request T σ κ)) (ks : List κ)
    (h : ∀ t : Fin T, ∃ r ∈ rs, r.tenant = t ∧ r.claimed = none ∧ ∀ k ∈ ks, k ∈ r.blocks) :
    (ks.map (copies salt (run (keyed salt) rs))).sum = T * ks.length := by
  induction ks with
  | nil => simp
  | cons k ks ih =>
    have hk : copies salt (run (keyed salt) rs) k = T := by
      apply copies_eq_of_shared hs rs k
      intro t
      obtain ⟨r, hr, h1, h2, h3⟩ := h t
      exact ⟨r, hr, h1, h2, h3 k (List.mem_cons.2 (Or.inl rfl))⟩
    have ih' := ih (fun t => by
      obtain ⟨r, hr, h1, h2, h3⟩ := h t
      exact ⟨r, hr, h1, h2, fun k' hk' => h3 k' (List.mem_cons_of_mem _ hk')⟩)
    rw [List.map_cons, List.sum_cons, hk, ih', List.length_cons, Nat.mul_succ, Nat.add_comm]

/-! ## The salted cache as an exact design of the isolation floor -/

-- noncomputable: `List.filter` (`List.reverse._redArg`): the WebAssembly build cannot compile it
/-- The history that realises a rights matrix `M`: each tenant `t`, once, sends (with no salt of
its own) exactly the blocks it may reuse, i.e. it computes them itself. -/
noncomputable def historyOf {n : Nat} (M : Rights T n) : List (Request T γ (Fin n)) :=
  (List.finRange T).map fun t =>
    { tenant := t, claimed := none, blocks := (List.finRange n).filter (M t) }

/-- Under the keyed salt, after the history of `M`, tenant `t`'s salt holds block `b` iff
`M t b`: the cache's entries are exactly the rights matrix. -/
theorem keyed_realises {salt : Fin T → σ} (hs : Function.Injective salt) {n : Nat}
    (M : Rights T n) (t : Fin T) (b : Fin n) :
    (salt t, b) ∈ run (keyed salt) (historyOf (γ := σ) M) ↔ M t b = true := by
  rw [mem_run]
  constructor
  · rintro ⟨r, hr, h1, h2⟩
    obtain ⟨t', -, hr'⟩ := List.mem_map.1 hr
    subst hr'
    obtain ⟨h3, -⟩ := (keyed_eq_some_iff hs).1 h1
    have h4 := (List.mem_filter.1 h2).2
    simp only at h3 h4
    rw [← h3]
    exact h4
  · intro h
    exact ⟨_, List.mem_map.2 ⟨t, List.mem_finRange t, rfl⟩, (keyed_eq_some_iff hs).2 ⟨rfl, rfl⟩,
      List.mem_filter.2 ⟨List.mem_finRange b, h⟩⟩

-- noncomputable: calls `rowCode` (noncomputable in `Proofs.Isolation.Floor`) and `run`
/-- The keyed salted cache as a design of the floor: its state is the presence bit of every
(tenant salt, block) entry after the history of `M`, written as a number by the floor's binary
coding; it answers "may `t` reuse `b`" by reading the bit of the entry (salt `t`, `b`). -/
noncomputable def saltedDesign (salt : Fin T → σ) (n : Nat) : Design T n ((2 ^ n) ^ T) where
  encode M := ofDigits fun t =>
    rowCode fun b => decide ((salt t, b) ∈ run (keyed salt) (historyOf (γ := σ) M))
  serve x t b := rowOf (toDigits x t) b

/-- **The salted cache is exact** (zero leak and no refused reuse, for every rights matrix)
when the salt map is injective on tenants. -/
theorem saltedDesign_exact {salt : Fin T → σ} (hs : Function.Injective salt) (n : Nat) :
    (saltedDesign salt n).Exact := by
  intro M t b
  show rowOf (toDigits (ofDigits fun t =>
    rowCode fun b => decide ((salt t, b) ∈ run (keyed salt) (historyOf (γ := σ) M))) t) b = M t b
  rw [toDigits_ofDigits, rowOf_rowCode]
  by_cases h : (salt t, b) ∈ run (keyed salt) (historyOf (γ := σ) M)
  · rw [decide_eq_true h]
    exact ((keyed_realises hs M t b).1 h).symm
  · rw [decide_eq_false h]
    cases hM : M t b with
    | false => rfl
    | true => exact absurd ((keyed_realises hs M t b).2 hM) h

/-- **The salted cache meets the floor exactly.** It is exact, so by the floor it needs at least
`2 ^ (T * n)` states, and its state (one presence bit per tenant and block) has exactly that
many: `T * n` bits, the least any zero-leak, full-reuse design can keep. -/
theorem salted_meets_floor {salt : Fin T → σ} (hs : Function.Injective salt) (n : Nat) :
    2 ^ (T * n) ≤ (2 ^ n) ^ T ∧ (2 ^ n) ^ T = 2 ^ (T * n) :=
  ⟨two_pow_le_of_exact (saltedDesign salt n) (saltedDesign_exact hs n), by
    rw [← Nat.pow_mul, Nat.mul_comm]⟩

/-- **The cache's own contents determine the rights matrix.** Under the keyed salt (injective on
tenants), two rights matrices whose histories leave the cache holding the same entries are equal:
the map from rights matrices to the cache's contents is injective, so the cache itself (not only
a coding of it) takes a different content for each of the `2 ^ (T * n)` matrices. -/
theorem keyed_contents_injective {salt : Fin T → σ} (hs : Function.Injective salt) {n : Nat}
    {M M' : Rights T n}
    (h : ∀ e, e ∈ run (keyed salt) (historyOf (γ := σ) M) ↔
      e ∈ run (keyed salt) (historyOf (γ := σ) M')) : M = M' := by
  funext t b
  apply Bool.eq_iff_iff.2
  rw [← keyed_realises hs M t b, ← keyed_realises hs M' t b]
  exact h _

-- noncomputable: calls `rowCode` (noncomputable in `Proofs.Isolation.Floor`) and `run`
/-- The unsalted cache as a design: its state is one presence bit per block. -/
noncomputable def unsaltedDesign (n : Nat) : Design T n (2 ^ n) where
  encode M := rowCode fun b => decide (((), b) ∈ run (unsalted (γ := Unit)) (historyOf M))
  serve x _ b := rowOf x b

/-- **The unsalted cache leaks**: with two tenants and a block, some rights matrix has a tenant
served a block it has no right to (it keeps `n` bits, below the floor's `T * n`). -/
theorem unsaltedDesign_leaks (hT : 2 ≤ T) {n : Nat} (hn : 0 < n) :
    ∃ (M : Rights T n) (t : Fin T) (b : Fin n), (unsaltedDesign (T := T) n).Leak M t b := by
  refine ⟨fun t _ => decide (t.val = 0), ⟨1, hT⟩, ⟨0, hn⟩, ?_, ?_⟩
  · show rowOf (rowCode fun b =>
      decide (((), b) ∈ run (unsalted (γ := Unit)) (historyOf (fun t _ => decide (t.val = 0)))))
      ⟨0, hn⟩ = true
    rw [rowOf_rowCode]
    apply decide_eq_true
    rw [mem_run_unsalted]
    exact ⟨_, List.mem_map.2 ⟨⟨0, by omega⟩, List.mem_finRange _, rfl⟩,
      List.mem_filter.2 ⟨List.mem_finRange _, by simp⟩⟩
  · simp

end KVCache.Leak

end
