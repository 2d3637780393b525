"""The kernel replay (``pytools/lean/KernelReplay.lean`` under ``lean --run``, driven by
:mod:`pytools.lean.replay`): how its verdicts are read, how certify records it, and (Lean-backed)
that a tampered ``.olean`` whose proof no longer checks is refused while the same module
untampered is accepted."""

from __future__ import annotations

import shutil
import struct
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from pytools.lean import replay
from pytools.lean.audit import certificate
from pytools.lean.audit.records import AuditReport, Declaration
from pytools.lean.olean.module import Module
from pytools.lean.replay import (
    DRIVER,
    ReplayError,
    ReplayOutcome,
    module_olean,
    read_verdicts,
    replay_modules,
    run_in_batches,
    share_out,
    stage,
)
from pytools.lean.toolchain import Toolchain
from pytools.publish import certify

STAGED = {"/s/lib/Proofs/A.olean": "Proofs.A", "/s/lib/Proofs/B.olean": "Proofs.B"}


def test_verdicts_are_read_for_staged_modules_only() -> None:
    out = ("[DEBUG] noise\nreplayed /s/lib/Proofs/A.olean: 3 constants, 3 declarations "
           "accepted\nREJECTED /s/lib/Proofs/B.olean: the kernel rejected t: bad\n"
           "replayed /elsewhere/Proofs/A.olean: ok\nREPLAY-RESULT rejected 1\n")
    assert read_verdicts(out, STAGED) == {
        "Proofs.A": ("replayed", "3 constants, 3 declarations accepted"),
        "Proofs.B": ("REJECTED", "the kernel rejected t: bad")}


def _fake_driver(script: dict[str, list[str]]):
    """A stand-in for the driver process: for each module, in order, what each of its runs
    says ("ok", "reject" or "crash": the process dies there and says nothing more)."""
    calls: list[list[str]] = []

    def run(paths: list[str]) -> str:
        calls.append([STAGED[p] for p in paths])
        lines = []
        for path in paths:
            said = script[STAGED[path]].pop(0)
            if said == "crash":
                lines.append("worker sent an error! undefined:undefined: undefined")
                break
            lines.append(f"replayed {path}: fine" if said == "ok"
                         else f"REJECTED {path}: the kernel rejected t: bad")
        return "\n".join(lines)

    return run, calls


def test_all_modules_in_one_process_when_nothing_crashes() -> None:
    run, calls = _fake_driver({"Proofs.A": ["ok"], "Proofs.B": ["reject"]})
    problems, accepted = run_in_batches(run, STAGED)
    assert calls == [["Proofs.A", "Proofs.B"]]
    assert accepted == ["Proofs.A: fine"]
    assert problems == ["kernel-replay Proofs.B: the kernel rejected t: bad"]


def test_a_crash_is_retried_alone_first_in_a_fresh_process() -> None:
    """Planted: the process dies on B after A (a full heap, say); B is replayed again first in
    a fresh process, and accepted there."""
    run, calls = _fake_driver({"Proofs.A": ["ok"], "Proofs.B": ["crash", "ok"]})
    problems, accepted = run_in_batches(run, STAGED)
    assert calls == [["Proofs.A", "Proofs.B"], ["Proofs.B"]]
    assert problems == [] and accepted == ["Proofs.A: fine", "Proofs.B: fine"]


def test_a_module_that_crashes_twice_is_a_problem_and_the_rest_go_on() -> None:
    """Planted: B dies twice (after A, then first in a fresh process): a problem naming B; a
    module dying first in a fresh process is not run again."""
    run, calls = _fake_driver({"Proofs.A": ["ok"], "Proofs.B": ["crash", "crash"]})
    problems, accepted = run_in_batches(run, STAGED)
    assert calls == [["Proofs.A", "Proofs.B"], ["Proofs.B"]]
    assert accepted == ["Proofs.A: fine"]
    (problem,) = problems
    assert problem.startswith("kernel-replay Proofs.B: no verdict from the driver, though "
                              "first in a fresh process: worker sent an error!")
    run, calls = _fake_driver({"Proofs.A": ["crash"], "Proofs.B": ["ok"]})
    problems, accepted = run_in_batches(run, STAGED)
    assert calls == [["Proofs.A", "Proofs.B"], ["Proofs.B"]]
    assert accepted == ["Proofs.B: fine"] and problems[0].startswith("kernel-replay Proofs.A:")


