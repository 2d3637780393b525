"""The tagged variant of the kernel (``Proofs/Kernel/Mac.lean``): its independent reference and
its finite check (``Proofs/Kernel/MacTable.lean``).

Plain Python, written from the rules below (not from the Lean definitions); the ownership
kernel it wraps is the reference's :func:`.model.step`.

The rules of the variant
------------------------
Nobody is authenticated: any holder, or the network, may send any request naming any presenter.
Every token the kernel issues carries a *tag*, the MAC of the token for the holder it is issued
to. A request that presents a token (read, evict, begin: a capability; commit, abort: a
ticket) carries a tag; the kernel first checks that the tag is the MAC of the presented token
for the *presenter the request names*. A wrong tag is refused as ``unknownPresenter`` (no holder
is established as the presenter): nothing changes, nothing is sent. A right tag, or a request
presenting no token (alloc, advance, resend), is decided by the ownership kernel.

The MAC of the checks is a toy (:func:`toy_mac`): a leading 1, the addressee, then the token as
numbers (1 and a capability's five fields, or 2 and a ticket's four), packed in radix
``2**16``; injective on the checked domains and never 0. The finite check and the workflow
bench therefore check the kernel's *logic under a MAC*, not the MAC: the MAC's unforgeability
is the assumption (``Unforged`` in ``Mac.lean``: the adversary knows the tags the kernel sent
and can compute no other).

The finite check of the variant
-------------------------------
Every request of the finite check's alphabet (:func:`.codes.alphabet`) is presented with the
tags of :func:`tags_for`: the token's tag for every holder (the right one, when the presenter is
a holder, and every other holder's) and 0, a tag the kernel issues to nobody. The tag check
reads no state, so the reference's verdict on each such *tagged case* is one bit (right tag:
decided by the ownership kernel; wrong: refused at the tag check), and ``MacTable.lean``
records the bits; Lean's kernel runs ``tagBitsOk`` on them (``Proofs/Kernel/MacCheck.lean``),
which with the first table's certified agreement on every reachable state
(``Proofs/Kernel/Table.lean``) gives the variant's agreement with this reference on every
tagged case in every state the variant reaches.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytools.results.generated import render_template

from .codes import alphabet
from .model import Cap, Domain, KernelRefError, KState, Outcome, Request, StepFn, Ticket, step
from .table import TEMPLATES, Table, build_table, chunk_proof, lean_row, summarize

#: The generated module of the variant's finite check, relative to the repository root.
MAC_TABLE_LEAN = Path("Proofs/Kernel/MacTable.lean")
#: The command the committed module's header prints.
MAC_HEADER_COMMAND = "pytools regenerate single-owner-kernel"

#: The domain of the variant's finite check: 2 holders, 1 block, epochs 0..1, generations
#: 0..2, 3 tokens per block, epoch and generation (one transfer per epoch and generation). Smaller
#: than the first table's (measured: the tag check alone of the first table's 66,571 tagged
#: cases cost some 4 minutes of CPU, over the CI budget of the variant's modules).
MAC_DOMAIN = Domain(holders=2, blocks=1, max_epoch=1, max_gen=2, max_seq=3)

_RADIX = 1 << 16

#: A tag test: does the tag ``g`` let request ``r`` through the tag check?
TagTest = Callable[[Request, int], bool]
#: A MAC: the tag of a token for the holder it is issued to.
Mac = Callable[[int, Cap | Ticket], int]


def toy_mac(holder: int, token: Cap | Ticket) -> int:
    """The toy MAC of the checks (see the module docstring)."""
    kind = 1 if isinstance(token, Cap) else 2
    code = 1
    for field in (holder, kind, *token):
        if not 0 <= field < _RADIX:
            raise KernelRefError(f"toy MAC: field {field} of {token!r} outside 0..{_RADIX - 1}")
        code = code * _RADIX + field
    return code


def presents_token(req: Request) -> bool:
    """Whether the request presents a token (and so carries a tag the kernel checks)."""
    return req.kind in ("read", "evict", "begin", "commit", "abort")


def tag_ok(req: Request, tag: int, mac: Mac = toy_mac) -> bool:
    """The reference's tag check: a request presenting a token passes when its tag is the MAC
    of that token for the presenter it names; a request presenting no token always passes."""
    if not presents_token(req):
        return True
    if req.token is None:
        raise KernelRefError(f"{req.kind} presents no token")
    return tag == mac(req.who, req.token)


@dataclass(frozen=True)
class TaggedKernel:
    """The variant kernel: a tag test in front of an ownership kernel (a test plants a wrong
    one of either part)."""

    tag_test: TagTest = tag_ok
    step_fn: StepFn = step

    def step(self, dom: Domain, st: KState, req: Request, tag: int) -> Outcome:
        """Decide ``req`` carrying ``tag``: refused at the tag check (state unchanged, nothing
        sent), or decided by the ownership kernel."""
        if not self.tag_test(req, tag):
            return Outcome(st, (), "unknownPresenter")
        return self.step_fn(dom, st, req)


#: The reference's variant kernel.
REFERENCE = TaggedKernel()
#: Planted: a kernel that skips the tag check (every tag passes): the first kernel without an
#: authenticated presenter.
TAG_BLIND = TaggedKernel(tag_test=lambda _req, _tag: True)


def _any_holder_tag(req: Request, tag: int) -> bool:
    """Planted: a tag passes if it is the token's tag for *some* holder (0..7), whoever the
    request names as presenter (a replayed tag naming the wrong presenter passes)."""
    if not presents_token(req) or req.token is None:
        return True
    return any(tag == toy_mac(q, req.token) for q in range(8))


def _never_issued_passes(req: Request, tag: int) -> bool:
    """Planted: the tag 0, which the kernel issues to nobody, passes as a wildcard."""
    return tag == 0 or tag_ok(req, tag)


#: Planted: the tag is checked against the token but not against the named presenter.
PRESENTER_BLIND_TAG = TaggedKernel(tag_test=_any_holder_tag)
#: Planted: a never-issued tag (0) passes.
WILDCARD_TAG = TaggedKernel(tag_test=_never_issued_passes)


def tags_for(dom: Domain, req: Request) -> list[int]:
    """The tags the finite check presents with ``req``: for a request presenting a token, its
    tag for every holder ``0..holders-1`` and then 0; otherwise only 0."""
    if not presents_token(req) or req.token is None:
        return [0]
    return [toy_mac(q, req.token) for q in range(dom.holders)] + [0]


def tagged_cases(dom: Domain) -> list[tuple[Request, int]]:
    """The tagged cases of the finite check, in Lean's ``tagCases`` order."""
    return [(req, g) for req in alphabet(dom) for g in tags_for(dom, req)]


