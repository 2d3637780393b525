module

/-!
# Single-owner state movement: the model

Blocks of cached state (KV-cache blocks) move between *holders* (prefill servers, decode
servers, a host-memory tier, ...). A *kernel* decides every request about every block; the
holders talk to it through a network that may delay, duplicate, reorder and drop messages.

## The kernel (`Kern`, `step`)

For every block the kernel keeps a generation `gen` (bumped when the block is reallocated),
a sequence counter `seq` (how many tokens it has issued for the block in the current epoch and
generation) and a phase: `free`, `owned h`, or `escrow s r` (a transfer from `s` to `r` is
pending and nobody may read the block). A global `epoch` is bumped by `advance`.

Ownership is a *token*, issued by the kernel: a capability `⟨blk, holder, epoch, gen, nonce⟩`
or a transfer ticket `⟨blk, epoch, gen, nonce⟩`, with `nonce` drawn from the block's `seq`
(kernel-private state). The kernel never looks up who owns a block to decide a request: it
checks the presented token's block, epoch, generation and nonce against its counters, and a
capability's `holder` field against the authenticated presenter. That at most one holder can
act on a block is therefore a theorem about every token in circulation
(`Proofs.Kernel.Invariants`), not a consequence of how the state is stored.

`step` is total: every request yields the next kernel state, the messages the kernel sends
and a verdict. Its refusal branches return the state unchanged and send nothing; that this
holds for every request is `refusal_changes_nothing` (by cases on the code, not by a
wrapper).

## The system (`Sys`, `SysStep`)

The system state is the kernel, the messages in flight (a list used as a multiset) and every
holder's knowledge (the tokens it has received). A holder may send a request presenting only
tokens it knows, may hand any token it knows to any other holder (tokens can leak), and the
network may deliver any message in flight (in any order), duplicate it or drop it. The kernel
may `advance` the epoch and `resend` a block's current token on its own. Tokens are symbolic
values: nobody can forge one, the only tokens are those the kernel issued.

## The finite check

`Dom` fixes a finite configuration; `encKern`/`decKern` code kernel states as numbers in
mixed radix, `reqAt` enumerates the domain's request alphabet, and `checkChunk` is what the
generated modules `Proofs.Kernel.Table*` run with `decide +kernel`: agreement with the Python
reference's answers on every case, closure of the listed states under every accepted request,
and a reachability witness for every listed state (`Proofs.Kernel.Reachable`).
-/

@[expose] public section

noncomputable section

namespace KVCache.Kernel

/-! ## Configuration, tokens and kernel state -/

/-- The parameters of a kernel: holder ids `0..holders-1`, block ids `0..blocks-1`, and the
widths of the epoch, generation and per-generation sequence counters. -/
structure Config where
  /-- The number of holders. -/
  holders : Nat
  /-- The number of blocks. -/
  blocks : Nat
  /-- The largest epoch. -/
  maxEpoch : Nat
  /-- The largest generation of a block. -/
  maxGen : Nat
  /-- How many tokens the kernel may issue per block, epoch and generation. -/
  maxSeq : Nat

/-- An ownership capability, issued by the kernel to one holder. -/
structure Cap where
  /-- The block. -/
  blk : Nat
  /-- The holder it was issued to (only that holder may present it). -/
  holder : Nat
  /-- The epoch it was issued in. -/
  epoch : Nat
  /-- The block's generation when it was issued. -/
  gen : Nat
  /-- The block's sequence counter when it was issued. -/
  nonce : Nat
  deriving DecidableEq, Repr

/-- A transfer ticket: the right to settle one pending transfer (commit or abort). -/
structure Tkt where
  /-- The block in escrow. -/
  blk : Nat
  /-- The epoch it was issued in. -/
  epoch : Nat
  /-- The block's generation when it was issued. -/
  gen : Nat
  /-- The block's sequence counter when it was issued. -/
  nonce : Nat
  deriving DecidableEq, Repr

/-- A token: a capability or a ticket. -/
inductive Tok where
  /-- A capability. -/
  | cap (c : Cap)
  /-- A ticket. -/
  | tkt (t : Tkt)
  deriving DecidableEq, Repr

/-- Where a block is. -/
inductive Phase where
  /-- Nobody holds it. -/
  | free
  /-- Holder `holder` holds it. -/
  | owned (holder : Nat)
  /-- It is in flight from `sender` to `receiver`; nobody may read it. -/
  | escrow (sender receiver : Nat)
  deriving DecidableEq, Repr

/-- The kernel's record of one block. -/
structure Blk where
  /-- The generation (bumped by every reallocation). -/
  gen : Nat
  /-- How many tokens were issued for the block in this epoch and generation. -/
  seq : Nat
  /-- Where the block is. -/
  phase : Phase
  deriving DecidableEq, Repr

/-- The kernel state: the epoch and one record per block. -/
structure Kern where
  /-- The current epoch. -/
  epoch : Nat
  /-- The block records, block `b` at index `b`. -/
  blocks : List Blk
  deriving DecidableEq, Repr

