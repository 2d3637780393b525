module

public import Proofs.Ceiling.PrefixLruFlat

/-!
# Radix LRU's prefix hits at every capacity, from one pass of stack distances

Before each request the LRU stack of the touches so far gives every block a depth (its first
position, plus one). A block of the request's leading run hits at capacity `k` exactly when
the deepest block of the run up to it lies within the top `k`: so the running maximum of the
depths along the request (`runDepths`, stopping at the first block never touched) lists, for
each block, the least capacity from which it hits. `prefixDistances` collects those numbers
over the requests, the stack moving on with each request's blocks touched tail first; it does
not depend on the capacity.

* `leadRun_take_eq_countP_runDepths`: a request's leading run in the top `k` of a stack is the
  number of its running depths at most `k`.
* `runHits_stackCaches_eq_countP`: the prefix hits of the stack tops at capacity `k` are the
  number of entries of `prefixDistances` at most `k`, for every `k`.
* `runHits_tailFirstLru_eq_countP`: so are those of flat LRU over tail-first touches, on every
  list of requests;
* `runHits_radixLru_eq_countP`: and those of radix LRU under chained ids and requests without
  repeated blocks: one pass, one list of numbers, every capacity.

This is the pass of `pytools/traces/prefix.py`: a histogram of those numbers, summed up to `k`.
-/

@[expose] public section

namespace KVCache.Ceiling

universe u

variable {α : Type u} [DecidableEq α]

-- noncomputable: `∈` (through `instBEqOfDecidableEq`) has no compiled code in the registry Lean.
/-- `runDepths S m q`: along the request `q`, while its blocks are in the stack `S`, the
running maximum (from `m`) of their depths in `S` (first position plus one); it stops at the
first block outside `S`. -/
noncomputable def runDepths (S : List α) : Nat → List α → List Nat
  | _, [] => []
  | m, x :: xs =>
    if x ∈ S then max m (firstPos x S + 1) :: runDepths S (max m (firstPos x S + 1)) xs
    else []

-- noncomputable: calls `runDepths` and `lruStack`.
/-- `prefixDistances H rs`: the running depths of each request of `rs` in the LRU stack of
the touches before it (from the touches `H`, most recent first), one request after another. -/
noncomputable def prefixDistances : List α → List (List α) → List Nat
  | _, [] => []
  | H, q :: qs => runDepths (lruStack H) 0 q ++ prefixDistances (q ++ H) qs

/-- Every running depth from `m` is at least `m`. -/
theorem le_of_mem_runDepths (S : List α) : ∀ (q : List α) (m d : Nat),
    d ∈ runDepths S m q → m ≤ d
  | [], _, _, h => by simp [runDepths] at h
  | x :: xs, m, d, h => by
    by_cases hx : x ∈ S
    · simp only [runDepths, hx, ↓reduceIte, List.mem_cons] at h
      rcases h with e | e
      · omega
      · have := le_of_mem_runDepths S xs _ d e
        omega
    · simp [runDepths, hx] at h

/-- **A leading run in the top of a stack is a count of running depths.** If every block of
the run so far lies within the top `k` (`m ≤ k`), the rest of the request's leading run in the
top `k` of `S` is the number of its running depths (from `m`) that are at most `k`. -/
theorem leadRun_take_eq_countP_runDepths (S : List α) (k : Nat) : ∀ (q : List α) (m : Nat),
    m ≤ k → leadRun (S.take k) q = (runDepths S m q).countP (fun d => decide (d ≤ k))
  | [], _, _ => by simp [leadRun, runDepths]
  | x :: xs, m, hm => by
    by_cases hx : x ∈ S
    · by_cases hk : firstPos x S < k
      · have hxk : x ∈ S.take k := (mem_take_iff_firstPos_lt S k x).mpr ⟨hx, hk⟩
        have ih := leadRun_take_eq_countP_runDepths S k xs (max m (firstPos x S + 1))
          (by omega)
        simp only [leadRun, hxk, ↓reduceIte, runDepths, hx, List.countP_cons, ih]
        have : max m (firstPos x S + 1) ≤ k := by omega
        simp [this]
      · have hxk : x ∉ S.take k := fun h => hk ((mem_take_iff_firstPos_lt S k x).mp h).2
        have hz : (runDepths S (max m (firstPos x S + 1)) xs).countP
            (fun d => decide (d ≤ k)) = 0 := by
          rw [List.countP_eq_zero]
          intro d hd
          have := le_of_mem_runDepths S xs _ d hd
          simp only [decide_eq_true_eq]
          omega
        simp only [leadRun, hxk, ↓reduceIte, runDepths, hx, List.countP_cons, hz]
        have : ¬ max m (firstPos x S + 1) ≤ k := by omega
        simp [this]
    · have hxk : x ∉ S.take k := fun h => hx (List.mem_of_mem_take h)
      simp [leadRun, hxk, runDepths, hx]

