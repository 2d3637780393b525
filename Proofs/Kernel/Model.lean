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
or a transfer ticket `⟨blk, epoch, gen, nonce⟩`, with `nonce` drawn from the block's `seq`.
Every field of a token is a public counter, so a holder can write any token it likes: the
kernel trusts no field. It checks the presented token's block, epoch, generation and nonce
against its counters, and the *authenticated presenter* against what it stores: a capability
is accepted only from the block's stored owner (and only if its `holder` field names the
presenter), a `commit` only from the pending transfer's receiver, an `abort` only from its
sender or receiver. So only the owner reads, and only a transfer's parties settle it, for every
token anybody can write (`Proofs.Kernel.Invariants`), with no assumption about which tokens
holders present.

`step` is total: every request yields the next kernel state, the messages the kernel sends
and a verdict. Its refusal branches return the state unchanged and send nothing; that this
holds for every request is `refusal_changes_nothing` (by cases on the code, not by a
wrapper).

## The system (`Sys`, `SysStep`)

The system state is the kernel, the messages in flight (a list used as a multiset) and every
holder's knowledge (the tokens it has received). A holder may send a request presenting only
tokens it knows, may hand any token it knows to any other holder (tokens can leak), and the
network may deliver any message in flight (in any order), duplicate it or drop it. A holder
may also send a request presenting tokens it wrote itself, every field chosen (`SysStep.forge`):
the system does not assume honest holders. The kernel may `advance` the epoch and `resend` a
block's current token on its own.

## Codes

`encKern`/`decKern` code kernel states as numbers in mixed radix, `encOut` codes an outcome
(next state and messages sent), `Sys.flat` lays a whole system state out as numbers: the
workflow bench (`Proofs.Kernel.Workflows`) and the finite check (`Proofs.Kernel.Check`,
`Proofs.Kernel.Table`) exchange these numbers with the Python reference, which computes them
with its own code.
-/

@[expose] public section

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

-- noncomputable: the derived `DecidableEq Kern` compares `List Blk`, whose compiled
-- equality (`instDecidableEqList`) the registry Lean's core lacks.
noncomputable section

/-- The kernel state: the epoch and one record per block. -/
structure Kern where
  /-- The current epoch. -/
  epoch : Nat
  /-- The block records, block `b` at index `b`. -/
  blocks : List Blk
  deriving DecidableEq, Repr

end

/-- The requests the kernel decides. -/
inductive Req where
  /-- Holder `p` reads the block of capability `c`. -/
  | read (p : Nat) (c : Cap)
  /-- Holder `p` releases the block of capability `c`. -/
  | evict (p : Nat) (c : Cap)
  /-- Holder `p` starts a transfer of the block of capability `c` to holder `rcv`. -/
  | begin (p : Nat) (c : Cap) (rcv : Nat)
  /-- Holder `p` settles the transfer of ticket `t`: the receiver owns the block (accepted only
  from the receiver). -/
  | commit (p : Nat) (t : Tkt)
  /-- Holder `p` calls off the transfer of ticket `t`: the sender owns the block again
  (accepted only from the sender or the receiver). -/
  | abort (p : Nat) (t : Tkt)
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
  /-- The block's stored owner is not the presenter. -/
  | notOwner
  /-- The presenter is not a party of the pending transfer (the receiver for `commit`, the
  sender or the receiver for `abort`). -/
  | notParty
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

-- noncomputable: compiling it needs `List.replicateTR`, absent from the registry Lean.
/-- The initial kernel: epoch 0, every block free in generation 0 with no token issued. -/
noncomputable def Kern.init (cfg : Config) : Kern :=
  { epoch := 0, blocks := List.replicate cfg.blocks ⟨0, 0, .free⟩ }

/-- A refusal: the state as it was, nothing sent. -/
def refuse (k : Kern) (r : Refusal) : Out := ⟨k, [], .no r⟩

-- noncomputable: compiling it needs `List.setTR`, absent from the registry Lean.
/-- Replace block `b`'s record. -/
noncomputable def Kern.put (k : Kern) (b : Nat) (x : Blk) : Kern :=
  { k with blocks := k.blocks.set b x }

-- noncomputable: compiling it needs `List.get?Internal`, absent from the registry Lean.
/-- The checks on a token's block, epoch, generation and nonce, for a capability (in this
order): a known block, the current epoch, the block's generation, an owned block, the current
nonce. Gives the block's record when all pass. (Decisions are `Bool` tests on `Nat`, which
Lean's kernel evaluates fast.) -/
noncomputable def tokCheck (k : Kern) (b e g n : Nat) : Except Refusal Blk :=
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

