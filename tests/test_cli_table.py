"""One command pattern: ``pytools/cli.py`` is only the table of commands, in pipeline order,
each command defined in its package's ``cli.py`` and imported when it runs; ``pytools --help``
lists them from the table as click would from the commands themselves; ``python -m`` runs
only ``pytools`` and CI's ``pytools.certify``; a command whose extra is not installed says
which extra to install, in one line.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from pytools.cli import COMMANDS, cli, missing_extra

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytools"

#: The pipeline, in order: the Lean stage, the results, publishing, the proxy.
PIPELINE = ["toolchain", "build", "audit", "review-statements", "regenerate", "ceiling",
            "kernel", "placement", "leak", "certify", "verify", "keygen", "site", "admission"]

#: The ``cli.py`` each command lives in.
HOME: dict[str, str] = {
    "toolchain": "pytools.lean.cli", "build": "pytools.lean.cli", "audit": "pytools.lean.cli",
    # needs the published theorems (results), so a layer above lean: publish
    "review-statements": "pytools.publish.cli",
    "regenerate": "pytools.results.cli", "ceiling": "pytools.results.ceiling.cli",
    "kernel": "pytools.results.kernel.cli", "placement": "pytools.results.placement.cli",
    "leak": "pytools.results.leak.cli", "certify": "pytools.publish.cli",
    "verify": "pytools.publish.cli", "keygen": "pytools.publish.cli",
    "site": "pytools.publish.cli", "admission": "pytools.admission.cli",
}

#: Modules that run as ``python -m``, each with why.
RUN_AS_MAIN: dict[str, str] = {
    "pytools/__main__.py": "python -m pytools",
    "pytools/certify.py": "-m pytools.certify, CI's entry point (the card's)",
    "pytools/admission/standin.py": "a stand-in upstream server the proxy's tests start, not a "
                                    "command of the pipeline",
}

#: Modules outside a ``cli.py`` that define a click command or group, each with why.
COMMANDS_ELSEWHERE: dict[str, str] = {
    "pytools/admission/standin.py": "the stand-in upstream server's own command line",
    "pytools/results/command.py": "result_group, the factory of the results' groups that "
                                  "their cli.py modules use",
}

#: Packages the ``certify`` extra brings (blocked to play an install without it).
CERTIFY_EXTRA = ("jinja2", "ortools", "numba", "matplotlib", "duckdb", "msgspec")


def listed(output: str) -> list[str]:
    """The command names of a ``--help`` listing, in order."""
    section = output.split("Commands:\n", 1)[1]
    return re.findall(r"^  (\S+)", section, re.M)


def test_help_lists_the_commands_in_pipeline_order() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert listed(result.output) == PIPELINE
    assert list(COMMANDS) == PIPELINE


def test_listing_check_catches_a_planted_reordering() -> None:
    """Planted defect: a listing in alphabetical order is not the pipeline's."""
    group = click.Group("g", commands={n: click.Command(n, help="x.") for n in sorted(PIPELINE)})
    assert listed(CliRunner().invoke(group, ["--help"]).output) != PIPELINE


def test_the_table_summaries_are_the_commands_own() -> None:
    """``--help`` prints the table without importing a command; it must read as click would
    print the commands themselves (a docstring edited and not the table fails here)."""
    real = click.Group("cli", help=cli.help,
                       commands={n: COMMANDS[n].load() for n in COMMANDS})
    real.list_commands = lambda ctx: list(COMMANDS)  # type: ignore[method-assign]
    runner = CliRunner()
    assert runner.invoke(cli, ["--help"]).output == runner.invoke(real, ["--help"]).output


def test_every_command_lives_in_its_package_cli() -> None:
    assert {n: e.target.split(":")[0] for n, e in COMMANDS.items()} == HOME
    for name, entry in COMMANDS.items():
        command = entry.load()
        assert command.name in {name, "main"}, (name, command.name)
        module = sys.modules[entry.target.split(":")[0]]
        assert Path(module.__file__ or "").name == "cli.py"


def _defined_commands(path: Path) -> list[str]:
    """Functions of ``path`` that a click decorator makes a command or group."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                call = deco.func if isinstance(deco, ast.Call) else deco
                if isinstance(call, ast.Attribute) and call.attr in {"command", "group"}:
                    found.append(node.name)
    return found


def test_commands_are_defined_only_in_cli_modules() -> None:
    """No inline command bodies in ``pytools/cli.py`` (its one group aside), no command
    defined outside a package's ``cli.py``, and no ``register(main)`` closure."""
    outside = {p.relative_to(ROOT).as_posix() for p in sorted(PACKAGE.rglob("*.py"))
               if p.name != "cli.py" and _defined_commands(p)}
    assert outside <= set(COMMANDS_ELSEWHERE), sorted(outside - set(COMMANDS_ELSEWHERE))
    assert _defined_commands(PACKAGE / "cli.py") == ["cli"]
    closures = [p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py")
                if re.search(r"^def register\(", p.read_text(encoding="utf-8"), re.M)]
    assert closures == []


def test_command_check_catches_a_planted_inline_command(tmp_path: Path) -> None:
    """Planted defect: a command body written into the table module."""
    planted = tmp_path / "cli.py"
    planted.write_text("import click\n@click.group()\ndef cli():\n    pass\n"
                       "@cli.command()\ndef toolchain():\n    pass\n")
    assert _defined_commands(planted) == ["cli", "toolchain"]


def test_only_the_known_modules_run_as_main() -> None:
    runs = {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py")
            if p.name == "__main__.py"
            or '__name__ == "__main__"' in p.read_text(encoding="utf-8")}
    assert runs <= set(RUN_AS_MAIN), sorted(runs - set(RUN_AS_MAIN))
    assert {p for p in RUN_AS_MAIN if (ROOT / p).exists()} <= runs


def _without_certify_extra(*argv: str) -> subprocess.CompletedProcess[str]:
    """``pytools ARGV`` in a fresh interpreter where the ``certify`` extra's packages cannot
    be imported (as in an install of the default dependencies alone)."""
    script = (f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
              f"for m in {CERTIFY_EXTRA!r}:\n    sys.modules[m] = None\n"
              f"from pytools.cli import cli\ncli({list(argv)!r}, prog_name='pytools')\n")
    return subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                          cwd=ROOT, check=False)


def test_a_command_without_its_extra_names_the_extra_in_one_line() -> None:
    for argv in (["certify", "--check"], ["ceiling", "--help"], ["site"]):
        done = _without_certify_extra(*argv)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1, done.stderr
        assert lines[0].startswith(f"Error: pytools {argv[0]} needs the optional dependencies "
                                   "`certify` (") and "pip install 'pytools[certify]'" in lines[0]
    listing = _without_certify_extra("--help")
    assert listing.returncode == 0 and listed(listing.stdout) == PIPELINE
    assert _without_certify_extra("verify", "--help").returncode == 0


def test_missing_extra_leaves_other_import_errors_alone() -> None:
    """Planted defects: a missing project module, and a command that needs no extra, are
    not reported as a missing extra (the traceback stays: the install is broken)."""
    assert missing_extra("certify", ModuleNotFoundError(name="pytools.gone")) is None
    assert missing_extra("verify", ModuleNotFoundError(name="jsonschema")) is None
    assert missing_extra("no-such-command", ModuleNotFoundError(name="ortools")) is None
    error = missing_extra("placement", ModuleNotFoundError(name="ortools.sat"))
    assert error is not None and "(ortools is not installed)" in error.message
