module

public import Proofs.Ceiling.Cache
public import Proofs.Common.Nat

/-!
# Counting a packed stream in the kernel

A block-reference stream of hundreds of thousands of references cannot be handed to the
kernel as a `List` literal (elaborating and evaluating one is far too costly). This file
gives a representation the kernel evaluates fast, and a counting function proved to compute
the stream's length and its number of distinct blocks (`distinct` of `Proofs.Ceiling.Cache`).

* **Packed stream.** A stream is a list of *pages*, each a list of *lines*; a line is a
  natural number holding `m` slots of `w` bits, lowest slot first (`slots`). A slot value `0`
  is empty; `v + 1` holds block `v` (`slotBlock`). `unpack w m ps` is the stream the pages
  denote: the blocks of every line, in order. Lines are small literals (a generated module
  writes one per source line) and pages keep every `List` literal short; the kernel's
  arithmetic on literals (`/`, `%`, `^`, bitwise operations) decodes them directly.
* **Seen set.** A `Counter` keeps the blocks seen so far as two parts: blocks below a bound
  `base` in a bitmap `old`, and blocks from `base` on as the interval `[base, next)`. The
  second part needs the blocks from `base` on to arrive in *first-occurrence order* — a new
  one is always `next` — which is how the Mooncake traces number their blocks; the pass checks
  it and clears the flag `ok` at the first block that breaks it. Every step then touches a
  few small numbers. (With `base` above every block id the pass is a plain bitmap count and
  `ok` stays true on every stream.)
* **Counting.** `count w m base ps` visits every slot in stream order (`line`, `runLines`,
  `run`). `Counter.force` makes the kernel evaluate the counters after every line, so the
  evaluation never builds long chains of pending additions; it does not change the value
  (`Counter.force_eq`).

`count_spec`: for all `w m base ps`, if `(count w m base ps).ok` then
`(count w m base ps).len = (unpack w m ps).length` and
`(count w m base ps).dist = distinct (unpack w m ps)`. A generated module states the counts of
a concrete stream and proves them with `decide +kernel` through `length_distinct_of_count`:
the kernel runs the pass itself; `run_append` lets a long stream be counted in segments, one
declaration each.

**Runs.** A stream numbered in first-occurrence order is mostly runs of consecutive blocks;
`unpackRuns` reads pages whose slots each hold a run, and `runsRun` visits a run in one step.
`runsRun_spec`: whenever that pass keeps `ok`, its counter is the block-by-block pass's; hence
`length_distinct_of_runs` (length and distinct blocks) and `length_distinct_sdiff_of_runs`
(the length of a second stream and its distinct blocks absent from the first, the count the
warm-window bound needs).
-/

@[expose] public section

namespace KVCache.Ceiling.Packed

open KVCache.Common

/-! ## The packed format -/

/-- `slots w m n`: the first `m` slots of width `w` of the number `n`, lowest slot first. -/
def slots (w : Nat) : Nat → Nat → List Nat
  | 0, _ => []
  | m + 1, n => n % 2 ^ w :: slots w m (n / 2 ^ w)

/-- The block held by a slot value: `0` is an empty slot, `v + 1` holds block `v`. -/
def slotBlock : Nat → Option Nat
  | 0 => none
  | v + 1 => some v

/-- The blocks of one line `n`: its `m` slots of width `w`, empty slots skipped. -/
def lineBlocks (w m n : Nat) : List Nat := (slots w m n).filterMap slotBlock

-- noncomputable: `++` (`List.append`) has no compiled code in the registry Lean.
/-- The blocks of a list of lines, line after line. -/
noncomputable def unpackLines (w m : Nat) : List Nat → List Nat
  | [] => []
  | n :: ns => lineBlocks w m n ++ unpackLines w m ns

-- noncomputable: `++` (`List.append`) has no compiled code in the registry Lean.
/-- The stream denoted by a list of pages of lines: the blocks of every line, in order. -/
noncomputable def unpack (w m : Nat) : List (List Nat) → List Nat
  | [] => []
  | p :: ps => unpackLines w m p ++ unpack w m ps

/-! ## The counting pass -/

/-- The state of a counting pass: references and distinct blocks so far; the blocks seen so
far below `base` (a bitmap, `old`) and from `base` on (the interval `[base, next)`); and
whether every block from `base` on arrived in first-occurrence order (`ok`). -/
structure Counter where
  /-- References visited so far. -/
  len : Nat
  /-- Distinct blocks visited so far. -/
  dist : Nat
  /-- One more than the largest block from `base` on seen so far (or `base`). -/
  next : Nat
  /-- The blocks below `base` seen so far, as a bitmap. -/
  old : Nat
  /-- No block from `base` on has skipped ahead of `next`. -/
  ok : Bool
deriving DecidableEq

/-- A reference to a block seen before. -/
def Counter.hit (s : Counter) : Counter := ⟨s.len + 1, s.dist, s.next, s.old, s.ok⟩

/-- Visit block `x` below `base`: look it up in the bitmap. -/
def Counter.visitOld (s : Counter) (x : Nat) : Counter :=
  cond (s.old.testBit x) s.hit ⟨s.len + 1, s.dist + 1, s.next, s.old ||| 2 ^ x, s.ok⟩

/-- Visit block `x` from `base` on, not below `next`: it must be `next` itself. -/
def Counter.visitFresh (s : Counter) (x : Nat) : Counter :=
  cond (Nat.beq x s.next) ⟨s.len + 1, s.dist + 1, s.next + 1, s.old, s.ok⟩
    ⟨s.len + 1, s.dist, s.next, s.old, false⟩

