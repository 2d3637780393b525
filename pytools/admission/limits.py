"""The per-connection limits of the proxy's server (:mod:`.serving` says what each bounds).
Standard library only: the CLI reads the defaults before it imports the web stack."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Per-connection limits of the proxy's server (seconds, bytes, connections)."""

    head_timeout_s: float = 10.0
    keep_alive_s: int = 5
    max_head_bytes: int = 16 * 1024
    max_concurrency: int = 512
