"""The reference's system: holders' knowledge, the network, and the workflow actions.

An independent transcription, in Python, of the system of ``Proofs/Kernel/Model.lean``
(``Sys``, ``runAct``, ``Sys.flat``), written from its documented behaviour:

* the state is the kernel state, the messages in flight (most recent first) and, per holder,
  the tokens it has received (most recent first);
* a holder may send a request only presenting tokens it knows (``read p j`` presents holder
  ``p``'s ``j``-th token, which must be a capability; ``commit``/``abort`` a ticket);
* the network delivers, duplicates or drops the ``i``-th message in flight; the kernel decides
  a delivered request (its messages go in front of the network), a delivered grant or ticket
  is learnt by its addressee;
* the kernel's own ``advance`` and ``resend`` act at once;
* ``forge p b h e g n``: holder ``p`` sends ``read`` presenting the capability
  ``(b, h, e, g, n)`` it wrote itself (known to it or not: every field is public).

An impossible action (no such token or message, a token of the wrong kind, a holder out of
range) makes the whole workflow impossible (``None``), as in Lean.

Every function that lets the kernel decide takes an optional ``step_fn`` (default: the
reference's :func:`.model.step`), so that a test can plant a wrong kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from .model import (
    Cap,
    Domain,
    KernelRefError,
    KState,
    Message,
    Outcome,
    Request,
    StepFn,
    Ticket,
    initial_state,
)
from .model import step as kernel_step

S = TypeVar("S")  # a system's state (play_actions)

Token = Cap | Ticket
#: A kernel event: the request the kernel decided, the state it decided it in, the outcome.
Event = tuple[Request, KState, Outcome]

#: Numbers of the request kinds in a flattened state (Lean's ``Req.flat`` tags).
REQ_TAG = {"read": 10, "evict": 11, "begin": 12, "commit": 13, "abort": 14, "alloc": 15,
           "advance": 16, "resend": 17}

#: Arity of every action kind (after the kind).
ACT_ARITY = {"read": 2, "evict": 2, "begin": 3, "commit": 2, "abort": 2, "alloc": 2,
             "share": 3, "deliver": 1, "dup": 1, "drop": 1, "advance": 0, "resend": 1,
             "forge": 6}


@dataclass(frozen=True)
class SysState:
    """The kernel state, the messages in flight and every holder's tokens."""

    kern: KState
    net: tuple[Message, ...]
    know: tuple[tuple[Token, ...], ...]


def initial_system(dom: Domain) -> SysState:
    """The initial kernel, nothing in flight, nobody knows anything."""
    return SysState(initial_state(dom), (), tuple(() for _ in range(dom.holders)))


def _request(kind: str, who: int, token: Token | None = None, arg: int = 0) -> Request:
    return Request(kind, who, token, arg)


def _req_tokens(req: Request) -> tuple[Token, ...]:
    return () if req.token is None else (req.token,)


def _learn(st: SysState, q: int, tok: Token) -> SysState:
    know = list(st.know)
    know[q] = (tok, *know[q])
    return SysState(st.kern, st.net, tuple(know))


def _exec(dom: Domain, st: SysState, req: Request, log: list[Event] | None,
          step_fn: StepFn | None = None) -> tuple[SysState, int]:
    out = (step_fn or kernel_step)(dom, st.kern, req)
    if log is not None:
        log.append((req, st.kern, out))
    return SysState(out.state, out.sends + st.net, st.know), int(out.refusal is not None)


def _send(dom: Domain, st: SysState, p: int, req: Request) -> SysState | None:
    if not 0 <= p < dom.holders:
        return None
    if any(tok not in st.know[p] for tok in _req_tokens(req)):
        return None
    return SysState(st.kern, (Message("req", 0, req), *st.net), st.know)


def _token(st: SysState, dom: Domain, p: int, j: int) -> Token | None:
    if not 0 <= p < dom.holders or not 0 <= j < len(st.know[p]):
        return None
    return st.know[p][j]


