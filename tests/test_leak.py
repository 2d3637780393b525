"""The leak reproduction without the engines: prompts, reference model, scenarios, the committed
evidence and its re-check, with planted defects for every check certify relies on."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pytools.admission.request_policy import Admitted, Refused
from pytools.paths import shared_dir
from pytools.results.leak import evidence as ev
from pytools.results.leak import result, scenarios
from pytools.results.leak.cli import main as leak_cli
from pytools.results.leak.prompts import BOUND, HEADLINE, PromptParams, generate, prompts_sha256
from pytools.results.leak.reference import ReferenceEngine, ReferenceSession
from pytools.results.leak.scenarios import METRICS, Salts, run_pair, run_pairs


@pytest.fixture(scope="module")
def committed(repo_root: Path) -> dict[str, dict[str, Any]]:
    return {e: ev.load_evidence(ev.evidence_path(repo_root, e), e) for e in ("vllm", "sglang")}


@pytest.fixture(scope="module")
def reference() -> dict[str, dict[str, list[int]]]:
    """The reference model's counts for every run (16-token blocks), computed once."""
    return ev.reference_counts(16)


# --------------------------------------------------------------------------- prompts


def test_prompts_are_deterministic_and_shaped() -> None:
    pairs = generate(HEADLINE)
    assert len(pairs) == 12
    assert prompts_sha256(pairs) == prompts_sha256(generate(HEADLINE))
    for p in pairs:
        assert 544 <= len(p.victim) == len(p.other) <= 784
        assert p.shared == len(p.victim) - 48
        assert p.victim[: p.shared] == p.other[: p.shared]
        assert p.victim[p.shared] != p.other[p.shared]  # the shared prefix is exact
        assert all(0 <= t < 32_000 for t in p.victim + p.other)


def test_prompt_hash_changes_with_a_token() -> None:
    pairs = generate(replace(HEADLINE, pairs=2))
    other = list(pairs)
    other[1] = replace(other[1], other=other[1].other[:-1] + (other[1].other[-1] + 1,))
    assert prompts_sha256(pairs) != prompts_sha256(other)


def test_inconsistent_prompt_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="inconsistent"):
        generate(PromptParams(seed=1, pairs=1, min_len=40, max_len=30))


# --------------------------------------------------------------------------- reference model


def test_reference_hits_whole_blocks_and_isolates_salts() -> None:
    cache = ReferenceSession(block_size=16)
    a = list(range(100))
    assert cache.serve(a, None) == 0
    b = a[:50] + [999] * 50
    assert cache.serve(b, None) == 48  # 3 whole blocks of the 50 shared tokens
    assert cache.serve(a, None) == 96  # capped at len - 1 = 99, rounded down to blocks
    assert cache.serve(a, "s") == 0  # another salt: another namespace
    assert cache.serve(b, "t") == 0
    assert cache.serve(a, "s") == 96


def test_reference_counts_the_last_token_as_computed() -> None:
    cache = ReferenceSession(block_size=16)
    a = list(range(64))  # exactly 4 blocks
    cache.serve(a, None)
    assert cache.serve(a, None) == 48  # at most 63 tokens from cache: 3 blocks


def test_scenarios_on_the_reference_show_leak_and_closure() -> None:
    counts = run_pairs(ReferenceEngine(), generate(HEADLINE), Salts.for_seed(HEADLINE.seed))
    assert all(v > 0 for v in counts["cross_tenant_hit_tokens_unsalted"])
    assert not any(counts["cross_tenant_hit_tokens_salted"])
    assert counts["own_hit_tokens_unsalted"] == counts["own_hit_tokens_salted"] \
        == counts["own_hit_tokens_keyed_salt"]
    assert counts["adversary_hit_tokens_guessable_salt"] == \
        counts["cross_tenant_hit_tokens_unsalted"]
    assert not any(counts["adversary_hit_tokens_keyed_salt"])
    assert counts["adversary_salt_claims_refused"] == [1] * 12


