"""Tests for pytools.publish.site: the page, its evidence-state rules and figure lines, and the
in-page verifier's JavaScript (run under Node) agreeing with pytools.verify on every case, the
anchors (pin, signature, forged pairs, wrong keys) included, reason for reason."""

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
from bundles import (
    certificate,
    forge_pair,
    make_release,
    sign_release,
    theorem,
    weaken_floor,
    write_public_key,
)
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.publish import codes
from pytools.publish.anchor import AnchorOptions, check_anchor
from pytools.publish.canonical import canonical_bytes, sha256_bytes, with_body_hash, write_canonical
from pytools.publish.codes import table_for_page
from pytools.publish.keys import load_trusted_keys, parse_public_keys
from pytools.publish.manifest import manifest_from_bytes
from pytools.publish.site.display import (
    FOLD_CHARS,
    FOLD_ROWS,
    LONG_LIMITS,
    LONG_STATEMENT,
    LONG_VALUE,
    MAX_DEPTH,
    WIDE_COLUMNS,
    display_value,
    list_literal,
    readable_statement,
)
from pytools.publish.site.evidence import CHECK_LABELS, EVIDENCE_STATES, RULES
from pytools.publish.site.page import CODES_SLOT, build_site, count_words, verifier_script
from pytools.publish.site.plots import HALF_ROW_PX, LEGIBLE, ROW_PX, Plot, svg_size
from pytools.publish.site.release import (
    PRODUCT_RESULTS,
    Release,
    SiteError,
    build_samples,
    load_release,
    tamper,
)
from pytools.publish.validation import KEYWORDS, SCHEMA_DIALECT, package_schemas
from pytools.publish.verify import load_manifest, verify_bytes

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "pytools" / "publish" / "site" / "templates"
NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)
ANY_FIGURES = {"$schema": SCHEMA_DIALECT, "type": "object"}


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
        entry = {"name": t["name"], "result": cert["result"],
                 "statement_sha256": t["statement_sha256"],
                 "statement_text_sha256": sha256_bytes(t["statement"].encode("utf-8"))}
        if entry not in man["theorems"]:
            man["theorems"].append(entry)
    write_canonical(man_path, man)
    return path


def _cert(result: str, figures: dict[str, Any], inputs: list[dict[str, Any]], **extra: Any) -> dict:
    return certificate(result, f"Result {result}",
                       [theorem(f"KVCache.Test.{result.replace('-', '_')}",
                                f"statement of {result}", "Proofs.Test", ())],
                       figures, inputs, **extra)


def _schemas_for(*results: str) -> Any:
    return package_schemas().with_documents({f"figures/{r}": ANY_FIGURES for r in results})


def _states(release: Release, result: str) -> dict[str, tuple[str, str]]:
    view = next(r for r in release.results if r.id == result)
    return {row.name: (row.state, row.detail) for row in view.figures}


def _visible(html: str) -> str:
    """The page's text without its scripts (what a reader sees, roughly)."""
    return re.sub(r"<script[^>]*>.*?</script>", "", html, flags=re.S)


# --- the page ----------------------------------------------------------------------------


