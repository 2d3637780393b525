"""Shared fixtures: the project root, the shared data, and a real Lean toolchain."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytools.paths import mooncake_trace, project_root


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return project_root()


@pytest.fixture(scope="session")
def trace_path(repo_root: Path) -> Path:
    path = mooncake_trace(repo_root)
    if not path.is_file():
        pytest.skip(f"shared Mooncake trace not found at {path} (set PYTOOLS_SHARED)")
    return path


@pytest.fixture(scope="session")
def real_toolchain():
    """A real Lean (native or the registry build); Lean-marked tests skip without one."""
    from pytools.lean.toolchain import ToolchainError, find_toolchain

    try:
        return find_toolchain()
    except ToolchainError as exc:
        pytest.skip(f"no Lean toolchain: {exc}")
