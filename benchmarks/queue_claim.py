"""64 HTTP clients claim through a real gunicorn server on PostgreSQL; prints JSON.

Figures: claims, double_assignments (must be 0: the same instance in two answers, or claimed twice by the
database's own audit rows), claim latency p50/p95, and throughput_ratio = claim throughput ÷ throughput of a
trivial authenticated endpoint (GET /api/projects/), both measured on the same server in the same run by the
same 64 clients, request for request. Every claim is real: each client claims once for each of its
`--per-client` annotators (an annotator holding a lease cannot claim again until they submit). Claim and
trivial phases alternate in `--rounds` rounds after an untimed warm-up. A last phase has the clients submit
what they claimed and claim again, which reports the claim + submit cycle rate. Target: zero double
assignments, ratio ≥ 0.95 and claim p95 ≤ 1.2 × the trivial endpoint's p95 (`p95_ratio`).
Usage: python benchmarks/queue_claim.py [--clients 64] [--per-client 16] [--rounds 4] [--database-url …] [--port N]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
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


def prepare(clients: int, per_client: int) -> list[list[str]]:
    """A project with `per_client` qualified annotators for each client (their tokens) and enough complete drafts
    for one claim per annotator plus the claim + submit phase."""
    from django.contrib.auth import get_user_model
    from django.db import connection
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
    for i in range(3 * clients * per_client):
        instance_create(
            project_id=project.pk,
            actor=None,
            context=context,
            batch=batch,
            question=f"Question {i}?",
            answer=["yes"],
            answer_form="short",
            answer_source="text",
            answer_type="span",
        )
    tokens: list[list[str]] = []
    User = get_user_model()
    for c in range(clients):
        tokens.append([])
        for a in range(per_client):
            user = User.objects.create_user(f"claimer{c}-{a}")  # no password: tokens only, no hashing
            membership_add(project=project, actor=None, username=user.username, role="annotator", is_qualified=True)
            tokens[c].append(Token.objects.create(user=user).key)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # planner statistics, as autovacuum keeps them on a live database
    return tokens


def autovacuum_analyze() -> list[str]:
    """What autovacuum's analyze would have done by now, when the server has autovacuum off (a shared benchmark
    machine): ANALYZE each table whose rows changed since its last analyze beyond autovacuum's own rule
    (autovacuum_analyze_threshold + autovacuum_analyze_scale_factor × rows). The tables it names."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        if cursor.fetchone()[0] == "on":
            return []  # the server keeps the statistics itself
        cursor.execute(
            "SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid"
            " WHERE s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float"
            " + current_setting('autovacuum_analyze_scale_factor')::float * GREATEST(c.reltuples, 0)"
        )
        tables = [name for (name,) in cursor.fetchall()]
        for name in tables:
            cursor.execute(f'ANALYZE "{name}"')
    return tables


