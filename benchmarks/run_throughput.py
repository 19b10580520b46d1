"""Runs at an endpoint's limit: a scoring run and an LLM drafting run, one after the other on the same 2 real Celery
worker processes (solo pool, as scripts/start runs them), against a local OpenAI-compatible fake with a fixed latency
L and a concurrency limit C that the workers share (through Redis with REDIS_URL, else through lock files).

Prints one JSON object with, for each kind, the model requests per second from `run_start` until the run is finished
(its creation is timed apart) beside the ideal C / L, and their ratio (target ≥ 0.95); and where the rest went, as
the fake endpoint saw it: how long after the start the first request came, how long after the last answer the run
was finished, and the share of the C slots busy in between. A scoring run asks one request an item, a drafting run
two (a question, then its rationale and answer); each context of the drafting run is its own paper, so no question
is a duplicate.

Usage: python benchmarks/run_throughput.py [--kind both|scoring|drafting] [--latency 0.25] [--concurrency 4]
       [--requests 480] [--workers 2] [--chunk-size N] [--keep-logs] [--database-url postgres://…/db]
       [--redis-url redis://…/n]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import fresh_postgres_database, setup_django
from _run_jobs import DraftingJob, ScoringJob, Workers


def _measure(job: Any, *, server: Any, queue: str, concurrency: int, latency_s: float, timeout_s: float) -> dict:
    """One run through the workers, timed from its start until it is finished, with the endpoint's view of it."""
    created = time.monotonic()
    job.create(label=job.kind)
    server.reset_counters()
    started = time.monotonic()
    job.start(label=job.kind, queue=queue)
    status = job.status()
    while status in ("queued", "running") and time.monotonic() - started < timeout_s:
        time.sleep(0.05)
        status = job.status()
    finished = time.monotonic()
    elapsed = finished - started
    spans = sorted(server.spans)
    requests = len(spans)
    ideal = concurrency / latency_s
    first, last = (spans[0][0], max(end for _, end in spans)) if spans else (started, started)
    busy = sum(end - begin for begin, end in spans)
    return {
        "status": status,
        "items": job.items,
        "created_in_s": round(started - created, 3),
        **job.outcome(),
        "requests": requests,
        "elapsed_s": round(elapsed, 3),
        "achieved_rps": round(requests / elapsed, 3),
        "ideal_rps": round(ideal, 3),
        "ratio": round(requests / elapsed / ideal, 3),
        "first_request_after_s": round(first - started, 3),
        "finished_after_last_answer_s": round(finished - last, 3),
        # Between the first request and the last answer: the share of the C slots the endpoint was answering.
        "slots_busy_share": round(busy / (concurrency * (last - first)), 3) if last > first else None,
        "mean_request_s_at_endpoint": round(busy / requests, 4) if requests else None,
        "max_in_flight_at_endpoint": server.max_in_flight,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=("both", "scoring", "drafting"), default="both")
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per request (L)")
    parser.add_argument("--concurrency", type=int, default=4, help="endpoint concurrency limit (C)")
    parser.add_argument("--requests", type=int, default=480, help="model requests of each run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk-size", type=int, default=0, help="scoring chunk size (default: the run's default)")
    parser.add_argument("--timeout", type=float, default=600.0, help="give a run up after this many seconds")
    parser.add_argument("--keep-logs", action="store_true", help="keep the workers' logs (kept anyway on a failure)")
    parser.add_argument("--database-url", default=None, help="PostgreSQL URL whose server gets a fresh database")
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""))
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="tatcurate-run-throughput-"))
    os.environ["TATCURATE_DATA_DIR"] = str(data_dir)
    os.environ.pop("CELERY_TASK_ALWAYS_EAGER", None)
    if args.redis_url:
        os.environ["REDIS_URL"] = args.redis_url
        os.environ["CELERY_BROKER_URL"] = args.redis_url
    database_url = None
    if args.database_url:
        # A database of its own beside the one named (its name + "_throughput"), made afresh each time.
        database_url = fresh_postgres_database(args.database_url, f"{args.database_url.rsplit('/', 1)[1]}_throughput")
    database_url = setup_django(database_url)

    from django.conf import settings

    from curation.endpoints.models import ModelEndpoint
    from scoring.runs.creation import DEFAULT_CHUNK_SIZE
    from tests.curation.drafting.conftest import scripted_reply
    from tests.support.fault_server import FaultServer, ok

    def endpoint_for(project: Any) -> ModelEndpoint:
        return ModelEndpoint.objects.create(
            project=project, name="bench", base_url=server.base_url, model="fault-model",
            concurrency_limit=args.concurrency, timeout_s=30, generation_params={"temperature": 0.0},
        )  # fmt: skip

    kinds = ("scoring", "drafting") if args.kind == "both" else (args.kind,)
    replies = {"scoring": lambda request: ok("Reason: from the table. Answer: 2019"), "drafting": scripted_reply}
    queue = f"throughput-{uuid.uuid4().hex[:8]}"
    workers = Workers(data_dir, queue)
    server = None
    result: dict[str, Any] = {
        "latency_s": args.latency,
        "concurrency_limit": args.concurrency,
        "workers": f"{args.workers}, solo pool",
        "limit_shared": "redis" if settings.REDIS_URL else "lock files",
        "broker": settings.CELERY_BROKER_URL.split(":")[0],
        "database": "postgresql" if database_url.startswith("postgres") else "sqlite",
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        # This process's first message loads every task module and connects to the broker (a web worker pays that
        # once, at its first run): done before the clock starts.
        from config.celery import app
        from curation.jobs import job_task

        for task_name in ("scoring.run_chunk", "curation.drafting_chunk"):
            job_task(task_name)
        with app.producer_or_acquire() as producer:
            producer.connection.ensure_connection()
        names = [workers.start(f"{queue}-{number}", queue) for number in range(args.workers)]
        workers.wait_ready(names)
        for kind in kinds:
            server = FaultServer(latency_s=args.latency, responder=replies[kind]).start()
            if kind == "scoring":
                job = ScoringJob(
                    items=args.requests, endpoint_for=endpoint_for, chunk_size=args.chunk_size or DEFAULT_CHUNK_SIZE
                )
            else:
                job = DraftingJob(items=args.requests // DraftingJob.requests_per_item, endpoint_for=endpoint_for)
            common = {"queue": queue, "concurrency": args.concurrency, "latency_s": args.latency}
            result[kind] = _measure(job, server=server, timeout_s=args.timeout, **common)
            server.stop()
            server = None
        result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        result["target_ratio"] = 0.95
        print(json.dumps(result, indent=1))
    finally:
        workers.stop_all()
        if server is not None:
            server.stop()
        if not args.keep_logs and all(result.get(kind, {}).get("status") == "completed" for kind in kinds):
            shutil.rmtree(data_dir, ignore_errors=True)
        else:
            print(f"worker logs kept in {data_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
