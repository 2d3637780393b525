module

public import Proofs.Ceiling.PrefixLruStack

/-!
# Radix LRU is flat LRU over tail-first touches, at every capacity

Flat LRU (`lru`, `Proofs.Ceiling.Cache`) on the stream of every request's blocks taken tail
first keeps the top `k` of the LRU stack of its history (`lru_cacheAt_perm`); after the first
`n + 1` requests that history, most recent first, is those requests in reverse order, each in
its own order (`reverse_tailFirst`): the touches of `Proofs.Ceiling.PrefixLruStack`, whose
top `k` radix LRU keeps (`radixLruStep_mem_iff`).

* `radixLru_mem_iff_tailFirstLru`: under chained ids (one function `parent`, every request
  follows it) and requests without repeated blocks, at every capacity `k`, radix LRU's cache
  after each request holds exactly the blocks of flat LRU's cache after that request's
  tail-first touches;
* `runHits_radixLru_eq_tailFirstLru`: so both score the same prefix hits.

The capacity need not cover the longest request for this radix LRU, which stores the whole
missing tail and then evicts least recently used leaves, the request's own included. An engine
that stores a request only when all of it fits differs below the longest request
(`allOrNothing_lt_tailFirstLru_example`, `Proofs.Ceiling.PrefixLru`).
-/

@[expose] public section

namespace KVCache.Ceiling

universe u

variable {α : Type u} [DecidableEq α]

omit [DecidableEq α] in
/-- The tail-first stream of two lists of requests is the one of the first, then the other. -/
theorem tailFirst_append (L M : List (List α)) :
    tailFirst (L ++ M) = tailFirst L ++ tailFirst M := by
  simp [tailFirst]

omit [DecidableEq α] in
/-- The tail-first stream of `L` has one touch per block of `L`. -/
theorem length_tailFirst : ∀ L : List (List α), (tailFirst L).length = (L.map List.length).sum
  | [] => by simp [tailFirst]
  | q :: L => by
    have ih := length_tailFirst L
    simp only [tailFirst, List.map_cons, List.flatten_cons, List.length_append,
      List.length_reverse, List.sum_cons] at ih ⊢
    omega

omit [DecidableEq α] in
/-- **The history of the tail-first stream**, most recent first, is the requests in reverse
order, each in its own order. -/
theorem reverse_tailFirst : ∀ L : List (List α), (tailFirst L).reverse = L.reverse.flatten
  | [] => by simp [tailFirst]
  | q :: L => by
    have ih := reverse_tailFirst L
    simp only [tailFirst] at ih ⊢
    rw [List.map_cons, List.flatten_cons, List.reverse_append, ih, List.reverse_reverse,
      List.reverse_cons, List.flatten_append]
    simp

