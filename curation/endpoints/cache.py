"""Response cache for deterministic chat requests, over any backend with get/set (a dict, Django's cache)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Protocol

from curation.transient import transient_call


class CacheBackend(Protocol):
    """The subset of Django's cache API the response cache uses."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def set(self, key: str, value: Any, timeout: Any = ...) -> Any: ...


def is_deterministic(params: Mapping[str, Any]) -> bool:
    """A request may be cached only when sampling is greedy (temperature 0) or seeded explicitly."""
    temperature = params.get("temperature")
    return params.get("seed") is not None or (temperature is not None and float(temperature) == 0.0)


def cache_key(
    *,
    identity: str,
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: Mapping[str, Any],
) -> str:
    """Hash of everything that shapes the answer; `params` holds generation parameters and options."""
    material = json.dumps(
        {"identity": identity, "model": model, "messages": messages, "tools": tools, "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return "tatcurate:chat:" + hashlib.sha256(material.encode()).hexdigest()


class ResponseCache:
    """Stores raw response bodies of deterministic requests under `cache_key`, without expiry, in Django's cache or
    a dict (tests, single-process use)."""

    def __init__(self, backend: CacheBackend | dict[str, Any]) -> None:
        self.backend = backend

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the cached body, or None."""
        value = transient_call(self.backend.get, key)
        return value if isinstance(value, dict) else None

    def set(self, key: str, body: dict[str, Any]) -> None:
        """Remember a successful body."""
        if isinstance(self.backend, dict):
            self.backend[key] = body
        else:
            transient_call(self.backend.set, key, body, None)
