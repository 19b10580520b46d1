"""The suite's test databases copied from one migrated template instead of each migrated anew.

Every xdist worker of every run needs the schema: migrating it takes 8–9 s a worker against under 2 s for a copy
(benchmarks/test_database_setup.py; three workers and two backends in CI). The first worker that needs it migrates a
template under a file lock, in a `manage.py migrate` of its own; the others, and later runs, copy it: PostgreSQL
creates the worker's database with the template as `TEMPLATE`, and a SQLite file is copied. The template is named
by a hash of the migrations and Django's version, so a changed migration makes a new one; it is built under a
temporary name and renamed, so a build that died is never taken for a template. Django still runs `migrate` on the
copy, which finds nothing to apply (0.7 s): a template that lacked a migration would be completed, not trusted.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
MIGRATED_APPS = ("curation", "annotate", "scoring")
TEMPLATE_PREFIX = "test_tatcurate_template_"


def schema_hash() -> str:
    """What the migrated schema depends on: every migration of the apps, and Django (whose own apps migrate too)."""
    import django

    digest = hashlib.sha256(django.__version__.encode())
    for path in sorted(path for app in MIGRATED_APPS for path in (ROOT / app / "migrations").glob("*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:12]


@contextmanager
def _locked(name: str, *, wait: bool = True) -> Iterator[bool]:
    """The template `name`'s lock, held until the block ends (also when the process dies); without `wait`, whether
    it was free."""
    with open(Path(tempfile.gettempdir()) / f"{name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def migrate_into(database_url: str) -> None:
    """`manage.py migrate` on `database_url`, in a process of its own (this one's settings stay as they are)."""
    env = {**os.environ, "DATABASE_URL": database_url, "TATCURATE_DATA_DIR": tempfile.mkdtemp(prefix="tatcurate-tpl-")}
    completed = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    shutil.rmtree(env["TATCURATE_DATA_DIR"], ignore_errors=True)
    if completed.returncode != 0:
        raise RuntimeError(f"migrating {database_url} failed:\n{completed.stderr[-4000:]}")


def postgres_template(database_url: str) -> str:
    """The name of a migrated database, on the PostgreSQL server of `database_url`, to copy test databases from,
    made once per schema."""
    import psycopg

    name = f"{TEMPLATE_PREFIX}{schema_hash()}"
    url = urlsplit(database_url)._replace(query="")
    with _locked(name), psycopg.connect(urlunsplit(url._replace(path="/postgres")), autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return name
        building = f"{name}_building_{os.getpid()}"
        admin.execute(f'DROP DATABASE IF EXISTS "{building}"')
        admin.execute(f'CREATE DATABASE "{building}"')
        migrate_into(urlunsplit(url._replace(path=f"/{building}")))
        admin.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
        # The templates of earlier schemas go: one another run is copying from stays (it cannot be dropped then).
        for (old,) in admin.execute("SELECT datname FROM pg_database").fetchall():
            if old.startswith(TEMPLATE_PREFIX) and old != name and "_building_" not in old:
                with suppress(psycopg.Error):
                    admin.execute(f'DROP DATABASE "{old}"')
    return name


def sqlite_copy(test_file: str | Path) -> None:
    """The test database file as a copy of a migrated template file, made once per schema."""
    folder = Path(tempfile.gettempdir())
    template = folder / f"tatcurate-test-template-{schema_hash()}.sqlite3"
    with _locked(template.stem):
        if not template.exists():
            building = template.with_name(f"{template.stem}.building-{os.getpid()}.sqlite3")
            building.unlink(missing_ok=True)
            migrate_into(f"sqlite:///{building}")
            with closing(sqlite3.connect(building)) as migrated:  # its WAL folded in: one file holds it all
                migrated.execute("PRAGMA journal_mode=DELETE")
            os.replace(building, template)
            for old in folder.glob("tatcurate-test-template-*.sqlite3"):  # earlier schemas', unless one is in use
                if old != template:
                    with _locked(old.stem, wait=False) as free:
                        if free:
                            old.unlink(missing_ok=True)
        shutil.copyfile(template, test_file)
