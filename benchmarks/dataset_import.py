"""Importing TAT-QA dev (1,668 questions) as validated instances, side by side: the questions inserted a bulk insert
per hundred (`IMPORT_CHUNK`) beside one at a time (a chunk of one), alternating, each into a project of its own.
Prints JSON: the median seconds of each and their ratio, and that both imported every question.

    .venv/bin/python benchmarks/dataset_import.py [--database-url postgres://…/db] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._django import fresh_postgres_database, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="a PostgreSQL server's URL (its database `bench_import` is replaced)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    url = fresh_postgres_database(args.database_url, "bench_import") if args.database_url else None
    used = setup_django(url)

    from curation.datasets import services
    from curation.models import Project
    from tests.scoring.metrics.shared_data import shared_data_dir

    content = (shared_data_dir() / "tatqa" / "tatqa_dataset_dev.json").read_bytes()
    chunks = {"bulk_per_hundred": services.IMPORT_CHUNK, "one_at_a_time": 1}
    seconds: dict[str, list[float]] = {name: [] for name in chunks}
    questions: dict[str, set[int]] = {name: set() for name in chunks}
    for round_number in range(args.repeats):
        for name, chunk in chunks.items():
            project = Project.objects.create(name=f"{name} {round_number}", slug=f"{name}-{round_number}")
            services.IMPORT_CHUNK = chunk
            started = time.perf_counter()
            result = services.dataset_import(
                project=project, actor=None, format="tatqa", source_name="dev", content=content
            )
            seconds[name].append(time.perf_counter() - started)
            questions[name].add(result.counts["questions"])
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    print(
        json.dumps(
            {
                "benchmark": "dataset_import",
                "database": used.split(":", 1)[0],
                "file": "tatqa_dataset_dev.json",
                "questions": {name: sorted(found) for name, found in questions.items()},
                **{f"{name}_s": round(median, 2) for name, median in medians.items()},
                "ratio": round(medians["one_at_a_time"] / medians["bulk_per_hundred"], 2),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
