"""The shared chat client for a ModelEndpoint row, wired to the shared semaphore (Redis, else lock files under the
data directory) and the Django cache."""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any

from django.conf import settings
from django.core.cache import cache

from curation.endpoints.client import ChatClient
from curation.endpoints.outbound import OutboundPolicy
from curation.env import ConfigurationError

_clients: dict[str, ChatClient] = {}
_lock = threading.Lock()


def client_for(endpoint, *, use_cache: bool = True) -> ChatClient:
    """One client per endpoint configuration and process (its connection pool is reused); the concurrency
    limit holds across workers. An edited endpoint gets a new client. `use_cache=False`: one that neither reads nor
    writes the request cache (a scoring run that asks the model afresh)."""
    config = endpoint.config()
    # Limits are shared through Redis when REDIS_URL is set (every machine), else through lock files under the data
    # directory (every process of this machine).
    limits = {"redis_url": settings.REDIS_URL or None, "slot_dir": settings.DATA_DIR / "endpoint-slots"}
    key = json.dumps(
        [dataclasses.asdict(config), settings.TATCURATE_ENDPOINT_HOSTS, limits, use_cache], sort_keys=True, default=str
    )
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = ChatClient(
                config, cache=cache if use_cache else None, outbound=outbound_policy(), **limits
            )
        return client


def limit_is_shared() -> bool:
    """Whether endpoint concurrency limits hold across all workers: with Redis, or when the filesystem broker keeps
    every worker on this machine (the UI says so when they do not)."""
    return bool(settings.REDIS_URL) or settings.CELERY_BROKER_URL.startswith("filesystem://")


def outbound_policy(setting: str = "TATCURATE_ENDPOINT_HOSTS", **options: Any) -> OutboundPolicy:
    """Where outbound requests may go: by default the endpoints' rule (loopback and TATCURATE_ENDPOINT_HOSTS);
    webhooks pass their own setting and options (curation.webhooks.services.webhook_policy). Link-local and metadata
    ranges never."""
    try:
        return OutboundPolicy.from_entries(getattr(settings, setting), setting=setting, **options)
    except ValueError as error:
        raise ConfigurationError(f"{setting} holds an invalid network: {error}") from None
