"""Domain errors of the endpoint client; each message is fit to show on a run and a prediction."""

from __future__ import annotations

from curation.endpoints.attempts import AttemptRecord


class EndpointError(Exception):
    """Base class: a chat request could not produce a usable answer."""

    def __init__(self, message: str, *, attempts: list[AttemptRecord] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.attempts: list[AttemptRecord] = list(attempts or [])


class EndpointConfigError(EndpointError):
    """The endpoint is misconfigured (bad URL, missing API-key variable, invalid limits)."""


class EndpointRequestRejected(EndpointError):
    """The server refused the request with a 4xx that retrying cannot fix."""

    def __init__(
        self, message: str, *, status: int, server_message: str, attempts: list[AttemptRecord] | None = None
    ) -> None:
        super().__init__(message, attempts=attempts)
        self.status = status
        self.server_message = server_message


class EndpointUnauthorized(EndpointRequestRejected):
    """401/403: the API key is missing, wrong or lacks access."""


class EndpointBadRequest(EndpointRequestRejected):
    """Any other non-retryable 4xx (bad parameters, unknown model, context too long, …)."""


class EndpointRetriesExhausted(EndpointError):
    """Every attempt failed with a transient error (429, 5xx, timeout, connection, malformed body)."""


class EndpointMalformedResponse(EndpointRetriesExhausted):
    """The last attempts returned a body that is not an OpenAI-shaped chat completion."""


class EndpointBusy(EndpointError):
    """No concurrency slot became free within the endpoint's queue timeout."""
