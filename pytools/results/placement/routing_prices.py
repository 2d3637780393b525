"""Per-block prices of the costed routing table: a remote hit ``r`` and a miss ``m``, in whole
microseconds, derived from stated public figures (each with its source, assumptions said).

``m`` is the prefill time of one block: :data:`BLOCK_TOKENS` tokens at the prefill rate of a
named model on a named node; ``r`` is the time one block's KV cache takes over one link:
bytes per token of that model's KV cache x block tokens, at a stated link bandwidth. Both are
rounded half up to whole microseconds, so that the natural-number prices of
``KVCache.Placement.pooled_cost_le_perInstance_cost`` (Proofs/Placement/Cost.lean) apply to
them as they are. Nothing here is measured by this project: the figures are the sources'.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pytools.traces.prefix import BLOCK_TOKENS

#: The model whose KV cache and prefill rate price a block.
MODEL = "DeepSeek-V3 (671B MoE, multi-head latent attention)"

#: DeepSeek-V3's config.json fields that size its KV cache (MLA: per layer and token, one
#: compressed latent of ``kv_lora_rank`` values and one RoPE key of ``qk_rope_head_dim``).
MODEL_CONFIG: dict[str, int] = {"num_hidden_layers": 61, "kv_lora_rank": 512,
                                "qk_rope_head_dim": 64}

#: Bytes of one cached value (BF16), the simulator's default precision for this model.
BYTES_PER_VALUE = 2

#: Where the KV sizing comes from.
CONFIG_SOURCE = ("https://huggingface.co/deepseek-ai/DeepSeek-V3/raw/main/config.json "
                 "(num_hidden_layers, kv_lora_rank, qk_rope_head_dim); the same bytes per "
                 "token as kvcache-simulator 0.1.3's deepseek-v3 sizing at BF16 (its "
                 "models.yaml, calculate_cache_size)")

#: DeepSeek's published prefill rate: input tokens per second per H800 node (8 GPUs),
#: including tokens served from its on-disk KV cache.
NODE_INPUT_TOKENS_PER_S = 73_700

#: DeepSeek's published day of traffic: input tokens, and those that hit its KV cache
#: (billions); the computed share is (608 - 342) / 608.
DAY_INPUT_TOKENS_B = 608
DAY_CACHED_TOKENS_B = 342

#: Where the prefill figures come from.
PREFILL_SOURCE = ("DeepSeek, 'Day 6: One More Thing, DeepSeek-V3/R1 Inference System "
                  "Overview' (github.com/deepseek-ai/open-infra-index, "
                  "202502OpenSourceWeek/day_6_one_more_thing_deepseekV3R1_inference_system_"
                  "overview.md): 'Each H800 node delivers an average throughput of ~73.7k "
                  "tokens/s input (including cache hits) during prefilling'; 'Total input "
                  "tokens: 608B, of which 342B tokens (56.3%) hit the on-disk KV cache'")

#: The assumption behind the prefill price.
PREFILL_ASSUMPTION = ("assumption: tokens served from DeepSeek's cache cost the node nothing, "
                      "so the node computes 73.7k x (608 - 342) / 608 tokens/s; counting "
                      "cached tokens as computed instead would make m about 2.3 times smaller")

#: Link bandwidths of the presets, gigabits per second.
LINK_GBPS: dict[str, int] = {"100g": 100, "400g": 400}

#: The assumption behind the remote price.
LINK_ASSUMPTION = ("assumption: one RDMA link at its line rate (100 Gb/s: one ConnectX-6 "
                   "class NIC; 400 Gb/s: one ConnectX-7 class NIC), no protocol overhead, no "
                   "queueing, one block at a time")


def bytes_per_token() -> int:
    """KV-cache bytes per token of :data:`MODEL`: layers x (latent + RoPE key) x bytes."""
    c = MODEL_CONFIG
    return c["num_hidden_layers"] * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * BYTES_PER_VALUE


def computed_tokens_per_s() -> Fraction:
    """Tokens per second the node computes (cache hits taken as free:
    :data:`PREFILL_ASSUMPTION`)."""
    return Fraction(NODE_INPUT_TOKENS_PER_S * (DAY_INPUT_TOKENS_B - DAY_CACHED_TOKENS_B),
                    DAY_INPUT_TOKENS_B)


def round_half_up(value: Fraction) -> int:
    """``value`` rounded to the nearest integer, halves up."""
    return int((value * 2 + 1) // 2)


def miss_us() -> int:
    """``m``: microseconds to prefill one block of :data:`BLOCK_TOKENS` tokens."""
    return round_half_up(Fraction(BLOCK_TOKENS * 10**6) / computed_tokens_per_s())


def remote_us(gbps: int) -> int:
    """``r``: microseconds to move one block's KV cache over a link of ``gbps`` Gb/s."""
    bits = bytes_per_token() * BLOCK_TOKENS * 8
    return round_half_up(Fraction(bits * 10**6, gbps * 10**9))


@dataclass(frozen=True)
class Prices:
    """Per-block prices in microseconds: a remote hit ``r``, a miss ``m`` (a local hit 0)."""

    name: str
    remote: int
    miss: int

    def __post_init__(self) -> None:
        for what, v in (("remote cost", self.remote), ("miss cost", self.miss)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{what} must be a non-negative integer (microseconds), "
                                 f"got {v!r}")


#: The presets, by name; the first is the default.
PRESETS: dict[str, Prices] = {
    f"deepseek-v3-h800-{link}": Prices(f"deepseek-v3-h800-{link}", remote_us(gbps), miss_us())
    for link, gbps in LINK_GBPS.items()
}

#: The default prices' name.
DEFAULT_PRICES = next(iter(PRESETS))


def prices_of(preset: str | None = None, remote: int | None = None,
              miss: int | None = None) -> Prices:
    """The preset's prices (default :data:`DEFAULT_PRICES`), ``remote``/``miss`` overriding;
    :class:`ValueError` for an unknown preset or a negative price."""
    name = preset or DEFAULT_PRICES
    if name not in PRESETS:
        raise ValueError(f"unknown prices {name!r} (known: {', '.join(PRESETS)})")
    base = PRESETS[name]
    if remote is None and miss is None:
        return base
    label = f"{name} (overridden: r={remote if remote is not None else base.remote}, " \
            f"m={miss if miss is not None else base.miss})"
    return Prices(label, base.remote if remote is None else remote,
                  base.miss if miss is None else miss)


def price_sources(prices: Prices) -> dict[str, Any]:
    """The certificate's account of the prices: each value, its unit and its source."""
    return {
        "name": prices.name,
        "remote_us": prices.remote,
        "miss_us": prices.miss,
        "unit": "microseconds per block, rounded half up",
        "model": MODEL,
        "block_tokens": BLOCK_TOKENS,
        "kv_bytes_per_token": bytes_per_token(),
        "kv_bytes_per_block": bytes_per_token() * BLOCK_TOKENS,
        "kv_source": CONFIG_SOURCE,
        "node_input_tokens_per_s": NODE_INPUT_TOKENS_PER_S,
        "computed_share": f"{DAY_INPUT_TOKENS_B - DAY_CACHED_TOKENS_B}/{DAY_INPUT_TOKENS_B}",
        "prefill_source": PREFILL_SOURCE,
        "prefill_assumption": PREFILL_ASSUMPTION,
        "presets": [{"name": p.name, "remote_us": p.remote, "miss_us": p.miss,
                     "link_gbps": LINK_GBPS[p.name.rsplit("-", 1)[1]]}
                    for p in PRESETS.values()],
        "link_assumption": LINK_ASSUMPTION,
    }