def test_stage_copies_every_part_and_refuses_a_missing_module(tmp_path: Path) -> None:
    build = tmp_path / "build"
    (build / "Proofs").mkdir(parents=True)
    for suffix in (".olean", ".olean.server", ".olean.private", ".ir"):
        (build / "Proofs" / f"A{suffix}").write_bytes(b"x")
    folder = tmp_path / "stage"
    folder.mkdir()
    staged = stage(build, ["Proofs.A"], folder)
    assert staged == {str(folder / "lib" / "Proofs" / "A.olean"): "Proofs.A"}
    assert sorted(p.name for p in (folder / "lib" / "Proofs").iterdir()) == [
        "A.olean", "A.olean.private", "A.olean.server"]
    assert (folder / DRIVER.name).read_text() == DRIVER.read_text()
    with pytest.raises(ReplayError, match=r"Proofs/B\.olean: missing"):
        stage(build, ["Proofs.A", "Proofs.B"], tmp_path / "stage")


def _report() -> AuditReport:
    d = Declaration("KVCache.A.main", "theorem", "Proofs.A", 3, 0, "True", "a" * 64,
                    ("propext",), False, 0, (("True", "Init.Prelude"),))
    return AuditReport(declarations=(d,), findings=(), trusted_core=(), rules=("sorry",),
                       meanings=())


def _wasm(tmp_path: Path) -> Toolchain:
    return Toolchain("wasm", "4.28.0-pre", "0" * 40, ("lean",), tmp_path / "lib", "test")


def test_wasm_certify_runs_the_kernel_replay_and_fails_on_rejection(tmp_path: Path,
                                                                    monkeypatch) -> None:
    """Planted: the replay rejects a module; certify's checks report it, naming the module,
    and the certificate records the replay as run."""
    seen = []

    def fake(toolchain, build_dir, modules, **kw):
        seen.append((build_dir, list(modules)))
        return ReplayOutcome(("kernel-replay Proofs.Bad: the kernel rejected x: bad",),
                             ("Proofs.A: ok",), 1.0)

    monkeypatch.setattr(certify, "replay_modules", fake)
    monkeypatch.setattr(certify.reviewed, "check", lambda root, report, theorems: [])
    problems, ran, why = certify.audit_checks(_wasm(tmp_path), tmp_path,
                                              ["Proofs.A", "Proofs.Bad"], _report(), ())
    assert seen == [(tmp_path / certify.BUILD_DIR, ["Proofs.A", "Proofs.Bad"])]
    assert problems == ["kernel-replay Proofs.Bad: the kernel rejected x: bad"]
    assert ran == {"reviewed-statements": True, "kernel-replay": True} and why == {}
    block = certificate.audit_block(certificate.with_checks(_report(), ran, why), {})
    status = {c["name"]: c["status"] for c in block["checks"]}
    assert status["kernel-replay"] == "passed" and status["leanchecker"] == "not-run"
    assert not any("No kernel replay ran" in s for s in block["limits"])
    assert any("core's declarations (Init, Std) are trusted" in s for s in block["limits"])


