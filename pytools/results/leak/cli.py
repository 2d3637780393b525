"""``pytools leak``: the cross-tenant leak reproduction (result ``tenant-leak``).

    pytools leak                      # re-check the committed evidence, print the table
    pytools leak run --engine vllm    # re-run on the engine, write data/leak/vllm.json
    pytools leak evidence             # the certificate's figures as JSON
    pytools leak probe --engine vllm  # prime and probe on the engine, data/leak/probe-vllm.json
    pytools leak probe --engine lmcache  # on LMCache's eviction policies (.venv-lmcache)
    pytools leak price [--trace F]    # the price of isolation on the Mooncake trace (or F)
    pytools leak serve                # a served vLLM over HTTP, data/leak/served-vllm.json
    pytools leak serve-partition      # stock vs partitioned pool, data/leak/served-partition.json

``run`` and ``probe`` need the engines (``bash .ci/engines/install.sh`` puts them in
``.venv-engines``); when this interpreter cannot import the engine it re-runs itself with the
engines' interpreter (``--python``, else ``$PYTOOLS_ENGINES_PYTHON``, else
``.venv-engines/bin/python``).
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import click

from pytools.results.command import result_group
from pytools.traces.progress import progress_line

from .engines import ENGINE_NAMES, EngineUnavailable, load_engine
from .evidence import (
    CERTIFIED_ENGINES,
    EvidenceError,
    build_evidence,
    evidence_path,
    load_evidence,
    recheck,
    write_evidence,
)
from .probe_engines import build_evidence as build_probe_evidence
from .probe_engines import write_evidence as write_probe_evidence
from .probe_record import ENGINES as PROBE_ENGINES
from .probe_record import evidence_path as probe_evidence_path
from .probe_record import recheck as probe_recheck

ENGINES_PYTHON_ENV = "PYTOOLS_ENGINES_PYTHON"
#: LMCache lives in a venv of its own (its pins are not vLLM's): ``python3 -m venv
#: .venv-lmcache && .venv-lmcache/bin/pip install torch==2.13.0 lmcache==0.5.6``.
LMCACHE_PYTHON_ENV = "PYTOOLS_LMCACHE_PYTHON"


def engines_python(root: Path, given: str | None = None, engine: str | None = None) -> Path:
    """The interpreter of the engines' venv (LMCache's own, for ``engine`` lmcache)."""
    if engine == "lmcache":
        chosen = given or os.environ.get(LMCACHE_PYTHON_ENV)
        return Path(chosen) if chosen else root / ".venv-lmcache" / "bin" / "python"
    chosen = given or os.environ.get(ENGINES_PYTHON_ENV)
    return Path(chosen) if chosen else root / ".venv-engines" / "bin" / "python"


def table(figures: dict[str, Any]) -> str:
    """The headline prompts, one row each, and the totals."""
    cols = [("prompt", None), ("tokens", None), ("B unsalted", "cross_tenant_hit_tokens_unsalted"),
            ("B salted", "cross_tenant_hit_tokens_salted"),
            ("A own", "own_hit_tokens_unsalted"), ("A own salted", "own_hit_tokens_salted"),
            ("B w/ A's salt", "adversary_hit_tokens_guessable_salt"),
            ("B keyed", "adversary_hit_tokens_keyed_salt")]
    lines = ["  ".join(f"{name:>13}" for name, _ in cols)]
    for i, tokens in enumerate(figures["prompt_tokens"]):
        row = [str(i + 1), str(tokens)] + [str(figures[m][i]) for _, m in cols[2:]]
        lines.append("  ".join(f"{v:>13}" for v in row))
    totals = ["total", str(sum(figures["prompt_tokens"]))] + \
        [str(figures["totals"][m]) for _, m in cols[2:]]
    lines.append("  ".join(f"{v:>13}" for v in totals))
    return "\n".join(lines)


@result_group(default="show")
def main() -> None:
    """Cross-tenant prefix-cache leak on vLLM and SGLang, and its keyed-salt closure."""


@main.command("show")
@click.pass_obj
def show_cmd(root: Path) -> None:
    """Re-check the committed evidence (no engines needed) and print both engines' tables;
    fails after the tables when the re-check found a problem."""
    from .result import rechecked_evidence

    try:
        with progress_line("leak: re-checking the committed evidence"):
            checked = rechecked_evidence(root)
    except EvidenceError as exc:
        raise click.ClickException(str(exc)) from None
    figures = checked.evidence.figures
    for f in (figures, figures["second_engine"]):
        eng = f["engine"]
        click.echo(f"\n{eng['name']} {eng['version']}  (A = victim, B = other tenant; "
                   "hit tokens served from cache)")
        click.echo(table({**f, "prompt_tokens": figures["prompt_tokens"]}))
        p = f["pairs"]
        click.echo(f"{p['pair_count']} random pairs: leaking pairs {p['leaking_pairs']}; own reuse "
                   f"unchanged in {p['own_reuse_unchanged_pairs']}")
        for scenario, b in f["upper_bounds"].items():
            click.echo(f"  {scenario}: 0 of {b['pairs']} -> 95% upper bound "
                       f"{b['upper_bound_rule_of_three']:.6f} (rule of three), "
                       f"{b['upper_bound_exact_95']:.6f} (exact)")
        click.echo("claims: " + ", ".join(f"{k}={v}" for k, v in f["claims"].items()))
    click.echo(f"\nengines agree: {figures['engines_agree']}; reference model agrees: "
               f"{figures['reference_model_agrees']}")
    if checked.problems:
        raise click.ClickException("; ".join(checked.problems))


@main.command("run")
@click.option("--engine", type=click.Choice(ENGINE_NAMES), required=True)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Evidence file to write (default: data/leak/<engine>.json).")
@click.option("--python", "python", default=None,
              help="The engines' interpreter, used when this one cannot import the engine.")
@click.option("--here", is_flag=True, help="Never re-run with another interpreter.")
@click.option("--url", default=None, help="openai-http: the server's base URL.")
@click.option("--model", default=None, help="openai-http: the served model's name.")
@click.option("--block-size", type=click.IntRange(min=1), default=16, show_default=True,
              help="The engine's block (page) size in tokens.")
@click.pass_obj
def run_cmd(root: Path, engine: str, out: Path | None, python: str | None, here: bool,
            url: str | None, model: str | None, block_size: int) -> None:
    """Run every scenario on the engine's own cache code; write its evidence file."""
    path = out or evidence_path(root, engine)
    try:
        adapter = load_engine(engine, url=url, model=model, block_size=block_size)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    except EngineUnavailable as exc:
        _rerun_with_engines(root, python, engine, exc, here,
                            ["run", "--engine", engine, "--out", str(path.resolve()),
                             "--block-size", str(block_size), "--here"])
    start = time.monotonic()
    doc = build_evidence(adapter)
    problems = recheck(doc)
    if problems:  # the engine disagrees with the reference model: say so, write nothing
        raise click.ClickException(f"{engine}: " + "; ".join(problems))
    write_evidence(path, doc)
    head = doc["runs"]["headline"]["counts"]
    click.echo(f"{engine} {adapter.version}: {len(head['cross_tenant_hit_tokens_unsalted'])} "
               f"prompts and {len(doc['runs']['bound']['counts']['own_hit_tokens_unsalted'])} "
               f"pairs in {time.monotonic() - start:.1f} s (not a figure); reference model "
               f"agrees; wrote {path}")