def test_build_site_copies_files_and_embeds_everything(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    paths = make_release(tmp_path, key=key)
    index = build_site(tmp_path, tmp_path / "site", now=NOW)
    html = index.read_text(encoding="utf-8")
    out = tmp_path / "site"
    for role in ("floor", "ceiling", "csv", "svg", "manifest", "envelope"):
        rel = paths[role].relative_to(tmp_path)
        assert (out / rel).read_bytes() == paths[role].read_bytes()
        assert f'href="{rel.as_posix()}"' in html or role == "svg"
    manifest = load_manifest(paths["manifest"])
    assert f'<code class="hash" id="manifest-sha">{manifest.sha256}</code>' in html
    for role in ("floor", "ceiling"):
        cert = json.loads(paths[role].read_text(encoding="utf-8"))
        for t in cert["theorems"]:
            assert f'data-theorem="{t["name"]}"' in html
        for limit in cert["limits"]:
            assert limit.replace("'", "&#39;") in html
    ceiling = json.loads(paths["ceiling"].read_text(encoding="utf-8"))
    for name in ceiling["figures"]:
        assert f'data-figure="{name}"' in html
    # the plot is drawn on the page from the verified SVG's bytes
    uri = "data:image/svg+xml;base64," + base64.b64encode(paths["svg"].read_bytes()).decode()
    assert f'<img src="{uri}"' in html
    for rule in RULES:
        assert f"st-{rule.state}" in html
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert re.findall(r"<link[^>]*>", html) == ['<link rel="icon" href="data:,">']
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp
    assert "img-src data:" in csp and "unsafe-inline" not in csp
    # the page never ships a key for the auditor to trust
    assert "BEGIN PUBLIC KEY-----\n" not in _visible(html).replace("placeholder", "")


def test_statements_show_no_internal_names(tmp_path: Path) -> None:
    """Planted: the ceiling's statement carries `inst._@...._hyg.3`; the page hides it and
    says so, while the certificate keeps the exact hashed text."""
    paths = make_release(tmp_path)
    assert "_hyg" in paths["ceiling"].read_text(encoding="utf-8")
    html = build_site(tmp_path, tmp_path / "site", now=NOW).read_text(encoding="utf-8")
    visible = _visible(html)
    assert "_hyg" not in visible and "_@" not in visible
    assert "[DecidableEq α]" in visible
    assert "compiler-internal names hidden" in visible
    assert readable_statement("∀ (x._@.M._hyg.1 : Nat), x._@.M._hyg.1 = 0") == (
        "∀ (x✝ : Nat), x✝ = 0", True)
    assert readable_statement("∀ n, n ≤ n") == ("∀ n, n ≤ n", False)


def test_every_figure_says_what_it_is_and_how_it_is_known(tmp_path: Path) -> None:
    make_release(tmp_path)
    release = load_release(tmp_path, now=NOW)
    ceiling = next(r for r in release.results if r.id == "demand-fetch-ceiling")
    rows = {f.name: f for f in ceiling.figures}
    assert rows["distinct"].description == "Distinct blocks referenced, distinct(r)."
    assert rows["distinct"].obtained.startswith("hash of data/trace.txt matched the certificate")
    assert "not recomputed here" in rows["distinct"].obtained
    # recomputed by the result's own code (a stand-in here): said so
    figures = json.loads((tmp_path / "certificates/demand-fetch-ceiling.json").read_bytes())[
        "figures"]
    same = load_release(tmp_path, now=NOW, recompute=lambda rid, root: figures
                        if rid == "demand-fetch-ceiling" else None)
    row = {f.name: f for f in same.results[1].figures}["distinct"]
    assert row.state == "verified"
    assert row.obtained == ("recomputed here by the result's own code from its inputs "
                            "(data/trace.txt): equal to the certificate")
    # planted: the recomputation disagrees with the certificate
    other = load_release(tmp_path, now=NOW, recompute=lambda rid, root: {**figures, "distinct": 99}
                         if rid == "demand-fetch-ceiling" else None)
    row = {f.name: f for f in other.results[1].figures}["distinct"]
    assert row.state == "contradictory" and "recomputed here: 99" in row.detail

    def broken(rid: str, root: Path) -> dict[str, Any]:
        raise OSError("trace absent")

    failed = load_release(tmp_path, now=NOW, recompute=broken)
    row = {f.name: f for f in failed.results[1].figures}["distinct"]
    assert row.state == "verified" and "not recomputed here (OSError: trace absent)" in row.obtained


def test_every_figure_badge_says_what_was_checked(tmp_path: Path) -> None:
    """A verified figure's badge names the check (hash matched, recomputed, certificate
    matched), never a bare "verified"; another state's badge is the state."""
    make_release(tmp_path)
    _add_certificate(tmp_path, _cert("r-plain", {"count": 3}, []), "r-plain.json")
    release = load_release(tmp_path, now=NOW, schemas=_schemas_for("r-plain"))
    ceiling = next(r for r in release.results if r.id == "demand-fetch-ceiling")
    assert {(f.state, f.badge, f.badge_class) for f in ceiling.figures} == {
        ("verified", CHECK_LABELS["hash-matched"], "ck-hash-matched")}
    plain = next(r for r in release.results if r.id == "r-plain")
    assert [(f.badge, f.badge_class) for f in plain.figures] == [
        (CHECK_LABELS["certificate"], "ck-certificate")]
    floor = next(r for r in release.results if r.id == "isolation-floor")
    assert [(f.badge_label, f.badge_class) for f in floor.figures] == [
        ("not-applicable", "st-not-applicable")]
    assert ceiling.common_obtained.startswith("hash of data/trace.txt matched")
    assert ceiling.badge_counts == ((CHECK_LABELS["hash-matched"], "ck-hash-matched",
                                     ceiling.figure_count),)
    figures = json.loads((tmp_path / "certificates/demand-fetch-ceiling.json").read_bytes())[
        "figures"]
    again = load_release(tmp_path, now=NOW, schemas=_schemas_for("r-plain"),
                         recompute=lambda rid, root: figures
                         if rid == "demand-fetch-ceiling" else None)
    ceiling = next(r for r in again.results if r.id == "demand-fetch-ceiling")
    assert {f.badge for f in ceiling.figures} == {CHECK_LABELS["recomputed"]}
    html = build_site(tmp_path, tmp_path / "site", now=NOW).read_text(encoding="utf-8")
    assert ">verified</span>" not in html.split('id="states"')[0]  # only the rules table
    assert 'class="dot' not in html


def test_the_intro_counts_and_names_the_results_shown(tmp_path: Path) -> None:
    """The intro is made from the results the page shows: their number in words and each
    one's name, linked; one without a certificate is said to be so."""
    make_release(tmp_path)  # the floor and the ceiling; the other product results unsearched
    html = build_site(tmp_path, tmp_path / "site", now=NOW).read_text(encoding="utf-8")
    intro = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", re.search(
        r'<p class="lede" id="intro">(.*?)</p>', html, re.S).group(1)))
    assert intro.startswith(f"{count_words(len(PRODUCT_RESULTS)).capitalize()} results on ")
    assert ("isolation floor, demand-fetch ceiling, single-owner kernel (no certificate yet)"
            in intro)
    assert "tenant leak (no certificate yet)." in intro
    assert "Each published one is proved" in intro
    for rid, _ in PRODUCT_RESULTS:
        assert f'<a href="#{rid}" data-result="{rid}">' in html
    assert count_words(5) == "five" and count_words(13) == "13"


