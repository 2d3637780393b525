"""``pytools review-statements`` builds and audits the library the one way certify does
(:func:`pytools.lean.build_audit.build_and_audit`), so every rule runs, the ``kernel-option``
rule on the library's source and build files included (before, review-statements audited
without the sources and that rule never ran there).

No Lean is compiled: the build is stubbed, and the audit reads the committed fixture
``.olean`` files (``tests/fixtures/olean``, see tests/test_audit_rules.py) together with the
sources the command really passes: those of the small project made here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fixtures.audit_env import core_lib, index_cache

import pytools.cli
import pytools.lean.toolchain
import pytools.publish.cli
from pytools.lean import build_audit as library
from pytools.lean.audit import reviewed
from pytools.lean.build import BuildResult
from pytools.lean.toolchain import Toolchain
from pytools.results import registry

OLEAN = Path(__file__).parent / "fixtures" / "olean"
FIXTURE_MODULE = "AuditFixture.Bare"
SKIP_KERNEL = "set_option debug.skipKernelTC true in\ntheorem t : True := trivial\n"

CORE = core_lib()
pytestmark = pytest.mark.skipif(CORE is None, reason="core library .olean files not found")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    (tmp_path / "Proofs").mkdir()
    (tmp_path / "Proofs" / "A.lean").write_text("module\ntheorem t : True := trivial\n")
    (tmp_path / "Proofs.lean").write_text("module\npublic import Proofs.A\n")
    (tmp_path / "lakefile.lean").write_text("-- lake\n")
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.28.0\n")
    chain = Toolchain("wasm", "4.28.0", "0" * 40, ("lean",), CORE, "test")
    seen: dict[str, Any] = {"root": tmp_path}
    real_audit = library.audit_modules

    def fixture_audit(modules, search_path, *, sources=(), root=None, **kw):  # noqa: ANN001
        # the library's modules are not compiled here: audit a committed fixture module,
        # with the sources and root the command passes
        seen.update(modules=list(modules), sources=list(sources), root=root)
        return real_audit([FIXTURE_MODULE], [OLEAN], core_dir=CORE, sources=sources,
                          cache_dir=index_cache())

    monkeypatch.setattr(library, "build", lambda root, tc, jobs=None: BuildResult(
        order=["Proofs", "Proofs.A"], up_to_date=["Proofs", "Proofs.A"]))
    monkeypatch.setattr(library, "audit_modules", fixture_audit)
    monkeypatch.setattr(registry, "published_theorems", lambda results=None: [])
    monkeypatch.setattr(pytools.publish.cli, "project_root", lambda: tmp_path)
    monkeypatch.setattr(pytools.lean.toolchain, "find_toolchain", lambda lean, root=None: chain)
    return seen


def _review(*args: str) -> Any:
    return CliRunner().invoke(pytools.cli.cli, ["review-statements", *args])


def test_review_statements_reports_a_kernel_option_in_a_source(project: dict[str, Any]) -> None:
    (project["root"] / "Proofs" / "A.lean").write_text(SKIP_KERNEL)  # planted
    result = _review()
    assert result.exit_code == 1
    assert "FINDING: Proofs/A.lean: module sets an option that switches kernel checking off: " \
        "debug.skipKernelTC" in result.stderr
    assert project["root"] == "Proofs"  # the import-closure rule's root, as certify's
    assert [label for label, _ in project["sources"]] == [
        "Proofs.lean", "Proofs/A.lean", "lakefile.lean", "lean-toolchain"]


def test_review_statements_reports_a_kernel_option_in_the_lakefile(
    project: dict[str, Any],
) -> None:
    (project["root"] / "lakefile.lean").write_text(  # planted
        "package p where\n  leanOptions := #[⟨`debug.skipKernelTC, true⟩]\n")
    result = _review()
    assert result.exit_code == 1
    assert "FINDING: lakefile.lean: module sets an option that switches kernel checking off" \
        in result.stderr


def test_review_statements_without_the_option_has_no_kernel_option_finding(
    project: dict[str, Any],
) -> None:
    """The control: the same project, the option absent (the fixture module's own findings,
    prelude and core names, are still reported)."""
    result = _review()
    assert result.exit_code == 1
    assert "FINDING: AuditFixture.Bare" in result.stderr
    assert "kernel checking off" not in result.stderr


def test_accept_with_a_finding_writes_nothing(project: dict[str, Any]) -> None:
    (project["root"] / "Proofs" / "A.lean").write_text(SKIP_KERNEL)  # planted
    result = _review("--accept")
    assert result.exit_code == 1
    assert "not written" in result.stderr
    assert not (project["root"] / reviewed.REVIEWED_FILE).exists()
