"""The ``openai-http`` adapter (the path for a GPU run with a real model), on loopback against a
simulated server whose prefix cache is the reference model: the scenarios over HTTP give the
reference's counts, and a server that reports no cached tokens is refused clearly."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pytools.admission.loopback import serve_in_thread
from pytools.admission.salt import vllm_salt_problem
from pytools.results.leak.engines import HttpEngine, load_engine
from pytools.results.leak.prompts import HEADLINE, generate
from pytools.results.leak.reference import ReferenceEngine, ReferenceSession
from pytools.results.leak.scenarios import Salts, run_pairs


def simulated_server(report_cached: bool = True) -> Starlette:
    """An OpenAI-style server whose cache is the reference model (one, reset on request)."""
    state: dict[str, ReferenceSession] = {"cache": ReferenceSession(16)}

    async def version(request: Request) -> Response:
        return JSONResponse({"version": "simulated-1"})

    async def reset(request: Request) -> Response:
        state["cache"] = ReferenceSession(16)
        return Response(status_code=200)

    async def completions(request: Request) -> Response:
        doc = json.loads(await request.body())
        salt = doc.get("cache_salt")
        if salt is not None and vllm_salt_problem(salt):
            return JSONResponse({"error": "bad salt"}, status_code=400)
        cached = state["cache"].serve(doc["prompt"], salt)
        usage: dict[str, Any] = {"prompt_tokens": len(doc["prompt"])}
        if report_cached:
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        return JSONResponse({"choices": [{"text": "x"}], "usage": usage})

    return Starlette(routes=[Route("/version", version), Route("/reset_prefix_cache", reset,
                                                                  methods=["POST"]),
                             Route("/v1/completions", completions, methods=["POST"])])


@pytest.fixture()
def server() -> Iterator[str]:
    with serve_in_thread(simulated_server(), max_seconds=300) as url:
        yield url


def test_scenarios_over_http_match_the_reference(server: str) -> None:
    engine = load_engine("openai-http", url=server, model="m")
    assert isinstance(engine, HttpEngine) and engine.version == "simulated-1"
    pairs, salts = generate(HEADLINE), Salts.for_seed(HEADLINE.seed)
    assert run_pairs(engine, pairs, salts) == run_pairs(ReferenceEngine(), pairs, salts)
    assert engine.describe()["block_size"] == 16


def test_server_without_cached_tokens_is_refused() -> None:
    with serve_in_thread(simulated_server(report_cached=False), max_seconds=120) as url:
        session = HttpEngine(url, "m").session()
        with pytest.raises(RuntimeError, match="enable-prompt-tokens-details"):
            session.serve(list(range(40)), None)


def test_http_engine_needs_url_and_model() -> None:
    with pytest.raises(ValueError, match="--url and --model"):
        load_engine("openai-http")
