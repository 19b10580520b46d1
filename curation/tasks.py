"""Celery tasks of the core (thin: ids in, one service call), and the worker signals that hand back its claims."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable

from billiard.common import REMAP_SIGTERM
from celery import shared_task
from celery.signals import worker_ready, worker_shutdown, worker_shutting_down
from django.db import connection
from kombu.common import ignore_errors

from curation.jobs import jobs_reap, jobs_release_for_worker

logger = logging.getLogger(__name__)


@shared_task(name="curation.jobs_reap", acks_late=True)
def jobs_reap_task() -> dict[str, int]:
    """Reap the stalled rows of every job kind (beat runs this every heartbeat interval)."""
    return jobs_reap()


def _hand_back(hostname: str) -> None:
    counts = jobs_release_for_worker(worker=hostname)
    handed_back = {kind: count for kind, count in counts.items() if count > 0}
    if handed_back:
        logger.info("%s handed back %s", hostname, handed_back)


@worker_ready.connect
@worker_shutdown.connect
def _hand_back_own_claims(sender: object = None, **kwargs: object) -> None:
    """A worker that starts again under its old name (kill -9, OOM, a restart) hands back at once the rows its dead
    incarnation held, of every kind, instead of leaving them to the stall reaper; one that has shut down hands back
    whatever it still holds."""
    hostname = getattr(sender, "hostname", "") or ""
    if hostname:
        _hand_back(hostname)


# After the first hand-back of a cold shutdown, again at these seconds: a pool child dies when its blocking call
# returns, and until then its other lanes may claim a row the first pass freed.
HAND_BACK_AGAIN_AFTER_S = (1.0, 3.0, 10.0, 30.0)


def _hand_back_from_signal_handler(
    hostname: str, *, first_after: float = 0.0, again_after: tuple[float, ...] = ()
) -> None:
    """Hand back from inside a signal handler: on a thread with its own connection (the main thread may be anywhere,
    a transaction included), whose first pass, `first_after` seconds on, is waited for at most 10 s more; the passes
    `again_after` go on behind (a daemon thread: an exit ends them, after worker_shutdown's own hand-back)."""
    first_pass = threading.Event()

    def hand_back() -> None:
        try:
            time.sleep(first_after)
            _hand_back(hostname)
            first_pass.set()
            waited = 0.0
            for at in again_after:
                time.sleep(at - waited)
                waited = at
                _hand_back(hostname)
        finally:
            first_pass.set()
            connection.close()

    threading.Thread(target=hand_back, name="hand-back", daemon=True).start()
    first_pass.wait(timeout=first_after + 10)


def _fetch_in_flight_s(consumer: object) -> float:
    """How long a message sent now may still be taken by this worker's last fetch, its consumer cancelled: kombu's
    Redis transport keeps one BRPOP waiting `brpop_timeout` seconds (1), and a stopping worker never reads its reply,
    so a task sent again inside that second would be lost in it. No wait on a broker without one."""
    transport = getattr(getattr(consumer, "connection", None), "transport", None)
    waits = float(getattr(transport, "brpop_timeout", 0) or 0)
    return waits + 0.25 if waits else 0.0


@worker_shutting_down.connect
def _hand_back_on_cold_shutdown(sender: object = None, how: str = "", **kwargs: object) -> None:
    """A cold shutdown abandons the tasks in progress (a warm one lets them finish): their rows are handed back now
    (a second Ctrl+C comes this way; SIGQUIT has handed them back already, below)."""
    if how == "Cold" and sender:
        _hand_back_from_signal_handler(str(sender))


@worker_ready.connect
def _hand_back_first_on_cold_shutdown(sender: object = None, **kwargs: object) -> None:
    """SIGQUIT hands the worker's rows back before Celery's own cold-shutdown handler runs. That handler stops the
    pool first and sends worker_shutting_down after, and under load billiard's pool.stop() can deadlock (its task
    handler waiting for the pool's inqueue lock while a child waits in _do_exit for the outqueue lock, billiard
    4.3.2): the worker then never exits and never handed back, leaving its rows to the stall reaper. Handed back
    first, a row whose task is still running is freed at once; that task's late writes are refused by its token."""
    hostname = getattr(sender, "hostname", "") or ""
    if not hostname or threading.current_thread() is not threading.main_thread():
        return
    consumer = sender
    main_pid = os.getpid()  # a pool child forked later inherits the handler, and must not hand back the worker's
    for signum in [signal.SIGQUIT] + ([signal.SIGTERM] if REMAP_SIGTERM == "SIGQUIT" else []):
        celery_handler = signal.getsignal(signum)
        if not callable(celery_handler) or getattr(celery_handler, "hands_back_first", False):
            continue

        def hand_back_then_celery(number: int, frame: object, celery_handler: Callable = celery_handler) -> None:
            if os.getpid() == main_pid:
                # Stop taking messages first (Celery's handler does the same, later): a task the hand-back sends
                # again must reach another worker, not sit unacknowledged in this one until the broker's timeout.
                task_consumer = getattr(consumer, "task_consumer", None)
                if task_consumer is not None:
                    ignore_errors(consumer, task_consumer.cancel)
                _hand_back_from_signal_handler(
                    hostname, first_after=_fetch_in_flight_s(consumer), again_after=HAND_BACK_AGAIN_AFTER_S
                )
            celery_handler(number, frame)

        hand_back_then_celery.hands_back_first = True  # type: ignore[attr-defined]
        signal.signal(signum, hand_back_then_celery)


# autodiscover_tasks() imports only `<app>.tasks`; the drafting and release tasks live in their own packages.
import curation.datasets.tasks  # noqa: E402
import curation.drafting.tasks  # noqa: E402
import curation.papers.tasks  # noqa: E402
import curation.releases.tasks  # noqa: E402
import curation.webhooks.tasks  # noqa: E402,F401
