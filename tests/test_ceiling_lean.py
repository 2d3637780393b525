"""Planted wrong counts must be rejected by the Lean kernel (slow: one Lean compile).

The committed modules are compiled (and audited) by ``certify --check``. Here one fixture
module, compiled once and shared by every test below, restates the kernel-computed counts
of ``Proofs/Ceiling/Mooncake.lean`` and ``Proofs/Placement/Farthest.lean`` with planted
defects, each in its own theorem: a wrong distinct count of the window, the window's stream
with one block changed, a wrong farthest-next-use miss count, and (from
``Proofs/Ceiling/MooncakeTrace.lean``) one more new block of the warm window than the kernel
counts. The kernel must reject each of
them (an error inside that theorem), and accept the one correct control theorem: so the counts
are really computed by Lean, not assumed.
"""

from __future__ import annotations

import re

import pytest
from planted import Planted, project_copy

from pytools.lean.build import build
from pytools.paths import project_root
from pytools.results.ceiling.lean_instance import Packing, fo_pass, unpack

ROOT = project_root()
SOURCES = (
    "Proofs/Ceiling/Cache.lean",
    "Proofs/Ceiling/Count.lean",
    "Proofs/Ceiling/Mooncake.lean",
    "Proofs/Ceiling/MooncakeTrace.lean",
    "Proofs/Placement/Wall.lean",
    "Proofs/Placement/Farthest.lean",
    "Proofs/Common/List.lean",  # imported by Wall
    "Proofs/Common/Nat.lean",  # imported by Count
)
WINDOW_RUNS = re.compile(r"theorem runsRun_windowRunPages :\n"
                         r"    (runsRun \d+ \d+ \d+ windowRunPages)\n"
                         r"      ⟨(\d+), (\d+), (\d+), (\d+), true⟩ = "
                         r"⟨(\d+), (\d+), (\d+), (\d+), true⟩ := by")
COUNT_CALL = re.compile(r"\(count (\d+) (\d+) (\d+) windowPages\)")
FIRST_LINE = re.compile(r"^  \[\[0x([0-9a-f]+),$", re.M)


def changed_first_line(text: str) -> tuple[int, int, int, int]:
    """``(w, m, base, line)``: the window's packing and its first line with the lowest slot's
    block changed so that Python's counting pass (the Lean one, transcribed) disagrees with
    the committed counts."""
    w, m, base = (int(g) for g in COUNT_CALL.search(text).groups())
    first = int(FIRST_LINE.search(text).group(1), 16)
    pages = [[int(x, 16) for x in re.findall(r"0x([0-9a-f]+)", text.split("def windowPages")[1]
                                              .split("def window :")[0])]]
    packing = Packing(w, m, base)
    stream = unpack(pages, packing)
    good = fo_pass(stream, base)
    mask = (1 << w) - 1
    for delta in range(1, 1 << 12):
        slot = ((first & mask) + delta) & mask
        if slot == 0:
            continue
        line = (first & ~mask) | slot
        changed = unpack([[line, *pages[0][1:]]], packing)
        after = fo_pass(changed, base)
        if (after.ok, after.len, after.dist) != (True, good.len, good.dist):
            return w, m, base, line
    raise AssertionError("no single-block change breaks the counts")  # pragma: no cover


def warm_blocks(trace_text: str) -> dict[str, str]:
    """The run pass over the window (from the state lines 1-1200 leave) with one more new
    block than the kernel counts (planted), and as committed (control)."""
    found = WINDOW_RUNS.search(trace_text)
    call = found.group(1)
    s = [int(g) for g in found.groups()[1:5]]
    t = [int(g) for g in found.groups()[5:9]]
    start = f"⟨{s[0]}, {s[1]}, {s[2]}, {s[3]}, true⟩"

    def theorem(name: str, end: list[int]) -> str:
        return (f"theorem {name} :\n    {call}\n      {start} =\n"
                f"        ⟨{end[0]}, {end[1]}, {end[2]}, {end[3]}, true⟩ := by\n"
                "  rw [← runsRunV_eq]\n  decide +kernel\n")

    return {"wrong_warm_new": theorem("wrong_warm_new", [t[0], t[1] + 1, t[2] + 1, t[3]]),
            "warm_control": theorem("warm_control", t)}


