"""The whole CLI on bad files: every command that takes a file or folder, run with a missing
file, a folder where a file is expected (a file where a folder is), a read-only output folder,
a binary file and an empty file. None may end in a traceback or an exception escaping click;
each either fails with a message (non-zero exit, nothing written, nothing deleted) or succeeds.

:data:`SPECS` says how to run each command (a valid value for every file parameter, the one
under test replaced by a bad one); :data:`EXCLUDED` lists, with the reason, the commands that
build Lean, run engines or start servers. A command with a file parameter in neither makes
:func:`test_every_command_with_a_file_parameter_is_covered` fail, so a new command is covered
from the day it lands.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from bundles import make_release
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.cli import cli

#: Commands (space-joined paths; a group's own options under its name) with a file or folder
#: parameter that this test does not run, and why.
EXCLUDED: dict[str, str] = {
    "audit": "elaborates the Lean library (starts a Lean process)",
    "certify": "builds the Lean library and audits it (Lean processes, minutes)",
    "admission": "the group itself runs the proxy, a network listener, once its files load "
                 "(its bad tenants and secret files: tests/test_bad_input.py, test_admission.py)",
    "leak run": "runs the serving engines (vLLM, SGLang) or a vLLM server over HTTP",
    "leak probe": "runs the serving engines' cache code (vLLM, SGLang)",
    "leak serve": "starts a vLLM server and the admission proxy (network listeners, minutes)",
    "leak serve-partition": "starts a stock and a partitioned vLLM server behind the admission "
                            "proxy (network listeners, minutes)",
    "ceiling prefix-optima": "runs kvcache-simulator from its own venv and CP-SAT solves "
                             "(minutes); its missing-simulator error: "
                             "tests/test_ceiling_prefix_optima.py",
}

#: Roles of a file parameter: what it is, hence which bad values it gets.
IN_FILE, IN_DIR, OUT_FILE, OUT_DIR = "in-file", "in-dir", "out-file", "out-dir"
BAD: dict[str, tuple[str, ...]] = {
    IN_FILE: ("missing", "folder", "binary", "empty"),
    IN_DIR: ("missing", "binary", "empty"),
    OUT_FILE: ("folder", "read-only", "binary", "empty", "under-a-file"),
    OUT_DIR: ("read-only", "binary", "empty", "under-a-file"),
}


@dataclass(frozen=True)
class Spec:
    """How to run a command: ``argv`` with ``{param}`` placeholders, and each placeholder's
    role and valid value (a key of :func:`_good`)."""

    argv: tuple[str, ...]
    params: dict[str, tuple[str, str]]


def _specs() -> dict[str, Spec]:
    t = "ceiling"
    trace = {"file": (IN_FILE, "trace")}
    return {
        "admission add-tenant": Spec(("admission", "add-tenant", "--tenants", "{tenants_path}",
                                      "--id", "acme"), {"tenants_path": (OUT_FILE, "new")}),
        "keygen": Spec(("keygen", "{private}", "{public}"),
                       {"private": (OUT_FILE, "new"), "public": (OUT_FILE, "new2")}),
        "leak": Spec(("leak", "--root", "{root}", "show"), {"root": (IN_DIR, "dir")}),
        "leak price": Spec(("leak", "price", "--trace", "{trace}", "--out", "{out}"),
                           {"trace": (IN_FILE, "trace"), "out": (OUT_DIR, "new")}),
        "placement": Spec(("placement", "--root", "{root}", "solve"), {"root": (IN_DIR, "dir")}),
        "placement solve": Spec(("placement", "solve", "--instance", "{instance}"),
                                {"instance": (IN_FILE, "json")}),
        "placement sweep": Spec(("placement", "sweep", "--out", "{out}"),
                                {"out": (OUT_DIR, "new")}),
        "placement routing": Spec(("placement", "routing", "--trace", "{trace}", "--out",
                                   "{out}", "--quiet"),
                                  {"trace": (IN_FILE, "trace"), "out": (OUT_DIR, "new")}),
        "placement windows": Spec(("placement", "windows", "--trace", "{trace_path}", "--out",
                                   "{out}", "--first-lines", "1", "--time-limit", "5"),
                                  {"trace_path": (IN_FILE, "trace"), "out": (OUT_FILE, "new")}),
        "regenerate": Spec(("regenerate", "--check", "--root", "{root}"),
                           {"root": (IN_DIR, "dir")}),
        "site": Spec(("site", "--root", "{root}", "--out", "{out}", "--manifest",
                      "{manifest_path}", "--key", "{keys}"),
                     {"root": (IN_DIR, "release"), "out": (OUT_DIR, "new"),
                      "manifest_path": (IN_FILE, "manifest"), "keys": (IN_FILE, "pubkey")}),
        f"{t} count": Spec((t, "count", "{file}"), trace),
        f"{t} simulate": Spec((t, "simulate", "{file}", "--capacity", "2"), trace),
        f"{t} curve": Spec((t, "curve", "{file}", "--out", "{out_dir}"),
                           {**trace, "out_dir": (OUT_DIR, "new")}),
        f"{t} sweep": Spec((t, "sweep", "{file}", "--out", "{out_dir}"),
                           {**trace, "out_dir": (OUT_DIR, "new")}),
        f"{t} sampled-curve": Spec((t, "sampled-curve", "{file}", "--rate", "0.5", "--out",
                                    "{out_dir}"), {**trace, "out_dir": (OUT_DIR, "new")}),
        f"{t} lean-instance": Spec((t, "lean-instance", "{file}", "--root", "{root}"),
                                   {**trace, "root": (IN_DIR, "dir")}),
        f"{t} shards-ceiling": Spec((t, "shards-ceiling", "{folder}"),
                                    {"folder": (IN_DIR, "shards")}),
        "verify": Spec(("verify", "{files}", "--manifest", "{manifest_path}", "--key", "{keys}",
                        "--trusted-keys", "{trusted}", "--signature", "{signature}"),
                       {"files": (IN_FILE, "certificate"), "manifest_path": (IN_FILE, "manifest"),
                        "keys": (IN_FILE, "pubkey"), "trusted": (IN_FILE, "pubkey"),
                        "signature": (IN_FILE, "envelope")}),
    }


def _file_parameters() -> dict[str, set[str]]:
    """Every command (and group) of ``pytools`` with file or folder parameters: name -> the
    parameters' names, found by walking the command tree."""
    found: dict[str, set[str]] = {}

    def walk(cmd: click.Command, path: list[str], ctx: click.Context) -> None:
        names = {p.name for p in cmd.params
                 if p.name and isinstance(p.type, click.Path | click.File)}
        if names:
            found[" ".join(path)] = names
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, [*path, name], click.Context(sub, parent=ctx, info_name=name))

    with click.Context(cli, info_name="pytools") as ctx:
        walk(cli, [], ctx)
    return found


