"""Issue 42, row 10: ``pytools verify --manifest LOOP`` (a symlink loop) printed a traceback
and exited 1; it is one line and exit 2, as every other unusable manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytools.publish.cli import verify as verify_main
from pytools.publish.manifest import bundle_root


@pytest.fixture
def loop(tmp_path: Path) -> Path:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    return a


@pytest.mark.parametrize("extra", [[], ["--json"], ["--manifest-sha256", "0" * 64]])
def test_row10_a_manifest_symlink_loop_is_one_line_and_exit_2(loop: Path,
                                                             extra: list[str]) -> None:
    result = CliRunner().invoke(verify_main, ["--manifest", str(loop), *extra])
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, RuntimeError)
    assert "Traceback" not in result.output
    if extra == ["--json"]:
        report = json.loads(result.output)
        assert report["green"] is False
        assert report["manifest"]["error"].startswith(f"manifest {loop}: ")
    else:
        assert len(result.output.strip().splitlines()) == 1
        assert result.output.startswith(f"error: manifest {loop}: ")


def test_row10_bundle_root_never_raises_on_a_loop(loop: Path) -> None:
    assert bundle_root(loop) == loop.parent
