"""64 HTTP clients claim and submit through a real gunicorn server on PostgreSQL; prints JSON.

Figures: claims, double_assignments (must be 0), claim latency p50/p95, and throughput_ratio =
claim throughput ÷ throughput of a trivial authenticated endpoint (GET /api/projects/), both measured
on the same server in the same run by the same 64 clients. A client must submit what it claimed before
it can claim again, so the claim phase interleaves claim and submit requests; each endpoint's
throughput is therefore taken as clients ÷ its mean latency under that load (requests per second the
server sustains for that endpoint), and the whole claim+submit cycle rate is reported beside it.
Target: zero double assignments, ratio ≥ 0.8.
Usage: python benchmarks/queue_claim.py [--clients 64] [--per-client 8] [--database-url postgres://…/test]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import ROOT, fresh_postgres_database, setup_django


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prepare(clients: int, per_client: int) -> list[str]:
    """A project with `clients` qualified annotators (tokens returned) and enough complete drafts."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from curation.models import Context, Paper, Paragraph
    from curation.services.batches import batch_create, batch_open
    from curation.services.lifecycle import instance_create
    from curation.services.projects import membership_add, project_create

    project = project_create(name="Bench", slug="bench", creator=None)
    paper = Paper.objects.create(project=project, title="bench")
    paragraph = Paragraph.objects.create(paper=paper, order=0, text="Some text.")
    context = Context.objects.create(project=project, paper=paper, kind="short", paragraph=paragraph)
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="b").pk, actor=None)
    for i in range(clients * per_client):
        instance_create(
            project_id=project.pk,
            actor=None,
            context=context,
            batch=batch,
            question=f"Question {i}?",
            answer=["yes"],
            answer_form="short",
            answer_source="text",
        )
    tokens = []
    User = get_user_model()
    for i in range(clients):
        user = User.objects.create_user(f"claimer{i}", password="x")
        membership_add(project=project, actor=None, username=user.username, role="annotator", is_qualified=True)
        tokens.append(Token.objects.create(user=user).key)
    return tokens


def run_clients(base: str, tokens: list[str], work) -> tuple[float, list]:
    results: list = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(tokens) + 1)

    errors: list[BaseException] = []

    def client(token: str) -> None:
        with httpx.Client(base_url=base, headers={"Authorization": f"Token {token}"}, timeout=60) as http:
            barrier.wait()
            try:
                for item in work(http):
                    with lock:
                        results.append(item)
            except Exception as exc:  # reported after the run
                errors.append(exc)

    threads = [threading.Thread(target=client, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    if errors:
        raise SystemExit(f"{len(errors)} clients failed; first: {errors[0]!r}")
    return time.perf_counter() - started, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--per-client", type=int, default=8)
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument("--web-workers", type=int, default=4)
    args = parser.parse_args()

    database_url = fresh_postgres_database(args.database_url, "tatcurate_bench_queue")
    setup_django(database_url)
    tokens = prepare(args.clients, args.per_client)

    port = free_port()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_DEBUG": "true", "DATABASE_CONN_MAX_AGE": "60"}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "curation.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", str(args.web_workers), "--threads", "8", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)

        def claim_and_submit(http: httpx.Client):
            while True:
                started = time.perf_counter()
                response = http.post("/api/projects/bench/queue/next/")
                latency = (time.perf_counter() - started) * 1000
                if response.status_code == 204:
                    return
                response.raise_for_status()
                instance = response.json()
                yield (instance["id"], http.headers["Authorization"], latency)
                http.post(f"/api/instances/{instance['id']}/submit/", json={"expected_version": instance["version"]})

        claim_seconds, claims = run_clients(base, tokens, claim_and_submit)

        def trivial(http: httpx.Client):
            for _ in range(2 * args.per_client):
                started = time.perf_counter()
                http.get("/api/projects/").raise_for_status()
                yield (time.perf_counter() - started) * 1000

        trivial_seconds, trivial_latencies = run_clients(base, tokens, trivial)
    finally:
        server.terminate()
        server.wait(timeout=30)

    claimed_ids = [pk for pk, _, _ in claims]
    latencies = sorted(latency for _, _, latency in claims)
    claim_rps = args.clients / (statistics.fmean(latencies) / 1000)
    trivial_rps = args.clients / (statistics.fmean(trivial_latencies) / 1000)
    print(
        json.dumps(
            {
                "clients": args.clients,
                "claims": len(claims),
                "double_assignments": len(claimed_ids) - len(set(claimed_ids)),
                "claim_p50_ms": round(statistics.median(latencies), 1),
                "claim_p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
                "claim_rps": round(claim_rps, 1),
                "trivial_rps": round(trivial_rps, 1),
                "throughput_ratio": round(claim_rps / trivial_rps, 3),
                "claim_submit_cycles_per_s": round(len(claims) / claim_seconds, 1),
                "trivial_requests_per_s": round(len(trivial_latencies) / trivial_seconds, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
