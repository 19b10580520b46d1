"""Database queries and server time of the workspace page and of the workspace API, for a short paper and a long one
(JSON).

The page (`/p/<slug>/work/N/`, a session) shows the whole paper; the API (`GET /api/instances/N/workspace/`, a token:
what an annotator's client opens after each claim) shows the context's own paragraph and tables and pages the rest.
Server time is the median of `--repeat` warm requests through the Django test client (no network), with the
settings' DEBUG (on unless DJANGO_DEBUG=false). The query count must not grow with the paper: `query_ratio` (long ÷
short) should be 1.0, for the page and for the API (`api_query_ratio`). SQLite unless `--database-url` names a
PostgreSQL server (a fresh database `<its name>_bench_workspace` is made on it).

With `--baseline DIR` (another checkout, e.g. `git archive main | tar -x -C DIR`), this tree and DIR are measured side
by side: each runs in a process of its own with its own database (`…_bench_workspace_this` / `_baseline`) and its
own code, the same world is built in each, and every request is timed in alternation, one of each tree per round, the
order swapped every round (each timed request after an untimed one of its own, as the other process ran between);
printed: both trees' figures and this ÷ baseline per request, of the medians and paired (the median of the rounds'
own ratios), with the load average at start and end.
Usage: python benchmarks/workspace_queries.py [--repeat 20] [--database-url postgres://…/name] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _django import fresh_postgres_database, setup_django


def build(paragraphs: int, tables: int):
    from curation.batches.services import batch_create, batch_open
    from curation.models import Context, Paper, Paragraph, Project, Table
    from curation.services.lifecycle import instance_create

    project = Project.objects.get(slug="bench")
    paper = Paper.objects.create(project=project, title=f"paper with {paragraphs} paragraphs")
    made = []
    for i in range(tables):
        cells = [
            ["Model", *[f"Col {c}" for c in range(6)]],
            *[[f"M{r}", *[f"{r * c}.5" for c in range(6)]] for r in range(25)],
        ]
        made.append(
            Table.objects.create(paper=paper, order=i, number=str(i + 1), caption=f"Table {i}", cells=cells, grid=cells)
        )
    for i in range(paragraphs):
        text = f"Paragraph {i} discusses Table {i % tables + 1} and what it shows about the models. " * 4
        paragraph = Paragraph.objects.create(paper=paper, order=i, section=f"Section {i // 10}", text=text)
        paragraph.mentioned_tables.add(made[i % tables])
    context = Context.objects.create(project=project, paper=paper, kind="short", paragraph=paper.paragraphs.first())
    context.tables.set(made[:1])
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name=f"b{paragraphs}").pk, actor=None)
    return instance_create(project_id=project.pk, actor=None, context=context, batch=batch, question="Q?", answer=["1"])


SIZES = (("short", 6, 1), ("long", 120, 8))


def world(database_url: str | None) -> tuple[dict, dict]:
    """Django set up on `database_url` and the benchmark's world in it: an annotator holding one instance on a short
    paper and one on a long one. ({"page"/"api": client}, {label: {"page"/"api": url, "paragraphs", "tables"}})."""
    setup_django(database_url)
    from django.contrib.auth import get_user_model
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from curation.services.lifecycle import instance_transition
    from curation.services.projects import membership_add, project_create

    project = project_create(name="Bench", slug="bench", creator=None)
    user = get_user_model().objects.create_user("bencher", password="x")
    membership_add(project=project, actor=None, username="bencher", role="annotator", is_qualified=True)
    page = Client()
    page.force_login(user)
    clients = {"page": page, "api": Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")}
    urls = {}
    for label, paragraphs, tables in SIZES:
        instance = build(paragraphs, tables)
        instance_transition(instance_id=instance.pk, target="in_refinement", actor=user)
        urls[label] = {
            "paragraphs": paragraphs,
            "tables": tables,
            "page": f"/p/bench/work/{instance.pk}/",
            "api": f"/api/instances/{instance.pk}/workspace/",
        }
    return clients, urls


def count_queries(client, url: str) -> int:
    """The queries of one request (which must answer 200)."""
    from django.db import connection

    queries: list[str] = []

    def count(execute, sql, params, many, context):
        queries.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.get(url)
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}: {response.content[:300]!r}")
    return len(queries)


def timed(client, url: str) -> float:
    started = time.perf_counter()
    client.get(url)
    return (time.perf_counter() - started) * 1000


def figures(urls: dict, queries: dict, timings: dict) -> dict:
    """The printed figures of one tree: per size its queries and median ms, page and API, and long ÷ short."""
    results: dict = {}
    for label, _, _ in SIZES:
        results[label] = {
            "paragraphs": urls[label]["paragraphs"],
            "tables": urls[label]["tables"],
            "queries": queries[label]["page"],
            "server_ms_median": round(statistics.median(timings[label]["page"]), 2),
            "api_queries": queries[label]["api"],
            "api_server_ms_median": round(statistics.median(timings[label]["api"]), 2),
        }
    results["query_ratio"] = results["long"]["queries"] / results["short"]["queries"]
    results["time_ratio"] = round(results["long"]["server_ms_median"] / results["short"]["server_ms_median"], 2)
    results["api_query_ratio"] = results["long"]["api_queries"] / results["short"]["api_queries"]
    results["api_time_ratio"] = round(
        results["long"]["api_server_ms_median"] / results["short"]["api_server_ms_median"], 2
    )
    return results


def serve(tree: str, database_url: str | None) -> None:
    """A child of `--baseline`: the world of `tree`'s code, then one line in (`label kind`), one line out (ms)."""
    import _django

    _django.ROOT = Path(tree).resolve()  # setup_django puts the tree first on sys.path
    clients, urls = world(database_url)
    from django.db import connection

    queries = {label: {kind: count_queries(clients[kind], urls[label][kind]) for kind in clients} for label in urls}
    print(json.dumps({"database": connection.vendor, "urls": urls, "queries": queries}), flush=True)
    for line in sys.stdin:
        label, kind = line.split()
        timed(clients[kind], urls[label][kind])  # the other tree ran in between: one untimed request first
        print(round(timed(clients[kind], urls[label][kind]), 3), flush=True)