def test_figure_values_are_shown_compactly(tmp_path: Path) -> None:
    """Lists of numbers on one line, an object as its pairs, records as a table (each record
    its own list of pairs past WIDE_COLUMNS columns), long tables folded past FOLD_ROWS rows
    or (an object) FOLD_CHARS characters."""
    assert display_value([720, 704, 0]).text == "[720, 704, 0]"
    pairs = display_value({"b": {"x": 1}, "a": True})
    assert pairs.pairs and pairs.rows == (("a", "true"), ("b", '{"x": 1}'))
    narrow = display_value([{"k": i, "v": i * i} for i in range(FOLD_ROWS)])
    assert narrow.columns == ("k", "v") and not narrow.wide and not narrow.folded
    wide = display_value([{f"c{i}": i for i in range(WIDE_COLUMNS + 1)}] * (FOLD_ROWS + 1))
    assert wide.wide and wide.folded
    # an object of few keys whose nested values are long is folded too (it filled a screen)
    assert not pairs.folded
    long = display_value({"vllm": {"trials": list(range(FOLD_CHARS))}, "sglang": 1})
    assert long.pairs and long.folded


def test_a_long_nested_value_is_folded_on_its_own(tmp_path: Path) -> None:
    """An object figure whose nested values run long (the routing figure: a claim with 35
    rows, the raw rows, a window of its own; 60,000 characters of one wrapped line): each long
    nested value gets its own display, folded behind its size; a short one stays one line;
    nesting stops at MAX_DEPTH."""
    records = [{"capacity": 2 ** i, "routing": "random", "percent": f"{i * 1.5:.4f}"}
               for i in range(30)]
    value = {"claim": {"hosts": 16, "rows": records}, "hosts": [1, 2, 4],
             "raw": [{"capacity": 1, "routings": {"random": {"misses": i}}} for i in range(40)],
             "short": {"x": 1}}
    shown = display_value(value)
    assert shown.pairs and [k for k, _ in shown.rows] == ["claim", "hosts", "raw", "short"]
    claim, hosts, raw, short = (shown.child(i) for i in range(4))
    assert hosts is None and short is None  # short: one line, as before
    assert claim is not None and claim.pairs and claim.size_label == "2 entries"
    rows = claim.child(1)  # nested records: a table of their own
    assert rows is not None and rows.columns == ("capacity", "routing", "percent")
    assert rows.size_label == "30 rows × 3 columns"
    assert raw is not None and not raw.columns and raw.size_label.endswith(" characters")
    deep: Any = {"v": list(range(LONG_VALUE))}
    for _ in range(MAX_DEPTH + 1):
        deep = {"d": deep}
    level, depth = display_value(deep), 0
    while level.child(0) is not None:
        level, depth = level.child(0), depth + 1
    assert depth == MAX_DEPTH
    # on the page: each long nested value in its own shut fold, inside the figure's fold
    make_release(tmp_path)
    _add_certificate(tmp_path, _cert("r-nested", {"routing": value}, []), "r-nested.json")
    html = build_site(tmp_path, tmp_path / "site", now=NOW).read_text(encoding="utf-8")
    row = re.search(r'<tr data-figure="routing">.*?<td class="evidence"', html, re.S).group(0)
    assert row.count('<details class="fold table-fold nested">') == 3
    assert "<summary>30 rows × 3 columns: show the table</summary>" in row
    assert '<dt>Short</dt> <dd>{&#34;x&#34;: 1}</dd>' in row  # keys shown as labels


def test_plots_too_wide_for_half_a_row_span_it() -> None:
    """A plot half a row would shrink below LEGIBLE of its drawn size takes the whole row;
    one the whole row would shrink that far keeps its size and scrolls (Plot.span)."""
    def span(width: int | None) -> str:
        return Plot("p.svg", "0" * 64, "data:", "", size=None if width is None
                    else (width, 300)).span

    assert span(None) == "" and span(672) == ""  # the ceiling's plots: side by side
    assert span(int(HALF_ROW_PX / LEGIBLE) + 1) == "wide"
    assert span(960) == "wide"  # the routing plots: 720 pt
    assert span(int(ROW_PX / LEGIBLE) + 1) == "oversize"


