"""Adapters that run the scenarios on the engines' own prefix-cache code (CPU only, no model).

* ``vllm``: vLLM's v1 ``KVCacheManager`` with one full-attention group, the request block hasher
  (``get_request_block_hasher``) with the engine's default hash (``prefix_caching_hash_algo``,
  sha256 in 0.33.0), and ``Request(..., cache_salt=...)``: each request is looked up
  (``get_computed_blocks``), allocated (``allocate_slots``, which caches its full blocks) and
  freed (``free``), as the scheduler does for a one-step request.
* ``sglang``: SGLang's ``RadixCache.create_simulated`` with ``page_size`` 16, matched the way
  SGLang's scheduler matches (``RadixKey(..., cache_salt=..., limit=len - 1)``), then the
  prompt inserted, as a finished request's prompt is.

* ``openai-http``: a running OpenAI-compatible server with a real model, over HTTP (the way to
  add a GPU run: no change to the scenarios, the evidence or the re-check).

The first two with blocks/pages of 16 tokens (vLLM's default block size; SGLang's default page
size is 1, which would count hits token by token) and caches large enough that nothing is
evicted. The engines are imported only here, inside the adapters, so nothing else needs them.
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Sequence
from typing import Any

BLOCK_SIZE = 16
NUM_BLOCKS = 1024  # > the blocks of the 4 largest requests of a scenario: no eviction
MAX_MODEL_LEN = 4096
ENGINE_NAMES = ("vllm", "sglang", "openai-http")


class EngineUnavailable(RuntimeError):
    """The engine cannot be imported in this interpreter."""


def _versions(*packages: str) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for package in packages:
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            out[package] = "absent"
    return out


class VllmSession:
    """One empty vLLM ``KVCacheManager``."""

    def __init__(self, engine: VllmEngine) -> None:
        self._engine = engine
        self._manager = engine.new_manager()
        self._count = 0

    def serve(self, tokens: Sequence[int], salt: str | None) -> int:
        e = self._engine
        self._count += 1
        request = e.Request(f"req-{self._count}", list(tokens), e.SamplingParams(max_tokens=1),
                            None, cache_salt=salt, block_hasher=e.hasher)
        blocks, hit = self._manager.get_computed_blocks(request)[:2]
        allocated = self._manager.allocate_slots(request, request.num_tokens - hit, hit, blocks)
        if allocated is None:
            raise RuntimeError("vLLM could not allocate the request's blocks (cache too small)")
        self._manager.free(request)
        return int(hit)


class VllmEngine:
    """vLLM's v1 prefix cache (see the module docstring)."""

    name = "vllm"

    def __init__(self, block_size: int = BLOCK_SIZE, num_blocks: int = NUM_BLOCKS) -> None:
        try:
            import torch
            from vllm.config.cache import CacheConfig
            from vllm.sampling_params import SamplingParams
            from vllm.utils.hashing import get_hash_fn_by_name
            from vllm.v1.core.kv_cache_manager import KVCacheManager
            from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
            from vllm.v1.kv_cache_interface import (
                FullAttentionSpec,
                KVCacheConfig,
                KVCacheGroupSpec,
            )
            from vllm.v1.request import Request
        except ImportError as exc:
            raise EngineUnavailable(f"vLLM cannot be imported here: {exc}") from exc
        self.version = importlib.metadata.version("vllm")
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.hash_algo = CacheConfig.__dataclass_fields__["prefix_caching_hash_algo"].default
        hash_fn = get_hash_fn_by_name(self.hash_algo)
        init_none_hash(hash_fn)
        self.hasher = get_request_block_hasher(block_size, hash_fn)
        self.Request = Request
        self.SamplingParams = SamplingParams
        spec = FullAttentionSpec(block_size=block_size, num_kv_heads=1, head_size=1,
                                 dtype=torch.float32)
        self._config = lambda: KVCacheConfig(
            num_blocks=num_blocks, kv_cache_tensors=[],
            kv_cache_groups=[KVCacheGroupSpec(["layer.0"], spec)])
        self._manager_cls = KVCacheManager

    def new_manager(self) -> Any:
        return self._manager_cls(self._config(), max_model_len=MAX_MODEL_LEN,
                                 scheduler_block_size=self.block_size,
                                 hash_block_size=self.block_size, enable_caching=True)

    def describe(self) -> dict[str, Any]:
        return {
            "cache": "vllm.v1.core.kv_cache_manager.KVCacheManager",
            "block_size": self.block_size,
            "num_blocks": self.num_blocks,
            "prefix_caching_hash_algo": self.hash_algo,
            "environment": _versions("vllm", "torch"),
        }

    def session(self) -> VllmSession:
        return VllmSession(self)


