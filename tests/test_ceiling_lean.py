"""Compile the Ceiling modules with a real Lean (slow: minutes per module).

The committed modules are compiled (and audited) by ``certify --check``; here planted
defects must be rejected by the kernel, so the counts of the generated window module are
really computed by Lean, not assumed: a wrong distinct count, and a packed stream with one
block changed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytools.lean.build import BUILD_DIR, build
from pytools.paths import project_root

CEILING = project_root() / "Proofs" / "Ceiling"
MODULES = ("Cache.lean", "Count.lean", "Mooncake.lean")


def copy_ceiling(dest: Path) -> Path:
    """The Ceiling sources, plus whatever the project has already built (so that, after
    `certify --check`, only the planted module is compiled again)."""
    root = dest / "proj"
    (root / "Proofs" / "Ceiling").mkdir(parents=True)
    for name in MODULES:
        shutil.copyfile(CEILING / name, root / "Proofs" / "Ceiling" / name)
    built = project_root() / BUILD_DIR
    if built.is_dir():
        shutil.copytree(built, root / BUILD_DIR)
    return root


def assert_rejected(root: Path, toolchain) -> None:
    bad = build(root, toolchain, jobs=1, roots=("Proofs",))
    assert not bad.ok
    assert "Proofs.Ceiling.Mooncake" in bad.failed
    assert any(d.severity == "error" and d.file.endswith("Mooncake.lean")
               for d in bad.diagnostics)


@pytest.mark.lean
def test_a_wrong_window_count_is_rejected_by_the_kernel(tmp_path: Path, real_toolchain) -> None:
    root = copy_ceiling(tmp_path)
    mooncake = root / "Proofs" / "Ceiling" / "Mooncake.lean"
    text = mooncake.read_text(encoding="utf-8")
    marker = "def windowDistinct : Nat := "
    start = text.index(marker) + len(marker)
    end = text.index("\n", start)
    wrong = int(text[start:end]) + 1
    mooncake.write_text(text[:start] + str(wrong) + text[end:], encoding="utf-8")
    assert_rejected(root, real_toolchain)


@pytest.mark.lean
def test_a_changed_block_is_rejected_by_the_kernel(tmp_path: Path, real_toolchain) -> None:
    # Block `v` sits in a slot as `v + 1`, lowest slot first: adding 1 to the first line
    # literal turns the stream's first block into another one (a fresh id would change the
    # distinct count; any change breaks at least one of the stated counts or the order
    # check), so the kernel must refuse the unchanged theorem.
    root = copy_ceiling(tmp_path)
    mooncake = root / "Proofs" / "Ceiling" / "Mooncake.lean"
    text = mooncake.read_text(encoding="utf-8")
    start = text.index("  [[0x") + len("  [[0x")
    end = text.index(",", start)
    first = int(text[start:end], 16)
    width = int(text[text.index("unpack ", text.index("def window :")) + 7:].split()[0])
    mask = (1 << width) - 1
    changed = (first & ~mask) | (((first & mask) + 40000) & mask)
    mooncake.write_text(text[:start] + format(changed, "x") + text[end:], encoding="utf-8")
    assert_rejected(root, real_toolchain)
