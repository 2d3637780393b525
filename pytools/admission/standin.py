"""A stand-in upstream for tests and the bench: it checks every forwarded body, then answers
like a completions server (JSON, or server-sent events when ``"stream": true``);
``GET /v1/models`` lists one model, ``standin``.

Checks (``invariants``): the route is one the proxy forwards; the body is a JSON object whose
``cache_salt`` is present and passes vLLM's salt rules; the client's ``Authorization`` never
arrives (only the configured upstream key may). With ``validate="vllm"`` every body is also
parsed by vLLM's own request models, ``CompletionRequest`` and ``ChatCompletionRequest``
(vLLM's OpenAI protocol modules; needs the engines venv). A body failing a check gets a 422 that
names the check, so a proxy test sees it.

``python -m pytools.admission.standin [--validate vllm]`` serves on 127.0.0.1 (kernel-chosen
port), prints ``LISTENING <url>``, and stops when its standard input closes (or after
``--max-seconds``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import click
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .request_policy import SALTED_ROUTES
from .salt import vllm_salt_problem

Validator = Callable[[str, dict[str, Any]], str]


def vllm_validator() -> Validator:
    """Validate a body with vLLM's request models; returns what validated it."""
    from importlib.metadata import version

    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.completion.protocol import CompletionRequest

    models = {"/v1/completions": CompletionRequest, "/v1/chat/completions": ChatCompletionRequest}
    tag = f"vllm {version('vllm')}"

    def validate(path: str, doc: dict[str, Any]) -> str:
        model = models[path]
        parsed = model.model_validate(doc)
        if parsed.cache_salt != doc["cache_salt"]:
            raise ValueError("vLLM parsed a different cache_salt")
        return f"{tag} {model.__name__}"

    return validate


def create_standin(
    validate: str = "invariants",
    upstream_api_key: str | None = None,
    received: list[dict[str, Any]] | None = None,
) -> Starlette:
    """The stand-in upstream; ``received`` (if given) collects every accepted body."""
    extra: Validator | None = vllm_validator() if validate == "vllm" else None

    async def completions(request: Request) -> Response:
        path = request.url.path
        auth = request.headers.get("authorization")
        expected = f"Bearer {upstream_api_key}" if upstream_api_key else None
        if auth != expected:
            return JSONResponse({"check": "authorization", "got": auth}, status_code=422)
        try:
            doc = json.loads(await request.body())
        except (UnicodeDecodeError, json.JSONDecodeError):
            return JSONResponse({"check": "json"}, status_code=422)
        if not isinstance(doc, dict):
            return JSONResponse({"check": "object"}, status_code=422)
        problem = vllm_salt_problem(doc.get("cache_salt"))
        if problem:
            return JSONResponse({"check": "cache_salt", "problem": problem}, status_code=422)
        validated_by = "invariants"
        if extra is not None:
            try:
                validated_by = extra(path, doc)
            except Exception as exc:  # pydantic's ValidationError and the salt check
                return JSONResponse({"check": "vllm", "problem": str(exc)[:2000]},
                                    status_code=422)
        if received is not None:
            received.append({"path": path, "body": doc})
        echo = {"path": path, "cache_salt": doc["cache_salt"], "validated_by": validated_by}
        if doc.get("stream") is True:
            return StreamingResponse(sse(echo), media_type="text/event-stream")
        return JSONResponse({
            "id": "cmpl-standin", "object": "text_completion", "model": doc.get("model", ""),
            "choices": [{"index": 0, "text": "ok", "finish_reason": "length"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            "echo": echo,
        })

    async def models(request: Request) -> Response:
        auth = request.headers.get("authorization")
        expected = f"Bearer {upstream_api_key}" if upstream_api_key else None
        if auth != expected:
            return JSONResponse({"check": "authorization", "got": auth}, status_code=422)
        if received is not None:
            received.append({"path": request.url.path, "body": None})
        return JSONResponse({"object": "list", "data": [
            {"id": "standin", "object": "model", "created": 0, "owned_by": "pytools"}]})

    routes = [Route(p, completions, methods=["POST"]) for p in SALTED_ROUTES]
    routes.append(Route("/v1/models", models, methods=["GET"]))
    return Starlette(routes=routes)


async def sse(echo: dict[str, Any]) -> AsyncIterator[bytes]:
    """Three events and ``[DONE]``, with pauses, as a streaming server sends them."""
    for i in range(3):
        # ``text`` as completions stream it, ``delta`` as chat completions do
        event = {"choices": [{"index": 0, "text": f"t{i}", "delta": {"content": f"t{i}"}}],
                 "echo": echo}
        yield f"data: {json.dumps(event)}\n\n".encode()
        await asyncio.sleep(0.01)
    yield b"data: [DONE]\n\n"


@click.command()
@click.option("--validate", type=click.Choice(["invariants", "vllm"]), default="invariants")
@click.option("--upstream-api-key-env", default=None,
              help="Name of an environment variable holding the key the proxy must send.")
@click.option("--max-seconds", type=float, default=600.0, help="Stop after this long at most.")
def main(validate: str, upstream_api_key_env: str | None, max_seconds: float) -> None:
    """Serve the stand-in upstream on loopback until standard input closes."""
    import os

    from .loopback import serve_in_thread

    key = os.environ.get(upstream_api_key_env) if upstream_api_key_env else None
    app = create_standin(validate, upstream_api_key=key)
    with serve_in_thread(app, max_seconds=max_seconds) as url:
        click.echo(f"LISTENING {url}")
        sys.stdout.flush()
        start = time.monotonic()
        while time.monotonic() - start < max_seconds:
            if not sys.stdin.readline():  # EOF: the parent is done
                break


if __name__ == "__main__":
    main()
