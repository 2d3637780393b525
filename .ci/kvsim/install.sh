#!/usr/bin/env bash
# Install kvcache-simulator 0.1.3 (the trace authors' radix-tree KV-cache simulator) into a venv
# of its own, for the prefix-curve oracle test (pytest -m engines,
# tests/test_ceiling_prefix_kvsim.py) and benchmarks/bench_prefix_kvsim.py.
#   bash .ci/kvsim/install.sh [VENV]      (default: $PYTOOLS_KVSIM_VENV or .venv-kvsim)
# The version is pinned in requirements.txt (no dependencies); the smoke test also compiles its
# C++ backend (needs `c++`), so that timed runs never include the compilation.
# Idempotent: a stamp holding the hash of this script, requirements.txt and .ci/venv.sh skips a
# done install.
# Exits non-zero when the install or the smoke test fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${1:-${PYTOOLS_KVSIM_VENV:-.venv-kvsim}}
HERE=.ci/kvsim
. .ci/venv.sh
venv_begin kvsim "$VENV" "$HERE"
"${PIP[@]}" --no-deps -r "$HERE/requirements.txt"
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md

from kvcache_sim.cpp_backend import ensure_cpp_simulator

print("kvcache-simulator:", md.version("kvcache-simulator"), "C++ backend:",
      ensure_cpp_simulator())
PY
venv_end kvsim "$VENV"
