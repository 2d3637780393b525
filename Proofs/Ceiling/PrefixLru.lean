module

public import Proofs.Ceiling.Prefix

/-!
# Radix LRU and flat LRU over tail-first touches, on small instances

The model of `Proofs.Ceiling.Prefix`, run by LRU, two ways.

* **Radix LRU** (`radixLruStep`): a request `q` is served its leading run; its missing tail is
  stored; then, while the cache holds more than `k` blocks, the least recently used *leaf*
  (a cached block that no cached block has as its parent) is evicted. Recency is the position
  in the LRU stack (`lruStack`, `Proofs.Ceiling.Policies`) of the touches so far, a request's
  blocks touched tail first, so its first block is the most recent (as vLLM frees a request's
  blocks tail first). `radixLruPinnedStep` is the engine's variant: the request's own blocks
  are never evicted while it is served, and the missing tail is stored as far as it fits.
  `radixLruAllOrNothingStep` stores the missing tail only when all of it fits, and then keeps
  the cache it had.
* **Flat LRU over tail-first touches** (`tailFirstLruCaches`): the flat LRU policy `lru` of
  `Proofs.Ceiling.Cache` on the stream of every request's blocks taken tail first; its cache
  after each request. Prefix hits of both are `runHits`: each request's leading run in the
  cache before it.

What is checked here, by the kernel on concrete instances (`decide`), not proved in general:

* `radixLru_eq_tailFirstLru_example`: on a workload of six chained requests (longest three
  blocks), radix LRU, its pinned variant and flat tail-first LRU score the same prefix hits at
  every capacity from one to four, below the longest request included.
* `allOrNothing_not_stack_example`: below the longest request the all-or-nothing variant is no
  stack algorithm: on `[[5], [0, 1, 2]]` its cache at capacity two keeps block `5`, which its
  cache at capacity three does not hold.
* `allOrNothing_lt_tailFirstLru_example`: on `[[0, 1], [0]]` at capacity one it scores no
  prefix hit where flat tail-first LRU scores one.

The general statement for `radixLruStep`, at every capacity, is proved in
`Proofs.Ceiling.PrefixLruStack`: its cache is the top of the LRU stack of the tail-first
touches, the stack flat LRU keeps (`lru_cacheAt_perm`).
-/

@[expose] public section

namespace KVCache.Ceiling

universe u

variable {α : Type u} [DecidableEq α]

-- noncomputable: `List.all` over `≠` has no compiled code in the registry Lean.
/-- `isLeaf parent c y`: no block of `c` has `y` as its parent. -/
noncomputable def isLeaf (parent : α → Option α) (c : List α) (y : α) : Bool :=
  c.all (fun z => decide (parent z ≠ some y))

-- noncomputable: `firstPos` is reached through code the registry Lean does not compile here.
/-- `lruOf S l`: the block of `l` that lies deepest in the stack `S` (the least recently used),
`none` for an empty `l`; of two at the same depth, the earlier in `l`. -/
noncomputable def lruOf (S : List α) : List α → Option α
  | [] => none
  | y :: ys =>
    match lruOf S ys with
    | none => some y
    | some z => if firstPos z S ≤ firstPos y S then some y else some z

-- noncomputable: `List.erase` and `List.filter` have no compiled code in the registry Lean.
/-- `evictLeaves parent S pinned room n c`: at most `n` times, while `c` holds more than `room`
blocks, evict the least recently used (in the stack `S`) leaf of `c` outside `pinned`; stop when
there is none. -/
noncomputable def evictLeaves (parent : α → Option α) (S pinned : List α) (room : Nat) :
    Nat → List α → List α
  | 0, c => c
  | n + 1, c =>
    if c.length ≤ room then c
    else
      match lruOf S (c.filter (fun y => decide (y ∉ pinned) && isLeaf parent c y)) with
      | none => c
      | some v => evictLeaves parent S pinned room n (c.erase v)

-- noncomputable: calls `leadRun` and `List.filter`.
/-- The missing tail of `q` in `c`: its blocks after the leading run that are not cached. -/
noncomputable def missingTail (c q : List α) : List α :=
  (q.drop (leadRun c q)).filter (fun y => decide (y ∉ c))

-- noncomputable: calls `evictLeaves`.
/-- One radix-LRU request at capacity `k`, after the touches `H` (most recent first): store the
missing tail of `q`, then evict least recently used leaves (in the LRU stack of `q ++ H`) until
at most `k` blocks are cached. -/
noncomputable def radixLruStep (k : Nat) (parent : α → Option α) (H c q : List α) :
    List α :=
  evictLeaves parent (lruStack (q ++ H)) [] k (missingTail c q ++ c).length
    (missingTail c q ++ c)