def side_by_side(args: argparse.Namespace) -> dict:
    """This tree and `--baseline`'s, each in a process of its own on a database of its own, timed in alternation."""
    trees = {"this": str(Path(__file__).resolve().parents[1]), "baseline": args.baseline}
    children = {}
    for name, tree in trees.items():
        command = [sys.executable, __file__, "--serve", tree]
        if args.database_url:
            stem = args.database_url.rsplit("/", 1)[1]
            command += ["--database-url", fresh_postgres_database(args.database_url, f"{stem}_bench_workspace_{name}")]
        # In the tree's own folder: Celery's Django fixup puts the working folder first on sys.path.
        children[name] = subprocess.Popen(command, cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = {name: json.loads(child.stdout.readline()) for name, child in children.items()}
    timings = {name: {label: {"page": [], "api": []} for label, _, _ in SIZES} for name in children}
    names = list(children)
    loads = [os.getloadavg()[0]]
    for number in range(args.repeat):
        for label, _, _ in SIZES:
            for kind in ("page", "api"):
                for name in names if number % 2 == 0 else names[::-1]:
                    children[name].stdin.write(f"{label} {kind}\n")
                    children[name].stdin.flush()
                    timings[name][label][kind].append(float(children[name].stdout.readline()))
    loads.append(os.getloadavg()[0])
    for child in children.values():
        child.stdin.close()
        child.wait(timeout=60)
    results = {
        "database": ready["this"]["database"],
        "baseline": args.baseline,
        "load_average_start_end": loads,
        **{name: figures(ready[name]["urls"], ready[name]["queries"], timings[name]) for name in names},
    }
    for label, _, _ in SIZES:  # this ÷ baseline: the paired medians of each round's own ratio beside the medians'
        for kind, key in (("page", "server_ms_median"), ("api", "api_server_ms_median")):
            pairs = zip(timings["this"][label][kind], timings["baseline"][label][kind], strict=True)
            results[f"{kind}_ms_ratio_{label}"] = round(
                results["this"][label][key] / results["baseline"][label][key], 2
            )
            results[f"{kind}_ms_ratio_{label}_paired"] = round(statistics.median(a / b for a, b in pairs), 2)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--database-url", default=None, help="a PostgreSQL server's URL (default: SQLite)")
    parser.add_argument("--baseline", default=None, help="another checkout's tree, measured side by side")
    parser.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.database_url)
        return
    if args.baseline:
        print(json.dumps(side_by_side(args)))
        return
    database_url = None
    if args.database_url:
        stem = args.database_url.rsplit("/", 1)[1]
        database_url = fresh_postgres_database(args.database_url, f"{stem}_bench_workspace")
    clients, urls = world(database_url)
    from django.db import connection

    queries = {label: {kind: count_queries(clients[kind], urls[label][kind]) for kind in clients} for label in urls}
    timings = {
        label: {kind: [timed(clients[kind], urls[label][kind]) for _ in range(args.repeat)] for kind in clients}
        for label in urls
    }
    print(json.dumps({"database": connection.vendor, **figures(urls, queries, timings)}))


if __name__ == "__main__":
    main()