/-- Visit block `x` from `base` on. -/
def Counter.visitNew (s : Counter) (x : Nat) : Counter :=
  cond (Nat.blt x s.next) s.hit (s.visitFresh x)

/-- Visit one reference to block `x`. -/
def Counter.visit (base : Nat) (s : Counter) (x : Nat) : Counter :=
  cond (Nat.blt x base) (s.visitOld x) (s.visitNew x)

/-- Visit the block in slot value `v`, if any (`0` is an empty slot). -/
def Counter.slot (base : Nat) (s : Counter) (v : Nat) : Counter :=
  cond (Nat.beq v 0) s (s.visit base (v - 1))

/-- `s.force a` is `a`; reducing it makes the kernel evaluate the fields of `s` first, which
keeps it from building long chains of pending additions and projections. -/
def Counter.force (s a : Counter) : Counter :=
  cond s.ok
    (match s.len + s.dist + s.next + s.old with
      | 0 => a
      | _ + 1 => a)
    a

/-- `force` does not change the value. -/
theorem Counter.force_eq (s a : Counter) : s.force a = a := by
  unfold Counter.force
  cases s.ok
  · rfl
  · simp only [cond_true]
    split <;> rfl

-- noncomputable: `Nat.rec` has no compiled code in the registry Lean (`Nat.recCompiled`).
/-- Visit the `m` slots of width `w` of the line `n`, lowest first. -/
noncomputable def line (w base m : Nat) : Nat → Counter → Counter :=
  Nat.rec (motive := fun _ => Nat → Counter → Counter) (fun _ s => s)
    (fun _ ih n s => ih (n / 2 ^ w) (s.slot base (n % 2 ^ w))) m

-- noncomputable: calls `line`.
/-- Visit every line of a page in turn. -/
noncomputable def runLines (w m base : Nat) (ns : List Nat) : Counter → Counter :=
  List.rec (motive := fun _ => Counter → Counter) (fun s => s)
    (fun n _ ih s =>
      let s' := line w base m n s
      s'.force (ih s')) ns

-- noncomputable: calls `runLines`.
/-- Visit every page in turn. -/
noncomputable def run (w m base : Nat) (ps : List (List Nat)) : Counter → Counter :=
  List.rec (motive := fun _ => Counter → Counter) (fun s => s)
    (fun p _ ih s =>
      let s' := runLines w m base p s
      s'.force (ih s')) ps

-- noncomputable: calls `run`.
/-- The counting pass over the packed stream `ps` (slot width `w`, `m` slots a line, bitmap
below `base`), from an empty counter. -/
noncomputable def count (w m base : Nat) (ps : List (List Nat)) : Counter :=
  run w m base ps ⟨0, 0, base, 0, true⟩

/-! ## The pass visits the unpacked stream -/

/-- Visiting a slot visits its block, if any. -/
theorem Counter.slot_eq (base : Nat) (s : Counter) (v : Nat) :
    s.slot base v = ((slotBlock v).toList).foldl (Counter.visit base) s := by
  cases v with
  | zero => rfl
  | succ v => rfl

/-- Walking a line visits its blocks in order. -/
theorem line_eq_foldl (w base : Nat) : ∀ (m n : Nat) (s : Counter),
    line w base m n s = (lineBlocks w m n).foldl (Counter.visit base) s
  | 0, n, s => by
    show s = _
    simp [lineBlocks, slots]
  | m + 1, n, s => by
    show line w base m (n / 2 ^ w) (s.slot base (n % 2 ^ w)) = _
    rw [line_eq_foldl w base m, Counter.slot_eq]
    simp only [lineBlocks, slots, List.filterMap_cons]
    cases n % 2 ^ w with
    | zero => simp [slotBlock]
    | succ v => simp [slotBlock]

/-- Running over lines visits their blocks in order. -/
theorem runLines_eq_foldl (w m base : Nat) : ∀ (ns : List Nat) (s : Counter),
    runLines w m base ns s = (unpackLines w m ns).foldl (Counter.visit base) s
  | [], s => by simp [runLines, unpackLines]
  | n :: ns, s => by
    show (line w base m n s).force (runLines w m base ns (line w base m n s)) = _
    rw [Counter.force_eq, runLines_eq_foldl w m base ns, line_eq_foldl]
    simp only [unpackLines, List.foldl_append]

/-- Running over pages visits the unpacked stream in order. -/
theorem run_eq_foldl (w m base : Nat) : ∀ (ps : List (List Nat)) (s : Counter),
    run w m base ps s = (unpack w m ps).foldl (Counter.visit base) s
  | [], s => by simp [run, unpack]
  | p :: ps, s => by
    show (runLines w m base p s).force (run w m base ps (runLines w m base p s)) = _
    rw [Counter.force_eq, run_eq_foldl w m base ps, runLines_eq_foldl]
    simp only [unpack, List.foldl_append]

/-- Counting pages in two parts: the second part starts from the state the first leaves. -/
theorem run_append (w m base : Nat) (ps qs : List (List Nat)) (s : Counter) :
    run w m base (ps ++ qs) s = run w m base qs (run w m base ps s) := by
  rw [run_eq_foldl, run_eq_foldl, run_eq_foldl]
  have : unpack w m (ps ++ qs) = unpack w m ps ++ unpack w m qs := by
    induction ps with
    | nil => rfl
    | cons p ps ih => simp only [List.cons_append, unpack, ih, List.append_assoc]
  rw [this, List.foldl_append]

