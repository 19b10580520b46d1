"""Helpers for benchmarks: a throwaway database, migrated, and Django set up against it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_django(database_url: str | None = None) -> str:
    """Point Django at `database_url` (default: a fresh SQLite file), migrate, and return the URL used."""
    if database_url is None:
        folder = tempfile.mkdtemp(prefix="tatcurate-bench-")
        database_url = f"sqlite:///{folder}/bench.sqlite3"
        os.environ.setdefault("TATCURATE_DATA_DIR", folder)
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return database_url


def fresh_postgres_database(base_url: str, name: str, *, template: str | None = None) -> str:
    """Drop and create database `name` on the server of `base_url`, as a copy of database `template` when one is
    named (a migrated one: `migrate` then has nothing to do); return its URL. `base_url`'s own database need not
    exist: the statements run in the server's maintenance database."""
    import psycopg

    with psycopg.connect(base_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return base_url.rsplit("/", 1)[0] + f"/{name}"
