module

public import Proofs.Placement.Simulation

/-!
# Pooled placement with its price: remote hits cost `r`, misses cost `m`

`Proofs.Placement.Simulation` counts a block held by another host as a free hit. This file
charges for it: serving a request on its own host's memory costs `0`, fetching the block from
another host's memory costs `r` (a remote hit: a transfer), and a miss costs `m` (recomputing
the prefix); `r` and `m` are any naturals, `r ≤ m` and `r > m` both allowed.

## The model
A pooled KV store is memory on the hosts that every host can read. Its state is a layout
`S : H → List α` (the blocks held in host `h`'s memory); a request `(g, y)` costs `0` if `y`
is in host `g`'s memory, `r` if some other listed host holds it, `m` otherwise
(`layoutCost`). A layout policy `L S g y u` is the layout after serving `(g, y)` with future
`u` (`LayoutDemandFetch`: a host's memory afterwards holds only `y` and blocks the pool held;
`LayoutFits`: every host's memory stays within `cap h` on the run from cold).

Per-host caches are the same hardware without remote reads: each request missing on its host
costs `m` (`m * perInstanceMisses`). The witness pool is `jointStep P`: the blocks stay where
the hosts' own policies `P h` put them, and a request missing on its host while another host
holds the block reads it remotely (cost `r`) instead of recomputing it (cost `m`). Those
requests are `missesCachedElsewhere` of `Proofs.Placement.Simulation`.

## What is proved
* `layoutCost_jointStep`: on the per-host run, per-request accounting: the pool's cost plus
  `m` per remote hit is `r` per remote hit plus `m` per request missing on its host.
* `pooled_cost_le_perInstance_cost` (headline): for every routed trace (every routing) whose
  requests go to listed hosts (each listed once), and every family of demand-fetch policies
  `P h` fitting `cap h`, some demand-fetch pooled layout policy fitting every host's capacity
  has, with `e := missesCachedElsewhere P hosts (fun _ => []) t`:
  - when `r ≤ m`: cost `+ (m - r) * e = m * perInstanceMisses` (exact), hence cost at most
    the per-host cost `m * perInstanceMisses`;
  - when `m < r`: cost `= m * perInstanceMisses + (r - m) * e` (remote hits make it dearer);
  - for all `r`, `m`: the same pool declining remote hits dearer than a miss (each remote hit
    charged `min r m`: recompute when that is cheaper) costs at most `m * perInstanceMisses`;
  - its misses are those of the mirroring pool of `pooled_simulates_perInstance`: cost
    `= r * e + m * pooledMisses Q t`.
  So the pooled offline optimum (the least cost over pooled layout policies) is at most every
  routing's per-host cost when `r ≤ m`, and when `r > m` for a pool that declines remote hits.

What is not proved: that a pooled store run online (LRU, say) costs less than per-host caches
(`Proofs.Placement.Scan` has a family where pooled LRU misses more); block sizes; bandwidth
limits, queueing or latency beyond the per-block prices `r` and `m`.
-/

@[expose] public section

namespace KVCache.Placement

open KVCache.Common

variable {α : Type} [DecidableEq α] {H : Type} [DecidableEq H]

/-! ## Layouts and their price -/

/-- A pooled layout policy: from the layout `S` (the blocks in each host's memory), a request
for `y` arriving on host `g` and the future requests `u`, the layout after serving it. -/
abbrev LayoutPolicy (H α : Type) : Type :=
  (H → List α) → H → α → List (H × α) → H → List α

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- The cost of serving a routed trace from layout `S` with layout policy `L`: a request
`(g, y)` costs `0` if host `g`'s memory holds `y`, `r` if another listed host's memory holds
it (a remote hit), `m` otherwise (a miss). -/
noncomputable def layoutCost (r m : Nat) (hosts : List H) (L : LayoutPolicy H α) :
    (H → List α) → List (H × α) → Nat
  | _, [] => 0
  | S, (g, y) :: u =>
    (if y ∈ S g then 0 else if cachedOn hosts S y then r else m) +
      layoutCost r m hosts L (L S g y u) u

/-- The successive layouts while serving a routed trace with `L` from `S` (first and last
included). -/
def layouts (L : LayoutPolicy H α) : (H → List α) → List (H × α) → List (H → List α)
  | S, [] => [S]
  | S, (g, y) :: u => S :: layouts L (L S g y u) u

/-- Demand fetch for a pooled layout: after a request for `y` on a listed host, each listed
host's memory holds only `y` and blocks that some listed host held before. -/
def LayoutDemandFetch (hosts : List H) (L : LayoutPolicy H α) : Prop :=
  ∀ (S : H → List α) (g : H) (y : α) (u : List (H × α)), g ∈ hosts → ∀ h ∈ hosts,
    ∀ x ∈ L S g y u h, x = y ∨ ∃ h' ∈ hosts, x ∈ S h'

/-- The run of `L` on `t` from empty memories never holds more than `cap h` blocks on a
listed host `h` (so never more than `sumOver cap hosts` in all). -/
def LayoutFits (hosts : List H) (cap : H → Nat) (L : LayoutPolicy H α) (t : List (H × α)) :
    Prop :=
  ∀ S ∈ layouts L (fun _ => []) t, ∀ h ∈ hosts, (S h).length ≤ cap h

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- The number of requests `(g, y)` of the per-host run from caches `S` that miss on their own
host `g`. -/
noncomputable def ownMisses (P : H → Policy α) : (H → List α) → List (H × α) → Nat
  | _, [] => 0
  | S, (g, y) :: u => (if y ∈ S g then 0 else 1) + ownMisses P (jointStep P S g y u) u

/-! ## The per-host layout, priced -/

/-- **Per-request accounting of the per-host layout.** Serving `u` from per-host caches `S`
with remote reads, plus `m` per request that misses on its host while another listed host
holds the block, costs `r` per such request plus `m` per request missing on its host. -/
theorem layoutCost_jointStep (r m : Nat) (P : H → Policy α) (hosts : List H) :
    ∀ (S : H → List α) (u : List (H × α)),
      layoutCost r m hosts (jointStep P) S u + m * missesCachedElsewhere P hosts S u =
        r * missesCachedElsewhere P hosts S u + m * ownMisses P S u
  | _, [] => by simp [layoutCost, missesCachedElsewhere, ownMisses]
  | S, (g, y) :: u => by
    have ih := layoutCost_jointStep r m P hosts (jointStep P S g y u) u
    simp only [layoutCost, missesCachedElsewhere, ownMisses, Nat.mul_add]
    by_cases hy : y ∈ S g
    · simp only [hy, if_true, Nat.mul_zero]
      omega
    · simp only [hy, if_false, Nat.mul_one]
      by_cases hc : cachedOn hosts S y = true
      · simp only [hc, if_true, Nat.mul_one]
        omega
      · simp only [hc, if_false, Nat.mul_zero, Bool.false_eq_true]
        omega

/-- Requests missing on their host while another host holds the block are among the requests
missing on their host. -/
theorem missesCachedElsewhere_le_ownMisses (P : H → Policy α) (hosts : List H) :
    ∀ (S : H → List α) (u : List (H × α)),
      missesCachedElsewhere P hosts S u ≤ ownMisses P S u
  | _, [] => Nat.le_refl 0
  | S, (g, y) :: u => by
    have ih := missesCachedElsewhere_le_ownMisses P hosts (jointStep P S g y u) u
    simp only [missesCachedElsewhere, ownMisses]
    by_cases hy : y ∈ S g
    · simp only [hy, if_true]
      omega
    · simp only [hy, if_false]
      split <;> omega

/-- With each host listed once and every request on a listed host, the requests missing on
their host are the per-host misses summed. -/
theorem ownMisses_eq_sumOver (P : H → Policy α) (hosts : List H) (hnd : hosts.Nodup) :
    ∀ (S : H → List α) (u : List (H × α)), (∀ p ∈ u, p.1 ∈ hosts) →
      ownMisses P S u = sumOver (fun h => misses (P h) (S h) (onHost h u)) hosts
  | S, [], _ => by
    have hzero : ∀ hs : List H, sumOver (fun h => misses (P h) (S h) (onHost h [])) hs = 0 := by
      intro hs
      induction hs with
      | nil => rfl
      | cons h hs ih => simp only [sumOver]; rw [ih]; rfl
    rw [hzero]; rfl
  | S, (g, y) :: u, hcov => by
    have hg : g ∈ hosts := hcov (g, y) List.mem_cons_self
    have ih := ownMisses_eq_sumOver P hosts hnd (jointStep P S g y u) u
      (fun p hp => hcov p (List.mem_cons_of_mem _ hp))
    rw [sumOver_misses_cons, sumOver_ite_of_nodup g _ hosts hnd hg, ← ih]
    rfl

omit [DecidableEq α] in
/-- The per-host caches' run is a run of demand-fetch layouts. -/
theorem jointStep_layoutDemandFetch (P : H → Policy α) (hosts : List H)
    (hP : ∀ h ∈ hosts, DemandFetch (P h)) : LayoutDemandFetch hosts (jointStep P) := by
  intro S g y u hg h hh x hx
  by_cases e : h = g
  · rw [e, jointStep_self] at hx
    exact (hP g hg _ _ _ x hx).imp_right fun hx' => ⟨g, hg, hx'⟩
  · rw [jointStep_of_ne P S g h y u e] at hx
    exact Or.inr ⟨h, hh, hx⟩

omit [DecidableEq α] in
/-- The layouts of the per-host run fit every host's capacity when each host's own run does. -/
theorem jointStep_layouts_fit (P : H → Policy α) (hosts : List H) (cap : H → Nat) :
    ∀ (u : List (H × α)) (S : H → List α),
      (∀ h ∈ hosts, ∀ s ∈ states (P h) (S h) (onHost h u), s.length ≤ cap h) →
      ∀ T ∈ layouts (jointStep P) S u, ∀ h ∈ hosts, (T h).length ≤ cap h
  | [], S, hfit, T, hT, h, hh => by
    simp only [layouts, List.mem_cons, List.not_mem_nil, or_false] at hT
    rw [hT]
    exact hfit h hh (S h) (mem_states_self _ _ _)
  | (g, y) :: u, S, hfit, T, hT, h, hh => by
    simp only [layouts, List.mem_cons] at hT
    rcases hT with e | e
    · rw [e]
      exact hfit h hh (S h) (mem_states_self _ _ _)
    · refine jointStep_layouts_fit P hosts cap u _ ?_ T e h hh
      intro k hk s hs
      apply hfit k hk s
      by_cases e' : k = g
      · rw [e'] at hs ⊢
        rw [jointStep_self] at hs
        rw [onHost_cons_self]
        exact List.mem_cons_of_mem _ hs
      · rw [jointStep_of_ne P S g k y u e'] at hs
        rw [onHost_cons_of_ne g k y u e']
        exact hs

/-! ## The headline -/

/-- **A pooled layout against per-host caches, priced, under every routing.** For every
routed trace whose requests go to listed hosts (each listed once), and every family of
demand-fetch policies `P h` whose runs fit capacities `cap h`, some demand-fetch pooled layout
policy fitting every host's capacity has, with `e` the requests that miss on their host while
another listed host caches the block: cost plus `(m - r) * e` equal to the per-host cost
`m * perInstanceMisses` when `r ≤ m` (so at most it); cost `m * perInstanceMisses +
(r - m) * e` when `m < r`; cost at most `m * perInstanceMisses` for every `r` and `m` when each
remote hit is charged `min r m` (declined when dearer than a miss); and cost `r * e + m *`
the misses of the mirroring pool `Q` of `pooled_simulates_perInstance`. -/
theorem pooled_cost_le_perInstance_cost (P : H → Policy α) (hosts : List H) (cap : H → Nat)
    (t : List (H × α)) (hnd : hosts.Nodup) (hcov : ∀ p ∈ t, p.1 ∈ hosts)
    (hP : ∀ h ∈ hosts, DemandFetch (P h))
    (hfit : ∀ h ∈ hosts, FitsIn (cap h) (P h) (onHost h t)) :
    ∃ L : LayoutPolicy H α, LayoutDemandFetch hosts L ∧ LayoutFits hosts cap L t ∧
      (∀ r m : Nat, r ≤ m →
        layoutCost r m hosts L (fun _ => []) t +
            (m - r) * missesCachedElsewhere P hosts (fun _ => []) t =
          m * perInstanceMisses P hosts t ∧
        layoutCost r m hosts L (fun _ => []) t ≤ m * perInstanceMisses P hosts t) ∧
      (∀ r m : Nat, m < r →
        layoutCost r m hosts L (fun _ => []) t =
          m * perInstanceMisses P hosts t +
            (r - m) * missesCachedElsewhere P hosts (fun _ => []) t) ∧
      (∀ r m : Nat,
        layoutCost (min r m) m hosts L (fun _ => []) t ≤ m * perInstanceMisses P hosts t) ∧
      (∀ r m : Nat, layoutCost r m hosts L (fun _ => []) t =
        r * missesCachedElsewhere P hosts (fun _ => []) t +
          m * pooledMisses (follow hosts (hostsAfter P (fun _ => []) t)) t) := by
  have hown := ownMisses_eq_sumOver P hosts hnd (fun _ => []) t hcov
  have hle := missesCachedElsewhere_le_ownMisses P hosts (fun _ => []) t
  have hsim := (follow_simulates P hosts hP cap (hostsAfter P (fun _ => []) t) t
    (fun _ => []) [] hcov (fun _ _ => rfl) ⟨List.nodup_nil, fun x => by simp⟩ hfit).2.2 hnd
  have hacc := fun r m => layoutCost_jointStep r m P hosts (fun _ => []) t
  have hper : perInstanceMisses P hosts t = ownMisses P (fun _ => []) t := hown.symm
  have hpool : pooledMisses (follow hosts (hostsAfter P (fun _ => []) t)) t +
      missesCachedElsewhere P hosts (fun _ => []) t = ownMisses P (fun _ => []) t :=
    hsim.trans hown.symm
  rw [hper]
  refine ⟨jointStep P, jointStep_layoutDemandFetch P hosts hP,
    jointStep_layouts_fit P hosts cap t _ hfit, fun r m hrm => ?_, fun r m hmr => ?_,
    fun r m => ?_, fun r m => ?_⟩
  · have h1 := hacc r m
    generalize missesCachedElsewhere P hosts (fun _ => []) t = e at h1 hle ⊢
    generalize ownMisses P (fun _ => []) t = o at h1 hle ⊢
    have h2 : (m - r) * e = m * e - r * e := Nat.sub_mul m r e
    have h3 : r * e ≤ m * e := Nat.mul_le_mul_right e hrm
    have h4 : m * e ≤ m * o := Nat.mul_le_mul_left m hle
    omega
  · have h1 := hacc r m
    generalize missesCachedElsewhere P hosts (fun _ => []) t = e at h1 hle ⊢
    generalize ownMisses P (fun _ => []) t = o at h1 hle ⊢
    have h2 : (r - m) * e = r * e - m * e := Nat.sub_mul r m e
    have h3 : m * e ≤ r * e := Nat.mul_le_mul_right e (Nat.le_of_lt hmr)
    omega
  · have h1 := hacc (min r m) m
    generalize missesCachedElsewhere P hosts (fun _ => []) t = e at h1 hle ⊢
    generalize ownMisses P (fun _ => []) t = o at h1 hle ⊢
    have h3 : min r m * e ≤ m * e := Nat.mul_le_mul_right e (Nat.min_le_right r m)
    omega
  · have h1 := hacc r m
    have h4 : m * (pooledMisses (follow hosts (hostsAfter P (fun _ => []) t)) t +
        missesCachedElsewhere P hosts (fun _ => []) t) = m * ownMisses P (fun _ => []) t := by
      rw [hpool]
    rw [Nat.mul_add] at h4
    omega

end KVCache.Placement

end
