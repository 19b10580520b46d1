"""Wall time of the test suite on the embedded defaults (SQLite + filesystem broker), this tree beside a baseline.

    .venv/bin/python benchmarks/suite_time.py --baseline main [pytest args, default: tests]

Each tree is a `git archive` of a commit (HEAD for this one) unpacked into a temporary directory, run with this
checkout's virtualenv and its own data directory, one after the other in the same window, so both see the same
machine. Each runs with its own pytest configuration (pyproject.toml: from pytest-xdist on, one worker per core),
as its `scripts/test` would. Prints one JSON object: seconds, passed/failed/skipped counts and the load average
around each run, and after/before.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected)")


def _unpack(ref: str, into: Path) -> Path:
    """The tree of `ref` in `into`, with this checkout's virtualenv linked in."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / ".venv").symlink_to(ROOT / ".venv")
    return into


def _time_suite(tree: Path, pytest_args: list[str]) -> dict[str, object]:
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env["TATCURATE_DATA_DIR"] = str(tree / "var" / "suite-time")
    load_before = [round(x, 2) for x in os.getloadavg()]
    started = time.monotonic()
    result = subprocess.run(
        [str(tree / ".venv" / "bin" / "pytest"), "-q", "-p", "no:cacheprovider", *pytest_args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - started
    # pytest's closing line: the last that counts outcomes (with -qq it may not be the very last line).
    closing = [line for line in result.stdout.splitlines() if re.search(r"\d+ (passed|failed|errors?)\b", line)]
    last = closing[-1].strip("= ") if closing else ""
    counts = {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in SUMMARY.findall(last)}
    return {
        "seconds": round(seconds, 1),
        "exit_code": result.returncode,
        "summary": last,
        **counts,
        # The machine may be shared: the 1-minute load average as the run began and ended says how busy it was.
        "load_average_at_start": load_before,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git ref of the 'before' tree (default: main)")
    parser.add_argument("--ref", default="HEAD", help="git ref of the 'after' tree (default: HEAD)")
    parser.add_argument("pytest_args", nargs="*", default=["tests"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="suite-time-") as scratch:
        before = _time_suite(_unpack(args.baseline, Path(scratch) / "before"), args.pytest_args)
        after = _time_suite(_unpack(args.ref, Path(scratch) / "after"), args.pytest_args)
    print(
        json.dumps(
            {
                "suite": " ".join(args.pytest_args),
                "database": "sqlite (embedded defaults)",
                "cpus": os.cpu_count(),
                "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                "before": {"ref": args.baseline, **before},
                "after": {"ref": args.ref, **after},
                "after_over_before": round(after["seconds"] / before["seconds"], 3) if before["seconds"] else None,
            },
            indent=2,
        )
    )
    sys.exit(0 if before["exit_code"] == after["exit_code"] == 0 else 1)


if __name__ == "__main__":
    main()
