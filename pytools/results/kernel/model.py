"""The independent executable reference of the single-owner kernel (``Proofs/Kernel``).

Plain Python with its own data types, written from the rules below without reading any Lean.
It decides every request; :mod:`.table` enumerates a finite domain with it and
:mod:`.workflows` runs named request sequences.

The rules (the protocol specification both implementations follow; checks in this order)
---------------------------------------------------------------------------------------
Every request presents an epoch; all but ``advance`` present a generation.

* any request: presented epoch != current epoch -> ``staleEpoch``; then (if it presents
  one) presented generation != current generation -> ``staleGen``.
* ``begin t snd rcv``: a holder id >= holders -> ``unknownHolder``; ``snd == rcv`` ->
  ``selfTransfer``; ticket id unknown -> ``unknownTicket``; ticket not unused ->
  ``ticketUsed``; block in escrow -> ``inEscrow``; block not owned by ``snd`` -> ``notOwner``;
  else the block goes to escrow under ``t`` and ``t`` becomes pending (snd, rcv, epoch, gen).
* ``commit t`` / ``abort t``: ticket unknown or never issued -> ``unknownTicket``; used ->
  ``ticketUsed``; its recorded epoch / generation not current -> ``staleEpoch`` /
  ``staleGen``; block not in escrow under ``t`` -> ``ticketMismatch``; else the receiver
  (commit) or the sender (abort) owns the block and ``t`` is used.
* ``read h`` / ``evict h``: unknown holder -> ``unknownHolder``; in escrow -> ``inEscrow``;
  not owned by ``h`` -> ``notOwner``; else read changes nothing, evict frees the block.
* ``realloc h``: unknown holder -> ``unknownHolder``; block not free -> ``notFree``;
  generation already at its bound -> ``bound``; else ``h`` owns it and the generation goes up.
* ``advance``: in escrow -> ``inEscrow``; epoch at its bound -> ``bound``; else epoch + 1.

Limits: see :data:`pytools.results.kernel.result.RESULT_LIMITS`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

REFUSALS: tuple[str, ...] = (
    "staleEpoch",
    "staleGen",
    "unknownHolder",
    "selfTransfer",
    "unknownTicket",
    "ticketUsed",
    "notOwner",
    "inEscrow",
    "notFree",
    "ticketMismatch",
    "bound",
)

ACTION_KINDS: tuple[str, ...] = (
    "begin", "commit", "abort", "read", "evict", "realloc", "advance",
)


class KernelRefError(Exception):
    """A bad input file or an inconsistent table; the message names the file and the problem."""


# ---------------------------------------------------------------------------------------------
# Data types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Domain:
    """A finite configuration: holder ids 0..holders-1, ticket ids 0..tickets-1, bounds."""

    holders: int = 3
    tickets: int = 2
    max_epoch: int = 3
    max_gen: int = 3

    @property
    def holder_values(self) -> int:  # presented holder ids: every holder plus one unknown
        return self.holders + 1

    @property
    def ticket_values(self) -> int:  # presented ticket ids: every ticket plus one unknown
        return self.tickets + 1

    @property
    def epoch_values(self) -> int:
        return self.max_epoch + 1

    @property
    def gen_values(self) -> int:
        return self.max_gen + 1


#: The domain of the exhaustive Lean agreement check (smaller than the target 3/2/3/3: the
#: registry WebAssembly Lean's kernel must check every case within a module's compile budget).



@dataclass(frozen=True)
class Holding:
    """Where the block is: kind is 'free', 'owned' (who = holder) or 'escrow' (who = ticket)."""

    kind: str
    who: int = 0


@dataclass(frozen=True)
class TicketRec:
    """A ticket: status 'unused', 'used' or 'pending' (with sender, receiver, epoch, gen)."""

    status: str
    sender: int = 0
    receiver: int = 0
    epoch: int = 0
    gen: int = 0


@dataclass(frozen=True)
class KState:
    """The kernel state: current epoch and generation, the holding, the ticket book."""

    epoch: int
    gen: int
    holding: Holding
    book: tuple[TicketRec, ...]


@dataclass(frozen=True)
class Request:
    """A request. ``args`` follow the kind: begin (t, snd, rcv, e, g); commit/abort (t, e, g);
    read/evict/realloc (h, e, g); advance (e,)."""

    kind: str
    args: tuple[int, ...]

    @property
    def epoch(self) -> int:
        return self.args[-1] if self.kind == "advance" else self.args[-2]

    @property
    def gen(self) -> int | None:
        return None if self.kind == "advance" else self.args[-1]


class Outcome(NamedTuple):
    """The answer to a request: ``refusal`` is None when accepted (then ``state`` is new).

    (A named tuple rather than a dataclass: the exhaustive table builds ~700,000 of them.)
    """

    state: KState
    refusal: str | None


FREE = Holding("free")
UNUSED = TicketRec("unused")
USED = TicketRec("used")


def initial_state(dom: Domain) -> KState:
    """Epoch 0, generation 0, block free, every ticket unused."""
    return KState(0, 0, FREE, tuple(UNUSED for _ in range(dom.tickets)))


# ---------------------------------------------------------------------------------------------
# The reference step function
# ---------------------------------------------------------------------------------------------

def step(dom: Domain, st: KState, req: Request) -> Outcome:
    """Answer one request: the successor state, or the refusal (state unchanged)."""
    kind, args = req.kind, req.args
    if kind not in ACTION_KINDS:
        raise KernelRefError(f"unknown request kind {kind!r}")
    # 1. freshness of the presented capability: (..., epoch, gen), or (epoch,) for advance
    if kind == "advance":
        if args[0] != st.epoch:
            return Outcome(st, "staleEpoch")
    elif args[-2] != st.epoch:
        return Outcome(st, "staleEpoch")
    elif args[-1] != st.gen:
        return Outcome(st, "staleGen")
    hold, book = st.holding, st.book
    if kind == "advance":
        if hold.kind == "escrow":
            return Outcome(st, "inEscrow")
        if st.epoch >= dom.max_epoch:
            return Outcome(st, "bound")
        return Outcome(KState(st.epoch + 1, st.gen, hold, book), None)
    if kind == "begin":
        t, snd, rcv, e, g = args
        if not (snd < dom.holders and rcv < dom.holders):
            return Outcome(st, "unknownHolder")
        if snd == rcv:
            return Outcome(st, "selfTransfer")
        if t >= len(book):
            return Outcome(st, "unknownTicket")
        if book[t].status != "unused":
            return Outcome(st, "ticketUsed")
        if hold.kind == "escrow":
            return Outcome(st, "inEscrow")
        if hold.kind != "owned" or hold.who != snd:
            return Outcome(st, "notOwner")
        rec = TicketRec("pending", snd, rcv, e, g)
        return Outcome(KState(st.epoch, st.gen, Holding("escrow", t),
                              book[:t] + (rec,) + book[t + 1:]), None)
    if kind in ("commit", "abort"):
        t = args[0]
        if t >= len(book) or book[t].status == "unused":
            return Outcome(st, "unknownTicket")
        rec = book[t]
        if rec.status == "used":
            return Outcome(st, "ticketUsed")
        if rec.epoch != st.epoch:
            return Outcome(st, "staleEpoch")
        if rec.gen != st.gen:
            return Outcome(st, "staleGen")
        if hold.kind != "escrow" or hold.who != t:
            return Outcome(st, "ticketMismatch")
        owner = rec.receiver if kind == "commit" else rec.sender
        return Outcome(KState(st.epoch, st.gen, Holding("owned", owner),
                              book[:t] + (USED,) + book[t + 1:]), None)
    h = args[0]
    if h >= dom.holders:
        return Outcome(st, "unknownHolder")
    if kind == "realloc":
        if hold.kind != "free":
            return Outcome(st, "notFree")
        if st.gen >= dom.max_gen:
            return Outcome(st, "bound")
        return Outcome(KState(st.epoch, st.gen + 1, Holding("owned", h), book), None)
    # read / evict: only the owner, never in escrow
    if hold.kind == "escrow":
        return Outcome(st, "inEscrow")
    if hold.kind != "owned" or hold.who != h:
        return Outcome(st, "notOwner")
    if kind == "read":
        return Outcome(st, None)
    return Outcome(KState(st.epoch, st.gen, FREE, book), None)


# ---------------------------------------------------------------------------------------------
# The domain: requests, well-formed states, reachable states
# ---------------------------------------------------------------------------------------------


def requests(dom: Domain) -> list[Request]:
    """The request alphabet in canonical order (the table's column order)."""
    hs, ts = range(dom.holder_values), range(dom.ticket_values)
    es, gs = range(dom.epoch_values), range(dom.gen_values)
    out: list[Request] = []
    out += [Request("begin", (t, a, b, e, g)) for t in ts for a in hs for b in hs
            for e in es for g in gs]
    for kind in ("commit", "abort"):
        out += [Request(kind, (t, e, g)) for t in ts for e in es for g in gs]
    for kind in ("read", "evict", "realloc"):
        out += [Request(kind, (h, e, g)) for h in hs for e in es for g in gs]
    out += [Request("advance", (e,)) for e in es]
    return out


def well_formed(dom: Domain, st: KState) -> bool:
    """The domain's states: within bounds, a pending ticket exactly for the escrow (bound to the
    current epoch and generation, between two distinct known holders), known owner."""
    if not (0 <= st.epoch <= dom.max_epoch and 0 <= st.gen <= dom.max_gen):
        return False
    if len(st.book) != dom.tickets:
        return False
    pending = [i for i, rec in enumerate(st.book) if rec.status == "pending"]
    if st.holding.kind == "escrow":
        if pending != [st.holding.who]:
            return False
        rec = st.book[st.holding.who]
        return (rec.epoch, rec.gen) == (st.epoch, st.gen) and rec.sender != rec.receiver and \
            rec.sender < dom.holders and rec.receiver < dom.holders
    if pending:
        return False
    return st.holding.kind == "free" or 0 <= st.holding.who < dom.holders


def _all_holdings(dom: Domain) -> list[Holding]:
    return [FREE] + [Holding("owned", h) for h in range(dom.holders)] + \
        [Holding("escrow", t) for t in range(dom.tickets)]


def _all_tickets(dom: Domain) -> list[TicketRec]:
    recs = [UNUSED, USED]
    for a in range(dom.holders):
        for b in range(dom.holders):
            for e in range(dom.epoch_values):
                for g in range(dom.gen_values):
                    recs.append(TicketRec("pending", a, b, e, g))
    return recs


def _books(recs: list[TicketRec], n: int) -> Iterator[tuple[TicketRec, ...]]:
    if n == 0:
        yield ()
        return
    for head in recs:
        for rest in _books(recs, n - 1):
            yield (head,) + rest


def domain_states(dom: Domain) -> list[KState]:
    """Every well-formed state of the domain, sorted by state code."""
    out: list[KState] = []
    for e in range(dom.epoch_values):
        for g in range(dom.gen_values):
            for hold in _all_holdings(dom):
                if hold.kind == "escrow":
                    # only the escrowed ticket may be pending: enumerate it separately
                    others = [UNUSED, USED]
                    pend = [TicketRec("pending", a, b, e, g) for a in range(dom.holders)
                            for b in range(dom.holders) if a != b]
                    for rest in _books(others, dom.tickets - 1):
                        for p in pend:
                            book = rest[:hold.who] + (p,) + rest[hold.who:]
                            out.append(KState(e, g, hold, book))
                else:
                    for book in _books([UNUSED, USED], dom.tickets):
                        out.append(KState(e, g, hold, book))
    out = [s for s in out if well_formed(dom, s)]
    return sorted(set(out), key=lambda s: encode_state(dom, s))


def reachable_states(dom: Domain) -> set[KState]:
    """States reachable from the initial state by accepted requests (breadth-first)."""
    start = initial_state(dom)
    seen = {start}
    todo = deque([start])
    alphabet = requests(dom)
    while todo:
        st = todo.popleft()
        for req in alphabet:
            out = step(dom, st, req)
            if out.refusal is None and out.state not in seen:
                seen.add(out.state)
                todo.append(out.state)
    return seen


# ---------------------------------------------------------------------------------------------
# Codes (the table's compact encoding; Lean decodes them with its own functions)
# ---------------------------------------------------------------------------------------------


def _holding_code(dom: Domain, hold: Holding) -> int:
    if hold.kind == "free":
        return 0
    if hold.kind == "owned":
        return 1 + hold.who
    return 1 + dom.holders + hold.who


def _ticket_code(dom: Domain, rec: TicketRec) -> int:
    if rec.status == "unused":
        return 0
    if rec.status == "used":
        return 1
    return 2 + ((rec.sender * dom.holders + rec.receiver) * dom.epoch_values + rec.epoch) \
        * dom.gen_values + rec.gen


def encode_state(dom: Domain, st: KState) -> int:
    """State code: mixed radix (epoch, gen, holding, ticket 0, ticket 1, ...)."""
    n_hold = 1 + dom.holders + dom.tickets
    n_tick = 2 + dom.holders * dom.holders * dom.epoch_values * dom.gen_values
    code = (st.epoch * dom.gen_values + st.gen) * n_hold + _holding_code(dom, st.holding)
    for rec in st.book:
        code = code * n_tick + _ticket_code(dom, rec)
    return code


#: A step function with the reference's signature (the table and workflows take one, so a test
#: can plant a wrong one).
StepFn = Callable[[Domain, KState, Request], Outcome]
