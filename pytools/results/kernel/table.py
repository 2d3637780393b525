"""The exhaustive agreement table: every well-formed state of a finite domain and every request,
with the reference's answer, written into ``Proofs/Kernel/Table.lean`` (deterministic bytes)
where Lean's kernel re-runs ``step`` on every case; and reading the committed table back."""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytools.paths import sha256_file

from .model import (
    REFUSALS,
    Domain,
    Holding,
    KernelRefError,
    KState,
    Outcome,
    Request,
    StepFn,
    TicketRec,
    domain_states,
    encode_state,
    requests,
    step,
)
from .workflows import WORKFLOWS_JSON, WorkflowRun, load_workflows, run_workflow

#: Committed files, relative to the repository root.
TABLE_LEAN = Path("Proofs/Kernel/Table.lean")
MODEL_LEAN = Path("Proofs/Kernel/Model.lean")

#: The digit that marks an accepted request in a table row.
OK_DIGIT = 15
#: Rows per generated Lean chunk (one ``decide +kernel`` theorem per chunk).
ROWS_PER_CHUNK = 80

#: The domain of the exhaustive Lean agreement check (smaller than the target 3/2/3/3: the
#: registry WebAssembly Lean's kernel must check every case within a module's compile budget).
TABLE_DOMAIN = Domain(holders=3, tickets=2, max_epoch=1, max_gen=2)
#: The tiny domain of the self-test carried verbatim by ``Proofs/Kernel/Model.lean``.
TINY_DOMAIN = Domain(holders=2, tickets=1, max_epoch=0, max_gen=1)


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
    w("Generated by `python -m pytools kernel lean-table`; do not edit by hand.")
    w("The Python reference `pytools/results/kernel/` computed, for every well-formed state of the")
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
