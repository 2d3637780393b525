"""The certified finite check: every reachable state of one finite domain, with the reference's
answer to every request of the domain's alphabet, written into ``Proofs/Kernel/Table.lean``
(deterministic bytes), where Lean's kernel runs ``checkTable`` (``Proofs/Kernel/Check.lean``)
and so proves that the listed states are exactly the reachable ones and that Lean's ``step``
agrees with the reference on every case.

Row layout (the one ``Check.lean`` documents): the state's code; per token group (the 98
requests presenting one token identity, in alphabet order) the index, in a dictionary of digit
strings, of the reference's digits for the group (hex digit ``i`` for group ``i``); the digits
of the requests after the groups; per candidate the outcome code (0 refused, else
``1 + outcome_code``); a parent state's code and the index of the parent's candidate that
leads here (the first discovery in breadth-first order; every state-changing request raises
the code, so the parent's code is smaller).
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass
from pathlib import Path

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
#: The command that regenerates it.
TABLE_COMMAND = "python -m pytools kernel lean-table"

#: The domain of the certified finite check: 3 holders, 1 block, epochs 0..3, generations
#: 0..3, 5 tokens per block, epoch and generation (a block can be allocated and transferred
#: twice, each transfer settled, per epoch and generation).
TABLE_DOMAIN = Domain(holders=3, blocks=1, max_epoch=3, max_gen=3, max_seq=5)

#: A row's group indices are hex digits: at most 16 distinct group digit strings.
_MAX_DICTIONARY = 16

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
    group_len = (dom.holders + 1) ** 2 * (dom.holders + 3) + 2
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
            groups = groups * 16 + idx
        if len(dictionary) > _MAX_DICTIONARY:
            raise KernelRefError(f"{dom}: more than {_MAX_DICTIONARY} distinct group digit "
                                 "strings; the row layout holds one hex digit per group")
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


def render(table: Table) -> str:
    """The Lean text of a table (deterministic)."""
    dom = table.domain
    s = summarize(table)
    out = [
        "module",
        "",
        "public import Proofs.Kernel.Check",
        "",
        "-- GENERATED FILE, do not edit. Regenerate with",
        f"--   {TABLE_COMMAND}",
        "-- (rows run past 100 columns)",
        "",
        "/-!",
        "# Single-owner state movement: the certified finite check",
        "",
        f"The domain: {dom.holders} holders, {dom.blocks} block, epochs 0..{dom.max_epoch}, "
        f"generations 0..{dom.max_gen},",
        f"{dom.max_seq} tokens per block, epoch and generation. The Python reference "
        "(`pytools.results.kernel`)",
        f"found {s.states:,} reachable kernel states; each has a row with the reference's "
        f"answer to all {s.alphabet:,}",
        f"requests of the domain's alphabet ({s.cases:,} cases) and the whole outcome of "
        f"each of its candidates",
        f"({s.candidate_cases:,} cases, {s.accepted:,} accepted). `table_passes` runs "
        "`checkTable` in Lean's kernel, so:",
        "",
        "* `reachable_iff_listed`: the kernel states reachable by accepted requests are exactly "
        "the",
        "  listed ones (the table is a certified model check of the whole reachable set);",
        "* `reachable_agrees_reference`: in every reachable state, Lean's `step` gives the "
        "reference's",
        "  answer to every request of the alphabet, and its whole outcome to every candidate.",
        "-/",
        "",
        "@[expose] public section",
        "",
        "-- Measured: with parallel elaboration the registry Lean holds every chunk's kernel check",
        "-- at once; one at a time bounds the memory by the largest chunk.",
        "set_option Elab.async false",
        "",
        "namespace KVCache.Kernel.Table",
        "",
        f"/-- The domain: {dom.holders} holders, {dom.blocks} block, epochs 0..{dom.max_epoch}, "
        f"generations 0..{dom.max_gen}, {dom.max_seq} tokens",
        "per block, epoch and generation. -/",
        f"def cfg : Config := ⟨{dom.holders}, {dom.blocks}, {dom.max_epoch}, {dom.max_gen}, "
        f"{dom.max_seq}⟩",
        "",
        "/-- The number of state codes of the domain. -/",
        f"def codes : Nat := {table.codes}",
        "",
        f"/-- The listed states: bit `c` set for the code `c` of each of the {s.states} "
        "reachable states. -/",
        f"def listed : Nat := {_hex(table.listed)}",
        "",
        "/-- The reference's digit strings of token groups (`Row.groups` indexes them). -/",
        "def dict : List Nat := [",
    ]
    out += [f"  {_hex(d)}{',' if i + 1 < len(table.dictionary) else ''}"
            for i, d in enumerate(table.dictionary)]
    out += [
        "]",
        "",
    ]
    parts = chunks(table)
    for k, (first, count, rows) in enumerate(parts):
        out += [
            "",
            f"/-- The reference's rows for the codes {first}..{first + count - 1}. -/",
            f"def rows_{k} : List Row := [",
        ]
        for i, r in enumerate(rows):
            outs = ", ".join(_hex(o) for o in r.outs)
            sep = "," if i + 1 < len(rows) else ""
            out.append(f"  ⟨{r.code}, {_hex(r.groups)}, {_hex(r.others)}, [{outs}], "
                       f"{r.parent}, {r.via}⟩{sep}")
        out += [
            "]",
            "",
            f"/-- The kernel checks the rows of the codes {first}..{first + count - 1}. -/",
            f"theorem chunk_{k} : checkCodes cfg listed dict {count} {first} rows_{k} = true := by",
            "  decide +kernel",
        ]
    out += [
        "",
        "-- noncomputable: compiling it needs `List.appendTR`, absent from the registry Lean.",
        "/-- The reference's rows, one per listed code, in code order. -/",
        "noncomputable def rows : List Row :=",
        "  " + " ++ (".join(f"rows_{k}" for k in range(len(parts)))
        + ")" * (len(parts) - 1),
        "",
        "/-- **The kernel checks the whole table**: every listed state's answers and candidates' "
        "outcomes",
        "agree with the reference, every accepted candidate leads to a listed state, and every "
        "listed",
        "state has a witness. -/",
        "theorem table_passes : checkTable cfg listed codes dict rows = true :=",
        "  checkTable_of_parts (by decide +kernel) (by decide +kernel) (by decide +kernel)",
    ]
    # checkCodes_append n₁ n₂ c rows₁ rows₂, nested right to left
    expr = f"chunk_{len(parts) - 1}"
    for k in reversed(range(len(parts) - 1)):
        first, count, _ = parts[k]
        rest = table.codes - first - count
        tail = " ++ (".join(f"rows_{j}" for j in range(k + 1, len(parts))) \
            + ")" * (len(parts) - k - 2)
        expr = (f"(checkCodes_append {count} {rest} {first} rows_{k} ({tail})\n"
                f"      chunk_{k} {expr})")
    out += [f"    {expr}", ""]
    out += [
        "/-- **The reachable kernel states of the domain are exactly the listed ones.** -/",
        "theorem reachable_iff_listed (k : Kern) :",
        "    KReach cfg k ↔ Nat.testBit listed (encKern cfg k) = true ∧ "
        "decKern cfg (encKern cfg k) = k :=",
        "  kreach_iff_listed table_passes k",
        "",
        "/-- **In every reachable state of the domain, Lean's `step` agrees with the reference** "
        "on every",
        "request of the alphabet, and on the whole outcome of every candidate. -/",
        "theorem reachable_agrees_reference {k : Kern} (hk : KReach cfg k) :",
        "    ∃ row ∈ rows, row.code = encKern cfg k ∧ answers cfg k = row.expected cfg dict ∧",
        "      (candidates cfg k).map (outCode cfg k) = row.outs :=",
        "  reachable_agrees table_passes hk",
        "",
        "end KVCache.Kernel.Table",
        "",
        "end",
        "",
    ]
    return "\n".join(out)


def generate_table(dom: Domain = TABLE_DOMAIN, step_fn: StepFn | None = None) -> str:
    """The Lean text of the domain's table, computed by the reference."""
    return render(build_table(dom, step_fn))