omit [DecidableEq α] in
/-- The first `l₁.length` entries of `l₁ ++ l₂` are `l₁`. -/
theorem take_length_append' : ∀ (l₁ l₂ : List α), (l₁ ++ l₂).take l₁.length = l₁
  | [], _ => by simp
  | a :: t, l₂ => by simp [take_length_append' t l₂]

/-- Flat tail-first LRU's cache after request `n` holds the top `k` of the LRU stack of the
first `n + 1` requests, in reverse order, each in its own order. -/
theorem mem_tailFirstLru_iff (k : Nat) (rs : List (List α)) (n : Nat) (d : List α)
    (hd : (tailFirstLruCaches k rs)[n]? = some d) :
    ∀ y, y ∈ d ↔ y ∈ (lruStack (rs.take (n + 1)).reverse.flatten).take k := by
  have hn : n < rs.length := by
    apply Classical.byContradiction
    intro hn
    simp [tailFirstLruCaches, hn] at hd
  have hd' : cacheAt k lru (tailFirst rs) ((rs.take (n + 1)).map List.length).sum = d := by
    simpa [tailFirstLruCaches, hn] using hd
  subst hd'
  intro y
  rw [mem_lru_cacheAt_iff]
  have hsplit : tailFirst rs = tailFirst (rs.take (n + 1)) ++ tailFirst (rs.drop (n + 1)) := by
    rw [← tailFirst_append, List.take_append_drop]
  have e : (tailFirst rs).take ((rs.take (n + 1)).map List.length).sum =
      tailFirst (rs.take (n + 1)) := by
    rw [hsplit, ← length_tailFirst, take_length_append']
  rw [e, reverse_tailFirst]

/-- Radix LRU's cache after request `n`, from touches `H` and a cache that is the top `k` of
their LRU stack, holds the top `k` of the LRU stack of the first `n + 1` requests (in reverse
order, each in its own order) followed by `H`, under chained ids and requests without repeated
blocks. -/
theorem radixLru_getElem?_mem_iff (k : Nat) (parent : α → Option α) :
    ∀ (rs : List (List α)) (H c : List α), ParentsBefore parent H →
      (∀ q ∈ rs, Chained parent q ∧ q.Nodup) → c.Nodup →
      (∀ y, y ∈ c ↔ y ∈ (lruStack H).take k) →
      ∀ (n : Nat) (d : List α), (stepCaches (radixLruStep k parent) H c rs)[n]? = some d →
        ∀ y, y ∈ d ↔ y ∈ (lruStack ((rs.take (n + 1)).reverse.flatten ++ H)).take k
  | [], _, _, _, _, _, _, _, _, hd => by simp [stepCaches] at hd
  | q :: qs, H, c, hH, hrs, hc, hcH, 0, d, hd => by
    obtain ⟨hq, hqn⟩ := hrs q List.mem_cons_self
    simp only [stepCaches, List.getElem?_cons_zero, Option.some.injEq] at hd
    subst hd
    intro y
    rw [(radixLruStep_mem_iff (k := k) hH hq hqn hc hcH).2 y]
    simp
  | q :: qs, H, c, hH, hrs, hc, hcH, n + 1, d, hd => by
    obtain ⟨hq, hqn⟩ := hrs q List.mem_cons_self
    obtain ⟨hn', hm'⟩ := radixLruStep_mem_iff (k := k) hH hq hqn hc hcH
    simp only [stepCaches, List.getElem?_cons_succ] at hd
    have ih := radixLru_getElem?_mem_iff k parent qs (q ++ H) _ (parentsBefore_append hH hq)
      (fun q' hq' => hrs q' (List.mem_cons_of_mem q hq')) hn' hm' n d hd
    intro y
    rw [ih y]
    simp [List.take_succ_cons, List.reverse_cons, List.flatten_append]

/-- **Radix LRU is flat LRU over tail-first touches.** For chained ids `parent`, requests
`rs` that follow them and repeat no block, and every capacity `k`: after each request `n`,
radix LRU's cache (from an empty cache) and flat LRU's cache after the tail-first touches of
the first `n + 1` requests hold the same blocks. -/
theorem radixLru_mem_iff_tailFirstLru (k : Nat) (parent : α → Option α) (rs : List (List α))
    (hrs : ∀ q ∈ rs, Chained parent q ∧ q.Nodup) (n : Nat) (d e : List α)
    (hd : (stepCaches (radixLruStep k parent) [] [] rs)[n]? = some d)
    (he : (tailFirstLruCaches k rs)[n]? = some e) : ∀ y, y ∈ d ↔ y ∈ e := by
  intro y
  rw [radixLru_getElem?_mem_iff k parent rs [] [] (fun z hz => by simp at hz) hrs
    List.nodup_nil (fun y => by simp [lruStack]) n d hd y, mem_tailFirstLru_iff k rs n e he y]
  simp

/-- Prefix hits depend only on which blocks each cache holds. -/
theorem runHits_congr : ∀ (rs : List (List α)) (c d : List α) (cs ds : List (List α)),
    (∀ y, y ∈ c ↔ y ∈ d) → cs.length = ds.length →
    (∀ (n : Nat) (a b : List α), cs[n]? = some a → ds[n]? = some b → ∀ y, y ∈ a ↔ y ∈ b) →
    runHits c rs cs = runHits d rs ds
  | [], _, _, cs, ds, _, _, _ => by cases cs <;> cases ds <;> rfl
  | _ :: _, _, _, [], [], _, _, _ => rfl
  | _ :: _, _, _, [], _ :: _, _, hlen, _ => by simp at hlen
  | _ :: _, _, _, _ :: _, [], _, hlen, _ => by simp at hlen
  | q :: qs, c, d, a :: as, b :: bs, hcd, hlen, hab => by
    have ih := runHits_congr qs a b as bs (hab 0 a b rfl rfl) (by simpa using hlen)
      (fun n a' b' h1 h2 => hab (n + 1) a' b' (by simpa using h1) (by simpa using h2))
    show leadRun c q + runHits a qs as = leadRun d q + runHits b qs bs
    rw [leadRun_congr hcd q, ih]

omit [DecidableEq α] in
/-- A run of `step` leaves one cache per request. -/
theorem length_stepCaches (step : List α → List α → List α → List α) :
    ∀ (rs : List (List α)) (H c : List α), (stepCaches step H c rs).length = rs.length
  | [], _, _ => rfl
  | q :: qs, H, c => by
    simp [stepCaches, length_stepCaches step qs]

/-- **Radix LRU scores flat tail-first LRU's prefix hits.** For chained ids `parent`, requests
`rs` that follow them and repeat no block, and every capacity `k`, from an empty cache, radix
LRU and flat LRU over the tail-first touches score the same prefix hits. -/
theorem runHits_radixLru_eq_tailFirstLru (k : Nat) (parent : α → Option α)
    (rs : List (List α)) (hrs : ∀ q ∈ rs, Chained parent q ∧ q.Nodup) :
    runHits [] rs (stepCaches (radixLruStep k parent) [] [] rs) =
      runHits [] rs (tailFirstLruCaches k rs) :=
  runHits_congr rs [] [] _ _ (fun _ => Iff.rfl)
    (by rw [length_stepCaches]; simp [tailFirstLruCaches])
    (fun n a b ha hb => radixLru_mem_iff_tailFirstLru k parent rs hrs n a b ha hb)

end KVCache.Ceiling

end
