module

public import Proofs.Ceiling.Prefix
public import Proofs.Ceiling.Mooncake
public import Proofs.Ceiling.MooncakeTrace

/-!
# The Mooncake ceilings bound every prefix cache

The kernel-checked counts of the Mooncake trace (`Proofs.Ceiling.Mooncake`, the window of
lines 1201–2000 from an empty cache; `Proofs.Ceiling.MooncakeTrace`, the same window after
lines 1–1200, and the whole trace) bound every flat demand-fetch policy. Through
`runHits_add_distinct_le_length` and `runHits_add_distinctFrom_le` (`Proofs.Ceiling.Prefix`)
the same numbers bound every prefix (radix) cache, at every capacity, for every chained ids
`parent` and every way of cutting the stream into requests: any policy, online or offline,
with or without bypass. Nothing is recounted here: the theorems reuse the counts.

* `window_prefix_hits_le`, `window_prefix_hit_rate_le_ceiling`: the window from an empty cache.
* `warm_window_prefix_hits_le`, `warm_window_prefix_hit_rate_le_ceiling`: the window from any
  cache holding only blocks of lines 1–1200; a prefix run over lines 1–1200 leaves such caches
  (`mem_of_prefixRun`).
* `prefix_hit_rate_le_ceiling`: the whole trace from an empty cache.
-/

@[expose] public section

namespace KVCache.Ceiling.Mooncake

/-- Every prefix-cache run at every capacity, from an empty cache, over requests whose blocks
one after another are the window, has at most `windowReferences - windowDistinct` prefix
hits. -/
theorem window_prefix_hits_le (k : Nat) (parent : Nat → Option Nat)
    {rs cs : List (List Nat)} (hrs : rs.flatten = window) (h : PrefixRun k parent [] rs cs) :
    runHits [] rs cs ≤ windowReferences - windowDistinct := by
  have h1 := runHits_add_distinct_le_length k parent h
  rw [hrs, window_length_distinct.1, window_length_distinct.2] at h1
  omega

/-- **The window's ceiling for prefix caches.** Every prefix-cache run at every capacity, from
an empty cache, over requests whose blocks one after another are the window, has prefix hit
rate `runHits / window.length` at most `windowCeilingNum / windowCeilingDen`. -/
theorem window_prefix_hit_rate_le_ceiling (k : Nat) (parent : Nat → Option Nat)
    {rs cs : List (List Nat)} (hrs : rs.flatten = window) (h : PrefixRun k parent [] rs cs) :
    runHits [] rs cs * windowCeilingDen ≤ windowCeilingNum * window.length := by
  rw [window_length_distinct.1]
  have h1 := Nat.mul_le_mul_right windowCeilingDen (window_prefix_hits_le k parent hrs h)
  rw [window_ceiling_fraction.1] at h1
  exact h1

/-- Every prefix-cache run at every capacity, from a cache `c` holding only blocks of lines
1–1200, over requests whose blocks one after another are the window (lines 1201–2000), has at
most `warmReferences - warmNew` prefix hits. -/
theorem warm_window_prefix_hits_le (k : Nat) (parent : Nat → Option Nat) {c : List Nat}
    {rs cs : List (List Nat)} (hc : ∀ y ∈ c, y ∈ traceBefore) (hrs : rs.flatten = traceWindow)
    (h : PrefixRun k parent c rs cs) :
    runHits c rs cs ≤ warmReferences - warmNew := by
  have h1 := runHits_add_distinctFrom_le k parent h traceBefore hc
  rw [distinctFrom_eq_distinct_filter, hrs, traceWindow_length_new.1,
    traceWindow_length_new.2] at h1
  omega

/-- **The warm window's ceiling for prefix caches.** Every prefix-cache run at every capacity,
from a cache holding only blocks of lines 1–1200, over requests whose blocks one after another
are the window, has prefix hit rate `runHits / traceWindow.length` at most
`warmCeilingNum / warmCeilingDen`. -/
theorem warm_window_prefix_hit_rate_le_ceiling (k : Nat) (parent : Nat → Option Nat)
    {c : List Nat} {rs cs : List (List Nat)} (hc : ∀ y ∈ c, y ∈ traceBefore)
    (hrs : rs.flatten = traceWindow) (h : PrefixRun k parent c rs cs) :
    runHits c rs cs * warmCeilingDen ≤ warmCeilingNum * traceWindow.length := by
  rw [traceWindow_length_new.1]
  have h1 := Nat.mul_le_mul_right warmCeilingDen (warm_window_prefix_hits_le k parent hc hrs h)
  rw [warm_ceiling_fraction.1] at h1
  exact h1

/-- **The whole trace's ceiling for prefix caches.** Every prefix-cache run at every capacity,
from an empty cache, over requests whose blocks one after another are the whole trace, has
prefix hit rate `runHits / trace.length` at most `ceilingNum / ceilingDen`. -/
theorem prefix_hit_rate_le_ceiling (k : Nat) (parent : Nat → Option Nat)
    {rs cs : List (List Nat)} (hrs : rs.flatten = trace) (h : PrefixRun k parent [] rs cs) :
    runHits [] rs cs * ceilingDen ≤ ceilingNum * trace.length := by
  have h1 := runHits_add_distinct_le_length k parent h
  rw [hrs, trace_length_distinct.1, trace_length_distinct.2] at h1
  rw [trace_length_distinct.1]
  have h2 : runHits [] rs cs ≤ traceReferences - traceDistinct := by omega
  have h3 := Nat.mul_le_mul_right ceilingDen h2
  rw [ceiling_fraction.1] at h3
  exact h3

end KVCache.Ceiling.Mooncake

end
