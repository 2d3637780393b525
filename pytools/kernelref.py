"""Executable reference for the single-owner state-movement kernel (``Proofs/Kernel``).

This module re-implements the kernel's rules in plain Python, with its own data types and
without reading any Lean, and uses it three ways:

1. It enumerates a small finite *domain* exhaustively: every well-formed state of a
   configuration (holders, tickets, epoch bound, generation bound) and every request of the
   domain's request alphabet, and computes the successor state or the refusal reason.
2. It writes that table into ``Proofs/Kernel/Table.lean`` (deterministic bytes), where Lean's
   kernel re-runs the Lean ``step`` function on every case (``decide +kernel``) and checks that
   it gives the same answer. A fast test regenerates the file and demands identical bytes.
3. It runs a bench of named workflows (``pytools/data/kernel_workflows.json``) and writes their
   final states and refusal counts into the same Lean file, where Lean re-checks them.

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

Limits: see :data:`RESULT_LIMITS`.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import click

from .paths import project_root, sha256_file
from .results import Evidence, InputFile

#: Result id of the published result this module supplies evidence for.
RESULT_ID = "single-owner-kernel"

#: What the result does and does not claim.
RESULT_LIMITS: tuple[str, ...] = (
    "A model of the ownership protocol of one cached block (its kernel's step function), "
    "not of a distributed system: no claim about message delivery, network partitions, "
    "crashes or clocks.",
    "No claim about hardware custody: the kernel tracks who may read the block, not where "
    "its bytes physically are or whether a holder keeps an illicit copy.",
    "The general theorems hold for every number of holders and tickets and all epoch and "
    "generation bounds; the exhaustive agreement check with the Python reference covers one "
    "finite domain only (its bounds are in the figures), where epoch and generation are "
    "bounded by refusing to advance past the bound.",
    "The exhaustive check covers every well-formed state of that domain (a superset of the "
    "reachable states) and every request of the domain's request alphabet, which includes "
    "one unknown holder id and one unknown ticket id.",
)

#: Committed files, relative to the repository root.
TABLE_LEAN = Path("Proofs/Kernel/Table.lean")
WORKFLOWS_JSON = Path("pytools/data/kernel_workflows.json")

#: Refusal reasons, in the order of their codes (code = position).
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
#: The digit that marks an accepted request in a table row.
OK_DIGIT = 15
#: Rows per generated Lean chunk (one ``decide +kernel`` theorem per chunk).
ROWS_PER_CHUNK = 80

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
TABLE_DOMAIN = Domain(holders=3, tickets=2, max_epoch=1, max_gen=2)
#: The tiny domain of the self-test carried verbatim by ``Proofs/Kernel/Model.lean``.
TINY_DOMAIN = Domain(holders=2, tickets=1, max_epoch=0, max_gen=1)
MODEL_LEAN = Path("Proofs/Kernel/Model.lean")


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


_REFUSAL_CODE = {name: i for i, name in enumerate(REFUSALS)}
_HEX = "0123456789ABCDEF"


def result_digit(out: Outcome) -> int:
    """A case's digit: the refusal's code, or :data:`OK_DIGIT` when accepted."""
    return OK_DIGIT if out.refusal is None else _REFUSAL_CODE[out.refusal]


@dataclass(frozen=True)
class Row:
    """One table row: a state code, the digits of all requests (digit i at 16**i), and the
    codes of the successors of the accepted requests, in request order."""

    state: int
    digits: int
    successors: tuple[int, ...]


StepFn = Callable[[Domain, KState, Request], Outcome]


def table_rows(dom: Domain, step_fn: StepFn | None = None) -> list[Row]:
    """Every (state, request) case of the domain, one row per state."""
    step_fn = step_fn or step
    alphabet = requests(dom)
    rows = []
    for st in domain_states(dom):
        hexdigits: list[str] = []
        succ: list[int] = []
        for req in alphabet:
            out = step_fn(dom, st, req)
            hexdigits.append(_HEX[result_digit(out)])
            if out.refusal is None:
                succ.append(encode_state(dom, out.state))
        digits = int("".join(reversed(hexdigits)), 16)  # request i at 16 ** i
        rows.append(Row(encode_state(dom, st), digits, tuple(succ)))
    return rows


# ---------------------------------------------------------------------------------------------
# Workflows
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workflow:
    """A named sequence of requests, run from the initial state."""

    name: str
    family: str
    requests: tuple[Request, ...]


@dataclass(frozen=True)
class WorkflowRun:
    """A workflow's outcome: final state, its holding as text, number of refusals."""

    workflow: Workflow
    final: KState
    refusals: int

    @property
    def final_owner(self) -> str:
        hold = self.final.holding
        return "free" if hold.kind == "free" else f"{hold.kind}:{hold.who}"


