"""The minimal verify install: ``pip install`` of the project with its default dependencies
alone (click, jsonschema, cryptography) verifies the committed certificates under the pin
README publishes, every verdict green; and a command that needs the ``certify`` extra says so
in one line instead of a traceback.

Marked ``install`` (pip, a fresh venv, PyPI or pip's cache): ``bash run.sh test`` runs it
after the fast tests, which exclude it. The project is installed non-editable from a copy of
its tracked packaging files (so the build writes nothing into the checkout), and the
installed copy runs isolated (``python -I``, from a folder outside the checkout), so it
cannot import the checkout's ``pytools``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.install

#: What the default install must hold, and what it must not (the ``certify`` extra).
DEFAULT = {"click", "jsonschema", "cryptography"}
CERTIFY_EXTRA = {"jinja2", "matplotlib", "ortools", "numba", "msgspec", "duckdb"}


def readme_pin(readme: str) -> str:
    """The manifest pin of README's generated summary (``Manifest SHA-256: `HEX```)."""
    found = re.findall(r"Manifest SHA-256: `([0-9a-f]{64})`", readme)
    if len(found) != 1:
        raise ValueError(f"README.md: expected one 'Manifest SHA-256' pin, found {len(found)}")
    return found[0]


def test_readme_pin_is_read_from_the_summary_and_nothing_else() -> None:
    pin = "ab" * 32
    assert readme_pin(f"x\nManifest SHA-256: `{pin}`. Pin it\n") == pin
    with pytest.raises(ValueError, match="found 0"):  # planted: no pin
        readme_pin("Manifest SHA-256: abc\n")
    with pytest.raises(ValueError, match="found 2"):  # planted: two pins
        readme_pin(f"Manifest SHA-256: `{pin}`\nManifest SHA-256: `{'cd' * 32}`\n")


def _source_copy(dest: Path) -> Path:
    """The tracked files ``pip install`` needs (pyproject, README, the package), copied."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "pyproject.toml", "README.md",
                             "pytools"], capture_output=True, text=True, check=True).stdout
    for rel in listed.split():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    return dest


@pytest.fixture(scope="module")
def minimal_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the project installed from the checkout, default dependencies only."""
    base = tmp_path_factory.mktemp("install")
    venv = base / "venv"
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    done = subprocess.run([str(py), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", str(_source_copy(base / "src"))],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    print(f"minimal install: {time.monotonic() - start:.1f} s")
    return py


def _installed(py: Path) -> set[str]:
    listed = subprocess.run([str(py), "-m", "pip", "list", "--format", "json",
                             "--disable-pip-version-check"], capture_output=True, text=True,
                            check=True).stdout
    return {p["name"].lower() for p in json.loads(listed)}


def _run(py: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(py), "-I", "-m", "pytools", *args], capture_output=True,
                          text=True, cwd=cwd, check=False)


def test_minimal_install_verifies_the_committed_certificates(minimal_venv: Path,
                                                             tmp_path: Path) -> None:
    installed = _installed(minimal_venv)
    assert installed >= DEFAULT and not (CERTIFY_EXTRA & installed), sorted(installed)
    where = subprocess.run([str(minimal_venv), "-I", "-c",
                            "import pytools; print(pytools.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert not Path(where.strip()).is_relative_to(ROOT), where  # the installed copy runs
    pin = readme_pin((ROOT / "README.md").read_text(encoding="utf-8"))
    done = _run(minimal_venv, tmp_path, "verify", "--json", "--manifest-sha256", pin,
                "--manifest", str(ROOT / "certificates" / "MANIFEST.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["green"] is True and report["manifest"]["anchor"]["summary"] == "pinned"
    listed = json.loads((ROOT / "certificates" / "MANIFEST.json").read_text())["files"]
    assert len(report["verdicts"]) == len(listed) + 1  # the manifest and every file it lists
    assert all(v["green"] for v in report["verdicts"]), report["verdicts"]


def test_minimal_install_names_the_extra_a_command_needs(minimal_venv: Path,
                                                        tmp_path: Path) -> None:
    done = _run(minimal_venv, tmp_path, "certify", "--check")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "pytools certify needs the optional dependencies `certify`" in lines[0]
    assert "pip install 'pytools[certify]'" in lines[0]
    listing = _run(minimal_venv, tmp_path, "--help")
    assert listing.returncode == 0 and "certify" in listing.stdout, listing.stderr