/-- Whether a phase is `owned p`. -/
def Phase.ownedBy (p : Nat) : Phase → Bool
  | .owned h => Nat.beq h p
  | _ => false

-- noncomputable: calls `tokCheck`, which has no compiled code here.
/-- The checks on a capability `c` presented by `p`: a known presenter, the token checks, `p`
the holder the capability names, and `p` the block's stored owner (the kernel's own record, not
the token's claim: every field of a token is public, so the token alone proves nothing). -/
noncomputable def capCheck (cfg : Config) (k : Kern) (p : Nat) (c : Cap) : Except Refusal Blk :=
  bif Nat.blt p cfg.holders then
    match tokCheck k c.blk c.epoch c.gen c.nonce with
    | .error r => .error r
    | .ok x =>
      bif Nat.beq c.holder p then
        bif x.phase.ownedBy p then .ok x else .error .notOwner
      else .error .wrongHolder
  else .error .unknownPresenter

-- noncomputable: compiling it needs `List.get?Internal`, absent from the registry Lean.
/-- The checks on a ticket: a known block, the current epoch and generation, a pending transfer
whose ticket has the current nonce. Gives the record and the transfer's sender and receiver. -/
noncomputable def tktCheck (k : Kern) (t : Tkt) : Except Refusal (Blk × Nat × Nat) :=
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

-- noncomputable: calls `capCheck`, which has no compiled code here.
/-- `read`: an accepted read changes nothing. -/
noncomputable def doRead (cfg : Config) (k : Kern) (p : Nat) (c : Cap) : Out :=
  match capCheck cfg k p c with
  | .error r => refuse k r
  | .ok _ => ⟨k, [], .ok⟩

-- noncomputable: calls `capCheck`, which has no compiled code here.
/-- `evict`: the owner releases the block. -/
noncomputable def doEvict (cfg : Config) (k : Kern) (p : Nat) (c : Cap) : Out :=
  match capCheck cfg k p c with
  | .error r => refuse k r
  | .ok x => ⟨k.put c.blk ⟨x.gen, x.seq, .free⟩, [], .ok⟩

/-- The ticket of a transfer of block `b` (record `x`) begun in state `k`. -/
def beginTkt (k : Kern) (b : Nat) (x : Blk) : Tkt := ⟨b, k.epoch, x.gen, x.seq⟩

-- noncomputable: calls `capCheck`, which has no compiled code here.
/-- `begin`: the owner puts the block in escrow towards `rcv`; the ticket goes to both. There
must be room for the ticket and for the capability that settles it (`seq + 2 ≤ maxSeq`). -/
noncomputable def doBegin (cfg : Config) (k : Kern) (p : Nat) (c : Cap) (rcv : Nat) : Out :=
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

/-- Whether `p` may settle a transfer from `s` to `r`: commit (`toRcv`) only the receiver; abort
the sender (withdrawing it) or the receiver (declining it). A bystander holding a leaked ticket
decides nothing; either party calling the transfer off returns the block to the sender, which
held it, so no party gains a block it did not hold or was not offered. -/
def maySettle (p s r : Nat) (toRcv : Bool) : Bool :=
  cond toRcv (Nat.beq p r) (Nat.beq p s || Nat.beq p r)

-- noncomputable: calls `tktCheck`, which has no compiled code here.
/-- The checks on a ticket `t` presented by `p` to settle (`toRcv`: commit, else abort): a known
presenter, the ticket checks, and `p` a party allowed to settle (`maySettle`). -/
noncomputable def settleCheck (cfg : Config) (k : Kern) (p : Nat) (t : Tkt) (toRcv : Bool) :
    Except Refusal (Blk × Nat × Nat) :=
  bif Nat.blt p cfg.holders then
    match tktCheck k t with
    | .error e => .error e
    | .ok (x, s, r) => bif maySettle p s r toRcv then .ok (x, s, r) else .error .notParty
  else .error .unknownPresenter

-- noncomputable: calls `settleCheck`, which has no compiled code here.
/-- Holder `p` settles a pending transfer with ticket `t`: to the receiver (`toRcv`) or back to
the sender. The new owner gets a new capability. -/
noncomputable def settle (cfg : Config) (k : Kern) (p : Nat) (t : Tkt) (toRcv : Bool) : Out :=
  match settleCheck cfg k p t toRcv with
  | .error e => refuse k e
  | .ok (x, s, r) =>
    ⟨k.put t.blk ⟨x.gen, x.seq + 1, .owned (cond toRcv r s)⟩,
      [.grant (cond toRcv r s) ⟨t.blk, cond toRcv r s, k.epoch, x.gen, x.seq⟩], .ok⟩

