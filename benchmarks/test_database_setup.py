"""A test worker's database, migrated anew beside copied from the migrated template
(tests/support/template_database.py), side by side in one run, alternating, on SQLite and (with --database-url)
PostgreSQL. Both end with the `manage.py migrate` a test worker's set-up runs (on the copy it finds nothing to
apply), each in a process of its own, as the set-up's cost is paid once per worker. Prints JSON: the median seconds
of each way and their ratio.

    .venv/bin/python benchmarks/test_database_setup.py [--database-url postgres://…/db] [--repeats 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._django import fresh_postgres_database  # noqa: E402
from tests.support.template_database import migrate_into, postgres_template, sqlite_copy  # noqa: E402


def _timed(*steps) -> float:
    started = time.perf_counter()
    for step in steps:
        step()
    return time.perf_counter() - started


def _sqlite_ways(folder: Path) -> dict:
    sqlite_copy(folder / "template-made.sqlite3")  # the template made before anything is timed, as on PostgreSQL

    def migrated(round_number: int) -> float:
        return _timed(lambda: migrate_into(f"sqlite:///{folder / f'migrated-{round_number}.sqlite3'}"))

    def copied(round_number: int) -> float:
        target = folder / f"copied-{round_number}.sqlite3"
        return _timed(lambda: sqlite_copy(target), lambda: migrate_into(f"sqlite:///{target}"))

    return {"migrated": migrated, "copied_from_template": copied}


def _postgres_ways(url: str) -> dict:
    template = postgres_template(url)

    def way(name: str, template: str | None):
        def run(round_number: int) -> float:
            database = f"bench_setup_{name}_{round_number}"
            return _timed(lambda: migrate_into(fresh_postgres_database(url, database, template=template)))

        return run

    return {"migrated": way("migrated", None), "copied_from_template": way("copied", template)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="a PostgreSQL server's URL (databases bench_setup_* are made there)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tatcurate-bench-setup-"))
    backends = {"sqlite": _sqlite_ways(folder)}
    if args.database_url:
        backends["postgresql"] = _postgres_ways(args.database_url)
    result: dict = {"repeats": args.repeats, "cpu_count": os.cpu_count()}
    try:
        for backend, ways in backends.items():
            seconds: dict[str, list[float]] = {way: [] for way in ways}
            for round_number in range(args.repeats):
                for way, run in ways.items():  # alternating, so both see the same machine
                    seconds[way].append(run(round_number))
            medians = {way: round(statistics.median(values), 3) for way, values in seconds.items()}
            result[backend] = {
                "median_s": medians,
                "samples_s": {way: [round(value, 3) for value in values] for way, values in seconds.items()},
                "ratio_migrated_over_copied": round(medians["migrated"] / medians["copied_from_template"], 2),
            }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if args.database_url:
            import psycopg

            with psycopg.connect(args.database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
                for way, round_number in itertools.product(("migrated", "copied"), range(args.repeats)):
                    admin.execute(f'DROP DATABASE IF EXISTS "bench_setup_{way}_{round_number}"')
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
