"""A test worker's database, migrated anew beside copied from the migrated template
(tests/support/template_database.py), side by side in one run, alternating, on SQLite and (with --database-url)
PostgreSQL. Both end with the `manage.py migrate` a test worker's set-up runs (on the copy it finds nothing to
apply), each in a process of its own, as the set-up's cost is paid once per worker. Prints JSON: the median seconds
of each way and their ratio.

    .venv/bin/python benchmarks/test_database_setup.py [--database-url postgres://…/db] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.template_database import postgres_template, sqlite_copy  # noqa: E402


def _migrate(database_url: str, data_dir: str) -> float:
    started = time.perf_counter()
    env = {**os.environ, "DATABASE_URL": database_url, "TATCURATE_DATA_DIR": data_dir}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return time.perf_counter() - started


def _sqlite_ways(folder: Path) -> dict:
    def migrated(round_number: int) -> float:
        return _migrate(f"sqlite:///{folder / f'migrated-{round_number}.sqlite3'}", str(folder))

    def copied(round_number: int) -> float:
        target = folder / f"copied-{round_number}.sqlite3"
        started = time.perf_counter()
        sqlite_copy(target)
        return time.perf_counter() - started + _migrate(f"sqlite:///{target}", str(folder))

    return {"migrated": migrated, "copied_from_template": copied}


def _postgres_ways(url: str, folder: Path) -> dict:
    import dj_database_url
    import psycopg

    os.environ["DATABASE_URL"] = url
    database = dj_database_url.parse(url)
    template = postgres_template(database)
    server = url.rsplit("/", 1)[0]

    def create(name: str, suffix: str = "") -> tuple[str, float]:
        started = time.perf_counter()
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}"{suffix}')
        return f"{server}/{name}", time.perf_counter() - started

    def migrated(round_number: int) -> float:
        created, seconds = create(f"bench_setup_migrated_{round_number}")
        return seconds + _migrate(created, str(folder))

    def copied(round_number: int) -> float:
        created, seconds = create(f"bench_setup_copied_{round_number}", f' TEMPLATE "{template}"')
        return seconds + _migrate(created, str(folder))

    def drop(repeats: int) -> None:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            for round_number in range(repeats):
                for way in ("migrated", "copied"):
                    admin.execute(f'DROP DATABASE IF EXISTS "bench_setup_{way}_{round_number}"')

    return {"migrated": migrated, "copied_from_template": copied, "_drop": drop}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="a PostgreSQL server's URL (databases bench_setup_* are made there)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tatcurate-bench-setup-"))
    backends = {"sqlite": _sqlite_ways(folder)}
    if args.database_url:
        backends["postgresql"] = _postgres_ways(args.database_url, folder)
    result: dict = {"repeats": args.repeats, "cpu_count": os.cpu_count()}
    try:
        for backend, ways in backends.items():
            drop = ways.pop("_drop", None)
            seconds: dict[str, list[float]] = {way: [] for way in ways}
            for round_number in range(args.repeats):
                for way, run in ways.items():  # alternating, so both see the same machine
                    seconds[way].append(run(round_number))
            if drop:
                drop(args.repeats)
            medians = {way: round(statistics.median(values), 3) for way, values in seconds.items()}
            result[backend] = {
                "median_s": medians,
                "samples_s": {way: [round(value, 3) for value in values] for way, values in seconds.items()},
                "ratio_migrated_over_copied": round(medians["migrated"] / medians["copied_from_template"], 2),
            }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
