"""Concurrency and request-rate limits per endpoint: the concurrency limit is shared through Redis across machines,
else through lock files across the processes of one machine (the embedded defaults); the rate limit through Redis,
else per process."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import random
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from curation.transient import transient_call

logger = logging.getLogger(__name__)

KEY_PREFIX = "tatcurate:endpoint"

# Sliding window of members scored by Redis server time (so clocks of different machines never matter): members
# older than the window are dropped first, then a new member is admitted while fewer than the limit remain. Returns
# '0' when admitted, else the seconds until the oldest member leaves. The lease-based counting semaphore uses it with
# its lease as the window and renews the scores of the slots it holds, so a killed process's slots are freed once
# their lease runs out; the requests-per-minute limit uses it with its window.
_ADMIT_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('EXPIRE', KEYS[1], math.ceil(window) + tonumber(ARGV[4]))
  return '0'
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return tostring(tonumber(oldest[2]) + window - now)
"""

_RENEW_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local renewed = 0
for i, token in ipairs(ARGV) do
  if i > 1 and redis.call('ZSCORE', KEYS[1], token) then
    redis.call('ZADD', KEYS[1], now, token)
    renewed = renewed + 1
  end
end
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[1])) + 60)
return renewed
"""

_RELEASE_LUA = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], '1')
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
redis.call('EXPIRE', KEYS[2], 60)
return 1
"""


class SlotTimeout(Exception):
    """No slot was free before the deadline."""


class RateLimiter(Protocol):
    """Admits at most `max_requests` per `window_s`; `acquire` blocks until admitted."""

    def acquire(self) -> None: ...


def _namespaced(identity: str, suffix: str) -> str:
    digest = hashlib.sha256(identity.encode()).hexdigest()[:20]
    return f"{KEY_PREFIX}:{digest}:{suffix}"


class ConcurrencyLimiter:
    """A counting semaphore of `limit` slots shared by processes. A slot is taken by `acquire` (which returns what
    `release` needs back); `slot` holds one for the duration of a block."""

    limit: int

    def acquire(self, timeout_s: float | None = None) -> Any:
        raise NotImplementedError

    def release(self, held: Any) -> None:
        raise NotImplementedError

    def _timed_out(self, timeout_s: float | None) -> SlotTimeout:
        return SlotTimeout(f"no free slot of {self.limit} within {timeout_s}s")

    @contextlib.contextmanager
    def slot(self, timeout_s: float | None = None) -> Iterator[None]:
        """Hold one of `limit` slots for the duration of the block."""
        held = self.acquire(timeout_s)
        try:
            yield
        finally:
            self.release(held)


