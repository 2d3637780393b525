"""One name per stage, one printed form: commands are ``pytools COMMAND``; the ceiling's
command is ``ceiling`` (its result's name), its subcommands ``count``, ``simulate``,
``curve``, ``sweep``, ``lean-instance``, ... (``ceiling ceiling`` was renamed ``count``), and
neither ``pytools traces`` nor ``python -m pytools.traces`` is a command any more
(``pytools.traces`` is the trace library)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from pytools.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parent.parent

#: Files that may still print ``python -m pytools...``, each with why.
OLD_FORM_ALLOWED: dict[str, str] = {
    "reviewed/statements.json": "committed generated text (pytools.lean.audit.reviewed.ABOUT)",
    "pytools/lean/audit/reviewed.py": "ABOUT: the committed wording of reviewed/statements.json",
    "pytools/certify.py": "the shim says what it keeps working",
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


def test_ceiling_is_listed_and_traces_is_no_command() -> None:
    assert "ceiling" in COMMANDS and "traces" not in COMMANDS
    runner = CliRunner()
    listing = runner.invoke(cli, ["--help"]).output
    assert re.search(r"^  ceiling\s", listing, re.M) and not re.search(r"^  traces\s", listing,
                                                                         re.M)
    ceiling = runner.invoke(cli, ["ceiling", "--help"])
    assert ceiling.exit_code == 0
    subcommands = set(re.findall(r"^  ([a-z-]+)\s", ceiling.output.split("Commands:", 1)[1],
                                 re.M))
    assert {"count", "simulate", "curve", "sweep", "lean-instance"} <= subcommands
    assert "ceiling" not in subcommands  # the old stutter, `pytools ceiling ceiling FILE`
    traces = runner.invoke(cli, ["traces", "--help"])
    assert traces.exit_code == 2 and "No such command 'traces'" in traces.output


def test_python_m_pytools_traces_is_no_command() -> None:
    """``pytools.traces`` is the trace library (a package without ``__main__``), not a shim."""
    proc = subprocess.run([sys.executable, "-m", "pytools.traces", "--help"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "cannot be directly executed" in proc.stderr


#: The ceiling command's spellings before issue 38: the hidden alias ``pytools traces ...`` and
#: the stutter ``pytools ceiling ceiling FILE`` (now ``pytools ceiling count FILE``).
_OLD_SPELLING = re.compile(r"pytools (?:traces|ceiling ceiling)\b")


def test_the_ceiling_command_is_printed_one_way() -> None:
    found = {f: _OLD_SPELLING.findall(_checked_text(f))
             for f in _tracked_text_files() if f != "tests/test_cli.py"}
    assert {f: forms for f, forms in found.items() if forms} == {}


def test_old_spelling_check_catches_a_planted_one() -> None:
    assert _OLD_SPELLING.findall("run `pytools ceiling ceiling trace.jsonl`") == [
        "pytools ceiling ceiling"]
    assert _OLD_SPELLING.findall("or `pytools traces curve FILE --out DIR`") == ["pytools traces"]
    assert _OLD_SPELLING.findall("`pytools ceiling count FILE`, pytools.traces.curve") == []
