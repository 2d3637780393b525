"""Issue 42, row 5: ``site`` where the shared data is absent (a fresh clone elsewhere; here
``PYTOOLS_SHARED`` names an empty folder). A warning names the missing file and where it was
looked for; only the figures computed from it are badged ``no-data-available`` (the placement
hosts and the engines' versions are not); no line says its hash matched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pytools.publish.cli import site as site_main
from pytools.publish.site.release import load_release, registry_input_figures
from pytools.traces.trace import TRACE_INPUT_PATH

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "certificates" / "MANIFEST.json"


@pytest.fixture(scope="module")
def no_shared(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not COMMITTED.is_file():
        pytest.skip("no committed certificates")
    empty = tmp_path_factory.mktemp("shared-empty")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTOOLS_SHARED", str(empty))
        yield empty, load_release(ROOT)


def test_row5_only_figures_computed_from_the_trace_are_badged(no_shared: Any) -> None:
    _, release = no_shared
    rows = {r.id: {f.name: f for f in r.figures} for r in release.results}
    uses = registry_input_figures()
    for r in release.results:
        needs = uses.get(r.id, {}).get(TRACE_INPUT_PATH)
        reads_trace = r.cert is not None and any(
            i["path"] == TRACE_INPUT_PATH for i in r.cert.get("inputs", []))
        for name, row in rows[r.id].items():
            if reads_trace and (needs is None or name in needs):
                # badged for the trace, unless a committed input of the result is stale (an
                # earlier rule: a source edited since the certificate was made)
                assert row.state == "no-data-available" or (
                    row.state == "search-failed" and TRACE_INPUT_PATH not in row.detail
                ), (r.id, name, row.state, row.detail)
            else:
                assert row.state != "no-data-available", (r.id, name, row.detail)
    assert rows["pooled-placement"]["hosts"].state == "verified"
    assert rows["pooled-placement"]["routing"].state == "no-data-available"
    assert rows["tenant-leak"]["engine"].state != "no-data-available"


def test_row5_no_line_says_the_missing_trace_matched(no_shared: Any) -> None:
    _, release = no_shared
    for r in release.results:
        lines = [f.obtained for f in r.figures] + [r.common_obtained]
        for line in lines:
            matched = line.partition(" matched")[0] if " matched" in line else ""
            assert TRACE_INPUT_PATH not in matched, (r.id, line)
        for f in r.figures:
            if f.state == "no-data-available":
                assert f"{TRACE_INPUT_PATH} not present here" in f.obtained, (r.id, f.name)


def test_row5_site_warns_naming_what_is_missing(no_shared: Any, tmp_path: Path) -> None:
    empty, _ = no_shared
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTOOLS_SHARED", str(empty))
        result = CliRunner().invoke(site_main, ["--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith(f"warning: {TRACE_INPUT_PATH}: not present here (looked for "
                                  f"{empty}/data/mooncake/conversation_trace.jsonl); ")
    assert "badged no-data-available" in warnings[0]
    assert result.stdout.strip().endswith("index.html")


def test_every_declared_input_use_names_a_real_input_and_figures() -> None:
    if not COMMITTED.is_file():
        pytest.skip("no committed certificates")
    for rid, uses in registry_input_figures().items():
        cert = json.loads((ROOT / "certificates" / f"{rid}.json").read_bytes())
        inputs = {i["path"] for i in cert["inputs"]}
        for path, figures in uses.items():
            assert path in inputs, (rid, path)
            assert set(figures) <= set(cert["figures"]), (rid, figures)
