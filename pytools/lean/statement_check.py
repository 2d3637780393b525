"""Run the statement-text check: compile the check module of :mod:`.audit.text` with the Lean
that built the library, read it back, and say which printed statements are not what their
theorems prove.

The check module lives in its own folder beside the build (``.lake/build/statement-check/``;
for the WebAssembly Lean, staged under the toolchain cache as the builder stages the
library). When Lean reports errors it writes no module: the theorems whose check theorems
hold the errors are findings, and the module is compiled once more without them so that the
others are still compared as terms.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .audit.records import AuditError
from .audit.text import CHECK_MODULE, Target, compare, render
from .build import BUILD_DIR, Workspace, parse_diagnostics, residual_output
from .olean import Expr, Module, OleanError
from .toolchain import Toolchain, cache_root, is_wasm_visible

#: The check module's folder, relative to the repository root.
CHECK_DIR = Path(".lake/build/statement-check")
CHECK_TIMEOUT_S = 3600


@dataclass(frozen=True)
class CheckRun:
    """What one check did: the failures (:attr:`Target.key` -> why), how many theorems were checked,
    the compiles' seconds (Lean) and the read-back's seconds."""

    failures: dict[str, str]
    checked: int
    compile_seconds: tuple[float, ...]
    read_seconds: float


def _folder(root: Path, toolchain: Toolchain) -> Path:
    """Where the check module is written and compiled (visible to the toolchain's Lean)."""
    folder = root / CHECK_DIR
    if toolchain.kind == "wasm" and not is_wasm_visible(folder):
        key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
        folder = cache_root() / "stage" / key / "statement-check"
    return folder


def _lean_path(root: Path, toolchain: Toolchain) -> Path:
    """The library's build folder as this toolchain's Lean can read it: for the WebAssembly
    Lean, the builder's staging folder, brought up to date with the build folder."""
    ws = Workspace(root, root / BUILD_DIR, toolchain)
    ws.prepare([])
    return ws.out


def _compile(toolchain: Toolchain, folder: Path, lean_path: Path, text: str
             ) -> tuple[list[tuple[int, str]], dict[str, Expr] | None, list[str], float]:
    """Compile ``text`` as the check module: (errors as (line, message), the check theorems'
    types or None when Lean wrote no module, crash lines, seconds)."""
    if folder.exists():
        shutil.rmtree(folder)  # the check module's own folder: only this function writes it
    folder.mkdir(parents=True)
    source = folder / f"{CHECK_MODULE}.lean"
    source.write_text(text, encoding="utf-8")
    olean = folder / "out" / f"{CHECK_MODULE}.olean"
    olean.parent.mkdir()
    args = ["--json", "-R", str(folder), str(source), "-o", str(olean)]
    start = time.monotonic()
    try:
        proc = toolchain.run_lean(args, [lean_path], cwd=folder, timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise AuditError(f"{source}: Lean did not finish the statement check in "
                         f"{CHECK_TIMEOUT_S} s") from exc
    seconds = time.monotonic() - start
    output = proc.stdout + "\n" + proc.stderr
    diags = parse_diagnostics(output, {str(source): source.name})
    errors = [(d.line, d.message) for d in diags if d.severity == "error"]
    if proc.returncode != 0 or errors or not olean.is_file():
        crash = [] if errors else (residual_output(output, text)
                                   or [f"lean exited with code {proc.returncode}"])
        return errors, None, crash, seconds
    m = Module(olean)
    types = {c.name: m.expr(c.type_ptr) for c in m.iter_constants()}
    return errors, types, [], seconds


def check_statements(folder: Path, lean_path: Path, toolchain: Toolchain, root_module: str,
                     targets: Sequence[Target]) -> CheckRun:
    """Elaborate every target's printed statement with ``toolchain`` against the compiled
    library in ``lean_path`` (whose root module is ``root_module``) and compare it with the
    theorem's type; the check module is written in ``folder`` (both visible to that Lean).
    Raises :class:`~.audit.AuditError` naming the check module when Lean crashed (no error
    located in a check theorem, no module written) or timed out."""
    failures: dict[str, str] = {}
    seconds: list[float] = []
    read = 0.0
    todo = list(targets)
    for _ in range(2):
        module = render(root_module, todo)
        errors, types, crash, secs = _compile(toolchain, folder, lean_path, module.text)
        seconds.append(round(secs, 1))
        start = time.monotonic()
        try:
            found = compare(todo, module, errors, types)
        except OleanError as exc:
            raise AuditError(f"{folder / CHECK_MODULE}.olean: {exc}") from exc
        read += time.monotonic() - start
        if crash and not found:
            raise AuditError(f"{folder / CHECK_MODULE}.lean: Lean failed without a located "
                               f"error: {' / '.join(crash[:3])}")
        failures.update(found)
        if types is not None:
            break
        todo = [t for t in todo if t.key not in failures]
        if not todo:
            break
    else:
        for t in todo:
            failures.setdefault(t.key, "not elaborated (the check module did not compile)")
    return CheckRun(failures, len(targets), tuple(seconds), round(read, 2))


def checker(root: Path, toolchain: Toolchain, root_module: str,
            runs: list[CheckRun] | None = None
            ) -> Callable[[Sequence[Target]], dict[str, str]]:
    """A statement check for :func:`pytools.lean.audit.audit_modules`; each run is appended
    to ``runs`` when given (for timings)."""
    def run(targets: Sequence[Target]) -> dict[str, str]:
        result = check_statements(_folder(root, toolchain), _lean_path(root, toolchain),
                                  toolchain, root_module, targets)
        if runs is not None:
            runs.append(result)
        return result.failures
    return run
