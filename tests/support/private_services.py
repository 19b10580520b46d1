"""Throwaway Redis and PostgreSQL servers of a test's own, on free ports, that the test may stop, restart or kill
without disturbing the machine's shared ones (used by the outage tests and benchmarks/outage.py)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_available() -> bool:
    return shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None


class PrivateRedis:
    """A redis-server on `port` (no persistence) that can be stopped and started again on the same port."""

    def __init__(self, port: int, directory: Path) -> None:
        self.port, self.directory, self.process = port, Path(directory), None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            command, cwd=self.directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for _ in range(200):
            ping = subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True)
            if ping.stdout.strip() == b"PONG":
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


def _pg_binary(name: str) -> str | None:
    candidate = PG_BIN / name
    return str(candidate) if candidate.exists() else shutil.which(name)


def postgres_unavailable_reason() -> str | None:
    """Why a private PostgreSQL cannot be started here (None when it can)."""
    if _pg_binary("initdb") is None or _pg_binary("pg_ctl") is None:
        return "needs PostgreSQL's initdb and pg_ctl"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a postgres user to own a private cluster"
        if shutil.which("runuser") is None:
            return "running as root without runuser"
    return None


class PrivatePostgres:
    """A PostgreSQL cluster of its own (initdb, trust authentication, socket and data in a temporary directory) on
    `port`, run as the `postgres` user when we are root. `restart()` is a real server restart: every connection
    is cut. `destroy()` stops it and removes its files."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.directory = Path(tempfile.mkdtemp(prefix="tatcurate-pg-"))
        self.data = self.directory / "data"
        self.log = self.directory / "server.log"

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run([*prefix, *command], capture_output=True, text=True, check=check, cwd=self.directory)

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def create(self) -> PrivatePostgres:
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
        initdb = _pg_binary("initdb")
        self._run(initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        with open(self.data / "postgresql.auto.conf", "a") as conf:
            conf.write("max_connections = 200\n")
        self._options = options
        self.start()
        return self

    def _ctl(self, action: str, *extra: str) -> None:
        self._run(_pg_binary("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", self._options, "-w",
                  *extra, action)  # fmt: skip

    def start(self) -> None:
        self._ctl("start")

    def stop(self) -> None:
        self._ctl("stop", "-m", "fast")

    def restart(self) -> None:
        self._ctl("restart", "-m", "fast")

    def create_database(self, name: str, *, schema_from: str | None = None) -> str:
        """Create database `name`; its URL. `schema_from` (the URL of a migrated database of the same code) gives it
        that database's tables, indexes and migration records, not its other rows: what `migrate` would build on an
        empty database (its data migrations change existing rows only), in a second or two where migrating takes
        a minute on a busy machine (rendering the models' states, not the SQL)."""
        self._run(_pg_binary("createdb") or "createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        if schema_from is not None:
            dump = _pg_binary("pg_dump") or "pg_dump"
            schema = subprocess.run(
                [dump, "--schema-only", "--no-owner", "--no-privileges", "-d", schema_from],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            records = subprocess.run(
                [dump, "--data-only", "--table", "django_migrations", "-d", schema_from],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            subprocess.run(
                [_pg_binary("psql") or "psql", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url(name)],
                input=schema + records, capture_output=True, text=True, check=True,
            )  # fmt: skip
        return self.url(name)

    def destroy(self) -> None:
        if self.data.exists():
            self._run(_pg_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.directory, ignore_errors=True)
