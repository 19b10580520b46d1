"""The cycle a person makes — claim the next item, then open it — against Label Studio CE's next task, side by side.

Ours: `POST /api/projects/bench/queue/next/` then `GET /api/instances/N/workspace/` (what the workspace page reads).
The peer: Label Studio Community Edition's `GET /api/projects/N/next/` (its labeling stream: it picks a task, locks
it for the annotator and returns it with its data, so one request is its whole claim-and-open). Both run under
gunicorn with the same workers and threads on the same PostgreSQL server, with token auth, DEBUG off; the same
`--clients` HTTP clients (one thread each) serve one distinct annotator per cycle on each side, as `queue_claim.py`
does, and the two sides alternate in `--rounds` rounds (ours first in even rounds), so a load change of the shared
machine weighs on both. Printed: cycles per second and p50/p95 latency of each side, pooled and per round, and
`ratio` = our cycles per second ÷ the peer's (target ≥ 3). Every claim is checked to be distinct on each side.

Label Studio is not a dependency of this project: install it into a virtualenv of its own and name it, e.g.

    python3 -m venv /tmp/lsvenv && /tmp/lsvenv/bin/pip install label-studio==1.23.2 gunicorn==23.0.0
    .venv/bin/python benchmarks/claim_open_vs_label_studio.py --label-studio-venv /tmp/lsvenv

(its database is migrated once into `<database>_bench_label_studio_migrated`, kept as the template each run's copy
is made from; `--fresh-peer` migrates anew).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import ROOT, fresh_postgres_database, setup_django
from queue_claim import free_port, percentile_95, prepare, run_clients, server_env

# Runs inside Label Studio's own virtualenv: an organisation with legacy token auth on, one project of plain-text
# tasks, `clients × per_client` annotators with tokens (written in bulk, passwords unusable, as ours are).
PEER_WORLD = textwrap.dedent(
    """
    import json, sys
    import django
    django.setup()
    from django.contrib.auth.hashers import make_password
    from rest_framework.authtoken.models import Token
    from organizations.functions import create_organization
    from organizations.models import OrganizationMember
    from projects.models import Project
    from tasks.models import Task
    from users.models import User

    clients, per_client, tasks = map(int, sys.argv[1:4])
    owner = User.objects.create(email="owner@bench.example", username="owner", password=make_password(None))
    org = create_organization(title="Bench", created_by=owner, legacy_api_tokens_enabled=True)
    owner.active_organization = org
    owner.save()
    project = Project.objects.create(
        title="Bench", created_by=owner, organization=org, maximum_annotations=1,
        label_config='<View><Text name="text" value="$text"/>'
        '<Choices name="answer" toName="text"><Choice value="yes"/><Choice value="no"/></Choices></View>',
    )
    Task.objects.bulk_create(
        [Task(project=project, data={"text": f"Question {i}?"}) for i in range(tasks)], batch_size=2000
    )
    unusable = make_password(None)
    users = User.objects.bulk_create(
        [User(email=f"a{c}-{a}@bench.example", username=f"a{c}-{a}", password=unusable, active_organization=org)
         for c in range(clients) for a in range(per_client)]
    )
    OrganizationMember.objects.bulk_create([OrganizationMember(user=user, organization=org) for user in users])
    keys = [t.key for t in Token.objects.bulk_create([Token(user=user, key=Token.generate_key()) for user in users])]
    print(json.dumps({"project": project.pk, "tokens": [keys[c * per_client:(c + 1) * per_client]
                                                          for c in range(clients)]}))
    """
)


def peer_env(venv: Path, database_url: str, data_dir: Path) -> tuple[dict[str, str], Path]:
    parts = urlparse(database_url)
    package = next((venv / "lib").glob("python3*/site-packages/label_studio"))
    env = {
        **os.environ,
        "DJANGO_DB": "default",
        "POSTGRE_NAME": parts.path.lstrip("/"),
        "POSTGRE_USER": parts.username or "postgres",
        "POSTGRE_PASSWORD": parts.password or "",
        "POSTGRE_HOST": parts.hostname or "127.0.0.1",
        "POSTGRE_PORT": str(parts.port or 5432),
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "core.settings.label_studio",
        "DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        # No telemetry: this machine reaches no host but the package registries (and a benchmark sends nothing).
        "SENTRY_DSN": "",
        "SENTRY_RATE": "0",
        "FRONTEND_SENTRY_DSN": "",
        "COLLECT_ANALYTICS": "false",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "PYTHONPATH": str(package),
    }
    return env, package


def wait_up(url: str) -> None:
    for _ in range(300):
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"no answer from {url}")


def gunicorn(python: Path, app: str, port: int, workers: int, cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [str(python), "-m", "gunicorn", app, "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
         "--threads", "8", "--log-level", "warning", "--timeout", "120", "--keep-alive", "75"],
        cwd=cwd, env=env,
    )  # fmt: skip


def side_figures(latencies: list[float], seconds: float) -> dict:
    return {
        "cycles_per_s": round(len(latencies) / seconds, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(percentile_95(latencies), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label-studio-venv", type=Path, required=True)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--per-client", type=int, default=16, help="annotators per client and side (one cycle each)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--fresh-peer", action="store_true", help="migrate the peer's database anew")
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    )
    args = parser.parse_args()
    stem = args.database_url.rsplit("/", 1)[1]

    # The peer's database: migrated once into a template (Label Studio's migrations take minutes), copied anew for
    # every run.
    base = args.database_url.rsplit("/", 1)[0]
    template, working = f"{stem}_bench_label_studio_migrated", f"{stem}_bench_label_studio"
    data_dir = Path(os.environ.get("TMPDIR", "/tmp")) / working
    python = args.label_studio_venv / "bin" / "python"
    import psycopg

    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template]).fetchone()
    if args.fresh_peer or not exists:
        env, package = peer_env(args.label_studio_venv, f"{base}/{template}", data_dir)
        fresh_postgres_database(args.database_url, template)
        data_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(python), "manage.py", "migrate", "-v", "0"], cwd=package, env=env, check=True)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{working}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{working}" TEMPLATE "{template}"')
    data_dir.mkdir(parents=True, exist_ok=True)
    env, package = peer_env(args.label_studio_venv, f"{base}/{working}", data_dir)
    cycles = args.clients * args.per_client
    built = subprocess.run(
        [str(python), "-c", PEER_WORLD, str(args.clients), str(args.per_client), str(cycles + args.clients)],
        cwd=package, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    peer = json.loads(built.stdout.strip().splitlines()[-1])

    database_url = fresh_postgres_database(args.database_url, f"{stem}_bench_claim_open")
    setup_django(database_url)
    ours_tokens = prepare(args.clients, args.per_client, 0)

    logging.getLogger("httpx").setLevel(logging.WARNING)
    ours_port, peer_port = free_port(), free_port()
    ours_env = server_env(database_url)
    servers = [
        gunicorn(Path(sys.executable), "config.wsgi", ours_port, args.web_workers, ROOT, ours_env),
        gunicorn(python, "core.wsgi:application", peer_port, args.web_workers, package, env),
    ]
    ours_base, peer_base = f"http://127.0.0.1:{ours_port}", f"http://127.0.0.1:{peer_port}"
    try:
        wait_up(f"{ours_base}/healthz")
        wait_up(f"{peer_base}/health/")

        def ours(http: httpx.Client, client_tokens: list[str]):
            for token in client_tokens:
                headers = {"Authorization": f"Token {token}"}
                started = time.perf_counter()
                claimed = http.post("/api/projects/bench/queue/next/", headers=headers)
                claimed.raise_for_status()
                instance = claimed.json()["instance"]
                http.get(f"/api/instances/{instance}/workspace/", headers=headers).raise_for_status()
                yield (instance, (time.perf_counter() - started) * 1000)

        def label_studio(http: httpx.Client, client_tokens: list[str]):
            for token in client_tokens:
                started = time.perf_counter()
                response = http.get(
                    f"/api/projects/{peer['project']}/next/", headers={"Authorization": f"Token {token}"}
                )
                response.raise_for_status()
                yield (response.json()["id"], (time.perf_counter() - started) * 1000)

        # One untimed cycle a client on each side: every server thread opens its connection first.
        run_clients(ours_base, [tokens[:1] for tokens in ours_tokens], ours)
        run_clients(peer_base, [tokens[:1] for tokens in peer["tokens"]], label_studio)
        size = max(1, (args.per_client - 1) // args.rounds)
        rounds = []
        for number, start in enumerate(range(1, args.per_client, size)):
            sides = [("ours", ours_base, ours_tokens, ours), ("label_studio", peer_base, peer["tokens"], label_studio)]
            if number % 2:
                sides.reverse()
            measured = {
                name: run_clients(base, [tokens[start : start + size] for tokens in all_tokens], work)
                for name, base, all_tokens, work in sides
            }
            rounds.append(measured)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)

    result: dict = {"clients": args.clients, "rounds": []}
    for name in ("ours", "label_studio"):
        claimed = [key for one in rounds for key, _ in one[name][1]]
        result[f"{name}_distinct"] = len(claimed) == len(set(claimed))
        result[name] = side_figures(
            [latency for one in rounds for _, latency in one[name][1]], sum(one[name][0] for one in rounds)
        )
    for one in rounds:
        figures = {name: side_figures([lat for _, lat in one[name][1]], one[name][0]) for name in one}
        figures["ratio"] = round(figures["ours"]["cycles_per_s"] / figures["label_studio"]["cycles_per_s"], 2)
        result["rounds"].append(figures)
    result["ratio"] = round(result["ours"]["cycles_per_s"] / result["label_studio"]["cycles_per_s"], 2)
    result["round_ratios"] = [one["ratio"] for one in result["rounds"]]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
