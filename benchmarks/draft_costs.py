"""Queries, seconds and peak memory of *What the drafts cost* at growing project sizes (JSON).

Each size is a project of N drafted instances, each submitted once (a submit revision) with refining time. The
figure is judged by `query_ratio` (queries at the largest size ÷ at the smallest: 1.0, no per-instance query) and
`per_instance_ratio` (seconds per instance at the largest ÷ at the smallest: about 1, linear work). Beside the cold
figure, `cached_seconds` and `cached_queries` time a second view through the project figures cache (what the
dashboard, its CSV and the API read), and `cached_ratio` is cold ÷ cached seconds at the largest size.
Usage: python benchmarks/draft_costs.py [--sizes 1000 10000] [--database-url postgres://…/postgres]
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

from _django import fresh_postgres_database, setup_django

DRAFT = {
    "drafter": "llm",
    "endpoint": {"name": "local", "model": "smollm2"},
    "model": "smollm2",
    "template_hashes": {"question": "a" * 64},
    "question": "Which model is more accurate on the test set?",
    "rationale": "Table 1 gives 87.3 for A and 81.0 for B.",
    "answer": ["A"],
    "answer_type": "span",
    "scale": "",
    "relevant_table_ids": [],
    "raw": {"question": "Question: Which model is more accurate on the test set?" * 4},
}


def build(size: int):
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotate.work.models import WorkTime
    from curation.models import Instance, InstanceRevision
    from curation.services.projects import project_create

    project = project_create(name=f"Bench {size}", slug=f"bench-{size}", creator=None)
    user = get_user_model().objects.create_user(f"bencher-{size}", password="x")
    instances = Instance.objects.bulk_create(
        [
            Instance(project=project, question=DRAFT["question"], answer=["A"], author=user, draft=DRAFT)
            for _ in range(size)
        ],
        batch_size=2000,
    )
    revisions = []
    times = []
    for index, instance in enumerate(instances):
        question = DRAFT["question"] if index % 3 else f"How far ahead is A of B on test, in points? ({index})"
        fields = {**DRAFT, "question": question, "answer": ["A" if index % 2 else "6.3"], "relevant_table_ids": []}
        revisions.append(InstanceRevision(instance=instance, number=1, author=user, kind="submit", fields=fields))
        times.append(WorkTime(user=user, instance=instance, activity="refine", active_seconds=30 + index % 300))
    InstanceRevision.objects.bulk_create(revisions, batch_size=2000)
    WorkTime.objects.bulk_create(times, batch_size=2000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # the statistics autovacuum keeps: without them the plan is quadratic
            cursor.execute("ANALYZE")
    return project


def measure(project) -> dict:
    from django.db import connection

    from annotate.dashboard.draft_costs import draft_costs, draft_costs_cached

    def timed(compute) -> tuple[dict, float, int]:
        queries: list[str] = []

        def count(execute, sql, params, many, context):
            queries.append(sql)
            return execute(sql, params, many, context)

        started = time.perf_counter()
        with connection.execute_wrapper(count):
            figures = compute(project)
        return figures, time.perf_counter() - started, len(queries)

    figures, seconds, queries = timed(draft_costs)
    timed(draft_costs_cached)  # the first view fills the cache (a fresh project: a key of its own)
    cached, cached_seconds, cached_queries = timed(draft_costs_cached)
    assert cached == figures
    tracemalloc.start()  # a second pass for memory: tracing slows Python down, so it is not timed
    draft_costs(project)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "instances": figures["instances"],
        "queries": queries,
        "seconds": round(seconds, 3),
        "cached_queries": cached_queries,
        "cached_seconds": round(cached_seconds, 4),
        "per_instance_ms": round(1000 * seconds / max(figures["instances"], 1), 4),
        "peak_mib": round(peak / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument(
        "--database-url",
        default=None,
        help="a PostgreSQL URL; `<its database>_bench_costs` beside it is dropped and made",
    )
    args = parser.parse_args()
    url = args.database_url
    if url:
        url = fresh_postgres_database(url, f"{url.rsplit('/', 1)[1]}_bench_costs")  # one can't drop its own
    used = setup_django(url)
    results = {size: measure(build(size)) for size in sorted(args.sizes)}
    small, large = results[min(results)], results[max(results)]
    print(
        json.dumps(
            {
                "database": used.split("://", 1)[0],
                "sizes": results,
                "query_ratio": round(large["queries"] / small["queries"], 2),
                "per_instance_ratio": round(large["per_instance_ms"] / small["per_instance_ms"], 2),
                "cached_ratio": round(large["seconds"] / max(large["cached_seconds"], 1e-6), 1),
            }
        )
    )


if __name__ == "__main__":
    main()
