"""A served vLLM on loopback, with the admission proxy in front: what the served run needs.

* :func:`write_model_dir`: the project's own model directory — a small Llama ``config.json`` and
  a byte-level BPE tokenizer with ``vocab_size`` ids — served with ``--load-format dummy``
  (random weights: nothing is downloaded; a prefix cache looks at token ids only, never at what
  the weights compute). :func:`model_dir_sha256` binds it in the evidence.
* :func:`vllm_server`: starts ``python -m vllm.entrypoints.openai.api_server`` from the served
  engine's venv (installed by ``.ci/served/install.sh``, never at run time) in a process group of
  its own, waits for ``GET /version``, and stops the whole group when the ``with`` block ends —
  on success, on an exception and on Ctrl-C alike (SIGTERM, then SIGKILL after a grace period).
* :func:`admission_proxy`: the project's proxy (``pytools admission``) in front of it,
  with a throw-away secret and two tenants made for the run.
* :func:`timed_completion`: one streamed ``/v1/completions`` call; what a client sees of it: the
  time to the first streamed token and ``usage.prompt_tokens_details.cached_tokens``.

Only 127.0.0.1 is ever bound. Ports are chosen by the kernel.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from pytools.admission.bench import started
from pytools.admission.tenants import SECRET_ENV, add_tenant

from .served_record import BLOCK_SIZE  # the server's block size is the record's

LOOPBACK = "127.0.0.1"
SERVED_NAME = "pytools-tiny-llama"
#: The server's environment, beyond the caller's: each one measured necessary (issue #26).
SERVER_ENV = {
    "VLLM_HOST_IP": LOOPBACK,  # else the engine's internal queue binds a non-loopback address
    "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB of KV cache on the CPU backend
    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    "VLLM_SERVER_DEV_MODE": "1",  # POST /reset_prefix_cache: an empty cache per scenario
    "HF_HUB_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}
#: The server's flags (``--port``, ``--num-gpu-blocks-override`` and ``--max-model-len``, the
#: pool's size in tokens, are added per run).
SERVER_FLAGS = ("--load-format", "dummy", "--block-size", str(BLOCK_SIZE),
                "--enable-prefix-caching", "--enable-prompt-tokens-details", "--enforce-eager",
                "--host", LOOPBACK, "--served-model-name", SERVED_NAME, "--seed", "0")
STOP_GRACE_S = 20.0


class ServeError(RuntimeError):
    """The served engine or the proxy could not be started or answered wrongly."""


@dataclass(frozen=True)
class ModelShape:
    """The Llama the model directory describes (weights are random: ``--load-format dummy``)."""

    hidden_size: int = 256
    intermediate_size: int = 512
    layers: int = 4
    heads: int = 4
    kv_heads: int = 4
    vocab_size: int = 32_000  # the prompts' token ids are below 32,000

    def config(self) -> dict[str, Any]:
        return {
            "architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "hidden_size": self.hidden_size, "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.layers, "num_attention_heads": self.heads,
            "num_key_value_heads": self.kv_heads, "vocab_size": self.vocab_size,
            "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
            "hidden_act": "silu", "tie_word_embeddings": False, "torch_dtype": "bfloat16",
            "bos_token_id": 256, "eos_token_id": 257,
        }


#: The shapes a run can serve: ``tiny`` for the CPU, ``llama-8b`` (Llama-3-8B's layer shapes, a
#: 32,000-id vocabulary) for a GPU run with random weights.
SHAPES = {
    "tiny": ModelShape(),
    "llama-8b": ModelShape(hidden_size=4096, intermediate_size=14336, layers=32, heads=32,
                           kv_heads=8),
}


def byte_symbols() -> list[str]:
    """The 256 symbols of a byte-level BPE (GPT-2's convention): printable Latin-1 bytes stand
    for themselves, every other byte for the code point 256 + its rank among those."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
            *range(ord("®"), ord("ÿ") + 1)]
    extra = iter(range(256, 512))
    return [chr(b) if b in keep else chr(next(extra)) for b in range(256)]


