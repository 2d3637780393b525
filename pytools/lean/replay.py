"""Kernel replay of the compiled library: every declaration of every module read back from its
``.olean`` files and sent to Lean's kernel again, by the driver ``KernelReplay.lean`` under
``lean --run`` (one process for all modules, and a fresh one from a module a process died
on: :func:`run_in_batches`).

It runs on the registry WebAssembly Lean, which ships no ``leanchecker`` (measured,
docs/toolchain.md): the driver uses only what that build can run. The modules' files are
copied with the driver into a fresh folder the WebAssembly Lean can see (under the toolchain
cache), so the replay reads exactly the bytes copied at the start, and nothing in the project
is touched.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .toolchain import Toolchain, cache_root

#: The driver, run with ``lean --run DRIVER OLEAN...``.
DRIVER = Path(__file__).with_name("KernelReplay.lean")
#: The parts of a compiled module the driver reads (the last is the full kernel view).
PART_SUFFIXES = (".olean", ".olean.server", ".olean.private")
#: Wall-clock limit of one replay of the whole library, in seconds.
REPLAY_TIMEOUT_S = 3600.0

_LINE_RE = re.compile(r"^(?P<verdict>replayed|REJECTED) (?P<path>\S+?\.olean): (?P<text>.*)$")


class ReplayError(RuntimeError):
    """The replay could not be run at all (a module's files are missing)."""


@dataclass(frozen=True)
class ReplayOutcome:
    """What the kernel replay said: one problem line per module it did not accept (empty: it
    accepted every declaration of every module), the driver's line for each module it
    accepted, and the wall time."""

    problems: tuple[str, ...]
    accepted: tuple[str, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.problems


def module_olean(build_dir: Path, module: str) -> Path:
    """The ``.olean`` of ``module`` (``A.B`` -> ``build_dir/A/B.olean``)."""
    return build_dir.joinpath(*module.split(".")).with_suffix(".olean")


def stage(build_dir: Path, modules: Sequence[str], folder: Path) -> dict[str, str]:
    """Copy the driver and every part of every module of ``build_dir`` into ``folder``
    (``folder/lib/...``), keeping the layout; returns staged ``.olean`` path -> module.
    Raises :class:`ReplayError` naming a module whose ``.olean`` is missing."""
    shutil.copyfile(DRIVER, folder / DRIVER.name)
    lib = folder / "lib"
    staged: dict[str, str] = {}
    for file in sorted(build_dir.rglob("*.olean*")):
        if file.is_file() and file.name.endswith(PART_SUFFIXES):
            target = lib / file.relative_to(build_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)
    for module in modules:
        if not module_olean(build_dir, module).is_file():
            raise ReplayError(f"{module_olean(build_dir, module)}: missing; build the library "
                              "before the kernel replay")
        staged[str(module_olean(lib, module))] = module
    return staged


def read_verdicts(output: str, staged: dict[str, str]) -> dict[str, tuple[str, str]]:
    """The driver's verdict on each staged module it reached: module -> ("replayed" or
    "REJECTED", its text). Lines naming a path that was not staged are ignored."""
    verdicts: dict[str, tuple[str, str]] = {}
    for line in output.splitlines():
        match = _LINE_RE.match(line.strip())
        if match and match.group("path") in staged:
            verdicts[staged[match.group("path")]] = (match.group("verdict"), match.group("text"))
    return verdicts


def _tail(output: str) -> str:
    return " ".join(line for line in output.splitlines()[-12:]
                    if not line.startswith("[DEBUG"))[-400:]


def run_in_batches(run: Callable[[list[str]], str], staged: dict[str, str]
                   ) -> tuple[list[str], list[str]]:
    """Replay every staged module, in as few driver processes as crashes allow: ``run``
    replays the given staged paths in one process and returns its output. A module without a
    verdict (the process died on it: a crash, a timeout, the WebAssembly heap full) is tried
    again first in a fresh process; if it dies there too (or died there already) it is a
    problem, and the rest go on.
    Returns (problems, accepted lines), in the staged order."""
    verdicts: dict[str, tuple[str, str]] = {}
    pending = list(staged)
    while pending:
        output = run(pending)
        verdicts.update(read_verdicts(output, {p: staged[p] for p in pending}))
        rest = [p for p in pending if staged[p] not in verdicts]
        if rest and rest[0] == pending[0]:  # died on its first module: no retry left
            verdicts[staged[rest[0]]] = ("", "no verdict from the driver, though first in a "
                                             f"fresh process: {_tail(output)}")
            rest = rest[1:]
        pending = rest
    problems, accepted = [], []
    for module in staged.values():
        verdict, text = verdicts[module]
        if verdict == "replayed":
            accepted.append(f"{module}: {text}")
        else:
            problems.append(f"kernel-replay {module}: {text}")
    return problems, accepted


def replay_modules(toolchain: Toolchain, build_dir: Path, modules: Sequence[str], *,
                   timeout: float = REPLAY_TIMEOUT_S) -> ReplayOutcome:
    """Replay ``modules`` (compiled into ``build_dir``) through the kernel of ``toolchain``.
    A module the kernel rejects, or that gets no verdict even alone in a fresh process, is a
    problem line naming it. Raises :class:`ReplayError` if a module's ``.olean`` is missing,
    and what :meth:`Toolchain.run_lean` raises (the registry Lean run without its rewrites)."""
    base = cache_root() if toolchain.kind == "wasm" else None
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pytools-replay-", dir=base) as tmp:
        folder = Path(tmp)
        staged = stage(build_dir, modules, folder)

        def run(paths: list[str]) -> str:
            args = ["--run", str(folder / DRIVER.name), *paths]
            try:
                proc = toolchain.run_lean(args, [folder / "lib"], cwd=folder, timeout=timeout)
            except OSError as exc:
                return f"could not run: {exc}"
            except subprocess.TimeoutExpired:
                return f"did not finish in {timeout:.0f} s"
            return proc.stdout + "\n" + proc.stderr

        problems, accepted = run_in_batches(run, staged)
    return ReplayOutcome(tuple(problems), tuple(accepted), time.monotonic() - start)
