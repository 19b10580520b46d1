"""The one chat-completions client: bounded retries, shared concurrency limit, rate limit, cache."""

from __future__ import annotations

import contextlib
import email.utils
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import tenacity
from django.template.defaultfilters import pluralize

from curation.endpoints.attempts import AttemptRecord
from curation.endpoints.cache import CacheBackend, ResponseCache, cache_key, is_deterministic
from curation.endpoints.config import GENERATION_PARAM_NAMES, EndpointConfig
from curation.endpoints.errors import (
    EndpointBadRequest,
    EndpointBusy,
    EndpointError,
    EndpointMalformedResponse,
    EndpointRetriesExhausted,
    EndpointUnauthorized,
)
from curation.endpoints.limits import (
    RateLimiter,
    SlotTimeout,
    concurrency_limiter_for,
    rate_limiter_for,
)
from curation.endpoints.outbound import GuardedBackend, OutboundPolicy

logger = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))


@dataclass
class ToolCall:
    """A native tool call; `arguments` is None when the model's argument string is not a JSON object."""

    id: str
    name: str
    arguments_raw: str
    arguments: dict[str, Any] | None


@dataclass
class ChatResult:
    """A successful chat completion with every attempt it took."""

    text: str
    tool_calls: list[ToolCall]
    usage: dict[str, int]
    attempts: list[AttemptRecord]
    latency_s: float
    raw: dict[str, Any]
    finish_reason: str | None = None
    is_cached: bool = False
    request_params: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens_in(self) -> int | None:
        """Prompt tokens as reported by the server."""
        return self.usage.get("prompt_tokens")

    @property
    def tokens_out(self) -> int | None:
        """Completion tokens as reported by the server."""
        return self.usage.get("completion_tokens")


class _TransientError(Exception):
    """An attempt failed in a way another attempt may fix."""

    def __init__(self, message: str, *, retry_after_s: float | None = None, is_malformed: bool = False) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.is_malformed = is_malformed


