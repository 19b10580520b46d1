"""The suite's test databases are copies of one migrated template (tests/support/template_database.py): the copy holds
every migration of the code, a changed migration names a new template, and an earlier schema's template goes."""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from tests.support import template_database
from tests.support.template_database import MIGRATED_APPS, ROOT, schema_hash, sqlite_copy


def test_a_copy_records_every_migration_of_the_code(tmp_path):
    copy = tmp_path / "copy.sqlite3"
    sqlite_copy(copy)
    with closing(sqlite3.connect(copy)) as database:
        applied = {(app, name) for app, name in database.execute("SELECT app, name FROM django_migrations")}
    written = {
        (app, path.stem)
        for app in MIGRATED_APPS
        for path in (ROOT / app / "migrations").glob("0*.py")
    }  # fmt: skip
    assert written and written <= applied
    assert {"auth", "contenttypes", "sessions"} <= {app for app, _ in applied}  # Django's own apps too


def test_the_template_is_named_by_the_migrations(tmp_path, monkeypatch):
    before = schema_hash()
    tree = tmp_path / "tree"
    for app in MIGRATED_APPS:
        (tree / app / "migrations").mkdir(parents=True)
        for path in (ROOT / app / "migrations").glob("*.py"):
            (tree / app / "migrations" / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(template_database, "ROOT", tree)
    assert schema_hash() == before  # the same migrations, wherever the tree is
    last = sorted((tree / "scoring" / "migrations").glob("0*.py"))[-1]
    last.write_text(last.read_text() + "\n# changed\n")
    assert schema_hash() != before


def test_an_earlier_schemas_template_file_is_removed_when_a_new_one_is_built(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    stale = tmp_path / "tatcurate-test-template-000000000000.sqlite3"
    stale.write_bytes(b"an earlier schema")
    # The migration itself is not what is tested here: an empty database stands for it.
    monkeypatch.setattr(template_database, "migrate_into", lambda url: Path(url.removeprefix("sqlite:///")).touch())
    sqlite_copy(tmp_path / "copy.sqlite3")
    assert not stale.exists()
    assert (tmp_path / f"tatcurate-test-template-{schema_hash()}.sqlite3").exists()
