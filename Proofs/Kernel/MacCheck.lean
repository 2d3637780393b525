module

public import Proofs.Kernel.Mac
public import Proofs.Kernel.Check

/-!
# Single-owner state movement: the tagged kernel's finite check and workflow bench

The checkers that the generated modules `Proofs.Kernel.MacTable` (the finite check of the
tagged variant `mstep`) and `Proofs.Kernel.MacWorkflows` (its workflow bench) run with
`decide +kernel` against the Python reference of the variant (`pytools.results.kernel.mac`).

**The MAC of the checks is a toy** (`toyMac`): the addressee and the token's fields packed into
one number, injective on the domains checked (fields below `2 ^ 16`), never 0. So the checks
check the variant kernel's *logic under a MAC* (the tag check against the named presenter, then
the ownership kernel), not the MAC: its unforgeability is the assumption `Unforged` of
`Proofs.Kernel.Mac`, the adversary's knowledge being the tags the kernel sent.

* **The tag layer** (`tagTableOk_sound`, `mstep_of_tagTable`): the check lists, for every request
  of the alphabet (`alphabet`), the tags it is presented with (`tagsFor`: the token's tag for
  every holder, so the right one and every other holder's, and 0, a tag no holder is ever
  issued); a passing bit string says, case by case, whether `mstep` decides the request as
  `step` does or refuses it at the tag check (`unknownPresenter`, nothing changed). Since the
  tag check reads no state, one bit string covers every state.
* **The states** (`MLRun.kreach`): every kernel state a run of the variant system reaches is
  reachable by accepted requests (`KReach`), so the first finite check
  (`Proofs.Kernel.Table`) lists it and certifies `step` there.
* **The workflow bench** (`mtrajectoryOk`): every decision of the variant kernel in a workflow,
  with its tag, in delivery order from the initial state, gets from `mstep` the reference's
  verdict, next state and messages. The checkers take the tag test and the step as arguments,
  so a planted tag-blind kernel can be run through the same checkers (and is refused).
-/

@[expose] public section

namespace KVCache.Kernel

/-! ## The toy MAC and the tagged cases of the alphabet -/

/-- The toy MAC of the checks: a leading 1, the addressee `q`, then the token's fields
(`Tok.flat`), packed in radix `2 ^ 16`. Injective for fields below `2 ^ 16`, never 0. A
stand-in for a keyed MAC: the checks check the kernel's logic, not the MAC. -/
def toyMac (q : Nat) (τ : Tok) : Nat := packNat (q :: τ.flat) 1

-- noncomputable: compiling it needs `List.appendTR`, absent from the registry Lean.
/-- The tags the finite check presents with request `r`: if `r` presents one token, that
token's tag for every holder `0..holders-1`, then 0 (issued to nobody: `toyMac` is never 0);
otherwise only 0. -/
noncomputable def tagsFor (cfg : Config) (r : Req) : List Nat :=
  match r.toks with
  | [τ] => (List.range cfg.holders).map (fun q => toyMac q τ) ++ [0]
  | _ => [0]

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- The tagged cases of a list of requests: each request with each of its tags, in order. -/
noncomputable def tagCasesOf (cfg : Config) (rs : List Req) : List (Req × Nat) :=
  rs.flatMap fun r => (tagsFor cfg r).map fun g => (r, g)

-- noncomputable: calls `tagCasesOf`, which has no compiled code here.
/-- The tagged cases of the finite check: every request of the alphabet with each of its
tags, in alphabet order. -/
noncomputable def tagCases (cfg : Config) : List (Req × Nat) := tagCasesOf cfg (alphabet cfg)

/-- Bits, the first one lowest, against the binary digits of `n` (and nothing past them). -/
def checkBits : List Bool → Nat → Bool
  | [], n => Nat.beq n 0
  | b :: bs, n => Nat.beq (n % 2) (bif b then 1 else 0) && checkBits bs (n / 2)

-- noncomputable: compiling it needs `List.range`, absent from the registry Lean.
/-- The first `len` binary digits of `n`, lowest first. -/
noncomputable def bitsOf (len n : Nat) : List Bool := (List.range len).map n.testBit

-- noncomputable: calls `tagCasesOf`, which has no compiled code here.
/-- The tag test's verdicts on the tagged cases of a list of requests. -/
noncomputable def verdicts (tg : Req → Nat → Bool) (cfg : Config) (rs : List Req) : List Bool :=
  (tagCasesOf cfg rs).map fun c => tg c.1 c.2

