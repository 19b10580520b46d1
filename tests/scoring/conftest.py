"""Fixtures of the scoring tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def sent(monkeypatch):
    """Tasks the services send, recorded instead of reaching the shared broker."""
    from scoring.runs import tasks

    messages: list[dict] = []
    monkeypatch.setattr(tasks.run_chunk_task, "apply_async", lambda *a, **k: messages.append(k))
    return messages
