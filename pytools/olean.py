"""Read Lean 4 ``.olean`` files (compacted regions) in pure Python.

An ``.olean`` file is a *compacted region*: a header followed by an image of Lean runtime
objects laid out back to back, whose pointers are absolute addresses computed from a base
address recorded in the header. This module decodes that image without running Lean.

File header (measured on the registry WebAssembly Lean 4.28.0-pre, see ``TOOLCHAIN.md``)::

    0x00  b"olean"                 magic
    0x05  u8                       format version (2)
    0x06  u8                       (zero)
    0x07  char[33]                 Lean version string, NUL padded ("4.28.0-pre")
    0x28  char[40]                 git commit of the Lean that wrote it
    0x50  usize                    base address of the region
    0x50+W usize                   pointer to the root object (the ``ModuleData``)
    0x50+2W ...                    objects, W-byte aligned

``W`` is the pointer width: 4 in the 32-bit layout the WebAssembly build writes, 8 in the
64-bit layout native Lean writes. The width is detected from the header (the root pointer
must land inside the file). **Only the 32-bit layout has been exercised here**; the 64-bit
layout is implemented from the runtime's object layout (every ``usize``/pointer field widens
to 8 bytes) but no native ``.olean`` was available on this machine to test it.

Objects: an 8-byte header ``{rc: i32, cs_sz: u16, other: u8, tag: u8}``.

* ``tag <= 244``: a constructor with ``other`` pointer fields, then its scalar fields
  (``usize`` fields first, then 8-, 4-, 2-, 1-byte fields, in declaration order within each
  size class).
* ``tag == 246``: ``Array``: size, capacity (``usize`` each), then ``size`` pointers.
* ``tag == 248``: scalar array (``ByteArray`` ...): size, capacity, element bytes.
* ``tag == 249``: ``String``: byte size (incl. NUL), capacity, length in code points, bytes.
* ``tag == 250``: big natural number (``mpz``).
* ``tag == 245/247/251/252``: closure / struct array / thunk / task: not expected in
  module data; reported as :class:`OleanError` if reached.

A pointer with the low bit set is a boxed scalar ``n`` encoded as ``2n+1``.

Module parts. A ``module`` file is written as three parts that share objects:
``X.olean`` (exported level), ``X.olean.server`` and ``X.olean.private``; a later part may
point into an earlier one (each part has its own base address), so a later part can only be
read together with the earlier ones. :class:`Module` loads the parts that exist and resolves
pointers across them. What each part holds (measured, see ``tests/test_olean.py``):

* ``.olean`` (exported): the public view: definitions' types, exposed bodies; **theorems are
  weakened to axioms** (``axiomInfo`` with the theorem's type; the proof body is absent).
* ``.olean.server``: extension entries for the language server (declaration ranges,
  docstrings); its constant table is the exported one again.
* ``.olean.private``: the full kernel view: theorems as ``thmInfo`` with proof bodies
  (this is where ``sorryAx`` / ``Lean.ofReduceBool`` references of a proof live), private
  declarations and compiler auxiliaries.

Decoding is lazy and memoised by address (Lean's expression DAGs share subterms heavily).
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"olean"
TAG_MAX_CTOR = 244
TAG_CLOSURE = 245
TAG_ARRAY = 246
TAG_STRUCT_ARRAY = 247
TAG_SARRAY = 248
TAG_STRING = 249
TAG_MPZ = 250
TAG_THUNK = 251
TAG_TASK = 252

#: Part suffixes in load order (each part may point into the previous ones).
PART_SUFFIXES = ("", ".server", ".private")


class OleanError(Exception):
    """A malformed or unsupported ``.olean`` file; the message names the file."""


# --------------------------------------------------------------------------- terms


@dataclass(frozen=True, slots=True)
class Level:
    """A universe level. ``kind`` is one of zero, succ, max, imax, param, mvar."""

    kind: str
    args: tuple  # succ: (Level,), max/imax: (Level, Level), param/mvar: (str,)


@dataclass(frozen=True, slots=True)
class Expr:
    """A kernel expression.

    ``kind`` and ``args``:

    * ``bvar (idx:int)``; ``fvar (id:str)``; ``mvar (id:str)``; ``sort (Level)``
    * ``const (name:str, levels:tuple[Level])``; ``app (fn:Expr, arg:Expr)``
    * ``lam``/``forallE`` ``(binder:str, type:Expr, body:Expr, binder_info:str)``
    * ``letE (name:str, type:Expr, value:Expr, body:Expr, non_dep:bool)``
    * ``lit ('nat', int)`` or ``lit ('str', str)``; ``mdata (Expr)`` (metadata dropped)
    * ``proj (struct_name:str, idx:int, Expr)``
    """

    kind: str
    args: tuple


BINDER_INFOS = ("default", "implicit", "strictImplicit", "instImplicit")
CONSTANT_KINDS = ("axiom", "definition", "theorem", "opaque", "quot", "inductive",
                  "constructor", "recursor")


@dataclass(frozen=True, slots=True)
class ConstantInfo:
    """A declaration as stored in the module data (``Lean.ConstantInfo``).

    ``kind`` is one of :data:`CONSTANT_KINDS`. ``type_ptr``/``value_ptr`` are addresses in the
    owning :class:`Module`; use :meth:`Module.expr` to decode them. ``value_ptr`` is None for
    kinds without a value (axiom, quot, inductive, constructor, recursor). ``ctors`` lists the
    constructor names of an inductive, ``induct`` names a constructor's inductive type.
    """

    name: str
    kind: str
    level_params: tuple[str, ...]
    type_ptr: int
    value_ptr: int | None
    is_unsafe: bool
    ctors: tuple[str, ...] = ()
    induct: str | None = None
    all: tuple[str, ...] = ()


# --------------------------------------------------------------------------- parts


@dataclass(frozen=True)
class OleanHeader:
    """The fixed header of one ``.olean`` part."""

    path: Path
    format_version: int
    lean_version: str
    githash: str
    base: int
    root: int
    ptr_size: int


class _Part:
    __slots__ = ("path", "data", "header", "lo", "hi")

    def __init__(self, path: Path, data: bytes | mmap.mmap, header: OleanHeader):
        self.path = path
        self.data = data
        self.header = header
        self.lo = header.base
        self.hi = header.base + len(data)


def read_header(path: Path, data: bytes | mmap.mmap) -> OleanHeader:
    """Parse and validate the header of an ``.olean`` part (pointer width auto-detected)."""
    if len(data) < 0x58 or data[:5] != MAGIC:
        raise OleanError(f"{path}: not an .olean file (bad magic or truncated header)")
    version = data[5]
    lean_version = data[7:0x28].split(b"\0", 1)[0].decode("utf-8", "replace")
    githash = data[0x28:0x50].split(b"\0", 1)[0].decode("ascii", "replace")
    size = len(data)
    for width, fmt in ((8, "<QQ"), (4, "<II")):
        if 0x50 + 2 * width > size:
            continue
        base, root = struct.unpack_from(fmt, data, 0x50)
        first = 0x50 + 2 * width
        if base % 8 == 0 and base <= root and first <= root - base < size - 8:
            return OleanHeader(path, version, lean_version, githash, base, root, width)
        if base % 8 == 0 and first == size and root < base:
            # A part with no objects of its own (seen: the `.olean.private` of a module whose
            # private data equals its server data): its root points into an earlier part.
            return OleanHeader(path, version, lean_version, githash, base, root, width)
    raise OleanError(f"{path}: header has no root pointer inside the file (corrupt .olean?)")


# --------------------------------------------------------------------------- module


class Module:
    """The compacted region(s) of one compiled module, decoded lazily.

    ``Module(path)`` loads ``path`` (an ``.olean``) and, when ``parts`` is ``"all"``
    (default), also its ``.olean.server`` and ``.olean.private`` siblings when present.
    :attr:`data` is the ``ModuleData`` of the *last* loaded part (the most complete view).
    Every decoding error raises :class:`OleanError` naming the file.
    """

    def __init__(self, path: Path | str, parts: str = "all"):
        path = Path(path)
        self.path = path
        self.parts: list[_Part] = []
        suffixes = PART_SUFFIXES if parts == "all" else ("",)
        for suffix in suffixes:
            p = path.with_name(path.name + suffix)
            if not p.is_file():
                if suffix == "":
                    raise OleanError(f"{p}: no such .olean file")
                break
            try:
                with open(p, "rb") as fh:
                    try:  # map, do not read: an audit touches a small part of each file
                        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                    except (ValueError, OSError):
                        data = fh.read()
            except OSError as exc:
                raise OleanError(f"{p}: cannot read: {exc}") from exc
            self.parts.append(_Part(p, data, read_header(p, data)))
        widths = {pt.header.ptr_size for pt in self.parts}
        if len(widths) != 1:
            raise OleanError(f"{path}: parts disagree on pointer width")
        self.ptr_size = widths.pop()
        self._pfmt = "<I" if self.ptr_size == 4 else "<Q"
        self._names: dict[int, str] = {}
        self._levels: dict[int, Level] = {}
        self._exprs: dict[int, Expr] = {}
        self._consts: dict[int, ConstantInfo] = {}
        self._last: _Part | None = None

    # ----------------------------------------------------------------- raw access
    @property
    def header(self) -> OleanHeader:
        return self.parts[0].header

    def part_names(self) -> list[str]:
        return [pt.path.name for pt in self.parts]

    def _locate(self, ptr: int) -> tuple[_Part, int]:
        last = self._last
        if last is not None and last.lo <= ptr < last.hi:
            return last, ptr - last.lo
        for pt in self.parts:
            if pt.lo <= ptr < pt.hi:
                self._last = pt
                return pt, ptr - pt.lo
        raise OleanError(f"{self.path}: pointer {ptr:#x} outside every part of the module "
                         "(corrupt or incomplete .olean?)")

    def _hdr(self, ptr: int) -> tuple[bytes, int, int, int]:
        """(data, offset of object, num pointer fields, tag)."""
        if ptr & 1:
            raise OleanError(f"{self.path}: expected an object, found boxed scalar {ptr >> 1}")
        pt, off = self._locate(ptr)
        if off + 8 > len(pt.data) or off % self.ptr_size:
            raise OleanError(f"{pt.path}: misaligned or truncated object at offset {off:#x}")
        data = pt.data
        return data, off, data[off + 6], data[off + 7]

    def tag(self, ptr: int) -> int:
        """Constructor index (or special tag) of the object at ``ptr``; boxed -> its value."""
        if ptr & 1:
            return ptr >> 1
        return self._hdr(ptr)[3]

    def fields(self, ptr: int, expect: int | None = None) -> tuple[int, ...]:
        """Pointer fields of the constructor object at ``ptr``."""
        data, off, n, tag = self._hdr(ptr)
        if tag > TAG_MAX_CTOR:
            raise OleanError(f"{self.path}: object at {ptr:#x} has tag {tag}, not a constructor")
        if expect is not None and n < expect:
            raise OleanError(f"{self.path}: object at {ptr:#x} has {n} fields, "
                             f"expected {expect}")
        w = self.ptr_size
        if off + 8 + n * w > len(data):
            raise OleanError(f"{self.path}: truncated object at {ptr:#x}")
        fmt = ("<%dI" if w == 4 else "<%dQ") % n
        return struct.unpack_from(fmt, data, off + 8)

    def scalar(self, ptr: int, offset: int, size: int) -> int:
        """Unsigned scalar field at byte ``offset`` of the scalar area (after the pointers)."""
        data, off, n, _ = self._hdr(ptr)
        pos = off + 8 + n * self.ptr_size + offset
        if pos + size > len(data):
            raise OleanError(f"{self.path}: truncated scalar field at {ptr:#x}")
        return int.from_bytes(data[pos:pos + size], "little")

    def string(self, ptr: int) -> str:
        if ptr & 1:
            raise OleanError(f"{self.path}: expected a string, found boxed scalar {ptr >> 1}")
        pt, off = self._locate(ptr)
        data = pt.data
        if off + 8 + 3 * self.ptr_size > len(data) or off % self.ptr_size:
            raise OleanError(f"{pt.path}: misaligned or truncated object at offset {off:#x}")
        tag = data[off + 7]
        if tag != TAG_STRING:
            raise OleanError(f"{self.path}: object at {ptr:#x} has tag {tag}, not a string")
        w = self.ptr_size
        size = int.from_bytes(data[off + 8:off + 8 + w], "little")
        start = off + 8 + 3 * w
        if size < 1 or start + size > len(data):
            raise OleanError(f"{self.path}: string at {ptr:#x} runs past the end of the file")
        try:
            return data[start:start + size - 1].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise OleanError(f"{self.path}: string at {ptr:#x} is not UTF-8") from exc

    def array(self, ptr: int) -> tuple[int, ...]:
        data, off, _, tag = self._hdr(ptr)
        if tag != TAG_ARRAY:
            raise OleanError(f"{self.path}: object at {ptr:#x} has tag {tag}, not an array")
        w = self.ptr_size
        size = int.from_bytes(data[off + 8:off + 8 + w], "little")
        start = off + 8 + 2 * w
        if start + size * w > len(data):
            raise OleanError(f"{self.path}: array at {ptr:#x} runs past the end of the file")
        fmt = ("<%dI" if w == 4 else "<%dQ") % size
        return struct.unpack_from(fmt, data, start)

    def scalar_array(self, ptr: int) -> bytes:
        data, off, _, tag = self._hdr(ptr)
        if tag != TAG_SARRAY:
            raise OleanError(f"{self.path}: object at {ptr:#x} is not a scalar array")
        w = self.ptr_size
        size = int.from_bytes(data[off + 8:off + 8 + w], "little")
        start = off + 8 + 2 * w
        return bytes(data[start:start + size])

    def nat(self, ptr: int) -> int:
        """A ``Nat``: boxed scalar or big number (``mpz``, magnitude as ``usize`` digits)."""
        if ptr & 1:
            return ptr >> 1
        data, off, _, tag = self._hdr(ptr)
        if tag != TAG_MPZ:
            raise OleanError(f"{self.path}: object at {ptr:#x} has tag {tag}, not a Nat")
        # Lean's own mpz (no GMP), measured on the 32-bit layout: {sign (padded to a word);
        # usize size; digits pointer (fixed up to the digits that follow)} then the digits.
        # A GMP build may lay this out differently: anything else is refused, not guessed.
        w = self.ptr_size
        size = int.from_bytes(data[off + 8 + w:off + 8 + 2 * w], "little")
        digits_ptr = int.from_bytes(data[off + 8 + 2 * w:off + 8 + 3 * w], "little")
        start = off + 8 + 3 * w
        if (size <= 0 or size > 1 << 16 or start + size * w > len(data)
                or digits_ptr != ptr + 8 + 3 * w):
            raise OleanError(f"{self.path}: unsupported big number layout at {ptr:#x}")
        value = 0
        for i in range(size):
            digit = int.from_bytes(data[start + i * w:start + (i + 1) * w], "little")
            value |= digit << (8 * w * i)
        return value

    def list(self, ptr: int) -> list[int]:
        """Elements of a ``List`` (nil = box 0, cons = ctor 1 with head, tail)."""
        out = []
        seen: set[int] = set()
        while not ptr & 1:
            if ptr in seen:
                raise OleanError(f"{self.path}: cyclic List at {ptr:#x} (corrupt .olean?)")
            seen.add(ptr)
            head, ptr = self.fields(ptr, 2)[:2]
            out.append(head)
        return out

    # ----------------------------------------------------------------- module data
    @property
    def root(self) -> int:
        return self.parts[-1].header.root

    def module_data(self, part: int = -1) -> tuple[int, ...]:
        """Pointer fields of ``ModuleData`` of one part: imports, constNames, constants,
        extraConstNames, entries."""
        return self.fields(self.parts[part].header.root, 5)

    def is_module(self) -> bool:
        return bool(self.scalar(self.root, 0, 1))

    def imports(self) -> list[str]:
        """Names of the direct imports."""
        return [self.name(self.fields(p, 1)[0]) for p in self.array(self.module_data(0)[0])]

    def const_names(self, part: int = -1) -> list[str]:
        return [self.name(p) for p in self.array(self.module_data(part)[1])]

    def extra_const_names(self, part: int = -1) -> list[str]:
        return [self.name(p) for p in self.array(self.module_data(part)[3])]

    def constants(self, part: int = -1) -> list[ConstantInfo]:
        return [self.constant(p) for p in self.array(self.module_data(part)[2])]

    def entries(self, part: int = -1) -> dict[str, tuple[int, ...]]:
        """Environment-extension entries: extension name -> entry pointers."""
        out: dict[str, tuple[int, ...]] = {}
        for p in self.array(self.module_data(part)[4]):
            name_ptr, arr = self.fields(p, 2)[:2]
            out[self.name(name_ptr)] = self.array(arr)
        return out

    # ----------------------------------------------------------------- names
    def name(self, ptr: int) -> str:
        """A ``Name`` as a dotted string (numeric components printed as numbers).

        Every prefix met on the way is memoised too (names share their namespaces)."""
        names = self._names
        cached = names.get(ptr)
        if cached is not None:
            return cached
        chain: list[tuple[int, str]] = []
        w = self.ptr_size
        fmt2 = "<II" if w == 4 else "<QQ"
        p = ptr
        base = ""
        while True:
            if p & 1:
                if p != 1:
                    raise OleanError(f"{self.path}: bad Name terminator {p:#x}")
                break
            hit = names.get(p)
            if hit is not None:
                base = hit
                break
            if len(chain) > 4096:
                raise OleanError(f"{self.path}: Name at {ptr:#x} too long or cyclic")
            pt, off = self._locate(p)
            data = pt.data
            if off % w or off + 8 + 2 * w > len(data) or data[off + 6] < 2:
                raise OleanError(f"{self.path}: object at {p:#x} is not a Name")
            tag = data[off + 7]
            prefix, comp = struct.unpack_from(fmt2, data, off + 8)
            if tag == 1:
                chain.append((p, self.string(comp)))
            elif tag == 2:
                chain.append((p, str(self.nat(comp))))
            else:
                raise OleanError(f"{self.path}: object at {p:#x} is not a Name (tag {tag})")
            p = prefix
        cur = base
        for q, comp_s in reversed(chain):
            cur = f"{cur}.{comp_s}" if cur else comp_s
            names[q] = cur
        return cur

    # ----------------------------------------------------------------- levels
    def level(self, ptr: int) -> Level:
        try:
            return self._level(ptr)
        except RecursionError as exc:
            raise OleanError(f"{self.path}: Level at {ptr:#x} too deep or cyclic") from exc

    def _level(self, ptr: int) -> Level:
        hit = self._levels.get(ptr)
        if hit is not None:
            return hit
        tag = self.tag(ptr)
        if ptr & 1 or tag == 0:
            lv = Level("zero", ())
        elif tag == 1:
            lv = Level("succ", (self._level(self.fields(ptr, 1)[0]),))
        elif tag in (2, 3):
            a, b = self.fields(ptr, 2)[:2]
            lv = Level("max" if tag == 2 else "imax", (self._level(a), self._level(b)))
        elif tag in (4, 5):
            lv = Level("param" if tag == 4 else "mvar", (self.name(self.fields(ptr, 1)[0]),))
        else:
            raise OleanError(f"{self.path}: object at {ptr:#x} is not a Level (tag {tag})")
        self._levels[ptr] = lv
        return lv

    # ----------------------------------------------------------------- expressions
    def expr(self, ptr: int) -> Expr:
        """Decode the expression at ``ptr`` (memoised by address; iterative for deep terms)."""
        memo = self._exprs
        hit = memo.get(ptr)
        if hit is not None:
            return hit
        stack = [ptr]
        active: set[int] = set()
        while stack:
            p = stack[-1]
            if p in memo:
                stack.pop()
                continue
            active.add(p)
            tag = self.tag(p)
            if p & 1:
                raise OleanError(f"{self.path}: boxed scalar where an Expr was expected")
            f = self.fields(p)
            sub: tuple[int, ...]
            if tag in (5,):
                sub = (f[0], f[1])
            elif tag in (6, 7):
                sub = (f[1], f[2])
            elif tag == 8:
                sub = (f[1], f[2], f[3])
            elif tag == 10:
                sub = (f[1],)
            elif tag == 11:
                sub = (f[2],)
            else:
                sub = ()
            missing = [s for s in sub if s not in memo]
            if missing:
                if any(s in active for s in missing):
                    raise OleanError(f"{self.path}: cyclic Expr at {p:#x} (corrupt .olean?)")
                stack.extend(missing)
                continue
            stack.pop()
            active.discard(p)
            memo[p] = self._build_expr(p, tag, f)
        return memo[ptr]

    def _build_expr(self, p: int, tag: int, f: tuple[int, ...]) -> Expr:
        memo = self._exprs
        if tag == 0:
            return Expr("bvar", (self.nat(f[0]),))
        if tag == 1:
            return Expr("fvar", (self.name(self.fields(f[0], 1)[0]) if not f[0] & 1 else "",))
        if tag == 2:
            return Expr("mvar", (self.name(self.fields(f[0], 1)[0]) if not f[0] & 1 else "",))
        if tag == 3:
            return Expr("sort", (self.level(f[0]),))
        if tag == 4:
            return Expr("const", (self.name(f[0]),
                                  tuple(self.level(x) for x in self.list(f[1]))))
        if tag == 5:
            return Expr("app", (memo[f[0]], memo[f[1]]))
        if tag in (6, 7):
            # scalar area: data (u64 hash/flags), then binderInfo (u8)
            bi = self.scalar(p, 8, 1)
            return Expr("lam" if tag == 6 else "forallE",
                        (self.name(f[0]), memo[f[1]], memo[f[2]],
                         BINDER_INFOS[bi] if bi < 4 else str(bi)))
        if tag == 8:
            return Expr("letE", (self.name(f[0]), memo[f[1]], memo[f[2]], memo[f[3]],
                                 bool(self.scalar(p, 8, 1))))
        if tag == 9:
            lit = f[0]
            ltag = self.tag(lit)
            inner = self.fields(lit, 1)[0]
            if ltag == 0:
                return Expr("lit", ("nat", self.nat(inner)))
            return Expr("lit", ("str", self.string(inner)))
        if tag == 10:
            return Expr("mdata", (memo[f[1]],))
        if tag == 11:
            return Expr("proj", (self.name(f[0]), self.nat(f[1]), memo[f[2]]))
        raise OleanError(f"{self.path}: object at {p:#x} is not an Expr (tag {tag})")

    def const_refs(self, ptr: int, seen: set[int] | None = None) -> set[str]:
        """Names of all constants referenced by the expression at ``ptr``, without building
        the term (a pointer walk with a visited set; shared subterms are visited once)."""
        seen = set() if seen is None else seen
        out: set[str] = set()
        stack = [ptr]
        w = self.ptr_size
        letter = "I" if w == 4 else "Q"
        fmts = {n: struct.Struct("<" + letter * n) for n in (1, 2, 3, 4)}
        # Expr tag -> (pointer fields needed, indices of sub-expressions)
        shape = {4: (2, ()), 5: (2, (0, 1)), 6: (3, (1, 2)), 7: (3, (1, 2)),
                 8: (4, (1, 2, 3)), 10: (2, (1,)), 11: (3, (2,))}
        locate = self._locate
        while stack:
            p = stack.pop()
            if p & 1 or p in seen:
                continue
            seen.add(p)
            pt, off = locate(p)
            data = pt.data
            if off % w or off + 8 > len(data):
                raise OleanError(f"{pt.path}: misaligned or truncated object at {off:#x}")
            tag = data[off + 7]
            if tag > 11:
                raise OleanError(f"{self.path}: object at {p:#x} is not an Expr (tag {tag})")
            sh = shape.get(tag)
            if sh is None:
                continue
            n, subs = sh
            if data[off + 6] < n or off + 8 + n * w > len(data):
                raise OleanError(f"{pt.path}: malformed Expr object at {off:#x}")
            f = fmts[n].unpack_from(data, off + 8)
            if tag == 4:
                out.add(self.name(f[0]))
            else:
                stack.extend(f[i] for i in subs)
        return out

    # ----------------------------------------------------------------- constants
    def constant(self, ptr: int) -> ConstantInfo:
        hit = self._consts.get(ptr)
        if hit is not None:
            return hit
        tag = self.tag(ptr)
        if tag > 7:
            raise OleanError(f"{self.path}: object at {ptr:#x} is not a ConstantInfo")
        val = self.fields(ptr, 1)[0]
        vf = self.fields(val)
        cval = self.fields(vf[0], 3)
        name = self.name(cval[0])
        lparams = tuple(self.name(x) for x in self.list(cval[1]))
        kind = CONSTANT_KINDS[tag]
        value = None
        unsafe = False
        ctors: tuple[str, ...] = ()
        induct = None
        all_: tuple[str, ...] = ()
        if tag == 0:  # axiomInfo: cval; isUnsafe
            unsafe = bool(self.scalar(val, 0, 1))
        elif tag == 1:  # defnInfo: cval, value, hints, all; safety (u8)
            value = vf[1]
            all_ = tuple(self.name(x) for x in self.list(vf[3]))
            unsafe = self.scalar(val, 0, 1) == 0  # DefinitionSafety.unsafe is index 0
        elif tag == 2:  # thmInfo: cval, value, all
            value = vf[1]
            all_ = tuple(self.name(x) for x in self.list(vf[2]))
        elif tag == 3:  # opaqueInfo: cval, value, all; isUnsafe
            value = vf[1]
            all_ = tuple(self.name(x) for x in self.list(vf[2]))
            unsafe = bool(self.scalar(val, 0, 1))
        elif tag == 5:  # inductInfo: cval, numParams, numIndices, all, ctors, numNested; bools
            all_ = tuple(self.name(x) for x in self.list(vf[3]))
            ctors = tuple(self.name(x) for x in self.list(vf[4]))
            unsafe = bool(self.scalar(val, 1, 1))
        elif tag == 6:  # ctorInfo: cval, induct, cidx, numParams, numFields; isUnsafe
            induct = self.name(vf[1])
            unsafe = bool(self.scalar(val, 0, 1))
        elif tag == 7:  # recInfo: cval, all, numParams, ..., rules; k, isUnsafe
            all_ = tuple(self.name(x) for x in self.list(vf[1]))
            unsafe = bool(self.scalar(val, 1, 1))
        ci = ConstantInfo(name, kind, lparams, cval[2], value, unsafe, ctors, induct, all_)
        self._consts[ptr] = ci
        return ci

    def iter_constants(self, part: int = -1) -> Iterator[ConstantInfo]:
        for p in self.array(self.module_data(part)[2]):
            yield self.constant(p)

    # ----------------------------------------------------------------- declaration ranges
    def decl_ranges(self) -> dict[str, tuple[int, int]]:
        """``declRangeExt`` entries of the most complete part: name -> (line, column) where the
        declaration's *name* starts (its ``selectionRange``; the full ``range`` would start at
        the docstring). Line 1-based, column 0-based (in code points), as Lean stores them.
        Empty if the extension is absent."""
        out: dict[str, tuple[int, int]] = {}
        for i in range(len(self.parts) - 1, -1, -1):
            ents = self.entries(i).get("Lean.declRangeExt")
            if ents is None:
                continue
            for e in ents:
                name_ptr, ranges = self.fields(e, 2)[:2]
                rng = self.fields(ranges, 2)[1]        # DeclarationRanges.selectionRange
                pos = self.fields(rng, 2)[0]           # DeclarationRange.pos
                line, col = self.fields(pos, 2)[:2]    # Position.line, column
                out.setdefault(self.name(name_ptr), (self.nat(line), self.nat(col)))
            if out:
                break
        return out


def load(path: Path | str, parts: str = "all") -> Module:
    """Open a compiled module (``X.olean`` plus its ``.server``/``.private`` parts)."""
    return Module(path, parts)
