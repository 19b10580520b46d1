"""The chat-completions client against a fault-injecting local server (and once against the real local model)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from curation.endpoints.client import ChatClient, json_schema_format, parse_retry_after
from curation.endpoints.config import EndpointConfig
from curation.endpoints.errors import (
    EndpointBadRequest,
    EndpointConfigError,
    EndpointMalformedResponse,
    EndpointRetriesExhausted,
    EndpointUnauthorized,
)
from curation.endpoints.limits import (
    FileConcurrencyLimiter,
    RedisConcurrencyLimiter,
    RedisRateLimiter,
    SlotTimeout,
    ThreadRateLimiter,
    redis_client,
)
from tests.support.endpoint_load import run_requests
from tests.support.fault_server import (
    FaultServer,
    bad_request,
    malformed,
    ok,
    rate_limited,
    server_error,
    slow,
    unauthorized,
)

REDIS_URL = os.environ.get("REDIS_URL")
needs_redis = pytest.mark.skipif(not REDIS_URL, reason="REDIS_URL is unset; the shared semaphore needs Redis")

MESSAGES = [{"role": "user", "content": "What is 2 + 3?"}]


class SleepRecorder:
    """Stands in for time.sleep so retry waits are asserted, not waited for."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def server():
    with FaultServer() as fault_server:
        yield fault_server


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


def make_client(server: FaultServer, sleeps: SleepRecorder | None = None, **overrides) -> ChatClient:
    settings = {
        "base_url": server.base_url,
        "model": "fault-model",
        "identity_key": f"test-{uuid.uuid4().hex}",
        "max_attempts": 4,
        "timeout_s": 5.0,
        "backoff_initial_s": 0.05,
        "backoff_max_s": 0.2,
        **overrides,
    }
    kwargs = {"sleep": sleeps} if sleeps is not None else {}
    return ChatClient(EndpointConfig(**settings), **kwargs)


# --- success and request shape ---


def test_success_returns_text_usage_and_one_attempt(server, sleeps):
    server.script(ok("Answer: 5", prompt_tokens=20, completion_tokens=4))
    result = make_client(server, sleeps).chat(MESSAGES, temperature=0)
    assert result.text == "Answer: 5"
    assert result.usage["prompt_tokens"] == 20 and result.tokens_out == 4
    assert [a.status for a in result.attempts] == [200]
    assert result.attempts[0].tokens_in == 20 and result.attempts[0].tokens_out == 4
    assert result.raw["choices"][0]["message"]["content"] == "Answer: 5"
    assert sleeps.calls == []


def test_default_generation_params_are_sent_and_call_params_override_them(server):
    client = make_client(server, generation_params={"temperature": 0.2, "max_tokens": 64})
    client.chat(MESSAGES, max_tokens=8, seed=3)
    sent = server.requests[-1]
    assert sent["model"] == "fault-model"
    assert (sent["temperature"], sent["max_tokens"], sent["seed"]) == (0.2, 8, 3)
    assert sent["messages"] == MESSAGES


def test_unknown_generation_parameter_is_refused_before_sending(server):
    with pytest.raises(TypeError, match="temprature"):
        make_client(server).chat(MESSAGES, temprature=0)
    assert server.chat_request_count == 0


def test_tools_and_response_format_are_sent_and_tool_calls_parsed(server):
    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
    bad_call = {"id": "call_2", "type": "function", "function": {"name": "add", "arguments": "{a: 2"}}
    server.script(ok(tool_calls=[call, bad_call]))
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    schema = json_schema_format("action", {"type": "object", "properties": {"tool": {"type": "string"}}})
    result = make_client(server).chat(MESSAGES, tools=tools, tool_choice="auto", response_format=schema)
    sent = server.requests[-1]
    assert sent["tools"] == tools and sent["tool_choice"] == "auto"
    assert sent["response_format"]["json_schema"]["schema"]["properties"]["tool"] == {"type": "string"}
    assert result.text == ""
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_1", "add", {"a": 2, "b": 3}),
        ("call_2", "add", None),
    ]
    assert result.tool_calls[1].arguments_raw == "{a: 2"


