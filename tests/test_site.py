"""Tests for pytools.publish.site: the page, its evidence-state rules, and the in-page verifier's
JavaScript (run under Node when available) agreeing with pytools.verify byte for byte."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_verify import make_release

from pytools.publish.canonical import (
    canonical_bytes,
    load_schema,
    sha256_bytes,
    with_body_hash,
    write_canonical,
)
from pytools.publish.site.evidence import EVIDENCE_STATES, RULES
from pytools.publish.site.page import build_site
from pytools.publish.site.release import Release, SiteError, build_samples, load_release, tamper
from pytools.publish.verify import load_manifest, verify_bytes

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "pytools" / "publish" / "site" / "templates"
NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)


def _add_certificate(root: Path, cert: dict[str, Any], name: str) -> Path:
    """Publish one more certificate in ``root``'s release (theorems and manifest entry)."""
    cert = with_body_hash(cert)
    path = root / "certificates" / name
    write_canonical(path, cert)
    man_path = root / "certificates" / "MANIFEST.json"
    man = json.loads(man_path.read_text(encoding="utf-8"))
    data = path.read_bytes()
    man["files"].append(
        {"path": f"certificates/{name}", "sha256": sha256_bytes(data), "size": len(data)}
    )
    for t in cert["theorems"]:
        entry = {
            "name": t["name"],
            "statement_sha256": t["statement_sha256"],
            "result": cert["result"],
        }
        if entry not in man["theorems"]:
            man["theorems"].append(entry)
    write_canonical(man_path, man)
    return path


def _cert(result: str, figures: dict[str, Any], inputs: list[dict[str, Any]], **extra: Any) -> dict:
    statement = f"statement of {result}"
    return {
        "schema_version": "1",
        "result": result,
        "title": f"Result {result}",
        "theorems": [
            {
                "name": f"KVCache.Test.{result.replace('-', '_')}",
                "statement": statement,
                "statement_sha256": sha256_bytes(statement.encode()),
                "axioms": [],
                "module": "Proofs.Test",
            }
        ],
        "figures": figures,
        "inputs": inputs,
        "toolchain": {"kind": "native", "version": "4.28.0", "commit": "abc"},
        "limits": ["A test result."],
        **extra,
    }


def _states(release: Release, result: str) -> dict[str, tuple[str, str]]:
    view = next(r for r in release.results if r.id == result)
    return {row.name: (row.state, row.detail) for row in view.figures}


# --- the page ----------------------------------------------------------------------------


