"""Compile the Ceiling modules with a real Lean (slow: minutes per module).

The committed modules are compiled (and audited) by ``certify --check``; here a planted
defect (a wrong distinct count of the excerpt in the generated instance) must be rejected
by the kernel, so the agreement of Lean's ``distinct`` with Python's count is really
checked, not assumed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytools.lean.build import BUILD_DIR, build
from pytools.paths import project_root

CEILING = project_root() / "Proofs" / "Ceiling"
MODULES = ("Cache.lean", "Mooncake.lean")


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


@pytest.mark.lean
def test_a_wrong_excerpt_count_is_rejected_by_the_kernel(tmp_path: Path, real_toolchain) -> None:
    root = copy_ceiling(tmp_path)
    mooncake = root / "Proofs" / "Ceiling" / "Mooncake.lean"
    text = mooncake.read_text(encoding="utf-8")
    marker = "theorem excerpt_distinct : distinct excerpt = "
    start = text.index(marker) + len(marker)
    end = text.index(" ", start)
    wrong = int(text[start:end]) + 1
    mooncake.write_text(text[:start] + str(wrong) + text[end:], encoding="utf-8")
    bad = build(root, real_toolchain, jobs=1, roots=("Proofs",))
    assert not bad.ok
    assert "Proofs.Ceiling.Mooncake" in bad.failed
    assert any(d.severity == "error" and d.file.endswith("Mooncake.lean")
               for d in bad.diagnostics)