/-- **The stack tops' prefix hits, every capacity, from one list.** From the touches `H`, on
every list of requests `rs` and at every capacity `k`, the prefix hits of the tops of the LRU
stack (`stackCaches`) are the number of entries of `prefixDistances H rs` at most `k`. -/
theorem runHits_stackCaches_eq_countP (k : Nat) : ∀ (rs : List (List α)) (H : List α),
    runHits ((lruStack H).take k) rs (stackCaches k H rs) =
      (prefixDistances H rs).countP (fun d => decide (d ≤ k))
  | [], _ => by simp [runHits, prefixDistances]
  | q :: qs, H => by
    have ih := runHits_stackCaches_eq_countP k qs (q ++ H)
    simp only [stackCaches, runHits, prefixDistances, List.countP_append, ih,
      leadRun_take_eq_countP_runDepths (lruStack H) k q 0 (Nat.zero_le k)]

/-- The stack tops at capacity `k` after request `n`, from the touches `H`: the top `k` of
the LRU stack of the first `n + 1` requests (in reverse order, each in its own order) followed
by `H`. -/
theorem stackCaches_getElem? (k : Nat) : ∀ (rs : List (List α)) (H : List α) (n : Nat),
    n < rs.length → (stackCaches k H rs)[n]? =
      some ((lruStack ((rs.take (n + 1)).reverse.flatten ++ H)).take k)
  | [], _, _, h => by simp at h
  | q :: qs, H, 0, _ => by simp [stackCaches]
  | q :: qs, H, n + 1, h => by
    have ih := stackCaches_getElem? k qs (q ++ H) n (by simp at h; omega)
    simp only [stackCaches, List.getElem?_cons_succ, ih, List.take_succ_cons,
      List.reverse_cons, List.flatten_append, Option.some.injEq]
    simp

/-- A run of `stackCaches` leaves one cache per request. -/
theorem length_stackCaches (k : Nat) : ∀ (rs : List (List α)) (H : List α),
    (stackCaches k H rs).length = rs.length
  | [], _ => rfl
  | q :: qs, H => by simp [stackCaches, length_stackCaches k qs (q ++ H)]

/-- **Flat LRU over tail-first touches, every capacity, from one list.** On every list of
requests `rs` and at every capacity `k`, from an empty cache, the prefix hits of flat LRU over
the tail-first touches are the number of entries of `prefixDistances [] rs` at most `k`. -/
theorem runHits_tailFirstLru_eq_countP (k : Nat) (rs : List (List α)) :
    runHits [] rs (tailFirstLruCaches k rs) =
      (prefixDistances [] rs).countP (fun d => decide (d ≤ k)) := by
  rw [← runHits_stackCaches_eq_countP k rs []]
  refine runHits_congr rs [] _ _ _ (fun y => by simp [lruStack]) ?_ ?_
  · rw [length_stackCaches]
    simp [tailFirstLruCaches]
  · intro n a b ha hb y
    have hn : n < rs.length := by
      apply Classical.byContradiction
      intro hn
      simp [tailFirstLruCaches, hn] at ha
    rw [stackCaches_getElem? k rs [] n hn, Option.some.injEq] at hb
    subst hb
    rw [mem_tailFirstLru_iff k rs n a ha y, List.append_nil]

/-- **Radix LRU, every capacity, from one pass of stack distances.** For chained ids
`parent`, requests `rs` that follow them and repeat no block, and every capacity `k`, from an
empty cache, radix LRU's prefix hits are the number of entries of `prefixDistances [] rs` (a
list that does not depend on `k`) at most `k`. -/
theorem runHits_radixLru_eq_countP (k : Nat) (parent : α → Option α) (rs : List (List α))
    (hrs : ∀ q ∈ rs, Chained parent q ∧ q.Nodup) :
    runHits [] rs (stepCaches (radixLruStep k parent) [] [] rs) =
      (prefixDistances [] rs).countP (fun d => decide (d ≤ k)) := by
  rw [runHits_radixLru_eq_tailFirstLru k parent rs hrs, runHits_tailFirstLru_eq_countP]

end KVCache.Ceiling

end
