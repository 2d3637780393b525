#!/usr/bin/env bash
# Install the serving engines' cache code (vLLM 0.33.0, SGLang 0.5.23) into a venv of its own,
# for the engine-marked tests (pytest -m engines) and `pytools leak run`.
#   bash .ci/engines/install.sh [VENV]      (default: $PYTOOLS_ENGINES_VENV or .venv-engines)
# Idempotent: a stamp holding the hash of this script, requirements.txt and .ci/venv.sh skips a
# done install.
# Exits non-zero when the install fails (run.sh: in CI a failure, elsewhere the tests skip, saying why).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${1:-${PYTOOLS_ENGINES_VENV:-.venv-engines}}
HERE=.ci/engines
. .ci/venv.sh
venv_begin engines "$VENV" "$HERE"
# 1. torch and torchvision with their dependencies (their CUDA libraries included: torch
#    2.14.1's wheel does not import without them, even on the CPU)
"${PIP[@]}" torch==2.14.1 torchvision==0.29.1
t1=$(date +%s)
# 2. the engines and exactly what their cache modules import, pinned, without dependency
#    resolution (vLLM's full set would pull flashinfer, CUDA kernels, ... : ~9.5 GB)
"${PIP[@]}" --no-deps -r "$HERE/requirements.txt"
t2=$(date +%s)
# 3. smoke test: the modules the adapters and the validating upstream use
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md
import vllm.v1.core.kv_cache_manager  # noqa: F401
import vllm.entrypoints.openai.completion.protocol  # noqa: F401
import vllm.entrypoints.openai.chat_completion.protocol  # noqa: F401
import sglang.srt.mem_cache.radix_cache  # noqa: F401
import starlette, uvicorn, click  # noqa: F401,E401
print("engines: vllm", md.version("vllm"), "sglang", md.version("sglang"), "torch", md.version("torch"))
PY
t3=$(date +%s)
echo "engines: torch $((t1 - start))s, engines $((t2 - t1))s, smoke $((t3 - t2))s, total $((t3 - start))s"
venv_end engines "$VENV"