/-! ## The pass counts correctly -/

/-- `s` represents the list `seen` (with bound `base`): the blocks it has seen are exactly
those of `seen`. -/
def Represents (base : Nat) (s : Counter) (seen : List Nat) : Prop :=
  ∀ y, y ∈ seen ↔ (y < base ∧ s.old.testBit y = true) ∨ (base ≤ y ∧ y < s.next)

/-- A visit never sets `ok` back to `true`. -/
theorem Counter.ok_of_visit (base : Nat) (s : Counter) (x : Nat)
    (h : (s.visit base x).ok = true) : s.ok = true := by
  revert h
  unfold Counter.visit Counter.visitOld Counter.visitNew Counter.visitFresh Counter.hit
  cases Nat.blt x base <;> cases s.old.testBit x <;> cases Nat.blt x s.next <;>
    cases Nat.beq x s.next <;> simp

/-- A pass that ends with `ok` started with `ok`. -/
theorem ok_of_foldl (base : Nat) : ∀ (xs : List Nat) (s : Counter),
    (xs.foldl (Counter.visit base) s).ok = true → s.ok = true
  | [], _, h => h
  | x :: xs, s, h => Counter.ok_of_visit base s x (ok_of_foldl base xs _ h)

/-- One visit, when it keeps `ok`: one more reference, one more distinct block iff the block
is new, and the counter represents the blocks seen with it. -/
theorem Counter.visit_spec (base : Nat) (s : Counter) (seen : List Nat) (x : Nat)
    (hr : Represents base s seen) (hok : (s.visit base x).ok = true) :
    (s.visit base x).len = s.len + 1 ∧
      (s.visit base x).dist = s.dist + (if x ∈ seen then 0 else 1) ∧
      Represents base (s.visit base x) (if x ∈ seen then seen else x :: seen) := by
  have hx := hr x
  cases hb : Nat.blt x base
  · -- `x ≥ base`
    have hxb : base ≤ x := le_of_blt_eq_false hb
    cases hn : Nat.blt x s.next
    · have hxn : s.next ≤ x := le_of_blt_eq_false hn
      cases he : Nat.beq x s.next
      · simp [Counter.visit, Counter.visitNew, Counter.visitFresh, hb, hn, he] at hok
      · have hxe : x = s.next := by simpa [Nat.beq_eq] using he
        have hxs : x ∉ seen := by
          rw [hx]
          rintro (⟨h1, -⟩ | ⟨-, h2⟩) <;> omega
        have hv : s.visit base x = ⟨s.len + 1, s.dist + 1, s.next + 1, s.old, s.ok⟩ := by
          simp [Counter.visit, Counter.visitNew, Counter.visitFresh, hb, hn, he]
        rw [hv]
        refine ⟨rfl, by simp [hxs], ?_⟩
        intro y
        simp only [hxs, ↓reduceIte, List.mem_cons, hr y]
        constructor
        · rintro (e | e)
          · subst e; right; omega
          · rcases e with e | e
            · exact Or.inl e
            · right; omega
        · rintro (e | e)
          · exact Or.inr (Or.inl e)
          · by_cases hy : y = x
            · exact Or.inl hy
            · right; right; omega
    · have hxn : x < s.next := lt_of_blt_eq_true hn
      have hxs : x ∈ seen := by rw [hx]; exact Or.inr ⟨hxb, hxn⟩
      have hv : s.visit base x = s.hit := by
        simp [Counter.visit, Counter.visitNew, hb, hn]
      rw [hv]
      exact ⟨rfl, by rw [if_pos hxs]; rfl, by rw [if_pos hxs]; exact hr⟩
  · -- `x < base`
    have hxb : x < base := lt_of_blt_eq_true hb
    cases ht : s.old.testBit x
    · have hxs : x ∉ seen := by
        rw [hx]
        rintro (⟨-, h2⟩ | ⟨h1, -⟩)
        · rw [ht] at h2
          cases h2
        · omega
      have hv : s.visit base x = ⟨s.len + 1, s.dist + 1, s.next, s.old ||| 2 ^ x, s.ok⟩ := by
        simp [Counter.visit, Counter.visitOld, hb, ht]
      rw [hv]
      refine ⟨rfl, by simp [hxs], ?_⟩
      intro y
      simp only [hxs, ↓reduceIte, List.mem_cons, hr y, Nat.testBit_or, Nat.testBit_two_pow,
        Bool.or_eq_true, decide_eq_true_eq]
      constructor
      · rintro (e | e)
        · subst e; exact Or.inl ⟨hxb, Or.inr rfl⟩
        · rcases e with ⟨e1, e2⟩ | e
          · exact Or.inl ⟨e1, Or.inl e2⟩
          · exact Or.inr e
      · rintro (⟨e1, e2 | e2⟩ | e)
        · exact Or.inr (Or.inl ⟨e1, e2⟩)
        · exact Or.inl e2.symm
        · exact Or.inr (Or.inr e)
    · have hxs : x ∈ seen := by rw [hx]; exact Or.inl ⟨hxb, ht⟩
      have hv : s.visit base x = s.hit := by
        simp [Counter.visit, Counter.visitOld, hb, ht]
      rw [hv]
      exact ⟨rfl, by rw [if_pos hxs]; rfl, by rw [if_pos hxs]; exact hr⟩

