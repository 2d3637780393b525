"""What OpenAI clients and the operator's docs do with the admission proxy: the official
``openai`` client (models list, completions, streamed chat, a refused client salt, a wrong key),
and docs/admission.md's example run as written (issue #42, row 14). Loopback only."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import missing
from test_admission import SECRET
from test_admission_proxy import proxy

from pytools.admission.loopback import serve_in_thread
from pytools.admission.salt import keyed_salt
from pytools.admission.standin import create_standin
from pytools.admission.tenants import SECRET_ENV, add_tenant

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def keys(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "tenants.json"
    return {"path": path, "acme": add_tenant(path, "acme")}


# --------------------------------------------------------------------------- the openai client


def test_the_official_openai_client(keys: dict[str, Any]) -> None:
    """What OpenAI clients call, driven by the ``openai`` package itself."""
    try:
        import openai
    except ImportError:
        missing("the openai package is absent (the test extra installs it)")
    received: list[dict[str, Any]] = []
    with serve_in_thread(create_standin(received=received), max_seconds=60) as upstream, \
            proxy(keys, upstream) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key=keys["acme"], max_retries=0,
                               timeout=30)
        assert [m.id for m in client.models.list()] == ["standin"]
        done = client.completions.create(model="m", prompt="Hello", max_tokens=1)
        assert done.choices[0].text == "ok"
        chunks = list(client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True))
        assert [c.choices[0].delta.content for c in chunks] == ["t0", "t1", "t2"]
        with pytest.raises(openai.BadRequestError, match="must not carry its own"):
            client.completions.create(model="m", prompt="x", extra_body={"cache_salt": "a"})
        wrong = openai.OpenAI(base_url=url + "/v1", api_key="sk-wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError, match="unknown API key"):
            wrong.completions.create(model="m", prompt="x")
        client.close()
        wrong.close()
    salts = {r["body"]["cache_salt"] for r in received if r["body"] is not None}
    assert salts == {keyed_salt(SECRET, "acme")} and len(received) == 3


# --------------------------------------------------------------------------- the docs' example


def sh_block(doc: str) -> str:
    """The first ``sh`` block of a Markdown page."""
    return doc.split("```sh\n", 1)[1].split("```", 1)[0]


def test_the_docs_example_runs(tmp_path: Path) -> None:
    """docs/admission.md's example, run as written (issue #42, row 14): ``$KEY`` is set by
    it, and the salt bound is the documented one. Only the install line is skipped, and the
    upstream and the port are the stand-in's and a free one."""
    block = sh_block((ROOT / "docs" / "admission.md").read_text())
    assert 'KEY=$(pytools admission add-tenant' in block
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with serve_in_thread(create_standin(), max_seconds=60) as upstream:
        script = "\n".join(line for line in block.splitlines()
                           if not line.startswith("pip install"))
        script = script.replace("http://127.0.0.1:8000", upstream).replace("8100", str(port))
        # the proxy runs in the background; wait for it before the curl line
        script = script.replace("\ncurl ", f"\nfor _ in $(seq 300); do curl -sf -o /dev/null "
                                f"http://127.0.0.1:{port}/health && break; sleep 0.1; done\n"
                                "curl ", 1)
        # ``pytools`` is this checkout's (the console script on PATH may be another's); it
        # runs only in subshells here (``$(...)``, ``&``), so ``exec`` lets the trap stop it
        script = ("set -e\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n"
                  'pytools() { exec python -m pytools "$@"; }\n' + script
                  + '\necho\necho "SECRET=$PYTOOLS_ADMISSION_SECRET"\n')
        env = {**os.environ, "PYTHONPATH": str(ROOT),
               "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        env.pop(SECRET_ENV, None)
        out = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=90)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    # the proxy's access lines share the output (curl ends its answer with no newline)
    (answer,) = [json.JSONDecoder().raw_decode(line)[0] for line in lines
                 if line.startswith("{")]
    # the background proxy may print its access line after the script's last echo
    (secret_line,) = [line for line in lines if line.startswith("SECRET=")]
    secret = bytes.fromhex(secret_line.removeprefix("SECRET="))
    assert answer["choices"][0]["text"] == "ok"
    assert answer["echo"]["cache_salt"] == keyed_salt(secret, "acme")