-- noncomputable: compiling it needs `List.getD`, absent from the registry Lean.
/-- Check the tag test on the token groups `qs` (`tokGroup`), group `j` against the bits of
dictionary entry `gs[j]` (the reference's verdicts on a group's tagged cases, lowest first). -/
noncomputable def checkTagGroups (tg : Req → Nat → Bool) (cfg : Config) (dict : List Nat) :
    List (Nat × Nat × Nat × Nat) → List Nat → Bool
  | [], [] => true
  | q :: qs, g :: gs =>
    checkBits (verdicts tg cfg (tokGroup cfg q)) (dict.getD g 0) &&
      checkTagGroups tg cfg dict qs gs
  | _, _ => false

-- noncomputable: compiling it needs `List.getD`, absent from the registry Lean.
/-- The reference's verdicts on the tagged cases of the groups `qs`, from the dictionary
entries `gs` names (group `j`: the first bits of entry `gs[j]`, as many as it has cases). -/
noncomputable def expandTags (cfg : Config) (dict : List Nat) :
    List (Nat × Nat × Nat × Nat) → List Nat → List Bool
  | q :: qs, g :: gs =>
    bitsOf (tagCasesOf cfg (tokGroup cfg q)).length (dict.getD g 0) ++ expandTags cfg dict qs gs
  | _, _ => []

-- noncomputable: calls `expandTags`, which has no compiled code here.
/-- The reference's verdicts on every tagged case of the alphabet: the groups' from the
dictionary, then those of the requests after the groups (`otherReqs`) from `others`. -/
noncomputable def refTags (cfg : Config) (dict gs : List Nat) (others : Nat) : List Bool :=
  expandTags cfg dict (tokQuads cfg) gs ++
    bitsOf (tagCasesOf cfg (otherReqs cfg)).length others

-- noncomputable: calls `checkTagGroups`, which has no compiled code here.
/-- The whole tag check: every token group, then the requests after the groups. -/
noncomputable def tagTableOk (tg : Req → Nat → Bool) (cfg : Config) (dict gs : List Nat)
    (others : Nat) : Bool :=
  checkTagGroups tg cfg dict (tokQuads cfg) gs && checkBits (verdicts tg cfg (otherReqs cfg)) others

/-- A passing bit check: every bit is the binary digit of `n` at its index. -/
theorem checkBits_sound : ∀ (bs : List Bool) (n : Nat), checkBits bs n = true →
    ∀ (i : Nat) (h : i < bs.length), bs[i] = n.testBit i
  | [], _, _, i, h => absurd h (Nat.not_lt_zero i)
  | b :: bs, n, hc, i, h => by
    simp only [checkBits, Bool.and_eq_true] at hc
    obtain ⟨h0, hs⟩ := hc
    cases i with
    | zero =>
      have h2 : n % 2 = (bif b then 1 else 0) := Nat.eq_of_beq_eq_true h0
      rw [Nat.testBit_zero]
      cases b <;> simp_all
    | succ i =>
      rw [Nat.testBit_succ]
      exact checkBits_sound bs (n / 2) hs i (by simpa using h)

/-- A passing bit check: the bits are the first binary digits of `n`. -/
theorem checkBits_eq {bs : List Bool} {n : Nat} (h : checkBits bs n = true) :
    bs = bitsOf bs.length n := by
  apply List.ext_getElem (by simp [bitsOf])
  intro i h₁ h₂
  rw [checkBits_sound bs n h i h₁]
  simp [bitsOf]

/-- A passing group check: the tag test's verdicts on the groups' tagged cases are the
reference's. -/
theorem checkTagGroups_sound {tg : Req → Nat → Bool} {cfg : Config} {dict : List Nat} :
    ∀ (qs : List (Nat × Nat × Nat × Nat)) (gs : List Nat),
      checkTagGroups tg cfg dict qs gs = true →
      verdicts tg cfg (qs.flatMap (tokGroup cfg)) = expandTags cfg dict qs gs
  | [], [], _ => by simp [verdicts, tagCasesOf, expandTags]
  | [], _ :: _, h => by simp [checkTagGroups] at h
  | _ :: _, [], h => by simp [checkTagGroups] at h
  | q :: qs, g :: gs, h => by
    simp only [checkTagGroups, Bool.and_eq_true] at h
    have ih := checkTagGroups_sound qs gs h.2
    have h1 := checkBits_eq h.1
    simp only [verdicts, tagCasesOf, List.length_map] at h1 ih ⊢
    rw [List.flatMap_cons, List.flatMap_append, List.map_append, ih, expandTags, h1]
    simp [tagCasesOf]