-- noncomputable: calls `evictLeaves`.
/-- The engine's radix-LRU request: evict least recently used leaves outside `q` to make room
for its missing tail, then store as much of the tail as fits. -/
noncomputable def radixLruPinnedStep (k : Nat) (parent : α → Option α) (H c q : List α) :
    List α :=
  let s := evictLeaves parent (lruStack (q ++ H)) q (k - (missingTail c q).length) c.length c
  (missingTail c q).take (k - s.length) ++ s

-- noncomputable: calls `evictLeaves`.
/-- The all-or-nothing radix-LRU request: as the engine's, but the missing tail is stored only
when all of it fits, and otherwise the cache is left as it was. -/
noncomputable def radixLruAllOrNothingStep (k : Nat) (parent : α → Option α)
    (H c q : List α) : List α :=
  let s := evictLeaves parent (lruStack (q ++ H)) q (k - (missingTail c q).length) c.length c
  if (missingTail c q).length + s.length ≤ k then missingTail c q ++ s else c

-- noncomputable: `++` (`List.appendTR`) has no compiled code in the registry Lean.
/-- The caches after each request of a run of `step` from touches `H` and cache `c`. -/
noncomputable def stepCaches (step : List α → List α → List α → List α) :
    List α → List α → List (List α) → List (List α)
  | _, _, [] => []
  | H, c, q :: qs => step H c q :: stepCaches step (q ++ H) (step H c q) qs

-- noncomputable: `List.flatten` has no compiled code in the registry Lean.
/-- The stream of flat touches of the requests `rs`: each request's blocks tail first. -/
noncomputable def tailFirst (rs : List (List α)) : List α := (rs.map List.reverse).flatten

-- noncomputable: calls `cacheAt`.
/-- The caches of flat LRU at capacity `k` over the tail-first touches of `rs`, after each
request. -/
noncomputable def tailFirstLruCaches (k : Nat) (rs : List (List α)) : List (List α) :=
  (List.range rs.length).map fun n =>
    cacheAt k lru (tailFirst rs) ((rs.take (n + 1)).map List.length).sum

/-- The chained ids of the instances: `1`, `2` follow `0`, `1`; `3`, `4` follow `0`, `1`. -/
def exampleParent : Nat → Option Nat
  | 1 => some 0
  | 2 => some 1
  | 3 => some 0
  | 4 => some 1
  | _ => none

/-- Six chained requests, the longest of three blocks. -/
def exampleRequests : List (List Nat) := [[0, 1, 2], [0, 3], [0, 1, 4], [5], [0, 3], [0, 1, 2]]

/-- **An instance of the equality.** On `exampleRequests`, at capacities one to four, radix
LRU, its pinned variant and flat LRU over tail-first touches score the same prefix hits. -/
theorem radixLru_eq_tailFirstLru_example :
    ∀ k ∈ [1, 2, 3, 4],
      runHits [] exampleRequests
          (stepCaches (radixLruStep k exampleParent) [] [] exampleRequests) =
        runHits [] exampleRequests (tailFirstLruCaches k exampleRequests) ∧
      runHits [] exampleRequests
          (stepCaches (radixLruPinnedStep k exampleParent) [] [] exampleRequests) =
        runHits [] exampleRequests (tailFirstLruCaches k exampleRequests) := by
  decide +kernel

/-- **All-or-nothing is no stack algorithm below the longest request.** On `[[5], [0, 1, 2]]`
with `exampleParent`, the all-or-nothing radix-LRU cache at capacity `2` holds block `5`
after the second request, and the one at capacity `3` does not. -/
theorem allOrNothing_not_stack_example :
    5 ∈ (stepCaches (radixLruAllOrNothingStep 2 exampleParent) [] [] [[5], [0, 1, 2]])[1]! ∧
      5 ∉ (stepCaches (radixLruAllOrNothingStep 3 exampleParent) [] [] [[5], [0, 1, 2]])[1]! := by
  decide +kernel

/-- **All-or-nothing scores less below the longest request.** On `[[0, 1], [0]]` with
`exampleParent` at capacity `1`, the all-or-nothing radix LRU scores `0` prefix hits and flat
LRU over tail-first touches scores `1`. -/
theorem allOrNothing_lt_tailFirstLru_example :
    runHits [] [[0, 1], [0]]
        (stepCaches (radixLruAllOrNothingStep 1 exampleParent) [] [] [[0, 1], [0]]) = 0 ∧
      runHits [] [[0, 1], [0]] (tailFirstLruCaches 1 [[0, 1], [0]]) = 1 := by
  decide +kernel

end KVCache.Ceiling

end
