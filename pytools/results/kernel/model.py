"""The independent executable reference of the single-owner kernel (``Proofs/Kernel``).

Plain Python with its own data types, written from the rules below without reading any Lean.
:mod:`.codes` numbers states, tokens and outcomes and lists a domain's request alphabet and
every state's candidates; :mod:`.system` runs the kernel inside a network of holders;
:mod:`.table` enumerates the reachable states of a finite domain with it; :mod:`.workflows`
runs the named scenarios and :mod:`.workflows_lean` states them as Lean theorems.

The rules (the protocol both implementations follow)
----------------------------------------------------
A *domain* fixes ``holders`` (ids ``0..holders-1``), ``blocks`` (ids ``0..blocks-1``) and three
counter widths: ``max_epoch``, ``max_gen`` and ``max_seq``.

Kernel state: the current ``epoch``; for every block its generation ``gen``, its sequence
counter ``seq`` (how many tokens the kernel has issued for the block in the current epoch and
generation) and its phase: ``free``, ``owned(h)`` or ``escrow(s, r)`` (a transfer from ``s`` to
``r`` is pending). Initially epoch 0 and every block ``(gen 0, seq 0, free)``.

Tokens: a *capability* ``(blk, holder, epoch, gen, nonce)`` and a *ticket*
``(blk, epoch, gen, nonce)``. The kernel issues each token with ``nonce = seq`` and then adds
one to ``seq``; a token is *current* for its block when its epoch, generation and nonce are the
block's ``epoch``, ``gen`` and ``seq - 1``. Every field is a public counter: a holder can write
any token, so the kernel trusts no field and checks the authenticated presenter against what it
stores (the block's owner, the pending transfer's parties).

Requests and their checks, in this order (the first failing check is the refusal):

* ``read(p, c)``, ``evict(p, c)``, ``begin(p, c, r)`` (capability ``c`` presented by ``p``):
  ``p`` not a holder -> ``unknownPresenter``; block ``c.blk`` unknown -> ``unknownBlock``;
  ``c.epoch`` not the epoch -> ``staleEpoch``; ``c.gen`` not the block's -> ``staleGen``;
  block free -> ``notOwned``; block in escrow -> ``inEscrow``; ``c.nonce + 1 != seq`` ->
  ``revoked``; ``c.holder != p`` -> ``wrongHolder``; the block's stored owner is not ``p``
  -> ``notOwner``.
  Then ``read`` changes nothing; ``evict`` frees the block; ``begin`` checks ``r`` not a holder
  -> ``unknownHolder``, ``r == p`` -> ``selfTransfer``, ``seq + 2 > max_seq`` -> ``bound``, and
  otherwise puts the block in ``escrow(p, r)`` and issues one ticket, sent to ``p`` and to
  ``r``.
* ``commit(p, t)``, ``abort(p, t)`` (ticket ``t`` presented by ``p``): ``p`` not a holder ->
  ``unknownPresenter``; unknown block -> ``unknownBlock``; ``staleEpoch``; ``staleGen``; block
  not in escrow, or ``t.nonce + 1 != seq`` -> ``notPending``; ``p`` not the escrow's receiver
  (commit), or neither its sender nor its receiver (abort) -> ``notParty``; otherwise the block
  is ``owned`` by the escrow's receiver (commit) or sender (abort), and a new capability is
  issued to that holder.
* ``alloc(p, b)``: ``p`` not a holder -> ``unknownPresenter``; unknown block -> ``unknownBlock``;
  block not free -> ``notFree``; ``gen >= max_gen`` -> ``bound``; otherwise ``gen + 1``, seq
  restarts, the block is owned by ``p`` and a capability is issued to ``p``.
* ``advance`` (the kernel's own): some block in escrow -> ``inEscrow``; ``epoch >= max_epoch``
  -> ``bound``; otherwise ``epoch + 1``, every block's seq restarts, and every owned block's
  owner is issued a new capability (blocks in increasing order).
* ``resend(b)`` (the kernel's own): unknown block -> ``unknownBlock``; free -> ``notOwned``;
  otherwise the block's current token is sent again (to the owner, or to sender and receiver).

A refused request changes nothing and sends nothing.

Limits: see :data:`pytools.results.kernel.result.RESULT_LIMITS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

#: Refusal names, in the order of their codes.
REFUSALS: tuple[str, ...] = (
    "unknownPresenter",
    "unknownBlock",
    "staleEpoch",
    "staleGen",
    "notOwned",
    "inEscrow",
    "revoked",
    "wrongHolder",
    "unknownHolder",
    "selfTransfer",
    "bound",
    "notPending",
    "notFree",
    "notOwner",
    "notParty",
)

REQUEST_KINDS: tuple[str, ...] = (
    "read", "evict", "begin", "commit", "abort", "alloc", "advance", "resend",
)


class KernelRefError(Exception):
    """A bad input file or an inconsistent table; the message names the file and the problem."""


# ---------------------------------------------------------------------------------------------
# Data types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Domain:
    """A finite configuration: holder and block ids, and the three counter widths."""

    holders: int
    blocks: int
    max_epoch: int
    max_gen: int
    max_seq: int


class Cap(NamedTuple):
    """A capability: the block, the holder it was issued to, epoch, generation, nonce."""

    blk: int
    holder: int
    epoch: int
    gen: int
    nonce: int


class Ticket(NamedTuple):
    """A transfer ticket: the block, epoch, generation, nonce."""

    blk: int
    epoch: int
    gen: int
    nonce: int


class Slot(NamedTuple):
    """A block's record. ``phase`` is ``("free",)``, ``("owned", h)`` or ``("escrow", s, r)``."""

    gen: int
    seq: int
    phase: tuple[int | str, ...]


