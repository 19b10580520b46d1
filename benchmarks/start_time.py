"""The embedded start, timed: seconds from `bash scripts/start` to the first 200 of the login page, on a first start
(the install included, into a .venv of its own) and on a second start of the same, already installed, tree.

    .venv/bin/python benchmarks/start_time.py [--ref HEAD] [--port 8231] [--model-port 8232] [--keep | --tree DIR]

The tree is a `git archive` of `--ref` unpacked into a temporary directory, so the first start installs everything
as on a fresh machine; each start gets the environment of a fresh shell (no DATABASE_URL, REDIS_URL or DJANGO_*
variables: the embedded defaults), binds to 127.0.0.1 on `--port`, runs its model server on `--model-port` and keeps
its data in the tree's own data directory. Once it has answered and printed its URL, every process the start began
is stopped (its process group: web server, workers, model server). Prints one JSON object: both times, when each
start's setup finished and when it printed its URL, and second ÷ 30 s (the target: at most 1.0). `--keep` keeps the
tree (its path is printed); `--tree DIR` starts such a kept tree twice instead, each start then a second one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 30.0
# What scripts/start prints as its setup goes (the last such line: done), and once everything is launched.
MARKERS = {"setup": "setup: ", "running": "TaT-Curate is running"}


def _unpack(ref: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, urllib.error.URLError):
        return None


def _start(tree: Path, *, port: int, model_port: int, timeout_s: float) -> dict[str, Any]:
    """One `bash scripts/start` in `tree`: seconds to the login page's first 200, then stop everything it began."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DJANGO_", "TATCURATE_", "CELERY_", "VIRTUAL_ENV"))
        and name not in ("DATABASE_URL", "REDIS_URL", "PYTHONPATH")
    }
    env.update(PORT=str(port), TATCURATE_LOCAL_MODEL_PORT=str(model_port), TATCURATE_BIND="127.0.0.1")
    log_path = tree / "var" / f"start-{time.time_ns()}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    seen: dict[str, float] = {}
    started = time.monotonic()
    process = subprocess.Popen(
        ["bash", "scripts/start"],
        cwd=tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its own process group: everything it starts is stopped with it
    )

    def read() -> None:
        with open(log_path, "w") as log:
            for line in process.stdout:
                log.write(line)
                for name, marker in MARKERS.items():
                    # setup's last line says it is done; the URL is printed once
                    if marker in line and (name == "setup" or name not in seen):
                        seen[name] = round(time.monotonic() - started, 2)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    url = f"http://127.0.0.1:{port}/login/"
    first_page = None
    try:
        while time.monotonic() - started < timeout_s and process.poll() is None:
            if _status(url) == 200:
                first_page = round(time.monotonic() - started, 2)
                break
            time.sleep(0.2)
        # Then until it has launched everything (it prints its URL), so the stop below meets the whole set.
        while "running" not in seen and time.monotonic() - started < timeout_s and process.poll() is None:
            time.sleep(0.2)
    finally:
        exit_code = process.poll()
        _stop(process)
        reader.join(timeout=10)
    result: dict[str, Any] = {
        "first_page_s": first_page,
        "setup_done_s": seen.get("setup"),
        "url_printed_s": seen.get("running"),
        "log": str(log_path),
    }
    if first_page is None:
        result["failed"] = f"exited with {exit_code}" if exit_code is not None else f"no 200 within {timeout_s:.0f} s"
    return result


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the start's process group (its trap stops its children), SIGKILL to whatever is left."""
    for sig, grace in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            process.poll()  # reaps the script itself, which would otherwise stay in its group as a zombie
            try:
                os.killpg(process.pid, 0)  # anyone of the group still there?
            except ProcessLookupError:
                return
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="HEAD", help="git ref of the tree to start (default: HEAD)")
    parser.add_argument("--port", type=int, default=8231, help="the web server's port (scripts/start's PORT)")
    parser.add_argument("--model-port", type=int, default=8232, help="the local model server's port")
    parser.add_argument("--timeout", type=float, default=1800.0, help="give a start up after this many seconds")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--keep", action="store_true", help="keep the unpacked tree (and its .venv)")
    group.add_argument("--tree", type=Path, help="start this kept tree instead of unpacking one")
    args = parser.parse_args()
    scratch = None
    if args.tree is not None:
        tree = args.tree.resolve()
    else:
        scratch = Path(tempfile.mkdtemp(prefix="tatcurate-start-time-"))
        tree = _unpack(args.ref, scratch / "tree")
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    common = {"port": args.port, "model_port": args.model_port, "timeout_s": args.timeout}
    try:
        first = _start(tree, **common)
        second = _start(tree, **common)
    finally:
        if scratch is not None and not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    if scratch is not None and not args.keep:
        first.pop("log"), second.pop("log")  # removed with the tree
    seconds = second["first_page_s"]
    print(
        json.dumps(
            {
                "ref": args.ref if args.tree is None else None,
                "tree": str(tree) if args.tree is not None or args.keep else None,
                "first_is_install": args.tree is None,
                "cpus": os.cpu_count(),
                "load_average_at_start": load_at_start,
                "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                "first_start": first,
                "second_start": second,
                "target_s": TARGET_S,
                "second_over_target": round(seconds / TARGET_S, 3) if seconds is not None else None,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