/-- A pass over a list of references that keeps `ok` adds its length to `len` and its new
distinct blocks to `dist`. -/
theorem foldl_visit (base : Nat) : ∀ (xs : List Nat) (s : Counter) (seen : List Nat),
    Represents base s seen → (xs.foldl (Counter.visit base) s).ok = true →
      (xs.foldl (Counter.visit base) s).len = s.len + xs.length ∧
        (xs.foldl (Counter.visit base) s).dist = s.dist + distinctFrom seen xs
  | [], s, seen, _, _ => by simp [distinctFrom]
  | x :: xs, s, seen, hr, hok => by
    rw [List.foldl_cons] at hok ⊢
    have hok1 := ok_of_foldl base xs _ hok
    obtain ⟨e1, e2, hr'⟩ := Counter.visit_spec base s seen x hr hok1
    by_cases hx : x ∈ seen
    · rw [if_pos hx] at e2 hr'
      obtain ⟨h1, h2⟩ := foldl_visit base xs _ seen hr' hok
      simp only [distinctFrom, hx, ↓reduceIte, List.length_cons]
      constructor <;> omega
    · rw [if_neg hx] at e2 hr'
      obtain ⟨h1, h2⟩ := foldl_visit base xs _ (x :: seen) hr' hok
      simp only [distinctFrom, hx, ↓reduceIte, List.length_cons]
      constructor <;> omega

/-- **The count is correct.** If the pass keeps `ok`, it has computed the length and the
number of distinct blocks of the stream that the pages denote. -/
theorem count_spec (w m base : Nat) (ps : List (List Nat)) (h : (count w m base ps).ok = true) :
    (count w m base ps).len = (unpack w m ps).length ∧
      (count w m base ps).dist = distinct (unpack w m ps) := by
  unfold count at h ⊢
  rw [run_eq_foldl] at h ⊢
  have hrep : Represents base ⟨0, 0, base, 0, true⟩ [] := fun y =>
    ⟨fun h => absurd h List.not_mem_nil, fun h => by
      rcases h with ⟨-, h⟩ | ⟨h1, h2⟩
      · simp at h
      · exact absurd h2 (Nat.not_lt.mpr h1)⟩
  have := foldl_visit base (unpack w m ps) ⟨0, 0, base, 0, true⟩ [] hrep h
  simpa [distinct] using this

/-- Counts computed by `count` (for instance by the kernel, with `decide +kernel`) are the
length and the number of distinct blocks of the unpacked stream. -/
theorem length_distinct_of_count {w m base : Nat} {ps : List (List Nat)} {len dist : Nat}
    (h : (count w m base ps).ok = true ∧ (count w m base ps).len = len ∧
      (count w m base ps).dist = dist) :
    (unpack w m ps).length = len ∧ distinct (unpack w m ps) = dist := by
  obtain ⟨hok, hl, hd⟩ := h
  rw [← (count_spec w m base ps hok).1, ← (count_spec w m base ps hok).2]
  exact ⟨hl, hd⟩

/-! ## Streams of runs

A stream whose blocks are numbered in first-occurrence order (a new block is always one more
than the largest so far, as in the Mooncake traces) is mostly made of *runs* of consecutive
blocks. A slot value `v` then holds a whole run: the `v % 2 ^ b` blocks from `v / 2 ^ b` on
(`runOf`); `0` is the empty run. `unpackRuns b w m ps` is the stream such pages denote, and
`runsRun b w m ps` visits a run in one step (`Counter.visitRun`) instead of one step a block:
with `base = 0` the seen set is the interval `[0, next)`, so a run starting at or below
`next` adds its length to `len` and its part above `next` to `dist` and `next`. Whenever the
pass keeps `ok`, it has computed exactly what the block-by-block pass computes
(`runsRun_spec`), hence the stream's length and distinct blocks (`length_distinct_of_runs`)
and, for a second stream after a first, its length and its distinct blocks absent from the
first (`length_distinct_sdiff_of_runs`).
-/

-- noncomputable: `List.range'` has no compiled code in the registry Lean.
/-- The run held by slot value `v` (run lengths in the low `b` bits): the `v % 2 ^ b`
consecutive blocks from `v / 2 ^ b` on. -/
noncomputable def runOf (b v : Nat) : List Nat := List.range' (v / 2 ^ b) (v % 2 ^ b)

-- noncomputable: `++` (`List.append`) has no compiled code in the registry Lean.
/-- The blocks of a list of runs, run after run. -/
noncomputable def runsBlocks (b : Nat) : List Nat → List Nat
  | [] => []
  | v :: vs => runOf b v ++ runsBlocks b vs

-- noncomputable: `++` (`List.append`) has no compiled code in the registry Lean.
/-- The blocks of a list of lines of runs, line after line. -/
noncomputable def unpackRunLines (b w m : Nat) : List Nat → List Nat
  | [] => []
  | n :: ns => runsBlocks b (slots w m n) ++ unpackRunLines b w m ns

-- noncomputable: `++` (`List.append`) has no compiled code in the registry Lean.
/-- The stream denoted by pages of lines of runs (`m` slots of width `w` a line, run lengths
in the low `b` bits of a slot). -/
noncomputable def unpackRuns (b w m : Nat) : List (List Nat) → List Nat
  | [] => []
  | p :: ps => unpackRunLines b w m p ++ unpackRuns b w m ps