class SglangSession:
    """One empty SGLang ``RadixCache``."""

    def __init__(self, engine: SglangEngine) -> None:
        self._engine = engine
        self._tree = engine.RadixCache.create_simulated(page_size=engine.page_size)

    def serve(self, tokens: Sequence[int], salt: str | None) -> int:
        e = self._engine
        ids = e.array("q", tokens)
        limit = max(len(tokens) - 1, 0)  # the scheduler's _compute_max_prefix_len
        match = self._tree.match_prefix(e.MatchPrefixParams(
            key=e.RadixKey(ids, cache_salt=salt, limit=limit)))
        self._tree.insert(e.InsertParams(key=e.RadixKey(ids, cache_salt=salt)))
        return int(match.device_prefix_len)


class SglangEngine:
    """SGLang's radix cache (see the module docstring)."""

    name = "sglang"

    def __init__(self, page_size: int = BLOCK_SIZE) -> None:
        try:
            from array import array

            from sglang.srt.mem_cache.base_prefix_cache import InsertParams, MatchPrefixParams
            from sglang.srt.mem_cache.radix_cache import RadixCache, RadixKey
        except ImportError as exc:
            raise EngineUnavailable(f"SGLang cannot be imported here: {exc}") from exc
        self.version = importlib.metadata.version("sglang")
        self.page_size = page_size
        self.array = array
        self.RadixCache, self.RadixKey = RadixCache, RadixKey
        self.InsertParams, self.MatchPrefixParams = InsertParams, MatchPrefixParams

    def describe(self) -> dict[str, Any]:
        return {
            "cache": "sglang.srt.mem_cache.radix_cache.RadixCache.create_simulated",
            "page_size": self.page_size,
            "environment": _versions("sglang", "torch"),
        }

    def session(self) -> SglangSession:
        return SglangSession(self)


class HttpSession:
    """A served engine's cache, emptied through its reset endpoint."""

    def __init__(self, engine: HttpEngine) -> None:
        self._engine = engine
        engine.post("/reset_prefix_cache", None)

    def serve(self, tokens: Sequence[int], salt: str | None) -> int:
        body: dict[str, Any] = {"model": self._engine.model, "prompt": list(tokens),
                                "max_tokens": 1}
        if salt is not None:
            body["cache_salt"] = salt
        usage = self._engine.post("/v1/completions", body).get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        if type(cached) is not int:
            raise RuntimeError("the server reports no usage.prompt_tokens_details.cached_tokens "
                               "(vLLM: start it with --enable-prompt-tokens-details)")
        return cached


class HttpEngine:
    """A running OpenAI-compatible server with a real model (e.g. vLLM on a GPU), driven over
    HTTP: prompts as token ids, hits read from ``usage.prompt_tokens_details.cached_tokens``
    (vLLM: ``--enable-prompt-tokens-details``), the cache emptied before each scenario by
    ``POST /reset_prefix_cache`` (vLLM: ``VLLM_SERVER_DEV_MODE=1``). ``block_size`` must be the
    server's (the reference model re-checks the counts with it)."""

    name = "openai-http"

    def __init__(self, url: str, model: str, block_size: int = BLOCK_SIZE) -> None:
        import httpx

        self.url, self.model, self.block_size = url.rstrip("/"), model, block_size
        self._client = httpx.Client(timeout=600.0)
        answer = self._client.get(self.url + "/version")
        self.version = answer.json().get("version", "unknown") if answer.is_success else "unknown"

    def post(self, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        answer = self._client.post(self.url + path, json=body)
        if not answer.is_success:
            raise RuntimeError(f"{path}: HTTP {answer.status_code}: {answer.text[:300]}")
        return answer.json() if answer.content else {}

    def describe(self) -> dict[str, Any]:
        return {"cache": "served over HTTP (usage.prompt_tokens_details.cached_tokens)",
                "block_size": self.block_size, "model": self.model,
                "environment": _versions()}

    def session(self) -> HttpSession:
        return HttpSession(self)


def load_engine(name: str, url: str | None = None, model: str | None = None,
                block_size: int = BLOCK_SIZE) -> VllmEngine | SglangEngine | HttpEngine:
    """The adapter for ``name`` (raises :class:`EngineUnavailable` if it cannot be imported)."""
    if name == "vllm":
        return VllmEngine(block_size=block_size)
    if name == "sglang":
        return SglangEngine(page_size=block_size)
    if name == "openai-http":
        if not url or not model:
            raise ValueError("the openai-http engine needs --url and --model")
        return HttpEngine(url, model, block_size)
    raise ValueError(f"unknown engine {name!r}; choose from {', '.join(ENGINE_NAMES)}")
