module

public import Proofs.Common.List

/-!
# Pooled KV placement: the compulsory-miss wall

## The model
* A *block* is any type `α` with decidable equality; a *host* any type `H` with decidable
  equality. A *trace* is a list of requests `(h, b) : H × α`: block `b` requested by a
  request that the router sent to host `h`. Quantifying over traces therefore quantifies
  over every routing as well.
* A *cache* holds a list of blocks. A replacement `Policy` is any function
  `step cache request future ↦ new cache`. It sees the whole remaining future, and since
  every theorem below holds for every policy *and* every trace, a policy may as well be
  chosen knowing the entire trace (offline / Belady-style policies included).
* `DemandFetch P`: after a step the cache holds only blocks that were already cached or the
  block just requested — a block enters a cache only when it is requested there (and, when
  it was already cached, nothing enters). Eviction is unrestricted; bypassing is allowed.
* Caches start cold (empty). `missed P c r` lists the requests of `r` that missed;
  `misses P c r` is its length. No capacity hypothesis appears in the lower bounds, so they
  hold at every capacity, bounded or not. Capacity is a property of a run:
  `FitsIn cap P r` says every cache state of the run from a cold cache holds at most `cap`
  blocks. Blocks are counted, not sized; block sizes (KV pages) appear only in the solver
  model. (Informally, the lower bounds do not depend on capacity at all, so sizes cannot
  change them; this remark is not itself formalised.)
* The *wall* `wall r` is the number of distinct blocks of `r` (`dedup r` lists them).
* *Pooled*: one cache shared by all hosts serves the whole block stream `blocks t`.
  *Per-instance*: one cache per host in the list `hosts`, each with its own policy
  `P h`, serving only its own sub-stream `onHost h t`; `perInstanceMisses` is the sum over
  `hosts`. `hostWalls hosts t` is the sum over hosts of the distinct blocks each host sees.

## What is proved (all without capacity or routing assumptions unless stated)
* `wall_le_misses`: every demand-fetch policy, from a cold cache, misses at least
  `wall r` times on `r`.
* `wall_le_pooledMisses`: so does a pooled cache.
* `hostWalls_le_perInstanceMisses`: per-instance caching misses at least the sum over hosts
  of the distinct blocks each host sees; `wall_le_perInstanceMisses`: hence at least the wall
  (when every request is routed to a listed host).
* `wall_lt_hostWalls_of_shared`: that sum is strictly larger than the wall as soon as one
  block is requested on two different hosts; `wall_lt_perInstanceMisses_of_shared`: so
  per-instance caching then misses strictly more than the wall.
* `keepAll_misses_eq_wall`, `keepAll_fitsIn_of_wall_le`, `pooled_reaches_wall`: the
  demand-fetch policy that keeps every block reaches the wall exactly, and its cache never
  holds more than `wall r` blocks, so a pooled cache of any capacity ≥ the number of
  distinct blocks (or unbounded) reaches the wall; `pooled_optimum_eq_wall` packages
  "the wall is attained and nothing does better".
* `perInstance_keepAll_eq_hostWalls`: unbounded per-instance caches reach exactly
  `hostWalls`; `pooled_lt_perInstance_of_shared`: with a block shared across two hosts, the
  unbounded pooled cache misses strictly less than every per-instance placement (any
  policies, any capacities).
* `shared_example`: a three-request, two-host trace where the wall is 2 and the per-host sum
  is 3 (checked by `decide`), so the strict hypothesis is satisfiable.

What is not proved here: optimality at capacities below the number of distinct blocks
(`Proofs.Placement.Optimal` proves that Belady with bypass is the demand-fetch optimum at every
capacity, blocks counted; `Proofs.Placement.Farthest` has the kernel count the optimum, with
sizes, on one committed instance, which the `pooled-placement` result in
`pytools/results/placement/` also solves with CP-SAT), and anything about sizes, latency
or bandwidth.
-/

@[expose] public section

namespace KVCache.Placement

open KVCache.Common

variable {α : Type} [DecidableEq α] {H : Type} [DecidableEq H]

/-! ## Distinct blocks -/

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- The distinct blocks of a list (the last occurrence of each is kept). -/
noncomputable def dedup : List α → List α
  | [] => []
  | b :: rest => if b ∈ rest then dedup rest else b :: dedup rest