class FileConcurrencyLimiter(ConcurrencyLimiter):
    """Counting semaphore shared by every process of one machine: `limit` slot files, each held with an
    exclusive flock. The kernel drops a dead process's locks, so a killed worker never keeps a slot; flock
    locks belong to the open file, so threads of one process exclude each other too. Waiting threads of a
    process line up first-come first-served and only the first polls the files, so a thread that has just
    given a slot back cannot take it again ahead of others."""

    def __init__(self, directory: str | Path, identity: str, limit: int, *, poll_s: float = 0.02) -> None:
        self.limit = limit
        self.poll_s = poll_s
        self.directory = Path(directory) / hashlib.sha256(identity.encode()).hexdigest()[:20]
        self.directory.mkdir(parents=True, exist_ok=True)
        self._line: deque[object] = deque()
        self._line_changed = threading.Condition()

    def try_acquire(self) -> int | None:
        """Lock a free slot file without waiting; return its descriptor, or None when all are held."""
        for index in random.sample(range(self.limit), self.limit):
            descriptor = os.open(self.directory / f"slot-{index}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(descriptor)
                continue
            return descriptor
        return None

    def acquire(self, timeout_s: float | None = None) -> int:
        """Wait in this process's line, then poll the slot files; return the locked file's descriptor."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        place = object()
        with self._line_changed:
            self._line.append(place)
        try:
            while True:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise self._timed_out(timeout_s)
                with self._line_changed:
                    if self._line[0] is not place:
                        self._line_changed.wait(timeout=remaining)
                        continue
                descriptor = self.try_acquire()
                if descriptor is not None:
                    return descriptor
                # Jitter keeps the first waiters of different processes from polling in step.
                time.sleep(self.poll_s * random.uniform(0.5, 1.5))
        finally:
            with self._line_changed:
                self._line.remove(place)
                self._line_changed.notify_all()

    def release(self, held: int) -> None:
        """Close the slot file: closing it releases its lock."""
        os.close(held)


class RedisConcurrencyLimiter(ConcurrencyLimiter):
    """Counting semaphore shared by all processes using the same Redis, with lease expiry."""

    def __init__(self, client: Any, identity: str, limit: int, *, lease_s: float = 30.0) -> None:
        self.limit = limit
        self.lease_s = lease_s
        self._redis = client
        self._slots_key = _namespaced(identity, "slots")
        self._wake_key = _namespaced(identity, "wake")
        self._admit = client.register_script(_ADMIT_LUA)
        self._renew = client.register_script(_RENEW_LUA)
        self._release = client.register_script(_RELEASE_LUA)
        self._held: set[str] = set()
        self._held_lock = threading.Lock()
        self._heartbeat: threading.Thread | None = None

    def try_acquire(self) -> str | None:
        """Take a slot without waiting; return its token, or None when all are taken."""
        token = uuid.uuid4().hex
        wait = transient_call(self._admit, keys=[self._slots_key], args=[self.limit, self.lease_s, token, 60])
        if float(wait) <= 0:
            with self._held_lock:
                self._held.add(token)
                self._start_heartbeat()
            return token
        return None

    def release(self, token: str) -> None:
        """Give a slot back and wake one waiter."""
        with self._held_lock:
            self._held.discard(token)
        transient_call(self._release, keys=[self._slots_key, self._wake_key], args=[token, self.limit])

    def acquire(self, timeout_s: float | None = None) -> str:
        """Wait for a slot; waiters sleep on a wake-up list so a freed slot is taken within milliseconds."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            token = self.try_acquire()
            if token is not None:
                return token
            wait = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
            if wait <= 0:
                raise self._timed_out(timeout_s)
            # The timed BLPOP also covers slots freed by lease expiry, which push no wake-up.
            transient_call(self._redis.blpop, [self._wake_key], timeout=max(wait, 0.01))

    def holders(self) -> int:
        """How many slots are taken right now (including not-yet-expired stale leases)."""
        return int(self._redis.zcard(self._slots_key))

    def _start_heartbeat(self) -> None:
        if self._heartbeat is None or not self._heartbeat.is_alive():
            self._heartbeat = threading.Thread(target=self._renew_forever, name="endpoint-slot-lease", daemon=True)
            self._heartbeat.start()

    def _renew_forever(self) -> None:
        while True:
            time.sleep(self.lease_s / 3)
            with self._held_lock:
                tokens = list(self._held)
            if not tokens:
                continue
            try:
                renewed = self._renew(keys=[self._slots_key], args=[self.lease_s, *tokens])
            except Exception:
                logger.warning("could not renew endpoint slot leases", exc_info=True)
                continue
            if renewed < len(tokens):
                logger.warning("%d endpoint slot lease(s) expired while held", len(tokens) - renewed)


class ThreadRateLimiter:
    """Per-process sliding-window limit of requests per window."""

    def __init__(
        self,
        max_requests: int,
        window_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.max_requests = max_requests
        self.window_s = window_s
        self._clock = clock
        self._sleep = sleep
        self._admitted: deque[float] = deque()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Block until one more request fits into the window."""
        while True:
            with self._lock:
                now = self._clock()
                while self._admitted and self._admitted[0] <= now - self.window_s:
                    self._admitted.popleft()
                if len(self._admitted) < self.max_requests:
                    self._admitted.append(now)
                    return
                wait = self._admitted[0] + self.window_s - now
            self._sleep(max(wait, 0.001))


class RedisRateLimiter:
    """Sliding-window limit of requests per window, shared by all processes using the same Redis."""

    def __init__(
        self,
        client: Any,
        identity: str,
        max_requests: int,
        window_s: float = 60.0,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.max_requests = max_requests
        self.window_s = window_s
        self._key = _namespaced(identity, "rate")
        self._admit = client.register_script(_ADMIT_LUA)
        self._sleep = sleep

    def acquire(self) -> None:
        """Block until one more request fits into the shared window."""
        while True:
            args = [self.max_requests, self.window_s, uuid.uuid4().hex, 1]
            wait = float(transient_call(self._admit, keys=[self._key], args=args))
            if wait <= 0:
                return
            # Jitter spreads processes that were all told the same instant.
            self._sleep(wait + random.uniform(0, 0.05))


# One limiter per (backend, endpoint, limit) in a process, so clients built per task share pools and heartbeats; and
# one Redis client per URL, keyed ("redis", URL, 0).
_limiters: dict[tuple[str, str, int], Any] = {}
_registry_lock = threading.RLock()


def _registered(key: tuple[str, str, int], build: Callable[[], Any]) -> Any:
    with _registry_lock:
        if key not in _limiters:
            _limiters[key] = build()
        return _limiters[key]


def redis_client(redis_url: str) -> Any:
    """A redis-py client for `redis_url`, one per URL and process (imported lazily: Redis is optional)."""
    import redis

    return _registered(
        ("redis", redis_url, 0),
        lambda: redis.Redis.from_url(redis_url, socket_timeout=10, socket_connect_timeout=5, health_check_interval=30),
    )


def concurrency_limiter_for(
    identity: str, limit: int, *, redis_url: str | None = None, slot_dir: str | Path | None = None
) -> ConcurrencyLimiter:
    """The endpoint's semaphore: shared through Redis when `redis_url` is given, else through lock files under
    `slot_dir` (by default in the temporary directory), by every process of this machine."""
    if redis_url:
        return _registered(
            (f"slots:{redis_url}", identity, limit),
            lambda: RedisConcurrencyLimiter(redis_client(redis_url), identity, limit),
        )
    slot_dir = slot_dir or Path(tempfile.gettempdir()) / f"tatcurate-endpoint-slots-{os.getuid()}"
    return _registered(
        (f"slots:file:{slot_dir}", identity, limit), lambda: FileConcurrencyLimiter(slot_dir, identity, limit)
    )


def rate_limiter_for(identity: str, requests_per_minute: int, *, redis_url: str | None = None) -> RateLimiter:
    """The endpoint's requests-per-minute limit: shared through Redis when `redis_url` is given."""
    if redis_url:
        return _registered(
            (f"rate:{redis_url}", identity, requests_per_minute),
            lambda: RedisRateLimiter(redis_client(redis_url), identity, requests_per_minute),
        )
    return _registered(("rate:process", identity, requests_per_minute), lambda: ThreadRateLimiter(requests_per_minute))
