"""Plain configuration of one OpenAI-compatible chat endpoint (no Django; the model maps onto it)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from curation.endpoints.errors import EndpointConfigError

# Parameters that change what the model produces; all of them go into the cache key.
GENERATION_PARAM_NAMES = frozenset({
    "temperature", "top_p", "top_k", "min_p", "max_tokens", "max_completion_tokens", "seed", "stop",
    "presence_penalty", "frequency_penalty", "repeat_penalty", "logit_bias", "n", "logprobs", "top_logprobs",
    "parallel_tool_calls", "reasoning_effort",
})  # fmt: skip


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to call one chat-completions endpoint; holds the key's variable name, never the key."""

    base_url: str
    model: str
    api_key_env: str = ""
    timeout_s: float = 60.0
    connect_timeout_s: float = 10.0
    max_attempts: int = 5
    concurrency_limit: int = 4
    requests_per_minute: int | None = None
    generation_params: dict[str, Any] = field(default_factory=dict)
    supports_tools: bool = False
    # Stable name for cache keys and shared semaphores; derived from base_url and model when empty.
    identity_key: str = ""
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0
    max_retry_after_s: float = 120.0
    queue_timeout_s: float | None = 600.0

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise EndpointConfigError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        if not self.model:
            raise EndpointConfigError("model must not be empty")
        if self.max_attempts < 1:
            raise EndpointConfigError("max_attempts must be at least 1")
        if self.concurrency_limit < 1:
            raise EndpointConfigError("concurrency_limit must be at least 1")
        if self.requests_per_minute is not None and self.requests_per_minute < 1:
            raise EndpointConfigError("requests_per_minute must be at least 1 when set")
        if self.timeout_s <= 0:
            raise EndpointConfigError("timeout_s must be positive")
        unknown = set(self.generation_params) - GENERATION_PARAM_NAMES
        if unknown:
            raise EndpointConfigError(f"unknown generation parameters: {', '.join(sorted(unknown))}")

    @property
    def identity(self) -> str:
        """Name shared by every process talking to this endpoint (semaphore and cache namespace)."""
        if self.identity_key:
            return self.identity_key
        digest = hashlib.sha256(f"{self.base_url.rstrip('/')}\n{self.model}".encode()).hexdigest()
        return f"endpoint-{digest[:16]}"

    @property
    def chat_url(self) -> str:
        """The chat-completions URL; a base URL ending in a version segment (``/v1``) is used as is."""
        base = self.base_url.rstrip("/")
        last_segment = urlsplit(base).path.rsplit("/", 1)[-1]
        if len(last_segment) >= 2 and last_segment[0] == "v" and last_segment[1:].isdigit():
            return f"{base}/chat/completions"
        return f"{base}/v1/chat/completions"

    def api_key(self) -> str | None:
        """Read the key from the named environment variable; a named but unset variable is an error."""
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise EndpointConfigError(
                f"environment variable {self.api_key_env} (API key for {self.base_url}) is not set"
            )
        return value
