module
public import Lean.Environment
public import Lean.Util.FoldConsts

/-! # Kernel replay of compiled modules

A driver for `lean --run` (run by `pytools.lean.replay`, not part of the library): for each
`.olean` path given, it reads the module's compiled data (all parts: `.olean`, `.olean.server`,
`.olean.private`, the last being the full kernel view with proof bodies), imports the module's
own imports, and sends every constant of the module to Lean's kernel again, each after the
constants it mentions (`Kernel.Environment.addDeclCore`). Constructors and recursors are not
sent: the kernel generates them with their inductive type, and each stored one must equal the
generated one. Unsafe and `partial` constants are skipped, as `Lean.Environment.replay` does.

It prints one line per module (`replayed PATH: ...` or `REJECTED PATH: reason`) and a last
line `REPLAY-RESULT ok` or `REPLAY-RESULT rejected N`.

Written for the registry WebAssembly Lean, whose shipped core has no IR for private helpers or
compiler specialisations: it uses no `HashMap`, `NameMap`, `for` loop or `Name.toString`
(each fails to compile or to run there, measured in docs/toolchain.md), only constructors,
`Array` indexing, explicit recursion and functions implemented in the runtime. -/

open Lean

/-- A natural number in decimal. -/
def natText (n : Nat) : String :=
  if n < 10 then String.singleton (Char.ofNat (48 + n))
  else natText (n / 10) ++ String.singleton (Char.ofNat (48 + n % 10))

/-- A name as dotted text (components as they are, numbers in decimal). -/
def nameText : Name → String
  | .anonymous => "[anonymous]"
  | .str .anonymous s => s
  | .str p s => nameText p ++ "." ++ s
  | .num .anonymous k => natText k
  | .num p k => nameText p ++ "." ++ natText k

/-- The module's constant names, bucketed by `Name.hash`, each with its position. -/
structure Index where
  /-- The buckets. -/
  buckets : Array (List (Name × Nat))

/-- The bucket of a name. -/
def bucketOf (size : Nat) (n : Name) : Nat := n.hash.toNat % size

/-- The position of `n` in one bucket. -/
def lookupIn (n : Name) : List (Name × Nat) → Option Nat
  | [] => none
  | (m, i) :: rest => if Name.beq m n then some i else lookupIn n rest

/-- The position of `n` among the module's constants. -/
def Index.find (ix : Index) (n : Name) : Option Nat :=
  let b := bucketOf ix.buckets.size n
  if h : b < ix.buckets.size then lookupIn n ix.buckets[b] else none

/-- The index of `names`, from position `i` on, added to `bs`. -/
partial def buildIndex (names : Array Name) (i : Nat) (bs : Array (List (Name × Nat))) :
    Array (List (Name × Nat)) :=
  if h : i < names.size then
    let b := bucketOf bs.size names[i]
    if hb : b < bs.size then buildIndex names (i + 1) (bs.set b ((names[i], i) :: bs[b]))
    else bs
  else bs

/-- The replay's state: the kernel environment so far and the module's constants. -/
structure St where
  /-- The kernel environment: the imports, then what was replayed. -/
  env : Kernel.Environment
  /-- The module's constants. -/
  consts : Array ConstantInfo
  /-- Where each name is in `consts`. -/
  index : Index
  /-- Which of `consts` were visited. -/
  started : Array Bool
  /-- Declarations the kernel accepted. -/
  added : Nat := 0
  /-- Constants skipped (unsafe or `partial`). -/
  skipped : Nat := 0

/-- The module's constant named `n`, with its position. -/
def St.find (s : St) (n : Name) : Option (Nat × ConstantInfo) :=
  match s.index.find n with
  | some i => if h : i < s.consts.size then some (i, s.consts[i]) else none
  | none => none

/-- What the kernel said, as text. -/
def excText : Kernel.Exception → String
  | .unknownConstant _ n => "unknown constant " ++ nameText n
  | .alreadyDeclared _ n => "already declared " ++ nameText n
  | .declTypeMismatch _ _ _ => "declaration type mismatch"
  | .declHasMVars _ n _ => "declaration has metavariables " ++ nameText n
  | .declHasFVars _ n _ => "declaration has free variables " ++ nameText n
  | .funExpected _ _ _ => "function expected"
  | .typeExpected _ _ _ => "type expected"
  | .letTypeMismatch _ _ n _ _ => "let type mismatch " ++ nameText n
  | .exprTypeMismatch _ _ _ _ => "expression type mismatch"
  | .appTypeMismatch _ _ _ _ _ => "application type mismatch"
  | .invalidProj _ _ _ => "invalid projection"
  | .thmTypeIsNotProp _ n _ => "theorem type is not a proposition " ++ nameText n
  | .other msg => msg
  | .deterministicTimeout => "deterministic timeout"
  | .excessiveMemory => "excessive memory"
  | .deepRecursion => "deep recursion"
  | .interrupted => "interrupted"

