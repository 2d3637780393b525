"""The registry Lean's load-time rewrites (pytools/lean/wasm_preload.js), on stand-in lean.js
files run by the project's Node: applied when their text occurs exactly once, refused
otherwise, the symbol map equal to the scan it replaces, and the toolchain refusing any run
whose threads did not apply them. The same rewrites on the real Lean:
(``test_rewrites_change_no_audit_fact``, at the end of this file)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from pytools.lean import toolchain as tc

DLSYM = "newSymIndex=Object.keys(lib.exports).indexOf(symbol);"
POOL = "var pthreadPoolSize=4;"
#: A stand-in for lean.js: the two texts the preload rewrites, and a line saying what ran.
STANDIN = f"""
var lib={{exports:{{alpha:1,beta:2}}}};var symbol="beta";var newSymIndex;
{DLSYM}
{POOL}
console.log(JSON.stringify({{newSymIndex:newSymIndex,pool:pthreadPoolSize}}));
"""


def node() -> Path:
    path = tc.project_root() / tc.NODE_BINARY
    if not path.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{path} missing: CI must install it (npm ci)")
        pytest.skip(f"{path} not installed (run `npm ci`)")
    return path


def run_standin(
    tmp_path: Path, source: str, mode: str = "on", preload: Path = tc.PRELOAD
) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    """Run a stand-in ``lean.js`` under the preload; return the process and its report."""
    script = tmp_path / "lean.js"
    script.write_text(source)
    report = tmp_path / "report.jsonl"
    report.unlink(missing_ok=True)
    env = {**os.environ, "PYTOOLS_WASM_PATCH": mode, "PYTOOLS_WASM_PATCH_REPORT": str(report)}
    proc = subprocess.run([str(node()), "-r", str(preload), str(script)],
                          capture_output=True, text=True, env=env, timeout=60)
    lines = [json.loads(x) for x in report.read_text().splitlines()] if report.exists() else []
    return proc, lines


def test_rewrites_apply_once_and_are_reported(tmp_path: Path) -> None:
    proc, report = run_standin(tmp_path, STANDIN)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"newSymIndex": 1, "pool": 1}
    assert report == [{"thread": "main", "mode": "on", "applied": list(tc.WASM_REWRITES)}]


def test_off_runs_the_package_as_shipped(tmp_path: Path) -> None:
    proc, report = run_standin(tmp_path, STANDIN, mode="off")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"newSymIndex": 1, "pool": 4}
    assert report == [{"thread": "main", "mode": "off", "applied": []}]


@pytest.mark.parametrize(
    ("source", "named"),
    [
        (STANDIN.replace(DLSYM, "newSymIndex=-1;"), r"dlsym-index-map: .* occurs 0 times"),
        (STANDIN.replace(DLSYM, DLSYM + DLSYM), r"dlsym-index-map: .* occurs 2 times"),
        (STANDIN.replace(POOL, "var pthreadPoolSize=8;"), r"pthread-pool-1: .* occurs 0 times"),
        (STANDIN + POOL, r"pthread-pool-1: .* occurs 2 times"),
        (STANDIN + "delete wasmImports[symbol];", r"contains `delete wasmImports`"),
    ],
    ids=["lookup-absent", "lookup-repeated", "pool-absent", "pool-repeated", "keys-deleted"],
)
def test_a_changed_lean_js_is_refused_and_never_runs(
    tmp_path: Path, source: str, named: str
) -> None:
    """Planted: each way lean.js can differ from the file the rewrites were written for."""
    proc, report = run_standin(tmp_path, source)
    assert proc.returncode == tc.PRELOAD_REFUSED
    assert re.search(named, proc.stderr), proc.stderr
    assert str(tmp_path / "lean.js") in proc.stderr
    assert proc.stdout == "" and report == []  # nothing of lean.js ran, half-patched or not


#: Lookups through the map against the scan, on an object that grows between lookups (as
#: emscripten's wasmImports does), with hits, misses and a non-enumerable own property.
AGREEMENT = """
var exports={};for(var i=0;i<2000;i++)exports["sym"+i]=i;
var names=["sym0","sym1999","nope","late","sym7","hidden","later","late"];
exports.late=1;
Object.defineProperty(exports,"hidden",{value:1,enumerable:false});
var got=[];
for(var k=0;k<names.length;k++){
  if(names[k]=="later")exports.later=2;
  var lib={exports:exports},symbol=names[k],newSymIndex;
  newSymIndex=Object.keys(lib.exports).indexOf(symbol);
  got.push(newSymIndex);
}
var pthreadPoolSize=4;
console.log(JSON.stringify(got));
"""


def test_symbol_map_answers_as_the_scan(tmp_path: Path) -> None:
    expected = [0, 1999, -1, 2000, 7, -1, 2001, 2000]
    off, _ = run_standin(tmp_path, AGREEMENT, mode="off")
    assert json.loads(off.stdout) == expected
    on, _ = run_standin(tmp_path, AGREEMENT, mode="on")
    assert json.loads(on.stdout) == expected
    verify, _ = run_standin(tmp_path, AGREEMENT, mode="verify")
    assert verify.returncode == 0, verify.stderr
    assert json.loads(verify.stdout) == expected


def test_verify_mode_catches_a_wrong_map(tmp_path: Path) -> None:
    """Planted: a preload whose map is off by one; verify mode stops at the first lookup."""
    text = tc.PRELOAD.read_text()
    assert text.count("map.set(key, i)") == 1
    planted = tmp_path / "planted_preload.js"
    planted.write_text(text.replace("map.set(key, i)", "map.set(key, i + 1)"))
    proc, _ = run_standin(tmp_path, AGREEMENT, mode="verify", preload=planted)
    assert proc.returncode == tc.PRELOAD_REFUSED
    assert "symbol map disagrees" in proc.stderr


def test_unknown_mode_is_refused(tmp_path: Path) -> None:
    proc, _ = run_standin(tmp_path, STANDIN, mode="fast")
    assert proc.returncode == tc.PRELOAD_REFUSED and "expected on, verify or off" in proc.stderr
    with pytest.raises(tc.ToolchainError, match="PYTOOLS_WASM_PATCH='fast'"):
        tc.wasm_patch_mode({"PYTOOLS_WASM_PATCH": "fast"})


# --- the toolchain's side: refusing a run that did not apply them -----------------------------


def _done(code: int = 0, stderr: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(["lean"], code, "", stderr)


def _report(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "report.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


MAIN_ON = {"thread": "main", "mode": "on", "applied": list(tc.WASM_REWRITES)}
WORKER_ON = {**MAIN_ON, "thread": "worker"}


def test_report_of_a_patched_run_is_accepted(tmp_path: Path) -> None:
    tc.check_preload_report(_done(), _report(tmp_path, MAIN_ON, WORKER_ON, WORKER_ON), "on")
    off = [{"thread": t, "mode": "off", "applied": []} for t in ("main", "worker")]
    tc.check_preload_report(_done(), _report(tmp_path, *off), "off")


@pytest.mark.parametrize(
    "lines",
    [
        (),  # the preload never ran (e.g. `-r` dropped from the command line)
        (MAIN_ON,),  # no worker compiled lean.js through the preload
        (WORKER_ON,),  # the main thread did not
        (MAIN_ON, {**WORKER_ON, "applied": []}),  # a worker ran the file as shipped
        (MAIN_ON, {**WORKER_ON, "applied": ["dlsym-index-map"]}),  # half-patched
        ({**MAIN_ON, "mode": "off"}, WORKER_ON),  # another mode than asked
    ],
    ids=["no-report", "no-worker", "no-main", "worker-unpatched", "half-patched", "mode"],
)
def test_report_of_an_unpatched_run_is_refused(tmp_path: Path, lines: tuple) -> None:
    report = _report(tmp_path, *lines) if lines else tmp_path / "absent.jsonl"
    with pytest.raises(tc.ToolchainError, match="refusing its output"):
        tc.check_preload_report(_done(), report, "on")


def test_refusal_of_the_preload_is_raised_with_its_words(tmp_path: Path) -> None:
    said = "pytools wasm preload: /x/lean.js: not the lean.js these rewrites were written for"
    with pytest.raises(tc.ToolchainError, match="not the lean.js these rewrites"):
        tc.check_preload_report(_done(tc.PRELOAD_REFUSED, said + "\n"), tmp_path / "r", "on")


def test_rewrite_names_agree_with_the_preload() -> None:
    """The names the toolchain expects are the preload's own (one list each side, compared)."""
    names = re.findall(r'name: "([^"]+)"', tc.PRELOAD.read_text())
    assert tuple(names) == tc.WASM_REWRITES