SPECS = _specs()


def test_every_command_with_a_file_parameter_is_covered() -> None:
    found = _file_parameters()
    assert set(found) == set(SPECS) | set(EXCLUDED), (
        f"commands with file parameters not in SPECS or EXCLUDED: "
        f"{sorted(set(found) - set(SPECS) - set(EXCLUDED))}; "
        f"stale entries: {sorted((set(SPECS) | set(EXCLUDED)) - set(found))}")
    for name, spec in SPECS.items():
        assert set(spec.params) == found[name], name


def _cases() -> Iterator[tuple[str, str, str]]:
    for name, spec in SPECS.items():
        for param, (role, _good) in spec.params.items():
            for bad in BAD[role]:
                yield name, param, bad


TRACE = b'{"hash_ids": [1, 2, 3]}\n{"hash_ids": [1, 2, 4]}\n{"hash_ids": [1, 5]}\n'
BINARY = bytes(range(256)) * 4


def _good(kind: str, base: Path) -> Path:
    """A valid value of each kind, made under ``base`` (one signed release for all of its
    kinds: the project root, its manifest, a certificate, the envelope, the public key)."""
    base.mkdir(exist_ok=True)
    release = {"release": "release", "manifest": "manifest", "certificate": "floor",
               "envelope": "envelope", "pubkey": "public_key"}
    if kind in release:
        root = base / "release"
        if not root.exists():
            (base / "paths.json").write_text(json.dumps({
                k: str(v) for k, v in make_release(root, key=Ed25519PrivateKey.generate()).items()
            }), encoding="utf-8")
        return root if kind == "release" else Path(
            json.loads((base / "paths.json").read_text(encoding="utf-8"))[release[kind]])
    path = base / kind
    if kind == "trace":
        path.write_bytes(TRACE)
    elif kind == "json":
        path.write_bytes(b"{}\n")
    elif kind == "dir":
        path.mkdir()
    elif kind == "shards":
        path.mkdir()
        (path / "part-0.jsonl").write_bytes(TRACE)
    return path  # "new", "new2": not there yet


def _bad(kind: str, role: str, base: Path) -> Path:
    base.mkdir()
    if kind == "missing":
        return base / "missing"
    if kind == "folder":
        (base / "folder").mkdir()
        return base / "folder"
    if kind == "binary":
        (base / "binary.bin").write_bytes(BINARY)
        return base / "binary.bin"
    if kind == "empty":
        (base / "empty.json").write_bytes(b"")
        return base / "empty.json"
    if kind == "under-a-file":
        (base / "file").write_bytes(b"a file\n")
        return base / "file" / "out"
    assert kind == "read-only"
    folder = base / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    return folder if role == OUT_DIR else folder / "out.json"


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): (
        hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir")
        for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize(("command", "param", "bad"), list(_cases()),
                         ids=lambda v: str(v).replace(" ", "-"))
def test_bad_file_ends_in_a_message_not_a_traceback(command: str, param: str, bad: str,
                                                     tmp_path: Path) -> None:
    spec = SPECS[command]
    role = spec.params[param][0]
    values = {p: str(_good(good, tmp_path / "good")) for p, (_r, good) in spec.params.items()}
    values[param] = str(_bad(bad, role, tmp_path / "bad"))
    argv = [arg.format(**values) for arg in spec.argv]
    before = _snapshot(tmp_path)
    try:
        result = CliRunner().invoke(cli, argv, env={"PYTOOLS_ADMISSION_SECRET": "ab" * 32})
    finally:
        for p in tmp_path.rglob("ro"):
            p.chmod(0o755)
    shown = f"pytools {' '.join(argv)} -> {result.exit_code}\n{result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{shown}\n{type(result.exception).__name__}: {result.exception}")
    assert "Traceback (most recent call last)" not in result.output, shown
    if result.exit_code != 0:
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert lines, shown
        assert _snapshot(tmp_path) == before, f"{shown}\nwrote or deleted files on failure"