def _rerun_with_engines(root: Path, python: str | None, engine: str,
                        exc: EngineUnavailable, here: bool, args: list[str]) -> NoReturn:
    """The engine is not importable by this interpreter: run ``pytools leak ARGS`` with the
    engines' own (``--here`` forbids it), and exit with its status."""
    if here:
        raise click.ClickException(str(exc)) from None
    other = engines_python(root, python, engine)
    if not other.is_file():
        raise click.ClickException(
            f"{exc}; no engines interpreter at {other} (run `bash .ci/engines/install.sh` "
            f"or pass --python / ${ENGINES_PYTHON_ENV})") from None
    click.echo(f"{engine} is not importable here; running with {other}", err=True)
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [str(other), "-m", "pytools", "leak", "--root", str(root), *args]
    sys.exit(subprocess.run(cmd, cwd=root, env=env).returncode)


@main.command("probe")
@click.option("--engine", type=click.Choice(PROBE_ENGINES), required=True)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Record to write (default: data/leak/probe-<engine>.json).")
@click.option("--python", "python", default=None,
              help="The engines' interpreter, used when this one cannot import the engine.")
@click.option("--here", is_flag=True, help="Never re-run with another interpreter.")
@click.pass_obj
def probe_cmd(root: Path, engine: str, out: Path | None, python: str | None, here: bool) -> None:
    """Prime and probe through eviction on the engine's own cache code, shared pool and one
    cache per tenant; write the raw record."""
    path = out or probe_evidence_path(root, engine)
    start = time.monotonic()
    try:
        doc = build_probe_evidence(engine)
    except EngineUnavailable as exc:
        _rerun_with_engines(root, python, engine, exc, here,
                            ["probe", "--engine", engine, "--out", str(path.resolve()), "--here"])
    figures, problems = probe_recheck(doc)
    if problems:
        raise click.ClickException(f"{engine}: " + "; ".join(problems))
    write_probe_evidence(path, doc)
    for name, f in figures["designs"].items():
        click.echo(f"{engine} {name}: accuracy {f['accuracy']} {f['accuracy_wilson_95']}, "
                   f"{f['paired_trials_differing']} of {f['trials']} paired trials differ")
    click.echo(f"in {time.monotonic() - start:.1f} s (not a figure); wrote {path}")


