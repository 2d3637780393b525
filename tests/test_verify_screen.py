"""Issue 42, row 3 and verify's closing line: ``pytools verify``'s text output prints every
string from a file or a path escaped (a control character never reaches the terminal), and
ends with one summary line: how many green and red, and what anchors the manifest."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from bundles import make_release
from click.testing import CliRunner

from pytools.publish.canonical import with_body_hash, write_canonical
from pytools.publish.cli import verify as verify_main
from pytools.publish.screen import printable
from pytools.publish.strictjson import parse_json

#: One character of each class that acts on a terminal, and how verify shows it.
CONTROLS = {
    "C0 ESC": ("\x1b", "\\x1b"),
    "C0 CR": ("\r", "\\r"),
    "C0 BS": ("\x08", "\\x08"),
    "DEL": ("\x7f", "\\x7f"),
    "C1 CSI": ("\x9b", "\\x9b"),
    "bidi RLO": ("\u202e", "\\u202e"),
    "bidi isolate": ("\u2066", "\\u2066"),
    "zero-width space": ("\u200b", "\\u200b"),
    "line separator": ("\u2028", "\\u2028"),
}


def _run(*args: str) -> Any:
    return CliRunner().invoke(verify_main, list(args))


def _all_output(result: Any) -> str:
    return result.output + (result.stderr if result.stderr_bytes is not None else "")


@pytest.mark.parametrize("cls", CONTROLS)
def test_row3_a_file_name_with_a_control_is_printed_escaped(tmp_path: Path, cls: str) -> None:
    char, shown = CONTROLS[cls]
    paths = make_release(tmp_path)
    forged = tmp_path / f"x{char}[2K{char}GREEN  fake.json"
    shutil.copyfile(paths["floor"], forged)
    forged.write_bytes(forged.read_bytes().replace(b"zero-leak", b"zero-lake"))
    result = _run("--manifest", str(paths["manifest"]), str(forged))
    assert result.exit_code == 1, result.output
    out = _all_output(result)
    assert char not in out
    assert f"RED  {tmp_path}/x{shown}[2K{shown}GREEN  fake.json" in out
    assert not any(line.startswith("GREEN") for line in out.splitlines())


@pytest.mark.parametrize("cls", CONTROLS)
def test_row3_a_result_with_controls_is_printed_escaped(tmp_path: Path, cls: str) -> None:
    char, shown = CONTROLS[cls]
    paths = make_release(tmp_path)
    cert = parse_json(paths["floor"].read_bytes())
    cert["result"] = f"{char}[1A{char}[2K{char}GREEN evil{char}[8m"
    write_canonical(paths["floor"], with_body_hash(cert))
    result = _run("--manifest", str(paths["manifest"]), str(paths["floor"]))
    assert result.exit_code == 1, result.output
    out = _all_output(result)
    assert char not in out
    assert f"{shown}[1A{shown}[2K{shown}GREEN evil{shown}[8m" in out
    assert out.splitlines()[-1].startswith("0 green, 1 red")


def test_printable_leaves_text_and_escapes_the_backslash() -> None:
    assert printable("ünïcode ✓ 日本 a b") == "ünïcode ✓ 日本 a b"
    # a name that spells an escape out is not shown as the escape of a control
    assert printable("a\\x1b") == "a\\\\x1b"
    assert printable("a\x1b") == "a\\x1b"
    assert printable("\U000e0001") == "\\U000e0001"  # a tag character (Cf), astral


def test_summary_line_green_and_not_pinned(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    result = _run("--manifest", str(paths["manifest"]))
    assert result.exit_code == 0, result.output
    listed = json.loads(paths["manifest"].read_bytes())["files"]
    assert result.output.splitlines()[-1] == (
        f"{len(listed) + 1} green, 0 red; manifest not pinned: integrity only")


def test_summary_line_pinned_and_red(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    pin = hashlib.sha256(paths["manifest"].read_bytes()).hexdigest()
    paths["csv"].write_bytes(paths["csv"].read_bytes() + b"9,9\n")
    result = _run("--manifest", str(paths["manifest"]), "--manifest-sha256", pin)
    assert result.exit_code == 1, result.output
    listed = json.loads(paths["manifest"].read_bytes())["files"]
    assert result.output.splitlines()[-1] == (
        f"{len(listed)} green, 1 red; manifest pinned")


def test_summary_line_wrong_pin_says_the_anchor_failed(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    result = _run("--manifest", str(paths["manifest"]), "--manifest-sha256", "0" * 64)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1].endswith("; manifest anchor failed")
    assert result.output.splitlines()[-1].startswith("0 green, ")
