"""The native cross-checks: where a native Lean exists, ask it (``#print axioms``) and list where
it disagrees with the ``.olean`` reader, and replay every module through Lean's kernel with
``leanchecker`` (shipped with the toolchain since lean4checker moved into Lean)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pytools.lean.olean import Name

from .policy import ALLOWED_AXIOMS
from .records import AuditError, AuditReport

_PRINT_AXIOMS_RE = re.compile(
    r"'(?P<name>[^']+)' (?:depends on axioms: \[(?P<axs>[^\]]*)\]|"
    r"does not depend on any axioms)", re.S)


def parse_print_axioms(output: str) -> dict[str, tuple[str, ...]]:
    """Parse the messages of ``#print axioms`` (plain or ``--json`` output)."""
    texts = []
    for line in output.splitlines():
        s = line.strip()
        if s.startswith("{"):
            try:
                texts.append(str(json.loads(s).get("data", "")))
                continue
            except ValueError:
                pass
        texts.append(line)
    text = "\n".join(texts)
    out: dict[str, tuple[str, ...]] = {}
    for m in _PRINT_AXIOMS_RE.finditer(text):
        axs = m.group("axs")
        names = [] if axs is None else [a.strip() for a in axs.replace("\n", " ").split(",")]
        out[m.group("name")] = tuple(sorted(a for a in names if a))
    return out


def native_axioms(lean_cmd: Sequence[str], modules: Sequence[str], theorems: Sequence[str], *,
                  cwd: Path | None = None, env: dict[str, str] | None = None,
                  timeout: float = 1800) -> dict[str, tuple[str, ...]]:
    """Ask a native Lean: ``#print axioms`` for each theorem, in one file importing
    ``modules`` (a plain, non-``module`` file, so the command is allowed). ``lean_cmd`` is the
    command prefix, e.g. ``["lake", "env", "lean"]`` or ``["lean"]``; the file path is
    appended. Returns theorem -> sorted axiom names. Raises :class:`AuditError` if Lean fails
    or a theorem is missing from its answer."""
    lines = [f"import {m}" for m in modules] + [""]
    lines += [f"#print axioms {_quote_name(t)}" for t in theorems]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "AuditNative.lean"
        src.write_text("\n".join(lines) + "\n")
        try:
            proc = subprocess.run([*lean_cmd, str(src)], capture_output=True, text=True,
                                  cwd=cwd, env=env, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AuditError(f"native Lean {' '.join(lean_cmd)} failed: {exc}") from exc
    out = parse_print_axioms(proc.stdout + "\n" + proc.stderr)
    missing = [t for t in theorems if t not in out]
    if proc.returncode != 0 or missing:
        raise AuditError(f"native Lean exited {proc.returncode}; no answer for {missing[:5]}; "
                         f"output: {(proc.stdout + proc.stderr)[-800:]}")
    return out


def _quote_name(name: str) -> str:
    """The name as Lean source writes it: its printed text (:func:`~pytools.lean.olean.name_text`,
    ``«»`` where a component needs it)."""
    return str(Name.parse(name))


def compare_with_native(report: AuditReport,
                        native: dict[str, tuple[str, ...]]) -> list[str]:
    """Disagreements between this reader and native ``#print axioms``, one line each.

    A disagreement: a theorem native Lean answered for that the report lacks; an axiom this
    reader found that Lean did not; an axiom Lean found that this reader did not, unless it is
    an allowed axiom *and* the declaration reaches body-absent library constants
    (``trusted_deps > 0``), whose proofs this reader cannot see."""
    decls = report.by_name()
    out: list[str] = []
    for name in sorted(native):
        d = decls.get(name)
        if d is None:
            out.append(f"{name}: answered by native Lean but not in the audit report")
            continue
        ours, theirs = set(d.axioms), set(native[name])
        for ax in sorted(ours - theirs):
            out.append(f"{name}: reader found {ax}, native Lean did not")
        for ax in sorted(theirs - ours):
            if ax in ALLOWED_AXIOMS and d.trusted_deps > 0:
                continue
            out.append(f"{name}: native Lean found {ax}, reader did not")
    return out



def find_leanchecker(lean: str | None) -> str | None:
    """The ``leanchecker`` next to a native ``lean`` (same toolchain), else on PATH."""
    if lean:
        beside = Path(lean).with_name("leanchecker")
        if beside.is_file():
            return str(beside)
    return shutil.which("leanchecker")


def run_leanchecker(checker_cmd: Sequence[str], modules: Sequence[str], *,
                    cwd: Path | None = None, env: dict[str, str] | None = None,
                    timeout: float = 3600) -> list[str]:
    """Replay each module's declarations through Lean's kernel: ``CMD MODULE`` per module
    (``CMD`` is e.g. ``["lake", "env", "leanchecker"]``, or ``[..., "--fresh"]`` to replay
    the imports too). Returns one problem line per module the checker did not accept (an
    exit status other than 0, or a crash), naming the module and the checker's last words;
    an empty list means the kernel accepted every declaration again. Raises
    :class:`AuditError` if the checker cannot be started at all."""
    problems = []
    for module in modules:
        try:
            proc = subprocess.run([*checker_cmd, module], capture_output=True, text=True,
                                  cwd=cwd, env=env, timeout=timeout, errors="replace")
        except FileNotFoundError as exc:
            raise AuditError(f"leanchecker {' '.join(checker_cmd)} cannot run: {exc}") from exc
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"leanchecker {module}: did not finish: {exc}")
            continue
        if proc.returncode != 0:
            tail = " ".join((proc.stdout + proc.stderr).split())[-400:]
            problems.append(f"leanchecker {module}: the kernel rejected a replayed declaration "
                            f"(exit {proc.returncode}): {tail}")
    return problems