-- noncomputable: `List.length` has no compiled code in the registry Lean.
/-- The wall: the number of distinct blocks in a request stream. -/
noncomputable def wall (r : List α) : Nat := (dedup r).length

/-- A block is among the distinct blocks exactly when it occurs in the list. -/
theorem mem_dedup (x : α) (r : List α) : x ∈ dedup r ↔ x ∈ r := by
  induction r with
  | nil => simp [dedup]
  | cons b rest ih =>
    by_cases h : b ∈ rest
    · simp only [dedup]
      rw [if_pos h, ih]
      constructor
      · intro hx; exact List.mem_cons.mpr (Or.inr hx)
      · intro hx
        rcases List.mem_cons.mp hx with e | e
        · rw [e]; exact h
        · exact e
    · simp only [dedup]
      rw [if_neg h, List.mem_cons, List.mem_cons, ih]

/-- The distinct blocks are duplicate-free. -/
theorem nodup_dedup (r : List α) : (dedup r).Nodup := by
  induction r with
  | nil => simp [dedup]
  | cons b rest ih =>
    by_cases h : b ∈ rest
    · simp only [dedup]
      rw [if_pos h]
      exact ih
    · simp only [dedup]
      rw [if_neg h]
      exact List.nodup_cons.mpr ⟨fun hb => h ((mem_dedup b rest).mp hb), ih⟩

/-! ## One cache -/

/-- A replacement policy: from the current cache contents, the requested block and the
remaining future requests, the cache contents after serving the request.

It is the widest of the library's policy notions: any next cache at all, with demand fetch
(`DemandFetch`) and capacity (`FitsIn`) stated as hypotheses where a theorem needs them. The
ceiling's `KVCache.Ceiling.Policy` and `KVCache.Ceiling.BypassPolicy` (`Proofs.Ceiling.Cache`,
`Proofs.Ceiling.Bypass`) choose only a victim (or bypass) within a fixed demand-fetch step of
capacity `k`; `beladyBypassPolicy` (`Proofs.Placement.Optimal`) brings Belady with bypass into
this class. -/
structure Policy (α : Type) where
  /-- `step c b f`: the cache contents after serving a request for `b` with contents `c` and
  future requests `f`. -/
  step : List α → α → List α → List α

/-- Demand fetch: after serving a request for `b`, the cache holds only `b` and blocks it
already held. -/
def DemandFetch (P : Policy α) : Prop :=
  ∀ (c : List α) (b : α) (f : List α) (x : α), x ∈ P.step c b f → x = b ∨ x ∈ c

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- The requests of `r` that miss, serving `r` with policy `P` from cache contents `c`. -/
noncomputable def missed (P : Policy α) : List α → List α → List α
  | _, [] => []
  | c, b :: rest =>
    if b ∈ c then missed P (P.step c b rest) rest
    else b :: missed P (P.step c b rest) rest

-- noncomputable: `List.length` has no compiled code in the registry Lean.
/-- The number of misses serving `r` with policy `P` from cache contents `c`. -/
noncomputable def misses (P : Policy α) (c r : List α) : Nat := (missed P c r).length

/-- The successive cache contents while serving `r` with `P` from `c` (first and last
included). -/
def states (P : Policy α) : List α → List α → List (List α)
  | c, [] => [c]
  | c, b :: rest => c :: states P (P.step c b rest) rest

/-- The run of `P` on `r` from a cold cache never holds more than `cap` blocks. -/
def FitsIn (cap : Nat) (P : Policy α) (r : List α) : Prop :=
  ∀ s ∈ states P [] r, s.length ≤ cap

