#!/bin/sh
# Install what the browser tests (pytest -m browser) need: Debian's Chromium and the PyPI
# playwright package, which drives that Chromium through executable_path. Idempotent: does
# nothing when both are already there. Never runs `playwright install` (it downloads browsers).
set -eu

PYTHON="${PYTHON:-python3}"

if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then
  echo "install-browser: chromium present: $(chromium --version 2>/dev/null || echo /usr/bin/chromium)"
else
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium
fi

if "$PYTHON" -c "import playwright.sync_api" >/dev/null 2>&1; then
  echo "install-browser: playwright present"
else
  "$PYTHON" -m pip install --quiet "playwright>=1.40"
fi

# Smoke test: launch the system Chromium headless through Playwright.
"$PYTHON" - <<'PY'
import tempfile

from playwright.sync_api import sync_playwright

with sync_playwright() as pw:
    ctx = pw.chromium.launch_persistent_context(
        tempfile.mkdtemp(prefix="chromium-"),
        executable_path="/usr/bin/chromium",
        headless=True,
        args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    )
    page = ctx.new_page()
    page.set_content("<p>ok</p>")
    assert page.inner_text("p") == "ok"
    ctx.close()
print("install-browser: headless chromium via playwright works")
PY