def test_build_site_copies_files_and_embeds_everything(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    index = build_site(tmp_path, tmp_path / "site", now=NOW)
    html = index.read_text(encoding="utf-8")
    out = tmp_path / "site"
    for role in ("floor", "ceiling", "receipt", "manifest"):
        rel = paths[role].relative_to(tmp_path)
        assert (out / rel).read_bytes() == paths[role].read_bytes()
        assert f'href="{rel.as_posix()}"' in html
    # theorem names and statements from the certificates
    for role in ("floor", "ceiling"):
        cert = json.loads(paths[role].read_text(encoding="utf-8"))
        for t in cert["theorems"]:
            assert t["name"] in html
        for limit in cert["limits"]:
            assert limit.replace("'", "&#39;") in html
    # every figure printed comes from the certificate
    ceiling = json.loads(paths["ceiling"].read_text(encoding="utf-8"))
    for name, value in ceiling["figures"].items():
        assert f"<code>{name}</code>" in html
        assert json.dumps(value) in html
    # every evidence state and its rule are on the page
    for rule in RULES:
        assert f"st-{rule.state}" in html
    # no external asset, no connection allowed
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert re.findall(r"<link[^>]*>", html) == ['<link rel="icon" href="data:,">']
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp
    assert "unsafe-inline" not in csp


def test_csp_hashes_match_inline_script_and_style(tmp_path: Path) -> None:
    make_release(tmp_path)
    html = build_site(tmp_path, tmp_path / "site", now=NOW).read_text(encoding="utf-8")
    csp = re.search(r'content="(default-src[^"]+)"', html).group(1).replace("&#39;", "'")
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert len(scripts) == 1 and len(styles) == 1
    for text in scripts + styles:
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp


def test_samples_have_the_cli_verdicts(tmp_path: Path) -> None:
    make_release(tmp_path)
    release = load_release(tmp_path, now=NOW)
    samples = {s.id: s for s in build_samples(release)}
    assert samples["genuine"].expected.green
    assert not samples["tampered"].expected.green
    assert "unknown-hash" in samples["tampered"].expected.codes
    assert samples["manifest"].expected.codes == ["is-manifest"]
    assert samples["receipt"].expected.green  # the release publishes its run receipt
    assert (
        sum(a != b for a, b in zip(samples["genuine"].data, samples["tampered"].data, strict=True))
        == 1
    )


def test_planted_edit_of_a_published_file_stops_the_build(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    build_site(tmp_path, tmp_path / "site", now=NOW)
    before = (tmp_path / "site" / "index.html").read_bytes()
    paths["floor"].write_bytes(paths["floor"].read_bytes().replace(b"Price", b"Prize"))
    with pytest.raises(SiteError, match=r"isolation-floor.json: SHA-256 or size differs"):
        build_site(tmp_path, tmp_path / "site", now=NOW)
    assert (tmp_path / "site" / "index.html").read_bytes() == before  # old site intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["certificates", "data", "site"]


def test_missing_manifest_cli_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytools",
            "site",
            "--root",
            str(tmp_path),
            "--out",
            str(tmp_path / "s"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 1
    assert "MANIFEST.json: not a file" in proc.stderr
    assert not (tmp_path / "s").exists()


def test_site_cli_builds(tmp_path: Path) -> None:
    make_release(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytools",
            "site",
            "--root",
            str(tmp_path),
            "--out",
            str(tmp_path / "s"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s" / "index.html").is_file()


# --- evidence-state rules ------------------------------------------------------------------


def test_every_state_rule_from_files(tmp_path: Path) -> None:
    """One certificate per rule; each figure must get exactly the state its rule defines."""
    make_release(tmp_path)
    data = tmp_path / "data"
    (data / "ok.csv").write_bytes(b"a,b\n1,2\n")
    (data / "edited.csv").write_bytes(b"edited after certification\n")
    ok = {"path": "data/ok.csv", "sha256": sha256_bytes(b"a,b\n1,2\n")}
    edited = {"path": "data/edited.csv", "sha256": sha256_bytes(b"original\n")}
    gone_inside = {"path": "data/gone.csv", "sha256": "1" * 64}
    gone_outside = {"path": "../elsewhere/trace.jsonl", "sha256": "2" * 64}
    restricted = {**ok, "path": "data/ok.csv", "license": "research-only"}
    rows = (b"x\n" * 3).decode()
    _add_certificate(tmp_path, _cert("r-ok", {"count": rows.count("x")}, [ok]), "r-ok.json")
    _add_certificate(tmp_path, _cert("r-edited", {"count": 3}, [edited]), "r-edited.json")
    _add_certificate(tmp_path, _cert("r-inside", {"count": 3}, [gone_inside]), "r-inside.json")
    _add_certificate(tmp_path, _cert("r-outside", {"count": 3}, [gone_outside]), "r-outside.json")
    _add_certificate(tmp_path, _cert("r-licence", {"count": 3}, [restricted]), "r-licence.json")
    _add_certificate(tmp_path, _cert("r-nodata", {"count": None}, []), "r-nodata.json")
    _add_certificate(
        tmp_path,
        _cert("r-old", {"count": 3}, [ok], generated_at="2026-11-01T00:00:00+00:00"),
        "r-old.json",
    )
    annotated = {
        "few": {"value": 0.5, "n": 12, "min_n": 30},
        "enough": {"value": 0.5, "n": 40, "min_n": 30},
        "disagree": {"values": {"lean": 7, "solver": 8}},
        "agree": {"values": {"lean": 7, "solver": 7}},
        "broken": {"error": "solver crashed"},
        "na": {"applicable": False},
        "who": {"value": 1, "input": "data/unknown.csv"},
        "empty": [],
        "plain": 3,
    }
    _add_certificate(tmp_path, _cert("r-annotated", annotated, [ok]), "r-annotated.json")
    # a published certificate whose theorem the manifest no longer publishes the same way
    bad = _add_certificate(tmp_path, _cert("r-bad", {"count": 3}, [ok]), "r-bad.json")
    man_path = tmp_path / "certificates" / "MANIFEST.json"
    man = json.loads(man_path.read_text(encoding="utf-8"))
    for t in man["theorems"]:
        if t["result"] == "r-bad":
            t["statement_sha256"] = "f" * 64
    write_canonical(man_path, man)
    assert bad.is_file()

    release = load_release(tmp_path, now=NOW)
    assert _states(release, "r-ok")["count"][0] == "verified"
    assert _states(release, "r-edited")["count"][0] == "search-failed"
    assert "SHA-256 is" in _states(release, "r-edited")["count"][1]
    assert _states(release, "r-inside")["count"] == (
        "search-failed",
        "data/gone.csv: missing from the project",
    )
    assert _states(release, "r-outside")["count"][0] == "no-data-available"
    assert _states(release, "r-licence")["count"][0] == "license-restricted"
    assert _states(release, "r-nodata")["count"][0] == "no-data-available"
    state, detail = _states(release, "r-old")["count"]
    assert state == "stale" and "31.5 days old" in detail
    assert _states(release, "r-bad")["count"][0] == "analysis-failed"
    assert _states(release, "isolation-floor")["(no figures)"][0] == "not-applicable"
    assert _states(release, "single-owner-kernel")["(no certificate)"][0] == "unsearched"
    got = _states(release, "r-annotated")
    assert got["few"] == ("underpowered", "n = 12, below the minimum 30")
    assert got["enough"][0] == "verified"
    assert got["disagree"] == ("contradictory", "sources disagree: lean = 7, solver = 8")
    assert got["agree"][0] == "verified"
    assert got["broken"] == ("analysis-failed", "analysis error: solver crashed")
    assert got["na"][0] == "not-applicable"
    assert got["who"][0] == "unresolved-identity"
    assert got["empty"][0] == "searched-none-found"
    assert got["plain"][0] == "verified"
    # the ceiling of make_release: inputs verified, one null figure
    ceiling = _states(release, "demand-fetch-ceiling")
    assert ceiling["requests"][0] == "verified"
    assert ceiling["nothing"][0] == "searched-none-found"
    produced = {
        s
        for r in release.results
        for s, _ in (x[1:3] for x in [(row.name, row.state, row.detail) for row in r.figures])
    }
    assert produced == set(EVIDENCE_STATES) - {"loading"}


def test_fresh_by_mtime_then_stale(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    release = load_release(tmp_path)
    assert _states(release, "demand-fetch-ceiling")["requests"][0] == "verified"
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=9)).timestamp()
    os.utime(paths["ceiling"], (old, old))
    release = load_release(tmp_path)
    state, detail = _states(release, "demand-fetch-ceiling")["requests"]
    assert state == "stale" and detail.startswith("9.0 days old")


def test_rules_are_documented() -> None:
    for rule in RULES:
        assert rule.doc and "``" not in rule.doc and ":data:" not in rule.doc
    assert EVIDENCE_STATES[-1] == "verified"


def test_tamper_changes_exactly_one_byte() -> None:
    cert = canonical_bytes(with_body_hash(_cert("x", {"n": 5}, [])))
    assert sum(a != b for a, b in zip(cert, tamper(cert), strict=True)) == 1
    empty = canonical_bytes(with_body_hash(_cert("x", {}, [])))
    assert sum(a != b for a, b in zip(empty, tamper(empty), strict=True)) == 1


# --- the in-page verifier's JavaScript under Node --------------------------------------------

NODE = shutil.which("node") or next(
    (str(p) for p in [ROOT / "node_modules" / ".bin" / "node"] if p.exists()), None
)

HARNESS = r"""
const fs = require("fs");
const PCV = require(process.argv[2]);
(async () => {
  const job = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
  const verdicts = [];
  for (const f of job.files) {
    const bytes = new Uint8Array(Buffer.from(f.b64, "base64"));
    const v = await PCV.verifyBytes(bytes, job.manifest, job.schemas, f.name);
    verdicts.push({ name: f.name, green: v.green, codes: v.codes });
  }
  const canon = job.canon.map((t) => {
    try { return PCV.canonicalText(PCV.parse(t)); } catch (e) { return "ERROR " + e.message; }
  });
  process.stdout.write(JSON.stringify({ verdicts, canon }));
})().catch((e) => { console.error(e); process.exit(3); });
"""


def _node(tmp_path: Path, job: dict[str, Any]) -> dict[str, Any]:
    if NODE is None:
        pytest.skip("node is not installed; the browser test covers the verifier")
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS, encoding="utf-8")
    script = TEMPLATES / "verifier.js"
    job_path = tmp_path / "job.json"
    job_path.write_text(json.dumps(job), encoding="utf-8")
    proc = subprocess.run(
        [NODE, str(harness), str(script), str(job_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _variants(paths: dict[str, Path]) -> dict[str, bytes]:
    """Genuine files and planted defects, each a case both verifiers must agree on."""
    floor = paths["floor"].read_bytes()
    ceiling = paths["ceiling"].read_bytes()
    cert = json.loads(floor)
    out = {
        "floor": floor,
        "ceiling": ceiling,
        "receipt": paths["receipt"].read_bytes(),
        "manifest": paths["manifest"].read_bytes(),
        "one-byte": floor.replace(b"Price", b"Prize"),
        "trailing-newline": ceiling + b"\n",
        "truncated": ceiling[: len(ceiling) // 2],
        "malformed": b"{'a': 1}",
        "nan": b'{"a": NaN}',
        "duplicate": b'{"a": 1, "a": 2}',
        "bom": b"\xef\xbb\xbf{}",
        "not-utf8": b'{"a": "\xff"}',
        "lone-surrogate": b'{"a": "\\ud800"}',
        "list": b"[1, 2]",
        "empty": b"",
        "oversize": b" " * (4 * 1024 * 1024 + 1),
    }

    def resigned(edit: Any) -> bytes:
        c = json.loads(floor)
        edit(c)
        return canonical_bytes(with_body_hash(c))

    out["unknown-theorem"] = resigned(
        lambda c: c["theorems"].append({**cert["theorems"][0], "name": "KVCache.Fake.t"})
    )
    out["statement-hash"] = resigned(lambda c: c["theorems"][0].update(statement_sha256="0" * 64))
    out["schema-violation"] = resigned(lambda c: (c.pop("limits"), c.pop("inputs")))
    out["many-violations"] = resigned(
        lambda c: c.update(limits=[1, 2, 3], inputs=[{}, {}], toolchain={})
    )
    out["bad-version"] = resigned(lambda c: c.update(schema_version="2"))
    out["no-body-hash"] = canonical_bytes({k: v for k, v in cert.items() if k != "body_sha256"})
    out["wrong-types"] = resigned(
        lambda c: c.update(figures=[1.0], title="", theorems=[{"name": "x", "axioms": ["a", "a"]}])
    )
    out["bad-patterns"] = resigned(lambda c: c.update(result="Bad Id", body_sha256="X"))
    out["float-fun"] = resigned(
        lambda c: c.update(
            figures={"a": 1e16, "b": 1e-5, "c": -0.0, "d": 123456789.125, "e": 2**64}
        )
    )
    out["unicode-keys"] = resigned(
        lambda c: c.update(
            figures={"é": 1, "z": 2, "\U0001f600": 3, "\uff5e": 4, "\x7f": "\x01\u2028"}
        )
    )
    out["deep"] = b"[" * 2000 + b"]" * 2000
    out["depth-500"] = b"[" * 500 + b"]" * 500
    out["depth-501"] = b"[" * 501 + b"]" * 501
    out["depth-500-obj"] = b'{"a":' * 500 + b"1" + b"}" * 500
    out["depth-501-obj"] = b'{"a":' * 501 + b"1" + b"}" * 501
    out["huge-exponent"] = b'{"a": 1e400}'
    out["number-forms"] = b'{"a": -0, "b": -0.0, "c": 1E5, "d": 1.0e-7, "e": 100000000000000000000}'
    out["control-char"] = b'{"a": "\x01"}'  # a raw control character in a string
    return out


def test_js_verifier_agrees_with_cli_on_every_case(tmp_path: Path) -> None:
    paths = make_release(tmp_path / "rel")
    manifest = load_manifest(paths["manifest"])
    cases = _variants(paths)
    job = {
        "manifest": manifest.to_browser(),
        "schemas": {n: load_schema(n) for n in ("certificate", "manifest")},
        "files": [{"name": k, "b64": base64.b64encode(v).decode()} for k, v in cases.items()],
        "canon": [],
    }
    got = {v["name"]: v for v in _node(tmp_path, job)["verdicts"]}
    for name, data in cases.items():
        want = verify_bytes(data, manifest, name)
        assert (got[name]["green"], got[name]["codes"]) == (want.green, want.codes), name
    assert got["floor"]["green"] and not got["one-byte"]["green"]


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value with awkward floats (any bit pattern), big ints and odd strings."""
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 2**53 + 1, -(2**70), rng.randrange(-(10**30), 10**30)])
    if kind == 2:
        while True:
            x = struct.unpack("<d", rng.randbytes(8))[0]
            if math.isfinite(x):
                return x
    if kind == 3:
        return rng.choice([0.0, -0.0, 1e16, 1e-5, 1e-4, 9999999999999998.0, 0.1, 1.5e300, 5e-324])
    if kind == 4:
        return rng.choice([1.0, 2.5, 1e15, 123456789.125]) * rng.choice(
            [1, -1, 10 ** rng.randrange(-8, 22)]
        )
    if kind == 5:
        alphabet = 'aZ09 "\\\n\t\x00\x1f\x7féü€\u2028\uffff\U0001f600\U00010000~'
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
    if kind in (6, 7):
        keys = [
            "".join(rng.choice("abé\U0001f600\uff5e_") for _ in range(rng.randrange(4)))
            for _ in range(rng.randrange(4))
        ]
        return {key: _random_value(rng, depth + 1) for key in keys}
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_js_canonical_form_matches_python(tmp_path: Path) -> None:
    """Python's canonical bytes and the page's, on 400 random values, one Node run."""
    rng = random.Random(20261202)
    values = [_random_value(rng) for _ in range(400)]
    # non-canonical input text (ASCII escapes, no indent, unsorted) -> canonical in both
    texts = [json.dumps(v, ensure_ascii=True) for v in values]
    got = _node(tmp_path, {"manifest": {}, "schemas": {}, "files": [], "canon": texts})["canon"]
    for value, js in zip(values, got, strict=True):
        assert js == canonical_bytes(value).decode("utf-8"), value


def test_js_schema_subset_covers_the_schemas() -> None:
    """Every keyword the schemas use is one the in-page validator implements."""
    script = (TEMPLATES / "verifier.js").read_text(encoding="utf-8")
    supported = set(
        re.search(r"var KEYWORDS = \[(.*?)\];", script, re.S)
        .group(1)
        .replace('"', "")
        .replace("\n", "")
        .replace(" ", "")
        .split(",")
    )

    def keywords(node: Any, under_props: bool = False) -> set[str]:
        out: set[str] = set()
        if isinstance(node, dict):
            for key, value in node.items():
                if not under_props:
                    out.add(key)
                out |= keywords(value, key in ("properties", "$defs"))
        elif isinstance(node, list):
            for value in node:
                out |= keywords(value)
        return out

    for name in ("certificate", "manifest"):
        used = keywords(load_schema(name)) - {"$schema"}
        assert used - supported == set(), name


def test_manifest_path_leaving_the_project_stops_the_build(tmp_path: Path) -> None:
    """Planted defect: a manifest entry pointing outside the project is never copied."""
    paths = make_release(tmp_path)
    man = json.loads(paths["manifest"].read_text(encoding="utf-8"))
    man["files"][0]["path"] = "../outside.json"
    write_canonical(paths["manifest"], man)
    with pytest.raises(SiteError, match="leaves the project"):
        build_site(tmp_path, tmp_path / "site", now=NOW)
    assert not (tmp_path / "site").exists()