/-- The requests the kernel decides. -/
inductive Req where
  /-- Holder `p` reads the block of capability `c`. -/
  | read (p : Nat) (c : Cap)
  /-- Holder `p` releases the block of capability `c`. -/
  | evict (p : Nat) (c : Cap)
  /-- Holder `p` starts a transfer of the block of capability `c` to holder `rcv`. -/
  | begin (p : Nat) (c : Cap) (rcv : Nat)
  /-- Settle the transfer of ticket `t`: the receiver owns the block. -/
  | commit (t : Tkt)
  /-- Settle the transfer of ticket `t`: the sender owns the block again. -/
  | abort (t : Tkt)
  /-- Holder `p` asks for the free block `b` (reallocation: a new generation). -/
  | alloc (p b : Nat)
  /-- The kernel moves to the next epoch. -/
  | advance
  /-- The kernel sends block `b`'s current token again. -/
  | resend (b : Nat)
  deriving DecidableEq, Repr

/-- Messages in flight. -/
inductive Msg where
  /-- A request to the kernel. -/
  | req (r : Req)
  /-- The kernel hands capability `c` to holder `dst`. -/
  | grant (dst : Nat) (c : Cap)
  /-- The kernel hands ticket `t` to holder `dst`. -/
  | ticket (dst : Nat) (t : Tkt)
  deriving DecidableEq, Repr

/-- Why a request was refused. -/
inductive Refusal where
  /-- The presenter is not a holder. -/
  | unknownPresenter
  /-- The token names no block. -/
  | unknownBlock
  /-- The token's epoch is not the current one. -/
  | staleEpoch
  /-- The token's generation is not the block's. -/
  | staleGen
  /-- The block is free. -/
  | notOwned
  /-- The block is in escrow. -/
  | inEscrow
  /-- The capability is not the block's current one. -/
  | revoked
  /-- The capability was issued to another holder. -/
  | wrongHolder
  /-- The named receiver is not a holder. -/
  | unknownHolder
  /-- The sender names itself as receiver. -/
  | selfTransfer
  /-- A counter would pass its bound. -/
  | bound
  /-- The ticket does not settle the block's pending transfer. -/
  | notPending
  /-- The block is not free. -/
  | notFree
  deriving DecidableEq, Repr

/-- The kernel's verdict on a request. -/
inductive Verdict where
  /-- Accepted. -/
  | ok
  /-- Refused, with the reason. -/
  | no (r : Refusal)
  deriving DecidableEq, Repr

/-- What a request does: the next kernel state, the messages sent, the verdict. -/
structure Out where
  /-- The next kernel state. -/
  kern : Kern
  /-- The messages the kernel sends. -/
  sends : List Msg
  /-- The verdict. -/
  verdict : Verdict

/-! ## The kernel's step -/

/-- The initial kernel: epoch 0, every block free in generation 0 with no token issued. -/
def Kern.init (cfg : Config) : Kern :=
  { epoch := 0, blocks := List.replicate cfg.blocks ⟨0, 0, .free⟩ }

/-- A refusal: the state as it was, nothing sent. -/
def refuse (k : Kern) (r : Refusal) : Out := ⟨k, [], .no r⟩

/-- Replace block `b`'s record. -/
def Kern.put (k : Kern) (b : Nat) (x : Blk) : Kern := { k with blocks := k.blocks.set b x }

/-- The checks on a token's block, epoch, generation and nonce, for a capability (in this
order): a known block, the current epoch, the block's generation, an owned block, the current
nonce. Gives the block's record when all pass. (Decisions are `Bool` tests on `Nat`, which
Lean's kernel evaluates fast.) -/
def tokCheck (k : Kern) (b e g n : Nat) : Except Refusal Blk :=
  match k.blocks[b]? with
  | none => .error .unknownBlock
  | some x =>
    bif Nat.beq e k.epoch then
      bif Nat.beq g x.gen then
        match x.phase with
        | .free => .error .notOwned
        | .escrow _ _ => .error .inEscrow
        | .owned _ => bif Nat.beq (n + 1) x.seq then .ok x else .error .revoked
      else .error .staleGen
    else .error .staleEpoch

/-- The checks on a capability `c` presented by `p`: a known presenter, the token checks, and
`p` the holder the capability was issued to. -/
def capCheck (cfg : Config) (k : Kern) (p : Nat) (c : Cap) : Except Refusal Blk :=
  bif Nat.blt p cfg.holders then
    match tokCheck k c.blk c.epoch c.gen c.nonce with
    | .error r => .error r
    | .ok x => bif Nat.beq c.holder p then .ok x else .error .wrongHolder
  else .error .unknownPresenter

/-- The checks on a ticket: a known block, the current epoch and generation, a pending transfer
whose ticket has the current nonce. Gives the record and the transfer's sender and receiver. -/
def tktCheck (k : Kern) (t : Tkt) : Except Refusal (Blk × Nat × Nat) :=
  match k.blocks[t.blk]? with
  | none => .error .unknownBlock
  | some x =>
    bif Nat.beq t.epoch k.epoch then
      bif Nat.beq t.gen x.gen then
        match x.phase with
        | .escrow s r => bif Nat.beq (t.nonce + 1) x.seq then .ok (x, s, r) else .error .notPending
        | _ => .error .notPending
      else .error .staleGen
    else .error .staleEpoch

/-- `read`: an accepted read changes nothing. -/
def doRead (cfg : Config) (k : Kern) (p : Nat) (c : Cap) : Out :=
  match capCheck cfg k p c with
  | .error r => refuse k r
  | .ok _ => ⟨k, [], .ok⟩

/-- `evict`: the owner releases the block. -/
def doEvict (cfg : Config) (k : Kern) (p : Nat) (c : Cap) : Out :=
  match capCheck cfg k p c with
  | .error r => refuse k r
  | .ok x => ⟨k.put c.blk ⟨x.gen, x.seq, .free⟩, [], .ok⟩