/-- Visit the run of the `n` blocks from `a` on, with `base = 0` (the seen set is
`[0, next)`): it must start at or below `next`. -/
def Counter.visitRun (s : Counter) (a n : Nat) : Counter :=
  cond (Nat.ble a s.next)
    ⟨s.len + n, s.dist + (a + n - s.next), s.next + (a + n - s.next), s.old, s.ok⟩
    ⟨s.len + n, s.dist, s.next, s.old, false⟩

/-- Visit the run held by slot value `v`. -/
def Counter.runSlot (b : Nat) (s : Counter) (v : Nat) : Counter :=
  s.visitRun (v / 2 ^ b) (v % 2 ^ b)

-- noncomputable: `Nat.rec` has no compiled code in the registry Lean (`Nat.recCompiled`).
/-- Visit the runs of the `m` slots of width `w` of the line `n`, lowest first. -/
noncomputable def runsLine (b w m : Nat) : Nat → Counter → Counter :=
  Nat.rec (motive := fun _ => Nat → Counter → Counter) (fun _ s => s)
    (fun _ ih n s => ih (n / 2 ^ w) (s.runSlot b (n % 2 ^ w))) m

-- noncomputable: calls `runsLine`.
/-- Visit the runs of every line of a page in turn. -/
noncomputable def runsLines (b w m : Nat) (ns : List Nat) : Counter → Counter :=
  List.rec (motive := fun _ => Counter → Counter) (fun s => s)
    (fun n _ ih s =>
      let s' := runsLine b w m n s
      s'.force (ih s')) ns

-- noncomputable: calls `runsLines`.
/-- Visit the runs of every page in turn. -/
noncomputable def runsRun (b w m : Nat) (ps : List (List Nat)) : Counter → Counter :=
  List.rec (motive := fun _ => Counter → Counter) (fun s => s)
    (fun p _ ih s =>
      let s' := runsLines b w m p s
      s'.force (ih s')) ps

/-- The empty counter with `base = 0`. -/
def Counter.empty : Counter := ⟨0, 0, 0, 0, true⟩

/-- `Refines f xs`: whenever `f` ends with `ok`, it started with `ok` and did what the
block-by-block pass (`base = 0`) does on `xs`. -/
def Refines (f : Counter → Counter) (xs : List Nat) : Prop :=
  ∀ s, (f s).ok = true → s.ok = true ∧ f s = xs.foldl (Counter.visit 0) s

/-- Doing nothing refines the empty stream. -/
theorem refines_id : Refines (fun s => s) [] := fun _ h => ⟨h, rfl⟩

/-- Refinements compose along `++`. -/
theorem Refines.comp {f g : Counter → Counter} {xs ys : List Nat} (hf : Refines f xs)
    (hg : Refines g ys) : Refines (fun s => g (f s)) (xs ++ ys) := by
  intro s h
  obtain ⟨h1, e1⟩ := hg (f s) h
  obtain ⟨h2, e2⟩ := hf s h1
  refine ⟨h2, ?_⟩
  show g (f s) = _
  rw [e1, e2, List.foldl_append]

