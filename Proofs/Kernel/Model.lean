module

/-!
# Single-owner state movement: the kernel

A block of cached state (a KV-cache block) moves between *holders* (a prefill server, a decode
server, a host-memory tier, ...). The kernel below decides every request about that block.

* The block is in exactly one *phase*: `free`, `owned h` (holder `h` holds the one ownership
  capability), or `escrow t` (it is in flight under transfer ticket `t`; nobody may read it).
* A capability is bound to the kernel's current `(epoch, generation)`: every request presents
  the epoch and generation the caller believes in, and a request presenting an old one is
  refused.
* A *ticket* is issued by `begin` (naming sender, receiver, epoch and generation), and is then
  settled exactly once, by `commit` (ownership goes to the receiver) or by `abort` (it goes back
  to the sender). A settled ticket is `used` forever.
* `evict` frees the block, `realloc` hands a free block to a holder and bumps the generation (so
  every capability and ticket of the older generations is dead), `advance` bumps the epoch.

`step` is a total function: it returns the next state, or a refusal reason; a refusal carries no
state, so the caller keeps the state it had (`apply` makes that explicit). Bounds `maxEpoch` and
`maxGen` model finite counters: advancing past them is refused (`Refusal.bound`). Everything is
parametrised by a `Config` (any number of holders and tickets, any bounds). `Reach cfg` is the
set of states reachable from `initial cfg`, `Run cfg s s'` a run of accepted steps. The ticket
book is a `List Ticket`, read with `l[t]?` and updated with `List.set`.

The second half of the file encodes a finite domain (`Dom`) as numbers and defines the
checkers `checkRows` and `checkWorkflows` that the generated table `Proofs.Kernel.Table` runs in
Lean's kernel against the independent Python reference (`pytools/results/kernel/`); a tiny
exhaustive self-test closes the file. The theorems about the kernel are in
`Proofs.Kernel.Invariants`.

The model is a model of the protocol, not of a distributed system: no claim is made here about
networks, partitions, or hardware custody of the bytes.

