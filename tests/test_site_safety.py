"""Issue 42, rows 1, 2, 6 and 7: ``pytools site --out`` never removes or writes anything
outside the site folder, never writes into a generated tree, never follows a link to an
earlier site, and honours a read-only parent even as root. Each test is a planted defect that
today's code let through."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from bundles import make_release
from click.testing import CliRunner

from pytools.publish.site.page import build_site
from pytools.publish.site.page import main as site_main
from pytools.publish.site.placement import MARKER

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


@pytest.mark.parametrize("entry", ["../victim.txt", "ABSOLUTE", "sub/../../victim.txt",
                                   "./../victim.txt"])
def test_row1_an_edited_marker_never_deletes_outside_the_site(
        release: Path, tmp_path: Path, entry: str) -> None:
    """Row 1: a marker edited to list ``../victim.txt`` or an absolute path is refused with
    --force, and both files outside the site stay."""
    out = tmp_path / "site"
    build_site(release, out, now=NOW)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    far = tmp_path / "elsewhere" / "far.txt"
    far.parent.mkdir()
    far.write_text("also mine\n", encoding="utf-8")
    rel = str(far) if entry == "ABSOLUTE" else entry
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    marker["files"][rel] = "0" * 64
    (out / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    before = _tree(out)
    code, output = _site(release, out, "--force")
    assert code == 1
    assert f"{out / MARKER}: lists {rel!r}, which is not a file inside the site" in output
    assert victim.read_text(encoding="utf-8") == "mine\n"
    assert far.read_text(encoding="utf-8") == "also mine\n"
    assert _tree(out) == before


def test_row1_a_marker_entry_through_a_link_out_is_refused(release: Path,
                                                          tmp_path: Path) -> None:
    """Row 1: an entry under a folder link that leaves the site (``out/l -> ..``)."""
    out = tmp_path / "site"
    build_site(release, out, now=NOW)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    marker["files"]["l/victim.txt"] = "0" * 64
    (out / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    (out / "l").symlink_to(tmp_path, target_is_directory=True)
    code, output = _site(release, out, "--force")
    assert code == 1 and "'l/victim.txt', which is not a file inside the site" in output
    assert victim.read_text(encoding="utf-8") == "mine\n"


def test_row1_removal_skips_an_unsafe_entry_even_unchecked(tmp_path: Path) -> None:
    """Row 1, the second lock: the remover itself skips an entry outside its folder."""
    from pytools.publish.site.placement import _remove_old_site

    old = tmp_path / "old"
    old.mkdir()
    (old / "a.txt").write_text("site\n", encoding="utf-8")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    _remove_old_site(old, ("a.txt", "../victim.txt", str(victim)))
    assert victim.read_text(encoding="utf-8") == "mine\n"
    assert not old.exists()