/-- Under demand fetch, every block of `r` that is not initially cached misses at least
once. -/
theorem mem_missed (P : Policy α) (hP : DemandFetch P) (r : List α) :
    ∀ (c : List α) (x : α), x ∈ r → x ∉ c → x ∈ missed P c r := by
  induction r with
  | nil => intro c x hx; simp at hx
  | cons b rest ih =>
    intro c x hx hxc
    simp only [missed]
    have keep : x ≠ b → x ∉ P.step c b rest := by
      intro hne hs
      rcases hP c b rest x hs with e | e
      · exact hne e
      · exact hxc e
    by_cases hb : b ∈ c
    · rw [if_pos hb]
      have hne : x ≠ b := by
        intro e; rw [e] at hxc; exact hxc hb
      rcases List.mem_cons.mp hx with e | e
      · exact absurd e hne
      · exact ih _ x e (keep hne)
    · rw [if_neg hb]
      by_cases hne : x = b
      · exact List.mem_cons.mpr (Or.inl hne)
      · rcases List.mem_cons.mp hx with e | e
        · exact absurd e hne
        · exact List.mem_cons.mpr (Or.inr (ih _ x e (keep hne)))

/-- **The wall.** Every demand-fetch policy — any replacement rule, offline or online, any
capacity — started cold misses at least once per distinct block: `wall r ≤ misses P [] r`. -/
theorem wall_le_misses (P : Policy α) (hP : DemandFetch P) (r : List α) :
    wall r ≤ misses P [] r := by
  unfold wall misses
  apply length_le_of_nodup_of_subset _ _ (nodup_dedup r)
  intro x hx
  exact mem_missed P hP r [] x ((mem_dedup x r).mp hx) (by simp)

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- The policy that keeps every block it has fetched (an unbounded cache). -/
noncomputable def keepAll : Policy α := ⟨fun c b _ => if b ∈ c then c else b :: c⟩

/-- Keep-everything leaves the cache unchanged on a hit. -/
theorem keepAll_step_of_mem (c : List α) (b : α) (f : List α) (hb : b ∈ c) :
    (keepAll : Policy α).step c b f = c := by
  change (if b ∈ c then c else b :: c) = c
  rw [if_pos hb]

/-- Keep-everything adds the requested block on a miss. -/
theorem keepAll_step_of_not_mem (c : List α) (b : α) (f : List α) (hb : b ∉ c) :
    (keepAll : Policy α).step c b f = b :: c := by
  change (if b ∈ c then c else b :: c) = b :: c
  rw [if_neg hb]

/-- The keep-everything policy is a demand-fetch policy. -/
theorem keepAll_demandFetch : DemandFetch (keepAll : Policy α) := by
  intro c b f x hx
  by_cases hb : b ∈ c
  · rw [keepAll_step_of_mem c b f hb] at hx; exact Or.inr hx
  · rw [keepAll_step_of_not_mem c b f hb] at hx; exact List.mem_cons.mp hx

/-- Keep-everything misses exactly the blocks of `r` not initially cached, each once. -/
theorem keepAll_missed (r : List α) : ∀ c : List α,
    (missed keepAll c r).Nodup ∧ ∀ x, x ∈ missed keepAll c r ↔ (x ∈ r ∧ x ∉ c) := by
  induction r with
  | nil => intro c; simp [missed]
  | cons b rest ih =>
    intro c
    simp only [missed]
    by_cases hb : b ∈ c
    · rw [if_pos hb, keepAll_step_of_mem c b rest hb]
      obtain ⟨hnd, hmem⟩ := ih c
      refine ⟨hnd, fun x => ?_⟩
      rw [hmem x, List.mem_cons]
      constructor
      · intro h; exact ⟨Or.inr h.1, h.2⟩
      · intro h
        rcases h.1 with e | e
        · exact absurd (by rw [e]; exact hb) h.2
        · exact ⟨e, h.2⟩
    · rw [if_neg hb, keepAll_step_of_not_mem c b rest hb]
      obtain ⟨hnd, hmem⟩ := ih (b :: c)
      refine ⟨List.nodup_cons.mpr
        ⟨fun h => ((hmem b).mp h).2 (List.mem_cons.mpr (Or.inl rfl)), hnd⟩, fun x => ?_⟩
      rw [List.mem_cons, hmem x, List.mem_cons, List.mem_cons]
      by_cases e : x = b
      · subst e; simp [hb]
      · simp [e]