def test_api_key_is_read_from_the_named_environment_variable(server, monkeypatch):
    monkeypatch.setenv("TATCURATE_TEST_KEY", "sk-test-123")
    make_client(server, api_key_env="TATCURATE_TEST_KEY").chat(MESSAGES)
    assert server.requests[-1]["_headers"]["Authorization"] == "Bearer sk-test-123"


def test_missing_api_key_variable_fails_without_sending(server, monkeypatch):
    monkeypatch.delenv("TATCURATE_MISSING_KEY", raising=False)
    with pytest.raises(EndpointConfigError, match="TATCURATE_MISSING_KEY"):
        make_client(server, api_key_env="TATCURATE_MISSING_KEY").chat(MESSAGES)
    assert server.chat_request_count == 0


# --- retry rules ---


def test_429_waits_for_retry_after_seconds(server, sleeps):
    server.script(rate_limited("3"), ok("done"))
    result = make_client(server, sleeps).chat(MESSAGES)
    assert result.text == "done"
    assert sleeps.calls == [3.0]
    assert [(a.status, a.retry_after_s) for a in result.attempts] == [(429, 3.0), (200, None)]


def test_429_waits_for_retry_after_http_date(server, sleeps):
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server.script(rate_limited(when), ok("done"))
    make_client(server, sleeps).chat(MESSAGES)
    assert len(sleeps.calls) == 1
    assert 25 <= sleeps.calls[0] <= 30


def test_retry_after_is_capped_by_config(server, sleeps):
    server.script(rate_limited("3600"), ok())
    make_client(server, sleeps, max_retry_after_s=7).chat(MESSAGES)
    assert sleeps.calls == [7]


def test_429_without_retry_after_backs_off_with_jitter(server, sleeps):
    server.script(rate_limited(None), rate_limited(None), ok())
    make_client(server, sleeps, backoff_initial_s=1.0, backoff_max_s=10).chat(MESSAGES)
    assert len(sleeps.calls) == 2
    # wait_exponential_jitter: initial * 2**n plus up to `initial` of jitter.
    assert 1.0 <= sleeps.calls[0] <= 2.0
    assert 2.0 <= sleeps.calls[1] <= 3.0


def test_parse_retry_after_accepts_seconds_and_http_dates():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 01 Jan 2025 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Wed, 01 Jan 2025 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 504])
def test_transient_statuses_are_retried(server, sleeps, status):
    server.script(server_error(status), ok("recovered"))
    result = make_client(server, sleeps).chat(MESSAGES)
    assert result.text == "recovered"
    assert [a.status for a in result.attempts] == [status, 200]
    assert len(sleeps.calls) == 1


def test_backoff_grows_and_stays_bounded(server, sleeps):
    server.cycle([server_error(500)])
    with pytest.raises(EndpointRetriesExhausted):
        make_client(server, sleeps, max_attempts=6, backoff_initial_s=0.1, backoff_max_s=0.5).chat(MESSAGES)
    assert len(sleeps.calls) == 5
    assert sleeps.calls[0] <= 0.2 and all(s <= 0.5 for s in sleeps.calls)
    assert sleeps.calls[-1] == 0.5


def test_persistent_500_exhausts_after_max_attempts(server, sleeps):
    server.cycle([server_error(500)])
    with pytest.raises(EndpointRetriesExhausted) as caught:
        make_client(server, sleeps, max_attempts=3).chat(MESSAGES)
    assert server.chat_request_count == 3
    assert [a.status for a in caught.value.attempts] == [500, 500, 500]
    assert "injected 500" in str(caught.value)
    assert not isinstance(caught.value, EndpointMalformedResponse)


def test_timeout_is_retried(server):
    server.script(slow(2.0), ok("fast"))
    result = make_client(server, timeout_s=0.3).chat(MESSAGES)
    assert result.text == "fast"
    assert result.attempts[0].status is None and result.attempts[0].error.startswith("timeout")
    assert result.attempts[1].status == 200


