"""The prefix pass's kernel: a small C function of this project's own, compiled at first use,
with the numba kernel as the fallback giving the same numbers.

:func:`pytools.traces.prefix.prefix_curve_of` spends 0.02 s in the pass on the shared trace;
what a process paid around it was numba's import and the loading of its cached kernel (about
0.5 s, more than the trace authors' simulator takes for a whole budget). So the pass is also
written in C (:data:`C_SOURCE`, the numba loop line for line): the first call compiles it with
the system's C compiler (``$CC``, else ``cc``) into a per-user cache folder (``$PYTOOLS_
KERNEL_CACHE``, else ``$XDG_CACHE_HOME/pytools/kernels``, else ``~/.cache/pytools/kernels``;
a folder of its own, mode 0700), named by the SHA-256 of the source, the compiler command and
the platform, written under a temporary name and renamed into place, so a concurrent first
call or an interrupted one never leaves half a library behind; later calls load it with
``ctypes`` (a few milliseconds). The trace authors' simulator compiles its C++ backend on first
use the same way.

**Which kernel runs.** ``$PYTOOLS_PREFIX_KERNEL``: ``auto`` (the default: C where it compiles
and loads, else numba), ``c`` (C or an error saying why not) or ``numba``. Both take the same
arrays and return the same tuple; ``tests/test_traces_prefix_kernel.py`` checks that they give
the same histograms and counts on random chained traces, on traces that are not chained, and
on the shared trace, and that a planted change to the C source is caught.

**What it trusts.** A cached library is loaded only from a folder owned by this user that
nobody else may write (else the C kernel is unavailable: ``auto`` falls back to numba).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shlex
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

#: ``auto``, ``c`` or ``numba``: which kernel :func:`prefix_pass` gives.
ENV_KERNEL = "PYTOOLS_PREFIX_KERNEL"
#: The folder of compiled kernels (default: the user's cache folder).
ENV_CACHE = "PYTOOLS_KERNEL_CACHE"
#: The kernels, in the order ``auto`` tries them.
KERNELS = ("c", "numba")

#: The pass (the numba kernel of :mod:`.prefix_numba`, line for line). ``out`` receives
#: distinct, measured, prefix ceiling, flat ceiling; the return value is the index of the first
#: request whose id follows a different predecessor than before, or -1.
C_SOURCE = r"""
#include <stdint.h>