/-- An unbounded cache reaches the wall exactly: keep-everything misses `wall r` times. -/
theorem keepAll_misses_eq_wall (r : List α) : misses keepAll [] r = wall r := by
  obtain ⟨hnd, hmem⟩ := keepAll_missed r []
  unfold misses wall
  apply Nat.le_antisymm
  · apply length_le_of_nodup_of_subset _ _ hnd
    intro x hx
    exact (mem_dedup x r).mpr ((hmem x).mp hx).1
  · apply length_le_of_nodup_of_subset _ _ (nodup_dedup r)
    intro x hx
    exact (hmem x).mpr ⟨(mem_dedup x r).mp hx, by simp⟩

/-- Every cache state of keep-everything, from duplicate-free contents `c`, is duplicate-free
and holds only blocks of `c` or of `r`. -/
theorem keepAll_states (r : List α) : ∀ c : List α, c.Nodup →
    ∀ s ∈ states keepAll c r, s.Nodup ∧ ∀ x ∈ s, x ∈ c ∨ x ∈ r := by
  induction r with
  | nil =>
    intro c hc s hs
    simp only [states] at hs
    rcases List.mem_cons.mp hs with e | e
    · rw [e]; exact ⟨hc, fun x hx => Or.inl hx⟩
    · simp at e
  | cons b rest ih =>
    intro c hc s hs
    simp only [states] at hs
    rcases List.mem_cons.mp hs with e | e
    · rw [e]; exact ⟨hc, fun x hx => Or.inl hx⟩
    · by_cases hb : b ∈ c
      · rw [keepAll_step_of_mem c b rest hb] at e
        obtain ⟨h1, h2⟩ := ih c hc s e
        refine ⟨h1, fun x hx => ?_⟩
        rcases h2 x hx with h | h
        · exact Or.inl h
        · exact Or.inr (List.mem_cons.mpr (Or.inr h))
      · rw [keepAll_step_of_not_mem c b rest hb] at e
        obtain ⟨h1, h2⟩ := ih (b :: c) (List.nodup_cons.mpr ⟨hb, hc⟩) s e
        refine ⟨h1, fun x hx => ?_⟩
        rcases h2 x hx with h | h
        · rcases List.mem_cons.mp h with h' | h'
          · exact Or.inr (List.mem_cons.mpr (Or.inl h'))
          · exact Or.inl h'
        · exact Or.inr (List.mem_cons.mpr (Or.inr h))

/-- Keep-everything never holds more than `wall r` blocks, so it fits in any capacity at
least the number of distinct blocks. -/
theorem keepAll_fitsIn_of_wall_le (r : List α) (cap : Nat) (hcap : wall r ≤ cap) :
    FitsIn cap keepAll r := by
  intro s hs
  obtain ⟨hnd, hsub⟩ := keepAll_states r [] List.nodup_nil s hs
  have : s.length ≤ (dedup r).length := by
    apply length_le_of_nodup_of_subset _ _ hnd
    intro x hx
    rcases hsub x hx with h | h
    · simp at h
    · exact (mem_dedup x r).mpr h
  unfold wall at hcap
  omega

/-! ## Hosts: pooled versus per-instance caches -/

/-- The block stream of a routed trace (what a pooled cache serves). -/
def blocks : List (H × α) → List α
  | [] => []
  | (_, y) :: t => y :: blocks t

/-- The sub-stream that the router sends to host `h` (what `h`'s own cache serves). -/
def onHost (h : H) : List (H × α) → List α
  | [] => []
  | (g, y) :: t => if g = h then y :: onHost h t else onHost h t

/-- A sum over a list of hosts. -/
def sumOver (f : H → Nat) : List H → Nat
  | [] => 0
  | h :: hs => f h + sumOver f hs

-- noncomputable: calls `misses`.
/-- Misses of one pooled cache, run with policy `P` from cold, on the whole trace. -/
noncomputable def pooledMisses (P : Policy α) (t : List (H × α)) : Nat :=
  misses P [] (blocks t)

-- noncomputable: calls `misses`.
/-- Misses of per-instance caches: host `h` runs its own cache with policy `P h`, from cold,
on its own sub-stream; summed over `hosts`. -/
noncomputable def perInstanceMisses (P : H → Policy α) (hosts : List H)
    (t : List (H × α)) : Nat :=
  sumOver (fun h => misses (P h) [] (onHost h t)) hosts

-- noncomputable: calls `wall`.
/-- The sum over hosts of the number of distinct blocks each host sees. -/
noncomputable def hostWalls (hosts : List H) (t : List (H × α)) : Nat :=
  sumOver (fun h => wall (onHost h t)) hosts

-- noncomputable: `++` (`List.append`) has no compiled code in the registry Lean.
/-- The per-host distinct lists, concatenated. -/
noncomputable def gather (t : List (H × α)) : List H → List α
  | [] => []
  | h :: hs => dedup (onHost h t) ++ gather t hs

omit [DecidableEq α] [DecidableEq H] in
/-- Every block of the pooled stream was requested on some host. -/
theorem exists_of_mem_blocks (t : List (H × α)) (x : α) :
    x ∈ blocks t → ∃ h, (h, x) ∈ t := by
  induction t with
  | nil => intro hx; simp [blocks] at hx
  | cons p t ih =>
    obtain ⟨g, y⟩ := p
    intro hx
    simp only [blocks] at hx
    rcases List.mem_cons.mp hx with e | e
    · exact ⟨g, List.mem_cons.mpr (Or.inl (by rw [e]))⟩
    · obtain ⟨h, hh⟩ := ih e
      exact ⟨h, List.mem_cons.mpr (Or.inr hh)⟩

omit [DecidableEq α] in
/-- A block is in host `h`'s sub-stream exactly when it was requested on `h`. -/
theorem mem_onHost (h : H) (x : α) (t : List (H × α)) : x ∈ onHost h t ↔ (h, x) ∈ t := by
  induction t with
  | nil => simp [onHost]
  | cons p t ih =>
    obtain ⟨g, y⟩ := p
    simp only [onHost]
    by_cases hg : g = h
    · rw [if_pos hg]
      subst hg
      simp [ih]
    · rw [if_neg hg]
      have hg' : h ≠ g := fun e => hg e.symm
      simp [ih, hg']

/-- `gather` has exactly `hostWalls` entries. -/
theorem length_gather (t : List (H × α)) (hs : List H) :
    (gather t hs).length = hostWalls hs t := by
  induction hs with
  | nil => simp [gather, hostWalls, sumOver]
  | cons h hs ih =>
    simp only [gather, hostWalls, sumOver, List.length_append, wall] at ih ⊢
    rw [ih]

/-- A block requested on a listed host is in `gather`. -/
theorem mem_gather (t : List (H × α)) (h : H) (x : α) (hx : x ∈ onHost h t) (hs : List H) :
    h ∈ hs → x ∈ gather t hs := by
  induction hs with
  | nil => intro hh; simp at hh
  | cons g hs ih =>
    intro hh
    simp only [gather]
    rcases List.mem_cons.mp hh with e | e
    · rw [← e]; exact List.mem_append.mpr (Or.inl ((mem_dedup x _).mpr hx))
    · exact List.mem_append.mpr (Or.inr (ih e))

/-- A block requested on two different listed hosts occurs twice in `gather`: a copy survives
removing one. -/
theorem mem_erase_gather (t : List (H × α)) (b : α) (h₁ h₂ : H) (hne : h₁ ≠ h₂)
    (hb₁ : (h₁, b) ∈ t) (hb₂ : (h₂, b) ∈ t) (hs : List H) :
    h₁ ∈ hs → h₂ ∈ hs → b ∈ (gather t hs).erase b := by
  induction hs with
  | nil => intro hh; simp at hh
  | cons g hs ih =>
    intro hh₁ hh₂
    simp only [gather]
    have in₁ : b ∈ dedup (onHost h₁ t) := (mem_dedup b _).mpr ((mem_onHost h₁ b t).mpr hb₁)
    have in₂ : b ∈ dedup (onHost h₂ t) := (mem_dedup b _).mpr ((mem_onHost h₂ b t).mpr hb₂)
    by_cases e₁ : h₁ = g
    · have h2hs : h₂ ∈ hs := by
        rcases List.mem_cons.mp hh₂ with e | e
        · exact absurd (e₁.trans e.symm) hne
        · exact e
      rw [← e₁]
      exact mem_erase_append_left b _
        (mem_gather t h₂ b ((mem_onHost h₂ b t).mpr hb₂) hs h2hs) _ in₁
    · have h1hs : h₁ ∈ hs := (List.mem_cons.mp hh₁).resolve_left e₁
      by_cases e₂ : h₂ = g
      · rw [← e₂]
        exact mem_erase_append_left b _
          (mem_gather t h₁ b ((mem_onHost h₁ b t).mpr hb₁) hs h1hs) _ in₂
      · have h2hs : h₂ ∈ hs := (List.mem_cons.mp hh₂).resolve_left e₂
        exact mem_erase_append_right b _ (ih h1hs h2hs) _

omit [DecidableEq H] in
/-- **Pooled wall.** A pooled cache (one cache shared by all hosts), under any routing, any
demand-fetch policy and any capacity, misses at least the wall. -/
theorem wall_le_pooledMisses (P : Policy α) (hP : DemandFetch P) (t : List (H × α)) :
    wall (blocks t) ≤ pooledMisses P t :=
  wall_le_misses P hP (blocks t)

/-- **Per-instance floor.** Per-instance caches, whatever their policies (each demand-fetch)
and capacities, miss at least the sum over hosts of the distinct blocks each host sees. -/
theorem hostWalls_le_perInstanceMisses (P : H → Policy α) (hP : ∀ h, DemandFetch (P h))
    (hosts : List H) (t : List (H × α)) :
    hostWalls hosts t ≤ perInstanceMisses P hosts t := by
  unfold hostWalls perInstanceMisses
  induction hosts with
  | nil => simp [sumOver]
  | cons h hs ih =>
    simp only [sumOver]
    have := wall_le_misses (P h) (hP h) (onHost h t)
    omega

/-- The per-host distinct counts add up to at least the wall when every request is routed
to a listed host. -/
theorem wall_le_hostWalls (hosts : List H) (t : List (H × α))
    (hcov : ∀ p ∈ t, p.1 ∈ hosts) : wall (blocks t) ≤ hostWalls hosts t := by
  rw [← length_gather]
  unfold wall
  apply length_le_of_nodup_of_subset _ _ (nodup_dedup _)
  intro x hx
  obtain ⟨h, hh⟩ := exists_of_mem_blocks t x ((mem_dedup x _).mp hx)
  exact mem_gather t h x ((mem_onHost h x t).mpr hh) hosts (hcov (h, x) hh)

/-- **Sharing costs per-instance caching.** If some block is requested on two different
hosts (and every request goes to a listed host), the per-host distinct counts add up to
strictly more than the wall. -/
theorem wall_lt_hostWalls_of_shared (hosts : List H) (t : List (H × α))
    (hcov : ∀ p ∈ t, p.1 ∈ hosts) (b : α) (h₁ h₂ : H) (hne : h₁ ≠ h₂)
    (hb₁ : (h₁, b) ∈ t) (hb₂ : (h₂, b) ∈ t) : wall (blocks t) < hostWalls hosts t := by
  rw [← length_gather]
  unfold wall
  apply length_lt_of_nodup_of_subset_of_dup _ _ b (nodup_dedup _)
  · intro x hx
    obtain ⟨h, hh⟩ := exists_of_mem_blocks t x ((mem_dedup x _).mp hx)
    exact mem_gather t h x ((mem_onHost h x t).mpr hh) hosts (hcov (h, x) hh)
  · exact mem_erase_gather t b h₁ h₂ hne hb₁ hb₂ hosts (hcov (h₁, b) hb₁) (hcov (h₂, b) hb₂)

/-- **Per-instance wall.** Per-instance caches, under any routing (to listed hosts), any
demand-fetch policies and any capacities, miss at least the wall. -/
theorem wall_le_perInstanceMisses (P : H → Policy α) (hP : ∀ h, DemandFetch (P h))
    (hosts : List H) (t : List (H × α)) (hcov : ∀ p ∈ t, p.1 ∈ hosts) :
    wall (blocks t) ≤ perInstanceMisses P hosts t :=
  Nat.le_trans (wall_le_hostWalls hosts t hcov) (hostWalls_le_perInstanceMisses P hP hosts t)

/-- **Per-instance caching misses strictly more than the wall** as soon as one block is
requested on two different hosts — whatever the policies and capacities. -/
theorem wall_lt_perInstanceMisses_of_shared (P : H → Policy α) (hP : ∀ h, DemandFetch (P h))
    (hosts : List H) (t : List (H × α)) (hcov : ∀ p ∈ t, p.1 ∈ hosts) (b : α) (h₁ h₂ : H)
    (hne : h₁ ≠ h₂) (hb₁ : (h₁, b) ∈ t) (hb₂ : (h₂, b) ∈ t) :
    wall (blocks t) < perInstanceMisses P hosts t :=
  Nat.lt_of_lt_of_le (wall_lt_hostWalls_of_shared hosts t hcov b h₁ h₂ hne hb₁ hb₂)
    (hostWalls_le_perInstanceMisses P hP hosts t)

omit [DecidableEq H] in
/-- **The pooled cache reaches the wall.** With capacity at least the number of distinct
blocks (or unbounded), the keep-everything pooled cache is demand-fetch, fits, and misses
exactly the wall. -/
theorem pooled_reaches_wall (t : List (H × α)) (cap : Nat) (hcap : wall (blocks t) ≤ cap) :
    DemandFetch (keepAll : Policy α) ∧ FitsIn cap keepAll (blocks t) ∧
      pooledMisses keepAll t = wall (blocks t) :=
  ⟨keepAll_demandFetch, keepAll_fitsIn_of_wall_le (blocks t) cap hcap,
    keepAll_misses_eq_wall (blocks t)⟩

omit [DecidableEq H] in
/-- **The pooled optimum is the wall.** Some demand-fetch pooled policy that fits in any
capacity ≥ the number of distinct blocks attains the wall, and no demand-fetch policy
(at any capacity) does better. -/
theorem pooled_optimum_eq_wall (t : List (H × α)) (cap : Nat) (hcap : wall (blocks t) ≤ cap) :
    (∃ P : Policy α, DemandFetch P ∧ FitsIn cap P (blocks t) ∧
        pooledMisses P t = wall (blocks t)) ∧
      ∀ P : Policy α, DemandFetch P → wall (blocks t) ≤ pooledMisses P t :=
  ⟨⟨keepAll, pooled_reaches_wall t cap hcap⟩, fun P hP => wall_le_pooledMisses P hP t⟩

/-- Unbounded per-instance caches miss exactly the per-host distinct counts, summed. -/
theorem perInstance_keepAll_eq_hostWalls (hosts : List H) (t : List (H × α)) :
    perInstanceMisses (fun _ => (keepAll : Policy α)) hosts t = hostWalls hosts t := by
  unfold perInstanceMisses hostWalls
  induction hosts with
  | nil => simp [sumOver]
  | cons h hs ih =>
    simp only [sumOver]
    rw [ih, keepAll_misses_eq_wall]

/-- **Pooled beats every per-instance placement when a block is shared.** If a block is
requested on two different hosts, the unbounded pooled cache misses strictly fewer times
than per-instance caches with any demand-fetch policies and any capacities. -/
theorem pooled_lt_perInstance_of_shared (P : H → Policy α) (hP : ∀ h, DemandFetch (P h))
    (hosts : List H) (t : List (H × α)) (hcov : ∀ p ∈ t, p.1 ∈ hosts) (b : α) (h₁ h₂ : H)
    (hne : h₁ ≠ h₂) (hb₁ : (h₁, b) ∈ t) (hb₂ : (h₂, b) ∈ t) :
    pooledMisses keepAll t < perInstanceMisses P hosts t := by
  have e : pooledMisses (keepAll : Policy α) t = wall (blocks t) :=
    keepAll_misses_eq_wall (blocks t)
  rw [e]
  exact wall_lt_perInstanceMisses_of_shared P hP hosts t hcov b h₁ h₂ hne hb₁ hb₂

/-- A concrete witness that sharing happens: block 1 requested on hosts 0 and 1, block 2 on
host 0. The wall is 2 and the per-host distinct counts add up to 3. -/
theorem shared_example :
    wall (blocks ([(0, 1), (1, 1), (0, 2)] : List (Nat × Nat))) = 2 ∧
      hostWalls [0, 1] ([(0, 1), (1, 1), (0, 2)] : List (Nat × Nat)) = 3 := by
  decide

end KVCache.Placement

end
