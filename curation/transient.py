"""The one rule for transient outages: a broker, cache, semaphore (Redis) or database connection error is retried
with exponential backoff for up to TATCURATE_TRANSIENT_RETRY_S seconds, and one that outlasts it is a
`TransientOutage` — the work is handed back untouched, never recorded as an item's failure (issue 19.4).

Used by the endpoint limiters and the request cache (each Redis call), and by the scoring chunks and drafting items
(an item whose call still failed is not attempted: its chunk or item goes back to the queue).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import tenacity

logger = logging.getLogger(__name__)
T = TypeVar("T")


class TransientOutage(Exception):
    """A broker, cache, semaphore or database outage outlasted the retries: the work was not attempted."""


def _transient_types() -> tuple[type[BaseException], ...]:
    # redis-py and kombu are installed with Celery whether or not a Redis server is used.
    import kombu.exceptions
    import redis.exceptions
    from django.db import InterfaceError, OperationalError

    redis_errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.BusyLoadingError)
    return (*redis_errors, kombu.exceptions.OperationalError, InterfaceError, OperationalError)


def is_transient(error: BaseException | None) -> bool:
    """Whether `error`, or an error it was raised from, is an outage of the broker, cache, semaphore or database."""
    seen: set[int] = set()
    types = (TransientOutage, *_transient_types())
    while error is not None and id(error) not in seen:
        if isinstance(error, types):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def retry_seconds() -> float:
    """How long an outage is ridden out before the work is handed back (default 30 s; a 5 s restart passes)."""
    from django.conf import settings

    return float(settings.TATCURATE_TRANSIENT_RETRY_S)


def _before_retry(state: tenacity.RetryCallState) -> None:
    error = state.outcome.exception() if state.outcome else None
    logger.warning("transient outage (%s: %s); retrying", type(error).__name__, error)
    from django.db import DatabaseError, connection

    # A restarted database leaves this thread's connection broken: drop it so the retry opens a fresh one (never
    # inside a transaction, which the outage has already lost and its owner must redo).
    if isinstance(error, DatabaseError) and not connection.in_atomic_block:
        connection.close()


def transient_call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call `function`, retrying transient errors with backoff (0.1 s doubling to 2 s) for `retry_seconds()`; one
    that outlasts them raises TransientOutage."""
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_transient),
        wait=tenacity.wait_exponential(multiplier=0.1, max=2.0),
        stop=tenacity.stop_after_delay(retry_seconds()),
        before_sleep=_before_retry,
        reraise=True,
    )
    try:
        return retrying(function, *args, **kwargs)
    except TransientOutage:
        raise
    except Exception as error:
        if is_transient(error):
            raise TransientOutage(f"{type(error).__name__}: {error}") from error
        raise
