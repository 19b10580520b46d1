"""The shared chat client for a ModelEndpoint row, wired to Redis (semaphore) and the Django cache when present."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache

from scoring.endpoints.client import ChatClient


def client_for(endpoint) -> ChatClient:
    """One client for `endpoint`: its concurrency limit holds across workers when REDIS_URL is set."""
    return ChatClient(endpoint.config(), redis_url=settings.REDIS_URL or None, cache=cache)


def limit_is_shared() -> bool:
    """Whether endpoint concurrency limits hold across worker processes (the UI says so when they do not)."""
    return bool(settings.REDIS_URL)