def test_connection_errors_are_retried_then_exhausted(sleeps):
    with FaultServer() as closed:
        base_url = closed.base_url
    client = ChatClient(
        EndpointConfig(base_url=base_url, model="m", max_attempts=3, identity_key=uuid.uuid4().hex), sleep=sleeps
    )
    with pytest.raises(EndpointRetriesExhausted, match="connection error") as caught:
        client.chat(MESSAGES)
    assert len(caught.value.attempts) == 3
    assert all(a.status is None and a.error.startswith("connection") for a in caught.value.attempts)
    assert len(sleeps.calls) == 2


def test_malformed_body_is_retried_as_transient(server, sleeps):
    server.script(malformed(), malformed(b'{"choices": []}'), ok("fine"))
    result = make_client(server, sleeps).chat(MESSAGES)
    assert result.text == "fine"
    assert [a.status for a in result.attempts] == [200, 200, 200]
    assert "malformed" in result.attempts[0].error


def test_malformed_body_every_time_is_a_bounded_malformed_error(server, sleeps):
    server.cycle([malformed(b"<html>gateway</html>")])
    with pytest.raises(EndpointMalformedResponse, match="malformed") as caught:
        make_client(server, sleeps, max_attempts=3).chat(MESSAGES)
    assert server.chat_request_count == 3
    assert len(caught.value.attempts) == 3


def test_401_fails_at_once_with_the_servers_message(server, sleeps, monkeypatch):
    monkeypatch.setenv("TATCURATE_TEST_KEY", "sk-secret-value")
    server.script(unauthorized())
    with pytest.raises(EndpointUnauthorized) as caught:
        make_client(server, sleeps, api_key_env="TATCURATE_TEST_KEY").chat(MESSAGES)
    assert server.chat_request_count == 1 and sleeps.calls == []
    assert "Incorrect API key provided" in str(caught.value)
    assert "TATCURATE_TEST_KEY" in str(caught.value)
    assert "sk-secret-value" not in str(caught.value)
    assert caught.value.status == 401 and len(caught.value.attempts) == 1


@pytest.mark.parametrize("status", [400, 404, 422])
def test_other_4xx_fail_at_once_with_the_servers_message(server, sleeps, status):
    fault = bad_request("maximum context length is 4096 tokens")
    fault.status = status
    server.script(fault)
    with pytest.raises(EndpointBadRequest, match="maximum context length is 4096 tokens") as caught:
        make_client(server, sleeps).chat(MESSAGES)
    assert server.chat_request_count == 1 and sleeps.calls == []
    assert caught.value.status == status


def test_every_attempt_is_recorded_in_order(server, sleeps):
    server.script(rate_limited("2"), server_error(503), ok("ok", prompt_tokens=7, completion_tokens=2))
    result = make_client(server, sleeps).chat(MESSAGES)
    assert [(a.number, a.status, a.retry_after_s) for a in result.attempts] == [
        (1, 429, 2.0),
        (2, 503, None),
        (3, 200, None),
    ]
    assert (result.attempts[-1].tokens_in, result.attempts[-1].tokens_out) == (7, 2)
    assert all(a.latency_s >= 0 for a in result.attempts)
    assert result.attempts[0].as_dict()["status"] == 429


def test_every_attempt_is_logged(server, sleeps, caplog):
    server.script(rate_limited("1"), ok())
    with caplog.at_level(logging.INFO, logger="curation.endpoints.client"):
        make_client(server, sleeps).chat(MESSAGES)
    attempts = [r.attempt for r in caplog.records if hasattr(r, "attempt")]
    assert [(a["status"], a["retry_after_s"]) for a in attempts] == [(429, 1.0), (200, None)]
    messages = [r.getMessage() for r in caplog.records if hasattr(r, "attempt")]
    assert "status=429" in messages[0] and "retry_after=1.0" in messages[0]


# --- cache ---


class DjangoLikeCache:
    """Object with Django's cache get/set signature."""

    def __init__(self) -> None:
        self.store: dict[str, object] = {}
        self.set_calls = 0

    def get(self, key, default=None):
        return self.store.get(key, default)

    def set(self, key, value, timeout=None):
        self.set_calls += 1
        self.store[key] = value