/-- Send one declaration to the kernel; a rejection is an error naming `what`. -/
def addDecl (st : IO.Ref St) (what : Name) (d : Declaration) : IO Unit := do
  let s ← st.get
  match s.env.addDeclCore 0 d none with
  | .ok env => st.set { s with env := env, added := s.added + 1 }
  | .error e => throw (IO.userError ("the kernel rejected " ++ nameText what ++ ": " ++ excText e))

mutual
/-- Visit `ns` from position `i` on. -/
partial def visitArray (st : IO.Ref St) (ns : Array Name) (i : Nat) : IO Unit := do
  if h : i < ns.size then
    visit st ns[i]
    visitArray st ns (i + 1)

/-- Visit every constant that `c`'s type and value mention. -/
partial def visitRefs (st : IO.Ref St) (c : ConstantInfo) : IO Unit := do
  visitArray st c.type.getUsedConstants 0
  match c.value? (allowOpaque := true) with
  | some v => visitArray st v.getUsedConstants 0
  | none => pure ()

/-- Visit what the types of an inductive block and of its constructors mention. -/
partial def visitBlockRefs (st : IO.Ref St) : List Name → IO Unit
  | [] => pure ()
  | n :: rest => do
    match (← st.get).find n with
    | some (_, c@(.inductInfo info)) =>
      visitRefs st c
      visitCtorRefs st info.ctors
    | _ => pure ()
    visitBlockRefs st rest

/-- Visit what the given constructors' types mention. -/
partial def visitCtorRefs (st : IO.Ref St) : List Name → IO Unit
  | [] => pure ()
  | n :: rest => do
    match (← st.get).find n with
    | some (_, c) => visitRefs st c
    | none => pure ()
    visitCtorRefs st rest

/-- Replay `n` if it is one of the module's constants not visited yet, after what it
mentions. -/
partial def visit (st : IO.Ref St) (n : Name) : IO Unit := do
  let s ← st.get
  match s.find n with
  | none => return
  | some (i, c) =>
    if s.started[i]! then return
    st.set { s with started := s.started.set! i true }
    if c.isUnsafe || c.isPartial then
      st.modify fun s => { s with skipped := s.skipped + 1 }
      return
    match c with
    | .inductInfo info =>
      markAll st info.all
      visitBlockRefs st info.all
      let types ← blockTypes st info.all
      addDecl st n (.inductDecl info.levelParams info.numParams types false)
    | .ctorInfo _ => visitRefs st c
    | .recInfo _ => visitRefs st c
    | .defnInfo v => visitRefs st c; addDecl st n (.defnDecl v)
    | .thmInfo v => visitRefs st c; addDecl st n (.thmDecl v)
    | .axiomInfo v => visitRefs st c; addDecl st n (.axiomDecl v)
    | .opaqueInfo v => visitRefs st c; addDecl st n (.opaqueDecl v)
    | .quotInfo _ => addDecl st n .quotDecl

/-- Mark the members of an inductive block as visited. -/
partial def markAll (st : IO.Ref St) : List Name → IO Unit
  | [] => pure ()
  | n :: rest => do
    st.modify fun s => match s.index.find n with
      | some i => { s with started := s.started.set! i true }
      | none => s
    markAll st rest

/-- The kernel's description of an inductive block, from the stored constants. -/
partial def blockTypes (st : IO.Ref St) : List Name → IO (List InductiveType)
  | [] => pure []
  | n :: rest => do
    match (← st.get).find n with
    | some (_, .inductInfo info) =>
      let ctors ← ctorList st info.ctors
      let tail ← blockTypes st rest
      pure ({ name := n, type := info.type, ctors := ctors } :: tail)
    | _ => throw (IO.userError ("inductive block member missing: " ++ nameText n))

/-- The kernel's description of constructors, from the stored constants. -/
partial def ctorList (st : IO.Ref St) : List Name → IO (List Constructor)
  | [] => pure []
  | n :: rest => do
    match (← st.get).find n with
    | some (_, .ctorInfo info) =>
      let tail ← ctorList st rest
      pure ({ name := n, type := info.type } :: tail)
    | _ => throw (IO.userError ("constructor missing: " ++ nameText n))
end

/-- Two lists of recursor rules are equal. -/
def rulesEq : List RecursorRule → List RecursorRule → Bool
  | [], [] => true
  | a :: as, b :: bs =>
    a.ctor == b.ctor && a.nfields == b.nfields && a.rhs == b.rhs && rulesEq as bs
  | _, _ => false