@main.command("serve")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Record to write (default: data/leak/served-vllm.json).")
@click.option("--python", "python", default=None,
              help="The served engine's interpreter (default: $PYTOOLS_SERVED_PYTHON, else "
                   ".venv-served/bin/python from .ci/served/install.sh).")
@click.option("--quick", is_flag=True, help="Few requests (the CI test's size).")
@click.option("--shape", type=click.Choice(("tiny", "llama-8b")), default="tiny", show_default=True,
              help="The model directory's Llama shape (random weights either way).")
@click.pass_obj
def serve_cmd(root: Path, out: Path | None, python: str | None, quick: bool,
              shape: str) -> None:
    """Start vLLM's OpenAI server on loopback (the served venv, the project's model directory,
    random weights) and the admission proxy in front of it; run the scenarios, the timing-only
    attacker, prime and probe, and the throughput comparison over HTTP; stop everything it
    started (also on failure, Ctrl-C or SIGTERM); write the raw record."""
    from .served import ServeError, sigterm_unwinds
    from .served_record import evidence_path, recheck, summarise
    from .served_run import FULL, QUICK, run, served_python, write_record

    path = out or evidence_path(root)
    interpreter = served_python(root, python)
    start = time.monotonic()
    try:
        with sigterm_unwinds():
            doc = run(interpreter, QUICK if quick else FULL, shape,
                      progress=lambda s: click.echo(f"[{time.monotonic() - start:5.0f} s] {s}",
                                                    err=True))
    except ServeError as exc:
        raise click.ClickException(str(exc)) from None
    problems = recheck(doc)
    if problems:  # the server disagrees with the reference model: say so, write nothing
        raise click.ClickException("served vLLM: " + "; ".join(problems))
    write_record(path, doc)
    f = summarise(doc)
    for name, a in f["timing_attacker"].items():
        click.echo(f"timing-only attacker, {name}: AUC {a['auc']} {a['auc_95']}, accuracy "
                   f"{a['accuracy']} {a['accuracy_wilson_95']}")
    c = f["contention"]
    click.echo(f"prime and probe (keyed salts, {f['kv_pool_blocks']}-block pool): AUC {c['auc']}"
               f" {c['auc_95']}, accuracy {c['accuracy']} {c['accuracy_wilson_95']}")
    click.echo("throughput ratios: " + ", ".join(f"{k} {v}" for k, v in
                                                 f["throughput"]["ratios"].items()))
    click.echo(f"in {time.monotonic() - start:.0f} s (not a figure); reference model agrees; "
               f"wrote {path}")


