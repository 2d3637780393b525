#!/usr/bin/env bash
# Install LMCache 0.5.6 (its own eviction policies: global LRU and per-salt isolated LRU with
# quotas) into a venv of its own, for the LMCache prime-and-probe test (pytest -m engines,
# tests/test_leak_engines.py) and `pytools leak probe --engine lmcache`.
#   bash .ci/lmcache/install.sh [VENV]      (default: $PYTOOLS_LMCACHE_VENV or .venv-lmcache)
# torch 2.13.0 first (the CPU wheel every machine here has on disk; without it pip would take a
# CUDA build of several GB), then lmcache with the versions pinned in requirements.txt (pip
# freeze of a resolved install, 2026-12-06) and no further resolution.
# Idempotent: a stamp holding the hash of this script, requirements.txt and .ci/venv.sh skips a
# done install.
# Exits non-zero when the install or the smoke test fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${1:-${PYTOOLS_LMCACHE_VENV:-.venv-lmcache}}
HERE=.ci/lmcache
. .ci/venv.sh
venv_begin lmcache "$VENV" "$HERE"
"${PIP[@]}" torch==2.13.0
"${PIP[@]}" --no-deps -r "$HERE/requirements.txt"
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md
import lmcache.v1.distributed.eviction_policy  # noqa: F401
print("lmcache:", md.version("lmcache"), "torch", md.version("torch"))
PY
venv_end lmcache "$VENV"
