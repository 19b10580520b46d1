"""Transient outages fail nothing (issue 19.4): the same scoring run, undisturbed and disturbed, side by side in one
run, through real Celery workers on a private PostgreSQL cluster and a private Redis (broker, semaphore, cache), so
nothing else on the machine is touched. The disturbed run has its Redis stopped for 5 s, its PostgreSQL restarted
(down for about 3 s) and one of its two scoring workers killed with SIGKILL while it holds a chunk. Prints JSON with
both wall times, the ratio disturbed / undisturbed (target ≤ 2.0), the items scored, duplicate predictions (0), the
model requests asked more than once (at most the killed worker's in-flight ones) and how long the killed worker's
chunk waited before it was taken over.

The model is an in-process fake server with a fixed latency (the one place nothing is injected); the workers are
the production shape of scripts/start: a control worker with the scheduler (the beat reaper), and scoring workers.
`--kind drafting` does the same to an LLM drafting run (two requests a context; each context drafted once).

Usage: python benchmarks/outage.py [--items 300] [--latency 0.5] [--concurrency 2] [--scenario both|disturbed]
       [--kind scoring|drafting] [--keep-logs]   (the workers' logs are kept anyway when a run does not complete)
       [--schema-from URL]   (copy a migrated database's schema rather than migrate the private one: the tests)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import setup_django  # noqa: E402
from _run_jobs import DraftingJob, ScoringJob, Workers  # noqa: E402

from tests.support.private_services import (  # noqa: E402
    PrivatePostgres,
    PrivateRedis,
    free_port,
    postgres_unavailable_reason,
    redis_available,
)

REDIS_OUTAGE_S = 5.0
POSTGRES_DOWN_S = 2.5
FROZEN_SETTLE_S = 0.05


def _query(function, default=None):
    """Read through a database restart: a broken connection is dropped and the read tried again shortly."""
    from django.db import DatabaseError, connection

    for _ in range(600):
        try:
            return function()
        except DatabaseError:
            connection.close()
            time.sleep(0.1)
    return default


def _disturb(job, *, redis: PrivateRedis, postgres: PrivatePostgres, workers: Workers, victims: list[str],
             record: dict[str, Any]) -> None:  # fmt: skip
    """Redis off for 5 s at 20 % of the items, PostgreSQL restarted at 45 %, at 65 % the first of `victims` seen
    holding a claim killed; records what was done and when its claim was taken over. Either run worker will do: a
    fixed one was often holding nothing by then (the other had taken the last chunk), and the kill did not happen."""
    from django.db import connection

    def done() -> int:
        return _query(job.done, 0)

    def running() -> bool:
        return _query(job.status, "running") in ("queued", "running")

    def wait_until(fraction: float) -> bool:
        while done() < fraction * job.items:
            if not running():
                return False
            time.sleep(0.05)
        return True

    try:
        if wait_until(0.2):
            record["redis_stopped_at_items"] = done()
            redis.stop()
            time.sleep(REDIS_OUTAGE_S)
            redis.start()
            record["redis_outage_s"] = REDIS_OUTAGE_S
        if wait_until(0.45):
            record["postgres_restarted_at_items"] = done()
            started = time.monotonic()
            postgres.stop()  # every connection cut; down as long as the restart (2.6 s) before it is back
            time.sleep(POSTGRES_DOWN_S)
            postgres.start()
            record["postgres_down_s"] = round(time.monotonic() - started, 2)
        if wait_until(0.65):
            # Read holding a claim, then frozen and read again while frozen: read and killed at once, it could finish
            # its item in between and die holding nothing. Frozen only when seen holding, so it is not slowed down
            # (a slowed worker leaves its queue's tasks to the other one and may hold nothing again).
            held = victim = None
            while held is None and running():
                victim = next((name for name in victims if _query(lambda name=name: job.held_by(name))), None)
                if victim is None:
                    time.sleep(0.02)
                    continue
                workers.freeze(victim)
                time.sleep(FROZEN_SETTLE_S)  # a commit already sent lands before the read
                held = _query(lambda victim=victim: job.held_by(victim))
                if held is None:
                    workers.thaw(victim)
            if held is not None:
                record["worker_killed_at_items"] = done()
                record["worker_killed"] = victim
                workers.kill(victim)
                killed_at = time.monotonic()
                while running() and _query(lambda: job.still_held(held)):
                    time.sleep(0.1)
                record["killed_claim_taken_over_after_s"] = round(time.monotonic() - killed_at, 1)
    finally:
        connection.close()


def _measure(job, *, label: str, server, queue: str, disturb: dict[str, Any] | None, timeout_s: float) -> dict:
    """One run through the workers; its wall time from start to finish and what it left."""
    server.reset_counters()
    record: dict[str, Any] = {}
    started = time.monotonic()
    job.start(label=label, queue=queue)
    disturber = None
    if disturb is not None:
        disturber = threading.Thread(target=_disturb, args=(job,), kwargs={**disturb, "record": record})
        disturber.start()
    status = "running"
    while status in ("queued", "running") and time.monotonic() - started < timeout_s:
        time.sleep(0.1)
        status = _query(job.status, "running")
    wall = time.monotonic() - started
    if disturber is not None:
        disturber.join()
    expected = job.requests_per_item * job.items
    return {
        "status": status if status not in ("queued", "running") else f"still {status} after {timeout_s:.0f} s",
        "wall_s": round(wall, 2),
        "items": job.items,
        **job.outcome(),
        "model_requests": server.chat_request_count,
        "requests_asked_again": server.chat_request_count - expected,
        **({"disturbances": record} if disturb is not None else {}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model request")
    parser.add_argument("--concurrency", type=int, default=2, help="the endpoint's concurrency limit")
    parser.add_argument("--scenario", choices=("both", "disturbed"), default="both")
    parser.add_argument("--timeout", type=float, default=900.0, help="give a run up after this many seconds")
    parser.add_argument("--keep-logs", action="store_true", help="keep the workers' logs (printed as `logs`)")
    parser.add_argument("--kind", choices=("scoring", "drafting"), default="scoring")
    parser.add_argument(
        "--schema-from",
        help="a migrated PostgreSQL database (of this code) whose schema the private one copies instead of migrating",
    )
    args = parser.parse_args()
    # A SIGTERM (a timeout, Ctrl-C from a supervisor) still stops the workers and removes the private servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    scenarios = ("undisturbed", "disturbed") if args.scenario == "both" else ("disturbed",)

    reason = postgres_unavailable_reason() or (None if redis_available() else "needs redis-server and redis-cli")
    if reason:
        print(json.dumps({"skipped": reason}))
        return 2
    data_dir = Path(tempfile.mkdtemp(prefix="tatcurate-outage-"))
    redis = PrivateRedis(free_port(), data_dir)
    postgres = PrivatePostgres(free_port())
    workers = server = None
    keep_logs = True  # until a run has completed
    try:
        redis.start()
        postgres.create()
        os.environ.update(TATCURATE_DATA_DIR=str(data_dir), REDIS_URL=redis.url, CELERY_BROKER_URL=redis.url)
        os.environ.pop("CELERY_TASK_ALWAYS_EAGER", None)
        setup_django(postgres.create_database("tatcurate_outage", schema_from=args.schema_from))

        from django.conf import settings

        from curation.endpoints.models import ModelEndpoint
        from curation.jobs import job_heartbeat_seconds, job_stall_seconds
        from tests.curation.drafting.conftest import scripted_reply
        from tests.support.fault_server import FaultServer, ok

        # A question, then Reason/Answer, for a drafting run; an answer for a scoring run.
        responder = scripted_reply if args.kind == "drafting" else (lambda request: ok("Reason: table. Answer: 2019"))
        server = FaultServer(latency_s=args.latency, responder=responder).start()

        def endpoint_for(project) -> ModelEndpoint:
            return ModelEndpoint.objects.create(
                project=project, name="outage", base_url=server.base_url, model="fault-model",
                concurrency_limit=args.concurrency, timeout_s=30, generation_params={"temperature": 0.0},
            )  # fmt: skip

        job_class = DraftingJob if args.kind == "drafting" else ScoringJob
        jobs = {name: job_class(items=args.items, endpoint_for=endpoint_for) for name in scenarios}
        queue = f"outage-{uuid.uuid4().hex[:8]}"
        workers = Workers(data_dir, queue)
        # scripts/start's shape: the control queue with the scheduler (the beat reaper), and the run's workers.
        names = [
            workers.start(
                "control",
                f"{settings.CELERY_TASK_DEFAULT_QUEUE},{settings.TATCURATE_CONTROL_QUEUE}",
                "--beat",
                "-s",
                str(data_dir / "beat"),
            ),
            workers.start(f"{args.kind}-1", queue),
            workers.start(f"{args.kind}-2", queue),
        ]
        # The runs are made while the workers start (each is a Python process loading Django): `_measure` then times
        # the run itself, from its start.
        for name, job in jobs.items():
            job.create(label=name)
        workers.wait_ready(names)
        common = {"server": server, "queue": queue, "timeout_s": args.timeout}
        result: dict[str, Any] = {
            "kind": args.kind,
            "items": args.items,
            "latency_s": args.latency,
            "concurrency_limit": args.concurrency,
            "workers": f"1 control (beat reaper) + 2 {args.kind}, solo pool",
            "heartbeat_s": job_heartbeat_seconds(),
            "stall_s": job_stall_seconds(),
        }
        if "undisturbed" in jobs:
            result["undisturbed"] = _measure(jobs["undisturbed"], label="undisturbed", disturb=None, **common)
        disturb = {"redis": redis, "postgres": postgres, "workers": workers, "victims": names[1:]}
        result["disturbed"] = _measure(jobs["disturbed"], label="disturbed", disturb=disturb, **common)
        if "undisturbed" in result:
            result["ratio"] = round(result["disturbed"]["wall_s"] / result["undisturbed"]["wall_s"], 3)
            result["target_ratio"] = 2.0
        completed = all(result[name]["status"] == "completed" for name in scenarios)
        keep_logs = args.keep_logs or not completed
        if keep_logs:
            result["logs"] = str(data_dir)
        print(json.dumps(result, indent=1))
        return 0
    finally:
        if workers is not None:
            workers.stop_all()
        if server is not None:
            server.stop()
        from django.db import connections

        connections.close_all()
        redis.stop()
        postgres.destroy()
        if not keep_logs:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
