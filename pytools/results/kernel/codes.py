"""Numbers exchanged with the Lean tables: state, token, message and outcome codes, the request
alphabet of a domain and every state's candidate requests.

Written from the layouts below (the same layouts ``Proofs/Kernel/Model.lean`` documents; this
module computes them with its own code).

* Refusal code: the position in :data:`REFUSAL_CODES`; 15 marks an accepted request.
* Phase digit (radix ``holders + holders**2 + 1``): ``owned(h)`` is ``h``, ``escrow(s, r)`` is
  ``holders + s * holders + r``, ``free`` is ``holders + holders**2``.
* State code, mixed radix, most significant first: the epoch, then every block's generation
  (radix ``max_gen + 1``), every block's sequence counter (radix ``max_seq + 1``), every block's
  phase digit.
* Capability code: ``blk, holder, epoch, gen, nonce`` in radix ``blocks + 1, holders + 1,
  max_epoch + 1, max_gen + 1, max_seq + 1``; ticket code: ``blk, epoch, gen, nonce`` likewise.
* Sent-message code: ``2 * (dst + (holders + 1) * token) + kind`` (kind 0 grant, 1 ticket);
  a list of sent messages: digits ``1 + message`` in radix ``2**32``, first message most
  significant; an accepted outcome: ``state * 2**64 + messages``.
* Alphabet, grouped by token identity: for every block ``0..blocks``, epoch, generation and
  nonce ``0..max_seq-1`` (last fastest): for every holder field ``h`` and presenter ``p`` in
  ``0..holders``: read, evict, begin to ``0..holders`` with capability ``(b, h, e, g, n)``;
  then for every presenter ``p`` in ``0..holders``: commit and abort of ticket
  ``(b, e, g, n)`` by ``p``. After the groups: ``alloc(p, b)`` for
  ``p`` in ``0..holders`` and ``b`` in ``0..blocks``; advance; ``resend(b)`` for ``b`` in
  ``0..blocks``. A row's answer number has request ``i``'s digit at ``16**i``.
* Candidates of a state (the only requests it can accept): advance; then per block ``b`` in
  order: for each holder ``p``: read and evict with the capability
  ``(b, p, epoch, gen, seq - 1)``, commit and abort with the ticket ``(b, epoch, gen, seq - 1)``,
  begin to every holder with the capability; then resend ``b``; ``alloc(p, b)`` for every
  holder ``p``.
"""

from __future__ import annotations

from .model import REFUSALS, Cap, Domain, KState, Message, Outcome, Request, Slot, Ticket

#: Refusal names in code order (the order of the Lean ``Refusal`` type).
REFUSAL_CODES: dict[str, int] = {name: i for i, name in enumerate(REFUSALS)}
ACCEPTED = 15
_TWO32 = 1 << 32
_TWO64 = 1 << 64


def phase_digit(dom: Domain, phase: tuple[int | str, ...]) -> int:
    """A block phase's digit."""
    h = dom.holders
    if phase[0] == "owned":
        return int(phase[1])
    if phase[0] == "escrow":
        return h + int(phase[1]) * h + int(phase[2])
    return h + h * h