-- noncomputable: compiling it needs `List.get?Internal`, absent from the registry Lean.
/-- `alloc`: holder `p` gets the free block `b` in a new generation, with a new capability. -/
noncomputable def doAlloc (cfg : Config) (k : Kern) (p b : Nat) : Out :=
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

-- noncomputable: compiling it needs `List.any`, absent from the registry Lean.
/-- `advance`: refused while a transfer is pending; otherwise the next epoch, every owner
issued a new capability. -/
noncomputable def doAdvance (cfg : Config) (k : Kern) : Out :=
  bif k.blocks.any (fun x => x.phase.isEscrow) then refuse k .inEscrow
  else bif Nat.blt k.epoch cfg.maxEpoch then
    ⟨⟨k.epoch + 1, k.blocks.map Blk.renew⟩, renewGrants (k.epoch + 1) 0 k.blocks, .ok⟩
  else refuse k .bound

-- noncomputable: compiling it needs `List.get?Internal`, absent from the registry Lean.
/-- `resend`: block `b`'s current token again, to its owner or to both ends of the transfer. -/
noncomputable def doResend (k : Kern) (b : Nat) : Out :=
  match k.blocks[b]? with
  | none => refuse k .unknownBlock
  | some x =>
    match x.phase with
    | .free => refuse k .notOwned
    | .owned h => ⟨k, [.grant h ⟨b, h, k.epoch, x.gen, x.seq - 1⟩], .ok⟩
    | .escrow s r =>
      ⟨k, [.ticket s ⟨b, k.epoch, x.gen, x.seq - 1⟩, .ticket r ⟨b, k.epoch, x.gen, x.seq - 1⟩],
        .ok⟩

-- noncomputable: calls `doRead`, which has no compiled code here.
/-- One kernel step: the next state, what is sent, and the verdict. -/
noncomputable def step (cfg : Config) (k : Kern) : Req → Out
  | .read p c => doRead cfg k p c
  | .evict p c => doEvict cfg k p c
  | .begin p c rcv => doBegin cfg k p c rcv
  | .commit p t => settle cfg k p t true
  | .abort p t => settle cfg k p t false
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
  | .commit _ t | .abort _ t => [.tkt t]
  | .alloc _ _ | .advance | .resend _ => []

/-- The tokens a message carries. -/
def Msg.toks : Msg → List Tok
  | .req r => r.toks
  | .grant _ c => [.cap c]
  | .ticket _ t => [.tkt t]

/-- Holder `p` may send request `r`: it names `p` as presenter or requester (the network
authenticates the sender). The kernel's own requests (`advance`, `resend`) are not sent by
holders. -/
def Req.sentBy (p : Nat) : Req → Bool
  | .read q _ | .evict q _ | .begin q _ _ | .alloc q _ | .commit q _ | .abort q _ => Nat.beq q p
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

-- noncomputable: calls `Kern.init`, which has no compiled code here.
/-- The initial system: the initial kernel, nothing in flight, nobody knows anything. -/
noncomputable def Sys.init (cfg : Config) : Sys := ⟨Kern.init cfg, [], fun _ => []⟩

/-- Holder `q` learns token `τ`. -/
def learn (know : Nat → List Tok) (q : Nat) (τ : Tok) : Nat → List Tok :=
  fun x => if x = q then τ :: know x else know x

-- noncomputable: compiling it needs `List.appendTR`, absent from the registry Lean.
/-- The kernel decides request `r`: its new state, and its messages put in flight. -/
noncomputable def Sys.exec (cfg : Config) (S : Sys) (r : Req) : Sys :=
  ⟨(step cfg S.kern r).kern, (step cfg S.kern r).sends ++ S.net, S.know⟩

-- noncomputable: calls `Sys.exec`, which has no compiled code here.
/-- Message `m` arrives (it has been taken out of the network): a request is decided by the
kernel, a token is learnt by its addressee. -/
noncomputable def Sys.receive (cfg : Config) (S : Sys) : Msg → Sys
  | .req r => S.exec cfg r
  | .grant q c => { S with know := learn S.know q (.cap c) }
  | .ticket q t => { S with know := learn S.know q (.tkt t) }