`noncomputable` below is measured, not a choice: the registry (WebAssembly) Lean cannot compile
a definition that calls core list functions (`l[t]?`, `List.set`, `List.replicate`: "Unknown
constant `List.get?Internal._redArg`", ...), because their compiled code is not shipped. The
kernel still evaluates these definitions (`decide +kernel`).
-/

@[expose] public section

namespace KVCache.Kernel

/-! ## The kernel -/

/-- Domain parameters: the number of holders and tickets, and the counter bounds. -/
structure Config where
  /-- Number of holders; holder ids are `0, …, holders - 1`. -/
  holders : Nat
  /-- Number of transfer tickets; ticket ids are `0, …, tickets - 1`. -/
  tickets : Nat
  /-- The largest epoch; `advance` past it is refused. -/
  maxEpoch : Nat
  /-- The largest generation; `realloc` past it is refused. -/
  maxGen : Nat

/-- Where the block is. -/
inductive Phase where
  /-- Nobody holds the block. -/
  | free
  /-- Holder `holder` holds the one ownership capability. -/
  | owned (holder : Nat)
  /-- The block is in flight under transfer ticket `ticket`; nobody may read it. -/
  | escrow (ticket : Nat)
  deriving DecidableEq

/-- The life of one transfer ticket. -/
inductive Ticket where
  /-- Not issued yet. -/
  | unused
  /-- Issued by `begin` and not settled: the transfer from `sender` to `receiver`, bound to
  epoch `epoch` and generation `gen`. -/
  | pending (sender receiver epoch gen : Nat)
  /-- Settled by `commit` or `abort`; a used ticket stays used. -/
  | used
  deriving DecidableEq

/-- The kernel's whole state. -/
structure State where
  /-- The current epoch. -/
  epoch : Nat
  /-- The current generation. -/
  gen : Nat
  /-- Where the block is. -/
  phase : Phase
  /-- The ticket book: entry `t` is the life of ticket `t`. -/
  tickets : List Ticket

/-- The requests. Every request presents the caller's epoch and (except `advance`)
generation. -/
inductive Action where
  /-- Start transfer `ticket` from `sender` (the owner) to `receiver`. -/
  | begin (ticket sender receiver epoch gen : Nat)
  /-- Settle `ticket`: ownership goes to its receiver. -/
  | commit (ticket epoch gen : Nat)
  /-- Settle `ticket`: ownership goes back to its sender. -/
  | abort (ticket epoch gen : Nat)
  /-- `holder` reads the block; only the owner may. -/
  | read (holder epoch gen : Nat)
  /-- The owner `holder` frees the block. -/
  | evict (holder epoch gen : Nat)
  /-- Hand the free block to `holder`, bumping the generation. -/
  | realloc (holder epoch gen : Nat)
  /-- Bump the epoch (refused while a transfer is in flight). -/
  | advance (epoch : Nat)

/-- Why a request was refused. -/
inductive Refusal where
  /-- The presented epoch is not the current one. -/
  | staleEpoch
  /-- The presented generation is not the current one. -/
  | staleGen
  /-- A holder id outside `0, …, holders - 1`. -/
  | unknownHolder
  /-- A transfer from a holder to itself. -/
  | selfTransfer
  /-- A ticket id outside the book, or a ticket never issued. -/
  | unknownTicket
  /-- The ticket was already issued (`begin`) or already settled (`commit`, `abort`). -/
  | ticketUsed
  /-- The presenter does not own the block. -/
  | notOwner
  /-- The block is in flight. -/
  | inEscrow
  /-- `realloc` of a block that is not free. -/
  | notFree
  /-- The block is not in flight under the presented ticket. -/
  | ticketMismatch
  /-- The epoch or generation counter is at its bound. -/
  | bound
  deriving DecidableEq

-- noncomputable: `List.replicate` has no compiled code in the registry Lean.
/-- The initial state: epoch 0, generation 0, block free, all tickets unused. -/
noncomputable def initial (cfg : Config) : State :=
  { epoch := 0, gen := 0, phase := .free, tickets := List.replicate cfg.tickets .unused }

-- noncomputable: `l[t]?` and `List.set` have no compiled code in the registry Lean.
/-- Settle ticket `t` (shared by `commit` and `abort`); `toReceiver` picks the new owner. -/
noncomputable def settle (s : State) (t e g : Nat) (toReceiver : Bool) : Except Refusal State :=
  if e = s.epoch then
    if g = s.gen then
      match s.tickets[t]? with
      | none => .error .unknownTicket
      | some .unused => .error .unknownTicket
      | some .used => .error .ticketUsed
      | some (.pending snd rcv te tg) =>
        if te = s.epoch then
          if tg = s.gen then
            match s.phase with
            | .escrow u =>
              if u = t then
                .ok { s with
                  phase := .owned (if toReceiver then rcv else snd)
                  tickets := s.tickets.set t .used }
              else .error .ticketMismatch
            | _ => .error .ticketMismatch
          else .error .staleGen
        else .error .staleEpoch
    else .error .staleGen
  else .error .staleEpoch

/-- Checks shared by `read` and `evict`: the presenter must be the owner, with a fresh
capability; then the answer is `k`. -/
def ownerCheck (cfg : Config) (s : State) (h e g : Nat) (k : Except Refusal State) :
    Except Refusal State :=
  if e = s.epoch then
    if g = s.gen then
      if h < cfg.holders then
        match s.phase with
        | .escrow _ => .error .inEscrow
        | .free => .error .notOwner
        | .owned o => if o = h then k else .error .notOwner
      else .error .unknownHolder
    else .error .staleGen
  else .error .staleEpoch

-- noncomputable: `l[t]?` and `List.set` have no compiled code in the registry Lean.
/-- One kernel step: the next state, or why the request is refused. -/
noncomputable def step (cfg : Config) (s : State) : Action → Except Refusal State
  | .begin t snd rcv e g =>
    if e = s.epoch then
      if g = s.gen then
        if snd < cfg.holders then
          if rcv < cfg.holders then
            if snd = rcv then .error .selfTransfer
            else
              match s.tickets[t]? with
              | none => .error .unknownTicket
              | some .used => .error .ticketUsed
              | some (.pending _ _ _ _) => .error .ticketUsed
              | some .unused =>
                match s.phase with
                | .escrow _ => .error .inEscrow
                | .free => .error .notOwner
                | .owned o =>
                  if o = snd then
                    .ok { s with
                      phase := .escrow t
                      tickets := s.tickets.set t (.pending snd rcv e g) }
                  else .error .notOwner
          else .error .unknownHolder
        else .error .unknownHolder
      else .error .staleGen
    else .error .staleEpoch
  | .commit t e g => settle s t e g true
  | .abort t e g => settle s t e g false
  | .read h e g => ownerCheck cfg s h e g (.ok s)
  | .evict h e g => ownerCheck cfg s h e g (.ok { s with phase := .free })
  | .realloc h e g =>
    if e = s.epoch then
      if g = s.gen then
        if h < cfg.holders then
          match s.phase with
          | .free =>
            if s.gen < cfg.maxGen then .ok { s with phase := .owned h, gen := s.gen + 1 }
            else .error .bound
          | _ => .error .notFree
        else .error .unknownHolder
      else .error .staleGen
    else .error .staleEpoch
  | .advance e =>
    if e = s.epoch then
      match s.phase with
      | .escrow _ => .error .inEscrow
      | _ =>
        if s.epoch < cfg.maxEpoch then .ok { s with epoch := s.epoch + 1 } else .error .bound
    else .error .staleEpoch

-- noncomputable: calls `step`.
/-- The state after a request: the successor, or the same state when refused. -/
noncomputable def apply (cfg : Config) (s : State) (a : Action) : State :=
  match step cfg s a with
  | .ok s' => s'
  | .error _ => s

/-- The epoch a request presents. -/
def Action.epoch : Action → Nat
  | .begin _ _ _ e _ => e
  | .commit _ e _ => e
  | .abort _ e _ => e
  | .read _ e _ => e
  | .evict _ e _ => e
  | .realloc _ e _ => e
  | .advance e => e

/-- The generation a request presents (`advance` presents none). -/
def Action.gen? : Action → Option Nat
  | .begin _ _ _ _ g => some g
  | .commit _ _ g => some g
  | .abort _ _ g => some g
  | .read _ _ g => some g
  | .evict _ _ g => some g
  | .realloc _ _ g => some g
  | .advance _ => none

/-- The requests that may change custody on purpose: `evict` and `realloc`. -/
def Action.changesCustody : Action → Bool
  | .evict _ _ _ => true
  | .realloc _ _ _ => true
  | _ => false

/-- How many custodians the block has: the owner, or the in-flight ticket. -/
def custody : Phase → Nat
  | .free => 0
  | .owned _ => 1
  | .escrow _ => 1

/-- States reachable from the initial state by accepted steps. -/
inductive Reach (cfg : Config) : State → Prop
  /-- The initial state is reachable. -/
  | init : Reach cfg (initial cfg)
  /-- An accepted step from a reachable state reaches its successor. -/
  | next {s s' : State} (a : Action) : Reach cfg s → step cfg s a = .ok s' → Reach cfg s'

/-- `Run cfg s s'`: `s'` follows from `s` by zero or more accepted steps. -/
inductive Run (cfg : Config) : State → State → Prop
  /-- The empty run. -/
  | refl (s : State) : Run cfg s s
  /-- A run extended by one accepted step. -/
  | next {s s' s'' : State} (a : Action) :
      Run cfg s s' → step cfg s' a = .ok s'' → Run cfg s s''

/-- Holder `h` can read in `s` with some capability: it is a live owner. -/
def LiveOwner (cfg : Config) (s : State) (h : Nat) : Prop :=
  ∃ e g, step cfg s (.read h e g) = .ok s

-- noncomputable: calls `step`.
/-- Running a list of requests from `s`: the final state and how many requests were refused
(a refused request leaves the state as it was), counting from `k`. -/
noncomputable def runFrom (cfg : Config) : State → List Action → Nat → State × Nat
  | s, [], k => (s, k)
  | s, a :: as, k =>
    match step cfg s a with
    | .ok s' => runFrom cfg s' as k
    | .error _ => runFrom cfg s as (k + 1)

/-! ## Finite-domain checkers (used by the generated agreement table `Proofs.Kernel.Table`)

A finite domain fixes a configuration. The generated table lists the domain's request alphabet
and, for each listed state, the answer the Python reference (`pytools/results/kernel/`) gives to
every request of the alphabet; `checkRows` recomputes every answer with `step`. Successor
states are compared through a mixed-radix code (`encState`), which the reference computes with
its own code. -/

/-- A finite domain. -/
structure Dom where
  /-- Number of holders. -/
  holders : Nat
  /-- Number of tickets. -/
  tickets : Nat
  /-- The largest epoch. -/
  maxEpoch : Nat
  /-- The largest generation. -/
  maxGen : Nat

/-- The configuration of a domain. -/
def Dom.cfg (d : Dom) : Config :=
  { holders := d.holders, tickets := d.tickets, maxEpoch := d.maxEpoch, maxGen := d.maxGen }

/-- Number of phase codes. -/
def Dom.nPhase (d : Dom) : Nat := 1 + d.holders + d.tickets

/-- Number of ticket codes. -/
def Dom.nTicket (d : Dom) : Nat :=
  2 + d.holders * d.holders * (d.maxEpoch + 1) * (d.maxGen + 1)

/-- Phase code: free 0, owned `h` is `1 + h`, escrow `t` is `1 + holders + t`. -/
def encPhase (d : Dom) : Phase → Nat
  | .free => 0
  | .owned h => 1 + h
  | .escrow t => 1 + d.holders + t

/-- Ticket code: unused 0, used 1, pending in mixed radix from 2. -/
def encTicket (d : Dom) : Ticket → Nat
  | .unused => 0
  | .used => 1
  | .pending a b e g => 2 + ((a * d.holders + b) * (d.maxEpoch + 1) + e) * (d.maxGen + 1) + g

/-- Append ticket codes to an accumulated code (first ticket most significant). -/
def encTickets (d : Dom) : List Ticket → Nat → Nat
  | [], acc => acc
  | x :: xs, acc => encTickets d xs (acc * d.nTicket + encTicket d x)

/-- State code: mixed radix (epoch, generation, phase, ticket 0, ticket 1, ...). -/
def encState (d : Dom) (s : State) : Nat :=
  encTickets d s.tickets ((s.epoch * (d.maxGen + 1) + s.gen) * d.nPhase + encPhase d s.phase)

/-- Refusal code (the reference's order). -/
def refusalCode : Refusal → Nat
  | .staleEpoch => 0
  | .staleGen => 1
  | .unknownHolder => 2
  | .selfTransfer => 3
  | .unknownTicket => 4
  | .ticketUsed => 5
  | .notOwner => 6
  | .inEscrow => 7
  | .notFree => 8
  | .ticketMismatch => 9
  | .bound => 10

/-- One table row: a state, the reference's answers to every request of the alphabet, and the
codes of the successors. -/
structure Row where
  /-- The state the requests are put to. -/
  state : State
  /-- The answer to request `i` of the alphabet, as the hexadecimal digit at `16 ^ i`: a
  refusal code, or 15 for accepted. -/
  digits : Nat
  /-- The codes (`encState`) of the successors of the accepted requests, in order. -/
  successors : List Nat

-- noncomputable: calls `step`.
/-- Check the requests `as` on state `s` against the digits and successor codes. -/
noncomputable def checkActions (d : Dom) (s : State) : List Action → Nat → List Nat → Bool
  | [], digits, succ =>
    match succ with
    | [] => Nat.beq digits 0
    | _ :: _ => false
  | a :: as, digits, succ =>
    match step d.cfg s a with
    | .error r =>
      Nat.beq (digits % 16) (refusalCode r) && checkActions d s as (digits / 16) succ
    | .ok s' =>
      match succ with
      | [] => false
      | c :: cs =>
        Nat.beq (digits % 16) 15 && Nat.beq (encState d s') c &&
          checkActions d s as (digits / 16) cs

-- noncomputable: calls `checkActions`.
/-- Check every row against every request of the alphabet. -/
noncomputable def checkRows (d : Dom) (alphabet : List Action) : List Row → Bool
  | [] => true
  | r :: rs => checkActions d r.state alphabet r.digits r.successors && checkRows d alphabet rs

/-- A workflow of the bench: its requests, the code of the final state, the refusal count. -/
structure Workflow where
  /-- The requests, in order. -/
  actions : List Action
  /-- The code (`encState`) of the state the requests end in, from the initial state. -/
  finalCode : Nat
  /-- How many of the requests are refused. -/
  refusals : Nat

-- noncomputable: calls `initial` and `runFrom`.
/-- Check every workflow by running `step` from the initial state. -/
noncomputable def checkWorkflows (d : Dom) : List Workflow → Bool
  | [] => true
  | w :: ws =>
    Nat.beq (encState d (runFrom d.cfg (initial d.cfg) w.actions 0).1) w.finalCode &&
      Nat.beq (runFrom d.cfg (initial d.cfg) w.actions 0).2 w.refusals && checkWorkflows d ws

/-! ## Self-test of the checkers on a tiny domain

Generated by `pytools.results.kernel.table.render_self_test` and carried here verbatim (a test
checks it is in sync), so that the module defining the checkers also exercises them
exhaustively once. -/

/-- The tiny self-test domain (2 holders, 1 ticket, epoch 0..0, generations 0..1). -/
def tinyDom : Dom := { holders := 2, tickets := 1, maxEpoch := 0, maxGen := 1 }

/-- The request alphabet of the tiny domain. -/
def tinyAlphabet : List Action := [
  (.begin 0 0 0 0 0), (.begin 0 0 0 0 1), (.begin 0 0 1 0 0), (.begin 0 0 1 0 1),
  (.begin 0 0 2 0 0), (.begin 0 0 2 0 1), (.begin 0 1 0 0 0), (.begin 0 1 0 0 1),
  (.begin 0 1 1 0 0), (.begin 0 1 1 0 1), (.begin 0 1 2 0 0), (.begin 0 1 2 0 1),
  (.begin 0 2 0 0 0), (.begin 0 2 0 0 1), (.begin 0 2 1 0 0), (.begin 0 2 1 0 1),
  (.begin 0 2 2 0 0), (.begin 0 2 2 0 1), (.begin 1 0 0 0 0), (.begin 1 0 0 0 1),
  (.begin 1 0 1 0 0), (.begin 1 0 1 0 1), (.begin 1 0 2 0 0), (.begin 1 0 2 0 1),
  (.begin 1 1 0 0 0), (.begin 1 1 0 0 1), (.begin 1 1 1 0 0), (.begin 1 1 1 0 1),
  (.begin 1 1 2 0 0), (.begin 1 1 2 0 1), (.begin 1 2 0 0 0), (.begin 1 2 0 0 1),
  (.begin 1 2 1 0 0), (.begin 1 2 1 0 1), (.begin 1 2 2 0 0), (.begin 1 2 2 0 1),
  (.commit 0 0 0), (.commit 0 0 1), (.commit 1 0 0), (.commit 1 0 1),
  (.abort 0 0 0), (.abort 0 0 1), (.abort 1 0 0), (.abort 1 0 1),
  (.read 0 0 0), (.read 0 0 1), (.read 1 0 0), (.read 1 0 1),
  (.read 2 0 0), (.read 2 0 1), (.evict 0 0 0), (.evict 0 0 1),
  (.evict 1 0 0), (.evict 1 0 1), (.evict 2 0 0), (.evict 2 0 1),
  (.realloc 0 0 0), (.realloc 0 0 1), (.realloc 1 0 0), (.realloc 1 0 1),
  (.realloc 2 0 0), (.realloc 2 0 1), (.advance 0)
]

/-- Every well-formed state of the tiny domain with the reference's answers. -/
def tinyRows : List Row := [
  ⟨⟨0, 0, .free, [.unused]⟩,
    0xA121F1F12161612161614141414121212121314121413121212121316121613, [50, 60]⟩,
  ⟨⟨0, 0, .free, [.used]⟩,
    0xA121F1F12161612161614151415121212121314121413121212121315121513, [51, 61]⟩,
  ⟨⟨0, 0, .owned 0, [.unused]⟩,
    0xA12181812161F12161F14141414121212121314121413121212121316121F13, [34, 10, 0]⟩,
  ⟨⟨0, 0, .owned 0, [.used]⟩,
    0xA12181812161F12161F14151415121212121314121413121212121315121513, [11, 1]⟩,
  ⟨⟨0, 0, .owned 1, [.unused]⟩,
    0xA121818121F16121F161414141412121212131412141312121212131F121613, [36, 20, 0]⟩,
  ⟨⟨0, 0, .owned 1, [.used]⟩,
    0xA121818121F16121F1614151415121212121314121413121212121315121513, [21, 1]⟩,
  ⟨⟨0, 0, .escrow 0, [.pending 0 1 0 0]⟩,
    0x7121818121717121717141F141F121212121314121413121212121315121513, [21, 11]⟩,
  ⟨⟨0, 0, .escrow 0, [.pending 1 0 0 0]⟩,
    0x7121818121717121717141F141F121212121314121413121212121315121513, [11, 21]⟩,
  ⟨⟨0, 1, .free, [.unused]⟩,
    0xA21A1A121616121616141414141212121213141214131212121213161216131, []⟩,
  ⟨⟨0, 1, .free, [.used]⟩,
    0xA21A1A121616121616141514151212121213141214131212121213151215131, []⟩,
  ⟨⟨0, 1, .owned 0, [.unused]⟩,
    0xA2181812161F12161F14141414121212121314121413121212121316121F131, [75, 50, 40]⟩,
  ⟨⟨0, 1, .owned 0, [.used]⟩,
    0xA2181812161F12161F141514151212121213141214131212121213151215131, [51, 41]⟩,
  ⟨⟨0, 1, .owned 1, [.unused]⟩,
    0xA21818121F16121F161414141412121212131412141312121212131F1216131, [77, 60, 40]⟩,
  ⟨⟨0, 1, .owned 1, [.used]⟩,
    0xA21818121F16121F16141514151212121213141214131212121213151215131, [61, 41]⟩,
  ⟨⟨0, 1, .escrow 0, [.pending 0 1 0 1]⟩,
    0x721818121717121717141F141F1212121213141214131212121213151215131, [61, 51]⟩,
  ⟨⟨0, 1, .escrow 0, [.pending 1 0 0 1]⟩,
    0x721818121717121717141F141F1212121213141214131212121213151215131, [51, 61]⟩
]

/-- On every case of the tiny domain, `step` gives the Python reference's answer. -/
theorem tiny_domain_agrees : checkRows tinyDom tinyAlphabet tinyRows = true := by
  decide +kernel

end KVCache.Kernel

end
