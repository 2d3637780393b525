"""The generated instance block of ``Proofs/Placement/Farthest.lean``: regenerated from the
committed instance byte for byte, planted edits caught. (A wrong miss count rejected by the
kernel: ``tests/test_ceiling_lean.py``, which compiles one fixture for all planted counts.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytools.paths import project_root
from pytools.results.placement.instance import INSTANCE_PATH, PlacementError, load_instance
from pytools.results.placement.lean_instance import (
    BEGIN,
    END,
    LEAN_FILE,
    farthest_misses,
    lean_block,
)
from pytools.results.placement.result import FARTHEST_FILE, THEOREMS, evidence

ROOT = project_root()
INSTANCE = load_instance(ROOT / INSTANCE_PATH)


def test_committed_block_matches_the_instance() -> None:
    assert FARTHEST_FILE.check(ROOT) == []


def test_block_contents() -> None:
    block = lean_block(INSTANCE)
    assert block.startswith(BEGIN + "\n") and block.endswith("\n" + END)
    assert f"def instanceCapacity : Nat := {INSTANCE.pooled_capacity}\n" in block
    assert f"def instanceFarthestMisses : Nat := {farthest_misses(INSTANCE)}\n" in block
    assert all(len(line) <= 100 for line in block.splitlines())
    sizes = ", ".join(str(s) for s in INSTANCE.block_sizes)
    assert f"[{sizes}]" in block
    assert lean_block(INSTANCE) == block


def test_a_planted_edit_is_caught(tmp_path: Path) -> None:
    lean = tmp_path / LEAN_FILE
    lean.parent.mkdir(parents=True)
    (tmp_path / INSTANCE_PATH).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / INSTANCE_PATH, tmp_path / INSTANCE_PATH)
    text = (ROOT / LEAN_FILE).read_text(encoding="utf-8")
    needle = f"def instanceCapacity : Nat := {INSTANCE.pooled_capacity}\n"
    lean.write_text(text.replace(needle, "def instanceCapacity : Nat := 99\n"), encoding="utf-8")
    lineno = text[:text.index(needle)].count("\n") + 1
    problems = FARTHEST_FILE.check(tmp_path)
    assert problems and f"differs from what its generator gives at line {lineno}" in problems[0]
    assert FARTHEST_FILE.write(tmp_path)
    assert FARTHEST_FILE.check(tmp_path) == []
    assert lean.read_text(encoding="utf-8") == text
    lean.write_text(text.replace(BEGIN, "-- something else"), encoding="utf-8")
    assert "no generated block" in FARTHEST_FILE.check(tmp_path)[0]


def test_kernel_counts_agree_with_the_solver() -> None:
    figures = evidence(ROOT).figures
    kc = figures["kernel_counts"]
    assert kc["farthest_misses"] == figures["objective"] == figures["wall"]
    assert kc["capacity_pages"] < kc["distinct_pages"]
    assert kc["theorem"] == THEOREMS[0] == "KVCache.Placement.instance_farthest_optimal"


def test_a_wrong_block_makes_the_evidence_fail(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / LEAN_FILE).parent.mkdir(parents=True)
    (root / INSTANCE_PATH).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / INSTANCE_PATH, root / INSTANCE_PATH)
    text = (ROOT / LEAN_FILE).read_text(encoding="utf-8")
    n = farthest_misses(INSTANCE)
    (root / LEAN_FILE).write_text(
        text.replace(f"def instanceFarthestMisses : Nat := {n}\n",
                     f"def instanceFarthestMisses : Nat := {n + 1}\n"), encoding="utf-8")
    with pytest.raises(PlacementError, match=r"Farthest\.lean: differs .* line \d+"):
        evidence(root)