FREE: tuple[str] = ("free",)


class KState(NamedTuple):
    """The kernel state: the epoch and one record per block."""

    epoch: int
    slots: tuple[Slot, ...]


class Request(NamedTuple):
    """A request. ``who`` is the presenter (read/evict/begin/commit/abort) or requester
    (alloc), else 0;
    ``token`` a :class:`Cap` or :class:`Ticket` or None; ``arg`` the receiver (begin) or block
    (alloc, resend), else 0."""

    kind: str
    who: int = 0
    token: Cap | Ticket | None = None
    arg: int = 0


class Message(NamedTuple):
    """A message in flight: ``kind`` is ``req`` (``body`` a request), ``grant`` (``body`` a
    capability for holder ``to``) or ``ticket`` (``body`` a ticket for holder ``to``)."""

    kind: str
    to: int
    body: Request | Cap | Ticket


class Outcome(NamedTuple):
    """A request's answer: the next state, the messages sent, the refusal (None: accepted)."""

    state: KState
    sends: tuple[Message, ...]
    refusal: str | None


def initial_state(dom: Domain) -> KState:
    """Epoch 0, every block free with generation 0 and sequence 0."""
    return KState(0, tuple(Slot(0, 0, FREE) for _ in range(dom.blocks)))


# ---------------------------------------------------------------------------------------------
# The reference step function
# ---------------------------------------------------------------------------------------------


def _with_slot(st: KState, b: int, slot: Slot) -> KState:
    return KState(st.epoch, st.slots[:b] + (slot,) + st.slots[b + 1:])


def _grant(h: int, cap: Cap) -> Message:
    return Message("grant", h, cap)


def _ticket(h: int, t: Ticket) -> Message:
    return Message("ticket", h, t)


def _token_freshness(st: KState, tok: Cap | Ticket) -> str | None:
    """Refusal for an unknown block or a stale epoch or generation; None when fresh."""
    if tok.blk >= len(st.slots):
        return "unknownBlock"
    if tok.epoch != st.epoch:
        return "staleEpoch"
    if tok.gen != st.slots[tok.blk].gen:
        return "staleGen"
    return None


def _cap_refusal(dom: Domain, st: KState, p: int, cap: Cap) -> str | None:
    if p >= dom.holders:
        return "unknownPresenter"
    bad = _token_freshness(st, cap)
    if bad:
        return bad
    slot = st.slots[cap.blk]
    if slot.phase[0] == "free":
        return "notOwned"
    if slot.phase[0] == "escrow":
        return "inEscrow"
    if cap.nonce + 1 != slot.seq:
        return "revoked"
    if cap.holder != p:
        return "wrongHolder"
    if slot.phase != ("owned", p):
        return "notOwner"
    return None


