"""Shared fixtures: the project root, the shared data, the engines' interpreter and a real
Lean toolchain."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pytools.paths import mooncake_trace, project_root


def missing(reason: str) -> None:
    """A component a test needs is absent: skip, saying why; in CI (``$CI`` set) fail, since
    there a missing component is a failed install, never a reason to test less."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI: a missing component is a failure)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return project_root()


@pytest.fixture(scope="session")
def trace_path(repo_root: Path) -> Path:
    """The public Mooncake trace in the shared data; a test that takes it skips without it."""
    path = mooncake_trace(repo_root)
    if not path.is_file():
        missing(f"shared Mooncake trace absent at {path} (set PYTOOLS_SHARED; see "
                    "data/mooncake/README.md)")
    return path


@pytest.fixture(scope="session")
def engines_py(repo_root: Path) -> Path:
    """The engines venv's interpreter, able to import vLLM and SGLang (``.ci/engines``);
    engines-marked tests skip without one."""
    from pytools.results.leak.cli import engines_python

    py = engines_python(repo_root)
    if not py.is_file():
        missing(f"no engines venv at {py}: run `bash .ci/engines/install.sh` "
                    "(or set $PYTOOLS_ENGINES_PYTHON)")
    probe = subprocess.run([str(py), "-c", "import vllm, sglang"], capture_output=True,
                           text=True, timeout=600)
    if probe.returncode != 0:
        missing(f"the engines venv {py} cannot import vllm and sglang: "
                    f"{probe.stderr.strip().splitlines()[-1:]}")
    return py


@pytest.fixture(scope="session")
def served_py(repo_root: Path) -> Path:
    """The served engine's interpreter (vLLM's CPU build, ``.ci/served``); engines-marked tests
    that need it skip without one (in CI run.sh fails first when its install fails)."""
    from pytools.results.leak.served_run import served_python

    py = served_python(repo_root)
    if not py.is_file():
        missing(f"no served-engine venv at {py}: run `bash .ci/served/install.sh` "
                    "(or set $PYTOOLS_SERVED_PYTHON)")
    return py


@pytest.fixture(scope="session")
def real_toolchain():
    """A real Lean (native or the registry build); Lean-marked tests skip without one."""
    from pytools.lean.toolchain import ToolchainError, find_toolchain

    try:
        return find_toolchain()
    except ToolchainError as exc:
        missing(f"no Lean toolchain: {exc}")
