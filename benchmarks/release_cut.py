"""Print JSON with the queries and seconds of cutting releases of 100, 1,000 and 10,000 validated instances.

Each size gets its own project: papers of 5 short contexts (a table and a paragraph citing it) with 10 validated
instances each, one in five marking the paragraph as wrongly extracted. The cut runs inline (`release_cut`, the
service every door calls). Target: queries per item do not grow, i.e. queries(10k)/queries(1k) <= 10.

    .venv/bin/python benchmarks/release_cut.py [--sizes 100 1000 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONTEXTS_PER_PAPER = 5
ITEMS_PER_CONTEXT = 10


def generate(size: int) -> tuple[object, int]:
    """A project with `size` validated instances in one batch (created through the lifecycle); (project, batch id)."""
    from django.db import transaction

    from curation.models import Batch, Context, Paper, Paragraph, Table
    from curation.services.lifecycle import instance_create
    from curation.services.projects import project_create
    from curation.states import Status

    slug = f"bench-cut-{size}"
    project = project_create(name=slug, slug=slug, creator=None)
    with transaction.atomic():
        batch = Batch.objects.create(project=project, name="Batch")
        made = 0
        paper_index = 0
        while made < size:
            paper = Paper.objects.create(project=project, title=f"Paper {paper_index}", origin="bench")
            paper_index += 1
            for c in range(CONTEXTS_PER_PAPER):
                table = Table.objects.create(
                    paper=paper, order=c, label=f"tab:{c}", cells=[["Model", "Acc"], ["A", "8"], ["B", "9"]]
                )
                paragraph = Paragraph.objects.create(paper=paper, order=c, section="Results", text="A reaches 8.")
                paragraph.mentioned_tables.set([table])
                context = Context.objects.create(
                    project=project, paper=paper, kind=Context.Kind.SHORT, paragraph=paragraph
                )
                context.tables.set([table])
                for i in range(ITEMS_PER_CONTEXT):
                    if made == size:
                        break
                    instance = instance_create(
                        project_id=project.pk,
                        actor=None,
                        initial_status=Status.VALIDATED,
                        batch=batch,
                        context=context,
                        question=f"Which model reaches 8 ({made})?",
                        answer=["A"],
                        answer_form="short",
                        answer_source="table",
                        answer_type="span",
                        relevant_tables=[table],
                    )
                    if i % 5 == 0:
                        instance.excluded_paragraphs.set([paragraph])
                    made += 1
    return project, batch.pk


def measure(size: int) -> dict:
    from django.db import connection

    from curation.releases.services.cut import release_cut

    project, batch_id = generate(size)
    count = 0

    def counted(execute, sql, params, many, context):
        # Every statement sent to the database (a bulk insert is one); not the query log, which stops at 9,000.
        nonlocal count
        count += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(counted):
        started = time.perf_counter()
        release = release_cut(project=project, actor=None, name="bench", batch_ids=[batch_id])
        seconds = time.perf_counter() - started
    assert release.item_count == size
    return {
        "items": size,
        "queries": count,
        "seconds": round(seconds, 2),
        "queries_per_item": round(count / size, 4),
        "items_per_second": round(size / seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _django import setup_django

    setup_django(os.environ.get("BENCH_DATABASE_URL"))
    results = {str(size): measure(size) for size in args.sizes}
    report: dict = {"cuts": results}
    if "1000" in results and "10000" in results:
        report["queries_10k_over_1k"] = round(results["10000"]["queries"] / results["1000"]["queries"], 2)
        report["queries_per_item_does_not_grow"] = (
            results["10000"]["queries_per_item"] <= results["1000"]["queries_per_item"]
        )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