#: Token groups per chunk theorem of ``MacTable.lean`` (the kernel's memory grows with the
#: cases of one declaration; measured: all 66,571 cases of the domain in one theorem stopped
#: the registry Lean).
GROUPS_PER_CHUNK = 40


@dataclass(frozen=True)
class MacTable:
    """The variant's finite check: the domain, the reference's verdict bits of every tagged
    case (bit ``i`` for case ``i``), and the same bits laid out as Lean's ``tagTableOk`` reads
    them: a dictionary of group bit strings, one dictionary index per token group, and the bits
    of the requests after the groups."""

    domain: Domain
    cases: int
    right: int
    bits: int
    dictionary: tuple[int, ...]
    groups: tuple[int, ...]
    others: int


def build_mac_table(dom: Domain = MAC_DOMAIN, kernel: TaggedKernel = REFERENCE) -> MacTable:
    """The tag bits of the domain's tagged cases, by the kernel's tag test (memoized: the
    table is a pure function of its arguments)."""
    return _build(dom, kernel.tag_test)


def _bits(flags: list[bool]) -> int:
    return sum(1 << i for i, f in enumerate(flags) if f)


@functools.cache
def _build(dom: Domain, test: TagTest) -> MacTable:
    alpha = alphabet(dom)
    group_len = (dom.holders + 1) ** 2 * (dom.holders + 3) + 2 * (dom.holders + 1)
    n_groups = (dom.blocks + 1) * (dom.max_epoch + 1) * (dom.max_gen + 1) * dom.max_seq
    flags = [[test(req, g) for g in tags_for(dom, req)] for req in alpha]
    dictionary: dict[int, int] = {}
    groups = []
    for j in range(n_groups):
        entry = _bits([f for fs in flags[j * group_len:(j + 1) * group_len] for f in fs])
        groups.append(dictionary.setdefault(entry, len(dictionary)))
    others = _bits([f for fs in flags[n_groups * group_len:] for f in fs])
    every = [f for fs in flags for f in fs]
    return MacTable(dom, len(every), sum(every), _bits(every), tuple(dictionary), tuple(groups),
                    others)


