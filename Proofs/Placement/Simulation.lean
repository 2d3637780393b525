module

public import Proofs.Placement.Optimal

/-!
# Pooled placement simulates per-instance caching, at every capacity

`Proofs.Placement.Wall` compares pooled and per-instance caches at the wall (capacity at
least the number of distinct blocks). This file compares them at every capacity: whatever
the routing and whatever demand-fetch policies the hosts run within their capacities, one
pooled demand-fetch cache with the summed capacity misses no more, strictly less as soon as
some request misses on its own host while another host caches its block, and (hosts listed
once) exactly that many fewer.

## The model
The model of `Proofs.Placement.Wall`, unchanged: a routed trace `t : List (H × α)`, host `h`'s
cache runs its own `Policy` `P h` from cold on its sub-stream `onHost h t` (its policy sees
that sub-stream's future), the pooled cache runs one policy on the block stream `blocks t`,
`DemandFetch` (a block enters a cache only when it is requested there; bypass allowed),
`FitsIn cap P r` (every state of the run from cold holds at most `cap` blocks) and sums over
the list `hosts` (`sumOver`, `perInstanceMisses`). Host `h` has capacity `cap h`; the pool
gets `sumOver cap hosts`.

`jointStep` is one request of the per-host caches taken together (only the serving host's
cache changes); `hostsAfter P S t n` is the per-host caches just after the request of `t`
that is followed by exactly `n` more requests. `follow hosts view` is the pooled policy of
the proof: on a request for `x` with future `f` it fetches `x` if needed and keeps exactly
the blocks that some listed host caches in `view f.length`. Policies see the future, so with
`view := hostsAfter P (fun _ => []) t` the pool knows where it is in `t` (from the length of
its future) and what every host caches there: an offline policy, like Belady's, built from
the trace and the hosts' policies. `missesCachedElsewhere P hosts S t` counts the requests
`(g, y)` of the per-host run from caches `S` that miss on their host `g` while some listed
host caches `y`.

## What is proved
* `follow_demandFetch`: `follow` is a demand-fetch policy (for every `view`).
* `follow_simulates`: a pool that holds exactly the blocks of the per-host caches keeps doing
  so, fits in the summed capacity, and misses exactly when no listed host caches the block;
  so its misses plus `missesCachedElsewhere` are at most the per-host misses summed, and
  equal to them when `hosts.Nodup`.
* `pooled_simulates_perInstance` (headline): for every trace (every routing) whose requests go
  to listed hosts, and every family of demand-fetch policies `P h` whose runs fit capacities
  `cap h`, some demand-fetch pooled policy `Q` whose run fits `sumOver cap hosts` has
  `pooledMisses Q t ≤ perInstanceMisses P hosts t`; `<` when `missesCachedElsewhere` is
  positive; and, for `hosts.Nodup`, `pooledMisses Q t + missesCachedElsewhere … =
  perInstanceMisses P hosts t`.
* `perInstanceMisses_ge_of_pooled_bound`: hence every lower bound on the misses of the pooled
  demand-fetch caches that fit in `sumOver cap hosts` bounds every routing's per-instance
  misses (the form in which a pooled optimum at `sumOver cap hosts` applies).
* `missesCachedElsewhere_example`: two hosts keeping every block, trace `[(0, 1), (1, 1)]`:
  one request misses on its host while the other caches its block, per-instance caches miss
  twice, the pool once (checked by `decide`).

## Hosts listed once
`hosts` is a list, and a host listed twice counts twice on both sides (its capacity in
`sumOver cap hosts`, its misses in `perInstanceMisses`). The inequalities hold for every list;
they say what they mean for `hosts.Nodup` (each host once: `sumOver cap hosts` is the fleet's
memory), the case in which the equality is proved and which the equality assumes.

* `perInstanceMisses_ge_pooled_beladyBypass`: with `Proofs.Placement.Optimal` (Belady with
  bypass is the demand-fetch optimum at every capacity, the ceiling result's policy class),
  pooled Belady with bypass at the summed capacity is a lower bound on every routing's
  per-instance misses.

What is not proved here: that `follow` is a good pooled policy (it only mirrors the hosts);
nothing about block sizes, latency or bandwidth.
-/

@[expose] public section

namespace KVCache.Placement

open KVCache.Common

variable {α : Type} [DecidableEq α] {H : Type} [DecidableEq H]

/-! ## The per-host caches, request by request -/

-- noncomputable: `onHost`'s compiled code (`onHost._redArg`) is not visible to importers.
/-- One request `(g, y)` of the per-host caches taken together: host `g` serves `y` with its
own policy (its future is its own remaining sub-stream `onHost g u`); every other host keeps
its cache. -/
noncomputable def jointStep (P : H → Policy α) (S : H → List α) (g : H) (y : α)
    (u : List (H × α)) : H → List α :=
  fun h => if h = g then (P g).step (S g) y (onHost g u) else S h

-- noncomputable: `List.length` has no compiled code in the registry Lean.
/-- `hostsAfter P S t n`: the per-host caches just after serving the request of `t` that is
followed by exactly `n` more requests (from caches `S` before `t`; `S` itself when no request
of `t` is followed by `n` more). -/
noncomputable def hostsAfter (P : H → Policy α) (S : H → List α) :
    List (H × α) → Nat → H → List α
  | [], _ => S
  | (g, y) :: u, n =>
    if n = u.length then jointStep P S g y u else hostsAfter P (jointStep P S g y u) u n

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- Whether some listed host's cache holds `x`. -/
noncomputable def cachedOn (hosts : List H) (S : H → List α) (x : α) : Bool :=
  hosts.any fun h => decide (x ∈ S h)

-- noncomputable: calls `jointStep` and `cachedOn`.
/-- The number of requests `(g, y)` that, during the per-host run from caches `S`, miss on
their own host `g` while some listed host caches `y`. -/
noncomputable def missesCachedElsewhere (P : H → Policy α) (hosts : List H) :
    (H → List α) → List (H × α) → Nat
  | _, [] => 0
  | S, (g, y) :: u =>
    (if y ∈ S g then 0 else if cachedOn hosts S y then 1 else 0) +
      missesCachedElsewhere P hosts (jointStep P S g y u) u

-- noncomputable: `∈` and `List.length` have no compiled code in the registry Lean.
/-- The pooled policy that mirrors per-host caches: on a request for `x` with future `f`, fetch
`x` if it is not cached, then keep exactly the blocks that some listed host caches in
`view f.length`. -/
noncomputable def follow (hosts : List H) (view : Nat → H → List α) : Policy α :=
  ⟨fun c x f => (if x ∈ c then c else x :: c).filter (cachedOn hosts (view f.length))⟩

-- noncomputable: `++` (`List.append`) has no compiled code in the registry Lean.
/-- The per-host caches of the listed hosts, concatenated. -/
noncomputable def cacheUnion (S : H → List α) : List H → List α
  | [] => []
  | h :: hs => S h ++ cacheUnion S hs

/-- The pool mirrors the per-host caches: it is duplicate-free and holds exactly the blocks that
some listed host caches. -/
def Mirrors (hosts : List H) (S : H → List α) (c : List α) : Prop :=
  c.Nodup ∧ ∀ x, x ∈ c ↔ ∃ h ∈ hosts, x ∈ S h

/-! ## Small lemmas -/

omit [DecidableEq H] in
/-- `cachedOn` says that some listed host caches the block. -/
theorem cachedOn_iff (hosts : List H) (S : H → List α) (x : α) :
    cachedOn hosts S x = true ↔ ∃ h ∈ hosts, x ∈ S h := by
  simp [cachedOn, List.any_eq_true]

omit [DecidableEq α] [DecidableEq H] in
/-- A block is in the concatenated caches exactly when some listed host caches it. -/
theorem mem_cacheUnion (S : H → List α) (x : α) :
    ∀ hs : List H, x ∈ cacheUnion S hs ↔ ∃ h ∈ hs, x ∈ S h
  | [] => by simp [cacheUnion]
  | h :: hs => by simp [cacheUnion, mem_cacheUnion S x hs]

omit [DecidableEq α] [DecidableEq H] in
/-- The concatenated caches hold the summed cache sizes. -/
theorem length_cacheUnion (S : H → List α) :
    ∀ hs : List H, (cacheUnion S hs).length = sumOver (fun h => (S h).length) hs
  | [] => rfl
  | h :: hs => by simp [cacheUnion, sumOver, length_cacheUnion S hs]

omit [DecidableEq H] in
/-- A sum over hosts is monotone in its summand. -/
theorem sumOver_le_sumOver (f g : H → Nat) :
    ∀ hs : List H, (∀ h ∈ hs, f h ≤ g h) → sumOver f hs ≤ sumOver g hs
  | [], _ => Nat.le_refl _
  | h :: hs, hle => by
    have h1 := hle h List.mem_cons_self
    have h2 := sumOver_le_sumOver f g hs (fun k hk => hle k (List.mem_cons_of_mem _ hk))
    simp only [sumOver]
    omega

/-- A listed host's term alone is at most the sum of the terms that are zero off that host. -/
theorem le_sumOver_ite (g : H) (a : Nat) :
    ∀ hs : List H, g ∈ hs → a ≤ sumOver (fun h => if h = g then a else 0) hs
  | [], hg => absurd hg List.not_mem_nil
  | h :: hs, hg => by
    simp only [sumOver]
    by_cases e : h = g
    · rw [if_pos e]; omega
    · rw [if_neg e]
      have := le_sumOver_ite g a hs ((List.mem_cons.mp hg).resolve_left (fun x => e x.symm))
      omega

/-- A host not listed contributes nothing. -/
theorem sumOver_ite_of_not_mem (g : H) (a : Nat) :
    ∀ hs : List H, g ∉ hs → sumOver (fun h => if h = g then a else 0) hs = 0
  | [], _ => rfl
  | h :: hs, hg => by
    simp only [sumOver]
    have e : ¬ h = g := fun x => hg (List.mem_cons.mpr (Or.inl x.symm))
    rw [if_neg e, sumOver_ite_of_not_mem g a hs (fun x => hg (List.mem_cons_of_mem _ x))]

/-- A host listed once contributes its term once. -/
theorem sumOver_ite_of_nodup (g : H) (a : Nat) :
    ∀ hs : List H, hs.Nodup → g ∈ hs → sumOver (fun h => if h = g then a else 0) hs = a
  | [], _, hg => absurd hg List.not_mem_nil
  | h :: hs, hnd, hg => by
    simp only [sumOver]
    have hh := (List.nodup_cons.mp hnd).1
    by_cases e : h = g
    · rw [if_pos e, sumOver_ite_of_not_mem g a hs (by rw [← e]; exact hh)]
      omega
    · rw [if_neg e, sumOver_ite_of_nodup g a hs (List.nodup_cons.mp hnd).2
        ((List.mem_cons.mp hg).resolve_left (fun x => e x.symm))]
      omega

omit [DecidableEq α] [DecidableEq H] in
/-- The block stream is as long as the trace. -/
theorem length_blocks : ∀ t : List (H × α), (blocks t).length = t.length
  | [] => rfl
  | (_, _) :: t => by simp [blocks, length_blocks t]

omit [DecidableEq α] in
/-- The serving host's cache takes one step of its policy. -/
theorem jointStep_self (P : H → Policy α) (S : H → List α) (g : H) (y : α)
    (u : List (H × α)) : jointStep P S g y u g = (P g).step (S g) y (onHost g u) := by
  simp [jointStep]

omit [DecidableEq α] in
/-- Every other host keeps its cache. -/
theorem jointStep_of_ne (P : H → Policy α) (S : H → List α) (g h : H) (y : α)
    (u : List (H × α)) (e : h ≠ g) : jointStep P S g y u h = S h := by
  simp [jointStep, e]

omit [DecidableEq α] in
/-- The serving host's sub-stream starts with the request. -/
theorem onHost_cons_self (g : H) (y : α) (u : List (H × α)) :
    onHost g ((g, y) :: u) = y :: onHost g u := by
  simp [onHost]

omit [DecidableEq α] in
/-- Another host's sub-stream does not see the request. -/
theorem onHost_cons_of_ne (g h : H) (y : α) (u : List (H × α)) (e : h ≠ g) :
    onHost h ((g, y) :: u) = onHost h u := by
  simp [onHost, Ne.symm e]

/-- One host's misses on a trace starting with `(g, y)`: the request's miss if `h = g`, then the
rest from the per-host caches after the request. -/
theorem host_misses_cons (P : H → Policy α) (S : H → List α) (g h : H) (y : α)
    (u : List (H × α)) :
    misses (P h) (S h) (onHost h ((g, y) :: u)) =
      (if h = g then (if y ∈ S g then 0 else 1) else 0) +
        misses (P h) (jointStep P S g y u h) (onHost h u) := by
  by_cases e : h = g
  · subst e
    rw [onHost_cons_self, misses_cons, jointStep_self, if_pos rfl]
  · rw [onHost_cons_of_ne g h y u e, jointStep_of_ne P S g h y u e, if_neg e, Nat.zero_add]

/-- The per-host misses, summed, on a trace starting with `(g, y)`: the request's miss once per
listing of `g`, then the rest from the per-host caches after the request. -/
theorem sumOver_misses_cons (P : H → Policy α) (S : H → List α) (g : H) (y : α)
    (u : List (H × α)) : ∀ hs : List H,
    sumOver (fun h => misses (P h) (S h) (onHost h ((g, y) :: u))) hs =
      sumOver (fun h => if h = g then (if y ∈ S g then 0 else 1) else 0) hs +
        sumOver (fun h => misses (P h) (jointStep P S g y u h) (onHost h u)) hs
  | [] => rfl
  | h :: hs => by
    simp only [sumOver]
    rw [host_misses_cons P S g h y u, sumOver_misses_cons P S g y u hs]
    omega

omit [DecidableEq H] in
/-- A pool that mirrors caches of at most `cap h` blocks holds at most `sumOver cap hosts`. -/
theorem length_le_of_mirrors (hosts : List H) (S : H → List α) (c : List α) (cap : H → Nat)
    (hm : Mirrors hosts S c) (hcap : ∀ h ∈ hosts, (S h).length ≤ cap h) :
    c.length ≤ sumOver cap hosts := by
  have h1 : c.length ≤ (cacheUnion S hosts).length :=
    length_le_of_nodup_of_subset c _ hm.1
      (fun x hx => (mem_cacheUnion S x hosts).mpr ((hm.2 x).mp hx))
  rw [length_cacheUnion] at h1
  exact Nat.le_trans h1 (sumOver_le_sumOver _ _ hosts hcap)

/-! ## The pool mirrors the hosts -/

omit [DecidableEq H] in
/-- **`follow` is a demand-fetch policy**, whatever it is told the hosts cache. -/
theorem follow_demandFetch (hosts : List H) (view : Nat → H → List α) :
    DemandFetch (follow hosts view) := by
  intro c b f x hx
  change x ∈ (if b ∈ c then c else b :: c).filter (cachedOn hosts (view f.length)) at hx
  have hx' := (List.mem_filter.mp hx).1
  by_cases hb : b ∈ c
  · rw [if_pos hb] at hx'; exact Or.inr hx'
  · rw [if_neg hb] at hx'; exact List.mem_cons.mp hx'

/-- One request keeps the pool mirroring the hosts, when `follow` is told the hosts' caches
after the request and the serving host runs a demand-fetch policy. -/
theorem mirrors_step (P : H → Policy α) (hosts : List H) (view : Nat → H → List α)
    (S : H → List α) (c : List α) (g : H) (y : α) (u : List (H × α)) (hg : g ∈ hosts)
    (hPg : DemandFetch (P g)) (hview : view (blocks u).length = jointStep P S g y u)
    (hm : Mirrors hosts S c) :
    Mirrors hosts (jointStep P S g y u) ((follow hosts view).step c y (blocks u)) := by
  obtain ⟨hnd, hmem⟩ := hm
  have hstep : (follow hosts view).step c y (blocks u) =
      (if y ∈ c then c else y :: c).filter (cachedOn hosts (jointStep P S g y u)) := by
    show (if y ∈ c then c else y :: c).filter (cachedOn hosts (view (blocks u).length)) = _
    rw [hview]
  rw [hstep]
  -- `Nodup` is `Pairwise (· ≠ ·)`, which filtering keeps
  refine ⟨List.Pairwise.filter _ ?_, fun x => ?_⟩
  · by_cases hy : y ∈ c
    · rw [if_pos hy]; exact hnd
    · rw [if_neg hy]; exact List.nodup_cons.mpr ⟨hy, hnd⟩
  · rw [List.mem_filter, cachedOn_iff]
    constructor
    · exact fun h => h.2
    · intro hx
      refine ⟨?_, hx⟩
      obtain ⟨h, hh, hxh⟩ := hx
      have hx' : x = y ∨ x ∈ c := by
        by_cases e : h = g
        · rw [e, jointStep_self] at hxh
          rcases hPg _ _ _ x hxh with e' | e'
          · exact Or.inl e'
          · exact Or.inr ((hmem x).mpr ⟨g, hg, e'⟩)
        · rw [jointStep_of_ne P S g h y u e] at hxh
          exact Or.inr ((hmem x).mpr ⟨h, hh, hxh⟩)
      by_cases hy : y ∈ c
      · rw [if_pos hy]
        rcases hx' with e | e
        · rw [e]; exact hy
        · exact e
      · rw [if_neg hy]; exact List.mem_cons.mpr hx'

/-- **The pool simulates the hosts.** Serving `u` from per-host caches `S` (each listed host
with a demand-fetch policy whose run fits `cap h`) and from a pool `c` that mirrors them,
with `follow` told the per-host caches after each request: every pool state fits in
`sumOver cap hosts`; the pool's misses plus the requests that miss on their host while another
listed host caches the block are at most the per-host misses summed, and exactly that sum
when no host is listed twice. -/
theorem follow_simulates (P : H → Policy α) (hosts : List H)
    (hP : ∀ h ∈ hosts, DemandFetch (P h)) (cap : H → Nat) (view : Nat → H → List α) :
    ∀ (u : List (H × α)) (S : H → List α) (c : List α),
      (∀ p ∈ u, p.1 ∈ hosts) → (∀ n < u.length, view n = hostsAfter P S u n) →
      Mirrors hosts S c →
      (∀ h ∈ hosts, ∀ s ∈ states (P h) (S h) (onHost h u), s.length ≤ cap h) →
      (∀ s ∈ states (follow hosts view) c (blocks u), s.length ≤ sumOver cap hosts) ∧
      misses (follow hosts view) c (blocks u) + missesCachedElsewhere P hosts S u ≤
        sumOver (fun h => misses (P h) (S h) (onHost h u)) hosts ∧
      (hosts.Nodup → misses (follow hosts view) c (blocks u) + missesCachedElsewhere P hosts S u =
        sumOver (fun h => misses (P h) (S h) (onHost h u)) hosts)
  | [], S, c, _, _, hm, hfit => by
    have hzero : ∀ hs : List H, sumOver (fun h => misses (P h) (S h) (onHost h [])) hs = 0 := by
      intro hs
      induction hs with
      | nil => rfl
      | cons h hs ih => simp only [sumOver]; rw [ih]; rfl
    refine ⟨?_, ?_, ?_⟩
    · intro s hs
      simp only [blocks, states, List.mem_cons, List.not_mem_nil, or_false] at hs
      rw [hs]
      exact length_le_of_mirrors hosts S c cap hm
        (fun h hh => hfit h hh (S h) (mem_states_self _ _ _))
    · rw [hzero]; exact Nat.le_refl 0
    · intro _; rw [hzero]; rfl
  | (g, y) :: u, S, c, hcov, hview, hm, hfit => by
    have hg : g ∈ hosts := hcov (g, y) List.mem_cons_self
    have hv : view (blocks u).length = jointStep P S g y u := by
      rw [length_blocks, hview u.length (by simp)]
      simp [hostsAfter]
    have hm' := mirrors_step P hosts view S c g y u hg (hP g hg) hv hm
    have hview' : ∀ n < u.length, view n = hostsAfter P (jointStep P S g y u) u n := by
      intro n hn
      rw [hview n (by simp; omega)]
      simp only [hostsAfter]
      rw [if_neg (by omega)]
    have hfit' : ∀ h ∈ hosts, ∀ s ∈ states (P h) (jointStep P S g y u h) (onHost h u),
        s.length ≤ cap h := by
      intro h hh s hs
      apply hfit h hh s
      by_cases e : h = g
      · rw [e] at hs ⊢
        rw [jointStep_self] at hs
        rw [onHost_cons_self]
        exact List.mem_cons_of_mem _ hs
      · rw [jointStep_of_ne P S g h y u e] at hs
        rw [onHost_cons_of_ne g h y u e]
        exact hs
    obtain ⟨ihfit, ihle, iheq⟩ := follow_simulates P hosts hP cap view u _ _
      (fun p hp => hcov p (List.mem_cons_of_mem _ hp)) hview' hm' hfit'
    -- the pool misses `y` exactly when no listed host caches it
    have hyc : y ∈ c ↔ cachedOn hosts S y = true := by rw [cachedOn_iff]; exact hm.2 y
    have hgc : y ∈ S g → y ∈ c := fun h => (hm.2 y).mpr ⟨g, hg, h⟩
    have hsplit : (if y ∈ c then 0 else 1) +
        (if y ∈ S g then 0 else if cachedOn hosts S y then 1 else 0) =
        (if y ∈ S g then 0 else 1) := by
      by_cases hyg : y ∈ S g
      · simp only [if_pos (hgc hyg), if_pos hyg]
      · simp only [if_neg hyg]
        by_cases hy : y ∈ c
        · rw [if_pos hy, if_pos (hyc.mp hy)]
        · have : ¬ cachedOn hosts S y = true := fun h => hy (hyc.mpr h)
          rw [if_neg hy, if_neg this]
    have hind := le_sumOver_ite g (if y ∈ S g then 0 else 1) hosts hg
    have hblocks : blocks ((g, y) :: u) = y :: blocks u := rfl
    have hcross : missesCachedElsewhere P hosts S ((g, y) :: u) =
        (if y ∈ S g then 0 else if cachedOn hosts S y then 1 else 0) +
          missesCachedElsewhere P hosts (jointStep P S g y u) u := rfl
    rw [hblocks, misses_cons, sumOver_misses_cons, hcross]
    refine ⟨?_, by omega, ?_⟩
    · intro s hs
      simp only [states, List.mem_cons] at hs
      rcases hs with hs | hs
      · rw [hs]
        exact length_le_of_mirrors hosts S c cap hm
          (fun h hh => hfit h hh (S h) (mem_states_self _ _ _))
      · exact ihfit s hs
    · intro hnd
      have hone := sumOver_ite_of_nodup g (if y ∈ S g then 0 else 1) hosts hnd hg
      have := iheq hnd
      omega

/-! ## The headline -/

/-- **A pooled cache with the summed capacity simulates per-instance caching.** For every
routed trace whose requests go to listed hosts, and every family of demand-fetch policies
`P h` whose runs fit capacities `cap h`, some demand-fetch pooled policy whose run fits
`sumOver cap hosts` misses no more than the per-instance caches, summed over the hosts;
strictly fewer when some request misses on its own host while some listed host caches its
block; and, when no host is listed twice, exactly that many fewer. -/
theorem pooled_simulates_perInstance (P : H → Policy α) (hosts : List H) (cap : H → Nat)
    (t : List (H × α)) (hcov : ∀ p ∈ t, p.1 ∈ hosts)
    (hP : ∀ h ∈ hosts, DemandFetch (P h))
    (hfit : ∀ h ∈ hosts, FitsIn (cap h) (P h) (onHost h t)) :
    ∃ Q : Policy α, DemandFetch Q ∧ FitsIn (sumOver cap hosts) Q (blocks t) ∧
      pooledMisses Q t ≤ perInstanceMisses P hosts t ∧
      (0 < missesCachedElsewhere P hosts (fun _ => []) t →
        pooledMisses Q t < perInstanceMisses P hosts t) ∧
      (hosts.Nodup → pooledMisses Q t + missesCachedElsewhere P hosts (fun _ => []) t =
        perInstanceMisses P hosts t) := by
  have hm : Mirrors hosts (fun _ => ([] : List α)) [] :=
    ⟨List.nodup_nil, fun x => by simp⟩
  obtain ⟨hQfit, hle, heq⟩ := follow_simulates P hosts hP cap (hostsAfter P (fun _ => []) t) t
    (fun _ => []) [] hcov (fun _ _ => rfl) hm hfit
  refine ⟨follow hosts (hostsAfter P (fun _ => []) t), follow_demandFetch _ _, hQfit, ?_, ?_,
    heq⟩
  · unfold pooledMisses perInstanceMisses
    omega
  · intro hpos
    unfold pooledMisses perInstanceMisses
    omega

/-- **Every pooled lower bound bounds every routing.** If every demand-fetch pooled policy
whose run fits `sumOver cap hosts` misses at least `m` times on the block stream of `t`, then
per-instance caches (demand-fetch policies `P h` fitting `cap h`, requests to listed hosts)
miss at least `m` times too. -/
theorem perInstanceMisses_ge_of_pooled_bound (P : H → Policy α) (hosts : List H)
    (cap : H → Nat) (t : List (H × α)) (hcov : ∀ p ∈ t, p.1 ∈ hosts)
    (hP : ∀ h ∈ hosts, DemandFetch (P h))
    (hfit : ∀ h ∈ hosts, FitsIn (cap h) (P h) (onHost h t)) (m : Nat)
    (hbound : ∀ Q : Policy α, DemandFetch Q → FitsIn (sumOver cap hosts) Q (blocks t) →
      m ≤ pooledMisses Q t) :
    m ≤ perInstanceMisses P hosts t := by
  obtain ⟨Q, hQ, hQfit, hle, _⟩ := pooled_simulates_perInstance P hosts cap t hcov hP hfit
  exact Nat.le_trans (hbound Q hQ hQfit) hle

/-- **Pooled Belady bounds every routing.** For every trace whose requests go to listed hosts
and every family of demand-fetch policies `P h` whose runs fit capacities `cap h`, the
per-instance caches miss at least as often as Belady with bypass run as one pooled cache of
capacity `sumOver cap hosts` on the block stream: `(blocks t).length - bhits (sumOver cap
hosts) beladyBypass (blocks t)` times. -/
theorem perInstanceMisses_ge_pooled_beladyBypass (P : H → Policy α) (hosts : List H)
    (cap : H → Nat) (t : List (H × α)) (hcov : ∀ p ∈ t, p.1 ∈ hosts)
    (hP : ∀ h ∈ hosts, DemandFetch (P h))
    (hfit : ∀ h ∈ hosts, FitsIn (cap h) (P h) (onHost h t)) :
    (blocks t).length - Ceiling.bhits (sumOver cap hosts) Ceiling.beladyBypass (blocks t) ≤
      perInstanceMisses P hosts t :=
  perInstanceMisses_ge_of_pooled_bound P hosts cap t hcov hP hfit _
    (fun Q hQ hQfit => (beladyBypass_demandFetch_optimal _ _).2 Q hQ hQfit)

/-- A concrete witness of the strict case: two hosts each keeping every block, block 1
requested on host 0 then on host 1. Host 1 misses block 1 while host 0 caches it (one such
request); the per-instance caches miss twice, the mirroring pool once (checked by `decide`). -/
theorem missesCachedElsewhere_example :
    missesCachedElsewhere (fun _ => (keepAll : Policy Nat)) [0, 1] (fun _ => [])
        ([(0, 1), (1, 1)] : List (Nat × Nat)) = 1 ∧
      perInstanceMisses (fun _ => (keepAll : Policy Nat)) [0, 1]
        ([(0, 1), (1, 1)] : List (Nat × Nat)) = 2 ∧
      pooledMisses (follow [0, 1] (hostsAfter (fun _ => (keepAll : Policy Nat)) (fun _ => [])
        ([(0, 1), (1, 1)] : List (Nat × Nat)))) ([(0, 1), (1, 1)] : List (Nat × Nat)) = 1 := by
  decide

end KVCache.Placement

end