def test_long_limits_and_long_input_lists_are_folded(tmp_path: Path) -> None:
    """Limits past LONG_LIMITS characters are folded behind an amber summary that counts them
    (a short list stays open); more than FOLD_ROWS input files are folded behind a summary
    that counts their checks (a few stay an open table). Long names in a limit may wrap at
    their dots and underscores."""
    limits = [f"Limit {i}: KVCache.Placement.perInstanceMisses_ge_pooled_beladyBypass " + "x " * 60
              for i in range(LONG_LIMITS // 150 + 1)]
    inputs = [{"path": f"data/in{i}.json", "sha256": "0" * 64} for i in range(FOLD_ROWS + 1)]
    make_release(tmp_path)
    _add_certificate(tmp_path, _cert("r-long", {"n": 1}, inputs, limits=limits), "r-long.json")
    html = build_site(tmp_path, tmp_path / "site", now=NOW).read_text(encoding="utf-8")
    long = re.search(r'<section id="r-long".*?</section>', html, re.S).group(0)
    assert '<details class="limits-fold" id="r-long-limits">' in long
    assert f"<h3>Limits ({len(limits)})</h3>" in long
    assert "perInstanceMisses_<wbr>ge_<wbr>pooled_<wbr>beladyBypass" in long
    assert '<details class="fold" id="r-long-inputs">' in long
    assert f"Input files ({len(inputs)})" in long and f"{len(inputs)} missing" in long
    short = re.search(r'<section id="demand-fetch-ceiling".*?</section>', html, re.S).group(0)
    assert "limits-fold" not in short and "-inputs" not in short
    assert "<h3>Limits</h3>" in short and "<h3>Input files</h3>" in short


def test_workflow_terms_are_folded_with_their_steps(tmp_path: Path) -> None:
    """A certificate's workflow bench: each workflow with its theorem and the steps that
    theorem states (only when there are as many as the certificate counts); the theorem table
    lists the other theorems; a long term is folded, shut, behind its summary."""
    steps = " ".join(["(List.cons (KVCache.Kernel.Act.alloc 0 0) (List.cons "
                      "(KVCache.Kernel.Act.deliver 0) (List.cons KVCache.Kernel.Act.advance "
                      "List.nil)))"])
    term = f"KVCache.Kernel.Workflows.outcome {steps} = Option.some " + "0 " * LONG_STATEMENT
    assert list_literal(term) == ("alloc 0 0", "deliver 0", "advance")
    assert list_literal("∀ n, n ≤ n") == ()
    theorems = [theorem("KVCache.Kernel.Workflows.workflow_two", term, "Proofs.Bench", ()),
                theorem("KVCache.Kernel.Workflows.workflow_odd", term, "Proofs.Bench", ()),
                theorem("KVCache.Bench.general", "∀ n, n ≤ n", "Proofs.Bench"),
                # the tagged variant's bench names its theorems alike: not this bench's
                theorem("KVCache.Kernel.MacWorkflows.workflow_two", "∀ n, n ≤ n",
                        "Proofs.Bench", ())]
    cert = certificate("r-bench", "A bench", theorems, {"n": 1}, [], workflows=[
        {"name": "two", "family": "commit", "steps": 3, "refusals": 0, "agree": True},
        {"name": "odd", "family": "drop", "steps": 5, "refusals": 1, "agree": False}])
    make_release(tmp_path)
    _add_certificate(tmp_path, cert, "r-bench.json")
    release = load_release(tmp_path, now=NOW, schemas=_schemas_for("r-bench"))
    bench = next(r for r in release.results if r.id == "r-bench")
    two, odd = bench.workflows
    assert two.theorem is not None and two.actions == ("alloc 0 0", "deliver 0", "advance")
    assert odd.theorem is not None and odd.actions == ()  # 3 listed, 5 counted: not steps
    assert two.theorem.name == "KVCache.Kernel.Workflows.workflow_two"
    assert [t.short_name for t in bench.listed_theorems] == ["general", "workflow_two"]
    assert bench.families == (("commit", 1), ("drop", 1))
    html = build_site(tmp_path, tmp_path / "site", now=NOW).read_text(encoding="utf-8")
    row = re.search(r'<tr data-workflow="two" data-steps="3">.*?</tr>', html, re.S).group(0)
    assert row.count('class="step"') == 3
    assert '<details class="term"><summary>Lean theorem <code>workflow_two</code>' in row
    assert "2 workflows" in html and "1 of 2 agree" in html


def test_plots_keep_the_size_they_were_drawn_at() -> None:
    assert svg_size(b'<svg width="504pt" height="316.8pt" viewBox="0 0 504 316.8">') == (672, 422)
    assert svg_size(b'<svg xmlns="x" width="120" height="60">') == (120, 60)
    assert svg_size(b'<svg viewBox="0 0 1 1">') is None


def test_site_is_world_readable_whatever_the_umask(tmp_path: Path) -> None:
    make_release(tmp_path)
    old = os.umask(0o077)
    try:
        build_site(tmp_path, tmp_path / "site", now=NOW)
    finally:
        os.umask(old)
    site = tmp_path / "site"
    assert site.stat().st_mode & 0o777 == 0o755
    for path in site.rglob("*"):
        assert path.stat().st_mode & 0o777 == (0o755 if path.is_dir() else 0o644), path


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


def test_samples_have_the_cli_verdicts_and_honest_labels(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    paths = make_release(tmp_path, key=key)
    release = load_release(tmp_path, now=NOW)
    samples = {s.id: s for s in build_samples(release, load_trusted_keys([paths["public_key"]]))}
    assert set(samples) == {"genuine", "pinned", "tampered", "figure-file", "manifest",
                            "not-a-certificate", "forged-pinned", "forged-signed", "signed",
                            "wrong-key"}
    assert samples["genuine"].expected.green and samples["pinned"].expected.green
    assert samples["signed"].expected.codes[0] == "manifest-signed"
    assert samples["figure-file"].label == "Published figure table (sweep.csv)"
    assert "receipt" not in " ".join(s.label for s in samples.values()).lower()
    assert samples["figure-file"].expected.codes == ["signature-unchecked", "listed", "not-json"]
    assert not samples["tampered"].expected.green
    assert samples["forged-pinned"].expected.codes == ["manifest-not-pinned", "listed"]
    assert samples["forged-signed"].expected.codes == ["manifest-not-signed", "listed"]
    assert samples["wrong-key"].expected.codes == ["signature-untrusted", "listed"]
    assert samples["not-a-certificate"].expected.codes[-1] == "not-a-certificate"
    genuine, tampered = samples["genuine"].data, samples["tampered"].data
    assert sum(a != b for a, b in zip(genuine, tampered, strict=True)) == 1
    unsigned = tmp_path / "unsigned"
    make_release(unsigned)
    ids = {s.id for s in build_samples(load_release(unsigned, now=NOW))}
    assert "unsigned-required" in ids and "wrong-key" not in ids


def test_planted_edit_of_a_published_file_stops_the_build(tmp_path: Path) -> None:
    paths = make_release(tmp_path)
    build_site(tmp_path, tmp_path / "site", now=NOW)
    before = (tmp_path / "site" / "index.html").read_bytes()
    paths["floor"].write_bytes(paths["floor"].read_bytes().replace(b"Price", b"Prize"))
    with pytest.raises(SiteError, match=r"isolation-floor.json: SHA-256 or size differs"):
        build_site(tmp_path, tmp_path / "site", now=NOW, force=True)
    assert (tmp_path / "site" / "index.html").read_bytes() == before  # old site intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["certificates", "data", "site"]


def test_manifest_path_leaving_the_project_stops_the_build(tmp_path: Path) -> None:
    """Planted defect: a manifest entry pointing outside the project is never copied."""
    paths = make_release(tmp_path)
    man = json.loads(paths["manifest"].read_text(encoding="utf-8"))
    man["files"][0]["path"] = "../outside.json"
    write_canonical(paths["manifest"], man)
    with pytest.raises(SiteError, match=r"/files/0/path: does not match the pattern"):
        build_site(tmp_path, tmp_path / "site", now=NOW)
    assert not (tmp_path / "site").exists()


def _site_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytools", "site", *args],
                          capture_output=True, text=True, cwd=ROOT, check=False)


def test_missing_manifest_cli_error(tmp_path: Path) -> None:
    proc = _site_cli("--root", str(tmp_path), "--out", str(tmp_path / "s"))
    assert proc.returncode == 1
    assert "MANIFEST.json: no such file" in proc.stderr
    assert "run pytools certify" in proc.stderr
    assert not (tmp_path / "s").exists()


def test_site_cli_builds_with_a_publisher_key(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    paths = make_release(tmp_path, key=key)
    proc = _site_cli("--root", str(tmp_path), "--out", str(tmp_path / "s"), "--key",
                     str(paths["public_key"]))
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "s" / "index.html").read_text(encoding="utf-8")
    assert "Forged pair, checked against the publisher" in html


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

    release = load_release(tmp_path, now=NOW, schemas=_schemas_for(
        "r-ok", "r-edited", "r-inside", "r-outside", "r-licence", "r-nodata", "r-old",
        "r-annotated", "r-bad"))
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
    # the ceiling of make_release: inputs verified
    ceiling = _states(release, "demand-fetch-ceiling")
    assert ceiling["requests"][0] == "verified"
    produced = {
        s
        for r in release.results
        for s, _ in (x[1:3] for x in [(row.name, row.state, row.detail) for row in r.figures])
    }
    assert produced == set(EVIDENCE_STATES) - {"loading"}
    assert got["empty"][0] == "searched-none-found"


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
const b = (x) => new Uint8Array(Buffer.from(x, "base64"));
(async () => {
  const job = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
  const out = [];
  for (const c of job.cases) {
    try {
      const m = c.manifest || job.manifest;
      const manifest = await PCV.loadManifest(b(m.b64), job.schemas, m.name);
      const env = c.manifest ? c.envelope : (c.envelope || job.envelope);
      let keys = [];
      for (const pem of c.keys || []) {
        keys = keys.concat(await PCV.parsePublicKeys(pem, "pasted key"));
      }
      const options = { pin: c.pin || null, keys,
        requireSignature: !!c.require || keys.length > 0 };
      const anchor = await PCV.checkAnchor(manifest, options, env ? b(env.b64) : null,
        env ? env.name : c.envelopeName, job.schemas);
      const v = c.unreadable !== undefined ? PCV.unreadable(c.name, c.unreadable, anchor)
        : await PCV.verifyBytes(b(c.b64), manifest, job.schemas, c.name, anchor);
      out.push({ name: c.name, green: v.green, codes: v.codes, reasons: v.reasons });
    } catch (e) {
      out.push({ name: c.name, error: String(e && e.message ? e.message : e) });
    }
  }
  const canon = job.canon.map((t) => {
    try { return PCV.canonicalText(PCV.parse(t)); } catch (e) { return "ERROR " + e.message; }
  });
  process.stdout.write(JSON.stringify({ verdicts: out, canon }));
})().catch((e) => { console.error(e); process.exit(3); });
"""


def _node(tmp_path: Path, job: dict[str, Any],
          table: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Run the page's verifier, as the page builder emits it (the reason-code table
    embedded: ``table``, default the real one), under Node on ``job``."""
    if NODE is None:
        pytest.skip("node is not installed; the browser test covers the verifier")
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS, encoding="utf-8")
    script = tmp_path / "verifier.js"
    script.write_text(verifier_script(table), encoding="utf-8")
    job_path = tmp_path / "job.json"
    job_path.write_text(json.dumps(job), encoding="utf-8")
    proc = subprocess.run([NODE, str(harness), str(script), str(job_path)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _variants(paths: dict[str, Path]) -> dict[str, bytes]:
    """Genuine files and planted defects, each a case both verifiers must agree on."""
    floor = paths["floor"].read_bytes()
    ceiling = paths["ceiling"].read_bytes()
    cert = json.loads(floor)
    out = {
        "floor": floor,
        "ceiling": ceiling,
        "csv": paths["csv"].read_bytes(),
        "svg": paths["svg"].read_bytes(),
        "manifest": paths["manifest"].read_bytes(),
        "one-byte": floor.replace(b"Price", b"Prize"),
        "trailing-newline": ceiling + b"\n",
        "reindented": json.dumps(json.loads(ceiling), indent=4, ensure_ascii=False).encode(),
        "truncated": ceiling[: len(ceiling) // 2],
        "malformed": b"{'a': 1}",
        "nan": b'{"a": NaN}',
        "duplicate": b'{"a": 1, "a": 2}',
        "bom": b"\xef\xbb\xbf{}",
        "not-utf8": b'{"a": "\xff"}',
        "lone-surrogate": b'{"a": "\\ud800"}',
        "list": b"[1, 2]",
        "empty": b"",
        "not-a-certificate": b'{"hello": "world"}\n',
        "oversize": b" " * (4 * 1024 * 1024 + 1),
    }

    def resigned(edit: Any, source: bytes = floor) -> bytes:
        c = json.loads(source)
        edit(c)
        return canonical_bytes(with_body_hash(c))

    ceiling_cert = json.loads(ceiling)
    out["unknown-theorem"] = resigned(
        lambda c: c["theorems"].append({**cert["theorems"][0], "name": "KVCache.Fake.t"}))
    out["wrong-result"] = resigned(lambda c: c["theorems"].append(ceiling_cert["theorems"][0]))
    out["statement-hash"] = resigned(lambda c: c["theorems"][0].update(statement_sha256="0" * 64))
    out["statement-text"] = resigned(
        lambda c: c["theorems"][0].update(statement=c["theorems"][0]["statement"] + " "))
    out["schema-violation"] = resigned(lambda c: (c.pop("limits"), c.pop("inputs")))
    out["extra-keys"] = resigned(lambda c: (c.update(extra=1), c["audit"].update(x=2),
                                            c["theorems"][0].update(proof="trust")))
    out["figures-extra"] = resigned(lambda c: c["figures"].update(bonus=1, requests="x"),
                                    ceiling)
    out["figures-missing"] = resigned(lambda c: c["figures"].pop("distinct"), ceiling)
    out["unknown-result"] = resigned(lambda c: c.update(result="no-such-result"))
    out["bad-path"] = resigned(lambda c: c["sources"][0].update(path="../x/../y"))
    out["bad-enum"] = resigned(lambda c: c["toolchain"].update(kind="magic"))
    out["many-violations"] = resigned(
        lambda c: c.update(limits=[1, 2, 3], inputs=[{}, {}], toolchain={}))
    out["bad-version"] = resigned(lambda c: c.update(schema_version="1"))
    out["no-body-hash"] = canonical_bytes({k: v for k, v in cert.items() if k != "body_sha256"})
    out["wrong-types"] = resigned(
        lambda c: c.update(figures=[1.0], title="", theorems=[{"name": "x", "axioms": ["a", "a"]}]))
    out["bad-patterns"] = resigned(lambda c: c.update(result="Bad Id", body_sha256="X"))
    out["findings"] = resigned(lambda c: c["audit"].update(findings=3))
    out["axioms-widened"] = resigned(
        lambda c: c["audit"].update(allowed_axioms=["propext", "sorryAx"]))
    out["axiom-outside"] = resigned(lambda c: c["theorems"][0].update(axioms=["sorryAx", "Ax"]))
    out["check-not-run"] = resigned(lambda c: c["audit"]["checks"][0].update(status="not-run"))
    out["check-missing"] = resigned(lambda c: c["audit"].update(checks=c["audit"]["checks"][1:]))
    out["kernel-check-not-run"] = resigned(lambda c: [
        check.update(status="not-run") for check in c["audit"]["checks"]
        if check["name"] in ("kernel-replay", "leanchecker")])
    out["float-fun"] = resigned(
        lambda c: c.update(figures={"a": 1e16, "b": 1e-5, "c": -0.0, "d": 123456789.125,
                                    "e": 2**64}))
    out["unicode-keys"] = resigned(
        lambda c: c.update(figures={"é": 1, "z": 2, "\U0001f600": 3, "\uff5e": 4,
                                    "\x7f": "\x01\u2028"}))
    manifest = json.loads(paths["manifest"].read_bytes())
    other = dict(manifest, files=manifest["files"] + [manifest["files"][0]])
    out["other-manifest-duplicates"] = canonical_bytes(other)
    out["deep"] = b"[" * 2000 + b"]" * 2000
    out["depth-500"] = b"[" * 500 + b"]" * 500
    out["depth-501"] = b"[" * 501 + b"]" * 501
    out["depth-500-obj"] = b'{"a":' * 500 + b"1" + b"}" * 500
    out["depth-501-obj"] = b'{"a":' * 501 + b"1" + b"}" * 501
    out["huge-exponent"] = b'{"a": 1e400}'
    out["number-forms"] = b'{"a": -0, "b": -0.0, "c": 1E5, "d": 1.0e-7, "e": 100000000000000000000}'
    out["control-char"] = b'{"a": "\x01"}'
    return out


def _cli_verdict(case: dict[str, Any], release_manifest: tuple[str, bytes],
                 release_envelope: tuple[str, bytes] | None) -> Any:
    """The CLI's verdict for one harness case (the library the CLI runs)."""
    name, data = case.get("manifest_raw") or release_manifest
    manifest = manifest_from_bytes(data, name)
    if "manifest_raw" in case:
        env = case.get("envelope_raw")
        env_name = env[0] if env else case["envelopeName"]
    else:
        env = case.get("envelope_raw") or release_envelope
        env_name = env[0] if env else case["envelopeName"]
    keys = {}
    for pem in case.get("keys", []):
        keys.update(parse_public_keys(pem.encode(), "pasted key"))
    anchor = check_anchor(manifest, AnchorOptions(case.get("pin"), keys,
                                                  bool(case.get("require")) or bool(keys)),
                          env[1] if env else None, env_name)
    return verify_bytes(case["raw"], manifest, case["name"], anchor)


#: Codes whose detail quotes a parser's own message (Python's json / base64 and the page's
#: parser word a syntax error differently); for these only the code must match.
PARSER_WORDED = ("malformed-json", "signature-invalid")


def _worded(reasons: list[str]) -> list[str]:
    return [r.split(":", 1)[0] if r.startswith(PARSER_WORDED) else r for r in reasons]


def _case(name: str, data: bytes, **kw: Any) -> dict[str, Any]:
    case = {"name": name, "raw": data, "b64": _b64(data), "envelopeName":
            "certificates/MANIFEST.intoto.jsonl", **kw}
    for key in ("manifest_raw", "envelope_raw"):
        if key in kw:
            target = key.split("_")[0]
            case[target] = {"name": kw[key][0], "b64": _b64(kw[key][1])}
    return case


def test_js_verifier_agrees_with_cli_on_every_case(tmp_path: Path) -> None:
    """Every tamper case, every schema and policy defect, and every anchor case (pin, key,
    forged pair, re-signed pair, wrong key, missing or garbled signature): the page's
    verifier and the CLI reach the same verdict with the same reasons, word for word."""
    key = Ed25519PrivateKey.generate()
    rel = tmp_path / "rel"
    paths = make_release(rel, key=key)
    pem = paths["public_key"].read_text()
    wrong = write_public_key(tmp_path / "wrong.pem", Ed25519PrivateKey.generate()).read_text()
    genuine_manifest = ("certificates/MANIFEST.json", paths["manifest"].read_bytes())
    genuine_envelope = ("certificates/MANIFEST.intoto.jsonl", paths["envelope"].read_bytes())
    pin = sha256_bytes(genuine_manifest[1])
    cases = [_case(n, d) for n, d in _variants(paths).items()]
    floor = paths["floor"].read_bytes()
    cases += [
        _case("pinned", floor, pin=pin),
        _case("pin-wrong", floor, pin="0" * 64),
        _case("signed", floor, keys=[pem]),
        _case("wrong-key", floor, keys=[wrong]),
        _case("two-keys", floor, keys=[wrong, pem]),
        _case("require-no-key", floor, require=True),
        _case("pin-and-key", floor, pin=pin, keys=[pem]),
        _case("the-envelope", genuine_envelope[1], keys=[pem]),
        _case("the-envelope-unchecked", genuine_envelope[1]),
    ]
    garbled = _b64(b"garbage")
    cases += [
        _case("envelope-garbled", floor, keys=[pem],
              envelope_raw=("certificates/MANIFEST.intoto.jsonl", b'{"payload": "' +
                            garbled.encode() + b'"}\n')),
        _case("envelope-two-lines", floor, keys=[pem],
              envelope_raw=("certificates/MANIFEST.intoto.jsonl", genuine_envelope[1] * 2)),
    ]
    # forgeries: the pair rewritten together, then re-signed by the forger
    forged_root = tmp_path / "forged"
    shutil.copytree(rel, forged_root)
    forge_pair(forged_root, weaken_floor)
    forged_manifest = ("certificates/MANIFEST.json",
                       (forged_root / "certificates/MANIFEST.json").read_bytes())
    forged_floor = (forged_root / "certificates/isolation-floor.json").read_bytes()
    cases += [
        _case("forged-no-anchor", forged_floor, manifest_raw=forged_manifest),
        _case("forged-pinned", forged_floor, manifest_raw=forged_manifest, pin=pin),
        _case("forged-signed", forged_floor, manifest_raw=forged_manifest,
              envelope_raw=genuine_envelope, keys=[pem]),
        _case("forged-unsigned-key", forged_floor, manifest_raw=forged_manifest, keys=[pem]),
    ]
    sign_release(forged_root, Ed25519PrivateKey.generate())
    resigned = ("certificates/MANIFEST.intoto.jsonl",
                (forged_root / "certificates/MANIFEST.intoto.jsonl").read_bytes())
    cases += [_case("forged-resigned", forged_floor, manifest_raw=forged_manifest,
                    envelope_raw=resigned, keys=[pem])]
    tampered_env = json.loads(genuine_envelope[1])
    payload = json.loads(base64.b64decode(tampered_env["payload"]))
    payload["predicate"]["results"] = ["isolation-floor"]
    tampered_env["payload"] = _b64(canonical_bytes(payload))
    cases += [_case("envelope-payload-edited", floor, keys=[pem], envelope_raw=(
        genuine_envelope[0], (json.dumps(tampered_env) + "\n").encode()))]
    url_safe = json.loads(genuine_envelope[1])
    url_safe["payload"] = url_safe["payload"].replace("+", "-").replace("/", "_").rstrip("=")
    url_safe["signatures"] = [{"sig": url_safe["signatures"][0]["sig"].replace("+", "-")
                               .replace("/", "_")}]
    cases += [_case("envelope-url-safe-no-keyid", floor, keys=[wrong, pem], envelope_raw=(
        genuine_envelope[0], (json.dumps(url_safe) + "\n").encode()))]

    job = {
        "manifest": {"name": genuine_manifest[0], "b64": _b64(genuine_manifest[1])},
        "envelope": {"name": genuine_envelope[0], "b64": _b64(genuine_envelope[1])},
        "schemas": package_schemas().for_page(),
        "cases": [{k: v for k, v in c.items() if not k.endswith("_raw") and k != "raw"}
                  for c in cases],
        "canon": [],
    }
    got = {v["name"]: v for v in _node(tmp_path, job)["verdicts"]}
    for case in cases:
        want = _cli_verdict(case, genuine_manifest, genuine_envelope)
        js = got[case["name"]]
        assert "error" not in js, (case["name"], js)
        assert (js["green"], js["codes"]) == (want.green, want.codes), case["name"]
        assert _worded(js["reasons"]) == _worded(want.reasons), case["name"]
    expected_red = {
        "forged-pinned": "manifest-not-pinned", "forged-signed": "manifest-not-signed",
        "forged-resigned": "signature-untrusted", "wrong-key": "signature-untrusted",
        "forged-unsigned-key": "signature-missing", "envelope-payload-edited": "signature-bad",
        "pin-wrong": "manifest-not-pinned", "envelope-garbled": "signature-invalid",
        "envelope-two-lines": "signature-invalid", "require-no-key": "signature-unverified",
    }
    for name, code in expected_red.items():
        assert not got[name]["green"] and got[name]["codes"][0] == code, (name, got[name])
    assert got["floor"]["green"] and got["signed"]["green"] and got["pinned"]["green"]
    assert got["envelope-url-safe-no-keyid"]["green"]
    assert got["forged-no-anchor"]["green"]  # integrity only: said so in the first reason
    assert got["forged-no-anchor"]["codes"][0] == "integrity-only"


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
    got = _node(tmp_path, {"manifest": {}, "schemas": {}, "cases": [], "canon": texts})["canon"]
    for value, js in zip(values, got, strict=True):
        assert js == canonical_bytes(value).decode("utf-8"), value


def test_js_schema_subset_covers_the_schemas() -> None:
    """The page implements exactly the keywords validation.py words errors for, and every
    schema (figures schemas included) stays inside them."""
    script = (TEMPLATES / "verifier.js").read_text(encoding="utf-8")
    supported = set(
        re.search(r"var KEYWORDS = \[(.*?)\];", script, re.S).group(1)
        .replace('"', "").replace("\n", "").replace(" ", "").split(",")
    )
    assert supported == set(KEYWORDS)

    def keywords(node: Any, under_props: bool = False) -> set[str]:
        out: set[str] = set()
        if isinstance(node, dict):
            for key, value in node.items():
                if not under_props:
                    out.add(key)
                if key not in ("const", "enum", "examples"):
                    out |= keywords(value, key in ("properties", "$defs"))
        elif isinstance(node, list):
            for value in node:
                out |= keywords(value)
        return out

    for name, schema in package_schemas().documents.items():
        assert keywords(schema) - supported == set(), name


def test_js_subset_check_catches_a_planted_keyword() -> None:
    planted = {"$schema": SCHEMA_DIALECT, "type": "object", "patternProperties": {}}
    with pytest.raises(ValueError, match="patternProperties"):
        package_schemas().with_documents({"figures/x": planted})


# --- the reason-code table: embedded into the page, read by its verifier --------------------


def test_built_page_carries_the_code_table(tmp_path: Path) -> None:
    """The page's script is verifier.js with the table of pytools.publish.codes put in its
    one slot; the template itself carries no table."""
    make_release(tmp_path)
    html = build_site(tmp_path, tmp_path / "site", now=NOW).read_text(encoding="utf-8")
    script = verifier_script()
    assert script in html and CODES_SLOT not in html
    embedded = re.search(r"var CODES = (\[.*?\]);\n", script).group(1)
    assert json.loads(embedded) == table_for_page()
    assert (TEMPLATES / "verifier.js").read_text(encoding="utf-8").count(CODES_SLOT) == 1


def test_verifier_without_the_table_refuses_to_run(tmp_path: Path) -> None:
    if NODE is None:
        pytest.skip("node is not installed")
    proc = subprocess.run([NODE, "-e", f"require({str(TEMPLATES / 'verifier.js')!r})"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode != 0 and "reason-code table is not embedded" in proc.stderr


def test_a_codes_verdict_is_read_from_the_table(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: the table says `listed` is red. A genuine certificate, green under the real
    table, turns red in both verifiers: each reads the code's verdict from the table."""
    paths = make_release(tmp_path)
    manifest_bytes = paths["manifest"].read_bytes()
    floor = paths["floor"].read_bytes()
    job = {"manifest": {"name": "certificates/MANIFEST.json", "b64": _b64(manifest_bytes)},
           "envelope": None, "schemas": package_schemas().for_page(),
           "cases": [{"name": "floor", "b64": _b64(floor)}], "canon": []}
    planted = [dict(c, verdict="red") if c["code"] == "listed" else c
               for c in table_for_page()]
    manifest = load_manifest(paths["manifest"])
    anchor = check_anchor(manifest, AnchorOptions(), None, "none")

    (js,) = _node(tmp_path, job)["verdicts"]
    assert js["green"] and verify_bytes(floor, manifest, anchor=anchor).green
    (js,) = _node(tmp_path, job, planted)["verdicts"]
    monkeypatch.setattr(codes, "RED_CODES", codes.RED_CODES | {"listed"})
    python = verify_bytes(floor, manifest, anchor=anchor)
    assert not js["green"] and not python.green
    assert js["codes"] == python.codes and "listed" in python.codes


def test_an_unreadable_input_gets_the_same_verdict_in_both_verifiers(tmp_path: Path) -> None:
    """A file that cannot be read (the page: a dropped file whose bytes the browser refuses;
    the CLI: a missing path) is red with the anchor's reasons and ``unreadable``, alike."""
    from pytools.publish.verify import unreadable

    paths = make_release(tmp_path)
    job = {"manifest": {"name": "certificates/MANIFEST.json",
                        "b64": _b64(paths["manifest"].read_bytes())},
           "envelope": None, "schemas": package_schemas().for_page(),
           "cases": [{"name": "gone.json", "b64": "", "unreadable": "no such file"}],
           "canon": []}
    (js,) = _node(tmp_path, job)["verdicts"]
    anchor = check_anchor(load_manifest(paths["manifest"]), AnchorOptions(), None, "none")
    python = unreadable(Path("gone.json"), "no such file", anchor)
    assert not js["green"] and not python.green
    assert js["codes"] == python.codes == ["integrity-only", "unreadable"]
    assert js["reasons"] == python.reasons
