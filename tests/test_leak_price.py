"""The price of isolation (``pytools.results.leak.price``): the one-pass stack computation
against the direct simulation of the Lean designs (``probe.SharedLru``: ``KVCache.Leak.lru``;
``probe.PartitionedLru``: ``quotaLru``), hand-counted traces, the tenant and quota rules, bad
input, and the certificate's figures recomputed from the trace."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytools.results.leak import price, result
from pytools.results.leak.cli import main as leak_cli
from pytools.results.leak.price_output import COLUMNS, price_csv, price_svg
from pytools.results.leak.probe import PartitionedLru, SharedLru

DESIGNS = price.DESIGNS


def direct(reqs: Sequence[Sequence[int]], tenants: Sequence[int], design: str,
           capacities: Sequence[int], count: int) -> list[tuple[int, int]]:
    """(hits, system-block hits) by serving every request through the Lean transcription."""
    traffic = [0] * count
    for r, t in zip(reqs, tenants, strict=True):
        traffic[t] += len(r)
    out = []
    for c in capacities:
        if design in ("unsalted", "salted"):
            pool: SharedLru | PartitionedLru = SharedLru(c)
        else:
            q = price.proportional_quotas(c, traffic) if design == "proportional" \
                else price.equal_quotas(c, count)
            pool = PartitionedLru(q)
        hits = system = 0
        for r, t in zip(reqs, tenants, strict=True):
            seen = pool.serve(0 if design == "unsalted" else t, r)
            hits += seen
            system += seen > 0
        out.append((hits, system))
    return out


def random_trace(rng: random.Random) -> tuple[list[list[int]], list[int], int]:
    """Requests that start with block 0 and continue a random conversation's prefix; each
    request's tenant drawn at random (so tenants share conversations' blocks)."""
    convs = [[100 * (i + 1) + j for j in range(rng.randint(1, 6))]
             for i in range(rng.randint(1, 8))]
    reqs = []
    for _ in range(rng.randint(1, 30)):
        c = rng.choice(convs)
        reqs.append([0, *c[: rng.randint(1, len(c))]])
    count = rng.randint(1, 4)
    return reqs, [rng.randrange(count) for _ in reqs], count


CAPS = tuple(range(0, 24))


@pytest.mark.parametrize("seed", range(8), ids=lambda s: f"seed{s}")
def test_stack_pass_equals_the_lean_designs_served_directly(seed: int) -> None:
    """At every capacity 0..23, every design's hits (and its system-block hits) from the one
    pass equal those of the direct simulation of the Lean definitions."""
    rng = random.Random(seed)
    for _ in range(40):
        reqs, tenants, count = random_trace(rng)
        for d in DESIGNS:
            assert price.serve(reqs, tenants, d, CAPS, count) == \
                direct(reqs, tenants, d, CAPS, count), (d, reqs, tenants)


def test_planted_wrong_order_is_caught_by_the_direct_simulation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted defect: the prompt's last block ends most recent (the order reversed). The
    comparison above fails on it."""
    def wrong(reqs: Sequence[Sequence[int]], salts: Sequence[int] | None = None
              ) -> price.Depths:
        flipped = [[r[0], *reversed(r[1:])] for r in reqs]
        return right(flipped, salts)

    right = price.stream_depths
    monkeypatch.setattr(price, "stream_depths", wrong)
    rng = random.Random(3)
    differs = 0
    for _ in range(40):
        reqs, tenants, count = random_trace(rng)
        differs += price.serve(reqs, tenants, "salted", CAPS, count) != \
            direct(reqs, tenants, "salted", CAPS, count)
    assert differs > 0


