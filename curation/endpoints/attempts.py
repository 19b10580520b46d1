"""One HTTP attempt of a chat request: the client records them, its results and errors carry them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class AttemptRecord:
    """One HTTP attempt: what came back and how long it took."""

    number: int
    started_at: str
    status: int | None
    latency_s: float
    queued_s: float = 0.0
    tokens_in: int | None = None
    tokens_out: int | None = None
    retry_after_s: float | None = None
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form, for storing on a prediction or draft."""
        return asdict(self)
