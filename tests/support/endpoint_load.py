"""Load generator for the endpoint client: threads in one process, importable by spawned worker processes."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from curation.endpoints.client import ChatClient
from curation.endpoints.config import EndpointConfig


def run_requests(
    *,
    base_url: str,
    identity_key: str,
    concurrency_limit: int,
    requests: int,
    threads: int,
    redis_url: str | None = None,
    slot_dir: str | None = None,
    start_at: float | None = None,
) -> dict[str, Any]:
    """Send `requests` chats through one shared client from `threads` threads; report timings and holders."""
    config = EndpointConfig(
        base_url=base_url,
        model="fault-model",
        identity_key=identity_key,
        concurrency_limit=concurrency_limit,
        max_attempts=3,
        backoff_initial_s=0.01,
        timeout_s=30,
    )
    client = ChatClient(config, redis_url=redis_url, slot_dir=slot_dir)
    holding = 0
    max_holding = 0
    lock = threading.Lock()
    original_slot = client.limiter.slot

    def counting_slot(timeout_s: float | None = None) -> Any:
        # Wraps the limiter so this process can report how many slots it held at once.
        import contextlib

        @contextlib.contextmanager
        def held() -> Any:
            nonlocal holding, max_holding
            with original_slot(timeout_s):
                with lock:
                    holding += 1
                    max_holding = max(max_holding, holding)
                try:
                    yield
                finally:
                    with lock:
                        holding -= 1

        return held()

    client.limiter.slot = counting_slot  # type: ignore[method-assign]
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    started = time.time()

    def one(index: int) -> float:
        result = client.chat([{"role": "user", "content": f"request {index}"}], temperature=0.7)
        return result.latency_s

    with ThreadPoolExecutor(max_workers=threads) as pool:
        latencies = list(pool.map(one, range(requests)))
    finished = time.time()
    client.close()
    return {
        "started": started,
        "finished": finished,
        "latencies": latencies,
        "max_holding": max_holding,
    }