def test_a_missing_olean_is_a_replay_problem_not_a_crash(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(certify.reviewed, "check", lambda root, report, theorems: [])
    monkeypatch.setenv("PYTOOLS_CACHE", str(tmp_path / "cache"))
    problems, ran, _ = certify.audit_checks(_wasm(tmp_path), tmp_path, ["Proofs.A"],
                                            _report(), ())
    assert ran["kernel-replay"] and len(problems) == 1
    assert problems[0].startswith("kernel-replay: ") and "Proofs/A.olean: missing" in problems[0]


def test_leanchecker_replaces_the_driver_on_a_native_lean(tmp_path: Path, monkeypatch) -> None:
    native = replace(_wasm(tmp_path), kind="native")
    monkeypatch.setattr(certify, "native_cross_check", lambda *a: [])
    monkeypatch.setattr(certify.audit_native, "find_leanchecker", lambda lean: "leanchecker")
    monkeypatch.setattr(certify.audit_native, "run_leanchecker", lambda c, modules, **kw: [])
    monkeypatch.setattr(certify, "replay_modules", lambda *a, **kw: pytest.fail("replayed"))
    monkeypatch.setattr(certify.reviewed, "check", lambda root, report, theorems: [])
    problems, ran, why = certify.audit_checks(native, tmp_path, ["Proofs.A"], _report(), ())
    assert problems == [] and "kernel-replay" not in ran and ran["leanchecker"]


class _FakeLean(Toolchain):
    """A toolchain whose ``lean --run DRIVER PATHS`` accepts each staged module unless its
    ``.olean`` holds ``bad``, and counts its processes."""

    runs: list[list[str]]

    def run_lean(self, args, lean_path, cwd, timeout=None):  # type: ignore[override]
        paths = args[2:]
        self.runs.append([Path(p).stem for p in paths])
        out = [f"REJECTED {p}: the kernel rejected t: bad" if b"bad" in Path(p).read_bytes()
               else f"replayed {p}: 1 constants, import 10 ms, kernel {len(p)} ms"
               for p in paths]
        return subprocess.CompletedProcess(args, 0, "\n".join(out), "")


def _fake_library(tmp_path: Path, imports: dict[str, list[str]], monkeypatch
                  ) -> tuple[_FakeLean, Path]:
    """A build folder of one-part modules ``Proofs.<X>`` and a fake Lean; each module's
    import closure is read from ``imports`` (the real one reads the .olean headers)."""
    build = tmp_path / "build"
    for name in imports:
        module_olean(build, name).parent.mkdir(parents=True, exist_ok=True)
        module_olean(build, name).write_bytes(f"olean of {name}".encode())

    def closure(build_dir: Path, module: str) -> list[str]:
        seen, todo = set(), [module]
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo += imports[m]
        return sorted(seen)

    monkeypatch.setattr(replay, "import_closure", closure)
    monkeypatch.setenv("PYTOOLS_CACHE", str(tmp_path / "cache"))
    lean = _FakeLean("native", "4.28.0", "0" * 40, ("lean",), tmp_path / "lib", "test")
    lean.runs = []
    return lean, build


def test_the_same_bytes_are_not_replayed_twice(tmp_path: Path, monkeypatch) -> None:
    """A second replay of unchanged modules reuses the kernel's earlier verdicts (no process);
    the lines say so."""
    lean, build = _fake_library(tmp_path, {"Proofs.A": [], "Proofs.B": ["Proofs.A"]},
                                monkeypatch)
    first = replay_modules(lean, build, ["Proofs.A", "Proofs.B"])
    assert first.ok and first.reused == () and len(lean.runs) == 1
    again = replay_modules(lean, build, ["Proofs.A", "Proofs.B"])
    assert again.ok and again.reused == ("Proofs.A", "Proofs.B") and len(lean.runs) == 1
    assert all(line.endswith("(same bytes accepted before)") for line in again.accepted)
    # The same toolchain run from another checkout (a clone with a copy of the build folder).
    moved = _FakeLean("native", "4.28.0", "0" * 40, ("/elsewhere/lean",), tmp_path / "lib", "t")
    moved.runs = []
    assert replay_modules(moved, build, ["Proofs.A", "Proofs.B"]).reused == (
        "Proofs.A", "Proofs.B") and moved.runs == []


def test_changed_bytes_of_a_module_or_of_an_import_are_replayed_again(
        tmp_path: Path, monkeypatch) -> None:
    """Planted: the bytes of an imported module change after an accepted replay; both it and
    the module importing it are replayed again (and the rejection is reported), while an
    unrelated module is reused."""
    lean, build = _fake_library(
        tmp_path, {"Proofs.A": [], "Proofs.B": ["Proofs.A"], "Proofs.C": []}, monkeypatch)
    assert replay_modules(lean, build, ["Proofs.A", "Proofs.B", "Proofs.C"]).ok
    module_olean(build, "Proofs.A").write_bytes(b"olean of Proofs.A, now bad")
    outcome = replay_modules(lean, build, ["Proofs.A", "Proofs.B", "Proofs.C"])
    assert lean.runs[-1] == ["A", "B"] and outcome.reused == ("Proofs.C",)
    assert outcome.problems == ("kernel-replay Proofs.A: the kernel rejected t: bad",)


def test_a_rejection_is_never_remembered(tmp_path: Path, monkeypatch) -> None:
    """Planted: a rejected module is replayed (and rejected) again on every run."""
    lean, build = _fake_library(tmp_path, {"Proofs.A": []}, monkeypatch)
    module_olean(build, "Proofs.A").write_bytes(b"bad")
    for _ in range(2):
        assert not replay_modules(lean, build, ["Proofs.A"]).ok
    assert len(lean.runs) == 2
    assert "Proofs.A" not in replay.load_accepted(build)


def test_a_key_from_another_driver_or_toolchain_is_not_reused(tmp_path: Path,
                                                              monkeypatch) -> None:
    """Planted: the remembered verdict came from another kernel (another toolchain commit) or
    the file was edited by hand to a wrong key; the module is replayed."""
    lean, build = _fake_library(tmp_path, {"Proofs.A": []}, monkeypatch)
    replay_modules(lean, build, ["Proofs.A"])
    other = _FakeLean("native", "4.28.0", "1" * 40, ("lean",), tmp_path / "lib", "test")
    other.runs = []
    assert replay_modules(other, build, ["Proofs.A"]).reused == () and other.runs == [["A"]]
    (build / replay.ACCEPTED_FILE).write_text('{"format": 1, "modules": {"Proofs.A": '
                                               '{"key": "0", "line": "forged"}}}')
    assert replay_modules(lean, build, ["Proofs.A"]).reused == ()
    (build / replay.ACCEPTED_FILE).write_text("not json")
    assert replay_modules(lean, build, ["Proofs.A"]).ok


def test_default_workers_keep_within_memory() -> None:
    assert replay.default_workers(cores=2, memory_gb=23.4) == 1  # CI's machine
    assert replay.default_workers(cores=16, memory_gb=128) == 8
    assert replay.default_workers(cores=2, memory_gb=4) == 1


def test_modules_are_shared_among_workers_heaviest_first() -> None:
    weights = {"A": 1.0, "B": 10.0, "C": 2.0, "D": 3.0}
    assert share_out(list(weights), weights.__getitem__, 2) == [["B"], ["A", "C", "D"]]
    assert share_out(["A"], weights.__getitem__, 4) == [["A"]]
    assert share_out(list(weights), weights.__getitem__, 1) == [["A", "B", "C", "D"]]


def test_two_workers_replay_in_two_processes(tmp_path: Path, monkeypatch) -> None:
    lean, build = _fake_library(tmp_path, {f"Proofs.{x}": [] for x in "ABCD"}, monkeypatch)
    outcome = replay_modules(lean, build, [f"Proofs.{x}" for x in "ABCD"], workers=2)
    assert outcome.ok and len(lean.runs) == 2
    assert sorted(m for run in lean.runs for m in run) == ["A", "B", "C", "D"]
    assert [a.split(":")[0] for a in outcome.accepted] == [f"Proofs.{x}" for x in "ABCD"]


# --------------------------------------------------------------------------- Lean-backed

FIXTURE = """module
public section

/-- Planted for the kernel replay test: a numeral the tampering changes. -/
theorem replayFixture_two_add_two : 2 + 2 = 4 := by decide

end
"""


#: The sub-expression fields of each ``Expr`` constructor that has some, by tag: app, lam,
#: forallE, letE, mdata, proj.
EXPR_CHILDREN = {5: (0, 1), 6: (1, 2), 7: (1, 2), 8: (1, 2, 3), 10: (1,), 11: (2,)}


def tamper_numeral(olean: Path, theorem: str, old: int, new: int) -> int:
    """Rewrite, in the module's files, every natural-number literal ``old`` reachable from
    ``theorem``'s type and proof (in the full, private view) to ``new``; returns how many
    literal objects were changed. Each is a ``Literal.natVal`` constructor whose one field is
    the boxed scalar ``2n+1`` (pointer-sized)."""
    module = Module(olean)
    (const,) = [c for c in module.iter_constants() if c.name == theorem]
    assert const.value_ptr is not None
    seen: set[int] = set()
    stack = [const.type_ptr, const.value_ptr]
    patches: dict[Path, list[int]] = {}
    while stack:
        ptr = stack.pop()
        if ptr & 1 or ptr in seen:
            continue
        seen.add(ptr)
        tag = module.tag(ptr)
        if tag == 9:  # Expr.lit
            lit = module.fields(ptr, 1)[0]
            if module.tag(lit) == 0 and module.fields(lit, 1)[0] == 2 * old + 1:
                part, offset = module._locate(lit)
                patches.setdefault(part.path, []).append(offset + 8)
        elif tag in EXPR_CHILDREN:
            fields = module.fields(ptr)
            stack.extend(fields[i] for i in EXPR_CHILDREN[tag])
    width = module.ptr_size
    fmt = "<I" if width == 4 else "<Q"
    for path, offsets in patches.items():
        data = bytearray(path.read_bytes())
        for offset in offsets:
            assert struct.unpack_from(fmt, data, offset)[0] == 2 * old + 1
            struct.pack_into(fmt, data, offset, 2 * new + 1)
        path.write_bytes(bytes(data))
    return sum(len(v) for v in patches.values())


@pytest.mark.lean
@pytest.mark.slow
def test_tampered_olean_is_refused_and_the_original_accepted(tmp_path: Path,
                                                             real_toolchain) -> None:
    """Planted: a compiled theorem whose numeral was changed after compilation (its proof no
    longer proves its statement) is refused by the replay, naming the module and the
    declaration; the same module untampered is accepted, in the same run."""
    if real_toolchain.kind == "native":
        pytest.skip("a native Lean replays with leanchecker")
    src = tmp_path / "src" / "ReplayFixture" / "Good.lean"
    src.parent.mkdir(parents=True)
    src.write_text(FIXTURE)
    build = tmp_path / "build"
    good = module_olean(build, "ReplayFixture.Good")
    good.parent.mkdir(parents=True)
    proc = real_toolchain.run_lean(["-R", str(tmp_path / "src"), str(src), "-o", str(good)],
                                   [build], cwd=tmp_path, timeout=900)
    assert proc.returncode == 0 and good.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    bad = module_olean(build, "ReplayFixture.Bad")
    for suffix in ("", ".server", ".private"):
        shutil.copyfile(f"{good}{suffix}", f"{bad}{suffix}")
    assert tamper_numeral(bad, "replayFixture_two_add_two", 4, 5) >= 1
    outcome = replay_modules(real_toolchain, build, ["ReplayFixture.Good", "ReplayFixture.Bad"])
    assert [a.split(":")[0] for a in outcome.accepted] == ["ReplayFixture.Good"]
    (problem,) = outcome.problems
    assert problem.startswith("kernel-replay ReplayFixture.Bad: the kernel rejected "
                              "replayFixture_two_add_two: ")
    # The accepted bytes are remembered; the same bytes tampered in place are replayed again
    # (and refused), in two processes at once.
    again = replay_modules(real_toolchain, build, ["ReplayFixture.Good"])
    assert again.reused == ("ReplayFixture.Good",)
    assert tamper_numeral(good, "replayFixture_two_add_two", 4, 5) >= 1
    tampered = replay_modules(real_toolchain, build, ["ReplayFixture.Good", "ReplayFixture.Bad"],
                              workers=2)
    assert tampered.reused == () and len(tampered.problems) == 2