def phase_of_digit(dom: Domain, d: int) -> tuple[int | str, ...]:
    """The phase of a digit."""
    h = dom.holders
    if d < h:
        return ("owned", d)
    if d < h + h * h:
        return ("escrow", (d - h) // h, (d - h) % h)
    return ("free",)


def state_code(dom: Domain, st: KState) -> int:
    """A kernel state's code."""
    code = st.epoch
    for s in st.slots:
        code = code * (dom.max_gen + 1) + s.gen
    for s in st.slots:
        code = code * (dom.max_seq + 1) + s.seq
    radix = dom.holders + dom.holders * dom.holders + 1
    for s in st.slots:
        code = code * radix + phase_digit(dom, s.phase)
    return code


def state_of_code(dom: Domain, code: int) -> KState:
    """The kernel state of a code (the inverse of :func:`state_code` on the domain)."""
    radix = dom.holders + dom.holders * dom.holders + 1
    phases, seqs, gens = [], [], []
    for _ in range(dom.blocks):
        code, d = divmod(code, radix)
        phases.append(phase_of_digit(dom, d))
    for _ in range(dom.blocks):
        code, d = divmod(code, dom.max_seq + 1)
        seqs.append(d)
    for _ in range(dom.blocks):
        code, d = divmod(code, dom.max_gen + 1)
        gens.append(d)
    slots = tuple(Slot(g, q, p) for g, q, p in
                  zip(reversed(gens), reversed(seqs), reversed(phases), strict=True))
    return KState(code, slots)


def state_space(dom: Domain) -> int:
    """The number of state codes of the domain (codes are below it)."""
    radix = dom.holders + dom.holders * dom.holders + 1
    return (dom.max_epoch + 1) * ((dom.max_gen + 1) * (dom.max_seq + 1) * radix) ** dom.blocks


def cap_code(dom: Domain, c: Cap) -> int:
    """A capability's code."""
    return ((((c.blk * (dom.holders + 1) + c.holder) * (dom.max_epoch + 1) + c.epoch)
             * (dom.max_gen + 1) + c.gen) * (dom.max_seq + 1) + c.nonce)


def ticket_code(dom: Domain, t: Ticket) -> int:
    """A ticket's code."""
    return (((t.blk * (dom.max_epoch + 1) + t.epoch) * (dom.max_gen + 1) + t.gen)
            * (dom.max_seq + 1) + t.nonce)


def message_code(dom: Domain, m: Message) -> int:
    """A sent message's code (the kernel sends grants and tickets only)."""
    if m.kind == "grant":
        assert isinstance(m.body, Cap)
        return 2 * (m.to + (dom.holders + 1) * cap_code(dom, m.body))
    if m.kind == "ticket":
        assert isinstance(m.body, Ticket)
        return 2 * (m.to + (dom.holders + 1) * ticket_code(dom, m.body)) + 1
    return 0


def outcome_code(dom: Domain, out: Outcome) -> int:
    """An accepted outcome's code: next state and sent messages."""
    sends = 0
    for m in out.sends:
        sends = sends * _TWO32 + 1 + message_code(dom, m)
    return state_code(dom, out.state) * _TWO64 + sends


def result_digit(out: Outcome) -> int:
    """A case's digit: the refusal's code, or :data:`ACCEPTED`."""
    return ACCEPTED if out.refusal is None else REFUSAL_CODES[out.refusal]


def alphabet(dom: Domain) -> list[Request]:
    """The domain's request alphabet, in index order (grouped by token)."""
    hs = range(dom.holders + 1)
    out: list[Request] = []
    for b in range(dom.blocks + 1):
        for e in range(dom.max_epoch + 1):
            for g in range(dom.max_gen + 1):
                for n in range(dom.max_seq):
                    for h in hs:
                        cap = Cap(b, h, e, g, n)
                        for p in hs:
                            out.append(Request("read", p, cap))
                            out.append(Request("evict", p, cap))
                            out.extend(Request("begin", p, cap, r) for r in hs)
                    t = Ticket(b, e, g, n)
                    for p in hs:
                        out.append(Request("commit", p, t))
                        out.append(Request("abort", p, t))
    for p in hs:
        for b in range(dom.blocks + 1):
            out.append(Request("alloc", p, arg=b))
    out.append(Request("advance"))
    out.extend(Request("resend", arg=b) for b in range(dom.blocks + 1))
    return out


def candidates(dom: Domain, st: KState) -> list[Request]:
    """The requests a state could accept, in the documented order."""
    out = [Request("advance")]
    for b, s in enumerate(st.slots):
        t = Ticket(b, st.epoch, s.gen, max(s.seq - 1, 0))
        for p in range(dom.holders):
            cap = Cap(b, p, st.epoch, s.gen, max(s.seq - 1, 0))
            out.append(Request("read", p, cap))
            out.append(Request("evict", p, cap))
            out.append(Request("commit", p, t))
            out.append(Request("abort", p, t))
            out.extend(Request("begin", p, cap, r) for r in range(dom.holders))
        out.append(Request("resend", arg=b))
        out.extend(Request("alloc", p, arg=b) for p in range(dom.holders))
    return out
