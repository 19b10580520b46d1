"""Scoring throughput: 2 Celery worker processes score a release against a local endpoint with a fixed latency L and
a shared concurrency limit C; prints JSON with achieved_rps, ideal_rps (= C / L), ratio and the share of time spent
in metrics. Target: ratio ≥ 0.9. The limit is shared across processes through Redis (REDIS_URL), else through lock
files under the data directory (`limit_shared` says which).

Usage: python benchmarks/scoring_throughput.py [--latency 0.25] [--concurrency 4] [--items 240]
       [--database-url postgres://…/test] [--redis-url redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import ROOT, fresh_postgres_database, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per request (L)")
    parser.add_argument("--concurrency", type=int, default=4, help="endpoint concurrency limit (C)")
    parser.add_argument("--items", type=int, default=240)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk-size", type=int, default=0, help="default: 4 × C")
    parser.add_argument("--database-url", default=None, help="PostgreSQL base URL (a fresh database is made)")
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""))
    args = parser.parse_args()

    data_dir = tempfile.mkdtemp(prefix="tatcurate-scoring-bench-")
    os.environ["TATCURATE_DATA_DIR"] = data_dir
    if args.redis_url:
        os.environ["REDIS_URL"] = args.redis_url
        os.environ.setdefault("CELERY_BROKER_URL", args.redis_url)
    database_url = fresh_postgres_database(args.database_url, "tatcurate_scoring_bench") if args.database_url else None
    database_url = setup_django(database_url)
    sys.path.insert(0, str(ROOT))

    from curation.datasets.services import dataset_import
    from curation.endpoints.models import ModelEndpoint
    from curation.models import WorkerHeartbeat
    from curation.services.projects import project_create
    from scoring.models import Prediction, ScoringRun
    from scoring.runs.creation import run_create
    from scoring.runs.lifecycle import run_start
    from tests.scoring.metrics.shared_data import shared_data_dir
    from tests.support.fault_server import FaultServer, ok

    documents = json.loads((shared_data_dir() / "tatqa" / "tatqa_dataset_dev.json").read_text())
    chosen, count = [], 0
    for document in documents:
        if count >= args.items:
            break
        document["questions"] = document["questions"][: args.items - count]
        chosen.append(document)
        count += len(document["questions"])
    project = project_create(name="Scoring bench", slug=f"bench-{uuid.uuid4().hex[:6]}", creator=None)
    release = dataset_import(
        project=project, actor=None, format="tatqa", source_name="bench.json",
        content=json.dumps(chosen).encode(), as_release="bench",
    ).release  # fmt: skip

    server = FaultServer(latency_s=args.latency, default=ok("Reason: from the table. Answer: 2019")).start()
    endpoint = ModelEndpoint.objects.create(
        project=project, name="bench", base_url=server.base_url, model="fault-model",
        concurrency_limit=args.concurrency, timeout_s=30, generation_params={"temperature": 0.0},
    )  # fmt: skip
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": database_url, "CELERY_TASK_ALWAYS_EAGER": "false"}
    workers = []
    for number in range(args.workers):
        log = open(Path(data_dir) / f"worker-{number}.log", "w")  # closed with the process below
        command = [
            sys.executable, "-m", "celery", "-A", "curation", "worker", "--pool", "solo", "-Q", queue,
            "-n", f"{queue}-{number}@localhost", "--without-gossip", "--without-mingle", "--loglevel", "WARNING",
        ]  # fmt: skip
        workers.append(
            (
                subprocess.Popen(
                    command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                ),
                log,
            )
        )
    try:
        deadline = time.monotonic() + 90
        while WorkerHeartbeat.objects.filter(hostname__startswith=queue).count() < args.workers:
            if time.monotonic() > deadline:
                raise SystemExit(f"workers did not start; see {data_dir}")
            time.sleep(0.2)
        run = run_create(
            release=release, actor=None, method="direct", endpoint=endpoint, use_cache=False,
            chunk_size=args.chunk_size or 4 * args.concurrency,
        )  # fmt: skip
        started = time.monotonic()
        run_start(run=run, actor=None, queue=queue)
        while ScoringRun.objects.get(pk=run.pk).status == "running":
            time.sleep(0.1)
        elapsed = time.monotonic() - started
        run.refresh_from_db()
        predictions = Prediction.objects.filter(run=run)
        stamps = sorted(predictions.values_list("created_at", flat=True))
        steady = (stamps[-1] - stamps[0]).total_seconds() if len(stamps) > 1 else elapsed
        metrics_s = sum(predictions.values_list("metrics_s", flat=True))
        items = predictions.count()
        ideal = args.concurrency / args.latency
        achieved = items / elapsed
        from django.conf import settings

        print(
            json.dumps(
                {
                    "items": items,
                    "failed": predictions.filter(status="failed").count(),
                    "workers": args.workers,
                    "latency_s": args.latency,
                    "concurrency_limit": args.concurrency,
                    "limit_shared": "redis" if settings.REDIS_URL else "lock files",
                    "broker": settings.CELERY_BROKER_URL.split(":")[0],
                    "database": "postgresql" if database_url.startswith("postgres") else "sqlite",
                    "elapsed_s": round(elapsed, 3),
                    "achieved_rps": round(achieved, 3),
                    "steady_rps": round((items - 1) / steady, 3) if steady else None,
                    "ideal_rps": round(ideal, 3),
                    "ratio": round(achieved / ideal, 3),
                    "steady_ratio": round((items - 1) / steady / ideal, 3) if steady else None,
                    "max_in_flight_at_server": server.max_in_flight,
                    "metrics_s_total": round(metrics_s, 3),
                    "metrics_share": round(metrics_s / (elapsed * args.workers), 4),
                    "status": run.status,
                },
                indent=1,
            )
        )
    finally:
        for process, log in workers:
            if process.poll() is None:
                os.killpg(process.pid, 15)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, 9)
            log.close()
        server.stop()


if __name__ == "__main__":
    main()