/-- The ticket of a transfer of block `b` (record `x`) begun in state `k`. -/
def beginTkt (k : Kern) (b : Nat) (x : Blk) : Tkt := ⟨b, k.epoch, x.gen, x.seq⟩

/-- `begin`: the owner puts the block in escrow towards `rcv`; the ticket goes to both. There
must be room for the ticket and for the capability that settles it (`seq + 2 ≤ maxSeq`). -/
def doBegin (cfg : Config) (k : Kern) (p : Nat) (c : Cap) (rcv : Nat) : Out :=
  match capCheck cfg k p c with
  | .error r => refuse k r
  | .ok x =>
    bif Nat.blt rcv cfg.holders then
      bif Nat.beq rcv p then refuse k .selfTransfer
      else bif Nat.ble (x.seq + 2) cfg.maxSeq then
        ⟨k.put c.blk ⟨x.gen, x.seq + 1, .escrow p rcv⟩,
          [.ticket p (beginTkt k c.blk x), .ticket rcv (beginTkt k c.blk x)], .ok⟩
      else refuse k .bound
    else refuse k .unknownHolder

/-- Settle a pending transfer with ticket `t`: to the receiver (`toRcv`) or back to the sender.
The new owner gets a new capability. -/
def settle (k : Kern) (t : Tkt) (toRcv : Bool) : Out :=
  match tktCheck k t with
  | .error e => refuse k e
  | .ok (x, s, r) =>
    ⟨k.put t.blk ⟨x.gen, x.seq + 1, .owned (cond toRcv r s)⟩,
      [.grant (cond toRcv r s) ⟨t.blk, cond toRcv r s, k.epoch, x.gen, x.seq⟩], .ok⟩

/-- `alloc`: holder `p` gets the free block `b` in a new generation, with a new capability. -/
def doAlloc (cfg : Config) (k : Kern) (p b : Nat) : Out :=
  bif Nat.blt p cfg.holders then
    match k.blocks[b]? with
    | none => refuse k .unknownBlock
    | some x =>
      match x.phase with
      | .free =>
        bif Nat.blt x.gen cfg.maxGen then
          ⟨k.put b ⟨x.gen + 1, 1, .owned p⟩, [.grant p ⟨b, p, k.epoch, x.gen + 1, 0⟩], .ok⟩
        else refuse k .bound
      | _ => refuse k .notFree
  else refuse k .unknownPresenter

/-- Whether a block is in escrow. -/
def Phase.isEscrow : Phase → Bool
  | .escrow _ _ => true
  | _ => false

/-- A block record after an epoch change: the sequence restarts, at 1 for an owned block
(whose owner is issued a new capability with nonce 0), at 0 otherwise. -/
def Blk.renew (x : Blk) : Blk :=
  match x.phase with
  | .owned _ => ⟨x.gen, 1, x.phase⟩
  | _ => ⟨x.gen, 0, x.phase⟩

/-- The capabilities issued by an epoch change to `e`: one per owned block, from block `i` on. -/
def renewGrants (e : Nat) : Nat → List Blk → List Msg
  | _, [] => []
  | i, x :: xs =>
    match x.phase with
    | .owned h => .grant h ⟨i, h, e, x.gen, 0⟩ :: renewGrants e (i + 1) xs
    | _ => renewGrants e (i + 1) xs

/-- `advance`: refused while a transfer is pending; otherwise the next epoch, every owner
issued a new capability. -/
def doAdvance (cfg : Config) (k : Kern) : Out :=
  bif k.blocks.any (fun x => x.phase.isEscrow) then refuse k .inEscrow
  else bif Nat.blt k.epoch cfg.maxEpoch then
    ⟨⟨k.epoch + 1, k.blocks.map Blk.renew⟩, renewGrants (k.epoch + 1) 0 k.blocks, .ok⟩
  else refuse k .bound

/-- `resend`: block `b`'s current token again, to its owner or to both ends of the transfer. -/
def doResend (k : Kern) (b : Nat) : Out :=
  match k.blocks[b]? with
  | none => refuse k .unknownBlock
  | some x =>
    match x.phase with
    | .free => refuse k .notOwned
    | .owned h => ⟨k, [.grant h ⟨b, h, k.epoch, x.gen, x.seq - 1⟩], .ok⟩
    | .escrow s r =>
      ⟨k, [.ticket s ⟨b, k.epoch, x.gen, x.seq - 1⟩, .ticket r ⟨b, k.epoch, x.gen, x.seq - 1⟩],
        .ok⟩

/-- One kernel step: the next state, what is sent, and the verdict. -/
def step (cfg : Config) (k : Kern) : Req → Out
  | .read p c => doRead cfg k p c
  | .evict p c => doEvict cfg k p c
  | .begin p c rcv => doBegin cfg k p c rcv
  | .commit t => settle k t true
  | .abort t => settle k t false
  | .alloc p b => doAlloc cfg k p b
  | .advance => doAdvance cfg k
  | .resend b => doResend k b

/-- Kernel states reachable from the initial one by accepted requests (any requests at all,
forged tokens included: a superset of what the system below can do). -/
inductive KReach (cfg : Config) : Kern → Prop
  /-- The initial state. -/
  | init : KReach cfg (Kern.init cfg)
  /-- An accepted request. -/
  | step {k : Kern} (r : Req) : KReach cfg k → (step cfg k r).verdict = .ok →
      KReach cfg (step cfg k r).kern

/-! ## The system: holders, their knowledge, the network -/

