"""The certified finite check: every reachable state of one finite domain, with the reference's
answer to every request of the domain's alphabet, written into ``Proofs/Kernel/Table.lean``
(deterministic bytes), where Lean's kernel runs ``checkTable`` (``Proofs/Kernel/Check.lean``)
and so proves that the listed states are exactly the reachable ones and that Lean's ``step``
agrees with the reference on every case.

Row layout (the one ``Check.lean`` documents): the state's code; per token group (the 104
requests presenting one token identity, in alphabet order) the index, in a dictionary of digit
strings, of the reference's digits for the group (base-32 digit ``i`` for group ``i``); the digits
of the requests after the groups; per candidate the outcome code (0 refused, else
``1 + outcome_code``); a parent state's code and the index of the parent's candidate that
leads here (the first discovery in breadth-first order; every state-changing request raises
the code, so the parent's code is smaller).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytools.results.generated import render_template

from .codes import (
    alphabet,
    candidates,
    outcome_code,
    result_digit,
    state_code,
    state_of_code,
    state_space,
)
from .model import Domain, KernelRefError, KState, StepFn, initial_state, step

#: The generated Lean module, relative to the repository root.
TABLE_LEAN = Path("Proofs/Kernel/Table.lean")
#: The command the committed module's header prints.
TABLE_HEADER_COMMAND = "pytools regenerate single-owner-kernel"

#: The folder of the module's template.
TEMPLATES = Path(__file__).with_name("templates")

#: The domain of the certified finite check: 3 holders, 1 block, epochs 0..3, generations
#: 0..3, 5 tokens per block, epoch and generation (a block can be allocated and transferred
#: twice, each transfer settled, per epoch and generation).
TABLE_DOMAIN = Domain(holders=3, blocks=1, max_epoch=3, max_gen=3, max_seq=5)

#: A row's group indices are base-32 digits: at most 32 distinct group digit strings.
_GROUP_RADIX = 32
_MAX_DICTIONARY = _GROUP_RADIX

#: Rows per chunk theorem. One theorem over the whole table ran the registry Lean out of
#: memory (the kernel keeps every intermediate result of one declaration; measured: the
#: 301-row table in one theorem crashed the process at 5 GB).
ROWS_PER_CHUNK = 25


@dataclass(frozen=True)
class TableRow:
    """One row of the table (see the module docstring)."""

    code: int
    groups: int
    others: int
    outs: tuple[int, ...]
    parent: int
    via: int


@dataclass(frozen=True)
class Table:
    """A whole table: the domain, the listed codes (as a bitmap), the dictionary, the rows."""

    domain: Domain
    listed: int
    codes: int
    dictionary: tuple[int, ...]
    rows: tuple[TableRow, ...]


@dataclass(frozen=True)
class TableSummary:
    """The figures of a table."""

    domain: Domain
    #: Reachable states (= rows).
    states: int
    #: Requests in the alphabet (each checked in every state).
    alphabet: int
    #: ``states * alphabet``.
    cases: int
    #: Candidate requests over all states (each checked with its whole outcome).
    candidate_cases: int
    #: Accepted candidates over all states.
    accepted: int
    #: Distinct group digit strings.
    dictionary: int


def _digits(ds: list[int]) -> int:
    """Base-16 digits, the first one lowest (Lean's ``digitsOf``)."""
    n = 0
    for d in reversed(ds):
        n = n * 16 + d
    return n


def reachable(dom: Domain, step_fn: StepFn = step) -> dict[int, tuple[int, int]]:
    """Every reachable state's code, with its witness ``(parent code, candidate index)``:
    breadth-first from the initial state over the candidates, first discovery kept."""
    init = initial_state(dom)
    found: dict[int, tuple[int, int]] = {state_code(dom, init): (0, 0)}
    queue: deque[KState] = deque([init])
    while queue:
        st = queue.popleft()
        c = state_code(dom, st)
        for i, req in enumerate(candidates(dom, st)):
            out = step_fn(dom, st, req)
            if out.refusal is None:
                nc = state_code(dom, out.state)
                if nc not in found:
                    found[nc] = (c, i)
                    queue.append(out.state)
    return found


def build_table(dom: Domain = TABLE_DOMAIN, step_fn: StepFn | None = None) -> Table:
    """The table of a domain, computed by the reference (``step_fn``, default its ``step``).

    Memoized: the table is immutable and a pure function of its arguments, and computing it
    steps the reference through every case (4.7 M for the table's domain, ~5 s)."""
    return _build_table(dom, step_fn or step)


@functools.cache
def _build_table(dom: Domain, step_fn: StepFn) -> Table:
    alpha = alphabet(dom)
    group_len = (dom.holders + 1) ** 2 * (dom.holders + 3) + 2 * (dom.holders + 1)
    n_groups = (dom.blocks + 1) * (dom.max_epoch + 1) * (dom.max_gen + 1) * dom.max_seq
    if n_groups * group_len > len(alpha):
        raise KernelRefError(f"alphabet of {dom} shorter than its groups")
    dictionary: dict[int, int] = {}
    rows: list[TableRow] = []
    found = reachable(dom, step_fn)
    for code in sorted(found):
        st = state_of_code(dom, code)
        if state_code(dom, st) != code:
            raise KernelRefError(f"state code {code} of {dom} does not decode back")
        digits = [result_digit(step_fn(dom, st, req)) for req in alpha]
        groups = 0
        for g in reversed(range(n_groups)):
            entry = _digits(digits[g * group_len:(g + 1) * group_len])
            idx = dictionary.setdefault(entry, len(dictionary))
            groups = groups * _GROUP_RADIX + idx
        if len(dictionary) > _MAX_DICTIONARY:
            raise KernelRefError(f"{dom}: more than {_MAX_DICTIONARY} distinct group digit "
                                 "strings; the row layout holds one base-32 digit per group")
        others = _digits(digits[n_groups * group_len:])
        outs = []
        for req in candidates(dom, st):
            out = step_fn(dom, st, req)
            outs.append(0 if out.refusal is not None else 1 + outcome_code(dom, out))
        parent, via = found[code]
        rows.append(TableRow(code, groups, others, tuple(outs), parent, via))
    listed = sum(1 << c for c in found)
    return Table(dom, listed, state_space(dom), tuple(dictionary), tuple(rows))


def summarize(table: Table) -> TableSummary:
    """The figures of a table."""
    dom = table.domain
    n_alpha = len(alphabet(dom))
    return TableSummary(
        domain=dom,
        states=len(table.rows),
        alphabet=n_alpha,
        cases=len(table.rows) * n_alpha,
        candidate_cases=sum(len(r.outs) for r in table.rows),
        accepted=sum(1 for r in table.rows for o in r.outs if o),
        dictionary=len(table.dictionary),
    )


def table_summary(dom: Domain = TABLE_DOMAIN, step_fn: StepFn | None = None) -> TableSummary:
    """The figures of the domain's table."""
    return summarize(build_table(dom, step_fn))


def _hex(n: int) -> str:
    return f"0x{n:x}" if n >= 16 else str(n)


def chunks(table: Table) -> list[tuple[int, int, tuple[TableRow, ...]]]:
    """The table cut into ranges of codes ``(first, count, rows)`` covering ``0..codes``, each
    holding at most :data:`ROWS_PER_CHUNK` rows."""
    out: list[tuple[int, int, tuple[TableRow, ...]]] = []
    start, i = 0, 0
    rows = table.rows
    while i < len(rows):
        j = min(i + ROWS_PER_CHUNK, len(rows))
        end = table.codes if j == len(rows) else rows[j].code
        out.append((start, end - start, rows[i:j]))
        start, i = end, j
    return out


def lean_row(r: TableRow) -> str:
    """A row in Lean syntax."""
    outs = ", ".join(_hex(o) for o in r.outs)
    return f"⟨{r.code}, {_hex(r.groups)}, {_hex(r.others)}, [{outs}], {r.parent}, {r.via}⟩"


def chunk_proof(table: Table) -> tuple[list[tuple[int, int, tuple[TableRow, ...]]],
                                        Callable[[int], str], str]:
    """The table's chunks, the Lean text of the rows from chunk ``k`` on, and the proof of
    ``checkCodes`` over all codes from the chunk theorems ``chunk_k``."""
    parts = chunks(table)

    def appended(k: int) -> str:
        """``rows_k ++ (rows_k+1 ++ (... rows_last))``: the chunks from ``k`` on."""
        return " ++ (".join(f"rows_{j}" for j in range(k, len(parts))) \
            + ")" * (len(parts) - k - 1)

    # checkCodes_append n₁ n₂ c rows₁ rows₂ chunk₁ chunk₂, nested right to left
    proof = f"chunk_{len(parts) - 1}"
    for k in reversed(range(len(parts) - 1)):
        first, count, _ = parts[k]
        rest = table.codes - first - count
        proof = (f"(checkCodes_append {count} {rest} {first} rows_{k} ({appended(k + 1)})\n"
                 f"      chunk_{k} {proof})")
    return parts, appended, proof


def render(table: Table) -> str:
    """The Lean text of a table (deterministic), from ``templates/Table.lean.j2``."""
    parts, appended, proof = chunk_proof(table)
    return render_template(
        TEMPLATES, "Table.lean.j2", header_command=TABLE_HEADER_COMMAND, dom=table.domain,
        s=summarize(table), table=table, chunks=parts, hex=_hex, lean_row=lean_row,
        appended=appended, chunks_proof=proof)


def generate_table(dom: Domain = TABLE_DOMAIN, step_fn: StepFn | None = None) -> str:
    """The Lean text of the domain's table, computed by the reference."""
    return render(build_table(dom, step_fn))
