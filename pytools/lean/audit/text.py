"""The printed statements, elaborated back by Lean: the check module and what it is compared to.

Lean is the authority on what a printed statement means. Certify writes one *check module*
(in the build workspace, never in the library): ``module``, ``public import`` of the library's
root, and for every user-facing theorem of the library ``theorem StatementCheck.t_<i> :
<printed statement> := @<theorem>``. Lean compiles it; the compiled module is read back
(:mod:`pytools.lean.olean`) and each check theorem's *type* is compared with the original
theorem's type as terms (:func:`shape_sha256`: the statement hash, universe parameters
numbered by first occurrence). ``@name`` alone would not do: elaboration accepts a type up
to definitional unfolding, so ``True`` could stand for anything that reduces to it. A
printed statement that does not parse or elaborate, or that elaborates to another term, is
the theorem's ``statement-text`` finding.

This module is pure (text in, records out); :mod:`pytools.lean.statement_check` runs Lean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jinja2

from pytools.lean.olean import Expr, Level

from .printer import escape_name
from .statements import statement_sha256

#: The check module's name (a module of the build workspace, outside every library root).
CHECK_MODULE = "StatementCheck"
#: The namespace of its theorems (``StatementCheck.t_0``...).
CHECK_NAMESPACE = "StatementCheck"
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


@dataclass(frozen=True)
class Target:
    """One theorem to check: its name, module, printed statement, the shape hash of its type
    (:func:`shape_sha256`) and its universe parameters. ``label``: what the check reports
    it as (default: its name; a test checks several texts of one theorem)."""

    name: str
    module: str
    text: str
    shape: str
    level_params: tuple[str, ...] = ()
    label: str = ""

    @property
    def key(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class CheckModule:
    """The generated check module: its text and, for each target, the check theorem's name
    and its lines (first, last; 1-based) in the text."""

    text: str
    names: tuple[str, ...]
    lines: tuple[tuple[int, int], ...]

    def target_at(self, line: int) -> int | None:
        """The index of the target whose check theorem holds ``line``, or None."""
        for i, (first, last) in enumerate(self.lines):
            if first <= line <= last:
                return i
        return None


def _level_order(e: Expr) -> list[str]:
    """Universe parameters of ``e`` in order of first occurrence (a pre-order walk)."""
    out: dict[str, None] = {}
    seen: set[int] = set()

    def level(lv: Level) -> None:
        if lv.kind == "param":
            out.setdefault(lv.args[0], None)
        elif lv.kind in ("succ", "max", "imax"):
            for a in lv.args:
                level(a)

    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if x.kind == "sort":
            level(x.args[0])
        elif x.kind == "const":
            for lv in x.args[1]:
                level(lv)
        else:
            subs = [a for a in x.args if isinstance(a, Expr)]
            stack.extend(reversed(subs))
    return list(out)


def shape_sha256(e: Expr) -> str:
    """The statement hash of ``e`` (:func:`.statements.statement_sha256`: up to binder names
    and ``mdata``) with universe parameters numbered by first occurrence, so that a restated
    theorem whose universes Lean named ``u_1``... in another order compares equal."""
    return statement_sha256(e, _level_order(e))


@cache
def _environment(folder: Path) -> jinja2.Environment:
    # the settings of pytools.results.generated (the project's generated Lean text)
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder), autoescape=False,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)


def render(root_module: str, targets: Sequence[Target]) -> CheckModule:
    """The check module for ``targets``, importing ``root_module`` (the library's root)."""
    universes = sorted({u for t in targets for u in t.level_params})
    checks = [{"name": f"t_{i}", "text": t.text, "target": escape_name(t.name)}
              for i, t in enumerate(targets)]
    text = _environment(TEMPLATES).get_template("StatementCheck.lean.j2").render(
        root=root_module, namespace=CHECK_NAMESPACE, universes=universes, checks=checks)
    lines = text.splitlines()
    starts = {}
    for n, line in enumerate(lines, start=1):
        if line.startswith("theorem t_"):
            starts[line.split()[1]] = n
    spans = []
    for i, t in enumerate(targets):
        first = starts[f"t_{i}"]
        spans.append((first, first + 2 + t.text.count("\n")))
    return CheckModule(text, tuple(f"{CHECK_NAMESPACE}.t_{i}" for i in range(len(targets))),
                       tuple(spans))


def compare(targets: Sequence[Target], module: CheckModule,
            errors: Iterable[tuple[int, str]], elaborated: Mapping[str, Expr] | None
            ) -> dict[str, str]:
    """Each target (by :attr:`Target.key`) whose printed statement is not what it proves ->
    why: Lean's first error
    inside its check theorem (``errors``: (line, message)), else the check theorem missing
    from the compiled module or its type another term than the theorem's. ``elaborated``:
    the compiled check theorems' types by name (None: Lean wrote no module)."""
    out: dict[str, str] = {}
    for line, message in errors:
        i = module.target_at(line)
        if i is None:
            continue
        first = message.strip().splitlines()[0] if message.strip() else "error"
        out.setdefault(targets[i].key, f"does not elaborate: {first}")
    if elaborated is None:
        return out
    for i, t in enumerate(targets):
        if t.key in out:
            continue
        ty = elaborated.get(module.names[i])
        if ty is None:
            out[t.key] = "not elaborated (its check theorem is missing)"
        elif shape_sha256(ty) != t.shape:
            out[t.key] = "elaborates to another statement than the theorem's"
    return out
