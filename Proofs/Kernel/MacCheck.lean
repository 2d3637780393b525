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

* **The tag layer** (`tagBitsOk_sound`, `mstep_of_tagBits`): the check lists, for every request
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
/-- The tagged cases of the finite check: every request of the alphabet with each of its
tags, in alphabet order. -/
noncomputable def tagCases (cfg : Config) : List (Req × Nat) :=
  (alphabet cfg).flatMap fun r => (tagsFor cfg r).map fun g => (r, g)

/-- Bits, the first one lowest, against the binary digits of `n` (and nothing past them). -/
def checkBits : List Bool → Nat → Bool
  | [], n => Nat.beq n 0
  | b :: bs, n => Nat.beq (n % 2) (bif b then 1 else 0) && checkBits bs (n / 2)

-- noncomputable: calls `tagCases`, which has no compiled code here.
/-- The tag test `tg` gives, on every tagged case in order, the bit of `bits` at the case's
index. -/
noncomputable def tagBitsOk (tg : Req → Nat → Bool) (cfg : Config) (bits : Nat) : Bool :=
  checkBits ((tagCases cfg).map fun c => tg c.1 c.2) bits

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

/-- **A passing tag check is exact**: on every tagged case, the tag test gives the bit of the
case. -/
theorem tagBitsOk_sound {tg : Req → Nat → Bool} {cfg : Config} {bits : Nat}
    (h : tagBitsOk tg cfg bits = true) (i : Nat) (hi : i < (tagCases cfg).length) :
    tg (tagCases cfg)[i].1 (tagCases cfg)[i].2 = bits.testBit i := by
  have := checkBits_sound _ bits h i (by simpa using hi)
  simpa using this

/-- **The variant kernel on every tagged case of a passing tag check**: in every state, the
case's request is decided by the ownership kernel (`step`) when its bit is set, and refused at
the tag check (`unknownPresenter`, state unchanged, nothing sent) otherwise. -/
theorem mstep_of_tagBits {cfg : Config} {bits : Nat}
    (h : tagBitsOk (fun r g => r.tagged toyMac g) cfg bits = true) (k : Kern) (i : Nat)
    (hi : i < (tagCases cfg).length) :
    mstep cfg toyMac k (tagCases cfg)[i].1 (tagCases cfg)[i].2 =
      bif bits.testBit i then step cfg k (tagCases cfg)[i].1 else refuse k .unknownPresenter := by
  have := tagBitsOk_sound h i hi
  simp only at this
  rw [mstep, this]

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