def passthrough_admit(body: bytes, tenant: str, secret: bytes, *_: Any) -> Admitted | Refused:
    """A broken admission: forwards the body as it came (client salts allowed, none bound)."""
    doc = json.loads(body)
    return Admitted(body, doc.get("cache_salt"), False)


def tenant_blind_admit(body: bytes, tenant: str, secret: bytes, *_: Any) -> Admitted | Refused:
    """A broken admission: refuses client salts but keys the salt by nothing tenant-specific."""
    doc = json.loads(body)
    if "cache_salt" in doc:
        return Refused(400, "no")
    doc["cache_salt"] = scenarios.keyed_salt(secret, "everyone")
    return Admitted(json.dumps(doc).encode(), doc["cache_salt"], False)


@pytest.mark.parametrize("broken, refused", [(passthrough_admit, 0), (tenant_blind_admit, 1)])
def test_planted_defect_broken_admission_is_caught(monkeypatch: pytest.MonkeyPatch, broken: Any,
                                                   refused: int) -> None:
    """Planted defects: an admission that binds no salt, or one salt for all tenants, reopens
    the leak, and the keyed scenario's counts show it."""
    monkeypatch.setattr(scenarios, "admit", broken)
    pair = generate(HEADLINE)[0]
    row = run_pair(ReferenceEngine(), pair, Salts.for_seed(HEADLINE.seed))
    assert row["adversary_salt_claims_refused"] == refused
    assert row["adversary_hit_tokens_keyed_salt"] == pair.shared // 16 * 16 > 0


def test_planted_defect_leaky_engine_disagrees_with_the_reference(
        committed: dict[str, dict[str, Any]], reference: dict[str, Any]) -> None:
    """Planted defect: an engine that ignores salts yields counts that recheck refuses."""

    class Leaky(ReferenceEngine):
        def session(self) -> ReferenceSession:
            inner = ReferenceSession(self.block_size)

            class Unsalted:
                def serve(self, tokens: Any, salt: str | None) -> int:
                    return inner.serve(tokens, None)

            return Unsalted()  # type: ignore[return-value]

    doc = copy.deepcopy(committed["vllm"])
    doc["runs"]["headline"]["counts"] = run_pairs(Leaky(block_size=16), generate(HEADLINE),
                                                  Salts.for_seed(HEADLINE.seed))
    problems = ev.recheck(doc, reference)
    assert any("cross_tenant_hit_tokens_salted" in p and "disagrees" in p for p in problems)


# --------------------------------------------------------------------------- evidence


def test_committed_evidence_rechecks(committed: dict[str, dict[str, Any]],
                                     reference: dict[str, Any]) -> None:
    for engine, doc in committed.items():
        assert ev.recheck(doc, reference) == [], engine
        assert doc["engine"]["name"] == engine


def test_committed_evidence_is_written_canonically(repo_root: Path,
                                                   committed: dict[str, dict[str, Any]]) -> None:
    for engine, doc in committed.items():
        text = ev.evidence_path(repo_root, engine).read_text(encoding="utf-8")
        assert text == ev.dumps(doc) + "\n"


@pytest.mark.parametrize("tamper, expect", [
    (lambda d: d["runs"]["headline"]["counts"]["cross_tenant_hit_tokens_salted"]
     .__setitem__(0, 16), "reference model disagrees"),
    (lambda d: d["runs"]["bound"]["counts"]["own_hit_tokens_salted"].__setitem__(5, 0),
     "reference model disagrees"),
    (lambda d: d["runs"]["headline"].__setitem__("prompts_sha256", "0" * 64),
     "do not regenerate"),
    (lambda d: d["runs"]["bound"]["params"].__setitem__("seed", 1), "params differ"),
    (lambda d: d["salts"].__setitem__("throwaway_secret_hex", "00" * 32), "salts"),
    (lambda d: d["salts"]["keyed"].__setitem__("tenant-a", "k1-" + "0" * 64), "salts"),
    (lambda d: d.__setitem__("generator", "other/v9"), "generator"),
])
def test_planted_defect_tampered_evidence_is_refused(
        committed: dict[str, dict[str, Any]], reference: dict[str, Any], tamper: Any,
        expect: str) -> None:
    doc = copy.deepcopy(committed["vllm"])
    tamper(doc)
    problems = ev.recheck(doc, reference)
    assert any(expect in p for p in problems), problems


