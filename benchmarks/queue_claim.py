"""64 HTTP clients claim through a real gunicorn server on PostgreSQL; prints JSON.

Figures: claims, double_assignments (must be 0: the same instance in two answers, or claimed twice by the
database's own audit rows), claim latency p50/p95, and throughput_ratio = claim throughput ÷ throughput of a
trivial authenticated endpoint (GET /api/projects/), both measured on the same server in the same run by the
same 64 clients, request for request. Every claim is real: each client claims once for each of its
`--per-client` annotators (an annotator holding a lease cannot claim again until they submit). Side by side in
time: after an untimed warm-up, `--rounds` rounds each run a claim phase and a trivial phase with the same
tokens, the order swapped every round (claim first, then trivial first), so a load change of the machine weighs
on both kinds alike and neither always runs first. The ratios are of the pooled figures (all rounds); `rounds`
gives each round's own, and `round_throughput_ratios` / `round_p95_ratios` their spread. A last phase has the
clients submit what they claimed and claim again, which reports the claim + submit cycle rate (`--no-cycle`
leaves it out: it is no target and takes minutes on a busy machine). Target: zero
double assignments, ratio ≥ 0.95 and claim p95 ≤ 1.2 × the trivial endpoint's p95 (`p95_ratio`).
Usage: python benchmarks/queue_claim.py [--clients 64] [--per-client 16] [--rounds 8] [--warm-claims 4] [--no-cycle]
       [--database-url …] [--port N]
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


def prepare(clients: int, per_client: int, warm: int) -> list[list[str]]:
    """A project with `warm` + `per_client` qualified annotators for each client (their tokens, the warm-up's
    first) and enough complete drafts for one claim per annotator plus the claim + submit phase. Written in bulk
    (as `instance_create` and `membership_add` would write them, audit rows included), so a run spends its minutes
    measuring."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import connection
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from curation.batches.services import batch_create, batch_open
    from curation.models import Context, Instance, Membership, Paper, Paragraph, TransitionEvent
    from curation.services.projects import project_create
    from curation.states import Role, Status

    project = project_create(name="Bench", slug="bench", creator=None)
    paper = Paper.objects.create(project=project, title="bench")
    paragraph = Paragraph.objects.create(paper=paper, order=0, text="Some text.")
    context = Context.objects.create(project=project, paper=paper, kind="short", paragraph=paragraph)
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="b").pk, actor=None)
    drafts = Instance.objects.bulk_create(
        [
            Instance(
                project=project,
                status=Status.DRAFTED,
                version=1,
                context=context,
                batch=batch,
                question=f"Question {i}?",
                answer=["yes"],
                answer_form="short",
                answer_source="text",
                answer_type="span",
            )
            for i in range(clients * (3 * per_client + warm))
        ],
        batch_size=2000,
    )
    TransitionEvent.objects.bulk_create(
        [TransitionEvent(instance=draft, from_status="", to_status=Status.DRAFTED, version=1) for draft in drafts],
        batch_size=2000,
    )
    unusable = make_password(None)  # no password: tokens only, no hashing
    users = get_user_model().objects.bulk_create(
        [
            get_user_model()(username=f"claimer{c}-{a}", password=unusable)
            for c in range(clients)
            for a in range(warm + per_client)
        ]
    )
    now = timezone.now()
    Membership.objects.bulk_create(
        [
            Membership(user=user, project=project, role=Role.ANNOTATOR, is_qualified=True, qualified_at=now)
            for user in users
        ]
    )
    keys = [
        token.key for token in Token.objects.bulk_create([Token(user=user, key=Token.generate_key()) for user in users])
    ]
    tokens = [keys[c * (warm + per_client) : (c + 1) * (warm + per_client)] for c in range(clients)]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # planner statistics, as autovacuum keeps them on a live database
    return tokens


def server_env(database_url: str) -> dict[str, str]:
    """The production shape behind a TLS-terminating proxy (README › Running on PostgreSQL and Redis): DEBUG off (it
    would keep every statement's SQL), plain HTTP on loopback, token auth (no cookies)."""
    return {
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


def percentile_95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))]