def planted_module(text: str, trace_text: str | None = None
                   ) -> tuple[str, dict[str, tuple[int, int]]]:
    w, m, base, line = changed_first_line(text)
    call = f"count {w} {m} {base}"
    blocks = {
        "wrong_distinct": f"""theorem wrong_distinct :
    ({call} windowPages).dist = windowDistinct + 1 := by
  rw [← countV_eq]
  decide +kernel
""",
        "changed_block": f"""noncomputable def changedPages : List (List Nat) :=
  match windowPages with
  | (_ :: ns) :: ps => (0x{line:x} :: ns) :: ps
  | ps => ps

theorem changed_block :
    ({call} changedPages).ok = true ∧ ({call} changedPages).len = windowReferences ∧
      ({call} changedPages).dist = windowDistinct := by
  rw [← countV_eq]
  decide +kernel
""",
        "wrong_misses": """theorem wrong_misses :
    pooledMisses (farthest instanceSize instanceCapacity) instanceTrace =
      instanceFarthestMisses + 1 := by
  decide +kernel
""",
        "control": """theorem control :
    pooledMisses (farthest instanceSize instanceCapacity) instanceTrace =
      instanceFarthestMisses := by
  decide +kernel
""",
    }
    if trace_text is not None:
        blocks.update(warm_blocks(trace_text))
    out = ["module", "", "public import Proofs.Ceiling.Mooncake",
           "public import Proofs.Ceiling.MooncakeTrace",
           "public import Proofs.Placement.Farthest", "",
           "open KVCache.Ceiling.Packed KVCache.Ceiling.Mooncake KVCache.Placement", "",
           "namespace Planted", ""]
    ranges = {}
    for name, block in blocks.items():
        start = len(out) + 1
        out.extend(block.splitlines())
        ranges[name] = (start, len(out))
        out.append("")
    out.append("end Planted")
    return "\n".join(out) + "\n", ranges


@pytest.fixture(scope="module")
def planted(tmp_path_factory, real_toolchain) -> Planted:
    root = project_copy(tmp_path_factory.mktemp("planted") / "proj", SOURCES)
    text, ranges = planted_module((ROOT / SOURCES[2]).read_text(encoding="utf-8"),
                                  (ROOT / SOURCES[3]).read_text(encoding="utf-8"))
    (root / "Proofs" / "Planted.lean").write_text(text, encoding="utf-8")
    return Planted(build(root, real_toolchain, jobs=1, roots=("Proofs",)), ranges)


def test_the_planted_change_breaks_the_python_counts() -> None:
    text = (ROOT / SOURCES[2]).read_text(encoding="utf-8")
    module, ranges = planted_module(text)
    assert set(ranges) == {"wrong_distinct", "changed_block", "wrong_misses", "control"}
    trace_text = (ROOT / SOURCES[3]).read_text(encoding="utf-8")
    _, ranges = planted_module(text, trace_text)
    assert {"wrong_warm_new", "warm_control"} <= set(ranges)
    assert "sorry" not in module and "native_decide" not in module
    w, _, _, line = changed_first_line(text)
    first = int(FIRST_LINE.search(text).group(1), 16)
    assert line != first and line >> w == first >> w  # only the lowest slot differs


@pytest.mark.lean
def test_the_fixture_compiles_only_up_to_the_planted_errors(planted: Planted) -> None:
    assert not planted.result.ok
    assert planted.result.failed == ["Proofs.Planted"], planted.result.failed
    assert planted.errors_in("control") == []
    assert planted.errors_in("warm_control") == []
    located = sum(len(planted.errors_in(name)) for name in planted.ranges)
    errors = [d for d in planted.result.diagnostics if d.severity == "error"]
    assert located == len(errors), [str(d) for d in errors]


@pytest.mark.lean
def test_a_wrong_window_count_is_rejected_by_the_kernel(planted: Planted) -> None:
    assert planted.errors_in("wrong_distinct")


@pytest.mark.lean
def test_a_changed_block_is_rejected_by_the_kernel(planted: Planted) -> None:
    assert planted.errors_in("changed_block")


@pytest.mark.lean
def test_a_wrong_miss_count_is_rejected_by_the_kernel(planted: Planted) -> None:
    assert planted.errors_in("wrong_misses")


@pytest.mark.lean
def test_a_wrong_warm_count_is_rejected_by_the_kernel(planted: Planted) -> None:
    assert planted.errors_in("wrong_warm_new")