@pytest.mark.parametrize("tamper, expect", [
    (lambda d: d["engine"].__setitem__("name", "sglang"), "engine must name"),
    (lambda d: d["runs"].pop("bound"), "runs must be exactly"),
    (lambda d: d["runs"]["headline"]["counts"]["own_hit_tokens_salted"].pop(), "counts >= 0"),
    (lambda d: d["runs"]["headline"]["counts"]["own_hit_tokens_salted"].__setitem__(0, -1),
     "counts >= 0"),
    (lambda d: d.__setitem__("format", "x"), "format"),
])
def test_planted_defect_malformed_evidence_is_refused(
        committed: dict[str, dict[str, Any]], tamper: Any, expect: str) -> None:
    doc = copy.deepcopy(committed["vllm"])
    tamper(doc)
    assert any(expect in p for p in ev.shape_problems(doc, "vllm"))


def test_missing_or_broken_evidence_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ev.EvidenceError, match="pytools.leak run --engine vllm"):
        ev.load_evidence(tmp_path / "vllm.json", "vllm")
    (tmp_path / "vllm.json").write_text("{not json")
    with pytest.raises(ev.EvidenceError, match="vllm.json: not valid JSON"):
        ev.load_evidence(tmp_path / "vllm.json", "vllm")


def test_write_evidence_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "e.json"
    ev.write_evidence(path, {"b": [1, 2], "a": {"c": "d"}})
    assert json.loads(path.read_text()) == {"a": {"c": "d"}, "b": [1, 2]}
    assert [p.name for p in path.parent.iterdir()] == ["e.json"]


# --------------------------------------------------------------------------- the result


def test_result_figures_show_the_claims(repo_root: Path) -> None:
    figures = result.evidence(repo_root).figures
    assert figures["engine"] == {"name": "vllm", "version": "0.33.0"}
    assert figures["second_engine"]["engine"]["name"] == "sglang"
    for f in (figures, figures["second_engine"]):
        assert all(f["claims"].values()), f["claims"]
        assert len(f["cross_tenant_hit_tokens_unsalted"]) == 12
        for metric in METRICS:
            assert len(f[metric]) == 12
        assert set(f["upper_bounds"]) == {"per_tenant_salt", "keyed_salt"}
        assert f["upper_bounds"]["keyed_salt"]["upper_bound_rule_of_three"] == 0.003
    assert figures["engines_agree"] and figures["reference_model_agrees"]
    assert figures["prompts"]["bound"]["pairs"] == BOUND.pairs == 1000
    from pytools.publish.site.evidence import ANNOTATION_KEYS  # the site reads these keys

    assert not [k for k, v in figures.items() if isinstance(v, dict) and ANNOTATION_KEYS & v.keys()]
    from pytools.publish.validation import package_schemas

    schemas = package_schemas()
    assert schemas.errors(figures, "figures/tenant-leak") == []
    planted = {**figures, "claims": {**figures["claims"], "zero_with_keyed_salt": "yes"}}
    assert schemas.errors(planted, "figures/tenant-leak") == [
        "/claims/zero_with_keyed_salt: expected boolean, found string"]


def test_upper_bounds() -> None:
    assert result.rule_of_three(1000) == 0.003
    assert result.exact_upper(1000) == pytest.approx(0.002991, abs=1e-6)
    assert result.exact_upper(12) == pytest.approx(0.221, abs=1e-3)


