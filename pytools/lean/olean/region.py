"""The compacted-region layer of a Lean 4 ``.olean`` file: header, parts, raw objects.

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


# --------------------------------------------------------------------------- raw objects


class Region:
    """The loaded part(s) of one compiled module and raw access to their objects.

    ``Region(path)`` maps ``path`` (an ``.olean``) and, when ``parts`` is ``"all"``
    (default), also its ``.olean.server`` and ``.olean.private`` siblings when present.
    Pointers are resolved across parts. Every error raises :class:`OleanError` naming the
    file. :class:`pytools.lean.olean.module.Module` decodes Lean data on top of this.
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
        self._last: _Part | None = None

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

    @property
    def root(self) -> int:
        """Address of the root object (``ModuleData``) of the most complete part."""
        return self.parts[-1].header.root
