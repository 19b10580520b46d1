"""Database queries and server time of the workspace page, for a short paper and a long one (JSON).

The query count must not grow with the paper: `query_ratio` (long ÷ short) should be 1.0.
Usage: python benchmarks/workspace_queries.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from _django import setup_django


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


def measure(client, url: str, repeat: int) -> tuple[int, float]:
    from django.db import connection

    queries: list[str] = []

    def count(execute, sql, params, many, context):
        queries.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.get(url)
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}: {response.content[:300]!r}")
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
    return len(queries), statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    setup_django()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from curation.services.lifecycle import instance_transition
    from curation.services.projects import membership_add, project_create

    project = project_create(name="Bench", slug="bench", creator=None)
    user = get_user_model().objects.create_user("bencher", password="x")
    membership_add(project=project, actor=None, username="bencher", role="annotator", is_qualified=True)
    client = Client()
    client.force_login(user)
    results = {}
    for label, paragraphs, tables in (("short", 6, 1), ("long", 120, 8)):
        instance = build(paragraphs, tables)
        instance_transition(instance_id=instance.pk, target="in_refinement", actor=user)
        queries, median_ms = measure(client, f"/p/bench/work/{instance.pk}/", args.repeat)
        results[label] = {
            "paragraphs": paragraphs,
            "tables": tables,
            "queries": queries,
            "server_ms_median": round(median_ms, 2),
        }
        instance_transition(instance_id=instance.pk, target="drafted", actor=user)
    results["query_ratio"] = results["long"]["queries"] / results["short"]["queries"]
    results["time_ratio"] = round(results["long"]["server_ms_median"] / results["short"]["server_ms_median"], 2)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