def test_result_fails_on_a_missing_evidence_file(tmp_path: Path, repo_root: Path) -> None:
    (tmp_path / "data" / "leak").mkdir(parents=True)
    src = ev.evidence_path(repo_root, "vllm")
    (tmp_path / "data" / "leak" / "vllm.json").write_bytes(src.read_bytes())
    with pytest.raises(ev.EvidenceError, match="sglang.json"):
        result.evidence(tmp_path)


@pytest.fixture(autouse=True)
def _shared_data(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    """A planted root under tmp_path reads the shared trace (the price of isolation's input)
    where the real root does."""
    monkeypatch.setenv("PYTOOLS_SHARED", str(shared_dir(repo_root)))


def _copy_with_tampered_evidence(repo_root: Path, root: Path, tamper: Any) -> Path:
    """A root holding the committed evidence files (``vllm``'s tampered) and the code inputs."""
    for engine in ("vllm", "sglang"):
        doc = json.loads(ev.evidence_path(repo_root, engine).read_text(encoding="utf-8"))
        if engine == "vllm":
            tamper(doc)
        ev.write_evidence(ev.evidence_path(root, engine), doc)
    for rel in result.CODE_INPUTS:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes((repo_root / rel).read_bytes())
    for record in sorted((repo_root / "data" / "leak").glob("*.json")):  # the others, untouched
        if not (root / "data" / "leak" / record.name).exists():
            (root / "data" / "leak" / record.name).write_bytes(record.read_bytes())
    return root


def test_planted_disagreement_is_a_false_figure_and_a_certify_error(
        tmp_path: Path, repo_root: Path, reference: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted defect: one count off the reference model. The figure says false (it is
    computed, not assumed), and certify's evidence function refuses it."""
    monkeypatch.setattr(result, "reference_counts", lambda block_size: reference)
    root = _copy_with_tampered_evidence(repo_root, tmp_path, lambda d: d["runs"]["bound"][
        "counts"]["own_hit_tokens_salted"].__setitem__(5, 0))
    checked = result.rechecked_evidence(root)
    figures = checked.evidence.figures
    assert figures["reference_model_agrees"] is False
    assert figures["keyed_salt"]["recomputed_and_within_vllm_rules"] is True
    assert any("vllm: runs.bound.own_hit_tokens_salted: the reference model disagrees" in p
               for p in checked.problems), checked.problems
    with pytest.raises(ev.EvidenceError, match="reference model disagrees"):
        result.SPEC.evidence(root)  # type: ignore[misc]
    shown = CliRunner().invoke(leak_cli, ["--root", str(root)])
    assert shown.exit_code != 0 and "reference model agrees: False" in shown.output
    assert "reference model disagrees" in shown.output


def test_planted_salt_that_does_not_recompute_is_a_false_figure(
        tmp_path: Path, repo_root: Path, reference: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(result, "reference_counts", lambda block_size: reference)
    root = _copy_with_tampered_evidence(repo_root, tmp_path, lambda d: d["salts"][
        "keyed"].__setitem__("tenant-a", "k1-" + "0" * 64))
    checked = result.rechecked_evidence(root)
    assert checked.evidence.figures["keyed_salt"]["recomputed_and_within_vllm_rules"] is False
    assert checked.evidence.figures["reference_model_agrees"] is True
    assert any("salts" in p for p in checked.problems)


def test_cli_show_and_check(repo_root: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(leak_cli, ["--root", str(repo_root)])
    assert shown.exit_code == 0, shown.output
    assert "vllm 0.33.0" in shown.output and "engines agree: True" in shown.output
    checked = runner.invoke(leak_cli, ["--root", str(repo_root), "check"])
    assert checked.exit_code == 0 and checked.output.count(": ok") == 2


def test_cli_run_without_engines_says_how_to_get_them(tmp_path: Path) -> None:
    try:
        import vllm  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("vLLM importable here")
    out = CliRunner().invoke(leak_cli, ["--root", str(tmp_path), "run", "--engine", "vllm",
                                        "--python", str(tmp_path / "nope")])
    assert out.exit_code != 0
    assert "install.sh" in out.output and not (tmp_path / "data").exists()