/-- Two passing group checks make one (the generated check runs in chunks of groups). -/
theorem checkTagGroups_append {tg : Req → Nat → Bool} {cfg : Config} {dict : List Nat} :
    ∀ (qs₁ : List (Nat × Nat × Nat × Nat)) (gs₁ : List Nat)
      (qs₂ : List (Nat × Nat × Nat × Nat)) (gs₂ : List Nat),
      checkTagGroups tg cfg dict qs₁ gs₁ = true → checkTagGroups tg cfg dict qs₂ gs₂ = true →
      checkTagGroups tg cfg dict (qs₁ ++ qs₂) (gs₁ ++ gs₂) = true
  | [], [], _, _, _, h₂ => h₂
  | [], _ :: _, _, _, h, _ => by simp [checkTagGroups] at h
  | _ :: _, [], _, _, h, _ => by simp [checkTagGroups] at h
  | q :: qs, g :: gs, qs₂, gs₂, h₁, h₂ => by
    simp only [checkTagGroups, List.cons_append, Bool.and_eq_true] at h₁ ⊢
    exact ⟨h₁.1, checkTagGroups_append qs gs qs₂ gs₂ h₁.2 h₂⟩

/-- A range of the token groups split in two. -/
theorem take_drop_add (l : List (Nat × Nat × Nat × Nat)) (a n m : Nat) :
    (l.drop a).take (n + m) = (l.drop a).take n ++ (l.drop (a + n)).take m := by
  rw [List.take_add, List.drop_drop]