def test_greedy_requests_are_cached(server):
    client = ChatClient(make_client(server).config, cache={})
    first = client.chat(MESSAGES, temperature=0)
    second = client.chat(MESSAGES, temperature=0)
    assert server.chat_request_count == 1
    assert second.is_cached and not first.is_cached
    assert second.text == first.text and second.attempts == []


def test_seeded_requests_are_cached_per_seed(server):
    backend = DjangoLikeCache()
    client = ChatClient(make_client(server).config, cache=backend)
    client.chat(MESSAGES, temperature=0.8, seed=7)
    client.chat(MESSAGES, temperature=0.8, seed=7)
    client.chat(MESSAGES, temperature=0.8, seed=8)
    assert server.chat_request_count == 2
    assert backend.set_calls == 2


def test_sampled_requests_are_never_cached(server):
    backend = DjangoLikeCache()
    client = ChatClient(make_client(server).config, cache=backend)
    client.chat(MESSAGES, temperature=0.7)
    client.chat(MESSAGES, temperature=0.7)
    client.chat(MESSAGES)  # no temperature: the server's default sampling
    assert server.chat_request_count == 3
    assert backend.store == {}


def test_cache_key_covers_messages_tools_params_and_endpoint(server):
    cache: dict = {}
    config = make_client(server).config
    client = ChatClient(config, cache=cache)
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    client.chat(MESSAGES, temperature=0)
    client.chat(MESSAGES, temperature=0, max_tokens=5)
    client.chat(MESSAGES, temperature=0, tools=tools)
    client.chat([{"role": "user", "content": "Other?"}], temperature=0)
    other_endpoint = EndpointConfig(base_url=config.base_url, model="fault-model", identity_key="another")
    ChatClient(other_endpoint, cache=cache).chat(MESSAGES, temperature=0)
    assert server.chat_request_count == 5
    client.chat(MESSAGES, temperature=0, tools=tools)
    assert server.chat_request_count == 5


def test_failures_are_not_cached(server, sleeps):
    server.script(bad_request())
    client = ChatClient(make_client(server).config, cache={}, sleep=sleeps)
    with pytest.raises(EndpointBadRequest):
        client.chat(MESSAGES, temperature=0)
    assert client.chat(MESSAGES, temperature=0).text == "ok"
    assert server.chat_request_count == 2


# --- concurrency and rate limits ---


def test_default_semaphore_never_exceeds_the_limit():
    with FaultServer(latency_s=0.1) as server:
        client = make_client(server, concurrency_limit=3)
        with ThreadPoolExecutor(max_workers=10) as pool:
            list(pool.map(lambda i: client.chat([{"role": "user", "content": str(i)}]), range(24)))
    assert server.chat_request_count == 24
    assert server.max_in_flight == 3


def test_default_semaphore_is_shared_by_clients_of_one_endpoint():
    with FaultServer(latency_s=0.1) as server:
        config = make_client(server, concurrency_limit=2).config
        clients = [ChatClient(config) for _ in range(4)]
        assert isinstance(clients[0].limiter, FileConcurrencyLimiter)
        assert all(c.limiter is clients[0].limiter for c in clients)
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda i: clients[i % 4].chat(MESSAGES), range(16)))
    assert server.max_in_flight == 2


def test_rate_limiter_waits_for_the_window():
    now = [100.0]
    waits: list[float] = []

    def fake_sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    limiter = ThreadRateLimiter(2, window_s=60, clock=lambda: now[0], sleep=fake_sleep)
    limiter.acquire()
    now[0] += 10
    limiter.acquire()
    limiter.acquire()
    assert waits == [50.0]


@pytest.mark.redis
@needs_redis
def test_redis_semaphore_holds_across_processes():
    identity = f"test-sem-{uuid.uuid4().hex}"
    context = multiprocessing.get_context("spawn")
    with FaultServer(latency_s=0.1) as server, context.Pool(3) as pool:
        start_at = time.time() + 1.5
        jobs = [
            pool.apply_async(
                run_requests,
                kwds={
                    "base_url": server.base_url,
                    "identity_key": identity,
                    "concurrency_limit": 3,
                    "requests": 10,
                    "threads": 4,
                    "redis_url": REDIS_URL,
                    "start_at": start_at,
                },
            )
            for _ in range(3)
        ]
        for job in jobs:
            job.get(timeout=60)  # each process's report; the server's counts are what is asserted
    assert server.chat_request_count == 30
    assert server.max_in_flight <= 3
    # Each process alone could have used all 3 slots; the shared limit shows in the server's count.
    assert server.max_in_flight == 3


