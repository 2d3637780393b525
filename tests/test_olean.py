"""Tests of the pure-Python `.olean` reader (:mod:`pytools.olean`).

Fast tests read the small committed fixtures under ``tests/fixtures/olean/`` (compiled by the
registry WebAssembly Lean, 32-bit layout, see the README there) and synthetic regions written
by a tiny test-only encoder in both pointer widths (the 64-bit layout cannot be checked against
a native Lean here: no native Lean on this machine). The ``lean``-marked test recompiles the
fixture and checks it still reads the same.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytools.lean.olean import Expr, Module, OleanError, read_header

FIXTURES = Path(__file__).parent / "fixtures"
OLEAN = FIXTURES / "olean"
DEFECTS = OLEAN / "AuditFixture" / "Defects.olean"
PRELUDE = OLEAN / "AuditFixture" / "Prelude.olean"


# --------------------------------------------------------------------------- synthetic regions


class _Writer:
    """Minimal compacted-region encoder for tests (strings, Names, ctors, arrays)."""

    def __init__(self, width: int, base: int):
        self.w = width
        self.base = base
        self.first = 0x50 + 2 * width
        self.buf = bytearray(b"\0" * self.first)

    def _obj(self, tag: int, other: int, payload: bytes) -> int:
        while len(self.buf) % self.w:
            self.buf.append(0)
        off = len(self.buf)
        self.buf += struct.pack("<iHBB", 0, min(8 + len(payload), 0xFFFF), other, tag) + payload
        return self.base + off

    def _p(self, *ptrs: int) -> bytes:
        return b"".join(p.to_bytes(self.w, "little") for p in ptrs)

    def string(self, s: str) -> int:
        raw = s.encode() + b"\0"
        return self._obj(249, 0, self._p(len(raw), len(raw), len(s)) + raw)

    def ctor(self, tag: int, ptrs: list[int], scalars: bytes = b"") -> int:
        return self._obj(tag, len(ptrs), self._p(*ptrs) + scalars)

    def array(self, ptrs: list[int]) -> int:
        return self._obj(246, 0, self._p(len(ptrs), len(ptrs), *ptrs))

    def name(self, dotted: str) -> int:
        p = 1
        for comp in dotted.split("."):
            p = self.ctor(1, [p, self.string(comp)], b"\0" * 8)
        return p

    def finish(self, root: int) -> bytes:
        hdr = b"olean" + bytes([2, 0]) + b"4.28.0-test".ljust(33, b"\0") + b"0" * 40
        assert len(hdr) == 0x50
        self.buf[:0x50] = hdr
        self.buf[0x50:self.first] = self._p(self.base, root)
        return bytes(self.buf)


def _synthetic(width: int) -> bytes:
    w = _Writer(width, 0x7F0000000000 if width == 8 else 0x29030000)
    zero = w.ctor(0, [], b"\0" * 8)                     # Level.zero
    prop = w.ctor(3, [zero], b"\0" * 8)                 # Expr.sort 0
    bv = w.ctor(0, [1], b"\0" * 8)                      # Expr.bvar 0 (boxed Nat 0)
    pi = w.ctor(7, [w.name("p"), prop, bv], b"\0" * 8 + b"\0")   # ∀ (p : Prop), p
    cval = w.ctor(0, [w.name("Demo.ax"), 1, pi])        # ConstantVal
    axv = w.ctor(0, [cval], b"\0")                      # AxiomVal, isUnsafe := false
    ci = w.ctor(0, [axv])                               # ConstantInfo.axiomInfo
    imp = w.ctor(0, [w.name("Init")], b"\0\1\0")
    root = w.ctor(0, [w.array([imp]), w.array([w.name("Demo.ax")]), w.array([ci]),
                      w.array([]), w.array([])], b"\1")
    return w.finish(root)


@pytest.mark.parametrize("width", [4, 8])
def test_synthetic_region_both_pointer_widths(tmp_path: Path, width: int) -> None:
    path = tmp_path / "Demo.olean"
    path.write_bytes(_synthetic(width))
    m = Module(path)
    assert m.ptr_size == width
    assert m.header.lean_version == "4.28.0-test"
    assert m.is_module() and m.imports() == ["Init"]
    assert m.const_names() == ["Demo.ax"]
    (ci,) = m.constants()
    assert (ci.name, ci.kind, ci.value_ptr, ci.is_unsafe) == ("Demo.ax", "axiom", None, False)
    ty = m.expr(ci.type_ptr)
    assert ty.kind == "forallE" and ty.args[0] == "p" and ty.args[3] == "default"
    assert ty.args[1] == Expr("sort", (ty.args[1].args[0],)) and ty.args[2].args == (0,)
    assert m.const_refs(ci.type_ptr) == set()


def test_header_rejects_non_olean(tmp_path: Path) -> None:
    bad = tmp_path / "x.olean"
    bad.write_bytes(b"not an olean" * 20)
    with pytest.raises(OleanError, match="x.olean: not an .olean"):
        Module(bad)
    with pytest.raises(OleanError, match="no such .olean"):
        Module(tmp_path / "missing.olean")


# --------------------------------------------------------------------------- compiled fixtures


needs_fixture = pytest.mark.skipif(not DEFECTS.is_file(), reason="fixture .olean not built")


@needs_fixture
def test_fixture_header_and_parts() -> None:
    m = Module(DEFECTS)
    hdr = read_header(DEFECTS, DEFECTS.read_bytes())
    assert hdr.ptr_size == 4 and hdr.format_version == 2
    assert hdr.lean_version == "4.28.0-pre"
    assert hdr.githash == "38f3c0c45b8df6da2652faff6dcaa15afb5a6981"
    assert m.part_names() == ["Defects.olean", "Defects.olean.server", "Defects.olean.private"]
    assert m.is_module() and m.imports() == ["Init"]


@needs_fixture
def test_what_each_part_holds() -> None:
    """Measured: exported part weakens theorems to axioms (no proof); the private part holds
    `thmInfo` with the proof body, and only the private part reaches `sorryAx`."""
    m = Module(DEFECTS)
    exported = {c.name: c for c in m.constants(0)}
    private = {c.name: c for c in m.constants(2)}
    name = "AuditFixture.hidden_sorry"
    assert exported[name].kind == "axiom" and exported[name].value_ptr is None
    assert private[name].kind == "theorem" and private[name].value_ptr is not None
    assert "sorryAx" in m.const_refs(private[name].value_ptr)
    assert "sorryAx" not in m.const_refs(exported[name].type_ptr)
    # the server part repeats the exported constants and adds declaration ranges
    assert {c.name for c in m.constants(1)} == set(exported)
    assert "Lean.declRangeExt" in m.entries(1)
    assert not m.entries(0).get("Lean.declRangeExt")
    # private declarations exist only in the private part
    assert any(n.startswith("_private.") for n in private)
    assert not any(n.startswith("_private.") for n in exported)


@needs_fixture
def test_decl_ranges_and_kinds() -> None:
    m = Module(DEFECTS)
    ranges = m.decl_ranges()
    src = (FIXTURES / "lean" / "AuditFixture" / "Defects.lean").read_text().splitlines()
    line, col = ranges["AuditFixture.clean_control"]
    assert src[line - 1][col:].startswith("clean_control :")
    kinds = {c.name: c.kind for c in m.constants()}
    assert kinds["AuditFixture.planted_axiom"] == "axiom"
    assert kinds["AuditFixture.Pair"] == "inductive"
    assert kinds["AuditFixture.Pair.mk"] == "constructor"
    assert kinds["AuditFixture.Pair.rec"] == "recursor"
    assert kinds["AuditFixture.Color.next"] == "definition"
    assert kinds["AuditFixture.hiddenNat"] == "opaque"


@needs_fixture
def test_expr_decoding_is_memoised_and_shared() -> None:
    m = Module(DEFECTS)
    c = {c.name: c for c in m.constants()}["AuditFixture.axiom_far"]
    e1 = m.expr(c.type_ptr)
    assert m.expr(c.type_ptr) is e1
    assert e1.kind == "forallE" and e1.args[0] == "n"
    assert e1.args[1] == Expr("const", ("Nat", ()))


# --------------------------------------------------------------------------- tampering


def _copy_module(src: Path, dst_dir: Path) -> Path:
    for suffix in ("", ".server", ".private"):
        shutil.copyfile(src.with_name(src.name + suffix), dst_dir / (src.name + suffix))
    return dst_dir / src.name


def _read_everything(path: Path) -> None:
    m = Module(path)
    for i in range(len(m.parts)):
        m.entries(i)
        for c in m.constants(i):
            m.expr(c.type_ptr)
            if c.value_ptr is not None:
                m.const_refs(c.value_ptr)
    m.decl_ranges()


@needs_fixture
@pytest.mark.parametrize("how", ["magic", "truncate", "root", "zero-middle"])
def test_tampered_olean_gives_clear_error(tmp_path: Path, how: str) -> None:
    path = _copy_module(DEFECTS, tmp_path)
    target = path.with_name(path.name + ".private")
    data = bytearray(target.read_bytes())
    if how == "magic":
        data[0:5] = b"OLEAN"
    elif how == "truncate":
        data = data[: len(data) // 2]
    elif how == "root":
        data[0x54:0x58] = (0xDEADBEE0).to_bytes(4, "little")
    else:
        mid = len(data) // 2
        data[mid:mid + 256] = b"\xff" * 256
    target.write_bytes(bytes(data))
    with pytest.raises(OleanError, match="Defects.olean"):
        _read_everything(path)


@needs_fixture
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0x58, 10**9), st.integers(0, 255)), min_size=1, max_size=8))
@example(flips=[(1024, 0)])  # once an IndexError: an Expr object with too few fields
def test_random_corruption_never_crashes(tmp_path: Path, flips: list[tuple[int, int]]) -> None:
    """Any byte corruption either still reads or raises OleanError, never another exception."""
    path = _copy_module(DEFECTS, tmp_path)
    target = path.with_name(path.name + ".private")
    data = bytearray(target.read_bytes())
    for pos, val in flips:
        data[pos % len(data)] = val
    target.write_bytes(bytes(data))
    try:
        _read_everything(path)
    except OleanError as exc:
        assert "Defects.olean" in str(exc)


# --------------------------------------------------------------------------- recompile (slow)


def _reading(olean_dir: Path, module: str, core: Path) -> list[tuple]:
    from pytools.lean.audit.walk import audit_modules

    r = audit_modules([module], [olean_dir], core_dir=core, cache_dir=None)
    return [(d.name, d.kind, d.line, d.statement, d.statement_sha256, d.axioms, d.auxiliary,
             d.constants) for d in r.declarations] + [
        tuple(sorted((f.declaration, f.subject, f.rule) for f in r.findings))]


#: Fixture modules in compile order (a module after the ones it imports), with what each
#: costs to compile with the registry Lean on the 2-core machine (measured under load 6-12).
FIXTURE_MODULES = ("PreludeBase", "PreludeUse", "Bare", "Impostor", "Unsafe", "Meta",
                   "Defects", "Meaning", "Text", "Names")


#: Fixture modules compiled together (a module and the fixtures it imports), one test each so
#: that ``pytest -n 2`` compiles two groups at a time.
FIXTURE_GROUPS = (("PreludeBase", "PreludeUse"), ("Bare",), ("Impostor",), ("Unsafe",),
                  ("Meta",), ("Defects",), ("Meaning",), ("Text",), ("Names",))


def test_fixture_groups_cover_every_fixture() -> None:
    assert sorted(m for g in FIXTURE_GROUPS for m in g) == sorted(FIXTURE_MODULES)
    assert sorted(FIXTURE_MODULES) == sorted(
        p.stem for p in (FIXTURES / "lean" / "AuditFixture").glob("*.lean"))


@pytest.mark.lean
@pytest.mark.parametrize("group", FIXTURE_GROUPS, ids="+".join)
def test_fixtures_recompile_to_the_same_reading(tmp_path: Path, real_toolchain,
                                                group: tuple[str, ...]) -> None:
    """Recompile the committed fixture sources and check the new .olean files read exactly
    like the committed ones: same declarations, statements, hashes, axioms and findings of
    every rule (runs Lean: seconds for a `prelude` fixture, minutes for one importing Init)."""
    import time

    root = tmp_path / "src"
    shutil.copytree(FIXTURES / "lean", root)
    out = tmp_path / "build"
    (out / "AuditFixture").mkdir(parents=True)
    seconds = {}
    for mod in group:
        src = root / "AuditFixture" / f"{mod}.lean"
        olean = out / "AuditFixture" / f"{mod}.olean"
        t0 = time.monotonic()
        proc = real_toolchain.run_lean(["--json", "-R", str(root), str(src), "-o", str(olean)],
                                       [out], cwd=root, timeout=1800)
        seconds[mod] = round(time.monotonic() - t0)
        assert olean.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    print("fixture compile seconds:", seconds)
    for mod in group:
        if mod == "PreludeBase":
            continue  # read through PreludeUse
        module = f"AuditFixture.{mod}"
        assert _reading(out, module, real_toolchain.lib_dir) == _reading(
            OLEAN, module, real_toolchain.lib_dir), module


def _core() -> Path | None:
    from fixtures.audit_env import core_lib

    return core_lib()


@pytest.mark.skipif(_core() is None, reason="core library .olean files not found")
def test_big_numbers_and_core_kinds() -> None:
    """Nat literals above the boxed range are big numbers (2^32 already, in 32-bit)."""
    m = Module(_core() / "Init" / "Prelude.olean")
    cs = {c.name: c for c in m.constants()}
    for name, value in (("UInt32.size", 2**32), ("UInt64.size", 2**64)):
        lits = [e for e in _walk(m.expr(cs[name].value_ptr)) if e.kind == "lit"]
        assert lits and all(e.args == ("nat", value) for e in lits)
    assert cs["sorryAx"].kind == "axiom"
    assert cs["Quot.mk"].kind == "quot"


def _walk(e: Expr):
    yield e
    for a in e.args:
        if isinstance(a, Expr):
            yield from _walk(a)


def _header_only(base: int, root: int) -> bytes:
    import struct

    head = b"olean" + bytes([2]) + b"\0" + b"4.28.0-pre".ljust(0x21, b"\0")
    head += b"38f3c0c45b8df6da2652faff6dcaa15afb5a6981"
    assert len(head) == 0x50
    return head + struct.pack("<II", base, root)


def test_header_only_part_pointing_into_an_earlier_part_is_accepted(tmp_path) -> None:
    """Seen on the library root: its `.olean.private` holds no objects, only a root pointer
    into the `.olean.server` loaded before it."""
    from pytools.lean.olean import read_header

    header = read_header(tmp_path / "Proofs.olean.private", _header_only(0x29180000, 0x29170680))
    assert header.ptr_size == 4 and header.root < header.base


def test_header_only_part_with_root_past_the_end_is_refused(tmp_path) -> None:
    from pytools.lean.olean import OleanError, read_header

    with pytest.raises(OleanError, match="root pointer"):
        read_header(tmp_path / "X.olean", _header_only(0x29180000, 0x29180100))


# --------------------------------------------------------------------------- measured facts


FIX = OLEAN / "AuditFixture"


def test_partial_def_is_an_opaque_plus_a_partial_implementation() -> None:
    """Measured on `partial def loop`: `loop` is an opaque (safe), its implementation
    `loop._unsafe_rec` a definition of safety `partial`; `unsafe def` has safety `unsafe`."""
    m = Module(FIX / "Unsafe.olean")
    cs = {c.name: c for c in m.constants()}
    assert cs["loop"].kind == "opaque" and not cs["loop"].is_unsafe
    impl = cs["loop._unsafe_rec"]
    assert impl.kind == "definition" and impl.is_partial and not impl.is_unsafe
    assert cs["uns"].is_unsafe and not cs["uns"].is_partial
    assert not cs["safeLooking"].is_unsafe and not cs["safeLooking"].is_partial


def test_import_records_carry_the_meta_flag() -> None:
    """Measured: `public import Init.Notation` and `public meta import Init.Notation` are two
    records, flags (importAll, isExported, isMeta); a prelude module has no `Init`."""
    m = Module(FIX / "Meta.olean")
    assert [(i.module, i.import_all, i.exported, i.meta) for i in m.import_records()] == [
        ("Init.Notation", False, True, False), ("Init.Notation", False, True, True)]
    assert Module(FIX / "Bare.olean").import_records() == []


def test_scoped_extension_entries() -> None:
    """Measured on `scoped instance`: a scoped entry is constructor 1 (namespace, entry), a
    global one constructor 0 (entry)."""
    m = Module(FIX / "Meta.olean")
    scopes = set()
    for e in m.entries(2)["Lean.Meta.globalInstanceExtension"]:
        scope, payload = m.scoped_payload(e)
        scopes.add((scope, m.name(payload)))
    assert ("Sc", "Sc.scopedLE") in scopes and (None, "myLE") in scopes
    theorem = next(p for p in m.array(m.module_data(2)[2]) if m.tag(p) == 2)  # thmInfo
    with pytest.raises(OleanError, match="not a scoped-extension entry"):
        m.scoped_payload(theorem)
