"""The one generated-file mechanism (:mod:`pytools.results.generated`) and its verb,
``pytools regenerate``: the committed files pass, planted stale files are caught with the file,
the first differing line and the command, and a rewrite is atomic and only where bytes change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytools.cli import cli
from pytools.results.cli import regenerate
from pytools.results.generated import (
    Generated,
    GenerationError,
    first_difference,
    regenerate_command,
)
from pytools.results.registry import published_results

#: Every generated file of every result, with the result's id.
FILES = [(spec.id, g) for spec in published_results() for g in spec.generated]

#: What the kernel's and the placement's generators read (the ceiling's reads the shared trace).
TRACE_FREE_INPUTS = (
    "pytools/results/kernel/workflows.json",
    "Proofs/Kernel/Workflows.lean",
    "Proofs/Kernel/Table.lean",
    "pytools/results/kernel/mac_workflows.json",
    "Proofs/Kernel/MacWorkflows.lean",
    "Proofs/Kernel/MacTable.lean",
    "data/placement/instance.json",
    "Proofs/Placement/Farthest.lean",
    "data/placement/binding.json",
    "Proofs/Placement/Binding.lean",
)
TRACE_FREE_RESULTS = ["single-owner-kernel", "pooled-placement"]


def _fake(render_text: str = "a\nb\nc\n") -> Generated:
    def render(root: Path) -> str:
        if render_text == "bad input":
            raise ValueError("input.txt: line 3: not a number")
        return render_text

    return Generated(Path("out/file.lean"), "pytools regenerate fake", render)


def _tree(root: Path, repo_root: Path) -> dict[str, bytes]:
    """A copy of the trace-free generated files and their inputs under ``root``."""
    for rel in TRACE_FREE_INPUTS:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo_root / rel, root / rel)
    return _snapshot(root)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_first_difference() -> None:
    assert first_difference(b"a\nb\nc\n", b"a\nX\nc\n") == 2
    assert first_difference(b"a\nb\n", b"a\nb\nc\n") == 3  # a prefix: past its last line
    assert first_difference(b"", b"a\n") == 1


@pytest.mark.parametrize(("result_id", "generated"), FILES,
                         ids=[g.path.as_posix() for _, g in FILES])
def test_committed_generated_files_are_up_to_date(
        request: pytest.FixtureRequest, repo_root: Path, result_id: str,
        generated: Generated) -> None:
    if result_id == "demand-fetch-ceiling":
        request.getfixturevalue("trace_path")  # skips without the shared trace
    assert generated.check(repo_root) == []
    assert generated.command == regenerate_command(result_id)  # one command form


def test_every_result_with_lean_data_lists_its_generated_files() -> None:
    listed = {g.path.as_posix() for _, g in FILES}
    assert listed == {"Proofs/Ceiling/Mooncake.lean", "Proofs/Ceiling/MooncakeTrace.lean",
                      "Proofs/Kernel/Workflows.lean",
                      "Proofs/Kernel/Table.lean", "Proofs/Kernel/MacWorkflows.lean",
                      "Proofs/Kernel/MacTable.lean", "data/placement/instance.json",
                      "Proofs/Placement/Farthest.lean", "Proofs/Leak/PartitionCases.lean",
                      "data/placement/binding.json", "Proofs/Placement/Binding.lean"}


def test_check_names_the_file_the_line_and_the_command(tmp_path: Path) -> None:
    g = _fake()
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "file.lean"
    assert g.check(tmp_path) == [f"{target}: missing (generate it with "
                                 "`pytools regenerate fake`)"]
    target.write_text("a\nX\nc\n")
    [problem] = g.check(tmp_path)
    assert str(target) in problem and "at line 2" in problem
    assert "`pytools regenerate fake`" in problem
    target.write_text("a\nb\nc\n")
    assert g.check(tmp_path) == []
    # Bytes the caller generated are compared instead of rendering again.
    assert "at line 1" in g.check(tmp_path, expected=b"z\nb\nc\n")[0]


def test_bad_input_is_a_problem_of_the_file_and_writes_nothing(tmp_path: Path) -> None:
    g = _fake("bad input")
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "file.lean"
    target.write_text("old\n")
    [problem] = g.check(tmp_path)
    assert problem.startswith(f"{target}: cannot generate it: input.txt: line 3")
    with pytest.raises(GenerationError, match="input.txt: line 3"):
        g.write(tmp_path)
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["file.lean"]


def test_write_is_atomic_and_only_where_bytes_change(tmp_path: Path) -> None:
    g = _fake()
    assert g.write(tmp_path) is True
    target = tmp_path / "out" / "file.lean"
    assert target.read_bytes() == b"a\nb\nc\n"
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    mtime = target.stat().st_mtime_ns
    assert g.write(tmp_path) is False
    assert target.stat().st_mtime_ns == mtime
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["file.lean"]  # no temp file


def test_regenerate_check_lists_a_planted_stale_file_and_writes_nothing(
        tmp_path: Path, repo_root: Path) -> None:
    _tree(tmp_path, repo_root)
    bench = tmp_path / "Proofs/Kernel/Workflows.lean"
    text = bench.read_bytes()
    lineno = text[:text.index(b"decide +kernel")].count(b"\n") + 1
    bench.write_bytes(text.replace(b"decide +kernel", b"decide +kernek", 1))  # one byte
    before = _snapshot(tmp_path)
    res = CliRunner().invoke(regenerate, ["--check", "--root", str(tmp_path),
                                          *TRACE_FREE_RESULTS])
    assert res.exit_code == 1, res.output
    assert f"{bench}: differs from what its generator gives at line {lineno}" in res.output
    assert "`pytools regenerate single-owner-kernel`" in res.output
    assert "Table.lean" not in res.output and "Farthest.lean" not in res.output
    assert _snapshot(tmp_path) == before


def test_regenerate_rewrites_the_stale_file_then_check_passes(
        tmp_path: Path, repo_root: Path) -> None:
    committed = _tree(tmp_path, repo_root)
    (tmp_path / "Proofs/Kernel/Table.lean").write_bytes(b"stale\n")
    (tmp_path / "data/placement/instance.json").unlink()
    res = CliRunner().invoke(regenerate, ["--root", str(tmp_path), *TRACE_FREE_RESULTS])
    assert res.exit_code == 0, res.output
    assert "wrote Proofs/Kernel/Table.lean" in res.output
    assert "wrote data/placement/instance.json" in res.output
    assert "Proofs/Kernel/Workflows.lean: up to date" in res.output
    assert _snapshot(tmp_path) == committed  # the committed bytes, no temp file left
    res = CliRunner().invoke(regenerate, ["--check", "--root", str(tmp_path),
                                          *TRACE_FREE_RESULTS])
    assert res.exit_code == 0, res.output


def test_regenerate_refuses_an_unknown_result() -> None:
    res = CliRunner().invoke(regenerate, ["--check", "no-such-result"])
    assert res.exit_code == 2
    assert "no-such-result" in res.output and "single-owner-kernel" in res.output


def test_regenerate_is_wired_into_pytools() -> None:
    res = CliRunner().invoke(cli, ["regenerate", "--help"])
    assert res.exit_code == 0 and "--check" in res.output
