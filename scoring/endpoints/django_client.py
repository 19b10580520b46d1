"""The shared chat client for a ModelEndpoint row, wired to Redis (semaphore) and the Django cache when present."""

from __future__ import annotations

import dataclasses
import json
import threading

from django.conf import settings
from django.core.cache import cache

from scoring.endpoints.client import ChatClient

_clients: dict[str, ChatClient] = {}
_lock = threading.Lock()


def client_for(endpoint) -> ChatClient:
    """One client per endpoint configuration and process (its connection pool is reused); the concurrency
    limit holds across workers when REDIS_URL is set. An edited endpoint gets a new client."""
    config = endpoint.config()
    key = json.dumps(dataclasses.asdict(config), sort_keys=True, default=str)
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = ChatClient(config, redis_url=settings.REDIS_URL or None, cache=cache)
        return client


def limit_is_shared() -> bool:
    """Whether endpoint concurrency limits hold across worker processes (the UI says so when they do not)."""
    return bool(settings.REDIS_URL)
