"""OpenAI-compatible chat endpoints: configuration, the one client, limits, cache and errors."""

from __future__ import annotations

from curation.endpoints.attempts import AttemptRecord
from curation.endpoints.cache import DictCacheBackend, ResponseCache, cache_key, is_deterministic
from curation.endpoints.client import (
    ChatClient,
    ChatResult,
    ToolCall,
    json_schema_format,
    parse_retry_after,
)
from curation.endpoints.config import EndpointConfig
from curation.endpoints.errors import (
    EndpointBadRequest,
    EndpointBusy,
    EndpointConfigError,
    EndpointError,
    EndpointMalformedResponse,
    EndpointRequestRejected,
    EndpointRetriesExhausted,
    EndpointUnauthorized,
)
from curation.endpoints.limits import (
    RedisConcurrencyLimiter,
    RedisRateLimiter,
    ThreadConcurrencyLimiter,
    ThreadRateLimiter,
    concurrency_limiter_for,
    rate_limiter_for,
)

__all__ = [
    "AttemptRecord",
    "ChatClient",
    "ChatResult",
    "DictCacheBackend",
    "EndpointBadRequest",
    "EndpointBusy",
    "EndpointConfig",
    "EndpointConfigError",
    "EndpointError",
    "EndpointMalformedResponse",
    "EndpointRequestRejected",
    "EndpointRetriesExhausted",
    "EndpointUnauthorized",
    "RedisConcurrencyLimiter",
    "RedisRateLimiter",
    "ResponseCache",
    "ThreadConcurrencyLimiter",
    "ThreadRateLimiter",
    "ToolCall",
    "cache_key",
    "concurrency_limiter_for",
    "is_deterministic",
    "json_schema_format",
    "parse_retry_after",
    "rate_limiter_for",
]
