"""``verify --rebuild`` on a fresh clone reproduces the committed certificates (Lean-marked).

The clone gets the committed files only; it reuses the build folder certify already made in
this checkout (in CI: the ``certify --check`` run just before), so the incremental builder
finds every module up to date from content hashes and recompiles nothing, and the test costs
an audit and the figures, not a second full build. Measured 2026-12-07: 336 s on a
2-core machine at load ~3, two Lean tests at a time (the audit's .olean index is cached by
absolute path, which the clone does not share). Where the committed
sources differ from what was built, the builder recompiles those modules (slow, but right),
and the comparison then reports the .olean hashes it could not reproduce.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytools.paths import shared_dir

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.lean
def test_rebuild_reproduces_the_committed_certificates_on_a_fresh_clone(
    tmp_path: Path, real_toolchain: object
) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-local", str(ROOT), str(clone)], check=True)
    build = ROOT / ".lake" / "build"
    if build.is_dir():
        shutil.copytree(build, clone / ".lake" / "build", symlinks=True)
    if (ROOT / "node_modules").exists():
        (clone / "node_modules").symlink_to((ROOT / "node_modules").resolve())
    env = {**os.environ, "PYTOOLS_SHARED": str(shared_dir(ROOT))}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytools", "verify", "--rebuild", "--json"],
        cwd=clone, env=env, capture_output=True, text=True, check=False, timeout=3600,
    )
    seconds = time.monotonic() - start
    assert proc.stdout, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    rebuild = report["rebuild"]
    print(f"rebuild on a fresh clone: {seconds:.1f}s, {rebuild.get('seconds')}")
    assert rebuild["green"], (rebuild["problems"], proc.stderr[-3000:])
    assert proc.returncode == 0
    listed = json.loads((clone / "certificates" / "MANIFEST.json").read_bytes())["files"]
    assert set(rebuild["compared"]) == {e["path"] for e in listed} | {
        "certificates/MANIFEST.json"}
    assert all(v["green"] for v in report["verdicts"])