def json_schema_format(name: str, schema: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    """An OpenAI `response_format` asking for output that matches `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date); None when absent or invalid."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


SERVER_MESSAGE_CHARS = 200


def server_message(response: httpx.Response) -> str:
    """The server's own explanation of an error, parsed from an OpenAI-style JSON error and shortened.

    Never the raw body: whatever a host answers (an internal page, a metadata document) is not echoed back.
    """
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body.get("message")))
        if isinstance(error, dict):
            error = error.get("message")
        if isinstance(error, str) and error.strip():
            text = " ".join(error.split())
            return text if len(text) <= SERVER_MESSAGE_CHARS else text[: SERVER_MESSAGE_CHARS - 1] + "…"
    return response.reason_phrase or f"HTTP {response.status_code}"


def parse_completion(body: Any) -> tuple[str, list[ToolCall], dict[str, int], str | None]:
    """Text, tool calls, usage and finish reason of an OpenAI chat-completion body; ValueError if malformed."""
    if not isinstance(body, dict):
        raise ValueError("response body is not a JSON object")
    if "error" in body:
        raise ValueError(f"response carries an error: {str(body['error'])[:300]}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ValueError("first choice has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError("message content is not a string")
    tool_calls = []
    for raw_call in message.get("tool_calls") or []:
        function = raw_call.get("function") if isinstance(raw_call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ValueError("tool call without a function name")
        arguments_raw = function.get("arguments") or ""
        if isinstance(arguments_raw, dict):
            arguments_raw = json.dumps(arguments_raw)
        try:
            arguments = json.loads(arguments_raw) if arguments_raw else {}
        except ValueError:
            arguments = None
        tool_calls.append(
            ToolCall(
                id=str(raw_call.get("id") or ""),
                name=function["name"],
                arguments_raw=arguments_raw,
                arguments=arguments if isinstance(arguments, dict) else None,
            )
        )
    if content is None and not tool_calls:
        raise ValueError("message has neither content nor tool calls")
    usage_raw = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    usage = {k: int(v) for k, v in usage_raw.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return content or "", tool_calls, usage, choices[0].get("finish_reason")


def _chat_result(
    body: dict[str, Any],
    *,
    attempts: list[AttemptRecord],
    started: float,
    params: dict[str, Any],
    is_cached: bool = False,
) -> ChatResult:
    """A completion body (fresh or from the cache) as the result of a call begun at `started` (monotonic)."""
    text, tool_calls, usage, finish_reason = parse_completion(body)
    return ChatResult(
        text=text,
        tool_calls=tool_calls,
        usage=usage,
        attempts=attempts,
        latency_s=time.monotonic() - started,
        raw=body,
        finish_reason=finish_reason,
        is_cached=is_cached,
        request_params=params,
    )


class ChatClient:
    """Calls one endpoint; safe to share between threads."""

    def __init__(
        self,
        config: EndpointConfig,
        *,
        redis_url: str | None = None,
        slot_dir: str | Path | None = None,
        cache: CacheBackend | dict[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        outbound: OutboundPolicy | None = None,
    ) -> None:
        self.config = config
        # Fails closed: without an operator's policy only loopback endpoints are reachable.
        self.outbound = outbound or OutboundPolicy()
        self.limiter = concurrency_limiter_for(
            config.identity, config.concurrency_limit, redis_url=redis_url, slot_dir=slot_dir
        )
        self.rate_limiter: RateLimiter | None = None
        if config.requests_per_minute:
            self.rate_limiter = rate_limiter_for(config.identity, config.requests_per_minute, redis_url=redis_url)
        self.cache = ResponseCache(cache) if cache is not None else None
        self._sleep = sleep
        self._backoff = tenacity.wait_exponential_jitter(
            multiplier=config.backoff_initial_s, max=config.backoff_max_s, jitter=config.backoff_initial_s
        )
        limits = httpx.Limits(max_connections=max(config.concurrency_limit * 2, 10), max_keepalive_connections=None)
        transport = httpx.HTTPTransport(limits=limits)
        # Every new connection's peer address is checked too (httpcore exposes no public hook for it).
        transport._pool._network_backend = GuardedBackend(self.outbound)
        self._http = httpx.Client(
            timeout=httpx.Timeout(config.timeout_s, connect=min(config.connect_timeout_s, config.timeout_s)),
            limits=limits,
            transport=transport,
            follow_redirects=False,
            trust_env=False,  # a proxy from the environment would bypass the peer check
        )

    def close(self) -> None:
        """Close pooled connections."""
        self._http.close()

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        **params: Any,
    ) -> ChatResult:
        """Send one chat request (retrying transient failures); raise an EndpointError when no answer came."""
        unknown = set(params) - GENERATION_PARAM_NAMES
        if unknown:
            raise TypeError(f"unknown generation parameters: {', '.join(sorted(unknown))}")
        merged = {**self.config.generation_params, **{k: v for k, v in params.items() if v is not None}}
        choices = {"tools": tools or None, "tool_choice": tool_choice, "response_format": response_format}
        payload: dict[str, Any] = {"model": self.config.model, "messages": messages, **merged}
        payload.update((name, value) for name, value in choices.items() if value is not None)
        options = {**merged, "tool_choice": tool_choice, "response_format": response_format}
        started = time.monotonic()

        key = None
        if self.cache is not None and is_deterministic(merged):
            key = cache_key(
                identity=self.config.identity, model=self.config.model, messages=messages, tools=tools, params=options
            )
            cached = self.cache.get(key)
            if cached is not None:
                return _chat_result(cached, attempts=[], started=started, params=merged, is_cached=True)

        self.outbound.check_url(self.config.chat_url)  # before the key is read or anything is sent
        attempts: list[AttemptRecord] = []
        headers = {"Content-Type": "application/json"}
        api_key = self.config.api_key()
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        body_bytes = json.dumps(payload, ensure_ascii=False).encode()

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.config.max_attempts),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(_TransientError),
            sleep=self._sleep,
            reraise=False,
        )
        try:
            body = retrying(self._attempt, body_bytes, headers, attempts)
        except tenacity.RetryError as exhausted:
            last = exhausted.last_attempt.exception()
            error_class = (
                EndpointMalformedResponse
                if isinstance(last, _TransientError) and last.is_malformed
                else EndpointRetriesExhausted
            )
            raise error_class(
                f"{self.config.chat_url} failed {len(attempts)} time{pluralize(len(attempts))}; last error: {last}",
                attempts=attempts,
            ) from last
        except EndpointError as error:
            error.attempts = attempts
            raise

        result = _chat_result(body, attempts=attempts, started=started, params=merged)
        if key is not None and self.cache is not None:
            self.cache.set(key, body)
        return result

    def _wait(self, retry_state: tenacity.RetryCallState) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(error, _TransientError) and error.retry_after_s is not None:
            return min(error.retry_after_s, self.config.max_retry_after_s)
        return self._backoff(retry_state)

    @contextlib.contextmanager
    def _admitted(self) -> Iterator[float]:
        """Hold a concurrency slot (and pass the rate limit) for one attempt; yields seconds spent queueing."""
        queued_from = time.monotonic()
        try:
            with self.limiter.slot(self.config.queue_timeout_s):
                if self.rate_limiter is not None:
                    self.rate_limiter.acquire()
                yield time.monotonic() - queued_from
        except SlotTimeout as timeout:
            raise EndpointBusy(
                f"no free slot of {self.limiter.limit} for {self.config.identity} within {self.config.queue_timeout_s}s"
            ) from timeout

    def _attempt(self, body_bytes: bytes, headers: dict[str, str], attempts: list[AttemptRecord]) -> dict[str, Any]:
        record = AttemptRecord(
            number=len(attempts) + 1, started_at=datetime.now(UTC).isoformat(), status=None, latency_s=0.0
        )
        attempts.append(record)
        try:
            with self._admitted() as queued_s:
                record.queued_s = round(queued_s, 4)
                sent = time.monotonic()
                try:
                    response = self._http.post(self.config.chat_url, content=body_bytes, headers=headers)
                except httpx.TimeoutException as error:
                    record.error = f"timeout: {type(error).__name__}"
                    message = f"timed out after {self.config.timeout_s}s ({type(error).__name__})"
                    raise _TransientError(message) from error
                except httpx.TransportError as error:
                    record.error = f"connection: {error}"
                    raise _TransientError(f"connection error: {error}") from error
                finally:
                    record.latency_s = round(time.monotonic() - sent, 4)
            return self._judge(response, record)
        finally:
            logger.info(
                "endpoint %s attempt %d: status=%s latency=%.3fs queued=%.3fs tokens=%s/%s retry_after=%s %s",
                self.config.identity,
                record.number,
                record.status,
                record.latency_s,
                record.queued_s,
                record.tokens_in,
                record.tokens_out,
                record.retry_after_s,
                record.error,
                extra={"endpoint": self.config.identity, "attempt": record.as_dict()},
            )

    def _judge(self, response: httpx.Response, record: AttemptRecord) -> dict[str, Any]:
        """Classify one response: return its body, raise a transient error, or raise a final domain error."""
        status = record.status = response.status_code
        if not 200 <= status < 300:
            message = server_message(response)
            record.error = message[:300]
            if status in RETRYABLE_STATUSES:
                record.retry_after_s = parse_retry_after(response.headers.get("Retry-After"))
                raise _TransientError(f"HTTP {status}: {record.error}", retry_after_s=record.retry_after_s)
            if status in (401, 403):
                key_hint = f" (key from ${self.config.api_key_env})" if self.config.api_key_env else " (no API key set)"
                raise EndpointUnauthorized(
                    f"{self.config.chat_url} refused the credentials{key_hint}: HTTP {status}: {message}",
                    status=status,
                    server_message=message,
                )
            raise EndpointBadRequest(
                f"{self.config.chat_url} rejected the request: HTTP {status}: {message}",
                status=status,
                server_message=message,
            )
        try:
            body = response.json()
            parse_completion(body)
        except (ValueError, UnicodeDecodeError) as error:
            record.error = f"malformed response: {error}"[:300]
            raise _TransientError(f"malformed response body: {error}", is_malformed=True) from error
        usage = body.get("usage") or {}
        if isinstance(usage, dict):
            record.tokens_in = usage.get("prompt_tokens")
            record.tokens_out = usage.get("completion_tokens")
        return body