def tokenizer_json(vocab_size: int) -> dict[str, Any]:
    """A byte-level BPE without merges: ids 0–255 the bytes, 256/257 ``<s>``/``</s>``, the rest
    placeholder tokens, so every id below ``vocab_size`` is a token the tokenizer knows."""
    vocab = {sym: i for i, sym in enumerate(byte_symbols())}
    vocab["<s>"], vocab["</s>"] = 256, 257
    vocab.update({f"<unused{i}>": i for i in range(258, vocab_size)})
    level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}
    return {
        "version": "1.0", "truncation": None, "padding": None, "normalizer": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for i, t in ((256, "<s>"), (257, "</s>"))],
        "pre_tokenizer": level, "post_processor": None, "decoder": level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": []},
    }


def write_model_dir(path: Path, shape: ModelShape = ModelShape()) -> str:
    """Write the model directory into the empty or new folder ``path``; its SHA-256."""
    path.mkdir(parents=True, exist_ok=True)
    if any(path.iterdir()):
        raise ServeError(f"{path}: the model directory must be a new or empty folder")
    files = {
        "config.json": shape.config(),
        "tokenizer.json": tokenizer_json(shape.vocab_size),
        "tokenizer_config.json": {"tokenizer_class": "PreTrainedTokenizerFast",
                                  "bos_token": "<s>", "eos_token": "</s>",
                                  "model_max_length": 4096},
    }
    for name, doc in files.items():
        (path / name).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n",
                                 encoding="utf-8")
    return model_dir_sha256(path)


def model_dir_sha256(path: Path) -> str:
    """SHA-256 over the folder's files, names and contents, in name order."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.iterdir() if p.is_file()):
        data = file.read_bytes()
        digest.update(f"{file.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def free_port() -> int:
    """A loopback port the kernel has just handed out (and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A started server: its base URL, process and log."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path
    flags: list[str] = field(default_factory=list)
    startup_s: float = 0.0

    def log_tail(self, chars: int = 2000) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]
        return ""


def stop_group(process: subprocess.Popen[bytes], grace_s: float = STOP_GRACE_S) -> None:
    """Stop ``process`` and everything in its process group: SIGTERM, then SIGKILL."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace_s)
    # the group may outlive its leader (vLLM's engine core is a child process)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def server_command(python: Path, model_dir: Path, port: int,
                   num_blocks: int | None, max_model_len: int | None = None) -> list[str]:
    """The command line that starts the OpenAI-compatible vLLM server (``max_model_len``:
    default the most the pool holds)."""
    cmd = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
           *SERVER_FLAGS, "--port", str(port)]
    if num_blocks is not None:
        # vLLM refuses a max model length the pool holds only exactly: one block spare
        cmd += ["--num-gpu-blocks-override", str(num_blocks), "--max-model-len",
                str(max_model_len or (num_blocks - 1) * BLOCK_SIZE)]
    else:
        cmd += ["--max-model-len", "4096"]
    return cmd


@contextlib.contextmanager
def vllm_server(python: Path, model_dir: Path, log_dir: Path, num_blocks: int | None = None,
                timeout_s: float = 600.0, command: Sequence[str] | None = None,
                max_model_len: int | None = None,
                env: dict[str, str] | None = None) -> Iterator[Server]:
    """Serve ``model_dir`` on loopback; yield the :class:`Server`; stop it however we leave.

    ``command`` replaces the vLLM command line (tests start a stand-in with it); ``env`` adds
    to the server's environment (the partitioned pool's quota file)."""
    if command is None and not python.exists():
        raise ServeError(f"{python}: no served-engine interpreter (install it with "
                         f"`bash .ci/served/install.sh`)")
    port = free_port()
    cmd = list(command) if command is not None else server_command(python, model_dir, port,
                                                                   num_blocks, max_model_len)
    if command is not None:
        cmd = [c.replace("{port}", str(port)) for c in cmd]
    log = log_dir / f"vllm-{port}.log"
    env = {**os.environ, **SERVER_ENV, **(env or {})}
    started_at = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    server = Server(url=f"http://{LOOPBACK}:{port}", process=process, log=log, flags=cmd[3:])
    try:
        wait_ready(server, timeout_s)
        server.startup_s = round(time.monotonic() - started_at, 1)
        yield server
    finally:
        stop_group(process)


def wait_ready(server: Server, timeout_s: float) -> None:
    """Poll ``GET /version`` until it answers; a dead process or the timeout is a ServeError."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=5.0) as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                raise ServeError(f"the server exited with {server.process.returncode} before "
                                 f"answering; its log ({server.log}) ends:\n{server.log_tail()}")
            with contextlib.suppress(httpx.HTTPError):
                if client.get(server.url + "/version").is_success:
                    return
            time.sleep(0.5)
    raise ServeError(f"the server did not answer within {timeout_s:.0f} s; its log "
                     f"({server.log}) ends:\n{server.log_tail()}")


