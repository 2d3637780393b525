"""Lean-level decoding of a compiled module: ``ModuleData``, names, levels, expressions,
constants, extension entries and declaration ranges (on top of :mod:`.region`)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from .names import Name
from .region import OleanError, Region
from .terms import BINDER_INFOS, CONSTANT_KINDS, ConstantInfo, Expr, ImportRecord, Level

#: Pointer fields each ``ConstantInfo`` value reads, by tag (axiom, defn, thm, opaque, quot,
#: induct, ctor, rec); a corrupt object with fewer is refused.
CONSTANT_FIELDS: dict[int, int] = {0: 1, 1: 4, 2: 3, 3: 3, 4: 1, 5: 5, 6: 2, 7: 2}

#: Pointer fields of each ``Expr`` constructor, by tag: bvar, fvar, mvar, sort, const, app, lam,
#: forallE, letE, lit, mdata, proj. A corrupt object with fewer is refused, not indexed past.
EXPR_FIELDS: dict[int, int] = {0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3, 8: 4, 9: 1, 10: 2,
                               11: 3}

ANONYMOUS = Name(())


class Module(Region):
    """The compacted region(s) of one compiled module, decoded lazily.

    ``Module(path)`` loads ``path`` (an ``.olean``) and, when ``parts`` is ``"all"``
    (default), also its ``.olean.server`` and ``.olean.private`` siblings when present.
    Decoding is memoised by address. Every decoding error raises :class:`OleanError` naming
    the file.
    """

    def __init__(self, path: Path | str, parts: str = "all"):
        super().__init__(path, parts)
        self._names: dict[int, Name] = {}
        self._levels: dict[int, Level] = {}
        self._exprs: dict[int, Expr] = {}
        self._consts: dict[int, ConstantInfo] = {}

    # ----------------------------------------------------------------- module data
    def module_data(self, part: int = -1) -> tuple[int, ...]:
        """Pointer fields of ``ModuleData`` of one part: imports, constNames, constants,
        extraConstNames, entries."""
        return self.fields(self.parts[part].header.root, 5)

    def is_module(self) -> bool:
        return bool(self.scalar(self.root, 0, 1))

    def imports(self) -> list[Name]:
        """Names of the direct imports."""
        return [self.name(self.fields(p, 1)[0]) for p in self.array(self.module_data(0)[0])]

    def import_records(self) -> list[ImportRecord]:
        """The direct imports with their flags. ``Lean.Import`` is ``{module : Name;
        importAll, isExported, isMeta : Bool}``: one pointer, then the three flags as bytes
        (measured: a ``public meta import`` reads ``(0, 1, 1)``)."""
        out = []
        for p in self.array(self.module_data(0)[0]):
            flags = [self.scalar(p, i, 1) for i in range(3)]
            if any(f > 1 for f in flags):
                raise OleanError(f"{self.path}: import record at {p:#x} has non-boolean flags")
            out.append(ImportRecord(self.name(self.fields(p, 1)[0]), *map(bool, flags)))
        return out

    def scoped_payload(self, entry: int) -> tuple[str | None, int]:
        """Unwrap one entry of a ``ScopedEnvExtension`` (instances, macros, elaborators,
        ``csimp``...): constructor 0 ``global e`` or 1 ``scoped ns e`` (measured on a
        ``scoped instance``). Returns (namespace or None, payload pointer)."""
        tag = self.tag(entry)
        if tag == 0:
            return None, self.fields(entry, 1)[0]
        if tag == 1:
            ns, payload = self.fields(entry, 2)[:2]
            return self.name(ns), payload
        raise OleanError(f"{self.path}: object at {entry:#x} is not a scoped-extension entry")

    def const_names(self, part: int = -1) -> list[Name]:
        return [self.name(p) for p in self.array(self.module_data(part)[1])]

    def extra_const_names(self, part: int = -1) -> list[Name]:
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
    def name(self, ptr: int) -> Name:
        """A ``Name`` with its components (strings and numbers), see :mod:`.names`.

        Every prefix met on the way is memoised too (names share their namespaces)."""
        names = self._names
        cached = names.get(ptr)
        if cached is not None:
            return cached
        chain: list[tuple[int, str | int]] = []
        w = self.ptr_size
        fmt2 = "<II" if w == 4 else "<QQ"
        p = ptr
        base = ANONYMOUS
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
                chain.append((p, self.nat(comp)))
            else:
                raise OleanError(f"{self.path}: object at {p:#x} is not a Name (tag {tag})")
            p = prefix
        cur = base
        for q, comp_v in reversed(chain):
            cur = cur.child(comp_v)
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
            if len(f) < EXPR_FIELDS.get(tag, 0):
                raise OleanError(f"{self.path}: Expr at {p:#x} (tag {tag}) has {len(f)} "
                                 f"pointer field(s), needs {EXPR_FIELDS[tag]} (corrupt .olean?)")
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

    def const_refs(self, ptr: int, seen: set[int] | None = None) -> set[Name]:
        """Names of all constants referenced by the expression at ``ptr``, without building
        the term (a pointer walk with a visited set; shared subterms are visited once)."""
        seen = set() if seen is None else seen
        out: set[Name] = set()
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
        vf = self.fields(val, CONSTANT_FIELDS[tag])
        cval = self.fields(vf[0], 3)
        name = self.name(cval[0])
        lparams = tuple(self.name(x) for x in self.list(cval[1]))
        kind = CONSTANT_KINDS[tag]
        value = None
        unsafe = False
        partial = False
        ctors: tuple[str, ...] = ()
        induct = None
        all_: tuple[str, ...] = ()
        if tag == 0:  # axiomInfo: cval; isUnsafe
            unsafe = bool(self.scalar(val, 0, 1))
        elif tag == 1:  # defnInfo: cval, value, hints, all; safety (u8)
            value = vf[1]
            all_ = tuple(self.name(x) for x in self.list(vf[3]))
            safety = self.scalar(val, 0, 1)  # DefinitionSafety: unsafe 0, safe 1, partial 2
            if safety > 2:
                raise OleanError(f"{self.path}: definition {name} has safety {safety}")
            unsafe, partial = safety == 0, safety == 2
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
        ci = ConstantInfo(name, kind, lparams, cval[2], value, unsafe, ctors, induct, all_,
                          partial)
        self._consts[ptr] = ci
        return ci

    def iter_constants(self, part: int = -1) -> Iterator[ConstantInfo]:
        for p in self.array(self.module_data(part)[2]):
            yield self.constant(p)

    # ----------------------------------------------------------------- declaration ranges
    def decl_ranges(self) -> dict[Name, tuple[int, int]]:
        """``declRangeExt`` entries of the most complete part: name -> (line, column) where the
        declaration's *name* starts (its ``selectionRange``; the full ``range`` would start at
        the docstring). Line 1-based, column 0-based (in code points), as Lean stores them.
        Empty if the extension is absent."""
        out: dict[Name, tuple[int, int]] = {}
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