def figures(claim_ms: list[float], claim_seconds: float, trivial_ms: list[float], trivial_seconds: float) -> dict:
    """Claim and trivial latency and throughput of one stretch of the run, and the two ratios the targets read."""
    claim_rps, trivial_rps = len(claim_ms) / claim_seconds, len(trivial_ms) / trivial_seconds
    claim_p95, trivial_p95 = percentile_95(claim_ms), percentile_95(trivial_ms)
    return {
        "claim_p50_ms": round(statistics.median(claim_ms), 1),
        "claim_p95_ms": round(claim_p95, 1),
        "trivial_p95_ms": round(trivial_p95, 1),
        "p95_ratio": round(claim_p95 / trivial_p95, 2),
        "claim_rps": round(claim_rps, 1),
        "trivial_rps": round(trivial_rps, 1),
        "throughput_ratio": round(claim_rps / trivial_rps, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--per-client", type=int, default=16, help="annotators per client (one claim each)")
    parser.add_argument("--rounds", type=int, default=8, help="claim and trivial phases alternate this often")
    parser.add_argument("--warm-claims", type=int, default=4, help="untimed claims per client before the rounds")
    parser.add_argument("--no-cycle", action="store_true", help="leave out the claim + submit cycle phase")
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    args = parser.parse_args()

    # Named after the given database, so benchmarks of several checkouts on one server do not drop each other's.
    database_url = fresh_postgres_database(args.database_url, f"{args.database_url.rsplit('/', 1)[1]}_bench_queue")
    setup_django(database_url)
    # Annotators of the warm-ups: the first one's, then two a client for each round (after an ANALYZE).
    warm = args.warm_claims + 2 * args.rounds
    tokens = prepare(args.clients, args.per_client, warm)
    warm_tokens = [client_tokens[:warm] for client_tokens in tokens]
    tokens = [client_tokens[warm:] for client_tokens in tokens]

    port = args.port or free_port()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    env = server_env(database_url)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
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
            # Untimed, as a live server would have served both kinds before: every server thread opens its database
            # connection, and each connection prepares the claim and plans its first executions (PostgreSQL plans
            # a prepared statement's first five anew before it keeps a generic plan), by annotators of their own.
            for token in tokens[0][:2]:
                http.get("/api/projects/", headers=auth(token)).raise_for_status()
            yield from claim_once_each(http, client_tokens)

        _, warm_claims = run_clients(base, [held[: args.warm_claims] for held in warm_tokens], warm_up)
        # Side by side: the two kinds of request alternate in rounds, so a slow moment of the machine
        # weighs on both alike. Each round claims once for a slice of every client's annotators and sends
        # as many trivial requests with the same tokens, claims first in even rounds and trivial requests
        # first in odd ones. Between rounds the statistics are kept as autovacuum keeps them on a live
        # database (each round claims 1/24 of the drafts). An ANALYZE makes every connection plan the claim anew
        # (its prepared plan is invalidated), which a live server pays once per ANALYZE, not every few seconds as
        # here: after one, two untimed claims a client, by annotators of their own, before the round.
        rounds: list[dict] = []
        analyzed = 0
        size = max(1, args.per_client // args.rounds)
        for number, start in enumerate(range(0, args.per_client, size)):
            round_tokens = [client_tokens[start : start + size] for client_tokens in tokens]
            analyzed_now = len(autovacuum_analyze())
            analyzed += analyzed_now
            if analyzed_now:
                reserve = args.warm_claims + 2 * number
                warm_claims += run_clients(base, [held[reserve : reserve + 2] for held in warm_tokens], warm_up)[1]
            phases = [("claim", claim_once_each), ("trivial", trivial)]
            if number % 2:
                phases.reverse()
            measured = {kind: run_clients(base, round_tokens, work) for kind, work in phases}
            rounds.append(
                {
                    "claims": measured["claim"][1],
                    "claim_seconds": measured["claim"][0],
                    "trivial": measured["trivial"][1],
                    "trivial_seconds": measured["trivial"][0],
                    "first": "claim" if number % 2 == 0 else "trivial",
                    "tables_analyzed_before": analyzed_now,
                }
            )
        claims = [claim for one in rounds for claim in one["claims"]]

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
            cycle_seconds, cycles = (0.0, []) if args.no_cycle else run_clients(base, tokens, submit_and_claim)
            cycle_error = ""
        except SystemExit as exc:  # the claim figures above stand; say why the cycle rate is missing
            cycle_seconds, cycles, cycle_error = 0.0, [], str(exc)[:300]
    finally:
        server.terminate()
        server.wait(timeout=30)

    claimed_ids = [pk for pk, _, _ in warm_claims + claims + cycles]
    from django.db.models import Count

    from curation.models import TransitionEvent

    claimed_twice = (  # the database's own record: an instance claimed from the queue more than once
        TransitionEvent.objects.filter(from_status="drafted", to_status="in_refinement")
        .values("instance_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    pooled = figures(
        [latency for _, _, latency in claims],
        sum(one["claim_seconds"] for one in rounds),
        [latency for one in rounds for latency in one["trivial"]],
        sum(one["trivial_seconds"] for one in rounds),
    )
    per_round = [
        {
            "first": one["first"],
            "tables_analyzed_before": one["tables_analyzed_before"],
            **figures(
                [latency for _, _, latency in one["claims"]],
                one["claim_seconds"],
                one["trivial"],
                one["trivial_seconds"],
            ),
        }
        for one in rounds
    ]
    print(
        json.dumps(
            {
                "clients": args.clients,
                "claims": len(warm_claims) + len(claims) + len(cycles),
                "double_assignments": len(claimed_ids) - len(set(claimed_ids)) + claimed_twice,
                **pooled,
                "round_throughput_ratios": [one["throughput_ratio"] for one in per_round],
                "round_p95_ratios": [one["p95_ratio"] for one in per_round],
                "round_median_throughput_ratio": statistics.median(one["throughput_ratio"] for one in per_round),
                "round_median_p95_ratio": statistics.median(one["p95_ratio"] for one in per_round),
                "submit_and_claim_cycles_per_s": round(len(cycles) / cycle_seconds, 1) if cycles else None,
                "tables_analyzed_between_rounds": analyzed,
                **({"submit_and_claim_error": cycle_error} if cycle_error else {}),
                "rounds": per_round,
            }
        )
    )


if __name__ == "__main__":
    main()
