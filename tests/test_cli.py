"""One name per stage, one printed form: commands are ``pytools COMMAND``; the ceiling's
command is ``ceiling`` (its result's name), ``traces`` stays accepted but hidden, and
``python -m pytools.traces`` keeps working."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from pytools.cli import COMMANDS, HIDDEN_ALIASES, cli

ROOT = Path(__file__).resolve().parent.parent

#: Files that may still print ``python -m pytools...``, each with why.
OLD_FORM_ALLOWED: dict[str, str] = {
    "reviewed/statements.json": "committed generated text (pytools.lean.audit.reviewed.ABOUT)",
    "pytools/lean/audit/reviewed.py": "ABOUT: the committed wording of reviewed/statements.json",
    "pytools/certify.py": "the shim says what it keeps working",
    "pytools/traces.py": "the shim says what it keeps working",
    "pytools/admission/standin.py": "a module run by path, not a command",
    "tests/test_cli.py": "this test",
}

#: ``python -m pytools.X`` or ``python -m pytools X``: the forms no longer printed.
_OLD_FORM = re.compile(r"python -m pytools(?:\.[a-z_]+| [a-z])")


def old_forms(text: str) -> list[str]:
    return _OLD_FORM.findall(text)


def _checked_text(rel: str) -> str:
    """The file's text; for the README, without its generated summary block (committed,
    certify --check compares it) and its Quick start section (edited by the lead)."""
    text = (ROOT / rel).read_text(encoding="utf-8")
    if rel == "README.md":
        text = re.sub(r"<!-- pytools\.certify:summary -->.*?<!-- /pytools\.certify:summary -->",
                      "", text, flags=re.S)
        text = re.sub(r"^## Quick start\n.*?(?=^## )", "", text, flags=re.S | re.M)
    return text


def _tracked_text_files() -> list[str]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True,
                            text=True, check=True).stdout.split()
    return [f for f in listed if not f.startswith(("Proofs/", "certificates/"))
            and f != "Proofs.lean"
            and Path(f).suffix in {".py", ".md", ".js", ".j2", ".sh", ".lean", ".json", ".toml"}]


def test_commands_are_printed_one_way() -> None:
    found = {f: old_forms(_checked_text(f))
             for f in _tracked_text_files() if f not in OLD_FORM_ALLOWED}
    assert {f: forms for f, forms in found.items() if forms} == {}
    stale = [f for f in OLD_FORM_ALLOWED if not old_forms(_checked_text(f))]
    assert stale == [], f"allowed but printing no old form any more: {stale}"


def test_old_form_check_catches_a_planted_one() -> None:
    assert old_forms("missing (run `python -m pytools.certify`)") == ["python -m pytools.certify"]
    assert old_forms("run `python -m pytools kernel lean-table`") == ["python -m pytools k"]
    assert old_forms("run `pytools certify`; also `python -m pytools`") == []
    assert old_forms(_checked_text("README.md")) == []


def test_ceiling_is_listed_and_traces_is_a_hidden_alias() -> None:
    assert "ceiling" in COMMANDS and "traces" not in COMMANDS
    assert HIDDEN_ALIASES == {"traces": "ceiling"}
    runner = CliRunner()
    listing = runner.invoke(cli, ["--help"]).output
    assert re.search(r"^  ceiling\s", listing, re.M) and not re.search(r"^  traces\s", listing,
                                                                         re.M)
    ceiling = runner.invoke(cli, ["ceiling", "--help"])
    traces = runner.invoke(cli, ["traces", "--help"])
    assert ceiling.exit_code == traces.exit_code == 0
    body = ceiling.output.split("\n", 1)[1]  # past the usage line, which names the alias
    assert body == traces.output.split("\n", 1)[1] and "lean-instance" in body


def test_python_m_pytools_traces_still_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "pytools.traces", "--help"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "lean-instance" in proc.stdout