/-- Two passing checks of consecutive ranges of the token groups make one (the generated check
runs in chunks of groups, one theorem each, to bound the kernel's memory). -/
theorem checkTagGroups_range {tg : Req → Nat → Bool} {cfg : Config} {dict : List Nat}
    (l : List (Nat × Nat × Nat × Nat)) (a n m : Nat) (gs₁ gs₂ : List Nat)
    (h₁ : checkTagGroups tg cfg dict ((l.drop a).take n) gs₁ = true)
    (h₂ : checkTagGroups tg cfg dict ((l.drop (a + n)).take m) gs₂ = true) :
    checkTagGroups tg cfg dict ((l.drop a).take (n + m)) (gs₁ ++ gs₂) = true := by
  rw [take_drop_add]
  exact checkTagGroups_append _ _ _ _ h₁ h₂

/-- A passing check of the first `n` token groups, `n` at least their number, checks them all. -/
theorem checkTagGroups_whole {tg : Req → Nat → Bool} {cfg : Config} {dict gs : List Nat}
    {n : Nat} (hn : Nat.ble (tokQuads cfg).length n = true)
    (h : checkTagGroups tg cfg dict (((tokQuads cfg).drop 0).take n) gs = true) :
    checkTagGroups tg cfg dict (tokQuads cfg) gs = true := by
  rwa [List.drop_zero, List.take_of_length_le (Nat.le_of_ble_eq_true hn)] at h

/-- A table passes when its groups and the requests after them do. -/
theorem tagTableOk_of_parts {tg : Req → Nat → Bool} {cfg : Config} {dict gs : List Nat}
    {others : Nat} (h₁ : checkTagGroups tg cfg dict (tokQuads cfg) gs = true)
    (h₂ : checkBits (verdicts tg cfg (otherReqs cfg)) others = true) :
    tagTableOk tg cfg dict gs others = true := by
  simp [tagTableOk, h₁, h₂]

/-- **A passing tag check is exact**: the tag test's verdicts on every tagged case of the
alphabet are the reference's. -/
theorem tagTableOk_sound {tg : Req → Nat → Bool} {cfg : Config} {dict gs : List Nat}
    {others : Nat} (h : tagTableOk tg cfg dict gs others = true) :
    (tagCases cfg).map (fun c => tg c.1 c.2) = refTags cfg dict gs others := by
  simp only [tagTableOk, Bool.and_eq_true] at h
  have h1 := checkTagGroups_sound _ _ h.1
  have h2 := checkBits_eq h.2
  simp only [verdicts, List.length_map] at h1 h2
  have happ : tagCasesOf cfg (alphabet cfg) =
      tagCasesOf cfg ((tokQuads cfg).flatMap (tokGroup cfg)) ++ tagCasesOf cfg (otherReqs cfg) := by
    simp only [tagCasesOf, alphabet, List.flatMap_append]
  rw [tagCases, happ, List.map_append, h1, h2, refTags]

/-- **The variant kernel on every tagged case of a passing tag check**: in every state, case
`i`'s request is decided by the ownership kernel (`step`) when the reference's verdict is a
right tag, and refused at the tag check (`unknownPresenter`, state unchanged, nothing sent)
otherwise. -/
theorem mstep_of_tagTable {cfg : Config} {dict gs : List Nat} {others : Nat}
    (h : tagTableOk (fun r g => r.tagged toyMac g) cfg dict gs others = true) (k : Kern)
    (i : Nat) (hi : i < (tagCases cfg).length) :
    mstep cfg toyMac k (tagCases cfg)[i].1 (tagCases cfg)[i].2 =
      bif (refTags cfg dict gs others)[i]?.getD false then step cfg k (tagCases cfg)[i].1
      else refuse k .unknownPresenter := by
  have := congrArg (fun l => l[i]?.getD false) (tagTableOk_sound h)
  simp only [List.getElem?_map, List.getElem?_eq_getElem hi, Option.map_some,
    Option.getD_some] at this
  rw [mstep, ← this]

/-! ## The states the variant reaches -/

/-- Replaying any log from a reachable state reaches a reachable state (a refused request
changes nothing). -/
theorem replay_kreach {cfg : Config} {k : Kern} (hk : KReach cfg k) (l : List Decision) :
    KReach cfg (replay cfg k l) := by
  induction l generalizing k with
  | nil => exact hk
  | cons d l ih =>
    apply ih
    by_cases hv : (step cfg k d.1).verdict = .ok
    · exact KReach.step d.1 hk hv
    · rw [(refusal_changes_nothing cfg k d.1 hv).1]
      exact hk

/-- **Every kernel state a run of the variant system reaches is reachable by accepted
requests** (`KReach`), whatever the MAC and the tags presented. -/
theorem MLRun.kreach {cfg : Config} {mac : Nat → Tok → Nat} {l : List Decision} {S : MSys}
    (h : MLRun cfg mac (MSys.init cfg) l S) : KReach cfg S.kern := by
  rw [h.replays.1]
  exact replay_kreach KReach.init l

/-! ## The workflow bench's trajectory check -/

/-- One decision of the variant kernel: the request, its tag, the code of the state it was
decided in, the answer digit (`Out.digit`) and the outcome's code (`encOut`). -/
structure MEvent where
  /-- The request. -/
  req : Req
  /-- The tag it carried. -/
  tag : Nat
  /-- The state's code (`encKern`). -/
  before : Nat
  /-- The answer digit. -/
  digit : Nat
  /-- The outcome's code: next state's code times `2^64` plus the sent messages' code. -/
  out : Nat

-- noncomputable: calls `decKern` through the step `ms`, noncomputable in the registry Lean.
/-- The step `ms` (the variant kernel, or a planted one) agrees with an event: same digit, same
outcome code, and the next state is exactly the state the outcome code names. -/
noncomputable def meventOk (cfg : Config) (ms : Kern → Req → Nat → Out) (e : MEvent) : Bool :=
  Nat.beq (ms (decKern cfg e.before) e.req e.tag).digit e.digit &&
    Nat.beq (encOut cfg (ms (decKern cfg e.before) e.req e.tag)) e.out &&
    decide ((ms (decKern cfg e.before) e.req e.tag).kern =
      decKern cfg (e.out / 18446744073709551616))

-- noncomputable: calls `meventOk`.
/-- A trajectory of the step `ms` from the state of code `c`: each event starts where the
previous one ended. -/
noncomputable def mtrajectoryOk (cfg : Config) (ms : Kern → Req → Nat → Out) :
    Nat → List MEvent → Bool
  | _, [] => true
  | c, e :: es => Nat.beq e.before c && meventOk cfg ms e &&
      mtrajectoryOk cfg ms (e.out / 18446744073709551616) es

end KVCache.Kernel

end
