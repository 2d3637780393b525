"""A stand-in for vLLM's OpenAI server, for the served run's fast tests: its prefix cache is the
reference model (:mod:`pytools.results.leak.reference`), its first token waits in proportion to
the prompt tokens not served from cache, and it streams the way vLLM does (``choices`` events,
then a ``usage`` event with ``prompt_tokens_details.cached_tokens``).

    python tests/served_standin.py PORT [--child] [--exit-code N] [--never-listen]

``--child`` starts a sleeping child process first and prints its pid (vLLM's engine core is one:
stopping the server must stop it too); ``--exit-code N`` exits at once with N; ``--never-listen``
sleeps without listening.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

TOKEN_S = 2e-5  # the stand-in's prefill time per uncached prompt token


def app():  # noqa: ANN201 - starlette is imported only when serving
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    from pytools.admission.salt import vllm_salt_problem
    from pytools.results.leak.reference import ReferenceSession
    from pytools.results.leak.served import BLOCK_SIZE

    state = {"cache": ReferenceSession(BLOCK_SIZE)}

    async def version(request: Request) -> Response:
        return JSONResponse({"version": "standin-1"})

    async def reset(request: Request) -> Response:
        state["cache"] = ReferenceSession(BLOCK_SIZE)
        return Response(status_code=200)

    async def completions(request: Request) -> Response:
        doc = json.loads(await request.body())
        salt = doc.get("cache_salt")
        if salt is not None and vllm_salt_problem(salt):
            return JSONResponse({"error": "bad salt"}, status_code=400)
        prompt = doc["prompt"]
        cached = state["cache"].serve(prompt, salt)
        time.sleep((len(prompt) - cached) * TOKEN_S)

        def events():
            yield "data: " + json.dumps({"choices": [{"index": 0, "text": "x"}]}) + "\n\n"
            usage = {"prompt_tokens": len(prompt), "completion_tokens": 1,
                     "prompt_tokens_details": {"cached_tokens": cached}}
            yield "data: " + json.dumps({"choices": [], "usage": usage}) + "\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/version", version), Route("/reset_prefix_cache", reset,
                                                               methods=["POST"]),
                             Route("/v1/completions", completions, methods=["POST"])])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--exit-code", type=int, default=None)
    parser.add_argument("--never-listen", action="store_true")
    args = parser.parse_args()
    if args.exit_code is not None:
        print("stand-in: exiting as asked", flush=True)
        sys.exit(args.exit_code)
    if args.child:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print(f"CHILD {child.pid}", flush=True)
    if args.never_listen:
        time.sleep(600)
    import uvicorn

    uvicorn.run(app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