@dataclass(frozen=True)
class Proxy:
    """The admission proxy's URL and the two tenants' API keys."""

    url: str
    keys: dict[str, str]


@contextlib.contextmanager
def admission_proxy(python: str, upstream: str, tenants: Sequence[str], secret: bytes,
                    work: Path) -> Iterator[Proxy]:
    """The project's proxy in its own process in front of ``upstream``, for ``tenants``."""
    path = work / "tenants.json"
    keys = {t: add_tenant(path, t) for t in tenants}
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, SECRET_ENV: secret.hex(), "PYTHONUNBUFFERED": "1", "PYTHONPATH": root}
    env.pop("PYTOOLS_ADMISSION_UPSTREAM_KEY", None)
    with started([python, "-m", "pytools", "admission", "--upstream", upstream, "--tenants",
                  str(path), "--port", "0"], env) as url:
        yield Proxy(url=url, keys=keys)


@dataclass(frozen=True)
class Timed:
    """What a client sees of one streamed completion."""

    status: int
    ttft_ms: float  # request sent → first streamed token (the whole call when refused)
    cached_tokens: int | None
    prompt_tokens: int | None


def timed_completion(client: httpx.Client, url: str, model: str, tokens: Sequence[int],
                     salt: str | None = None, api_key: str | None = None) -> Timed:
    """POST a streamed ``/v1/completions`` of one output token; time its first token."""
    body: dict[str, Any] = {"model": model, "prompt": list(tokens), "max_tokens": 1,
                            "stream": True, "stream_options": {"include_usage": True}}
    if salt is not None:
        body["cache_salt"] = salt
    headers = {"content-type": "application/json"}
    if api_key is not None:
        headers["authorization"] = f"Bearer {api_key}"
    first: float | None = None
    usage: dict[str, Any] | None = None
    t0 = time.perf_counter()
    with client.stream("POST", url + "/v1/completions", content=json.dumps(body),
                       headers=headers) as answer:
        if answer.status_code != 200:
            answer.read()
            return Timed(answer.status_code, (time.perf_counter() - t0) * 1e3, None, None)
        for line in answer.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if first is None and event.get("choices"):
                first = time.perf_counter()
            if event.get("usage"):
                usage = event["usage"]
    if first is None or usage is None:
        raise ServeError(f"{url}: a streamed completion without a token or without usage")
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if type(cached) is not int:
        raise ServeError(f"{url}: no usage.prompt_tokens_details.cached_tokens (vLLM needs "
                         f"--enable-prompt-tokens-details)")
    return Timed(200, round((first - t0) * 1e3, 3), cached, usage.get("prompt_tokens"))


def reset_cache(client: httpx.Client, server_url: str) -> None:
    """Empty the server's prefix cache (an operator call, never through the proxy)."""
    answer = client.post(server_url + "/reset_prefix_cache")
    if not answer.is_success:
        raise ServeError(f"{server_url}/reset_prefix_cache: HTTP {answer.status_code} (the "
                         f"server needs VLLM_SERVER_DEV_MODE=1)")


def server_version(client: httpx.Client, server_url: str) -> str:
    """``GET /version``'s version string."""
    return str(client.get(server_url + "/version").json().get("version", "unknown"))


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """Inside the block SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so every ``finally``
    runs and the servers started here are stopped (by default SIGTERM ends Python at once)."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def work_dir() -> Iterator[Path]:
    """A private temporary folder for the model directory, logs and the tenants file."""
    with tempfile.TemporaryDirectory(prefix="pytools-served-") as tmp:
        yield Path(tmp)