int64_t prefix_pass(int64_t n_req, const int64_t *ids, const int64_t *ends,
                    const int64_t *weights, int64_t warm, int64_t *last, int64_t *pred,
                    int32_t *fen, int64_t n_fen, int64_t *hist, int64_t *flat_hist,
                    int64_t *out)
{
    int64_t live = 0, t = 0, measured = 0, top = 0, flat_top = 0, start = 0, bad = -1;
    for (int64_t r = 0; r < n_req; r++) {
        int64_t end = ends[r];
        int count = r >= warm;
        int64_t prev = -1, run = 0;
        int alive = 1;
        for (int64_t j = start; j < end; j++) {
            int64_t x = ids[j];
            if (pred[x] == -2) {
                pred[x] = prev;
            } else if (pred[x] != prev) {
                bad = r;
                goto done;
            }
            prev = x;
            if (!count) continue;
            int64_t w = weights[j];
            measured += w;
            int64_t p = last[x];
            if (p < 0) {
                alive = 0;
                continue;
            }
            int64_t s = 0;
            for (int64_t k = p + 1; k > 0; k &= k - 1) s += fen[k];
            int64_t d = live - s + 1;
            flat_hist[d] += w;
            flat_top += w;
            if (alive) {
                if (d > run) run = d;
                hist[run] += w;
                top += w;
            }
        }
        for (int64_t j = end - 1; j >= start; j--) {  /* touch tail first */
            int64_t x = ids[j];
            int64_t p = last[x];
            if (p < 0) {
                live++;
            } else {
                for (int64_t k = p + 1; k <= n_fen; k += k & -k) fen[k]--;
            }
            last[x] = t;
            for (int64_t k = t + 1; k <= n_fen; k += k & -k) fen[k]++;
            t++;
        }
        start = end;
    }
done:
    out[0] = live;
    out[1] = measured;
    out[2] = top;
    out[3] = flat_top;
    return bad;
}
"""

#: Compiler flags (part of the cache key).
C_FLAGS = ("-O2", "-shared", "-fPIC", "-std=c99")

#: ``(ids, ends, weights, warm, last, pred, fen, hist, flat_hist) -> (distinct, measured,
#: prefix ceiling, flat ceiling, bad request or -1)``
PrefixPass = Callable[..., tuple[int, int, int, int, int]]


class KernelUnavailable(RuntimeError):
    """The asked kernel cannot run here (the message says why)."""


def cache_folder() -> Path:
    """Where compiled kernels are kept (see the module's docstring)."""
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytools" / "kernels"


def _compiler() -> list[str]:
    cc = shlex.split(os.environ.get("CC") or "cc")
    if not cc:
        raise KernelUnavailable("$CC is empty")
    return cc


def library_name(source: str, compiler: list[str]) -> str:
    """The cached library's file name: the SHA-256 of everything that decides its bytes."""
    key = "\0".join([source, *compiler, *C_FLAGS, sys.platform, platform.machine()])
    return f"prefix_pass-{hashlib.sha256(key.encode()).hexdigest()[:24]}.so"


def _private_folder(folder: Path) -> Path:
    """``folder`` created (0700) if missing; refused unless this user owns it and nobody else
    may write it."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError as exc:
        raise KernelUnavailable(f"{folder}: cannot create the kernel cache ({exc})") from None
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise KernelUnavailable(f"{folder}: the kernel cache is not this user's")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise KernelUnavailable(f"{folder}: the kernel cache is writable by others")
    return folder


def compile_library(source: str = C_SOURCE, folder: Path | None = None) -> Path:
    """The compiled library of ``source`` in the cache folder, compiled if missing (under a
    temporary name, then renamed into place)."""
    compiler = _compiler()
    folder = _private_folder(folder or cache_folder())
    lib = folder / library_name(source, compiler)
    if lib.is_file():
        return lib
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
        src = Path(tmp) / "prefix_pass.c"
        src.write_text(source, encoding="ascii")
        built = Path(tmp) / "prefix_pass.so"
        try:
            done = subprocess.run([*compiler, *C_FLAGS, "-o", str(built), str(src)],
                                  capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KernelUnavailable(f"cannot run the C compiler {compiler[0]!r}: {exc}") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise KernelUnavailable(f"the C compiler {compiler[0]!r} failed: {last}")
        os.replace(built, lib)
    return lib


def _c_arg(a: np.ndarray, dtype: type) -> int:
    if a.dtype != dtype or not a.flags.c_contiguous:
        raise TypeError(f"the C kernel needs contiguous {np.dtype(dtype).name} arrays")
    return a.ctypes.data


def load_c(source: str = C_SOURCE, folder: Path | None = None) -> PrefixPass:
    """The C kernel, compiled if needed and loaded (:class:`KernelUnavailable` if it cannot
    be)."""
    lib_path = compile_library(source, folder)
    try:
        lib = ctypes.CDLL(str(lib_path))
    except OSError as exc:
        raise KernelUnavailable(f"{lib_path}: cannot load the compiled kernel ({exc})") from None
    fn = lib.prefix_pass
    fn.restype = ctypes.c_int64
    fn.argtypes = [ctypes.c_int64, *[ctypes.c_void_p] * 3, ctypes.c_int64,
                   *[ctypes.c_void_p] * 3, ctypes.c_int64, *[ctypes.c_void_p] * 3]

    def prefix_pass(ids: np.ndarray, ends: np.ndarray, weights: np.ndarray, warm: int,
                    last: np.ndarray, pred: np.ndarray, fen: np.ndarray, hist: np.ndarray,
                    flat_hist: np.ndarray) -> tuple[int, int, int, int, int]:
        out = np.zeros(4, dtype=np.int64)
        i64 = np.int64
        bad = fn(ends.shape[0], _c_arg(ids, i64), _c_arg(ends, i64), _c_arg(weights, i64),
                 int(warm), _c_arg(last, i64), _c_arg(pred, i64), _c_arg(fen, np.int32),
                 fen.shape[0] - 1, _c_arg(hist, i64), _c_arg(flat_hist, i64),
                 _c_arg(out, i64))
        live, measured, top, flat_top = (int(v) for v in out)
        return live, measured, top, flat_top, int(bad)

    return prefix_pass


def load_numba() -> PrefixPass:
    """The numba kernel (imports numba)."""
    from .prefix_numba import prefix_pass

    return prefix_pass  # type: ignore[no-any-return]


def chosen_kernel() -> str:
    """``$PYTOOLS_PREFIX_KERNEL`` (``auto`` when unset), checked."""
    name = os.environ.get(ENV_KERNEL) or "auto"
    if name not in ("auto", *KERNELS):
        raise KernelUnavailable(f"${ENV_KERNEL}={name!r}: expected auto, c or numba")
    return name


@functools.cache
def _loaded(name: str, compiler: str | None, folder: Path) -> PrefixPass | KernelUnavailable:
    """The loaded kernel, or why it cannot be, for a compiler and a cache folder (kept: a
    machine without a compiler tries once a process)."""
    try:
        return load_c(C_SOURCE, folder) if name == "c" else load_numba()
    except KernelUnavailable as exc:
        return exc


def _kernel(name: str) -> PrefixPass:
    got = _loaded(name, os.environ.get("CC"), cache_folder())
    if isinstance(got, KernelUnavailable):
        raise got
    return got


def prefix_pass(kernel: str | None = None) -> tuple[str, PrefixPass]:
    """The kernel ``kernel`` (default: :func:`chosen_kernel`) names, and which one it is:
    ``auto`` gives C where it compiles and loads, else numba."""
    name = kernel or chosen_kernel()
    if name == "auto":
        try:
            return "c", _kernel("c")
        except KernelUnavailable:
            return "numba", _kernel("numba")
    if name not in KERNELS:
        raise KernelUnavailable(f"unknown kernel {name!r} (expected auto, c or numba)")
    return name, _kernel(name)