def step(dom: Domain, st: KState, req: Request) -> Outcome:
    """Answer one request: the next state and the messages sent, or the refusal."""
    kind = req.kind
    if kind not in REQUEST_KINDS:
        raise KernelRefError(f"unknown request kind {kind!r}")

    def no(why: str) -> Outcome:
        return Outcome(st, (), why)

    if kind in ("read", "evict", "begin"):
        cap = req.token
        if not isinstance(cap, Cap):
            raise KernelRefError(f"{kind} needs a capability, got {cap!r}")
        bad = _cap_refusal(dom, st, req.who, cap)
        if bad:
            return no(bad)
        slot = st.slots[cap.blk]
        if kind == "read":
            return Outcome(st, (), None)
        if kind == "evict":
            return Outcome(_with_slot(st, cap.blk, Slot(slot.gen, slot.seq, FREE)), (), None)
        rcv = req.arg
        if rcv >= dom.holders:
            return no("unknownHolder")
        if rcv == req.who:
            return no("selfTransfer")
        if slot.seq + 2 > dom.max_seq:
            return no("bound")
        tk = Ticket(cap.blk, st.epoch, slot.gen, slot.seq)
        nxt = _with_slot(st, cap.blk, Slot(slot.gen, slot.seq + 1, ("escrow", req.who, rcv)))
        return Outcome(nxt, (_ticket(req.who, tk), _ticket(rcv, tk)), None)

    if kind in ("commit", "abort"):
        tk = req.token
        if not isinstance(tk, Ticket):
            raise KernelRefError(f"{kind} needs a ticket, got {tk!r}")
        if req.who >= dom.holders:
            return no("unknownPresenter")
        bad = _token_freshness(st, tk)
        if bad:
            return no(bad)
        slot = st.slots[tk.blk]
        if slot.phase[0] != "escrow" or tk.nonce + 1 != slot.seq:
            return no("notPending")
        _, sender, receiver = slot.phase
        parties = (receiver,) if kind == "commit" else (sender, receiver)
        if req.who not in parties:
            return no("notParty")
        h = int(receiver if kind == "commit" else sender)
        nxt = _with_slot(st, tk.blk, Slot(slot.gen, slot.seq + 1, ("owned", h)))
        return Outcome(nxt, (_grant(h, Cap(tk.blk, h, st.epoch, slot.gen, slot.seq)),), None)

    if kind == "alloc":
        b, p = req.arg, req.who
        if p >= dom.holders:
            return no("unknownPresenter")
        if b >= len(st.slots):
            return no("unknownBlock")
        slot = st.slots[b]
        if slot.phase[0] != "free":
            return no("notFree")
        if slot.gen >= dom.max_gen:
            return no("bound")
        nxt = _with_slot(st, b, Slot(slot.gen + 1, 1, ("owned", p)))
        return Outcome(nxt, (_grant(p, Cap(b, p, st.epoch, slot.gen + 1, 0)),), None)

    if kind == "advance":
        if any(s.phase[0] == "escrow" for s in st.slots):
            return no("inEscrow")
        if st.epoch >= dom.max_epoch:
            return no("bound")
        epoch = st.epoch + 1
        slots, sends = [], []
        for b, s in enumerate(st.slots):
            if s.phase[0] == "owned":
                h = int(s.phase[1])
                slots.append(Slot(s.gen, 1, s.phase))
                sends.append(_grant(h, Cap(b, h, epoch, s.gen, 0)))
            else:
                slots.append(Slot(s.gen, 0, s.phase))
        return Outcome(KState(epoch, tuple(slots)), tuple(sends), None)

    # resend
    b = req.arg
    if b >= len(st.slots):
        return no("unknownBlock")
    slot = st.slots[b]
    if slot.phase[0] == "free":
        return no("notOwned")
    if slot.phase[0] == "owned":
        h = int(slot.phase[1])
        return Outcome(st, (_grant(h, Cap(b, h, st.epoch, slot.gen, slot.seq - 1)),), None)
    _, sender, receiver = slot.phase
    tk = Ticket(b, st.epoch, slot.gen, slot.seq - 1)
    return Outcome(st, (_ticket(int(sender), tk), _ticket(int(receiver), tk)), None)


#: A step function with the reference's signature (the table and workflows take one, so a
#: test can plant a wrong one).
StepFn = Callable[[Domain, KState, Request], Outcome]
