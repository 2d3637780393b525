"""The engine-marked group (``pytest -m engines``): re-run the leak scenarios on vLLM's and
SGLang's own cache code and compare with the committed evidence files, byte for byte; check the
keyed salts with vLLM's own validator. Needs the engines' venv (``bash .ci/engines/install.sh``,
or ``$PYTOOLS_ENGINES_PYTHON``); skips, saying why, where it is absent. No Lean."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import missing

from pytools.results.leak.evidence import evidence_path

pytestmark = pytest.mark.engines


def in_engines(py: Path, root: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(py), *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_engine_rerun_matches_committed_evidence(engines_py: Path, repo_root: Path,
                                                 tmp_path: Path, engine: str) -> None:
    out = tmp_path / f"{engine}.json"
    done = in_engines(engines_py, repo_root, "-m", "pytools", "leak", "--root", str(repo_root),
                      "run", "--engine", engine, "--out", str(out), "--here")
    assert done.returncode == 0, done.stderr[-3000:]
    committed = evidence_path(repo_root, engine)
    assert out.read_bytes() == committed.read_bytes(), (
        f"re-running {engine} gives different evidence than {committed}")


def test_keyed_salts_pass_vllms_own_validator(engines_py: Path, repo_root: Path) -> None:
    """The salts the evidence uses, and fresh ones, pass vLLM's validate_cache_salt; the
    planted bad salts fail it, as they fail :func:`vllm_salt_problem`."""
    salts = json.loads(evidence_path(repo_root, "vllm").read_text())["salts"]["keyed"]
    script = r"""
import json, secrets, sys
from vllm.entrypoints.generate.base.protocol import validate_cache_salt
from pytools.admission.salt import keyed_salt, vllm_salt_problem
good = list(json.loads(sys.argv[1]).values())
good += [keyed_salt(secrets.token_bytes(32), f"t{i}") for i in range(50)]
bad = ["", "a/b", "a@b", "a\\b", "a\x00b", "x" * 129]
def vllm_ok(s):
    try:
        validate_cache_salt(s)
        return True
    except Exception:
        return False
assert all(vllm_ok(s) and vllm_salt_problem(s) is None for s in good), "good salt refused"
assert not any(vllm_ok(s) for s in bad), "vLLM accepted a planted bad salt"
assert all(vllm_salt_problem(s) is not None for s in bad), "our rules accepted a bad salt"
print("ok", len(good), len(bad))
"""
    done = in_engines(engines_py, repo_root, "-c", script, json.dumps(salts), timeout=600)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-3000:]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_engine_prime_and_probe_matches_committed_record(engines_py: Path, repo_root: Path,
                                                         tmp_path: Path, engine: str) -> None:
    """Prime and probe re-run on the engine's own cache code (shared pool and one cache per
    tenant) gives the committed raw record, byte for byte."""
    out = tmp_path / f"probe-{engine}.json"
    done = in_engines(engines_py, repo_root, "-m", "pytools", "leak", "--root", str(repo_root),
                      "probe", "--engine", engine, "--out", str(out), "--here")
    assert done.returncode == 0, done.stderr[-3000:]
    committed = repo_root / "data" / "leak" / f"probe-{engine}.json"
    assert out.read_bytes() == committed.read_bytes(), (
        f"re-running prime and probe on {engine} gives a different record than {committed}")


@pytest.fixture(scope="module")
def lmcache_py(repo_root: Path) -> Path:
    """LMCache's own venv (``.venv-lmcache`` or ``$PYTOOLS_LMCACHE_PYTHON``: ``pip install
    torch==2.13.0 lmcache==0.5.6``); the test skips, saying so, without one."""
    from pytools.results.leak.cli import engines_python

    py = engines_python(repo_root, engine="lmcache")
    if not py.is_file():
        missing(f"no LMCache venv at {py} (set $PYTOOLS_LMCACHE_PYTHON)")
    done = in_engines(py, repo_root, "-c", "import lmcache.v1.distributed.eviction_policy",
                      timeout=300)
    if done.returncode != 0:
        missing(f"{py} cannot import LMCache: {done.stderr[-500:]}")
    return py


def test_lmcache_prime_and_probe_matches_committed_record(lmcache_py: Path, repo_root: Path,
                                                          tmp_path: Path) -> None:
    """Prime and probe re-run on LMCache's own eviction policies (one store for every tenant:
    global LRU, and per-salt isolated LRU with quotas) gives the committed raw record."""
    out = tmp_path / "probe-lmcache.json"
    done = in_engines(lmcache_py, repo_root, "-m", "pytools", "leak", "--root", str(repo_root),
                      "probe", "--engine", "lmcache", "--out", str(out), "--here")
    assert done.returncode == 0, done.stderr[-3000:]
    committed = repo_root / "data" / "leak" / "probe-lmcache.json"
    assert out.read_bytes() == committed.read_bytes(), (
        f"re-running prime and probe on LMCache gives a different record than {committed}")