/-- A run starting at or below `next` is visited as its blocks are, one by one. -/
theorem Counter.visitRun_eq_foldl : ∀ (n a : Nat) (s : Counter), a ≤ s.next →
    s.visitRun a n = (List.range' a n).foldl (Counter.visit 0) s
  | 0, a, ⟨len, dist, next, old, ok⟩, h => by
    have h' : Nat.ble a next = true := Nat.ble_eq.mpr h
    simp only [Counter.visitRun, h', cond_true, List.range'_zero, List.foldl_nil]
    simp only at h
    congr 1 <;> omega
  | n + 1, a, ⟨len, dist, next, old, ok⟩, h => by
    simp only at h
    rw [List.range'_succ, List.foldl_cons]
    have h0 : Nat.blt a 0 = false := rfl
    have h2 : Nat.ble a next = true := Nat.ble_eq.mpr h
    by_cases hlt : a < next
    · have h1 : Nat.blt a next = true := Nat.blt_eq.mpr hlt
      have hv : Counter.visit 0 ⟨len, dist, next, old, ok⟩ a =
          ⟨len + 1, dist, next, old, ok⟩ := by
        simp only [Counter.visit, Counter.visitNew, Counter.hit, h0, h1, cond_true, cond_false]
      rw [hv, ← Counter.visitRun_eq_foldl n (a + 1) _ (by simp only; omega)]
      have h3 : Nat.ble (a + 1) next = true := Nat.ble_eq.mpr hlt
      simp only [Counter.visitRun, h2, h3, cond_true]
      congr 1 <;> omega
    · have he : a = next := by omega
      subst he
      have h1 : Nat.blt a a = false := blt_eq_false_of_le (Nat.le_refl a)
      have h4 : Nat.beq a a = true := Nat.beq_eq.mpr rfl
      have hv : Counter.visit 0 ⟨len, dist, a, old, ok⟩ a =
          ⟨len + 1, dist + 1, a + 1, old, ok⟩ := by
        simp only [Counter.visit, Counter.visitNew, Counter.visitFresh, h0, h1, h4, cond_true,
          cond_false]
      rw [hv, ← Counter.visitRun_eq_foldl n (a + 1) _ (by simp only; omega)]
      simp only [Counter.visitRun, h2, Nat.ble_eq.mpr (Nat.le_refl (a + 1)), cond_true]
      congr 1 <;> omega

/-- Visiting the run of a slot refines the blocks of that run. -/
theorem refines_runSlot (b v : Nat) : Refines (fun s => s.runSlot b v) (runOf b v) := by
  intro s h
  change (s.visitRun (v / 2 ^ b) (v % 2 ^ b)).ok = true at h
  show s.ok = true ∧ s.visitRun (v / 2 ^ b) (v % 2 ^ b) = _
  unfold Counter.visitRun at h
  cases hb : Nat.ble (v / 2 ^ b) s.next
  · rw [hb] at h
    simp at h
  · rw [hb] at h
    exact ⟨h, Counter.visitRun_eq_foldl _ _ s (Nat.ble_eq.mp hb)⟩

/-- Walking a line of runs refines the blocks of its runs. -/
theorem refines_runsLine (b w : Nat) : ∀ (m n : Nat),
    Refines (runsLine b w m n) (runsBlocks b (slots w m n))
  | 0, _ => refines_id
  | m + 1, n => (refines_runSlot b (n % 2 ^ w)).comp (refines_runsLine b w m (n / 2 ^ w))

/-- Walking the lines of a page refines the blocks of its runs. -/
theorem refines_runsLines (b w m : Nat) : ∀ ns : List Nat,
    Refines (runsLines b w m ns) (unpackRunLines b w m ns)
  | [] => refines_id
  | n :: ns => by
    have h := (refines_runsLine b w m n).comp (refines_runsLines b w m ns)
    intro s hs
    have e : runsLines b w m (n :: ns) s = runsLines b w m ns (runsLine b w m n s) :=
      Counter.force_eq _ _
    rw [e] at hs ⊢
    exact h s hs

/-- **The run pass is the block pass.** Whenever `runsRun` ends with `ok`, it started with
`ok` and its counter is that of the block-by-block pass (`base = 0`) over the stream. -/
theorem runsRun_spec (b w m : Nat) : ∀ ps : List (List Nat),
    Refines (runsRun b w m ps) (unpackRuns b w m ps)
  | [] => refines_id
  | p :: ps => by
    have h := (refines_runsLines b w m p).comp (runsRun_spec b w m ps)
    intro s hs
    have e : runsRun b w m (p :: ps) s = runsRun b w m ps (runsLines b w m p s) :=
      Counter.force_eq _ _
    rw [e] at hs ⊢
    exact h s hs

/-- The run pass over pages in two parts: the second part starts where the first stops. -/
theorem runsRun_append (b w m : Nat) : ∀ (ps qs : List (List Nat)) (s : Counter),
    runsRun b w m (ps ++ qs) s = runsRun b w m qs (runsRun b w m ps s)
  | [], _, _ => rfl
  | p :: ps, qs, s => by
    show (runsLines b w m p s).force (runsRun b w m (ps ++ qs) (runsLines b w m p s)) =
      runsRun b w m qs ((runsLines b w m p s).force (runsRun b w m ps (runsLines b w m p s)))
    rw [Counter.force_eq, Counter.force_eq, runsRun_append b w m ps qs]

/-- The stream of pages in two parts is the two streams, one after the other. -/
theorem unpackRuns_append (b w m : Nat) : ∀ (ps qs : List (List Nat)),
    unpackRuns b w m (ps ++ qs) = unpackRuns b w m ps ++ unpackRuns b w m qs
  | [], _ => rfl
  | p :: ps, qs => by
    simp only [List.cons_append, unpackRuns, unpackRuns_append b w m ps qs, List.append_assoc]

/-- `Represents` depends only on which blocks the list holds. -/
theorem Represents.congr {base : Nat} {s : Counter} {l l' : List Nat}
    (h : ∀ y, y ∈ l ↔ y ∈ l') (hr : Represents base s l) : Represents base s l' :=
  fun y => (h y).symm.trans (hr y)

/-- A pass that keeps `ok` represents the blocks seen before it and the blocks it visits. -/
theorem represents_foldl (base : Nat) : ∀ (xs : List Nat) (s : Counter) (seen : List Nat),
    Represents base s seen → (xs.foldl (Counter.visit base) s).ok = true →
      Represents base (xs.foldl (Counter.visit base) s) (seen ++ xs)
  | [], _, seen, hr, _ => by simpa using hr
  | x :: xs, s, seen, hr, hok => by
    rw [List.foldl_cons] at hok ⊢
    obtain ⟨-, -, hr'⟩ := Counter.visit_spec base s seen x hr (ok_of_foldl base xs _ hok)
    refine Represents.congr ?_ (represents_foldl base xs _ _ hr' hok)
    intro y
    by_cases hx : x ∈ seen
    · simp only [hx, ↓reduceIte, List.mem_append, List.mem_cons]
      constructor
      · rintro (e | e)
        · exact Or.inl e
        · exact Or.inr (Or.inr e)
      · rintro (e | e | e)
        · exact Or.inl e
        · subst e; exact Or.inl hx
        · exact Or.inr e
    · simp only [hx, ↓reduceIte, List.mem_append, List.mem_cons, or_assoc]
      exact or_left_comm

/-- **Counts from the run pass.** If the run pass over `ps` from the empty counter ends in
`s` with `ok`, then `s.len` and `s.dist` are the length and the number of distinct blocks of
the stream `ps` denotes. -/
theorem length_distinct_of_runs {b w m : Nat} {ps : List (List Nat)} {s : Counter}
    (h : runsRun b w m ps Counter.empty = s) (hok : s.ok = true) :
    (unpackRuns b w m ps).length = s.len ∧ distinct (unpackRuns b w m ps) = s.dist := by
  subst h
  obtain ⟨-, e⟩ := runsRun_spec b w m ps Counter.empty hok
  rw [e] at hok ⊢
  have hrep : Represents 0 Counter.empty [] := fun y => by
    simp [Counter.empty]
  obtain ⟨h1, h2⟩ := foldl_visit 0 (unpackRuns b w m ps) Counter.empty [] hrep hok
  simp only [Counter.empty, Nat.zero_add] at h1 h2
  exact ⟨h1.symm, h2.symm⟩

/-- **Counts of a stream after another, from the run pass.** If the run pass over `ps` from the
empty counter ends in `s`, and then over `qs` from `s` ends in `t` with `ok`, then
`t.len - s.len` is the length of the stream `qs` denotes, and `t.dist - s.dist` the number of
its distinct blocks that do not occur in the stream `ps` denotes. -/
theorem length_distinct_sdiff_of_runs {b w m : Nat} {ps qs : List (List Nat)} {s t : Counter}
    (hs : runsRun b w m ps Counter.empty = s) (ht : runsRun b w m qs s = t) (hok : t.ok = true) :
    (unpackRuns b w m qs).length = t.len - s.len ∧
      distinct ((unpackRuns b w m qs).filter (· ∉ unpackRuns b w m ps)) = t.dist - s.dist := by
  subst ht
  obtain ⟨hsok, e⟩ := runsRun_spec b w m qs s hok
  rw [e] at hok ⊢
  subst hs
  obtain ⟨-, e0⟩ := runsRun_spec b w m ps Counter.empty hsok
  rw [e0] at hsok hok ⊢
  have hrep : Represents 0 Counter.empty [] := fun y => by
    simp [Counter.empty]
  have hr := represents_foldl 0 (unpackRuns b w m ps) Counter.empty [] hrep hsok
  rw [List.nil_append] at hr
  have := foldl_visit 0 (unpackRuns b w m qs) _ _ hr hok
  rw [← distinctFrom_eq_distinct_filter]
  omega

/-! ## Evaluation by value

The passes above leave each new state as a *term* (`line w base m n s`, then the next line
applied to it, and so on), which `Counter.force` makes the kernel evaluate but not forget:
the next line still works on the term, and the kernel's work on one declaration grows faster
than the stream (measured: about three times the time for twice the pages). The passes below
compute the same counters (`runV_eq`, `runsRunV_eq`) but hand every line's state on *by
value*: `Counter.strict` takes each field apart with the recursor, so the kernel continues
with the literals, not with the term. The bitmap pass also sets bit `x` as `1 <<< x` (a
shift) instead of `2 ^ x` (`Counter.visitOldV`).
-/

-- noncomputable: `Nat.rec` has no compiled code in the registry Lean (`Nat.recCompiled`).
/-- `strictNat n k` is `k n`; reducing it makes the kernel evaluate `n` to a literal first. -/
noncomputable def strictNat (n : Nat) (k : Nat → Counter) : Counter :=
  Nat.rec (motive := fun _ => Counter) (k 0) (fun p _ => k (Nat.succ p)) n

-- noncomputable: `Bool.rec` has no compiled code in the registry Lean.
/-- `strictBool b k` is `k b`; reducing it makes the kernel evaluate `b` first. -/
noncomputable def strictBool (b : Bool) (k : Bool → Counter) : Counter :=
  Bool.rec (motive := fun _ => Counter) (k false) (k true) b

-- noncomputable: calls `strictNat`.
/-- `s.strict k` is `k s`, with every field of `s` evaluated first (call by value). -/
noncomputable def Counter.strict (s : Counter) (k : Counter → Counter) : Counter :=
  strictNat s.len fun l => strictNat s.dist fun d => strictNat s.next fun n =>
    strictNat s.old fun o => strictBool s.ok fun b => k ⟨l, d, n, o, b⟩

/-- `strictNat` is application. -/
theorem strictNat_eq (n : Nat) (k : Nat → Counter) : strictNat n k = k n := by
  cases n <;> rfl

/-- `strictBool` is application. -/
theorem strictBool_eq (b : Bool) (k : Bool → Counter) : strictBool b k = k b := by
  cases b <;> rfl

/-- `strict` is application. -/
theorem Counter.strict_eq (s : Counter) (k : Counter → Counter) : s.strict k = k s := by
  simp only [Counter.strict, strictNat_eq, strictBool_eq]

/-- `visitOld`, setting the bit by a shift. -/
def Counter.visitOldV (s : Counter) (x : Nat) : Counter :=
  cond (s.old.testBit x) s.hit ⟨s.len + 1, s.dist + 1, s.next, s.old ||| 1 <<< x, s.ok⟩

/-- `visit`, through `visitOldV`. -/
def Counter.visitV (base : Nat) (s : Counter) (x : Nat) : Counter :=
  cond (Nat.blt x base) (s.visitOldV x) (s.visitNew x)

/-- `slot`, through `visitV`. -/
def Counter.slotV (base : Nat) (s : Counter) (v : Nat) : Counter :=
  cond (Nat.beq v 0) s (s.visitV base (v - 1))

-- noncomputable: `Nat.rec` has no compiled code in the registry Lean (`Nat.recCompiled`).
/-- `line`, through `slotV`. -/
noncomputable def lineV (w base m : Nat) : Nat → Counter → Counter :=
  Nat.rec (motive := fun _ => Nat → Counter → Counter) (fun _ s => s)
    (fun _ ih n s => ih (n / 2 ^ w) (s.slotV base (n % 2 ^ w))) m

-- noncomputable: calls `lineV`.
/-- `runLines`, through `lineV`, each line's state handed on by value. -/
noncomputable def runLinesV (w m base : Nat) (ns : List Nat) : Counter → Counter :=
  List.rec (motive := fun _ => Counter → Counter) (fun s => s)
    (fun n _ ih s => (lineV w base m n s).strict ih) ns

-- noncomputable: calls `runLinesV`.
/-- `run`, through `runLinesV`, each page's state handed on by value. -/
noncomputable def runV (w m base : Nat) (ps : List (List Nat)) : Counter → Counter :=
  List.rec (motive := fun _ => Counter → Counter) (fun s => s)
    (fun p _ ih s => (runLinesV w m base p s).strict ih) ps

-- noncomputable: calls `runV`.
/-- `count`, through `runV`. -/
noncomputable def countV (w m base : Nat) (ps : List (List Nat)) : Counter :=
  runV w m base ps ⟨0, 0, base, 0, true⟩

/-- `visitOldV` is `visitOld`. -/
theorem Counter.visitOldV_eq (s : Counter) (x : Nat) : s.visitOldV x = s.visitOld x := by
  simp only [Counter.visitOldV, Counter.visitOld, Nat.shiftLeft_eq, Nat.one_mul]

/-- `slotV` is `slot`. -/
theorem Counter.slotV_eq (base : Nat) (s : Counter) (v : Nat) :
    s.slotV base v = s.slot base v := by
  simp only [Counter.slotV, Counter.slot, Counter.visitV, Counter.visit, Counter.visitOldV_eq]

/-- `lineV` is `line`. -/
theorem lineV_eq (w base : Nat) : ∀ (m n : Nat) (s : Counter),
    lineV w base m n s = line w base m n s
  | 0, _, _ => rfl
  | m + 1, n, s => by
    show lineV w base m (n / 2 ^ w) (s.slotV base (n % 2 ^ w)) =
      line w base m (n / 2 ^ w) (s.slot base (n % 2 ^ w))
    rw [lineV_eq w base m, Counter.slotV_eq]

/-- `runLinesV` is `runLines`. -/
theorem runLinesV_eq (w m base : Nat) : ∀ (ns : List Nat) (s : Counter),
    runLinesV w m base ns s = runLines w m base ns s
  | [], _ => rfl
  | n :: ns, s => by
    show (lineV w base m n s).strict (runLinesV w m base ns) =
      (line w base m n s).force (runLines w m base ns (line w base m n s))
    rw [Counter.strict_eq, Counter.force_eq, runLinesV_eq w m base ns, lineV_eq]

/-- `runV` is `run`. -/
theorem runV_eq (w m base : Nat) : ∀ (ps : List (List Nat)) (s : Counter),
    runV w m base ps s = run w m base ps s
  | [], _ => rfl
  | p :: ps, s => by
    show (runLinesV w m base p s).strict (runV w m base ps) =
      (runLines w m base p s).force (run w m base ps (runLines w m base p s))
    rw [Counter.strict_eq, Counter.force_eq, runV_eq w m base ps, runLinesV_eq]

/-- `countV` is `count`. -/
theorem countV_eq (w m base : Nat) (ps : List (List Nat)) :
    countV w m base ps = count w m base ps :=
  runV_eq w m base ps _

-- noncomputable: calls `runsLine`.
/-- `runsLines`, each line's state handed on by value. -/
noncomputable def runsLinesV (b w m : Nat) (ns : List Nat) : Counter → Counter :=
  List.rec (motive := fun _ => Counter → Counter) (fun s => s)
    (fun n _ ih s => (runsLine b w m n s).strict ih) ns

-- noncomputable: calls `runsLinesV`.
/-- `runsRun`, each page's state handed on by value. -/
noncomputable def runsRunV (b w m : Nat) (ps : List (List Nat)) : Counter → Counter :=
  List.rec (motive := fun _ => Counter → Counter) (fun s => s)
    (fun p _ ih s => (runsLinesV b w m p s).strict ih) ps

/-- `runsLinesV` is `runsLines`. -/
theorem runsLinesV_eq (b w m : Nat) : ∀ (ns : List Nat) (s : Counter),
    runsLinesV b w m ns s = runsLines b w m ns s
  | [], _ => rfl
  | n :: ns, s => by
    show (runsLine b w m n s).strict (runsLinesV b w m ns) =
      (runsLine b w m n s).force (runsLines b w m ns (runsLine b w m n s))
    rw [Counter.strict_eq, Counter.force_eq, runsLinesV_eq b w m ns]

/-- `runsRunV` is `runsRun`. -/
theorem runsRunV_eq (b w m : Nat) : ∀ (ps : List (List Nat)) (s : Counter),
    runsRunV b w m ps s = runsRun b w m ps s
  | [], _ => rfl
  | p :: ps, s => by
    show (runsLinesV b w m p s).strict (runsRunV b w m ps) =
      (runsLines b w m p s).force (runsRun b w m ps (runsLines b w m p s))
    rw [Counter.strict_eq, Counter.force_eq, runsRunV_eq b w m ps, runsLinesV_eq]

end KVCache.Ceiling.Packed

end
