#!/usr/bin/env bash
# The served run on a GPU vLLM (issue #26 item 7), prepared for a machine with an accelerator:
# the same scenarios, timing attacker, prime and probe and throughput as `pytools leak serve`,
# with a model directory of Llama-3-8B's layer shapes and random weights (--load-format dummy:
# nothing is downloaded). Needs the project's .venv and a Python with a CUDA vLLM installed.
#   bash benchmarks/served_gpu.sh /path/to/gpu-venv/bin/python [OUT]
# Writes OUT (default artifacts/served-gpu.json); the certificate keeps the committed CPU record
# and says "not made" for the GPU run until such a record is recorded and committed.
# Then the stock and tenant-partitioned pools side by side (`pytools leak serve-partition`), the
# project's plugin (plugins/vllm_partition) installed into that Python first, into
# OUT's name with -partition (default artifacts/served-gpu-partition.json).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:?usage: bash benchmarks/served_gpu.sh GPU_PYTHON [OUT]}
OUT=${2:-artifacts/served-gpu.json}
"$PY" -c "import torch, vllm; assert torch.cuda.is_available(), 'no CUDA device'; print('vllm', vllm.__version__, torch.cuda.get_device_name(0))"
.venv/bin/pytools leak serve --python "$PY" --shape llama-8b --out "$OUT"
"$PY" -m pip install --quiet --no-deps --no-build-isolation ./plugins/vllm_partition
.venv/bin/pytools leak serve-partition --python "$PY" --shape llama-8b \
  --out "${OUT%.json}-partition.json"
