"""Build the Lean library: ``lake build`` where lake exists, else our own module builder.

The builder reads the ``import`` header of every module under the library roots, orders
the modules (a cycle or a missing module is an error naming the files), and compiles each
with ``lean -o`` into ``.lake/build/lib/lean`` (the folder lake uses too, so the audit
reads one place in both worlds), as many at once as the jobs setting and the imports
allow. It is incremental: a module is recompiled only when its source, the toolchain, or
the trace of something it imports changed (content hashes, recorded in
``.lake/build/pytools-build.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from pytools.paths import sha256_file

from .modules import (
    LIBRARY_ROOTS,
    Module,
    check_core_imports,
    discover,
    local_imports,
    topological_order,
)
from .toolchain import Toolchain, cache_root, is_wasm_visible

BUILD_DIR = Path(".lake/build/lib/lean")
RECORD_NAME = "pytools-build.json"
OUTPUT_SUFFIXES = (".olean", ".olean.private", ".olean.server", ".ilean", ".ir")
MODULE_TIMEOUT_S = 3600
#: Resident memory of one WebAssembly Lean process (measured ~3.6 GB), for the default jobs.
WASM_PROCESS_GB = 4



# --- diagnostics ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Diagnostic:
    """One message from Lean, located in a project file."""

    file: str
    line: int
    column: int
    severity: str  # "error" | "warning" | "information"
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"


def parse_diagnostics(output: str, path_map: dict[str, str]) -> list[Diagnostic]:
    """Lean's ``--json`` messages from mixed output (the wasm build adds debug lines)."""
    found = []
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(msg, dict) or "severity" not in msg:
            continue
        pos = msg.get("pos") or {}
        file = str(msg.get("fileName", "?"))
        found.append(
            Diagnostic(
                file=path_map.get(file, file),
                line=int(pos.get("line", 0)),
                column=int(pos.get("column", 0)),
                severity=str(msg["severity"]),
                message=str(msg.get("data", "")).rstrip(),
            )
        )
    return found


def residual_output(output: str, source: str) -> list[str]:
    """Lines that are neither debug chatter, JSON messages nor the echoed source.

    The registry build prints ``[DEBUG...]`` lines, its import list and the source file
    itself; what is left explains a crash (e.g. an uncaught exception).
    """
    echoed = set(source.splitlines())
    keep = []
    for line in output.splitlines():
        stripped = line.strip()
        if not stripped or line.startswith(("[DEBUG", "{", "  - /")) or line in echoed:
            continue
        keep.append(line)
    return keep[-20:]


# --- the build record -------------------------------------------------------------------------


@dataclass
class ModuleRecord:
    trace: str  # hash of toolchain + source + the traces of the modules it imports
    outputs: dict[str, str]  # output file (relative to the build dir) -> SHA-256
    seconds: float

    def intact(self, build_dir: Path) -> bool:
        return bool(self.outputs) and all(
            (build_dir / rel).is_file() and sha256_file(build_dir / rel) == digest
            for rel, digest in self.outputs.items()
        )


def load_record(build_dir: Path) -> dict[str, ModuleRecord]:
    path = build_dir / RECORD_NAME
    try:
        data = json.loads(path.read_text())
        return {name: ModuleRecord(**rec) for name, rec in data["modules"].items()}
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return {}


