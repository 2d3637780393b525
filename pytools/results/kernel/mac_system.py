"""The tagged variant's system: holders that know tagged tokens, a network that carries tagged
requests and may rewrite them, and the workflow actions on it (the reference of the variant's
workflow bench, ``Proofs/Kernel/MacWorkflows.lean``).

Written from the rules of :mod:`.mac` and the system of :mod:`.system`:

* the state is the kernel state, the messages in flight (most recent first) each with its tag,
  every holder's tokens (most recent first) each with the tag it received with it, and every
  (addressee, token) the kernel issued;
* the kernel decides a delivered request with its tag (:class:`.mac.TaggedKernel`); every grant
  or ticket it sends carries the token's tag for its addressee, and is recorded as issued;
  a delivered grant or ticket is learnt, with its tag, by its addressee;
* the actions of :mod:`.system` keep their meaning, honest holders presenting the tag they hold
  for the token: ``read p j`` presents holder ``p``'s ``j``-th token with its tag; ``share``
  hands a token *with its tag* (a tag is a bearer credential); ``alloc`` and the kernel's own
  ``advance`` and ``resend`` carry the tag 0; ``forge p b h e g n`` presents the capability
  ``(b, h, e, g, n)`` with the tag ``p`` holds for it, if any, else 0;
* two new actions forge requests in a world without an authenticated presenter:
  ``spoof p q j t k``: holder ``p`` sends a request naming ``q`` as presenter, presenting the
  fields of ``q``'s ``j``-th token (every field is public), of kind ``k`` (0 read, 1 evict,
  2 commit, 3 abort, ``4 + r`` begin to ``r``), with a tag ``p`` knows: ``t = 0`` the tag 0
  (issued to nobody), ``t = i + 1`` the tag of ``p``'s own ``i``-th token;
  ``reroute i p``: the network puts in flight a copy of the ``i``-th request in flight naming
  ``p`` as presenter (a capability's holder field rewritten to ``p`` too), with the original's
  tag: a replayed tag naming the wrong presenter.

An impossible action (no such token or message, a token of the wrong kind, a holder out of
range) makes the whole workflow impossible (``None``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .mac import REFERENCE, TaggedKernel, toy_mac
from .model import Cap, Domain, KernelRefError, KState, Outcome, Request, Ticket, initial_state
from .system import ACT_ARITY, play_actions

Token = Cap | Ticket
#: A tagged kernel event: the request, its tag, the state it was decided in, the outcome.
MEvent = tuple[Request, int, KState, Outcome]

#: Arity of every action of the tagged system (after the kind).
MAC_ACT_ARITY = {**ACT_ARITY, "spoof": 5, "reroute": 2}


@dataclass(frozen=True)
class TMessage:
    """A message in flight with its tag: ``req`` (``body`` a request) or ``grant``/``ticket``
    (``body`` a token for holder ``to``)."""

    kind: str
    to: int
    body: Request | Cap | Ticket
    tag: int


@dataclass(frozen=True)
class MSysState:
    """The kernel state, the tagged messages in flight, every holder's tagged tokens and every
    (addressee, token) the kernel issued."""

    kern: KState
    net: tuple[TMessage, ...]
    know: tuple[tuple[tuple[Token, int], ...], ...]
    issued: tuple[tuple[int, Token], ...]


def initial_msystem(dom: Domain) -> MSysState:
    """The initial kernel, nothing in flight, nobody knows anything, nothing issued."""
    return MSysState(initial_state(dom), (), tuple(() for _ in range(dom.holders)), ())


def _decide(dom: Domain, st: MSysState, req: Request, tag: int, kernel: TaggedKernel,
            log: list[MEvent] | None) -> tuple[MSysState, int]:
    out = kernel.step(dom, st.kern, req, tag)
    if log is not None:
        log.append((req, tag, st.kern, out))
    sent = tuple(TMessage(m.kind, m.to, m.body, toy_mac(m.to, m.body)) for m in out.sends
                 if isinstance(m.body, Cap | Ticket))
    issued = tuple((m.to, m.body) for m in out.sends if isinstance(m.body, Cap | Ticket))
    return (MSysState(out.state, sent + st.net, st.know, issued + st.issued),
            int(out.refusal is not None))


def _put(st: MSysState, req: Request, tag: int) -> MSysState:
    return MSysState(st.kern, (TMessage("req", 0, req, tag), *st.net), st.know, st.issued)


def _known(dom: Domain, st: MSysState, p: int, j: int) -> tuple[Token, int] | None:
    if not 0 <= p < dom.holders or not 0 <= j < len(st.know[p]):
        return None
    return st.know[p][j]


_SPOOF_KINDS = ("read", "evict", "commit", "abort")


def _spoof(dom: Domain, st: MSysState, args: list[int]) -> MSysState | None:
    p, q, j, t, k = args
    if not 0 <= p < dom.holders:
        return None
    shown = _known(dom, st, q, j)
    if shown is None:
        return None
    tag = 0
    if t:
        own = _known(dom, st, p, t - 1)
        if own is None:
            return None
        tag = own[1]
    tok = shown[0]
    kind = _SPOOF_KINDS[k] if k < 4 else "begin"
    if isinstance(tok, Cap) != (kind in ("read", "evict", "begin")):
        return None
    return _put(st, Request(kind, q, tok, k - 4 if kind == "begin" else 0), tag)


def _reroute(dom: Domain, st: MSysState, i: int, p: int) -> MSysState | None:
    if not 0 <= i < len(st.net) or not 0 <= p < dom.holders:
        return None
    m = st.net[i]
    if m.kind != "req" or not isinstance(m.body, Request) or m.body.token is None:
        return None
    tok = m.body.token
    if isinstance(tok, Cap):
        tok = tok._replace(holder=p)
    return _put(st, m.body._replace(who=p, token=tok), m.tag)


def run_maction(dom: Domain, st: MSysState, act: list[int | str],
                log: list[MEvent] | None = None, kernel: TaggedKernel = REFERENCE
                ) -> tuple[MSysState, int] | None:
    """Play one action on the tagged system: the next state and the kernel refusals it caused
    (0 or 1); the kernel's decision, if any, is appended to ``log``."""
    kind, args = str(act[0]), [int(a) for a in act[1:]]
    if MAC_ACT_ARITY.get(kind) != len(args):
        raise KernelRefError(f"bad action {act!r}")
    if kind in ("read", "evict", "begin", "commit", "abort"):
        held = _known(dom, st, args[0], args[1])
        want = Cap if kind in ("read", "evict", "begin") else Ticket
        if held is None or not isinstance(held[0], want):
            return None
        req = Request(kind, args[0], held[0], args[2] if kind == "begin" else 0)
        return _put(st, req, held[1]), 0
    if kind == "forge":
        p = args[0]
        if not 0 <= p < dom.holders:
            return None
        cap = Cap(*args[1:])
        tag = next((g for tok, g in st.know[p] if tok == cap), 0)
        return _put(st, Request("read", p, cap), tag), 0
    if kind == "alloc":
        if not 0 <= args[0] < dom.holders:
            return None
        return _put(st, Request("alloc", args[0], None, args[1]), 0), 0
    if kind == "share":
        held = _known(dom, st, args[0], args[1])
        if held is None or not 0 <= args[2] < dom.holders:
            return None
        know = list(st.know)
        know[args[2]] = (held, *know[args[2]])
        return MSysState(st.kern, st.net, tuple(know), st.issued), 0
    if kind == "spoof":
        nxt = _spoof(dom, st, args)
        return None if nxt is None else (nxt, 0)
    if kind == "reroute":
        nxt = _reroute(dom, st, args[0], args[1])
        return None if nxt is None else (nxt, 0)
    if kind in ("deliver", "dup", "drop"):
        i = args[0]
        if not 0 <= i < len(st.net):
            return None
        m = st.net[i]
        rest = MSysState(st.kern, st.net[:i] + st.net[i + 1:], st.know, st.issued)
        if kind == "dup":
            return MSysState(st.kern, (m, *st.net), st.know, st.issued), 0
        if kind == "drop":
            return rest, 0
        if m.kind == "req":
            assert isinstance(m.body, Request)
            return _decide(dom, rest, m.body, m.tag, kernel, log)
        assert isinstance(m.body, Cap | Ticket)
        know = list(rest.know)
        know[m.to] = ((m.body, m.tag), *know[m.to])
        return MSysState(rest.kern, rest.net, tuple(know), rest.issued), 0
    if kind == "advance":
        return _decide(dom, st, Request("advance"), 0, kernel, log)
    return _decide(dom, st, Request("resend", 0, None, args[0]), 0, kernel, log)


def run_mworkflow(dom: Domain, acts: list[list[int | str]], log: list[MEvent] | None = None,
                  kernel: TaggedKernel = REFERENCE) -> tuple[MSysState, int] | None:
    """Play a workflow on the tagged system from its initial state; ``None`` if an action is
    impossible. The kernel's decisions, in order, are appended to ``log``."""
    return play_actions(initial_msystem(dom), acts,
                        lambda st, act: run_maction(dom, st, act, log, kernel))
