"""Bad input named in issue #30: a one-line error naming the path and the problem, a non-zero
exit, no traceback, nothing half-written. Each test is a planted defect of the code before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pytools.cli import cli
from pytools.files import atomic_write_text, make_dirs
from pytools.traces.output import OutputError, write_outputs

SECRET = "ab" * 32
TRACE = b'{"hash_ids": [1, 2, 3]}\n{"hash_ids": [1, 2, 4]}\n{"hash_ids": [1, 5]}\n'


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args), env={"PYTOOLS_ADMISSION_SECRET": SECRET})
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert "Traceback" not in result.output
    return result


def one_error(result: Result, *needles: str) -> str:
    assert result.exit_code != 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    error = lines[-1]
    for needle in needles:
        assert needle in error, result.output
    return error


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A read-only folder (0555; honoured even when the tests run as root)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# --- traces / ceiling --------------------------------------------------------------------


def test_sampled_curve_into_a_read_only_folder(tmp_path: Path, read_only: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(TRACE)
    result = run("ceiling", "sampled-curve", str(trace), "--rate", "0.5",
                 "--out", str(read_only))
    one_error(result, str(read_only), "read-only")
    assert _files(read_only) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro", "t.jsonl"]


def test_write_outputs_wraps_a_failed_rename(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    import pytools.traces.output as output

    def refuse(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(output.os, "replace", refuse)
    with pytest.raises(OutputError, match=r"out/a.csv: could not be written: Permission denied"):
        write_outputs(out, {"a.csv": lambda h: h.write(b"x")})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temp folder left


def test_a_byte_order_mark_is_named_with_file_and_line(tmp_path: Path) -> None:
    trace = tmp_path / "bom.jsonl"
    trace.write_bytes(b"\xef\xbb\xbf" + TRACE)
    result = run("ceiling", "count", str(trace))
    error = one_error(result, f"{trace}:1: starts with a UTF-8 byte-order mark")
    assert "utf-8-sig" not in error


# --- admission ----------------------------------------------------------------------------


def test_add_tenant_under_a_regular_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x\n", encoding="utf-8")
    target = blocker / "tenants.json"
    one_error(run("admission", "add-tenant", "--tenants", str(target), "--id", "acme"),
              str(target), f"{blocker}: Not a directory")
    assert blocker.read_text(encoding="utf-8") == "x\n"


def test_add_tenant_into_a_read_only_folder(read_only: Path) -> None:
    target = read_only / "tenants.json"
    one_error(run("admission", "add-tenant", "--tenants", str(target), "--id", "acme"),
              str(target), "read-only")
    assert _files(read_only) == []


def test_add_tenant_to_a_binary_file(tmp_path: Path) -> None:
    target = tmp_path / "tenants.json"
    target.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    one_error(run("admission", "add-tenant", "--tenants", str(target), "--id", "acme"),
              str(target), "not UTF-8 text")
    assert target.read_bytes() == b"\x89PNG\r\n\x1a\n\xff\xfe"


def test_proxy_refuses_to_start_with_a_binary_tenants_file(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    target = tmp_path / "tenants.json"
    target.write_bytes(b"\xff\xfe\x00binary")
    result = run("admission", "--upstream", "http://127.0.0.1:9", "--tenants", str(target),
                 "--port", "0")
    one_error(result, str(target), "not UTF-8 text")
    assert "LISTENING" not in result.output


def test_add_tenant_still_works(tmp_path: Path) -> None:
    target = tmp_path / "tenants.json"
    assert run("admission", "add-tenant", "--tenants", str(target), "--id", "acme").exit_code == 0
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert [t["id"] for t in doc["tenants"]] == ["acme"]


# --- the atomic write itself --------------------------------------------------------------


def test_atomic_write_honours_a_read_only_folder(read_only: Path) -> None:
    with pytest.raises(PermissionError, match="read-only"):
        atomic_write_text(read_only / "x.txt", "x")
    assert _files(read_only) == []


def test_make_dirs_names_the_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(NotADirectoryError) as info:
        make_dirs(tmp_path / "f" / "a" / "b")
    assert info.value.filename == str(tmp_path / "f")


# --- keygen -------------------------------------------------------------------------------


def test_keygen_replaces_an_older_public_key_only(tmp_path: Path) -> None:
    assert run("keygen", str(tmp_path / "a.pem"), str(tmp_path / "pub.pem")).exit_code == 0
    older = (tmp_path / "pub.pem").read_bytes()
    assert run("keygen", str(tmp_path / "b.pem"), str(tmp_path / "pub.pem")).exit_code == 0
    assert (tmp_path / "pub.pem").read_bytes() != older
    (tmp_path / "notes.txt").write_bytes(b"mine\n")
    one_error(run("keygen", str(tmp_path / "c.pem"), str(tmp_path / "notes.txt")),
              str(tmp_path / "notes.txt"), "not a PEM public key")
    assert (tmp_path / "notes.txt").read_bytes() == b"mine\n"
    assert not (tmp_path / "c.pem").exists()