def run_clients(base: str, tokens: list[list[str]], work) -> tuple[float, list]:
    """Run `work(http, client_tokens)` in one thread per client, all starting together; (seconds, results)."""
    results: list = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(tokens) + 1)

    errors: list[BaseException] = []

    def client(client_tokens: list[str]) -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            barrier.wait()
            try:
                for item in work(http, client_tokens):
                    with lock:
                        results.append(item)
            except Exception as exc:  # reported after the run
                errors.append(exc)

    threads = [threading.Thread(target=client, args=(client_tokens,)) for client_tokens in tokens]
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
    parser.add_argument("--per-client", type=int, default=16, help="annotators per client (one claim each)")
    parser.add_argument("--rounds", type=int, default=4, help="claim and trivial phases alternate this often")
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    args = parser.parse_args()

    # Named after the given database, so benchmarks of several checkouts on one server do not drop each other's.
    database_url = fresh_postgres_database(args.database_url, f"{args.database_url.rsplit('/', 1)[1]}_bench_queue")
    setup_django(database_url)
    tokens = prepare(args.clients, args.per_client)

    port = args.port or free_port()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # The production shape behind a TLS-terminating proxy (README › Running on PostgreSQL and Redis): DEBUG off (it
    # would keep every statement's SQL), plain HTTP on loopback, token auth (no cookies).
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DATABASE_CONN_MAX_AGE": "60",
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(48),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DJANGO_SECURE_COOKIES": "false",
        "DJANGO_HSTS_SECONDS": "0",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "curation.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", str(args.web_workers), "--threads", "8", "--log-level", "warning",
         "--timeout", "120", "--keep-alive", "75"],
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

        def auth(token: str) -> dict[str, str]:
            return {"Authorization": f"Token {token}"}

        def claim_once_each(http: httpx.Client, client_tokens: list[str]):
            for token in client_tokens:
                started = time.perf_counter()
                response = http.post("/api/projects/bench/queue/next/", headers=auth(token))
                latency = (time.perf_counter() - started) * 1000
                response.raise_for_status()
                yield (response.json()["instance"], token, latency)

        def trivial(http: httpx.Client, client_tokens: list[str]):
            for token in client_tokens:
                started = time.perf_counter()
                http.get("/api/projects/", headers=auth(token)).raise_for_status()
                yield (time.perf_counter() - started) * 1000

        def warm_up(http: httpx.Client, client_tokens: list[str]):
            for token in client_tokens[:2]:  # every server thread opens its database connection, untimed
                http.get("/api/projects/", headers=auth(token)).raise_for_status()
                yield None

        run_clients(base, tokens, warm_up)
        # Side by side: the two kinds of request alternate in rounds, so a slow moment of the machine
        # weighs on both alike. Each round claims once for a slice of every client's annotators, then
        # sends as many trivial requests with the same tokens. Between rounds the statistics are kept as
        # autovacuum keeps them on a live database (each round claims 1/12 of the drafts).
        claims: list = []
        trivial_latencies: list[float] = []
        claim_seconds = trivial_seconds = 0.0
        analyzed = 0
        size = max(1, args.per_client // args.rounds)
        for start in range(0, args.per_client, size):
            round_tokens = [client_tokens[start : start + size] for client_tokens in tokens]
            analyzed += len(autovacuum_analyze())
            seconds, results = run_clients(base, round_tokens, claim_once_each)
            claim_seconds, claims = claim_seconds + seconds, claims + results
            seconds, results = run_clients(base, round_tokens, trivial)
            trivial_seconds, trivial_latencies = trivial_seconds + seconds, trivial_latencies + results

        def submit_and_claim(http: httpx.Client, client_tokens: list[str]):
            for token in client_tokens:
                held = http.post("/api/projects/bench/queue/next/", headers=auth(token)).json()  # their lease
                http.post(
                    f"/api/instances/{held['instance']}/submit/",
                    json={"expected_version": held["version"]},
                    headers=auth(token),
                ).raise_for_status()
                response = http.post("/api/projects/bench/queue/next/", headers=auth(token))
                response.raise_for_status()
                yield (response.json()["instance"], token, 0.0)

        try:
            cycle_seconds, cycles = run_clients(base, tokens, submit_and_claim)
            cycle_error = ""
        except SystemExit as exc:  # the claim figures above stand; say why the cycle rate is missing
            cycle_seconds, cycles, cycle_error = 0.0, [], str(exc)[:300]
    finally:
        server.terminate()
        server.wait(timeout=30)

    claimed_ids = [pk for pk, _, _ in claims] + [pk for pk, _, _ in cycles]
    from django.db.models import Count

    from curation.models import TransitionEvent

    claimed_twice = (  # the database's own record: an instance claimed from the queue more than once
        TransitionEvent.objects.filter(from_status="drafted", to_status="in_refinement")
        .values("instance_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    latencies = sorted(latency for _, _, latency in claims)
    trivial_sorted = sorted(trivial_latencies)
    trivial_p95 = trivial_sorted[int(0.95 * (len(trivial_sorted) - 1))]
    claim_rps = len(claims) / claim_seconds
    trivial_rps = len(trivial_latencies) / trivial_seconds
    print(
        json.dumps(
            {
                "clients": args.clients,
                "claims": len(claims) + len(cycles),
                "double_assignments": len(claimed_ids) - len(set(claimed_ids)) + claimed_twice,
                "claim_p50_ms": round(statistics.median(latencies), 1),
                "claim_p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
                "trivial_p95_ms": round(trivial_p95, 1),
                "p95_ratio": round(latencies[int(0.95 * (len(latencies) - 1))] / trivial_p95, 2),
                "claim_rps": round(claim_rps, 1),
                "trivial_rps": round(trivial_rps, 1),
                "throughput_ratio": round(claim_rps / trivial_rps, 3),
                "submit_and_claim_cycles_per_s": round(len(cycles) / cycle_seconds, 1) if cycles else None,
                "tables_analyzed_between_rounds": analyzed,
                **({"submit_and_claim_error": cycle_error} if cycle_error else {}),
            }
        )
    )


if __name__ == "__main__":
    main()