def test_file_semaphore_holds_across_processes(tmp_path):
    identity = f"test-file-sem-{uuid.uuid4().hex}"
    context = multiprocessing.get_context("spawn")
    with FaultServer(latency_s=0.1) as server, context.Pool(3) as pool:
        start_at = time.time() + 1.5
        jobs = [
            pool.apply_async(
                run_requests,
                kwds={
                    "base_url": server.base_url,
                    "identity_key": identity,
                    "concurrency_limit": 2,
                    "requests": 8,
                    "threads": 3,
                    "slot_dir": str(tmp_path),
                    "start_at": start_at,
                },
            )
            for _ in range(3)
        ]
        for job in jobs:
            job.get(timeout=60)  # each process's report; the server's counts are what is asserted
    assert server.chat_request_count == 24
    # Each process alone would have used 2 slots (3 processes: up to 6 at once); the lock files hold the sum to 2.
    assert server.max_in_flight == 2


def _hold_file_slots(slot_dir: str, identity: str, limit: int, ready: multiprocessing.Event) -> None:
    limiter = FileConcurrencyLimiter(slot_dir, identity, limit)
    for _ in range(limit):
        assert limiter.try_acquire() is not None
    ready.set()
    time.sleep(60)


def test_file_semaphore_frees_the_slots_of_a_killed_process_and_times_out_while_full(tmp_path):
    identity = f"test-file-kill-{uuid.uuid4().hex}"
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_hold_file_slots, args=(str(tmp_path), identity, 2, ready))
    holder.start()
    try:
        assert ready.wait(30)
        limiter = FileConcurrencyLimiter(tmp_path, identity, 2)
        with pytest.raises(SlotTimeout):
            with limiter.slot(timeout_s=0.3):
                pass
        os.kill(holder.pid, signal.SIGKILL)
        holder.join(10)
        with limiter.slot(timeout_s=5), limiter.slot(timeout_s=5):
            assert limiter.try_acquire() is None  # both slots are ours now, a third is refused
    finally:
        if holder.is_alive():
            holder.kill()


def test_file_semaphore_excludes_threads_of_one_process(tmp_path):
    limiter = FileConcurrencyLimiter(tmp_path, "threads", 2)
    holding = 0
    peak = 0
    lock = threading.Lock()

    def work(_: int) -> None:
        nonlocal holding, peak
        with limiter.slot(timeout_s=10):
            with lock:
                holding += 1
                peak = max(peak, holding)
            time.sleep(0.02)
            with lock:
                holding -= 1

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(work, range(24)))
    assert peak == 2


def test_file_semaphore_serves_waiting_threads_before_one_that_just_gave_its_slot_back(tmp_path):
    limiter = FileConcurrencyLimiter(tmp_path, "fair", 1)
    order: list[str] = []
    held = limiter.acquire(timeout_s=1)

    def wait_for_a_slot() -> None:
        with limiter.slot(timeout_s=10):
            order.append("waiter")

    waiter = threading.Thread(target=wait_for_a_slot)
    waiter.start()
    time.sleep(0.2)  # the waiter is polling now
    os.close(held)
    with limiter.slot(timeout_s=10):  # asking again at once: it must queue behind the waiter
        order.append("releaser")
    waiter.join(10)
    assert order == ["waiter", "releaser"]


def _hold_all_slots(redis_url: str, identity: str, limit: int, ready: multiprocessing.Event) -> None:
    limiter = RedisConcurrencyLimiter(redis_client(redis_url), identity, limit, lease_s=1.0)
    for _ in range(limit):
        limiter.acquire(timeout_s=5)
    ready.set()
    time.sleep(60)


