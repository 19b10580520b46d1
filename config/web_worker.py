"""The gunicorn worker of the web tier: an event loop parses requests, so idle or slow clients hold no thread.

A thread (Django's sync views under ASGI) is committed only once a request's headers and body have fully
arrived. A connection that has not completed its request headers within TATCURATE_HEADER_TIMEOUT_S of
opening (or of its previous response) is closed, like nginx's client_header_timeout; an idle kept-alive
connection is closed after gunicorn's --keep-alive seconds.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn_worker import UvicornWorker


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's headers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from django.conf import settings

        self.header_timeout_s = settings.TATCURATE_HEADER_TIMEOUT_S
        self.header_deadline: asyncio.TimerHandle | None = None
        self.awaited_after: object | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.header_deadline is not None:
            self.header_deadline.cancel()
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        if self.header_deadline is not None:
            self.header_deadline.cancel()
        # The cycle at arming time; a request whose headers complete replaces it with a new cycle.
        self.awaited_after = self.cycle
        self.header_deadline = self.loop.call_later(self.header_timeout_s, self._header_deadline_passed)

    def _header_deadline_passed(self) -> None:
        self.header_deadline = None
        no_new_request = self.cycle is self.awaited_after or (self.cycle is not None and self.cycle.response_complete)
        if no_new_request and not self.transport.is_closing():
            self.transport.close()


class WebWorker(UvicornWorker):
    """gunicorn worker class: asyncio loop, h11 parser with a header deadline, Django through config.asgi."""

    CONFIG_KWARGS = {"loop": "asyncio", "http": HeaderDeadlineProtocol, "lifespan": "off"}
