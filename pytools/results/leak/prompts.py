"""The synthetic prompts of the leak reproduction: pairs (victim's prompt, other tenant's prompt).

Each pair: a length ``L`` drawn uniformly from ``[min_len, max_len]``; the victim's prompt is
``L`` random token ids below ``vocab``; the other tenant's prompt keeps all but the victim's last
``tail`` tokens and replaces those with fresh random ones, the first of which differs from the
victim's token there, so the shared prefix is exactly ``L - tail`` tokens. Everything comes from
``random.Random(seed)`` (Mersenne Twister, stable across Python versions for these calls), so the
parameters below determine every token; :func:`prompts_sha256` binds them in the evidence.

No tokenizer and no model: the ids are synthetic, which is all a prefix cache looks at.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import asdict, dataclass

#: Name and version of this generator, recorded in every evidence file.
GENERATOR = "pytools.results.leak.prompts/v1"


@dataclass(frozen=True)
class PromptParams:
    """Everything that determines a set of prompt pairs."""

    seed: int
    pairs: int
    min_len: int = 544
    max_len: int = 784
    tail: int = 48
    vocab: int = 32_000

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


#: The twelve headline prompts and the 1,000 pairs behind the upper bounds.
HEADLINE = PromptParams(seed=20261203, pairs=12)
BOUND = PromptParams(seed=20261204, pairs=1000)


@dataclass(frozen=True)
class PromptPair:
    """The victim's prompt and the other tenant's, sharing all but the last ``tail`` tokens."""

    victim: tuple[int, ...]
    other: tuple[int, ...]
    shared: int  # tokens the two prompts have in common at the start


def generate(params: PromptParams) -> list[PromptPair]:
    """The prompt pairs of ``params``, deterministically."""
    if not (0 < params.tail < params.min_len <= params.max_len and params.vocab >= 2
            and params.pairs >= 1):
        raise ValueError(f"inconsistent prompt parameters: {params}")
    rng = random.Random(params.seed)
    out = []
    for _ in range(params.pairs):
        length = rng.randint(params.min_len, params.max_len)
        victim = [rng.randrange(params.vocab) for _ in range(length)]
        shared = length - params.tail
        first = rng.randrange(params.vocab - 1)
        if first >= victim[shared]:
            first += 1  # any id but the victim's at the first differing position
        other = victim[:shared] + [first] + [rng.randrange(params.vocab)
                                             for _ in range(params.tail - 1)]
        out.append(PromptPair(victim=tuple(victim), other=tuple(other), shared=shared))
    return out


def prompts_sha256(pairs: list[PromptPair]) -> str:
    """SHA-256 over every token of every pair (victim then other, lengths included)."""
    digest = hashlib.sha256(GENERATOR.encode() + b"\n")
    for pair in pairs:
        for prompt in (pair.victim, pair.other):
            digest.update(f"{len(prompt)}:".encode())
            digest.update(",".join(map(str, prompt)).encode())
            digest.update(b";")
    return digest.hexdigest()