def test_hand_counted_trace() -> None:
    """Tenants A = 0 and B = 1: A [0 1 2], B [0 3], A [0 1 2], B [0 3] (counted by hand)."""
    reqs, tenants = [[0, 1, 2], [0, 3], [0, 1, 2], [0, 3]], [0, 1, 0, 1]
    big = 100
    # unsalted: 0, 1 (block 0 is A's), 3, 2; salted: B's first request misses its own 0
    assert price.serve(reqs, tenants, "unsalted", [big, 3], 2) == [(6, 3), (4, 3)]
    assert price.serve(reqs, tenants, "salted", [big, 3], 2) == [(5, 2), (1, 1)]
    # equal quotas 2 + 2: A keeps [0 1] and sees 2, B keeps [0 3] and sees 2
    assert price.serve(reqs, tenants, "equal", [4], 2) == [(4, 2)]
    # by traffic (6 and 4 references): C = 5 -> A 3, B 2: A sees 3, B 2
    assert price.proportional_quotas(5, [6, 4]) == [3, 2]
    assert price.serve(reqs, tenants, "proportional", [5], 2) == [(5, 2)]


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
def test_model_facts(seed: int) -> None:
    """Salted never above unsalted; one tenant with equal quotas is the shared pool; each
    tenant of the partitioned cache scores what a private LRU of its quota scores on its own
    requests (the meaning of KVCache.Leak.quota_own_reuse)."""
    rng = random.Random(100 + seed)
    for _ in range(30):
        reqs, tenants, count = random_trace(rng)
        un = price.serve(reqs, tenants, "unsalted", CAPS, count)
        sa = price.serve(reqs, tenants, "salted", CAPS, count)
        assert all(s[0] <= u[0] for s, u in zip(sa, un, strict=True))
        ones = [0] * len(reqs)
        assert price.serve(reqs, ones, "equal", CAPS, 1) == \
            price.serve(reqs, ones, "unsalted", CAPS, 1)
        for c in (3, 9):
            quotas = price.equal_quotas(c, count)
            private = 0
            for u in set(tenants):
                own = [r for r, t in zip(reqs, tenants, strict=True) if t == u]
                private += price.serve(own, [0] * len(own), "unsalted", [quotas[u]], 1)[0][0]
            assert price.serve(reqs, tenants, "equal", [c], count)[0][0] == private


def test_quota_rules() -> None:
    assert price.equal_quotas(10, 4) == [3, 3, 2, 2]
    assert price.proportional_quotas(10, [1, 1, 1]) == [4, 3, 3]
    assert price.proportional_quotas(7, [5, 3, 2]) == [4, 2, 1]  # 3.5 2.1 1.4
    assert price.proportional_quotas(64, [0, 5, 0]) == [0, 64, 0]
    for c in (1, 63, 1000):
        assert sum(price.proportional_quotas(c, [7, 1, 300, 2])) == c
    with pytest.raises(ValueError, match="no traffic"):
        price.proportional_quotas(4, [0, 0])


def test_tenant_rules_are_seeded_and_zipf_is_skewed() -> None:
    keys = list(range(1, 4001))
    uni = [price.uniform_tenant(k, 4) for k in keys]
    assert uni == [price.uniform_tenant(k, 4) for k in keys]
    assert uni != [price.uniform_tenant(k, 4, seed=price.SEED + 1) for k in keys]
    assert all(800 < uni.count(t) < 1200 for t in range(4))
    cdf = price.zipf_cdf(4)
    zipf = [price.zipf_tenant(k, cdf) for k in keys]
    counts = [zipf.count(t) for t in range(4)]  # weights 1, 1/2, 1/3, 1/4: shares .48 .24 ...
    assert counts == sorted(counts, reverse=True) and counts[0] > 1.7 * counts[1]