/-- The tokens a request presents. -/
def Req.toks : Req → List Tok
  | .read _ c | .evict _ c | .begin _ c _ => [.cap c]
  | .commit t | .abort t => [.tkt t]
  | .alloc _ _ | .advance | .resend _ => []

/-- The tokens a message carries. -/
def Msg.toks : Msg → List Tok
  | .req r => r.toks
  | .grant _ c => [.cap c]
  | .ticket _ t => [.tkt t]

/-- Holder `p` may send request `r`: it names `p` as presenter or requester, or it settles a
ticket. The kernel's own requests (`advance`, `resend`) are not sent by holders. -/
def Req.sentBy (p : Nat) : Req → Bool
  | .read q _ | .evict q _ | .begin q _ _ | .alloc q _ => Nat.beq q p
  | .commit _ | .abort _ => true
  | .advance | .resend _ => false

/-- The kernel's own requests. -/
def Req.internal : Req → Bool
  | .advance | .resend _ => true
  | _ => false

/-- The whole system: the kernel, the messages in flight (a multiset: any may be delivered
next), and what every holder knows (the tokens it has received, most recent first). -/
structure Sys where
  /-- The kernel's state. -/
  kern : Kern
  /-- The messages in flight. -/
  net : List Msg
  /-- The tokens each holder has received. -/
  know : Nat → List Tok

/-- The initial system: the initial kernel, nothing in flight, nobody knows anything. -/
def Sys.init (cfg : Config) : Sys := ⟨Kern.init cfg, [], fun _ => []⟩

/-- Holder `q` learns token `τ`. -/
def learn (know : Nat → List Tok) (q : Nat) (τ : Tok) : Nat → List Tok :=
  fun x => if x = q then τ :: know x else know x

/-- The kernel decides request `r`: its new state, and its messages put in flight. -/
def Sys.exec (cfg : Config) (S : Sys) (r : Req) : Sys :=
  ⟨(step cfg S.kern r).kern, (step cfg S.kern r).sends ++ S.net, S.know⟩

/-- Message `m` arrives (it has been taken out of the network): a request is decided by the
kernel, a token is learnt by its addressee. -/
def Sys.receive (cfg : Config) (S : Sys) : Msg → Sys
  | .req r => S.exec cfg r
  | .grant q c => { S with know := learn S.know q (.cap c) }
  | .ticket q t => { S with know := learn S.know q (.tkt t) }

/-- One step of the system. Holders only present tokens they know; tokens are never forged
(the only ones are those the kernel issued). The network may deliver any message in flight,
in any order, duplicate it or drop it; a holder may hand any token it knows to anyone. -/
inductive SysStep (cfg : Config) : Sys → Sys → Prop
  /-- Holder `p` sends request `r`, presenting only tokens it knows. -/
  | send {S : Sys} (p : Nat) (r : Req) : p < cfg.holders → r.sentBy p = true →
      (∀ τ ∈ r.toks, τ ∈ S.know p) → SysStep cfg S { S with net := .req r :: S.net }
  /-- Holder `p` hands a token it knows to holder `q` (tokens may leak). -/
  | share {S : Sys} (p q : Nat) (τ : Tok) : q < cfg.holders → τ ∈ S.know p →
      SysStep cfg S { S with know := learn S.know q τ }
  /-- The kernel acts on its own: `advance` or `resend`. -/
  | tick {S : Sys} (r : Req) : r.internal = true → SysStep cfg S (S.exec cfg r)
  /-- The network delivers any message in flight. -/
  | deliver {S : Sys} (l₁ l₂ : List Msg) (m : Msg) : S.net = l₁ ++ m :: l₂ →
      SysStep cfg S (Sys.receive cfg { S with net := l₁ ++ l₂ } m)
  /-- The network duplicates a message in flight. -/
  | dup {S : Sys} (l₁ l₂ : List Msg) (m : Msg) : S.net = l₁ ++ m :: l₂ →
      SysStep cfg S { S with net := m :: S.net }
  /-- The network drops a message in flight. -/
  | drop {S : Sys} (l₁ l₂ : List Msg) (m : Msg) : S.net = l₁ ++ m :: l₂ →
      SysStep cfg S { S with net := l₁ ++ l₂ }

