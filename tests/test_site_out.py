"""``pytools site --out``: what it may write over (pytools.publish.site.placement). Each case
is a planted defect of the old ``build_site``, which renamed whatever stood at ``--out`` aside
and removed it."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from bundles import make_release
from click.testing import CliRunner

from pytools.publish.cli import site as site_main
from pytools.publish.site.page import build_site
from pytools.publish.site.placement import MARKER, SiteOutputError, place_site

NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _site(root: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(site_main, ["--root", str(root), "--out", str(out), *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.fixture
def release(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    make_release(root)
    return root


def test_absent_folder_is_created_with_the_marker(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "new" / "site"
    code, output = _site(release, out)
    assert code == 0, output
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    assert marker["tool"] == "pytools site"
    assert set(marker["files"]) == set(_tree(out)) - {MARKER}
    assert sorted(p.name for p in out.parent.iterdir()) == ["site"]  # no temp left


def test_empty_folder_is_used(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    code, output = _site(release, out)
    assert code == 0, output
    assert (out / "index.html").is_file() and (out / MARKER).is_file()


def test_non_empty_foreign_folder_is_refused_and_kept(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "mine.txt").write_text("keep\n", encoding="utf-8")
    for extra in ((), ("--force",)):
        code, output = _site(release, out, *extra)
        assert code == 1
        assert f"{out}: the folder is not empty and is not a site built by pytools site" in output
        assert _tree(out) == {"mine.txt": b"keep\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "project"]


def test_file_path_is_refused_and_kept(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "notes.txt"
    out.write_bytes(b"my notes\n")
    for target in (out, out / "site"):
        code, output = _site(release, target, "--force")
        assert code == 1
        assert f"{target}: cannot put the site there: {out} is a regular file" in output
    assert out.read_bytes() == b"my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "project"]


def test_read_only_folder_is_refused_and_kept(release: Path, tmp_path: Path) -> None:
    """The owner-write bit is honoured even by root (where os.access says yes)."""
    for name, content in (("ro-empty", False), ("ro-site", True)):
        out = tmp_path / name
        if content:
            build_site(release, out, now=NOW)
        else:
            out.mkdir()
        before = _tree(out)
        out.chmod(0o555)
        try:
            code, output = _site(release, out, "--force")
            assert code == 1
            assert f"{out}: the folder is read-only (mode 555)" in output
            assert _tree(out) == before
        finally:
            out.chmod(0o755)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project", "ro-empty", "ro-site"]


def test_previous_site_needs_force(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(release, out, now=NOW)
    before = _tree(out)
    code, output = _site(release, out)
    assert code == 1
    assert f"{out}: holds an earlier site; pass --force to replace it" in output
    assert _tree(out) == before


def test_previous_site_is_replaced_with_force(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(release, out, now=dt.datetime(2026, 11, 30, tzinfo=dt.UTC))
    old = _tree(out)
    code, output = _site(release, out, "--force")
    assert code == 0, output
    new = _tree(out)
    assert set(new) == set(old) and new["index.html"] != old["index.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project", "site"]  # old one gone


def test_force_never_removes_a_file_the_tool_did_not_write(release: Path,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(release, out, now=NOW)
    (out / "certificates" / "notes.md").write_text("mine\n", encoding="utf-8")
    code, output = _site(release, out, "--force")
    assert code == 1
    assert f"{out / 'certificates' / 'notes.md'}: was not written by pytools site" in output
    assert (out / "certificates" / "notes.md").read_text(encoding="utf-8") == "mine\n"
    # an edited file of the site is the user's now, too
    (out / "certificates" / "notes.md").unlink()
    (out / "index.html").write_text("edited\n", encoding="utf-8")
    code, output = _site(release, out, "--force")
    assert code == 1 and f"{out / 'index.html'}: was not written by pytools site" in output
    assert (out / "index.html").read_text(encoding="utf-8") == "edited\n"


def test_a_failed_write_leaves_the_earlier_site_and_no_temp(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    out = tmp_path / "site"
    place_site(out, {"index.html": b"one"})
    import pytools.publish.site.placement as placement

    def full_disk(path: object, data: bytes, **_: object) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(placement, "atomic_write_bytes", full_disk)
    with pytest.raises(SiteOutputError, match="No space left on device"):
        place_site(out, {"index.html": b"two"}, force=True)
    assert _tree(out)["index.html"] == b"one"
    assert os.listdir(tmp_path) == ["site"]
