"""Kernel replay of the compiled library: every declaration of every module read back from its
``.olean`` files and sent to Lean's kernel again, by the driver ``KernelReplay.lean`` under
``lean --run`` (one process per worker, and a fresh one from a module a process died on:
:func:`run_in_batches`; the modules are shared among ``workers`` processes by their expected
cost, :func:`share_out`).

A module the kernel accepted is remembered in the build folder (:data:`ACCEPTED_FILE`), keyed
by :func:`replay_key`: the SHA-256 of the driver, the toolchain and the bytes of every compiled
part of the module and of every library module it imports, directly or not. A later replay of
the very same bytes by the same kernel reuses that verdict instead of running it again (a
fresh clone has no such file and replays everything; delete the file to force a full replay).
A rejection is never remembered.

It runs on the registry WebAssembly Lean, which ships no ``leanchecker`` (measured,
docs/toolchain.md): the driver uses only what that build can run. The modules' files are
copied with the driver into a fresh folder the WebAssembly Lean can see (under the toolchain
cache), so the replay reads exactly the bytes copied at the start, and nothing in the project
is touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pytools.files import atomic_write_text

from .olean.module import Module
from .olean.region import OleanError
from .toolchain import PRELOAD, Toolchain, cache_root

#: The driver, run with ``lean --run DRIVER OLEAN...``.
DRIVER = Path(__file__).with_name("KernelReplay.lean")
#: The parts of a compiled module the driver reads (the last is the full kernel view).
PART_SUFFIXES = (".olean", ".olean.server", ".olean.private")
#: Wall-clock limit of one replay of the whole library, in seconds.
REPLAY_TIMEOUT_S = 3600.0
#: Resident memory one driver process may reach on the whole library, in GB (measured 14.9 GB
#: on the registry Lean: V8's code and heaps beside the 4 GiB WebAssembly heap, which never
#: shrinks); the default number of processes keeps within the machine's memory.
REPLAY_PROCESS_GB = 16
#: The build folder's memory of accepted replays: module -> key, the driver's line, seconds.
ACCEPTED_FILE = "pytools-replay.json"
_ACCEPTED_FORMAT = 1

_LINE_RE = re.compile(r"^(?P<verdict>replayed|REJECTED) (?P<path>\S+?\.olean): (?P<text>.*)$")


class ReplayError(RuntimeError):
    """The replay could not be run at all (a module's files are missing)."""


@dataclass(frozen=True)
class ReplayOutcome:
    """What the kernel replay said: one problem line per module it did not accept (empty: it
    accepted every declaration of every module), the driver's line for each module it
    accepted (now or, for ``reused``, in an earlier replay of the same bytes), and the wall
    time."""

    problems: tuple[str, ...]
    accepted: tuple[str, ...]
    seconds: float
    reused: tuple[str, ...] = ()  # modules whose identical bytes the kernel accepted before

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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def module_parts(build_dir: Path, module: str) -> list[Path]:
    """The compiled parts of ``module`` in ``build_dir`` that exist (the ``.olean`` first)."""
    olean = module_olean(build_dir, module)
    return [p for p in (olean.with_name(olean.name + s[len(".olean"):]) for s in PART_SUFFIXES)
            if p.is_file()]


def import_closure(build_dir: Path, module: str) -> list[str]:
    """``module`` and every module of ``build_dir`` it imports, directly or not, as recorded
    in the ``.olean`` files themselves (imports with no ``.olean`` there come from the core
    library, which the toolchain's identity stands for). Sorted."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            imports = Module(module_olean(build_dir, name), parts="olean").imports()
        except OleanError as exc:
            raise ReplayError(f"{module_olean(build_dir, name)}: unreadable: {exc}") from exc
        todo += [str(m) for m in imports if module_olean(build_dir, str(m)).is_file()]
    return sorted(seen)


def replay_key(toolchain: Toolchain, build_dir: Path, module: str) -> str:
    """What a replay verdict on ``module`` depends on, hashed: the driver, the preload that
    runs the registry Lean, the toolchain (kind, version, commit, and its core library's
    folder: for the registry build, a folder named by the digest of its unpacked tree), and the
    bytes of every compiled part of the module and of its library imports. No path of the
    checkout is in it, so a clone that copies the build folder reuses its verdicts."""
    digest = hashlib.sha256()
    fixed = {"driver": _sha256(DRIVER), "preload": _sha256(PRELOAD) if PRELOAD.is_file() else "",
             "toolchain": toolchain.identity(), "core": str(toolchain.lib_dir),
             "module": module}
    digest.update(json.dumps(fixed, sort_keys=True).encode())
    for name in import_closure(build_dir, module):
        for part in module_parts(build_dir, name):
            digest.update(f"\n{part.relative_to(build_dir)} {_sha256(part)}".encode())
    return digest.hexdigest()


def load_accepted(build_dir: Path) -> dict[str, dict[str, object]]:
    """The remembered accepted replays (empty when the file is absent or not ours)."""
    try:
        data = json.loads((build_dir / ACCEPTED_FILE).read_text(encoding="utf-8"))
        if data.get("format") == _ACCEPTED_FORMAT and isinstance(data.get("modules"), dict):
            return {k: v for k, v in data["modules"].items() if isinstance(v, dict)}
    except (OSError, ValueError, AttributeError):
        pass
    return {}


def share_out(modules: Sequence[str], weight: Callable[[str], float], workers: int
              ) -> list[list[str]]:
    """``modules`` shared among at most ``workers`` groups, heaviest first to the lightest
    group (so one slow module does not queue behind the others); each group keeps the given
    order. Empty groups are dropped."""
    groups: list[list[str]] = [[] for _ in range(max(1, workers))]
    loads = [0.0] * len(groups)
    for module in sorted(modules, key=weight, reverse=True):
        i = loads.index(min(loads))
        groups[i].append(module)
        loads[i] += weight(module)
    order = {m: i for i, m in enumerate(modules)}
    return [sorted(g, key=order.__getitem__) for g in groups if g]


def default_workers(cores: int | None = None, memory_gb: float | None = None) -> int:
    """How many driver processes at once by default: one per core, as many as fit in memory
    at :data:`REPLAY_PROCESS_GB` each, at least one (a 2-core, 24 GB machine: one)."""
    cores = cores or os.cpu_count() or 1
    if memory_gb is None:
        try:
            memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        except (ValueError, OSError):
            memory_gb = REPLAY_PROCESS_GB
    return max(1, min(cores, int(memory_gb // REPLAY_PROCESS_GB)))


def replay_modules(toolchain: Toolchain, build_dir: Path, modules: Sequence[str], *,
                   timeout: float = REPLAY_TIMEOUT_S, workers: int = 1,
                   reuse: bool = True) -> ReplayOutcome:
    """Replay ``modules`` (compiled into ``build_dir``) through the kernel of ``toolchain``,
    in up to ``workers`` processes at once, skipping (with ``reuse``) each module whose
    :func:`replay_key` the kernel accepted before. A module the kernel rejects, or that gets
    no verdict even alone in a fresh process, is a problem line naming it. Raises
    :class:`ReplayError` if a module's ``.olean`` is missing, and what
    :meth:`Toolchain.run_lean` raises (the registry Lean run without its rewrites)."""
    start = time.monotonic()
    for module in modules:
        if not module_olean(build_dir, module).is_file():
            raise ReplayError(f"{module_olean(build_dir, module)}: missing; build the library "
                              "before the kernel replay")
    keys = {m: replay_key(toolchain, build_dir, m) for m in modules}
    remembered = load_accepted(build_dir)
    reused = [m for m in modules
              if reuse and remembered.get(m, {}).get("key") == keys[m]]
    pending = [m for m in modules if m not in reused]
    problems: list[str] = []
    fresh: dict[str, tuple[str, float]] = {}
    if pending:
        def weight(m: str) -> float:
            seconds = remembered.get(m, {}).get("seconds")
            return float(seconds) if isinstance(seconds, (int, float)) else sum(
                p.stat().st_size for p in module_parts(build_dir, m)) / 1e6
        groups = share_out(pending, weight, workers)
        with ThreadPoolExecutor(max_workers=len(groups)) as pool:
            outcomes = list(pool.map(
                lambda g: _replay_group(toolchain, build_dir, g, timeout), groups))
        for group_problems, group_accepted in outcomes:
            problems += group_problems
            fresh.update(group_accepted)
    lines = {m: str(remembered[m].get("line", "")) + " (same bytes accepted before)"
             for m in reused}
    lines.update({m: line for m, (line, _) in fresh.items()})
    kept = {m: remembered[m] for m in reused}
    kept.update({m: {"key": keys[m], "line": line, "seconds": round(sec, 1)}
                 for m, (line, sec) in fresh.items()})
    others = {m: v for m, v in remembered.items() if m not in modules}
    atomic_write_text(build_dir / ACCEPTED_FILE, json.dumps(
        {"format": _ACCEPTED_FORMAT, "modules": dict(sorted({**others, **kept}.items()))},
        indent=1, sort_keys=True) + "\n")
    accepted = tuple(f"{m}: {lines[m]}" for m in modules if m in lines)
    return ReplayOutcome(tuple(problems), accepted, time.monotonic() - start, tuple(reused))


def _replay_group(toolchain: Toolchain, build_dir: Path, modules: list[str], timeout: float
                  ) -> tuple[list[str], dict[str, tuple[str, float]]]:
    """Replay ``modules`` in driver processes of their own (staged in a fresh folder):
    (problem lines, module -> (the driver's line, seconds) for each module accepted)."""
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
    seconds = (time.monotonic() - start) / max(1, len(modules))
    done: dict[str, tuple[str, float]] = {}
    for line in accepted:
        module, text = line.split(": ", 1)
        done[module] = (text, _driver_seconds(text, seconds))
    return problems, done


def _driver_seconds(text: str, fallback: float) -> float:
    """The import and kernel milliseconds the driver reported, in seconds."""
    found = re.findall(r"(?:import|kernel) (\d+) ms", text)
    return sum(int(ms) for ms in found) / 1000 if found else fallback
