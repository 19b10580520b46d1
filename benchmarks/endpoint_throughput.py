"""Throughput of the endpoint client under a concurrency limit: achieved vs ideal requests per second (JSON)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.endpoint_load import run_requests
from tests.support.fault_server import FaultServer


def main() -> None:
    """Run N requests from W worker processes through the real client against a fixed-latency server."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2, help="server latency L in seconds")
    parser.add_argument("--concurrency", type=int, default=8, help="endpoint concurrency limit C")
    parser.add_argument("--requests", type=int, default=400, help="total requests N")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL"), help="shared semaphore (default $REDIS_URL)"
    )
    parser.add_argument(
        "--per-process", action="store_true", help="without Redis: one process with the workers' threads"
    )
    args = parser.parse_args()

    identity = f"bench-{uuid.uuid4().hex}"
    per_worker = [args.requests // args.workers + (i < args.requests % args.workers) for i in range(args.workers)]
    # Without Redis the workers share the limit through lock files (as the embedded defaults do).
    slot_dir = None if args.redis_url else tempfile.mkdtemp(prefix="bench-slots-")
    processes = 1 if args.per_process and not args.redis_url else args.workers
    if processes == 1:
        per_worker = [args.requests]
    context = multiprocessing.get_context("spawn")
    with FaultServer(latency_s=args.latency) as server, context.Pool(processes) as pool:
        start_at = time.time() + 2.0
        jobs = [
            pool.apply_async(
                run_requests,
                kwds={
                    "base_url": server.base_url,
                    "identity_key": identity,
                    "concurrency_limit": args.concurrency,
                    "requests": count,
                    # More threads than slots in every process, so the processes compete for the shared limit.
                    "threads": args.concurrency * 2,
                    "redis_url": args.redis_url,
                    "slot_dir": slot_dir,
                    "start_at": start_at,
                },
            )
            for count in per_worker
        ]
        reports = [job.get(timeout=3600) for job in jobs]
        max_in_flight = server.max_in_flight
        served = server.chat_request_count

    started = min(r["started"] for r in reports)
    finished = max(r["finished"] for r in reports)
    elapsed = finished - started
    latencies = [latency for r in reports for latency in r["latencies"]]
    achieved = args.requests / elapsed
    ideal = args.concurrency / args.latency
    print(
        json.dumps(
            {
                "benchmark": "endpoint_throughput",
                "latency_s": args.latency,
                "concurrency_limit": args.concurrency,
                "requests": args.requests,
                "worker_processes": processes,
                "limiter": "redis" if args.redis_url else "lock files",
                "elapsed_s": round(elapsed, 3),
                "achieved_rps": round(achieved, 2),
                "ideal_rps": round(ideal, 2),
                "ratio": round(achieved / ideal, 3),
                "max_in_flight_at_server": max_in_flight,
                "requests_served": served,
                "client_latency_p50_s": round(statistics.median(latencies), 3),
                "client_latency_max_s": round(max(latencies), 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