/-- One step of the system. A holder presents tokens it knows (`send`) or tokens it wrote
itself (`forge`, every field chosen); it may hand any token it knows to anyone (tokens leak).
The network may deliver any message in flight, in any order, duplicate it or drop it. -/
inductive SysStep (cfg : Config) : Sys → Sys → Prop
  /-- Holder `p` sends request `r`, presenting only tokens it knows. -/
  | send {S : Sys} (p : Nat) (r : Req) : p < cfg.holders → r.sentBy p = true →
      (∀ τ ∈ r.toks, τ ∈ S.know p) → SysStep cfg S { S with net := .req r :: S.net }
  /-- Holder `p` sends request `r` presenting tokens it wrote itself (a forgery: any fields);
  the network authenticates only the sender. -/
  | forge {S : Sys} (p : Nat) (r : Req) : p < cfg.holders → r.sentBy p = true →
      SysStep cfg S { S with net := .req r :: S.net }
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
  /-- Holder `p` sends `read` presenting a capability `⟨b, h, e, g, n⟩` it wrote itself (a
  forgery: every field is a public counter; `SysStep.forge`). -/
  | forge (p b h e g n : Nat)

-- noncomputable: compiling it needs `instBEqOfDecidableEq`, absent from the registry Lean.
/-- Holder `p` sends `r` if it may (`none` otherwise). -/
noncomputable def trySend (cfg : Config) (S : Sys) (p : Nat) (r : Req) : Option (Sys × Nat) :=
  bif Nat.blt p cfg.holders && r.sentBy p && r.toks.all (fun τ => decide (τ ∈ S.know p)) then
    some ({ S with net := .req r :: S.net }, 0)
  else none

-- noncomputable: calls `step`, which has no compiled code here.
/-- 1 if the kernel refuses `r` in `k`, else 0. -/
noncomputable def refusedCount (cfg : Config) (k : Kern) (r : Req) : Nat :=
  match (step cfg k r).verdict with
  | .ok => 0
  | .no _ => 1

-- noncomputable: compiling it needs `List.eraseIdxTR`, absent from the registry Lean.
/-- Play one action: the next state and the number of kernel refusals (0 or 1). -/
noncomputable def runAct (cfg : Config) (S : Sys) : Act → Option (Sys × Nat)
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
    | some (.tkt t) => trySend cfg S p (.commit p t)
    | _ => none
  | .abort p j => match (S.know p)[j]? with
    | some (.tkt t) => trySend cfg S p (.abort p t)
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
  | .forge p b h e g n =>
    bif Nat.blt p cfg.holders then
      some ({ S with net := .req (.read p ⟨b, h, e, g, n⟩) :: S.net }, 0)
    else none

-- noncomputable: calls `runAct`, which has no compiled code here.
/-- Play a list of actions from `S`, adding up refusals to `n`. -/
noncomputable def runActs (cfg : Config) : Sys → List Act → Nat → Option (Sys × Nat)
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
  | .commit p t => 13 :: p :: t.flat
  | .abort p t => 14 :: p :: t.flat
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

-- noncomputable: compiling it needs `List.flatMapTR`, absent from the registry Lean.
/-- A system state as numbers: the epoch; per block generation, sequence and phase; the number
of messages in flight and each message; per holder the number of tokens it knows and each. -/
noncomputable def Sys.flat (cfg : Config) (S : Sys) : List Nat :=
  S.kern.epoch :: S.kern.blocks.flatMap (fun x => x.gen :: x.seq :: x.phase.flat) ++
    S.net.length :: S.net.flatMap Msg.flat ++
    (List.range cfg.holders).flatMap (fun q => (S.know q).length :: (S.know q).flatMap Tok.flat)

/-- Numbers below `2^16` packed into one, first most significant, after a leading `acc`. -/
def packNat : List Nat → Nat → Nat
  | [], acc => acc
  | x :: xs, acc => packNat xs (acc * 65536 + x)

-- noncomputable: calls `Sys.init`, which has no compiled code here.
/-- A scenario's outcome as checked against the reference: the code of the final system state
(`packNat` of `Sys.flat`, after a leading 1) and the number of kernel refusals; 0 and 0 if an
action was impossible. -/
noncomputable def scenarioCode (cfg : Config) (acts : List Act) : Nat × Nat :=
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
  | .notOwner => 13
  | .notParty => 14

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

end KVCache.Kernel

end