/-- A stored constructor or recursor equals the one the kernel generated (other kinds were
sent to the kernel as they are stored). -/
def sameGenerated : ConstantInfo → ConstantInfo → Bool
  | .ctorInfo a, .ctorInfo b =>
    a.type == b.type && a.levelParams == b.levelParams && a.induct == b.induct &&
    a.cidx == b.cidx && a.numParams == b.numParams && a.numFields == b.numFields &&
    a.isUnsafe == b.isUnsafe
  | .recInfo a, .recInfo b =>
    a.type == b.type && a.levelParams == b.levelParams && a.all == b.all &&
    a.numParams == b.numParams && a.numIndices == b.numIndices &&
    a.numMotives == b.numMotives && a.numMinors == b.numMinors && a.k == b.k &&
    a.isUnsafe == b.isUnsafe && rulesEq a.rules b.rules
  | .ctorInfo _, _ | .recInfo _, _ => false
  | _, _ => true

/-- Every safe constant of the module, from position `i` on, is in the kernel environment,
and each constructor and recursor equals the generated one. -/
partial def checkAll (st : IO.Ref St) (names : Array Name) (i : Nat) : IO Unit := do
  if h : i < names.size then
    let s ← st.get
    if h2 : i < s.consts.size then
      let c := s.consts[i]
      unless c.isUnsafe || c.isPartial do
        match s.env.find? names[i] with
        | none => throw (IO.userError ("not replayed: " ++ nameText names[i]))
        | some c' =>
          unless sameGenerated c c' do
            throw (IO.userError ("differs from the generated one: " ++ nameText names[i]))
    checkAll st names (i + 1)

/-- Replay one compiled module against `env` (its imports); the report line. -/
def replayWith (env : Environment) (md : ModuleData) (path : String) (t0 : Nat) :
    IO String := do
  let t1 ← IO.monoMsNow
  let names := md.constNames
  let ix : Index := { buckets := buildIndex names 0 (Array.replicate (names.size + 1) []) }
  let st ← IO.mkRef ({ env := env.toKernelEnv, consts := md.constants, index := ix,
                       started := Array.replicate names.size false } : St)
  visitArray st names 0
  checkAll st names 0
  let t2 ← IO.monoMsNow
  let s ← st.get
  return "replayed " ++ path ++ ": " ++ natText names.size ++ " constants, "
    ++ natText s.added ++ " declarations accepted by the kernel, " ++ natText s.skipped
    ++ " skipped (unsafe or partial); import " ++ natText (t1 - t0) ++ " ms, kernel "
    ++ natText (t2 - t1) ++ " ms"

/-- Replay one compiled module, given the path of its `.olean`, then free the imports' memory
(`Environment.freeRegions`, as `Lean.withImportModules` does): the registry Lean's memory is
one 32-bit WebAssembly heap, which a whole library's imports kept alive would fill (measured,
docs/toolchain.md). Nothing refers to the imports once `replayWith` has returned its line. -/
unsafe def replayFileUnsafe (path : String) : IO Unit := do
  let t0 ← IO.monoMsNow
  let mut files : Array System.FilePath := #[path]
  let server : System.FilePath := path ++ ".server"
  let priv : System.FilePath := path ++ ".private"
  if ← server.pathExists then files := files.push server
  if ← priv.pathExists then files := files.push priv
  let parts ← readModuleDataParts files
  let md ← if h : parts.size - 1 < parts.size then pure parts[parts.size - 1].1
    else throw (IO.userError "no module data")
  let env ← importModules md.imports {} (level := .exported)
  let line ← try replayWith env md path t0 finally env.freeRegions
  IO.println line

/-- Replay one compiled module, given the path of its `.olean`. -/
@[implemented_by replayFileUnsafe]
opaque replayFile (path : String) : IO Unit

/-- An error's text. -/
def errText : IO.Error → String
  | .userError msg => msg
  | _ => "an I/O error"

/-- Replay each module on a dedicated thread (the registry Lean's workers have the big
stack); count the ones rejected. -/
partial def replayAll : List String → Nat → IO Nat
  | [], bad => pure bad
  | a :: rest, bad => do
    let task ← IO.asTask (replayFile a) .dedicated
    let ok ← match task.get with
      | .ok () => pure true
      | .error e => do IO.println ("REJECTED " ++ a ++ ": " ++ errText e); pure false
    replayAll rest (if ok then bad else bad + 1)

/-- `lean --run KernelReplay.lean OLEAN...`: replay every module named. -/
public def main (args : List String) : IO UInt32 := do
  searchPathRef.set (← addSearchPathFromEnv {})
  let bad ← replayAll args 0
  IO.println ("REPLAY-RESULT " ++ (if bad == 0 then "ok" else "rejected " ++ natText bad))
  return (if bad == 0 then 0 else 1)
