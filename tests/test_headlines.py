"""README's per-result headlines are computed from the certificates: every published result
has one, each reads its figures from the certificate it is given (a changed figure changes the
sentence), a missing figure is a named problem, and the summary block links each result to its
page under docs/results/."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytools.publish import bundle, headlines
from pytools.results.registry import published_results

ROOT = Path(__file__).resolve().parent.parent


def committed(result: str) -> dict[str, Any]:
    return json.loads((ROOT / "certificates" / f"{result}.json").read_text(encoding="utf-8"))


def test_every_published_result_has_a_headline_and_a_page() -> None:
    ids = [spec.id for spec in published_results()]
    assert sorted(headlines.HEADLINES) == sorted(ids)
    for rid in ids:
        assert (ROOT / headlines.doc_link(rid)).is_file(), rid
        line = headlines.headline(committed(rid))
        assert line and "|" not in line and "\n" not in line, rid


# For each result: a figure path, and how the headline must print it.
DRIFTS: list[tuple[str, tuple[str | int, ...], Any, str]] = [
    ("demand-fetch-ceiling", ("window", "warm_start", "ceiling_percent"), "41.0000",
     "41.0000 % of it after"),
    ("demand-fetch-ceiling", ("max_hits",), 123456, "123,456 of"),
    ("single-owner-kernel", ("workflows",), 33, "of 33 named workflows"),
    ("single-owner-kernel", ("reachable_states",), 302, "the 302 reachable"),
    ("pooled-placement", ("per_instance_misses",), 28, "at best 28"),
    ("pooled-placement", ("optimum_windows", "windows", 0, "belady_bypass_misses"), 1,
     "on 4 of 5 windows"),
    ("pooled-placement", ("binding_instance", "optimum"), 17, "agree: 17 misses"),
    ("pooled-placement", ("routing_cost", "prices", "remote_us"), 2879, "r = 2,879 µs"),
    ("single-owner-kernel", ("mac_workflows_agree",), 39, "and 39 of 40 of its workflows"),
    ("single-owner-kernel", ("mac_reachable_states",), 37, "37 states listed"),
    ("tenant-leak", ("totals", "cross_tenant_hit_tokens_unsalted"), 7000, "served 7,000 of"),
    ("tenant-leak", ("upper_bounds", "keyed_salt", "leaking_pairs"), 3, "and 3 of 1,000"),
    ("tenant-leak", ("served_partition", "partitioned", "cached_tokens_when_sent"), [96, 608],
     "96 or 608 and"),
    ("tenant-leak", ("served_partition", "partitioned", "trials"), 199, "(199 trials"),
]


@pytest.mark.parametrize(("result", "path", "value", "printed"), DRIFTS)
def test_planted_drifted_figure_changes_the_headline(result: str, path: tuple[str | int, ...],
                                                     value: Any, printed: str) -> None:
    cert = committed(result)
    before = headlines.headline(cert)
    assert before is not None and printed not in before
    planted = copy.deepcopy(cert)
    node = planted["figures"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    after = headlines.headline(planted)
    assert after is not None and printed in after


def test_routing_cost_clause_is_the_cheapest_row_at_the_plots_memory() -> None:
    from pytools.results.placement.routing_cost_report import PLOT_CAPACITY

    assert headlines.ROUTING_COST_CAPACITY == PLOT_CAPACITY
    cert = committed("pooled-placement")
    rows = cert["figures"]["routing_cost"]["rows"]
    hosts = max(r["hosts"] for r in rows)
    mine = [r for r in rows if r["capacity"] == PLOT_CAPACITY and r["hosts"] == hosts]
    best = min(mine, key=lambda r: r["cost_us"])
    assert f"cheapest routing ({best['routing']})" in (headlines.headline(cert) or "")
    # Planted: another routing made cheapest is the one the headline names.
    other = next(r for r in mine if r["routing"] != best["routing"])
    other["cost_us"] = best["cost_us"] - 1
    assert f"cheapest routing ({other['routing']})" in (headlines.headline(cert) or "")
    for row in rows:
        row["capacity"] += 1
    with pytest.raises(headlines.HeadlineError, match="no row of `routing_cost`"):
        headlines.headline(cert)


def test_isolation_headline_is_the_certificates_statement() -> None:
    cert = committed("isolation-floor")
    assert "`2 ^ (T * n) ≤ s`" in (headlines.headline(cert) or "")
    planted = copy.deepcopy(cert)
    for theorem in planted["theorems"]:
        if theorem["name"] == "KVCache.Isolation.two_pow_le_of_exact":
            theorem["statement"] = theorem["statement"].replace("2 ^ (T * n)", "2 ^ T")
    assert "`2 ^ T ≤ s`" in (headlines.headline(planted) or "")


def test_planted_missing_figure_is_a_named_error() -> None:
    cert = committed("single-owner-kernel")
    del cert["figures"]["cases_checked"]
    with pytest.raises(headlines.HeadlineError,
                       match="single-owner-kernel: no figure `cases_checked`"):
        headlines.headline(cert)
    isolation = committed("isolation-floor")
    isolation["theorems"] = []
    with pytest.raises(headlines.HeadlineError, match="no theorem"):
        headlines.headline(isolation)


def test_summary_block_rows_link_the_page_and_carry_the_headline() -> None:
    derived = bundle.Derived()
    for rid in ("tenant-leak", "demo-result"):
        cert = committed("tenant-leak") if rid == "tenant-leak" else {"result": rid}
        derived.certs[f"certificates/{rid}.json"] = cert
        derived.rows.append((rid, 3, "propext", "ok"))
    summary = {"declarations": 1, "user_facing": 1, "auxiliary": 0, "user_facing_theorems": 1,
               "findings": 0, "allowed_axioms": ["propext"], "trusted_core_theorems": 0}
    block = bundle.summary_block(derived, summary)
    leak = headlines.headline(committed("tenant-leak"))
    assert f"| [`tenant-leak`](docs/results/tenant-leak.md) | {leak} | 3 | propext | ok |" \
        in block
    assert "| [`demo-result`](docs/results/demo-result.md) | — | 3 | propext | ok |" in block


def test_planted_missing_figure_fails_assembly_with_a_problem(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(f"{bundle.SUMMARY_START}\n{bundle.SUMMARY_END}\n")
    cert = committed("single-owner-kernel")
    del cert["figures"]["workflows"]
    derived = bundle.Derived(certs={"certificates/single-owner-kernel.json": cert},
                             rows=[("single-owner-kernel", 1, "none", "ok")])
    derived.summary = {"declarations": 1, "user_facing": 1, "auxiliary": 0,
                       "user_facing_theorems": 1, "findings": 0, "allowed_axioms": [],
                       "trusted_core_theorems": 0}
    derived.source = {"library_tree": "0" * 40, "tree_entries": ["Proofs"], "commit": None}
    bundle.assemble(tmp_path, derived)
    assert derived.problems == [
        "README summary: single-owner-kernel: no figure `workflows` for its headline"]
    assert "README.md" not in derived.files


def test_pin_block_carries_the_manifests_hash(tmp_path: Path) -> None:
    from pytools.publish.canonical import sha256_bytes

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{bundle.PIN_START}\nstale\n{bundle.PIN_END}\nrest\n")
    summary = {"declarations": 1, "user_facing": 1, "auxiliary": 0, "user_facing_theorems": 1,
               "findings": 0, "allowed_axioms": [], "trusted_core_theorems": 0}
    derived = bundle.Derived(summary=summary, source={})
    bundle.assemble(tmp_path, derived)
    digest = sha256_bytes(derived.files["certificates/MANIFEST.json"])
    assert derived.files["README.md"].decode() == (
        f"# x\n{bundle.PIN_START}\n```sh\n.venv/bin/pytools verify --manifest-sha256 {digest}\n"
        f"```\n{bundle.PIN_END}\nrest\n")
    readme.write_text("# no markers\n")
    again = bundle.Derived(summary=summary, source={})
    bundle.assemble(tmp_path, again)
    assert "README.md" not in again.files
