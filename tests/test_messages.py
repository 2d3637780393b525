"""Issue 42, row 12: each message says what is true, and says it short. One test per message
the issue listed (the page's "too-large" size is in ``test_browser_verdicts.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bundles import make_release
from click.testing import CliRunner
from test_site import _b64, _node

from pytools.admission.tenants import ConfigError, add_tenant
from pytools.publish.anchor import AnchorOptions, check_anchor
from pytools.publish.canonical import canonical_bytes, with_body_hash
from pytools.publish.cli import verify as verify_main
from pytools.publish.manifest import VerifyError, read_limited
from pytools.publish.strictjson import parse_json
from pytools.publish.validation import package_schemas
from pytools.publish.verify import load_manifest, verify_bytes
from pytools.results.leak import price
from pytools.traces.trace import TraceError, read_trace


def test_an_unterminated_string_is_not_said_at_at() -> None:
    with pytest.raises(ValueError) as err:
        parse_json(b'{\n  "a": "never closed')
    assert str(err.value) == "Unterminated string starting at line 2 column 8"
    with pytest.raises(ValueError) as err:
        parse_json(b'{\n  "a": "a tab\there"}')
    assert str(err.value) == "Invalid control character at line 2 column 14"
    with pytest.raises(ValueError) as err:  # a message without "at" keeps its own
        parse_json(b'{"a": 1,}')
    assert " at at " not in str(err.value) and str(err.value).endswith(" at line 1 column 9")


def test_a_trace_line_with_an_unterminated_string_is_not_said_at_at(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"hash_ids": [1, 2]}\n{"hash_ids": "x', encoding="utf-8")
    with pytest.raises(TraceError) as err:
        read_trace(trace)
    assert str(err.value) == (f"{trace}:2: malformed JSON: Unterminated string starting at "
                              "column 14")


@pytest.mark.parametrize(("version", "said"), [
    (2, '2 is a number, not a string (this verifier knows "2")'),
    (True, 'true is a boolean, not a string (this verifier knows "2")'),
    ("3", '"3" (this verifier knows "2")'),
    (None, 'null (this verifier knows "2")'),
], ids=["int", "bool", "string", "null"])
def test_an_unsupported_schema_version_says_its_type_in_both_verifiers(
        tmp_path: Path, version: object, said: str) -> None:
    paths = make_release(tmp_path)
    cert = parse_json(paths["floor"].read_bytes())
    cert["schema_version"] = version
    data = canonical_bytes(with_body_hash(cert))
    manifest = load_manifest(paths["manifest"])
    anchor = check_anchor(manifest, AnchorOptions(), None, "none")
    python = verify_bytes(data, manifest, anchor=anchor)
    reason = next(r for r in python.reasons if r.startswith("unsupported-schema-version: "))
    assert reason == f"unsupported-schema-version: {said}"
    job = {"manifest": {"name": "certificates/MANIFEST.json",
                        "b64": _b64(paths["manifest"].read_bytes())},
           "envelope": None, "schemas": package_schemas().for_page(),
           "cases": [{"name": "floor", "b64": _b64(data)}], "canon": []}
    (js,) = _node(tmp_path, job)["verdicts"]
    assert js["reasons"] == python.reasons


def test_a_symlink_loop_is_not_called_no_such_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "gone.json")
    paths = make_release(tmp_path / "release")
    result = CliRunner().invoke(verify_main, ["--manifest", str(paths["manifest"]), str(a),
                                              str(dangling), str(tmp_path / "gone.json")])
    assert result.exit_code == 2
    out = result.output + result.stderr
    assert f"error: {a}: a symlink loop" in out
    assert f"error: {dangling}: a symlink whose target does not exist" in out
    assert f"error: {tmp_path / 'gone.json'}: no such file" in out
    with pytest.raises(VerifyError, match=r"a\.json: a symlink loop$"):
        read_limited(a, "manifest")


def test_leak_price_on_an_empty_first_request_names_no_system_block_none(
        tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"hash_ids": []}\n{"hash_ids": [0, 1]}\n', encoding="utf-8")
    with pytest.raises(price.PriceError) as err:
        price.price_of_trace(trace)
    assert "None" not in str(err.value)
    assert str(err.value).startswith(f"{trace}:1: the first request has no hash_ids")


def test_a_long_invalid_tenant_id_is_cut_and_escaped(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        add_tenant(tmp_path / "tenants.json", "x" * 9990 + "\x1b[2K" + "y" * 6)
    message = str(err.value)
    assert len(message) < 200 and "\x1b" not in message
    assert "...(+9920 chars)" in message
    assert not (tmp_path / "tenants.json").exists() or os.path.getsize(
        tmp_path / "tenants.json") == 0