def disagreements(table: MacTable, kernel: TaggedKernel, limit: int = 3) -> list[str]:
    """The first tagged cases where ``kernel``'s tag test disagrees with the table's bits,
    named (request and tag); empty when it agrees on every case."""
    out = []
    for i, (req, g) in enumerate(tagged_cases(table.domain)):
        if kernel.tag_test(req, g) != bool(table.bits >> i & 1):
            out.append(f"case {i}: {req.kind} by {req.who} presenting {tuple(req.token or ())} "
                       f"with tag {g:#x}: the table says "
                       f"{'right' if table.bits >> i & 1 else 'wrong'} tag")
            if len(out) >= limit:
                break
    return out


def _hex(n: int) -> str:
    return f"0x{n:x}" if n >= 16 else str(n)


def render_mac_table(table: MacTable, states: Table) -> str:
    """The Lean text of the variant's finite check (deterministic), from
    ``templates/MacTable.lean.j2``: the domain's table of reachable states (``states``, the
    reference's ownership kernel on every request of the alphabet, as ``Table.lean``) and the
    tag verdicts of every tagged case (``table``)."""
    if states.domain != table.domain:
        raise KernelRefError(f"the tag table's domain {table.domain} is not the state table's "
                             f"{states.domain}")
    n = len(table.groups)
    chunks = [(a, min(GROUPS_PER_CHUNK, n - a), table.groups[a:a + GROUPS_PER_CHUNK])
              for a in range(0, n, GROUPS_PER_CHUNK)]

    def rest(k: int) -> str:
        """``groups_k ++ (groups_k+1 ++ (...))``: the chunks from ``k`` on."""
        return " ++ (".join(f"groups_{j}" for j in range(k, len(chunks))) \
            + ")" * (len(chunks) - k - 1)

    proof = f"tags_{len(chunks) - 1}"
    for k in reversed(range(len(chunks) - 1)):
        a, count, _ = chunks[k]
        proof = (f"(checkTagGroups_range (tokQuads cfg) {a} {count} {n - a - count} groups_{k}\n"
                 f"        ({rest(k + 1)}) tags_{k} {proof})")
    parts, appended, rows_proof = chunk_proof(states)
    return render_template(
        TEMPLATES, "MacTable.lean.j2", header_command=MAC_HEADER_COMMAND, dom=table.domain,
        t=table, s=summarize(states), table=states, row_chunks=parts, appended=appended,
        rows_proof=rows_proof, lean_row=lean_row, hex=_hex, chunks=chunks, n_groups=n,
        alphabet=len(alphabet(table.domain)), groups_all=rest(0), chunks_proof=proof)


def generate_mac_table(kernel: TaggedKernel = REFERENCE, step_fn: StepFn | None = None) -> str:
    """The Lean text of the variant's finite check on :data:`MAC_DOMAIN` (``kernel``'s tag test,
    ``step_fn`` or the reference's ownership kernel)."""
    return render_mac_table(build_mac_table(MAC_DOMAIN, kernel),
                            build_table(MAC_DOMAIN, step_fn))
