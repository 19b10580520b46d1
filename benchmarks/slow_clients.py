"""Ordinary authenticated requests while 200 idle and 50 slow-sending connections are held open; prints JSON.

Starts the web tier in the shape scripts/start runs (`--shape asgi`, config/gunicorn_conf.py) or in the
shapes it replaced (`--shape gthread`: 2 workers x 4 threads; `--shape sync`: 4 sync workers, the old README
production line), on a fresh SQLite database. Rounds alternate an unloaded phase and a loaded phase, so a slow
moment of the shared machine weighs on both alike. The attackers keep their connections open for the whole
loaded phase: an idle one that the server closes reconnects, a slow sender drips one header byte every
--drip-s seconds and never finishes its request. Target: loaded p95 <= 2x unloaded p95, 0 failures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = {
    "asgi": ["-c", "python:config.gunicorn_conf", "config.asgi"],
    "gthread": ["config.wsgi", "--workers", "2", "--threads", "4"],
    "sync": ["config.wsgi", "--workers", "4"],
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def prepare(data_dir: str) -> tuple[str, str]:
    """Migrate a fresh database and return (API token, session id) of a manager with a project."""
    from benchmarks._django import setup_django

    setup_django(f"sqlite:///{data_dir}/bench.sqlite3")
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from rest_framework.authtoken.models import Token

    from curation.models import Membership, Project
    from curation.states import Role

    user = get_user_model().objects.create_user("bench-manager", password="bench-password")
    project = Project.objects.create(slug="bench", name="Bench project")
    Membership.objects.create(project=project, user=user, role=Role.MANAGER)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return Token.objects.create(user=user).key, session.session_key


class Attack:
    """Hold `idle` silent and `slow` dripping connections open on one event loop in a background thread."""

    def __init__(self, port: int, *, idle: int, slow: int, drip_s: float) -> None:
        self.port, self.idle, self.slow, self.drip_s = port, idle, slow, drip_s
        self.open_now = 0
        self.peak_open = 0
        self.reconnects = 0
        self.loop = asyncio.new_event_loop()
        self.stopping: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Attack:
        self.thread.start()
        deadline = time.monotonic() + 30
        while self.open_now < self.idle + self.slow and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # let the server hand the partial requests to whatever will read them
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.stopping is not None
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(timeout=30)

    def _run(self) -> None:
        self.loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self.stopping = asyncio.Event()
        holders = [self._hold(dripping=False) for _ in range(self.idle)]
        holders += [self._hold(dripping=True) for _ in range(self.slow)]
        tasks = [asyncio.ensure_future(holder) for holder in holders]
        await self.stopping.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _hold(self, *, dripping: bool) -> None:
        assert self.stopping is not None
        request = b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow-client\r\nX-Padding: " + b"a" * 4000
        while not self.stopping.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.2)
                continue
            self.open_now += 1
            self.peak_open = max(self.peak_open, self.open_now)
            try:
                position = 0
                while not self.stopping.is_set():
                    if dripping and position < len(request):
                        writer.write(request[position : position + 1])
                        position += 1
                        await writer.drain()
                    # Either the drip interval passes or the server closes the connection (EOF).
                    read = asyncio.ensure_future(reader.read(65536))
                    done, _ = await asyncio.wait({read}, timeout=self.drip_s)
                    if not done:
                        read.cancel()
                        continue
                    if not read.result():
                        break
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                self.open_now -= 1
                writer.close()
            self.reconnects += 1


def timed_requests(base: str, token: str, session_id: str, *, count: int, threads: int, timeout_s: float):
    """Send `count` authenticated requests (a page and an API list, alternately); return latencies and failures."""

    def one_client(share: int) -> tuple[list[float], list[str]]:
        latencies, failures = [], []
        with httpx.Client(base_url=base, timeout=timeout_s, cookies={"sessionid": session_id}) as client:
            for index in range(share):
                started = time.perf_counter()
                try:
                    if index % 2:
                        response = client.get("/api/projects/", headers={"Authorization": f"Token {token}"})
                    else:
                        response = client.get("/p/bench/")
                    if response.status_code != 200:
                        failures.append(f"HTTP {response.status_code}")
                        continue
                except httpx.HTTPError as error:
                    failures.append(type(error).__name__)
                    continue
                latencies.append((time.perf_counter() - started) * 1000)
        return latencies, failures

    shares = [count // threads + (i < count % threads) for i in range(threads)]
    latencies: list[float] = []
    failures: list[str] = []
    with ThreadPoolExecutor(threads) as pool:
        for part_latencies, part_failures in pool.map(one_client, shares):
            latencies += part_latencies
            failures += part_failures
    return latencies, failures


def p95(values: list[float]) -> float | None:
    if len(values) < 2:
        return round(values[0], 1) if values else None
    return round(statistics.quantiles(values, n=20)[18], 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="asgi")
    parser.add_argument("--idle", type=int, default=200)
    parser.add_argument("--slow", type=int, default=50)
    parser.add_argument("--drip-s", type=float, default=0.5, help="seconds between two bytes of a slow sender")
    parser.add_argument("--requests", type=int, default=60, help="timed requests per phase")
    parser.add_argument("--threads", type=int, default=4, help="concurrent ordinary clients")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout-s", type=float, default=10.0, help="an ordinary request slower than this failed")
    args = parser.parse_args()

    logging.getLogger("httpx").setLevel(logging.WARNING)
    data_dir = tempfile.mkdtemp(prefix="tatcurate-bench-slow-")
    os.environ["TATCURATE_DATA_DIR"] = data_dir
    token, session_id = prepare(data_dir)
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{data_dir}/bench.sqlite3", "DJANGO_DEBUG": "true"}
    command = [sys.executable, "-m", "gunicorn", *SHAPES[args.shape], "--bind", f"127.0.0.1:{port}"]
    server = subprocess.Popen([*command, "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    unloaded: list[float] = []
    loaded: list[float] = []
    failures = {"unloaded": [], "loaded": []}
    held = {"peak_open": 0, "reconnects": 0}
    try:
        for _ in range(150):
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        timed_requests(base, token, session_id, count=args.threads * 2, threads=args.threads, timeout_s=30)  # warm
        for _ in range(args.rounds):
            latencies, failed = timed_requests(
                base, token, session_id, count=args.requests, threads=args.threads, timeout_s=args.timeout_s
            )
            unloaded += latencies
            failures["unloaded"] += failed
            with Attack(port, idle=args.idle, slow=args.slow, drip_s=args.drip_s) as attack:
                latencies, failed = timed_requests(
                    base, token, session_id, count=args.requests, threads=args.threads, timeout_s=args.timeout_s
                )
                held["peak_open"] = max(held["peak_open"], attack.peak_open)
                held["reconnects"] += attack.reconnects
            loaded += latencies
            failures["loaded"] += failed
    finally:
        server.terminate()
        server.wait(timeout=30)
    unloaded_p95, loaded_p95 = p95(unloaded), p95(loaded)
    ratio = round(loaded_p95 / unloaded_p95, 2) if unloaded_p95 and loaded_p95 else None
    print(
        json.dumps(
            {
                "benchmark": "slow_clients",
                "shape": args.shape,
                "server": " ".join(["gunicorn", *SHAPES[args.shape]]),
                "idle_connections": args.idle,
                "slow_connections": args.slow,
                "attack_connections_peak_open": held["peak_open"],
                "attack_reconnects": held["reconnects"],
                "requests_per_phase": args.requests * args.rounds,
                "unloaded_p95_ms": unloaded_p95,
                "loaded_p95_ms": loaded_p95,
                "ratio": ratio,
                "ratio_target": 2.0,
                "failures": len(failures["unloaded"]) + len(failures["loaded"]),
                "failures_loaded": len(failures["loaded"]),
                "failure_kinds": sorted(set(failures["unloaded"] + failures["loaded"])),
                "passed": bool(ratio is not None and ratio <= 2.0 and not failures["loaded"] + failures["unloaded"]),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