@pytest.mark.redis
@needs_redis
def test_redis_semaphore_recovers_slots_of_a_killed_process():
    identity = f"test-lease-{uuid.uuid4().hex}"
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_hold_all_slots, args=(REDIS_URL, identity, 2, ready))
    holder.start()
    try:
        assert ready.wait(30)
        limiter = RedisConcurrencyLimiter(redis_client(REDIS_URL), identity, 2, lease_s=1.0)
        assert limiter.try_acquire() is None
        time.sleep(1.5)
        # The holder is alive and renews its leases, so the slots stay taken past the lease time.
        assert limiter.try_acquire() is None
        os.kill(holder.pid, signal.SIGKILL)
        holder.join(10)
        token = limiter.acquire(timeout_s=10)
        assert token is not None
        limiter.release(token)
    finally:
        if holder.is_alive():
            holder.kill()


@pytest.mark.redis
@needs_redis
def test_redis_semaphore_release_wakes_a_waiter_promptly():
    identity = f"test-wake-{uuid.uuid4().hex}"
    first = RedisConcurrencyLimiter(redis_client(REDIS_URL), identity, 1)
    second = RedisConcurrencyLimiter(redis_client(REDIS_URL), identity, 1)
    token = first.acquire(timeout_s=1)
    got: list[str] = []
    waiter = threading.Thread(target=lambda: got.append(second.acquire(timeout_s=10)))
    waiter.start()
    time.sleep(0.2)
    assert got == []
    first.release(token)
    waiter.join(10)
    assert len(got) == 1 and second.holders() == 1
    second.release(got[0])
    assert second.holders() == 0


@pytest.mark.redis
@needs_redis
def test_redis_rate_limiter_is_shared_between_limiters():
    identity = f"test-rate-{uuid.uuid4().hex}"
    waits: list[float] = []

    def recording_sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    first = RedisRateLimiter(redis_client(REDIS_URL), identity, 2, window_s=0.5, sleep=recording_sleep)
    second = RedisRateLimiter(redis_client(REDIS_URL), identity, 2, window_s=0.5, sleep=recording_sleep)
    first.acquire()
    second.acquire()
    assert waits == []
    first.acquire()
    assert len(waits) >= 1 and 0 < waits[0] <= 0.6


@pytest.mark.redis
@needs_redis
def test_client_with_redis_url_uses_the_redis_semaphore(server):
    client = make_client(server, concurrency_limit=2)
    shared = ChatClient(client.config, redis_url=REDIS_URL)
    assert isinstance(client.limiter, FileConcurrencyLimiter) and isinstance(shared.limiter, RedisConcurrencyLimiter)
    assert shared.chat(MESSAGES).text == "ok"


# --- the real local model ---


@pytest.mark.model
def test_local_smollm2_answers_a_real_request():
    from curation.endpoints.local_model import MODEL_NAME, endpoint_config
    from tests.support.local_model import local_model_port

    port = local_model_port()
    client = ChatClient(endpoint_config(port, identity_key=f"test-local-{uuid.uuid4().hex}"))
    result = client.chat(
        [{"role": "user", "content": "What is the capital of France? Answer in one word."}],
        max_tokens=16,
    )
    assert result.text.strip()
    assert result.tokens_out and result.tokens_out > 0
    assert result.raw["model"] == MODEL_NAME
    assert [a.status for a in result.attempts] == [200]


@pytest.mark.model
def test_local_smollm2_serves_parallel_slots_each_with_the_full_context():
    import httpx

    from curation.endpoints.local_model import DEFAULT_CONTEXT, DEFAULT_PARALLEL, endpoint_config
    from tests.support.local_model import local_model_port, local_model_url

    props = httpx.get(local_model_url().removesuffix("/v1") + "/props", timeout=10).json()
    assert DEFAULT_PARALLEL >= 2 and props["total_slots"] == DEFAULT_PARALLEL
    assert props["default_generation_settings"]["n_ctx"] == DEFAULT_CONTEXT
    # The endpoint's limit matches the slots, so no request waits inside the server for a slot.
    assert endpoint_config(local_model_port()).concurrency_limit == DEFAULT_PARALLEL
