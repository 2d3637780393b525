"""The offline verifier loads only what it needs: importing it, asking ``pytools verify
--help`` and verifying the committed certificates load no module of the audit, the ``.olean``
reader or the results, nor any package of the ``certify`` extra. Each probe runs in a fresh
interpreter (this one has loaded everything), the ``-m pytools verify`` command itself included,
and the planted defect (a verifier that takes the axiom names from the audit again) shows the
check catches it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytools.lean.audit import policy as audit_policy
from pytools.lean.axioms import ALLOWED_AXIOM_NAMES
from pytools.publish import certificate_policy

ROOT = Path(__file__).resolve().parent.parent

#: Modules (and their submodules) the verifier must not load, each with why.
FORBIDDEN: dict[str, str] = {
    "pytools.lean.audit": "the audit: ~5k lines an auditor need not run to check a JSON file",
    "pytools.lean.olean": "the .olean reader",
    "pytools.results": "the results (solver, traces, engines)",
    "ortools": "certify extra", "numba": "certify extra", "matplotlib": "certify extra",
    "duckdb": "certify extra", "msgspec": "certify extra", "jinja2": "certify extra",
}

#: The probes: Python run in a fresh interpreter, then the loaded modules are read.
IMPORT_VERIFIER = "import pytools.publish.verify"
VERIFY_HELP = ("from pytools.cli import cli\n"
               "try:\n    cli(['verify', '--help'], prog_name='pytools')\n"
               "except SystemExit as e:\n    assert e.code == 0, e.code\n")
VERIFY_COMMITTED = ("from pytools.cli import cli\n"
                    "try:\n    cli(['verify', '--manifest-sha256', PIN], prog_name='pytools')\n"
                    "except SystemExit as e:\n    assert e.code == 0, e.code\n")


def forbidden_loaded(modules: list[str]) -> list[str]:
    """The loaded modules that :data:`FORBIDDEN` rules out."""
    return sorted(m for m in modules
                  if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))


def loaded_by(code: str, path: Path = ROOT) -> list[str]:
    """Every module a fresh interpreter has loaded after running ``code`` with the ``pytools``
    found under ``path``."""
    script = (f"import sys\nsys.path.insert(0, {str(path)!r})\n{code}\nimport json\n"
              "print('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                          cwd=path, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.rsplit("\nMODULES ", 1)[1])


def loaded_by_command(*args: str) -> list[str]:
    """Every module ``python -m pytools ARGS`` imports, as ``-X importtime`` lists them (run
    from the checkout, which is where ``-m`` finds ``pytools``)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pytools", *args],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return sorted({line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
                   if line.startswith("import time:") and line.count("|") == 2}
                  - {"imported package"})


def _pin() -> str:
    return re.findall(r"Manifest SHA-256: `([0-9a-f]{64})`",
                      (ROOT / "README.md").read_text(encoding="utf-8"))[0]


@pytest.mark.parametrize("probe", [IMPORT_VERIFIER, VERIFY_HELP, VERIFY_COMMITTED],
                         ids=["import", "verify-help", "verify-committed"])
def test_the_verifier_loads_nothing_forbidden(probe: str) -> None:
    modules = loaded_by(probe.replace("PIN", repr(_pin())))
    assert forbidden_loaded(modules) == []
    assert "pytools.publish.verify" in modules  # the probe did reach the verifier
    print(f"{len([m for m in modules if m.split('.')[0] == 'pytools'])} project modules")


def test_python_m_pytools_verify_loads_nothing_forbidden() -> None:
    for args in (["verify", "--help"], ["verify", "--manifest-sha256", _pin()]):
        modules = loaded_by_command(*args)
        assert "pytools.publish.verify" in modules and "click" in modules, modules
        assert forbidden_loaded(modules) == [], args


def test_the_check_catches_a_verifier_that_imports_the_audit(tmp_path: Path) -> None:
    """Planted defect: a copy of the package whose certificate policy takes the axiom names
    from the audit's pins again (as it did before), so the verifier loads the audit."""
    shutil.copytree(ROOT / "pytools", tmp_path / "pytools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    policy = tmp_path / "pytools" / "publish" / "certificate_policy.py"
    text = policy.read_text(encoding="utf-8")
    planted = text.replace("from pytools.lean.axioms import ALLOWED_AXIOM_NAMES",
                           "from pytools.lean.audit.policy import ALLOWED_AXIOMS as "
                           "ALLOWED_AXIOM_NAMES")
    assert planted != text
    policy.write_text(planted, encoding="utf-8")
    found = forbidden_loaded(loaded_by(IMPORT_VERIFIER, tmp_path))
    assert "pytools.lean.audit.policy" in found, found


def test_the_names_verify_checks_are_the_axioms_the_audit_pins() -> None:
    assert sorted(audit_policy.ALLOWED_AXIOMS) == sorted(ALLOWED_AXIOM_NAMES)
    assert tuple(sorted(ALLOWED_AXIOM_NAMES)) == certificate_policy.ALLOWED_AXIOMS