# --- on the real Lean: the rewrites change no fact the audit reads ------------------------------

#: A library module with definitions, theorems, instances and `decide` (the ceiling's cache).
WITNESS = "Proofs/Ceiling/Cache.lean"


def _build_and_audit(root: Path, toolchain: tc.Toolchain, mode: str, monkeypatch) -> object:
    from pytools.lean.audit.walk import audit_modules
    from pytools.lean.build import BUILD_DIR, build

    (root / WITNESS).parent.mkdir(parents=True)
    (root / WITNESS).write_bytes((tc.project_root() / WITNESS).read_bytes())
    monkeypatch.setenv("PYTOOLS_WASM_PATCH", mode)
    result = build(root, toolchain, jobs=1, roots=("Proofs",))
    assert result.ok, (result.diagnostics, result.crashes)
    name = WITNESS.removesuffix(".lean").replace("/", ".")
    return audit_modules([name], [root / BUILD_DIR], cache_dir=None,
                         core_dir=toolchain.lib_dir,
                         meanings_for=["KVCache.Ceiling.hits_add_distinct_le_length"])


@pytest.mark.lean
def test_rewrites_change_no_audit_fact(tmp_path: Path, real_toolchain, monkeypatch) -> None:
    """One module compiled with the rewrites and without (lean.js as shipped): the same
    declarations, kinds, statements, statement hashes, axioms, constants, findings and meaning
    closures. The patched build's report is checked by the toolchain itself (a run whose
    threads did not apply the rewrites raises), so this fails if they were silently skipped."""
    if real_toolchain.kind != "wasm":
        pytest.skip("the rewrites are the registry build's; a native Lean has none")
    patched = _build_and_audit(tmp_path / "on", real_toolchain, "on", monkeypatch)
    shipped = _build_and_audit(tmp_path / "off", real_toolchain, "off", monkeypatch)
    assert len(patched.declarations) > 100
    assert patched.declarations == shipped.declarations
    assert patched.findings == shipped.findings == ()
    assert patched.trusted_core == shipped.trusted_core
    assert patched.meanings == shipped.meanings and patched.definitions == shipped.definitions