FAMILIES = ("abort", "commit", "evict-realloc")


def load_workflows(path: Path) -> tuple[Domain, list[Workflow]]:
    """Read the workflow bench; any problem is a :class:`KernelRefError` naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise KernelRefError(f"{path}: file not found") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KernelRefError(f"{path}: cannot read JSON: {exc}") from exc
    try:
        d = data["domain"]
        dom = Domain(int(d["holders"]), int(d["tickets"]), int(d["max_epoch"]),
                     int(d["max_gen"]))
        flows = []
        for i, w in enumerate(data["workflows"]):
            if w["family"] not in FAMILIES:
                raise KernelRefError(f"{path}: workflow {i}: unknown family {w['family']!r}")
            reqs = []
            for j, step_ in enumerate(w["steps"]):
                kind, *args = step_
                arity = {"begin": 5, "advance": 1}.get(kind, 3)
                if kind not in ACTION_KINDS or len(args) != arity or \
                        not all(isinstance(a, int) and a >= 0 for a in args):
                    raise KernelRefError(f"{path}: workflow {w['name']!r} step {j}: "
                                         f"bad request {step_!r}")
                reqs.append(Request(kind, tuple(args)))
            flows.append(Workflow(str(w["name"]), w["family"], tuple(reqs)))
    except (KeyError, TypeError, ValueError) as exc:
        raise KernelRefError(f"{path}: malformed workflow file: {exc!r}") from exc
    names = [w.name for w in flows]
    if len(set(names)) != len(names):
        raise KernelRefError(f"{path}: duplicate workflow names")
    return dom, flows


def run_workflow(dom: Domain, wf: Workflow, step_fn: StepFn | None = None) -> WorkflowRun:
    """Run a workflow from the initial state; refused requests leave the state as it was."""
    step_fn = step_fn or step
    st, refusals = initial_state(dom), 0
    for req in wf.requests:
        out = step_fn(dom, st, req)
        if out.refusal is not None:
            refusals += 1
        st = out.state
    return WorkflowRun(wf, st, refusals)


# ---------------------------------------------------------------------------------------------
# The generated Lean file
# ---------------------------------------------------------------------------------------------


def _lean_request(req: Request) -> str:
    return f"(.{req.kind} {' '.join(str(a) for a in req.args)})"


def _lean_state(st: KState) -> str:
    hold = ".free" if st.holding.kind == "free" else f".{st.holding.kind} {st.holding.who}"
    recs = []
    for rec in st.book:
        if rec.status == "pending":
            recs.append(f".pending {rec.sender} {rec.receiver} {rec.epoch} {rec.gen}")
        else:
            recs.append(f".{rec.status}")
    return f"⟨{st.epoch}, {st.gen}, {hold}, [{', '.join(recs)}]⟩"


def _lean_dom(dom: Domain) -> str:
    return (f"{{ holders := {dom.holders}, tickets := {dom.tickets}, "
            f"maxEpoch := {dom.max_epoch}, maxGen := {dom.max_gen} }}")


def _lean_list(items: list[str], indent: str = "  ", per_line: int = 8) -> list[str]:
    lines = []
    for i in range(0, len(items), per_line):
        part = ", ".join(items[i:i + per_line])
        sep = "," if i + per_line < len(items) else ""
        lines.append(f"{indent}{part}{sep}")
    return lines


def _lean_rows(dom: Domain, rows: list[Row], split: bool = False) -> list[str]:
    """One line per row, or with ``split`` two (state; answers), to stay within 100 columns."""
    by_code = {encode_state(dom, s): s for s in domain_states(dom)}
    lines = []
    for j, row in enumerate(rows):
        succ = ", ".join(str(c) for c in row.successors)
        sep = "," if j + 1 < len(rows) else ""
        state = _lean_state(by_code[row.state])
        if split:
            lines.append(f"  ⟨{state},")
            lines.append(f"    0x{row.digits:X}, [{succ}]⟩{sep}")
        else:
            lines.append(f"  ⟨{state}, 0x{row.digits:X}, [{succ}]⟩{sep}")
    return lines


def render_self_test(dom: Domain = TINY_DOMAIN) -> str:
    """The exhaustive self-test on a tiny domain that ``Proofs/Kernel/Model.lean`` carries
    verbatim (so that the checkers are exercised in the module that defines them); every line
    within 100 columns."""
    rows = table_rows(dom)
    out = [
        f"/-- The tiny self-test domain ({dom.holders} holders, {dom.tickets} ticket, epoch "
        f"0..{dom.max_epoch}, generations 0..{dom.max_gen}). -/",
        f"def tinyDom : Dom := {_lean_dom(dom)}",
        "",
        "/-- The request alphabet of the tiny domain. -/",
        "def tinyAlphabet : List Action := [",
        *_lean_list([_lean_request(r) for r in requests(dom)], per_line=4),
        "]",
        "",
        "/-- Every well-formed state of the tiny domain with the reference's answers. -/",
        "def tinyRows : List Row := [",
        *_lean_rows(dom, rows, split=True),
        "]",
        "",
        "/-- On every case of the tiny domain, `step` gives the Python reference's answer. -/",
        "theorem tiny_domain_agrees : checkRows tinyDom tinyAlphabet tinyRows = true := by",
        "  decide +kernel",
    ]
    return "\n".join(out) + "\n"


def render_lean(dom: Domain, rows: list[Row], wf_dom: Domain, runs: list[WorkflowRun],
                workflows_sha: str) -> str:
    """The text of ``Proofs/Kernel/Table.lean`` (deterministic)."""
    alphabet = requests(dom)
    n_cases = len(rows) * len(alphabet)
    out: list[str] = []
    w = out.append
    w("module")
    w("")
    w("public import Proofs.Kernel.Model")
    w("")
    w("/-!")
    w("# The exhaustive agreement table and the workflow bench (generated)")
    w("")
    w("Generated by `python -m pytools.kernelref lean-table`; do not edit by hand.")
    w("The Python reference `pytools/kernelref.py` computed, for every well-formed state of the")
    w(f"domain `dom` ({dom.holders} holders, {dom.tickets} tickets, epochs 0..{dom.max_epoch}, "
      f"generations 0..{dom.max_gen})")
    w(f"and every one of the {len(alphabet)} requests of its alphabet, the kernel's answer:")
    w("a refusal code, or acceptance with the successor state's code. Each row is one state;")
    w("`Row.digits` holds the answer to request `i` at `16 ^ i`. The theorems below make Lean's")
    w("kernel run `KVCache.Kernel.step` on every case and compare.")
    w(f"Rows: {len(rows)}; cases: {n_cases}. Workflows: {len(runs)}, run in the domain "
      f"`wfDom`,")
    w(f"from `{WORKFLOWS_JSON.as_posix()}` (SHA-256 {workflows_sha}).")
    w("Generated lines (the alphabet, the rows, the workflows) may exceed 100 columns.")
    w("-/")
    w("")
    w("public section")
    w("")
    w("namespace KVCache.Kernel.Table")
    w("")
    w("open KVCache.Kernel")
    w("")
    w("/-- The domain of the exhaustive check. -/")
    w(f"def dom : Dom := {_lean_dom(dom)}")
    w("")
    w("/-- The request alphabet of the domain (holder and ticket ids include one unknown). -/")
    w("def alphabet : List Action := [")
    out.extend(_lean_list([_lean_request(r) for r in alphabet]))
    w("]")
    w("")
    chunks = [rows[i:i + ROWS_PER_CHUNK] for i in range(0, len(rows), ROWS_PER_CHUNK)]
    for k, chunk in enumerate(chunks):
        w(f"/-- Table rows, chunk {k}. -/")
        w(f"def rows{k} : List Row := [")
        out.extend(_lean_rows(dom, chunk))
        w("]")
        w("")
        w(f"/-- Lean's `step` agrees with the Python reference on every case of chunk {k}. -/")
        w(f"theorem table_agrees_{k} : checkRows dom alphabet rows{k} = true := by decide +kernel")
        w("")
    w("/-- The domain of the workflow bench. -/")
    w(f"def wfDom : Dom := {_lean_dom(wf_dom)}")
    w("")
    w("/-- The workflow bench: requests, final state code, refusal count. -/")
    w("def workflows : List Workflow := [")
    for j, run in enumerate(runs):
        reqs = ", ".join(_lean_request(r) for r in run.workflow.requests)
        sep = "," if j + 1 < len(runs) else ""
        w(f"  -- {run.workflow.name} ({run.workflow.family})")
        w(f"  ⟨[{reqs}], {encode_state(wf_dom, run.final)}, {run.refusals}⟩{sep}")
    w("]")
    w("")
    w("/-- Running Lean's `step` over every workflow of the bench from the initial state gives the")
    w("recorded final state and the recorded number of refusals. -/")
    w("theorem workflows_agree : checkWorkflows wfDom workflows = true := by decide +kernel")
    w("")
    w("end KVCache.Kernel.Table")
    w("")
    w("end")
    return "\n".join(out) + "\n"


def generate(root: Path, step_fn: StepFn | None = None) -> str:
    """The Lean table text for the committed workflow bench."""
    wf_path = root / WORKFLOWS_JSON
    wf_dom, flows = load_workflows(wf_path)
    rows = table_rows(TABLE_DOMAIN, step_fn)
    runs = [run_workflow(wf_dom, wf, step_fn) for wf in flows]
    return render_lean(TABLE_DOMAIN, rows, wf_dom, runs, sha256_file(wf_path))


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------------------------------------
# Reading the committed table back (for the figures)
# ---------------------------------------------------------------------------------------------

_DOM_RE = re.compile(r"^def (dom|wfDom) : Dom := \{ holders := (\d+), tickets := (\d+), "
                     r"maxEpoch := (\d+), maxGen := (\d+) \}$", re.M)
_ROW_RE = re.compile(r"^  ⟨⟨(\d+), (\d+), (\.free|\.owned \d+|\.escrow \d+), \[([^\]]*)\]⟩, "
                     r"0x([0-9A-F]+), \[([0-9, ]*)\]⟩,?$", re.M)
_CHUNK_RE = re.compile(r"^theorem table_agrees_(\d+) : checkRows dom alphabet rows\1 = true := "
                       r"by decide \+kernel$", re.M)
_WF_RE = re.compile(r"^  ⟨\[(.*)\], (\d+), (\d+)⟩,?$", re.M)
_TICKET_RE = re.compile(r"^\.(unused|used)$|^\.pending (\d+) (\d+) (\d+) (\d+)$")


@dataclass(frozen=True)
class CommittedTable:
    """What the committed Lean table holds."""

    domain: Domain
    workflow_domain: Domain
    rows: tuple[Row, ...]
    workflow_finals: tuple[tuple[int, int], ...]  # (final state code, refusals) per workflow
    chunks: int


def _parse_state(path: Path, e: str, g: str, hold: str, book: str) -> KState:
    kind, _, who = hold.lstrip(".").partition(" ")
    recs = []
    for part in (x.strip() for x in book.split(",") if x.strip()):
        m = _TICKET_RE.match(part)
        if not m:
            raise KernelRefError(f"{path}: bad ticket literal {part!r}")
        if m.group(1):
            recs.append(TicketRec(m.group(1)))
        else:
            a, b, te, tg = (int(x) for x in m.groups()[1:])
            recs.append(TicketRec("pending", a, b, te, tg))
    return KState(int(e), int(g), Holding(kind, int(who) if who else 0), tuple(recs))


def read_table(path: Path) -> CommittedTable:
    """Parse the committed ``Table.lean``; a problem is a :class:`KernelRefError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise KernelRefError(f"{path}: file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelRefError(f"{path}: cannot read: {exc}") from exc
    doms = {name: Domain(*(int(x) for x in rest)) for name, *rest in _DOM_RE.findall(text)}
    if set(doms) != {"dom", "wfDom"}:
        raise KernelRefError(f"{path}: needs one `def dom` and one `def wfDom` line")
    dom = doms["dom"]
    rows = tuple(
        Row(encode_state(dom, _parse_state(path, e, g, hold, book)), int(digits, 16),
            tuple(int(x) for x in succ.split(",") if x.strip()))
        for e, g, hold, book, digits, succ in _ROW_RE.findall(text)
    )
    finals = tuple((int(b), int(c)) for _, b, c in _WF_RE.findall(text))
    chunks = len(_CHUNK_RE.findall(text))
    if not rows:
        raise KernelRefError(f"{path}: no table rows")
    return CommittedTable(dom, doms["wfDom"], rows, finals, chunks)


def compare_rows(expected: list[Row], actual: list[Row], dom: Domain) -> list[str]:
    """Human-readable differences between two tables (empty when they agree)."""
    alphabet = requests(dom)
    problems: list[str] = []
    if [r.state for r in expected] != [r.state for r in actual]:
        problems.append("the tables list different states")
        return problems
    for a, b in zip(expected, actual, strict=True):
        for i, req in enumerate(alphabet):
            da, db = (a.digits >> (4 * i)) & 15, (b.digits >> (4 * i)) & 15
            if da != db:
                problems.append(f"state {a.state}, request {req.kind}{req.args}: "
                                f"digit {da} != {db}")
        if a.successors != b.successors:
            problems.append(f"state {a.state}: successors differ")
    return problems


# ---------------------------------------------------------------------------------------------
# Evidence
# ---------------------------------------------------------------------------------------------


def evidence(root: Path) -> Evidence:
    """Figures of the result ``single-owner-kernel``, computed from the committed files.

    The committed table is the one Lean's kernel checked; it must be byte-identical to what
    the reference generates now, and every workflow's recorded outcome must equal the
    reference's run.
    """
    table_path = root / TABLE_LEAN
    wf_path = root / WORKFLOWS_JSON
    committed = read_table(table_path)
    text = table_path.read_text(encoding="utf-8")
    regenerated = generate(root)
    if regenerated != text:
        raise KernelRefError(f"{table_path}: differs from the table the reference generates "
                             "(run `python -m pytools.kernelref lean-table`)")
    wf_dom, flows = load_workflows(wf_path)
    dom = committed.domain
    if wf_dom != committed.workflow_domain:
        raise KernelRefError(f"{wf_path}: workflow domain differs from {table_path}")
    if len(flows) != len(committed.workflow_finals):
        raise KernelRefError(f"{table_path}: {len(committed.workflow_finals)} workflows, "
                             f"{wf_path} has {len(flows)}")
    n_req = len(requests(dom))
    extra_rows = []
    for wf, (final_code, refusals) in zip(flows, committed.workflow_finals, strict=True):
        run = run_workflow(wf_dom, wf)
        agree = encode_state(wf_dom, run.final) == final_code and run.refusals == refusals
        extra_rows.append({
            "name": wf.name,
            "family": wf.family,
            "steps": len(wf.requests),
            "final_owner": run.final_owner,
            "refusals": run.refusals,
            "agree": agree,
        })
    accepted = sum(len(r.successors) for r in committed.rows)
    figures: dict[str, Any] = {
        "holders": dom.holders,
        "tickets": dom.tickets,
        "max_epoch": dom.max_epoch,
        "max_gen": dom.max_gen,
        "states_checked": len(committed.rows),
        "requests_per_state": n_req,
        "cases_checked": len(committed.rows) * n_req,
        "cases_accepted": accepted,
        "cases_refused": len(committed.rows) * n_req - accepted,
        "reachable_states": len(reachable_states(dom)),
        "lean_chunks": committed.chunks,
        "workflow_holders": wf_dom.holders,
        "workflow_tickets": wf_dom.tickets,
        "workflow_max_epoch": wf_dom.max_epoch,
        "workflow_max_gen": wf_dom.max_gen,
        "workflows": len(flows),
        "workflows_agree": sum(1 for r in extra_rows if r["agree"]),
    }
    return Evidence(
        figures=figures,
        inputs=(
            InputFile(TABLE_LEAN.as_posix(), sha256_file(table_path)),
            InputFile(WORKFLOWS_JSON.as_posix(), sha256_file(wf_path)),
        ),
        extra={"workflows": extra_rows},
    )


#: The Lean theorems the result rests on (fully qualified; for the certificate registry).
THEOREMS: tuple[str, ...] = tuple(
    f"KVCache.Kernel.{name}" for name in (
        "reachable_at_most_one_live_owner",
        "at_most_one_live_owner",
        "reachable_invariant",
        "inv_step",
        "no_read_in_escrow",
        "escrow_has_no_live_owner",
        "only_owner_reads",
        "commit_hands_to_receiver",
        "commit_replay_refused",
        "abort_returns_to_sender",
        "ticket_single_use",
        "used_ticket_refused",
        "used_ticket_stays_used_run",
        "stale_epoch_refused",
        "stale_epoch_state_unchanged",
        "stale_gen_refused",
        "stale_gen_state_unchanged",
        "wrong_gen_refused",
        "realloc_kills_older_capabilities",
        "realloc_kills_older_tickets",
        "refusal_leaves_state_unchanged",
        "custody_conserved",
        "owner_origin",
        "begin_revokes_sender",
        "gen_monotone_run",
        "reachable_within_bounds",
        "runFrom_reach",
        "tiny_domain_agrees",
    )
) + tuple(
    f"KVCache.Kernel.Table.table_agrees_{k}"
    for k in range(-(-len(domain_states(TABLE_DOMAIN)) // ROWS_PER_CHUNK))
) + (
    "KVCache.Kernel.Table.workflows_agree",
)

# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


@click.group()
def cli() -> None:
    """The single-owner kernel's executable reference."""


@cli.command("lean-table")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help=f"Output file (default: {TABLE_LEAN}).")
@click.option("--check", is_flag=True, help="Only check the committed file is up to date.")
def lean_table_cmd(out: Path | None, check: bool) -> None:
    """Write (or check) the Lean agreement table."""
    root = project_root()
    target = out if out is not None else root / TABLE_LEAN
    try:
        text = generate(root)
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    if check:
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            raise click.ClickException(f"{target}: out of date")
        click.echo(f"{target}: up to date")
        return
    write_atomic(target, text)
    click.echo(f"wrote {target}")


@cli.command("workflows")
def workflows_cmd() -> None:
    """Print the workflow bench: reference run vs. the outcome recorded in the Lean table."""
    root = project_root()
    try:
        ev = evidence(root)
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    header = f"{'workflow':44} {'family':14} {'steps':>5} {'final owner':12} " \
             f"{'refusals':>8} agree"
    click.echo(header)
    click.echo("-" * len(header))
    for r in ev.extra["workflows"]:
        click.echo(f"{r['name']:44} {r['family']:14} {r['steps']:>5} {r['final_owner']:12} "
                   f"{r['refusals']:>8} {'yes' if r['agree'] else 'NO'}")


@cli.command("summary")
def summary_cmd() -> None:
    """Print the evidence figures as JSON."""
    try:
        ev = evidence(project_root())
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(ev.figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    sys.exit(cli())
