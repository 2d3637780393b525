module

public import Proofs.Ceiling.Bypass

/-!
# Prefix (radix) caches score at most the flat optimum with bypass

Engines (vLLM, SGLang, Mooncake) serve a request only the *leading run* of its cached blocks:
the id of block `i` of a request chains blocks `0..i`, and the cache is kept closed under
prefixes (a radix tree). This module models such caches and bounds them by the flat model of
`Proofs.Ceiling.Cache` and `Proofs.Ceiling.Bypass`.

* **Requests and chained ids.** A request is a list of blocks. `parent y` is the block that
  precedes `y` in every request holding it (`none` for a first block): one function for the
  whole stream, so no id follows two different predecessors. `Chained parent q` says that `q`
  follows `parent` (its first block has none, each later block's parent is the block before).
* **The cache** is a list of blocks, closed under prefixes (`Closed parent c`: every cached
  block's parent is cached). A request `q` hits on `leadRun c q` blocks: the length of its
  longest leading run of cached blocks.
* **One request** (`PrefixStep k parent c q c'`): the cache `c` becomes `c'`, with no
  duplicates, at most `k` blocks, closed under prefixes, and every block of `c'` was in `c` or
  lies in the missing tail `q.drop (leadRun c q)` (demand fetch: what enters is the missing
  tail or any part of it, none of it at all included: bypass is allowed, with or without room).
  Eviction removes any blocks as long as `c'` stays closed, i.e. no evicted block keeps a
  cached successor (evicting leaf after leaf).
* **A run** (`PrefixRun k parent c rs cs`): the caches `cs` left after each request of `rs`,
  from `c`, one `PrefixStep` each. It is any policy's run: online or offline, LRU, FIFO or
  farthest-next-use on leaves, with or without bypass. `runHits c rs cs` adds the requests'
  leading-run hits.

What is proved, for every capacity `k`, every `parent` and every run:

* `runHits_le_bopt`: from a duplicate-free cache with at most `k` blocks, the prefix hits are
  at most `bopt k c rs.flatten`, the most hits any flat cache with bypass
  (`Proofs.Ceiling.Bypass`) scores on the requests' blocks taken one after another from the
  same contents; from an empty cache that is Belady with bypass
  (`runHits_le_beladyBypass_bhits`).
* The flat ceiling bounds every prefix cache: `runHits_add_distinct_le_length` (hits plus
  distinct blocks at most the number of blocks) and, from warm contents whose blocks all
  occur in `seen`, `runHits_add_distinctFrom_le`.
* `mem_of_prefixRun`: every cache of a run holds only blocks of its start or of its requests
  (what a warm-up leaves).
* `leadRun_eq_countP_of_closed`: in a closed cache, a chained request hits on exactly its
  cached blocks: the leading run is all of them.

The flat optimum is reached by a flat cache, not necessarily by a prefix cache: the bound
can be strict (a flat cache may keep a block without its parent).
-/

@[expose] public section

namespace KVCache.Ceiling

open KVCache.Common

universe u

variable {α : Type u} [DecidableEq α]

/-! ## The model -/

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- `leadRun c q`: the length of the longest leading run of the request `q` whose blocks are
all in the cache `c` (the prefix hits of `q`). -/
noncomputable def leadRun (c : List α) : List α → Nat
  | [] => 0
  | x :: xs => if x ∈ c then leadRun c xs + 1 else 0

/-- `ChainedAfter parent p q`: the first block of `q` has parent `p` and each later block of
`q` has the block before it as its parent. -/
def ChainedAfter (parent : α → Option α) : Option α → List α → Prop
  | _, [] => True
  | p, x :: xs => parent x = p ∧ ChainedAfter parent (some x) xs

/-- `Chained parent q`: the request `q` follows the chained ids `parent`: its first block has
no parent and each later block has the block before it as its parent. -/
def Chained (parent : α → Option α) (q : List α) : Prop := ChainedAfter parent none q

/-- `Closed parent c`: the cache `c` is closed under prefixes: the parent of every cached
block is cached. -/
def Closed (parent : α → Option α) (c : List α) : Prop :=
  ∀ y ∈ c, ∀ p, parent y = some p → p ∈ c

/-- One request `q` of a prefix cache of capacity `k`: the cache `c` becomes `c'`, which has no
duplicates, at most `k` blocks, is closed under prefixes, and holds only blocks of `c` or of
the missing tail `q.drop (leadRun c q)`. -/
structure PrefixStep (k : Nat) (parent : α → Option α) (c q c' : List α) : Prop where
  /-- No block is cached twice. -/
  nodup : c'.Nodup
  /-- At most `k` blocks. -/
  length_le : c'.length ≤ k
  /-- Closed under prefixes. -/
  closed : Closed parent c'
  /-- Demand fetch: a new block comes from the request's missing tail. -/
  demand : ∀ y ∈ c', y ∈ c ∨ y ∈ q.drop (leadRun c q)

/-- `PrefixRun k parent c rs cs`: `cs` lists the caches left after each request of `rs`, from
the cache `c`, each one a `PrefixStep` of capacity `k` from the one before. -/
inductive PrefixRun (k : Nat) (parent : α → Option α) :
    List α → List (List α) → List (List α) → Prop
  /-- No request: no cache. -/
  | nil (c : List α) : PrefixRun k parent c [] []
  /-- One request, then the rest from the cache it left. -/
  | cons {c c' q : List α} {qs cs : List (List α)} :
      PrefixStep k parent c q c' → PrefixRun k parent c' qs cs →
        PrefixRun k parent c (q :: qs) (c' :: cs)

-- noncomputable: calls `leadRun`.
/-- `runHits c rs cs`: the prefix hits of the run from cache `c` over the requests `rs` with
caches `cs`: each request's leading run in the cache before it. -/
noncomputable def runHits : List α → List (List α) → List (List α) → Nat
  | c, q :: qs, c' :: cs => leadRun c q + runHits c' qs cs
  | _, _, _ => 0

/-! ## Lemmas on `leadRun`, `distinctFrom` and `bopt` -/

/-- The leading run of a request is at most its number of cached blocks. -/
theorem leadRun_le_countP (c : List α) : ∀ q : List α,
    leadRun c q ≤ q.countP (fun y => decide (y ∈ c))
  | [] => by simp [leadRun]
  | x :: xs => by
    have ih := leadRun_le_countP c xs
    by_cases hx : x ∈ c
    · simp [leadRun, hx]
      omega
    · simp [leadRun, hx]

/-- `distinctFrom` counts fewer first occurrences against more seen blocks. -/
theorem distinctFrom_le_of_subset : ∀ (l : List α) {s t : List α}, (∀ y ∈ s, y ∈ t) →
    distinctFrom t l ≤ distinctFrom s l
  | [], _, _, _ => by simp [distinctFrom]
  | x :: xs, s, t, h => by
    by_cases hs : x ∈ s
    · simp only [distinctFrom, hs, h x hs, if_true]
      exact distinctFrom_le_of_subset xs h
    · by_cases ht : x ∈ t
      · simp only [distinctFrom, hs, ht, if_true, if_false]
        have := distinctFrom_le_of_subset xs (s := x :: s) (t := t) (fun y hy => by
          rcases List.mem_cons.mp hy with e | e
          · exact e ▸ ht
          · exact h y e)
        omega
      · simp only [distinctFrom, hs, ht, if_false]
        have := distinctFrom_le_of_subset xs (s := x :: s) (t := x :: t) (fun y hy => by
          rcases List.mem_cons.mp hy with e | e
          · exact e ▸ List.mem_cons_self
          · exact List.mem_cons_of_mem x (h y e))
        omega

/-- Against blocks `seen` that include the cache, a request's leading run plus its first
occurrences is at most its length plus what the rest loses once the request is seen. -/
theorem leadRun_add_distinctFrom_le (c rest : List α) : ∀ (q seen : List α),
    (∀ y ∈ c, y ∈ seen) →
      leadRun c q + distinctFrom seen (q ++ rest) ≤ q.length + distinctFrom (q ++ seen) rest
  | [], seen, _ => by simp [leadRun]
  | x :: q, seen, h => by
    by_cases hx : x ∈ seen
    · have ih := leadRun_add_distinctFrom_le c rest q seen h
      have hmono := distinctFrom_le_of_subset rest (s := q ++ seen) (t := x :: (q ++ seen))
        (fun y hy => List.mem_cons_of_mem x hy)
      have hmono' := distinctFrom_le_of_subset rest (s := x :: (q ++ seen)) (t := q ++ seen)
        (fun y hy => by
          rcases List.mem_cons.mp hy with e | e
          · exact List.mem_append.mpr (Or.inr (e ▸ hx))
          · exact e)
      have hl : leadRun c (x :: q) ≤ leadRun c q + 1 := by
        simp only [leadRun]; split <;> omega
      simp only [List.cons_append, distinctFrom, hx, if_true, List.length_cons]
      omega
    · have hxc : x ∉ c := fun e => hx (h x e)
      have ih := leadRun_add_distinctFrom_le c rest q (x :: seen)
        (fun y hy => List.mem_cons_of_mem x (h y hy))
      have hmono := distinctFrom_le_of_subset rest (s := x :: (q ++ seen))
        (t := q ++ x :: seen) (fun y hy => by
          rcases List.mem_cons.mp hy with e | e
          · exact List.mem_append.mpr (Or.inr (e ▸ List.mem_cons_self))
          · rcases List.mem_append.mp e with e | e
            · exact List.mem_append.mpr (Or.inl e)
            · exact List.mem_append.mpr (Or.inr (List.mem_cons_of_mem x e)))
      simp only [List.cons_append, distinctFrom, hx, if_false, leadRun, hxc, List.length_cons]
      omega

/-- `bopt` is monotone in the cache contents: more cached blocks (within capacity) are worth
at least as many hits. -/
theorem bopt_le_bopt_of_subset (k : Nat) : ∀ (xs : List α) {c d : List α}, c.Nodup →
    d.Nodup → d.length ≤ k → (∀ y ∈ c, y ∈ d) → bopt k c xs ≤ bopt k d xs
  | [], _, _, _, _, _, _ => by simp [bopt]
  | x :: xs, c, d, hc, hd, hdk, hcd => by
    have hcd' : c.length ≤ d.length := length_le_of_nodup_of_subset c d hc hcd
    by_cases hxd : x ∈ d
    · rw [bopt_cons_of_mem hxd]
      have key : ∀ e : List α, e.Nodup → (∀ y ∈ e, y ∈ d) →
          bopt k e xs ≤ 1 + bopt k d xs := fun e he hed => by
          have := bopt_le_bopt_of_subset k xs he hd hdk hed
          omega
      by_cases hxc : x ∈ c
      · rw [bopt_cons_of_mem hxc]
        have := bopt_le_bopt_of_subset k xs hc hd hdk hcd
        omega
      · have hLc : (x :: c).Nodup := List.nodup_cons.mpr ⟨hxc, hc⟩
        have hsub : ∀ y ∈ x :: c, y ∈ d := fun y hy => by
          rcases List.mem_cons.mp hy with e | e
          · exact e ▸ hxd
          · exact hcd y e
        by_cases hck : c.length < k
        · rw [bopt_cons_of_lt hxc hck]
          exact key _ hLc hsub
        · rw [bopt_cons_of_full hxc (Nat.not_lt.mp hck)]
          exact maxOf_le fun y _ =>
            key _ (hLc.erase y) (fun z hz => hsub z (List.mem_of_mem_erase hz))
    · have hxc : x ∉ c := fun h => hxd (hcd x h)
      have hL : (x :: d).Nodup := List.nodup_cons.mpr ⟨hxd, hd⟩
      have hLc : (x :: c).Nodup := List.nodup_cons.mpr ⟨hxc, hc⟩
      by_cases hdk' : d.length < k
      · rw [bopt_cons_of_lt hxd hdk', bopt_cons_of_lt hxc (by omega)]
        exact bopt_le_bopt_of_subset k xs hLc hL (by simp only [List.length_cons]; omega)
          (fun y hy => by
            rcases List.mem_cons.mp hy with e | e
            · exact e ▸ List.mem_cons_self
            · exact List.mem_cons_of_mem x (hcd y e))
      · rw [bopt_cons_of_full hxd (Nat.not_lt.mp hdk')]
        by_cases hck : c.length < k
        · rw [bopt_cons_of_lt hxc hck]
          have hex : ∃ z ∈ d, z ∉ c := by
            apply Classical.byContradiction
            intro hno
            have hdc : ∀ z ∈ d, z ∈ c := fun z hz =>
              Classical.byContradiction fun h => hno ⟨z, hz, h⟩
            have := length_le_of_nodup_of_subset d c hd hdc
            omega
          obtain ⟨z, hzd, hzc⟩ := hex
          have hzx : z ≠ x := fun e => hxd (e ▸ hzd)
          have hz : z ∈ x :: d := List.mem_cons_of_mem x hzd
          refine Nat.le_trans ?_ (le_maxOf (f := fun y => bopt k ((x :: d).erase y) xs) hz)
          refine bopt_le_bopt_of_subset k xs hLc (hL.erase z) ?_ ?_
          · rw [List.length_erase_of_mem hz, List.length_cons]
            omega
          · intro y hy
            have hyz : y ≠ z := fun e => hzc (e ▸ (List.mem_cons.mp hy).resolve_left
              (fun e' => hzx (e.symm.trans e')))
            refine (List.mem_erase_of_ne hyz).mpr ?_
            rcases List.mem_cons.mp hy with e | e
            · exact e ▸ List.mem_cons_self
            · exact List.mem_cons_of_mem x (hcd y e)
        · rw [bopt_cons_of_full hxc (Nat.not_lt.mp hck)]
          refine maxOf_le fun y hy => ?_
          by_cases hyx : y = x
          · subst hyx
            refine Nat.le_trans ?_
              (le_maxOf (f := fun z => bopt k ((y :: d).erase z) xs) List.mem_cons_self)
            simp only [List.erase_cons_head]
            exact bopt_le_bopt_of_subset k xs hc hd hdk hcd
          · have hyc : y ∈ c := (List.mem_cons.mp hy).resolve_left hyx
            refine Nat.le_trans ?_ (le_maxOf (f := fun z => bopt k ((x :: d).erase z) xs)
              (List.mem_cons_of_mem x (hcd y hyc)))
            refine bopt_le_bopt_of_subset k xs (hLc.erase y) (hL.erase y) ?_ ?_
            · rw [List.length_erase_of_mem (List.mem_cons_of_mem x (hcd y hyc)),
                List.length_cons]
              omega
            · intro z hz
              have hz' := (hLc.mem_erase_iff).mp hz
              refine (List.mem_erase_of_ne hz'.1).mpr ?_
              rcases List.mem_cons.mp hz'.2 with e | e
              · exact e ▸ List.mem_cons_self
              · exact List.mem_cons_of_mem x (hcd z e)

/-- A flat miss on `x` from cache `c` (capacity `k`) may move to any duplicate-free cache of at
most `k` blocks drawn from `x :: c`: `bopt` from there is at most `bopt` from `c`. -/
theorem bopt_le_bopt_cons_of_subset (k : Nat) (xs : List α) {x : α} {c d : List α}
    (hx : x ∉ c) (hc : c.Nodup) (hck : c.length ≤ k) (hd : d.Nodup) (hdk : d.length ≤ k)
    (hdc : ∀ y ∈ d, y ∈ x :: c) : bopt k d xs ≤ bopt k c (x :: xs) := by
  have hL : (x :: c).Nodup := List.nodup_cons.mpr ⟨hx, hc⟩
  by_cases hlt : c.length < k
  · rw [bopt_cons_of_lt hx hlt]
    exact bopt_le_bopt_of_subset k xs hd hL (by simp only [List.length_cons]; omega) hdc
  · rw [bopt_cons_of_full hx (Nat.not_lt.mp hlt)]
    have hex : ∃ z ∈ x :: c, z ∉ d := by
      apply Classical.byContradiction
      intro hno
      have hsub : ∀ z ∈ x :: c, z ∈ d := fun z hz =>
        Classical.byContradiction fun h => hno ⟨z, hz, h⟩
      have := length_le_of_nodup_of_subset (x :: c) d hL hsub
      simp only [List.length_cons] at this
      omega
    obtain ⟨z, hz, hzd⟩ := hex
    refine Nat.le_trans ?_ (le_maxOf (f := fun y => bopt k ((x :: c).erase y) xs) hz)
    refine bopt_le_bopt_of_subset k xs hd (hL.erase z) ?_ ?_
    · rw [List.length_erase_of_mem hz, List.length_cons]
      omega
    · intro y hy
      have hyz : y ≠ z := fun e => hzd (e ▸ hy)
      exact (List.mem_erase_of_ne hyz).mpr (hdc y hy)

/-- Whatever cache `c'` (within capacity, no duplicates) is drawn from `c` and the blocks of
`q`, `bopt` from `c'` on the rest is at most `bopt` from `c` on `q` followed by the rest. -/
theorem bopt_le_bopt_append (k : Nat) (rest : List α) {c' : List α} (hc' : c'.Nodup)
    (hc'k : c'.length ≤ k) : ∀ (q c : List α), c.Nodup → c.length ≤ k →
      (∀ y ∈ c', y ∈ c ∨ y ∈ q) → bopt k c' rest ≤ bopt k c (q ++ rest)
  | [], c, hc, hck, h => by
    exact bopt_le_bopt_of_subset k rest hc' hc hck
      (fun y hy => (h y hy).resolve_right (by simp))
  | x :: q, c, hc, hck, h => by
    by_cases hx : x ∈ c
    · rw [List.cons_append, bopt_cons_of_mem hx]
      have := bopt_le_bopt_append k rest hc' hc'k q c hc hck (fun y hy => by
        rcases h y hy with e | e
        · exact Or.inl e
        · rcases List.mem_cons.mp e with e | e
          · exact Or.inl (e ▸ hx)
          · exact Or.inr e)
      omega
    · let d := (x :: c).filter (fun y => decide (y ∈ c'))
      have hL : (x :: c).Nodup := List.nodup_cons.mpr ⟨hx, hc⟩
      have hd : d.Nodup := List.Pairwise.sublist List.filter_sublist hL
      have hdc' : ∀ y ∈ d, y ∈ c' := fun y hy => by
        have := (List.mem_filter.mp hy).2
        simpa using this
      have hdk : d.length ≤ k :=
        Nat.le_trans (length_le_of_nodup_of_subset d c' hd hdc') hc'k
      have ih := bopt_le_bopt_append k rest hc' hc'k q d hd hdk (fun y hy => by
        rcases h y hy with e | e
        · exact Or.inl (List.mem_filter.mpr
            ⟨List.mem_cons_of_mem x e, by simpa using hy⟩)
        · rcases List.mem_cons.mp e with e | e
          · exact Or.inl (List.mem_filter.mpr ⟨e ▸ List.mem_cons_self, by simpa using hy⟩)
          · exact Or.inr e)
      rw [List.cons_append]
      exact Nat.le_trans ih (bopt_le_bopt_cons_of_subset k (q ++ rest) hx hc hck hd hdk
        (fun y hy => (List.mem_filter.mp hy).1))

/-- One request: its leading run in `c` plus `bopt` from any cache `c'` (within capacity, no
duplicates) drawn from `c` and the blocks of `q` is at most `bopt` from `c` on `q` followed by
the rest. -/
theorem leadRun_add_bopt_le (k : Nat) (rest : List α) {c c' : List α} (hc : c.Nodup)
    (hck : c.length ≤ k) (hc' : c'.Nodup) (hc'k : c'.length ≤ k) : ∀ q : List α,
      (∀ y ∈ c', y ∈ c ∨ y ∈ q) → leadRun c q + bopt k c' rest ≤ bopt k c (q ++ rest)
  | [], h => by
    simp only [leadRun, Nat.zero_add]
    exact bopt_le_bopt_append k rest hc' hc'k [] c hc hck h
  | x :: q, h => by
    by_cases hx : x ∈ c
    · have ih := leadRun_add_bopt_le k rest hc hck hc' hc'k q (fun y hy => by
        rcases h y hy with e | e
        · exact Or.inl e
        · rcases List.mem_cons.mp e with e | e
          · exact Or.inl (e ▸ hx)
          · exact Or.inr e)
      rw [List.cons_append, bopt_cons_of_mem hx]
      simp only [leadRun, hx, if_true]
      omega
    · simp only [leadRun, hx, if_false, Nat.zero_add]
      exact bopt_le_bopt_append k rest hc' hc'k (x :: q) c hc hck h

/-! ## Theorem A: prefix hits are bounded by the flat optimum with bypass -/

/-- A run's step keeps only blocks of the cache before it or of the request. -/
theorem PrefixStep.mem {k : Nat} {parent : α → Option α} {c q c' : List α}
    (h : PrefixStep k parent c q c') : ∀ y ∈ c', y ∈ c ∨ y ∈ q := fun y hy =>
  (h.demand y hy).elim Or.inl fun e => Or.inr (List.mem_of_mem_drop e)

/-- **Prefix hits are at most the flat optimum with bypass.** For every capacity `k`, chained
ids `parent` and prefix-cache run from a duplicate-free cache `c` of at most `k` blocks over
the requests `rs` (any policy, bypass included), the prefix hits are at most `bopt k c
rs.flatten`: the most hits of a flat cache with bypass from `c` on the requests' blocks. -/
theorem runHits_le_bopt (k : Nat) (parent : α → Option α) {c : List α}
    {rs cs : List (List α)} (h : PrefixRun k parent c rs cs) :
    c.Nodup → c.length ≤ k → runHits c rs cs ≤ bopt k c rs.flatten := by
  induction h with
  | nil c => intro _ _; simp [runHits]
  | @cons c c' q qs cs hs _ ih =>
    intro hc hck
    have ih' := ih hs.nodup hs.length_le
    have := leadRun_add_bopt_le k qs.flatten hc hck hs.nodup hs.length_le q hs.mem
    simp only [runHits, List.flatten_cons]
    omega

/-- **Belady with bypass bounds every prefix cache.** For every capacity `k`, chained ids
`parent` and prefix-cache run from an empty cache over the requests `rs` (any policy, bypass
included), the prefix hits are at most the hits of Belady with bypass on `rs.flatten`. -/
theorem runHits_le_beladyBypass_bhits (k : Nat) (parent : α → Option α)
    {rs cs : List (List α)} (h : PrefixRun k parent [] rs cs) :
    runHits [] rs cs ≤ bhits k beladyBypass rs.flatten := by
  rw [beladyBypass_bhits_eq_bopt]
  exact runHits_le_bopt k parent h List.nodup_nil (Nat.zero_le _)

/-- **The ceiling bounds every prefix cache.** For every capacity `k`, chained ids `parent`
and prefix-cache run from an empty cache over the requests `rs`, prefix hits plus the distinct
blocks of `rs.flatten` are at most its length. -/
theorem runHits_add_distinct_le_length (k : Nat) (parent : α → Option α)
    {rs cs : List (List α)} (h : PrefixRun k parent [] rs cs) :
    runHits [] rs cs + distinct rs.flatten ≤ rs.flatten.length := by
  have h1 := runHits_le_beladyBypass_bhits k parent h
  have h2 := bhits_add_distinct_le_length k (beladyBypass : BypassPolicy α) rs.flatten
  omega

/-- **The warm ceiling bounds every prefix cache.** For every capacity, chained ids and
prefix-cache run from a cache `c` whose blocks all occur in `seen`, prefix hits plus the first
occurrences in `rs.flatten` of blocks outside `seen` are at most its length. -/
theorem runHits_add_distinctFrom_le (k : Nat) (parent : α → Option α) {c : List α}
    {rs cs : List (List α)} (h : PrefixRun k parent c rs cs) :
    ∀ seen : List α, (∀ y ∈ c, y ∈ seen) →
      runHits c rs cs + distinctFrom seen rs.flatten ≤ rs.flatten.length := by
  induction h with
  | nil c => intro _ _; simp [runHits, distinctFrom]
  | @cons c c' q qs cs hs _ ih =>
    intro seen hseen
    have h1 := leadRun_add_distinctFrom_le c qs.flatten q seen hseen
    have h2 := ih (q ++ seen) (fun y hy => by
      rcases hs.mem y hy with e | e
      · exact List.mem_append.mpr (Or.inr (hseen y e))
      · exact List.mem_append.mpr (Or.inl e))
    simp only [runHits, List.flatten_cons, List.length_append]
    omega

/-- Every cache of a prefix-cache run holds only blocks of the cache it started from or of
its requests. -/
theorem mem_of_prefixRun {k : Nat} {parent : α → Option α} {c : List α}
    {rs cs : List (List α)} (h : PrefixRun k parent c rs cs) :
    ∀ d ∈ cs, ∀ y ∈ d, y ∈ c ∨ y ∈ rs.flatten := by
  induction h with
  | nil c => intro d hd; simp at hd
  | @cons c c' q qs cs hs _ ih =>
    intro d hd y hy
    rcases List.mem_cons.mp hd with e | e
    · subst e
      rcases hs.mem y hy with e | e
      · exact Or.inl e
      · exact Or.inr (List.mem_append.mpr (Or.inl e))
    · rcases ih d e y hy with e | e
      · rcases hs.mem y e with e | e
        · exact Or.inl e
        · exact Or.inr (List.mem_append.mpr (Or.inl e))
      · exact Or.inr (List.mem_append.mpr (Or.inr e))

/-! ## In a closed cache the leading run is every cached block -/

/-- If a block of a request chained after `p` is cached in a closed cache, so is `p`. -/
theorem mem_of_chainedAfter_of_closed {parent : α → Option α} {c : List α}
    (hc : Closed parent c) : ∀ (q : List α) (p : α), ChainedAfter parent (some p) q →
      (∃ y ∈ q, y ∈ c) → p ∈ c
  | [], _, _, ⟨_, hy, _⟩ => by simp at hy
  | x :: xs, p, ⟨hx, hxs⟩, ⟨y, hy, hyc⟩ => by
    by_cases hxc : x ∈ c
    · exact hc x hxc p hx
    · rcases List.mem_cons.mp hy with e | e
      · exact absurd (e ▸ hyc) hxc
      · exact hc x (mem_of_chainedAfter_of_closed hc xs x hxs ⟨y, e, hyc⟩) p hx

/-- In a closed cache, a request chained after any `p` has no cached block after its first
uncached one. -/
theorem countP_eq_leadRun_of_closed {parent : α → Option α} {c : List α}
    (hc : Closed parent c) : ∀ (q : List α) (p : Option α), ChainedAfter parent p q →
      q.countP (fun y => decide (y ∈ c)) = leadRun c q
  | [], _, _ => by simp [leadRun]
  | x :: xs, _, ⟨_, hxs⟩ => by
    by_cases hx : x ∈ c
    · have ih := countP_eq_leadRun_of_closed hc xs (some x) hxs
      simp [leadRun, hx, ih]
    · have hnone : xs.countP (fun y => decide (y ∈ c)) = 0 := by
        rw [List.countP_eq_zero]
        intro y hy hyc
        exact hx (mem_of_chainedAfter_of_closed hc xs x hxs ⟨y, hy, by simpa using hyc⟩)
      simp [leadRun, hx, hnone]

/-- **In a closed cache the leading run is every cached block.** For chained ids `parent`, a
cache `c` closed under prefixes and a request `q` that follows `parent`, the prefix hits
`leadRun c q` equal the number of blocks of `q` that are in `c`. -/
theorem leadRun_eq_countP_of_closed {parent : α → Option α} {c q : List α}
    (hc : Closed parent c) (hq : Chained parent q) :
    leadRun c q = q.countP (fun y => decide (y ∈ c)) :=
  (countP_eq_leadRun_of_closed hc q none hq).symm

end KVCache.Ceiling

end