def _write(path: Path, lines: Sequence[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(("lines", "message"), [
    (['{"hash_ids": [0, 1]}', '{"hash_ids": [0, 1, x]}'], ":2: malformed JSON"),
    (['{"hash_ids": [0, 1]}', '{"hash_ids": [5, 6]}'], ":2: the tenant rule needs"),
    (['{"hash_ids": [0, 1]}', '{"hash_ids": [0]}'], ":2: the tenant rule needs"),
    (['{"hash_ids": [0, 1, 1]}'], ":1: a request repeats a block id"),
], ids=["malformed", "no-system-block", "system-only", "repeat"])
def test_bad_trace_is_a_clear_error_naming_the_file_and_line(
        tmp_path: Path, lines: list[str], message: str) -> None:
    path = _write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(price.PriceError, match=message) as err:
        price.price_of_trace(path)
    assert str(path) in str(err.value)
    out = tmp_path / "out"
    shown = CliRunner().invoke(leak_cli, ["price", "--trace", str(path), "--out", str(out)])
    assert shown.exit_code != 0 and str(path) in shown.output and message in shown.output
    assert not out.exists()


def test_cli_price_on_a_small_trace(tmp_path: Path) -> None:
    lines = [json.dumps({"hash_ids": [0, 10 * (i % 5) + 1, 10 * (i % 5) + 2]})
             for i in range(40)]
    path = _write(tmp_path / "small.jsonl", lines)
    out = tmp_path / "out"
    shown = CliRunner().invoke(leak_cli, ["price", "--trace", str(path), "--out", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "40 requests" in shown.output and "5 conversations" in shown.output
    rows = (out / "price_of_isolation.csv").read_text("utf-8").splitlines()
    assert rows[1] == ",".join(COLUMNS)
    assert len(rows) == 2 + len(price.SPLITS) * len(price.TENANT_COUNTS) * len(price.CAPACITIES)
    assert (out / "price_of_isolation.svg").read_bytes().lstrip().startswith(b"<?xml")


def test_planted_claims_fail() -> None:
    row = {"salted_loss_hits": -1}
    big = {"salted_loss_hits": 3, "system_block_copies_minus_one": 3}
    assert price.price_claims({"table": [row], "largest_capacity_loss": [big]}) == {
        "salted_never_above_unsalted": False, "large_capacity_loss_is_the_system_copies": True}
    wrong = {**big, "salted_loss_hits": 4}
    assert not price.price_claims({"table": [], "largest_capacity_loss": [wrong]})[
        "large_capacity_loss_is_the_system_copies"]


def test_certify_refuses_a_failing_price_claim(repo_root: Path, trace_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(result, "price_claims", lambda f: {"salted_never_above_unsalted": False})
    checked = result.rechecked_evidence(repo_root)
    assert "price of isolation: claim salted_never_above_unsalted fails" in checked.problems
    with pytest.raises(result.EvidenceError, match="price of isolation"):
        result.evidence(repo_root)


def test_an_absent_trace_is_a_clear_error(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTOOLS_SHARED", str(tmp_path / "nowhere"))
    with pytest.raises(result.EvidenceError, match="the Mooncake trace is absent"):
        result.price_of_isolation(tmp_path)


# --------------------------------------------------------------------------- the real trace


def test_the_tenant_rule_on_the_trace(trace_path: Path) -> None:
    """Every request starts with one block; a conversation is its second block; no other
    block is in two conversations (so the system block is the only block tenants share)."""
    reqs = [json.loads(line)["hash_ids"] for line in trace_path.open(encoding="utf-8")]
    firsts = {r[0] for r in reqs}
    assert len(firsts) == 1
    owner: dict[int, int] = {}
    for r in reqs:
        for b in r[1:]:
            assert owner.setdefault(b, r[1]) == r[1]
    conv = price.conversations(price.read_trace(trace_path))
    assert conv.system_block == firsts.pop() and conv.count == len({r[1] for r in reqs})


def test_certificate_figures_recomputed_from_the_trace(repo_root: Path,
                                                       trace_path: Path) -> None:
    """The committed certificate's price figures and input hash are the trace's, now."""
    cert = json.loads((repo_root / "certificates" / "tenant-leak.json").read_text("utf-8"))
    fresh, trace_input = result.price_of_isolation(repo_root)
    assert cert["figures"]["price_of_isolation"] == fresh
    assert {"path": trace_input.path, "sha256": trace_input.sha256} in [
        {"path": i["path"], "sha256": i["sha256"]} for i in cert["inputs"]]
    t = fresh["trace"]
    reqs = [json.loads(line)["hash_ids"] for line in trace_path.open(encoding="utf-8")]
    assert t["system_block"] == reqs[0][0] and t["requests"] == len(reqs)
    assert t["conversations"] == len({r[1] for r in reqs})
    assert all(fresh["claims"].values())
    assert price_csv(fresh["table"], t["sha256"]) == \
        (repo_root / "certificates" / "figures" / "tenant-leak" /
         "price_of_isolation.csv").read_bytes()


def test_plot_is_byte_deterministic(repo_root: Path, trace_path: Path) -> None:
    table = result.price_of_isolation(repo_root)[0]["table"]
    assert price_svg(table) == price_svg(table)