/-- Runs of the system: zero or more steps. -/
inductive SysRun (cfg : Config) : Sys → Sys → Prop
  /-- No step. -/
  | refl (S : Sys) : SysRun cfg S S
  /-- One more step. -/
  | step {S S' S'' : Sys} : SysRun cfg S S' → SysStep cfg S' S'' → SysRun cfg S S''

/-- The reachable system states. -/
def SysReach (cfg : Config) (S : Sys) : Prop := SysRun cfg (Sys.init cfg) S

/-- Runs of the kernel alone: zero or more accepted requests (any requests). -/
inductive KRun (cfg : Config) : Kern → Kern → Prop
  /-- No request. -/
  | refl (k : Kern) : KRun cfg k k
  /-- One more accepted request. -/
  | step {k k' : Kern} (r : Req) : KRun cfg k k' → (step cfg k' r).verdict = .ok →
      KRun cfg k (step cfg k' r).kern

/-! ## Executable scenarios (the workflow bench)

A workflow is a list of actions, each naming tokens by their position in a holder's knowledge
and messages by their position in the network; `runActs` plays it (`none` if an action is
impossible) and counts the kernel's refusals. -/

/-- A scenario action. -/
inductive Act where
  /-- Holder `p` sends `read`, presenting its `j`-th token (a capability). -/
  | read (p j : Nat)
  /-- Holder `p` sends `evict`, presenting its `j`-th token. -/
  | evict (p j : Nat)
  /-- Holder `p` sends `begin` towards `r`, presenting its `j`-th token. -/
  | begin (p j r : Nat)
  /-- Holder `p` sends `commit`, presenting its `j`-th token (a ticket). -/
  | commit (p j : Nat)
  /-- Holder `p` sends `abort`, presenting its `j`-th token. -/
  | abort (p j : Nat)
  /-- Holder `p` asks for block `b`. -/
  | alloc (p b : Nat)
  /-- Holder `p` hands its `j`-th token to holder `q`. -/
  | share (p j q : Nat)
  /-- The network delivers message `i`. -/
  | deliver (i : Nat)
  /-- The network duplicates message `i`. -/
  | dup (i : Nat)
  /-- The network drops message `i`. -/
  | drop (i : Nat)
  /-- The kernel advances the epoch. -/
  | advance
  /-- The kernel resends block `b`'s current token. -/
  | resend (b : Nat)

/-- Holder `p` sends `r` if it may (`none` otherwise). -/
def trySend (cfg : Config) (S : Sys) (p : Nat) (r : Req) : Option (Sys × Nat) :=
  bif Nat.blt p cfg.holders && r.sentBy p && r.toks.all (fun τ => decide (τ ∈ S.know p)) then
    some ({ S with net := .req r :: S.net }, 0)
  else none

/-- 1 if the kernel refuses `r` in `k`, else 0. -/
def refusedCount (cfg : Config) (k : Kern) (r : Req) : Nat :=
  match (step cfg k r).verdict with
  | .ok => 0
  | .no _ => 1

/-- Play one action: the next state and the number of kernel refusals (0 or 1). -/
def runAct (cfg : Config) (S : Sys) : Act → Option (Sys × Nat)
  | .read p j => match (S.know p)[j]? with
    | some (.cap c) => trySend cfg S p (.read p c)
    | _ => none
  | .evict p j => match (S.know p)[j]? with
    | some (.cap c) => trySend cfg S p (.evict p c)
    | _ => none
  | .begin p j r => match (S.know p)[j]? with
    | some (.cap c) => trySend cfg S p (.begin p c r)
    | _ => none
  | .commit p j => match (S.know p)[j]? with
    | some (.tkt t) => trySend cfg S p (.commit t)
    | _ => none
  | .abort p j => match (S.know p)[j]? with
    | some (.tkt t) => trySend cfg S p (.abort t)
    | _ => none
  | .alloc p b => trySend cfg S p (.alloc p b)
  | .share p j q => match (S.know p)[j]? with
    | some τ => bif Nat.blt q cfg.holders then some ({ S with know := learn S.know q τ }, 0)
      else none
    | none => none
  | .deliver i => match S.net[i]? with
    | some m =>
      some (Sys.receive cfg { S with net := S.net.eraseIdx i } m,
        match m with
        | .req r => refusedCount cfg S.kern r
        | _ => 0)
    | none => none
  | .dup i => match S.net[i]? with
    | some m => some ({ S with net := m :: S.net }, 0)
    | none => none
  | .drop i => match S.net[i]? with
    | some _ => some ({ S with net := S.net.eraseIdx i }, 0)
    | none => none
  | .advance => some (S.exec cfg .advance, refusedCount cfg S.kern .advance)
  | .resend b => some (S.exec cfg (.resend b), refusedCount cfg S.kern (.resend b))

/-- Play a list of actions from `S`, adding up refusals to `n`. -/
def runActs (cfg : Config) : Sys → List Act → Nat → Option (Sys × Nat)
  | S, [], n => some (S, n)
  | S, a :: as, n => match runAct cfg S a with
    | some (S', d) => runActs cfg S' as (n + d)
    | none => none

/-- A capability's fields. -/
def Cap.flat (c : Cap) : List Nat := [c.blk, c.holder, c.epoch, c.gen, c.nonce]

/-- A ticket's fields. -/
def Tkt.flat (t : Tkt) : List Nat := [t.blk, t.epoch, t.gen, t.nonce]

/-- A token as numbers: 1 and a capability's fields, or 2 and a ticket's. -/
def Tok.flat : Tok → List Nat
  | .cap c => 1 :: c.flat
  | .tkt t => 2 :: t.flat

/-- A request as numbers: a tag (10 read, …, 17 resend) and its fields. -/
def Req.flat : Req → List Nat
  | .read p c => 10 :: p :: c.flat
  | .evict p c => 11 :: p :: c.flat
  | .begin p c r => 12 :: p :: r :: c.flat
  | .commit t => 13 :: t.flat
  | .abort t => 14 :: t.flat
  | .alloc p b => [15, p, b]
  | .advance => [16]
  | .resend b => [17, b]

/-- A message as numbers: 3 and a request, or 4 (grant) / 5 (ticket), the addressee, the
token's fields. -/
def Msg.flat : Msg → List Nat
  | .req r => 3 :: r.flat
  | .grant q c => 4 :: q :: c.flat
  | .ticket q t => 5 :: q :: t.flat

/-- A phase as three numbers: free `0 0 0`, owned `1 h 0`, escrow `2 s r`. -/
def Phase.flat : Phase → List Nat
  | .free => [0, 0, 0]
  | .owned h => [1, h, 0]
  | .escrow s r => [2, s, r]

/-- A system state as numbers: the epoch; per block generation, sequence and phase; the number
of messages in flight and each message; per holder the number of tokens it knows and each. -/
def Sys.flat (cfg : Config) (S : Sys) : List Nat :=
  S.kern.epoch :: S.kern.blocks.flatMap (fun x => x.gen :: x.seq :: x.phase.flat) ++
    S.net.length :: S.net.flatMap Msg.flat ++
    (List.range cfg.holders).flatMap (fun q => (S.know q).length :: (S.know q).flatMap Tok.flat)

/-- Numbers below `2^16` packed into one, first most significant, after a leading `acc`. -/
def packNat : List Nat → Nat → Nat
  | [], acc => acc
  | x :: xs, acc => packNat xs (acc * 65536 + x)

/-- A scenario's outcome as checked against the reference: the code of the final system state
(`packNat` of `Sys.flat`, after a leading 1) and the number of kernel refusals; 0 and 0 if an
action was impossible. -/
def scenarioCode (cfg : Config) (acts : List Act) : Nat × Nat :=
  match runActs cfg (Sys.init cfg) acts 0 with
  | some (S, n) => (packNat (S.flat cfg) 1, n)
  | none => (0, 0)

/-! ## Codes for the finite check

The generated tables `Proofs.Kernel.Table*` and the Python reference exchange numbers, laid out
as below (the reference computes them with its own code). -/

/-- The code of a refusal (its position in `Refusal`); 15 marks an accepted request. -/
def Refusal.code : Refusal → Nat
  | .unknownPresenter => 0
  | .unknownBlock => 1
  | .staleEpoch => 2
  | .staleGen => 3
  | .notOwned => 4
  | .inEscrow => 5
  | .revoked => 6
  | .wrongHolder => 7
  | .unknownHolder => 8
  | .selfTransfer => 9
  | .bound => 10
  | .notPending => 11
  | .notFree => 12

/-- The answer digit of an outcome: the refusal's code, or 15 when accepted. -/
def Out.digit (o : Out) : Nat :=
  match o.verdict with
  | .ok => 15
  | .no r => r.code

/-- The radix of a phase digit. -/
def phaseRadix (cfg : Config) : Nat := cfg.holders + cfg.holders * cfg.holders + 1

/-- A phase digit: owned `h` is `h`, escrow `s r` is `holders + s * holders + r`, free is the
largest digit (so that freeing a block raises the state's code). -/
def encPhase (cfg : Config) : Phase → Nat
  | .owned h => h
  | .escrow s r => cfg.holders + s * cfg.holders + r
  | .free => cfg.holders + cfg.holders * cfg.holders

/-- The phase of a digit (inverse of `encPhase` on digits below `phaseRadix`). -/
def decPhase (cfg : Config) (d : Nat) : Phase :=
  if d < cfg.holders then .owned d
  else if d < cfg.holders + cfg.holders * cfg.holders then
    .escrow ((d - cfg.holders) / cfg.holders) ((d - cfg.holders) % cfg.holders)
  else .free

/-- Append the generations of `xs` to `acc` in radix `maxGen + 1`. -/
def encGens (cfg : Config) : Nat → List Blk → Nat
  | acc, [] => acc
  | acc, x :: xs => encGens cfg (acc * (cfg.maxGen + 1) + x.gen) xs

/-- Append the sequence counters of `xs` to `acc` in radix `maxSeq + 1`. -/
def encSeqs (cfg : Config) : Nat → List Blk → Nat
  | acc, [] => acc
  | acc, x :: xs => encSeqs cfg (acc * (cfg.maxSeq + 1) + x.seq) xs

/-- Append the phase digits of `xs` to `acc`. -/
def encPhases (cfg : Config) : Nat → List Blk → Nat
  | acc, [] => acc
  | acc, x :: xs => encPhases cfg (acc * phaseRadix cfg + encPhase cfg x.phase) xs

/-- The code of a kernel state, most significant first: the epoch, every block's generation,
every block's sequence counter, every block's phase digit. Every accepted request that changes
the state raises its code. -/
def encKern (cfg : Config) (k : Kern) : Nat :=
  encPhases cfg (encSeqs cfg (encGens cfg k.epoch k.blocks) k.blocks) k.blocks

/-- The last `n` digits of `c` in radix `m`, most significant first, in front of `acc`, and
what is left of `c`. -/
def peel (m : Nat) : Nat → Nat → List Nat → List Nat × Nat
  | 0, c, acc => (acc, c)
  | n + 1, c, acc => peel m n (c / m) (c % m :: acc)

/-- Block records from generation, sequence and phase digits. -/
def mkBlocks (cfg : Config) : List Nat → List Nat → List Nat → List Blk
  | g :: gs, q :: qs, d :: ds => ⟨g, q, decPhase cfg d⟩ :: mkBlocks cfg gs qs ds
  | _, _, _ => []

/-- The kernel state of a code (inverse of `encKern` on states of the domain). -/
def decKern (cfg : Config) (c : Nat) : Kern :=
  let ph := peel (phaseRadix cfg) cfg.blocks c []
  let sq := peel (cfg.maxSeq + 1) cfg.blocks ph.2 []
  let gn := peel (cfg.maxGen + 1) cfg.blocks sq.2 []
  ⟨gn.2, mkBlocks cfg gn.1 sq.1 ph.1⟩

/-- The code of a capability (fields in radix blocks + 1, holders + 1, maxEpoch + 1,
maxGen + 1, maxSeq + 1). -/
def encCap (cfg : Config) (c : Cap) : Nat :=
  (((c.blk * (cfg.holders + 1) + c.holder) * (cfg.maxEpoch + 1) + c.epoch) * (cfg.maxGen + 1)
    + c.gen) * (cfg.maxSeq + 1) + c.nonce

/-- The code of a ticket. -/
def encTkt (cfg : Config) (t : Tkt) : Nat :=
  ((t.blk * (cfg.maxEpoch + 1) + t.epoch) * (cfg.maxGen + 1) + t.gen) * (cfg.maxSeq + 1)
    + t.nonce

/-- The code of a message the kernel sends: `2 * (dst + (holders + 1) * token) + kind`,
kind 0 for a capability, 1 for a ticket (requests are never sent by the kernel: 0). -/
def encMsg (cfg : Config) : Msg → Nat
  | .grant h c => 2 * (h + (cfg.holders + 1) * encCap cfg c)
  | .ticket h t => 2 * (h + (cfg.holders + 1) * encTkt cfg t) + 1
  | .req _ => 0

/-- The code of a list of sent messages: digits `1 + encMsg m` in radix `2^32`, first message
most significant. -/
def encSends (cfg : Config) : List Msg → Nat → Nat
  | [], acc => acc
  | m :: ms, acc => encSends cfg ms (acc * 4294967296 + 1 + encMsg cfg m)

/-- The code of an accepted outcome: the next state's code times `2^64`, plus the code of the
messages sent. -/
def encOut (cfg : Config) (o : Out) : Nat :=
  encKern cfg o.kern * 18446744073709551616 + encSends cfg o.sends 0

/-! ## The request alphabet of a domain

Every id field ranges over the known ids and one unknown id; epochs, generations and nonces
range over their whole width. The alphabet is grouped by token: for every block `b`
(`0..blocks`), epoch, generation and nonce (`0..maxSeq-1`), in this order (last fastest),
first every capability request on `⟨b, h, e, g, n⟩` (holder field `h`, presenter `p`, both
`0..holders`, and operation: read, evict, begin to `0..holders`), then commit and abort of the
ticket `⟨b, e, g, n⟩`. After the groups: `alloc p b`, `advance`, `resend b`. -/

/-- The shapes of the capability requests of a group: holder field, presenter, operation
(0 read, 1 evict, `2 + r` begin to `r`). -/
def capShapes (cfg : Config) : List (Nat × Nat × Nat) :=
  (List.range (cfg.holders + 1)).flatMap fun h =>
    (List.range (cfg.holders + 1)).flatMap fun p =>
      (List.range (cfg.holders + 3)).map fun op => (h, p, op)

/-- The capability request of shape `s` on the token `⟨b, _, e, g, n⟩`. -/
def capReq (b e g n : Nat) : Nat × Nat × Nat → Req
  | (h, p, 0) => .read p ⟨b, h, e, g, n⟩
  | (h, p, 1) => .evict p ⟨b, h, e, g, n⟩
  | (h, p, r + 2) => .begin p ⟨b, h, e, g, n⟩ r

/-- The token identities of the alphabet: block, epoch, generation, nonce. -/
def tokQuads (cfg : Config) : List (Nat × Nat × Nat × Nat) :=
  (List.range (cfg.blocks + 1)).flatMap fun b =>
    (List.range (cfg.maxEpoch + 1)).flatMap fun e =>
      (List.range (cfg.maxGen + 1)).flatMap fun g =>
        (List.range cfg.maxSeq).map fun n => (b, e, g, n)

/-- The requests of one token group. -/
def tokGroup (cfg : Config) : Nat × Nat × Nat × Nat → List Req
  | (b, e, g, n) =>
    (capShapes cfg).map (capReq b e g n) ++ [.commit ⟨b, e, g, n⟩, .abort ⟨b, e, g, n⟩]

/-- The requests after the groups: `alloc p b`, `advance`, `resend b`. -/
def otherReqs (cfg : Config) : List Req :=
  (List.range (cfg.holders + 1)).flatMap (fun p => (List.range (cfg.blocks + 1)).map (.alloc p))
    ++ .advance :: (List.range (cfg.blocks + 1)).map .resend

/-- The request alphabet of a domain. -/
def alphabet (cfg : Config) : List Req :=
  (tokQuads cfg).flatMap (tokGroup cfg) ++ otherReqs cfg

/-- Digits in base 16, the first one lowest. -/
def digitsOf : List Nat → Nat
  | [] => 0
  | d :: ds => d + 16 * digitsOf ds

/-- Lean's answers to every request of the alphabet in state `k`, as one number: the answer
digit of request `i` at `16 ^ i`. The generated tables compare it with the reference's. -/
def answers (cfg : Config) (k : Kern) : Nat :=
  digitsOf ((alphabet cfg).map fun r => (step cfg k r).digit)

/-! ## Candidates: the only requests a state can accept -/

/-- The requests about block `b` (record `x`) that state `k` can accept: by every holder, read,
evict and begin (to every holder) with the block's current capability; commit, abort and
resend with its current ticket; alloc by every holder. -/
def blockCands (cfg : Config) (k : Kern) (b : Nat) (x : Blk) : List Req :=
  (List.range cfg.holders).flatMap (fun p =>
      .read p ⟨b, p, k.epoch, x.gen, x.seq - 1⟩ :: .evict p ⟨b, p, k.epoch, x.gen, x.seq - 1⟩ ::
        (List.range cfg.holders).map (fun r => .begin p ⟨b, p, k.epoch, x.gen, x.seq - 1⟩ r)) ++
    (.commit ⟨b, k.epoch, x.gen, x.seq - 1⟩ :: .abort ⟨b, k.epoch, x.gen, x.seq - 1⟩ ::
      .resend b :: (List.range cfg.holders).map (fun p => .alloc p b))

/-- Every request state `k` can accept (`accepted_mem_candidates`): `advance`, then the
candidates of every block in order. -/
def candidates (cfg : Config) (k : Kern) : List Req :=
  .advance :: (List.range k.blocks.length).flatMap (fun b =>
    match k.blocks[b]? with
    | some x => blockCands cfg k b x
    | none => [])

/-! ## The chunk checker run by the generated tables -/

/-- One generated table row: the reference's answer digit for every request of the alphabet
(`answers`); per candidate, 0 if refused or `1 + encOut` if accepted; and a
reachability witness: a parent state's code and the index of the parent's candidate that
leads here. -/
structure Row where
  /-- The answer digits. -/
  digits : Nat
  /-- The candidates' outcomes. -/
  outs : List Nat
  /-- The parent's code. -/
  parent : Nat
  /-- The index of the request, among the parent's candidates. -/
  via : Nat

/-- 1 for a shape whose presenter is a holder, else 0. -/
def shapeBit (cfg : Config) (s : Nat × Nat × Nat) : Nat :=
  bif Nat.blt s.2.1 cfg.holders then 1 else 0

/-- The digit pattern of a group whose token is refused: the refusal's code wherever the
presenter is a holder, 0 (`unknownPresenter`) elsewhere, per unit of code. -/
def presPattern (cfg : Config) : Nat := digitsOf ((capShapes cfg).map (shapeBit cfg))

/-- Lean's answer digits for one token group, computed with one token check when the token is
refused (`groupDigits_eq`: they are the digits of `step` on every request of the group). -/
def groupDigits (cfg : Config) (k : Kern) : Nat × Nat × Nat × Nat → Nat
  | (b, e, g, n) =>
    (match tokCheck k b e g n with
      | .error r => r.code * presPattern cfg
      | .ok _ => digitsOf (((capShapes cfg).map (capReq b e g n)).map fun r => (step cfg k r).digit))
    + 16 ^ (capShapes cfg).length *
      (match tktCheck k ⟨b, e, g, n⟩ with
        | .error r => r.code * 17
        | .ok _ => (settle k ⟨b, e, g, n⟩ true).digit + 16 * (settle k ⟨b, e, g, n⟩ false).digit)

/-- Compare Lean's answers with the expected number `exp`, one token group at a time, then the
requests after the groups. -/
def checkGroups (cfg : Config) (k : Kern) : List (Nat × Nat × Nat × Nat) → Nat → Bool
  | [], exp => Nat.beq (digitsOf ((otherReqs cfg).map fun r => (step cfg k r).digit)) exp
  | q :: qs, exp =>
    Nat.beq (groupDigits cfg k q) (exp % 16 ^ ((capShapes cfg).length + 2)) &&
      checkGroups cfg k qs (exp / 16 ^ ((capShapes cfg).length + 2))

/-- Compare the outcomes of the candidates with the expected ones, and check that every
accepted candidate leads to a listed state (bit set in `bm`) whose code decodes back. -/
def checkOuts (cfg : Config) (bm : Nat) (k : Kern) : List Req → List Nat → Bool
  | [], [] => true
  | r :: rs, e :: es =>
    (match (step cfg k r).verdict with
      | .ok =>
        Nat.beq e (1 + encOut cfg (step cfg k r)) &&
          Nat.testBit bm (encKern cfg (step cfg k r).kern) &&
          decide (decKern cfg (encKern cfg (step cfg k r).kern) = (step cfg k r).kern)
      | .no _ => Nat.beq e 0) && checkOuts cfg bm k rs es
  | _, _ => false

/-- The witness of a row with code `c`: `c` is the initial state's code, or the parent has a
smaller code, is listed, and its candidate number `via` is accepted and leads to `c`'s
state. -/
def witnessOk (cfg : Config) (bm c : Nat) (row : Row) : Bool :=
  Nat.beq c (encKern cfg (Kern.init cfg)) ||
    (Nat.blt row.parent c && Nat.testBit bm row.parent &&
      match (candidates cfg (decKern cfg row.parent))[row.via]? with
      | some r =>
        decide ((step cfg (decKern cfg row.parent) r).verdict = .ok) &&
          decide ((step cfg (decKern cfg row.parent) r).kern = decKern cfg c)
      | none => false)

/-- Check one row: agreement on every request, closure, witness. -/
def checkRow (cfg : Config) (bm c : Nat) (row : Row) : Bool :=
  checkGroups cfg (decKern cfg c) (tokQuads cfg) row.digits &&
    checkOuts cfg bm (decKern cfg c) (candidates cfg (decKern cfg c)) row.outs &&
    witnessOk cfg bm c row

/-- Check the codes `c, c + 1, …` (`n` of them): every code whose bit is set in `bm` takes the
next row, and the rows run out exactly. -/
def checkCodes (cfg : Config) (bm : Nat) : Nat → Nat → List Row → Bool
  | 0, _, rows => rows.isEmpty
  | n + 1, c, rows =>
    if Nat.testBit bm c then
      match rows with
      | [] => false
      | row :: rest => checkRow cfg bm c row && checkCodes cfg bm n (c + 1) rest
    else checkCodes cfg bm n (c + 1) rows

end KVCache.Kernel

end

end
