"""What grows in a request, by method rather than by stopwatch: its SQL statements and its Python work, per database.

For each named request of `scale.py` (the same URL, the same person), on each kept scale database: every statement
sent with its time (the fastest of `--repeat` runs, each in a transaction rolled back), then the statements whose
time grows most between the first and the last database, each with `EXPLAIN (ANALYZE, BUFFERS)` on the last one
(`--explain N`), the buffers each SELECT reads at each size (`--buffers`: a figure the machine's load does not
move) and the Python functions whose own time grows most (cProfile, `--profile`). Statements are matched
by their text with the numbers taken out, in the order they are sent.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h2 REDIS_URL=redis://127.0.0.1:6379/6 \\
        .venv/bin/python benchmarks/request_profile.py dashboard releases_page --sizes 10000 100000 [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import ROOT, setup_django

NUMBER = re.compile(r"\b\d+(\.\d+)?\b|'[^']*'")


def _shape(sql: str) -> str:
    return NUMBER.sub("?", " ".join(sql.split()))[:300]


def one_database(url: str, names: list[str], repeat: int, profile: bool) -> dict:
    """Per request: [(statement shape, fastest ms, sql, params)] and, with `profile`, the own time per function."""
    setup_django(url)
    import cProfile
    import pstats

    import scale
    from django.conf import settings
    from django.db import connection, transaction
    from django.test import Client

    settings.DEBUG = True
    ids = scale._ids(0)
    wanted = {name: (who, method, path) for name, who, method, path in scale.requests_to_measure(ids)}
    out: dict = {}
    for name in names:
        who, method, path = wanted[name]
        client = Client(raise_request_exception=True)
        client.force_login(ids[who])
        accept = "application/json" if path.startswith("/api/") else "text/html"
        best: list | None = None
        functions: dict[str, float] = {}
        for attempt in range(repeat + 1):
            statements: list = []

            def timed(execute, sql, params, many, context, statements=statements):
                started = time.perf_counter()
                try:
                    return execute(sql, params, many, context)
                finally:
                    statements.append([_shape(sql), (time.perf_counter() - started) * 1000, sql, params])

            profiler = cProfile.Profile() if profile and attempt == repeat else None
            with transaction.atomic(), connection.execute_wrapper(timed):
                if profiler:
                    profiler.enable()
                response = getattr(client, method)(path, HTTP_ACCEPT=accept)
                if hasattr(response, "streaming_content"):
                    b"".join(response.streaming_content)
                if profiler:
                    profiler.disable()
                transaction.set_rollback(True)
            if not attempt:
                continue  # the warm-up
            if best is None:
                best = statements
            else:
                for kept, new in zip(best, statements, strict=False):
                    kept[1] = min(kept[1], new[1])
            if profiler:
                stats = pstats.Stats(profiler)
                for (file, line, function), (_, calls, own, _cumulative, _) in stats.stats.items():
                    functions[f"{Path(file).name}:{line}:{function} ({calls} calls)"] = own * 1000
        out[name] = {
            "status": response.status_code,
            "statements": [[shape, round(ms, 3), sql, _jsonable(params)] for shape, ms, sql, params in best or []],
            "functions": functions,
        }
    return out


def _jsonable(params):
    try:
        json.dumps(params, default=str)
        return json.loads(json.dumps(params, default=str))
    except TypeError:
        return None


def explain(url: str, sql: str, params) -> str:
    import psycopg

    # Django's %s placeholders are psycopg's; the parameters are the logged ones (dates as text, cast by PostgreSQL).
    with psycopg.connect(url.replace("postgres://", "postgresql://")) as connection:
        rows = connection.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params or None).fetchall()
        connection.rollback()
    return "\n".join(row[0] for row in rows)


def buffers(url: str, statements: list) -> list[int | None]:
    """Shared buffers (8 kB pages, hit or read) each SELECT touches, planning included: what a statement reads,
    whatever else the machine is doing (None for what is not a SELECT or cannot be explained out of its request)."""
    import psycopg

    out: list[int | None] = []
    with psycopg.connect(url.replace("postgres://", "postgresql://")) as connection:
        for _, _, sql, params in statements:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                out.append(None)
                continue
            try:
                (plan,) = connection.execute(
                    f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params or None
                ).fetchone()
            except psycopg.Error:
                connection.rollback()
                out.append(None)
                continue
            top = plan[0]
            total = top["Plan"].get("Shared Hit Blocks", 0) + top["Plan"].get("Shared Read Blocks", 0)
            planning = top.get("Planning", {})
            out.append(total + planning.get("Shared Hit Blocks", 0) + planning.get("Shared Read Blocks", 0))
        connection.rollback()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--top", type=int, default=8, help="statements and functions shown per request")
    parser.add_argument("--explain", type=int, default=3, help="statements explained on the last database")
    parser.add_argument("--profile", action="store_true", help="also profile the Python side (cProfile)")
    parser.add_argument("--buffers", action="store_true", help="also the pages each SELECT reads (load-independent)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1/h2"))
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.url:
        print(json.dumps(one_database(args.url, args.names, args.repeat, args.profile), default=str))
        return
    base = args.database_url.rsplit("/", 1)
    urls = [f"{base[0]}/{base[1]}_scale_{size}" for size in args.sizes]
    results = []
    for url in urls:
        command = [sys.executable, __file__, *args.names, "--url", url, "--repeat", str(args.repeat)]
        completed = subprocess.run([*command, *(["--profile"] if args.profile else [])], capture_output=True, text=True,
                                   cwd=ROOT)  # fmt: skip
        if completed.returncode:
            sys.stderr.write(completed.stderr)
            raise SystemExit(f"{url} failed")
        results.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    print(f"load average {Path('/proc/loadavg').read_text().split()[:3]}")
    small, big = results[0], results[-1]
    for name in args.names:
        a, b = small[name]["statements"], big[name]["statements"]
        print(f"\n== {name}: status {small[name]['status']} → {big[name]['status']}, {len(a)} → {len(b)} statements, "
              f"{sum(s[1] for s in a):.1f} → {sum(s[1] for s in b):.1f} ms in SQL")  # fmt: skip
        if args.buffers:
            pages_a, pages_b = buffers(urls[0], a), buffers(urls[-1], b)
            grown = sorted(
                (pair for pair in zip(pages_a, pages_b, b, strict=False) if None not in pair[:2]),
                key=lambda pair: pair[1] - pair[0],
                reverse=True,
            )
            total_a, total_b = sum(p or 0 for p in pages_a), sum(p or 0 for p in pages_b)
            print(f"   buffers (8 kB pages) of every SELECT: {total_a} → {total_b}")
            for before, after, statement in grown[: args.top]:
                print(f"  {before:8d} → {after:8d} pages  {statement[0][:200]}")
        pairs = [(sa, sb) for sa, sb in zip(a, b, strict=False)]
        mismatched = sum(sa[0] != sb[0] for sa, sb in pairs)
        if mismatched or len(a) != len(b):
            print(f"   ({mismatched} statements differ in shape between the sizes)")
        pairs.sort(key=lambda pair: pair[1][1] - pair[0][1], reverse=True)
        for index, (sa, sb) in enumerate(pairs[: args.top]):
            print(f"  {sa[1]:8.2f} → {sb[1]:8.2f} ms  {sb[0][:200]}")
            if index < args.explain and sb[1] - sa[1] > 0.5:
                print("    " + explain(urls[-1], sb[2], sb[3]).replace("\n", "\n    "))
        if args.profile:
            fa, fb = small[name]["functions"], big[name]["functions"]
            grown = sorted(fb, key=lambda key: fb[key] - fa.get(_calls_free(key, fa), 0), reverse=True)
            print("  Python own time, grown most:")
            for key in grown[: args.top]:
                print(f"  {fa.get(_calls_free(key, fa), 0):8.2f} → {fb[key]:8.2f} ms  {key}")


def _calls_free(key: str, other: dict) -> str:
    """The same function in the other profile (its call count may differ)."""
    stem = key.rsplit(" (", 1)[0]
    return next((k for k in other if k.rsplit(" (", 1)[0] == stem), key)


if __name__ == "__main__":
    main()