@main.command("serve-partition")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write the record (default: data/leak/served-partition.json).")
@click.option("--python", default=None, help="The served venv's interpreter.")
@click.option("--trace", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The trace of the price slice (default: the shared Mooncake trace).")
@click.option("--quick", is_flag=True, help="Few trials, no price slice (the CI smoke).")
@click.option("--shape", type=click.Choice(("tiny", "llama-8b")), default="tiny", show_default=True,
              help="The model directory's Llama shape (random weights either way).")
@click.pass_obj
def serve_partition_cmd(root: Path, out: Path | None, python: str | None, trace: Path | None,
                        quick: bool, shape: str) -> None:
    """Serve vLLM twice through the admission proxy, stock pool then the tenant-partitioned
    pool (plugins/vllm_partition), and record prime and probe on each, the concurrent-compute
    attacker on the partitioned one and a tenant-split slice of the trace on both."""
    from pytools.paths import mooncake_trace

    from .served import ServeError, sigterm_unwinds
    from .served_partition import FULL, QUICK, run
    from .served_partition_record import claims, evidence_path, recheck, summarise
    from .served_run import served_python, write_record

    path = out or evidence_path(root)
    start = time.monotonic()
    try:
        with sigterm_unwinds():
            doc = run(served_python(root, python), trace or mooncake_trace(root),
                      QUICK if quick else FULL, shape,
                      progress=lambda s: click.echo(f"[{time.monotonic() - start:5.0f} s] {s}",
                                                    err=True))
    except ServeError as exc:
        raise click.ClickException(str(exc)) from None
    problems = recheck(doc)
    if problems:
        raise click.ClickException("served partition run: " + "; ".join(problems))
    write_record(path, doc)
    if not quick:
        f = summarise(doc)
        for pool in ("stock", "partitioned"):
            a = f[pool]
            click.echo(f"{pool}: probe cached_tokens sent {a['cached_tokens_when_sent']} / not "
                       f"{a['cached_tokens_when_not_sent']}; TTFT AUC {a['auc']} {a['auc_95']}")
        click.echo(json.dumps({"claims": claims(f), "price": f.get("price"),
                               "concurrent": f.get("concurrent_partitioned", {}).get("auc_95")}))
    click.echo(f"in {time.monotonic() - start:.0f} s; wrote {path}")


@main.command("check")
@click.option("--engine", type=click.Choice(ENGINE_NAMES), multiple=True)
@click.pass_obj
def check_cmd(root: Path, engine: tuple[str, ...]) -> None:
    """Re-check committed evidence files without the engines (what certify does)."""
    failed = False
    for name in engine or CERTIFIED_ENGINES:
        path = evidence_path(root, name)
        try:
            with progress_line(f"leak check: re-checking {path.name}"):
                problems = recheck(load_evidence(path, name))
        except EvidenceError as exc:
            problems = [str(exc)]
        for p in problems:
            click.echo(f"{path}: {p}", err=True)
        failed |= bool(problems)
        click.echo(f"{path}: {'FAILED' if problems else 'ok'}")
    if failed:
        sys.exit(1)


@main.command("price")
@click.option("--trace", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="A trace in the Mooncake format (default: the shared Mooncake trace).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Also write price_of_isolation.csv and .svg into this folder.")
@click.pass_obj
def price_cmd(root: Path, trace: Path | None, out: Path | None) -> None:
    """The price of isolation: hit rates of the unsalted and salted shared pools and of the
    partitioned cache (quotas by traffic, equal quotas) at equal memory, derived tenants."""
    from pytools.files import require_writable
    from pytools.paths import mooncake_trace, sha256_file

    from .price import PriceError, figures, price_of_trace
    from .price_output import price_table, write_price

    path = trace or mooncake_trace(root)
    try:
        if out is not None:  # refuse an unwritable folder before minutes of simulation,
            # creating nothing yet (a failed run leaves no folder behind)
            existing = next(p for p in (out, *out.absolute().parents) if p.exists())
            if not existing.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory (a file stands there)",
                                         str(existing))
            require_writable(existing)
        doc = figures(price_of_trace(path), str(path))
    except PriceError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or out}: {exc.strerror or exc}") from None
    t = doc["trace"]
    click.echo(f"{path}: {t['requests']} requests, {t['references']} block references, "
               f"{t['distinct']} distinct, {t['conversations']} conversations, system block "
               f"{t['system_block']}")
    click.echo(price_table(doc["table"]), nl=False)
    if out is not None:
        try:
            written = write_price(out, doc["table"], sha256_file(path))
        except OSError as exc:
            raise click.ClickException(f"{exc.filename or out}: {exc.strerror or exc}") from None
        for file in written:
            click.echo(f"wrote {file}")


@main.command("evidence")
@click.pass_obj
def evidence_cmd(root: Path) -> None:
    """Print the result's figures and inputs as JSON."""
    from .result import evidence

    try:
        with progress_line("leak evidence: re-checking the committed evidence"):
            ev = evidence(root)
    except EvidenceError as exc:
        raise click.ClickException(str(exc)) from None
    doc = {"figures": ev.figures, "inputs": [{"path": i.path, "sha256": i.sha256}
                                             for i in ev.inputs]}
    json.dump(doc, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
