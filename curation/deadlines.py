"""A batch's deadline as people read it: the countdown, whether it is overdue, and overdue batches first.

One rule for every page and the API: a batch is overdue when its deadline has passed and it has not settled
(every instance validated, released or discarded); a settled or closed batch is never overdue.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone


@dataclass(frozen=True)
class DeadlineState:
    at: datetime | None
    seconds_left: int | None  # negative once passed; None without a deadline
    is_overdue: bool
    label: str  # "due in 2 days 3 h", "overdue by 5 h", "" without a deadline
    is_settled: bool = False  # the batch settled or closed: its deadline no longer applies

    @property
    def is_pending(self) -> bool:
        """The batch has a deadline that still applies (ahead, or passed while the work goes on)."""
        return self.at is not None and not self.is_settled

    @property
    def when(self) -> str:
        """The deadline in the configured time zone, named: "2026-12-01 18:00 UTC" ("" without a deadline)."""
        if self.at is None:
            return ""
        local = timezone.localtime(self.at)
        return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"

    @property
    def sort_key(self) -> tuple[int, float]:
        """Overdue first (the most overdue on top), then the nearest deadline, then batches without one."""
        if self.at is None:
            return (2, 0.0)
        return (0 if self.is_overdue else 1, self.at.timestamp())


def duration_words(seconds: float) -> str:
    """A short human duration: "2 days 3 h", "5 h 10 min", "12 min", "less than a minute"."""
    seconds = abs(int(seconds))
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes = rest // 60
    if days:
        return f"{days} day{'s' if days != 1 else ''}" + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    if minutes:
        return f"{minutes} min"
    return "less than a minute"


def deadline_state(batch: Any, *, now: datetime | None = None) -> DeadlineState:
    """The deadline of `batch` (anything with `deadline_at`, `settled_at` and `state`) at `now`."""
    at = getattr(batch, "deadline_at", None)
    if at is None:
        return DeadlineState(None, None, False, "")
    seconds_left = int((at - (now or timezone.now())).total_seconds())
    is_done = getattr(batch, "settled_at", None) is not None or getattr(batch, "state", "") == "closed"
    if is_done:
        return DeadlineState(at, seconds_left, False, "settled", is_settled=True)
    if seconds_left < 0:
        return DeadlineState(at, seconds_left, True, f"overdue by {duration_words(seconds_left)}")
    return DeadlineState(at, seconds_left, False, f"due in {duration_words(seconds_left)}")
