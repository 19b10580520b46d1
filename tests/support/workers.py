"""Start a real Celery worker process against the test database and the configured broker."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    """A DATABASE_URL naming the database the tests are using right now (the test database)."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(s['NAME']).resolve()}"
    user = s.get("USER") or ""
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


def wait_for(predicate, *, timeout: float = 60.0, interval: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def handed_back(worker: dict, kind: str) -> int:
    """How many rows of job kind `kind` a stopping worker has handed back, by its log. The line is written after the
    hand-back's transaction and the messages it sends (curation/tasks.py), so a row counted here is on the queue
    again; its state alone does not say so: a worker killed between that commit and the send leaves a pending row
    with no message, which only the stall reaper (minutes, in these tests) sends again."""
    lines = re.findall(rf"{re.escape(worker['hostname'])} handed back (\{{.*\}})", worker["log"].read_text())
    return sum(ast.literal_eval(counts).get(kind, 0) for counts in lines)


def _xdist_suffix() -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return f"-{worker}" if worker else ""


def private_queue(kind: str) -> str:
    """A queue name no other test process uses: the xdist workers share one Redis, so a fixed name would let one
    worker's Celery process take (and fail) another's tasks against the wrong test database."""
    return f"{kind}{_xdist_suffix()}-{uuid.uuid4().hex[:8]}"


@contextmanager
def celery_worker(
    *,
    concurrency: int = 1,
    queue: str | None = None,
    log_path: Path | None = None,
    name: str | None = None,
    app: str = "config",
    env: dict[str, str] | None = None,
) -> Iterator[dict]:
    """Run `celery worker` in a subprocess on a private queue; yields {'queue', 'hostname', 'process', 'log'}. The
    worker is called `<queue>@localhost` unless `name` gives it another name (a replacement on another machine; the
    xdist worker's id is added, as the processes share one Redis); `app` names another Celery app module (a test's
    instrumented one) and `env` adds environment variables."""
    from curation.models import WorkerHeartbeat

    queue = queue or private_queue("test")
    hostname = f"{name + _xdist_suffix() if name else queue}@localhost"
    env = {**os.environ, **(env or {}), "DATABASE_URL": test_database_url(), "CELERY_TASK_ALWAYS_EAGER": "false"}
    log_path = log_path or Path(settings.DATA_DIR) / "workers" / f"{hostname.split('@')[0]}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "w")
    command = [
        sys.executable, "-m", "celery", "-A", app, "worker",
        "--pool", "prefork" if concurrency > 1 else "solo", "--concurrency", str(concurrency),
        "-Q", queue, "-n", hostname, "--without-gossip", "--without-mingle", "--loglevel", "INFO",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(
            lambda: process.poll() is not None or WorkerHeartbeat.objects.filter(hostname=hostname).exists(),
            timeout=90,
            what="the worker's first heartbeat",
        )
        if process.poll() is not None:
            raise AssertionError(f"worker exited early with {process.returncode}; see {log.name}")
        yield {"queue": queue, "hostname": hostname, "process": process, "log": log_path}
    finally:
        # Killed outright: the test is done with the worker, and a warm shutdown would cost it seconds (the
        # consumer drains the broker for 2 s before it looks at the signal, and a prefork pool stops slowly). What a
        # test waits for is written in the step it waits on (a run's results with its "completed"), so nothing is
        # lost. The tests of what a stopping worker does signal it themselves, inside this block.
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait()
        log.close()