def run_action(dom: Domain, st: SysState, act: list[int | str],
               log: list[Event] | None = None, step_fn: StepFn | None = None
               ) -> tuple[SysState, int] | None:
    """Play one action: the next state and the kernel refusals it caused (0 or 1); the kernel's
    decision, if any, is appended to ``log``."""
    kind, args = str(act[0]), [int(a) for a in act[1:]]
    if ACT_ARITY.get(kind) != len(args):
        raise KernelRefError(f"bad action {act!r}")
    if kind in ("read", "evict", "begin", "commit", "abort"):
        p, j = args[0], args[1]
        tok = _token(st, dom, p, j)
        want = Cap if kind in ("read", "evict", "begin") else Ticket
        if not isinstance(tok, want):
            return None
        req = _request(kind, p, tok, args[2] if kind == "begin" else 0)
        nxt = _send(dom, st, p, req)
        return None if nxt is None else (nxt, 0)
    if kind == "forge":
        p = args[0]
        if not 0 <= p < dom.holders:
            return None
        forged = _request("read", p, Cap(*args[1:]))
        return SysState(st.kern, (Message("req", 0, forged), *st.net), st.know), 0
    if kind == "alloc":
        nxt = _send(dom, st, args[0], _request("alloc", args[0], None, args[1]))
        return None if nxt is None else (nxt, 0)
    if kind == "share":
        tok = _token(st, dom, args[0], args[1])
        if tok is None or not 0 <= args[2] < dom.holders:
            return None
        return _learn(st, args[2], tok), 0
    if kind in ("deliver", "dup", "drop"):
        i = args[0]
        if not 0 <= i < len(st.net):
            return None
        m = st.net[i]
        rest = SysState(st.kern, st.net[:i] + st.net[i + 1:], st.know)
        if kind == "dup":
            return SysState(st.kern, (m, *st.net), st.know), 0
        if kind == "drop":
            return rest, 0
        if m.kind == "req":
            assert isinstance(m.body, Request)
            return _exec(dom, rest, m.body, log, step_fn)
        assert isinstance(m.body, Cap | Ticket)
        return _learn(rest, m.to, m.body), 0
    if kind == "advance":
        return _exec(dom, st, _request("advance", 0), log, step_fn)
    return _exec(dom, st, _request("resend", 0, None, args[0]), log, step_fn)


def play_actions(st: S, acts: list[list[int | str]],
                 run_one: Callable[[S, list[int | str]], tuple[S, int] | None]
                 ) -> tuple[S, int] | None:
    """Play ``acts`` in order from ``st`` with ``run_one`` (one action: the next state and the
    refusals it caused, ``None`` if impossible): the last state and the refusals in all, or
    ``None`` if an action is impossible. Both systems' workflows (this one's and
    :mod:`.mac_system`'s) are played by it."""
    refused = 0
    for act in acts:
        res = run_one(st, act)
        if res is None:
            return None
        st, refused = res[0], refused + res[1]
    return st, refused


def run_workflow(dom: Domain, acts: list[list[int | str]], log: list[Event] | None = None,
                 step_fn: StepFn | None = None) -> tuple[SysState, int] | None:
    """Play a workflow from the initial system; ``None`` if an action is impossible. The
    kernel's decisions, in order, are appended to ``log``."""
    return play_actions(initial_system(dom), acts,
                        lambda st, act: run_action(dom, st, act, log, step_fn))


def _tok_flat(tok: Token) -> list[int]:
    return [1, *tok] if isinstance(tok, Cap) else [2, *tok]


def _req_flat(req: Request) -> list[int]:
    tag = REQ_TAG[req.kind]
    tok = list(req.token) if req.token is not None else []
    if req.kind in ("read", "evict"):
        return [tag, req.who, *tok]
    if req.kind == "begin":
        return [tag, req.who, req.arg, *tok]
    if req.kind in ("commit", "abort"):
        return [tag, req.who, *tok]
    if req.kind == "alloc":
        return [tag, req.who, req.arg]
    if req.kind == "advance":
        return [tag]
    return [tag, req.arg]


def _msg_flat(m: Message) -> list[int]:
    if m.kind == "req":
        assert isinstance(m.body, Request)
        return [3, *_req_flat(m.body)]
    return [4 if m.kind == "grant" else 5, m.to, *m.body]


def _phase_flat(phase: tuple[int | str, ...]) -> list[int]:
    if phase[0] == "owned":
        return [1, int(phase[1]), 0]
    if phase[0] == "escrow":
        return [2, int(phase[1]), int(phase[2])]
    return [0, 0, 0]


def flatten(st: SysState) -> list[int]:
    """The state as numbers, laid out as Lean's ``Sys.flat``: the epoch; per block generation,
    sequence and phase; the number of messages and each; per holder its token count and each."""
    out = [st.kern.epoch]
    for slot in st.kern.slots:
        out += [slot.gen, slot.seq, *_phase_flat(slot.phase)]
    out.append(len(st.net))
    for m in st.net:
        out += _msg_flat(m)
    for toks in st.know:
        out.append(len(toks))
        for tok in toks:
            out += _tok_flat(tok)
    return out