def save_record(build_dir: Path, records: dict[str, ModuleRecord]) -> None:
    path = build_dir / RECORD_NAME
    data = {"modules": {name: vars(rec) for name, rec in sorted(records.items())}}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def module_trace(
    toolchain: Toolchain, source_sha: str, dep_traces: Iterable[tuple[str, str]]
) -> str:
    payload = json.dumps(
        {"toolchain": toolchain.identity(), "source": source_sha, "deps": sorted(dep_traces)},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


# --- compiling one module -----------------------------------------------------------------------


@dataclass
class ModuleOutcome:
    name: str
    ok: bool
    seconds: float
    diagnostics: list[Diagnostic] = field(default_factory=list)
    crash: list[str] = field(default_factory=list)


class Workspace:
    """Where Lean reads sources and writes outputs.

    A native Lean reads the project in place. The WebAssembly Lean sees only /tmp and
    /home, so sources are staged into a per-project folder under the toolchain cache,
    compiled there, and the outputs copied into the project's build folder.
    """

    def __init__(self, root: Path, build_dir: Path, toolchain: Toolchain):
        self.root = root
        self.build_dir = build_dir
        self.staged = toolchain.kind == "wasm" and not all(
            is_wasm_visible(p) for p in (root, build_dir)
        )
        if self.staged:
            key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
            base = cache_root() / "stage" / key
            self.src, self.out = base / "src", base / "out"
        else:
            self.src, self.out = root, build_dir

    def prepare(self, modules: Iterable[Module]) -> None:
        """Mirror sources and existing outputs into the staging folder."""
        self.build_dir.mkdir(parents=True, exist_ok=True)
        if not self.staged:
            return
        self.out.mkdir(parents=True, exist_ok=True)
        for module in modules:
            _copy_if_changed(self.root / module.path, self.src / module.path)
        for file in self.build_dir.rglob("*"):
            if file.is_file() and file.name != RECORD_NAME:
                _copy_if_changed(file, self.out / file.relative_to(self.build_dir))

    def path_map(self, module: Module) -> dict[str, str]:
        return {str(self.src / module.path): str(module.path)}

    def collect(self, module: Module) -> dict[str, str]:
        """Copy a module's outputs into the build folder; return their hashes."""
        stem = module.path.with_suffix("")
        outputs = {}
        for suffix in OUTPUT_SUFFIXES:
            rel = stem.with_name(stem.name + suffix)
            produced = self.out / rel
            if not produced.is_file():
                continue
            if self.staged:
                _copy_if_changed(produced, self.build_dir / rel)
            outputs[str(rel)] = sha256_file(self.build_dir / rel)
        return outputs

    def remove_outputs(self, module: Module) -> None:
        stem = module.path.with_suffix("")
        for base in {self.out, self.build_dir}:
            for suffix in OUTPUT_SUFFIXES:
                (base / stem.with_name(stem.name + suffix)).unlink(missing_ok=True)


def _copy_if_changed(src: Path, dst: Path) -> None:
    same_size = dst.is_file() and dst.stat().st_size == src.stat().st_size
    if same_size and sha256_file(dst) == sha256_file(src):
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def compile_module(toolchain: Toolchain, ws: Workspace, module: Module) -> ModuleOutcome:
    """Run ``lean -o`` on one module whose imports are already built."""
    ws.remove_outputs(module)
    olean = ws.out / module.path.with_suffix(".olean")
    olean.parent.mkdir(parents=True, exist_ok=True)
    args = ["--json", "-R", str(ws.src), str(ws.src / module.path), "-o", str(olean)]
    start = time.monotonic()
    try:
        proc = toolchain.run_lean(args, [ws.out], cwd=ws.src, timeout=MODULE_TIMEOUT_S)
        output, code = proc.stdout + "\n" + proc.stderr, proc.returncode
    except Exception as exc:  # a timeout or a failed start: report, don't crash the build
        output, code = f"error: {exc}", -1
    seconds = time.monotonic() - start
    diags = parse_diagnostics(output, ws.path_map(module))
    errors = [d for d in diags if d.severity == "error"]
    ok = code == 0 and not errors and olean.is_file()
    crash = [] if ok or errors else residual_output(output, _read(ws.root / module.path))
    if not ok and not errors and not crash:
        crash = [f"lean exited with code {code} and wrote no {olean.name}"]
    return ModuleOutcome(module.name, ok, seconds, diags, crash)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


# --- the build --------------------------------------------------------------------------------


@dataclass
class BuildResult:
    """What a build did: per module, compiled / up to date / failed / not attempted."""

    order: list[str]
    compiled: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    crashes: dict[str, list[str]] = field(default_factory=dict)
    wall_seconds: float = 0.0
    used_lake: bool = False

    @property
    def ok(self) -> bool:
        return not self.failed and not self.blocked


class Progress:
    """Progress lines: one rewritten status line on a terminal, plain lines in CI logs."""

    def __init__(self, total: int, stream=None):
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() and not os.environ.get("CI")
        self.start = time.monotonic()
        self.running: dict[str, float] = {}
        self.lock = threading.Lock()

    def _elapsed(self) -> str:
        return _fmt(time.monotonic() - self.start)

    def started(self, name: str) -> None:
        with self.lock:
            self.running[name] = time.monotonic()
            if self.tty:
                self._status()
            else:
                print(f"[{self.done}/{self.total}] building {name} ({self._elapsed()})",
                      file=self.stream, flush=True)

    def finished(self, name: str, outcome: str, seconds: float) -> None:
        with self.lock:
            self.running.pop(name, None)
            self.done += 1
            line = f"[{self.done}/{self.total}] {outcome:<10} {name} {seconds:7.1f}s"
            if self.tty:
                print("\r\033[K" + line, file=self.stream, flush=True)
                self._status()
            else:
                print(line, file=self.stream, flush=True)

    def _status(self) -> None:
        current = ", ".join(self.running) or "-"
        print(f"\r\033[K[{self.done}/{self.total}] {current} ({self._elapsed()})",
              end="", file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty:
            print("\r\033[K", end="", file=self.stream, flush=True)


def _fmt(seconds: float) -> str:
    minutes, sec = divmod(int(seconds), 60)
    return f"{minutes}m{sec:02d}s"


#: A never-built module's compile time, guessed from its source (registry Lean, 2 cores,
#: measured on the 15-module library 2026-12-04: ~20 s of start-up and import, then roughly
#: 0.6 s per KB; the kernel-heavy generated table is slower, but still the largest file).
ESTIMATE_BASE_S = 20.0
ESTIMATE_S_PER_KB = 0.6


def estimated_seconds(source_bytes: int) -> float:
    """The compile time guessed for a module never built, from its source size."""
    return ESTIMATE_BASE_S + ESTIMATE_S_PER_KB * source_bytes / 1024


def critical_paths(
    order: list[str], deps: dict[str, Iterable[str]], seconds: dict[str, float],
    estimates: dict[str, float] | None = None,
) -> dict[str, float]:
    """Each module's longest chain of compiles to the end of the build: its own compile time
    (the last one recorded; for a module never built its entry in ``estimates``, else the mean
    of the recorded ones, or 1) plus the longest chain among the modules that import it.
    ``order`` is topological."""
    default = sum(seconds.values()) / len(seconds) if seconds else 1.0
    estimates = estimates or {}
    dependents: dict[str, list[str]] = {name: [] for name in order}
    for name in order:
        for dep in deps[name]:
            dependents[dep].append(name)
    chain: dict[str, float] = {}
    for name in reversed(order):
        own = seconds.get(name, estimates.get(name, default))
        chain[name] = own + max((chain[m] for m in dependents[name]), default=0.0)
    return chain


def default_jobs(toolchain: Toolchain) -> int:
    cores = os.cpu_count() or 1
    if toolchain.kind != "wasm":
        return cores
    try:
        mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        mem_gb = 8
    return max(1, min(cores, int(mem_gb // WASM_PROCESS_GB)))


def build(
    root: Path,
    toolchain: Toolchain,
    jobs: int | None = None,
    roots: Iterable[str] = LIBRARY_ROOTS,
    progress: Progress | None = None,
    compile_fn: Callable[[Toolchain, Workspace, Module], ModuleOutcome] = compile_module,
) -> BuildResult:
    """Build every module of the library with our own builder (see the module doc)."""
    roots = tuple(roots)
    root = root.resolve()
    modules = discover(root, roots)
    order = topological_order(modules, roots)
    check_core_imports(modules, toolchain.lib_dir)
    build_dir = root / BUILD_DIR
    ws = Workspace(root, build_dir, toolchain)
    ws.prepare(modules.values())
    records = load_record(build_dir)
    deps = {name: local_imports(modules[name], modules, roots) for name in order}
    result = BuildResult(order=order)
    progress = progress or Progress(len(order))
    jobs = jobs or default_jobs(toolchain)
    start = time.monotonic()

    traces: dict[str, str] = {}
    # Ready modules start longest-chain first (ties in import order): the build's wall time is
    # bounded below by its longest chain of compiles, so that chain must never wait.
    # A fresh clone has no records: the source sizes stand in for compile times.
    sizes = {n: estimated_seconds((root / modules[n].path).stat().st_size) for n in order}
    chain = critical_paths(order, deps, {n: r.seconds for n, r in records.items()}, sizes)
    pending = sorted(order, key=lambda n: -chain[n])
    running: dict[Future[ModuleOutcome], str] = {}
    lock = threading.Lock()

    # The source hash a compiled module is recorded with is that of the bytes Lean read (the
    # staged copy, or the file as it was when the compile started), never the file as it is when
    # the compile ends: a source edited mid-build must be rebuilt next time.
    compiled_sha: dict[str, str] = {}

    def trace_of(name: str, sha: str | None = None) -> str:
        sha = sha or sha256_file(root / modules[name].path)
        return module_trace(toolchain, sha, ((d, traces[d]) for d in deps[name]))

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while pending or running:
            for name in list(pending):
                if any(d in result.failed or d in result.blocked for d in deps[name]):
                    pending.remove(name)
                    result.blocked.append(name)
                    continue
                if not all(d in traces for d in deps[name]):
                    continue
                trace = trace_of(name)
                rec = records.get(name)
                if rec and rec.trace == trace and rec.intact(build_dir):
                    pending.remove(name)
                    traces[name] = trace
                    result.up_to_date.append(name)
                    progress.finished(name, "up to date", 0.0)
                    continue
                if len(running) >= jobs:
                    continue
                pending.remove(name)
                progress.started(name)
                compiled_sha[name] = sha256_file(ws.src / modules[name].path)
                running[pool.submit(compile_fn, toolchain, ws, modules[name])] = name
            if not running:
                continue
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in finished:
                name = running.pop(future)
                outcome = future.result()
                result.seconds[name] = round(outcome.seconds, 1)
                result.diagnostics.extend(outcome.diagnostics)
                if outcome.ok:
                    with lock:
                        records[name] = ModuleRecord(
                            trace_of(name, compiled_sha[name]), ws.collect(modules[name]),
                            round(outcome.seconds, 1),
                        )
                        traces[name] = records[name].trace
                        save_record(build_dir, records)
                    result.compiled.append(name)
                    progress.finished(name, "compiled", outcome.seconds)
                else:
                    records.pop(name, None)
                    save_record(build_dir, records)
                    result.failed.append(name)
                    if outcome.crash:
                        result.crashes[name] = outcome.crash
                    progress.finished(name, "FAILED", outcome.seconds)
    progress.close()
    result.wall_seconds = round(time.monotonic() - start, 1)
    return result


def lake_build(root: Path, toolchain: Toolchain) -> BuildResult:
    """``lake build`` for a connected proof engineer with elan."""
    import subprocess

    assert toolchain.lake
    start = time.monotonic()
    proc = subprocess.run([toolchain.lake, "build"], cwd=root, text=True)
    result = BuildResult(order=[], used_lake=True)
    result.wall_seconds = round(time.monotonic() - start, 1)
    if proc.returncode != 0:
        result.failed.append("lake build")
    return result


def report(result: BuildResult, stream=None) -> None:
    """Print diagnostics (errors and warnings) and a one-line summary."""
    stream = stream or sys.stdout
    for diag in result.diagnostics:
        print(diag, file=stream)
    for name, lines in result.crashes.items():
        print(f"{name}: Lean stopped without a diagnostic:", file=stream)
        for line in lines:
            print(f"  {line}", file=stream)
    for name in result.blocked:
        print(f"{name}: not built (an import failed)", file=stream)
    status = "ok" if result.ok else "FAILED"
    print(
        f"build {status}: {len(result.compiled)} compiled, {len(result.up_to_date)} up to date, "
        f"{len(result.failed)} failed, {len(result.blocked)} blocked "
        f"in {_fmt(result.wall_seconds)}",
        file=stream,
    )
