"""A Celery app for worker tests (`celery -A tests.support.stuck_pool_worker`): the held-cut worker
(tests/support/held_cut_worker.py) whose prefork pool never finishes stopping, as billiard 4.3.2's pool.stop() can
deadlock under load (its task handler waiting for the pool's inqueue lock while a child waits for the outqueue lock
in _do_exit). A fault injected for one test: that a cold shutdown hands the worker's rows back even so."""

from __future__ import annotations

import time

from celery.concurrency import prefork

from tests.support.held_cut_worker import app

__all__ = ["app"]


def _never_stops(self) -> None:
    while True:
        time.sleep(1)


prefork.TaskPool.on_stop = _never_stops
