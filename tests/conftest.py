"""Shared fixtures: the named personas of a project, and its paper, context and instances built by the factories of
tests/factories.py."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management.commands import flush as flush_command
from django.db import OperationalError
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations
from rest_framework.test import APIClient

from curation.batches.services import batch_create, batch_open
from curation.models import ReasoningType
from curation.services.projects import membership_add
from curation.states import Role
from tests.factories import (
    ContextFactory,
    InstanceFactory,
    PaperFactory,
    ParagraphFactory,
    ProjectFactory,
    TableFactory,
)
from tests.support.template_database import postgres_template, sqlite_copy

PASSWORD = "correct-horse-battery-staple"


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """A test database of this run's own (name ends in the pid), so concurrent runs never share one, copied from a
    migrated template (tests/support/template_database.py) rather than migrated anew.

    For SQLite, a previous file with its WAL files is removed first: a stale -wal beside a new file is I/O errors.
    The copy is there before Django looks, so Django keeps it (`django_db_keepdb`) and the session's end removes it.
    """
    from django.conf import settings

    database = settings.DATABASES["default"]
    test = database.setdefault("TEST", {})
    suffix = f"_{os.getpid()}"
    if database["ENGINE"].endswith("sqlite3"):
        base = Path(test.get("NAME") or Path(settings.DATA_DIR) / "test-tatcurate.sqlite3")
        name = base.with_name(f"{base.stem}{suffix}{base.suffix}")
        for extra in ("", "-wal", "-shm", "-journal"):
            Path(f"{name}{extra}").unlink(missing_ok=True)
        test["NAME"] = str(name)
        sqlite_copy(name)
    else:
        test["NAME"] = f"{test.get('NAME') or 'test_' + database['NAME']}{suffix}"
        test["TEMPLATE"] = postgres_template(settings.DATABASE_URL)


@pytest.fixture(scope="session")
def django_db_keepdb(request: pytest.FixtureRequest) -> bool:
    """On SQLite the test database is the template's copy, made before Django looks for it: Django keeps it, and
    pytest_sessionfinish removes it (on PostgreSQL Django makes the copy itself, and drops it)."""
    from django.conf import settings

    return request.config.getvalue("reuse_db") or settings.DATABASES["default"]["ENGINE"].endswith("sqlite3")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker) -> Iterator[None]:
    """On PostgreSQL, the test database commits without waiting for its WAL to reach the disk (synchronous_commit
    off, for every connection to it: the live server's, the workers' and commands' it starts). A commit then costs
    0.3 ms instead of 3 ms here; the live-server, browser and worker tests commit on every write. Nothing is lost
    but the last moments of a crashed server, which a throwaway database does not need.

    At the session's end, before Django drops the database, any connection still open to it goes: a live-server
    thread or a child process that has not yet let go would make the drop fail ("is being accessed by other
    users") and leave the database behind."""
    from django.db import connection

    if connection.vendor != "postgresql":
        yield
        return
    name = connection.settings_dict["NAME"]
    with django_db_blocker.unblock():
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER DATABASE {connection.ops.quote_name(name)} SET synchronous_commit TO off")
        connection.close()  # the connections made from now on start with it
    yield
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [name],
        )


# The rows post_migrate makes (its only receivers are create_contenttypes and create_permissions) and no test
# changes: the flush keeps them, so the post_migrate the flush command then emits has nothing to make and is skipped
# (it was about 2/3 of each flush's time).
KEPT_BY_FLUSH = {"django_content_type", "auth_permission"}
_kept_by_last_flush = {"value": False}


def _flush_by_delete(self, style, tables, *, reset_sequences=False, allow_cascade=False):
    """The flush after each transactional test (live server, worker, browser) on PostgreSQL, as DELETEs: TRUNCATE of
    the ~70 tables costs 0.4-0.8 s each time on a busy machine, DELETE of their few rows 0.03 s. The flush runs in one
    transaction and the foreign keys are deferred, so the order of the tables does not matter. The content types and
    permissions are kept (KEPT_BY_FLUSH): they are what the post_migrate that follows the flush would make again."""
    _kept_by_last_flush["value"] = not reset_sequences
    if reset_sequences:
        return _truncate(self, style, tables, reset_sequences=True, allow_cascade=allow_cascade)
    return [
        f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
        for table in tables
        if table not in KEPT_BY_FLUSH
    ]


def _post_flush_signal(*args, **kwargs):
    """post_migrate after a flush, unless the flush kept what it would make (a DELETE flush on PostgreSQL)."""
    if _kept_by_last_flush["value"]:
        _kept_by_last_flush["value"] = False
        return None
    return _emit_post_migrate(*args, **kwargs)


def _flush_past_deadlocks(self, sql_list):
    """The flush, tried again when PostgreSQL breaks a deadlock by aborting it. A request the browser sent just before
    its page closed can still be running in the live server's thread, and its row locks cross the flush's DELETEs;
    PostgreSQL aborts one of the two, and once that request is done the flush goes through."""
    for attempt in range(5):
        try:
            return _execute_flush(self, sql_list)
        except OperationalError as error:
            if attempt == 4 or "deadlock detected" not in str(error):
                raise
            time.sleep(0.2 * (attempt + 1))


_truncate = PostgresOperations.sql_flush
PostgresOperations.sql_flush = _flush_by_delete
_execute_flush = PostgresOperations.execute_sql_flush
PostgresOperations.execute_sql_flush = _flush_past_deadlocks
_emit_post_migrate = flush_command.emit_post_migrate_signal
flush_command.emit_post_migrate_signal = _post_flush_signal


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_newgateway(gateway) -> None:
    """Each xdist worker gets a data directory of its own (its SQLite file, filesystem broker, media, endpoint lock
    files and the Celery workers it starts) and, on Redis, a database of its own (cache and broker: a shared one let
    one worker read another's cached figures and its Celery processes take another's tasks), set in its environment
    before it loads the settings."""
    from django.conf import settings

    data_dir = str(Path(settings.DATA_DIR) / f"xdist-{gateway.id}")
    env = {"TATCURATE_DATA_DIR": data_dir}
    if os.environ.get("REDIS_URL"):
        env["REDIS_URL"] = xdist_redis_url(os.environ["REDIS_URL"], gateway.id)
    gateway.remote_exec(f"import os; os.environ.update({env!r})").waitclose()


def xdist_redis_url(url: str, gateway_id: str) -> str:
    """The Redis URL of one xdist worker: the same server, database 1 + the worker's number after the one given
    (modulo Redis's 16), e.g. redis://h:6379/0 → /1 for gw0, /2 for gw1."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    number = int(gateway_id.removeprefix("gw") or 0)
    return urlunsplit(parts._replace(path=f"/{(base + 1 + number) % 16}"))


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    fixture_info = getattr(item, "_fixtureinfo", None)
    definitions = fixture_info.name2fixturedefs.values() if fixture_info else ()
    return any(defs and defs[-1].scope in ("module", "package") for defs in definitions)


# A test that takes no database fixture cannot reach the suite's database (pytest-django blocks it), and one whose
# child processes need a database or a broker sets their environment itself (the settings, web-tier and start
# tests): it is marked `nodb`, and CI runs it once (on the PostgreSQL run), there being no backend to tell apart.
# Not a test that starts a Celery worker on the suite's broker (`worker`), nor a real-model test (`model`, which CI
# runs on the embedded defaults).
DATABASE_FIXTURES = {"db", "transactional_db", "live_server"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups and -m deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """xdist groups: the real-model tests share one SmolLM2 server (tests/support/local_model.py), so one worker runs
    them all; the browser tests run on one worker too (one Chromium, and no two live servers and browsers fighting
    over the cores while a page waits out its timeout); a module whose tests share a module-scoped world (a
    permission matrix, a migrated web tier, an imported dataset) runs on one worker, so the world is built once
    rather than once per worker."""
    for item in items:
        uses_backend = any(item.get_closest_marker(name) for name in ("django_db", "worker", "model"))
        if not (uses_backend or DATABASE_FIXTURES & set(item.fixturenames)):
            item.add_marker(pytest.mark.nodb)
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("model"):
            item.add_marker(pytest.mark.xdist_group("local-model"))
        elif "tests/browser/" in item.nodeid:
            item.add_marker(pytest.mark.xdist_group("browser"))
        elif _uses_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(Path(item.nodeid.split("::", 1)[0]).stem))


def pytest_sessionfinish(session: pytest.Session) -> None:
    from django.conf import settings

    name = settings.DATABASES["default"].get("TEST", {}).get("NAME", "")
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") and f"_{os.getpid()}.sqlite3" in name:
        for extra in ("", "-wal", "-shm", "-journal"):
            Path(f"{name}{extra}").unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # PBKDF2 at full strength costs ~0.3 s a user; tests create many.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _browser_contexts_closed(request):
    """Every browser context a test opened is closed after it. Chromium keeps an open context's keep-alive sockets
    for minutes, and each keeps a live-server thread, with its database connection, alive: left open, the browser
    tests' worker held some 60 PostgreSQL connections and a test beside it ran out."""
    browser = request.getfixturevalue("browser") if "browser" in request.fixturenames else None
    yield
    for browser_context in browser.contexts if browser else ():
        browser_context.close()


@pytest.fixture(autouse=True)
def _walk_sessions_in_cookies(request):
    """A walk's session is kept in its signed cookie, not in the database: its thousands of requests then spend
    no query loading it (about a sixth of a walk's time). The application keeps no data of its own in the session
    (only the login), so the pages a walk reads are the same."""
    if request.node.get_closest_marker("walk"):
        request.getfixturevalue("settings").SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"


def user_build(username: str, **extra: object):
    return get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)


def project_build():
    return ProjectFactory(name="Test Project", slug="test-project")


def personas_build(project) -> dict:
    """annotator, second annotator (both qualified), unqualified annotator, verifier, manager, outsider."""
    people = {
        name: user_build(name)
        for name in ("annotator", "annotator2", "novice", "verifier", "manager", "outsider", "verifier2")
    }
    for name, role, qualified in (
        ("annotator", Role.ANNOTATOR, True),
        ("annotator2", Role.ANNOTATOR, True),
        ("novice", Role.ANNOTATOR, False),
        ("verifier", Role.VERIFIER, False),
        ("verifier2", Role.VERIFIER, False),
        ("manager", Role.MANAGER, False),
    ):
        membership_add(project=project, actor=None, username=name, role=role, is_qualified=qualified)
    return people


def paper_build(project):
    """A paper with one table (model A beats B on accuracy) and one paragraph that mentions it."""
    paper = PaperFactory(project=project, title="A small paper")
    table = TableFactory(
        paper=paper,
        label="tab:main",
        number="1",
        caption="Accuracy by model.",
        cells=[["Model", "Acc"], ["A", "87.3"], ["B", "81.0"]],
    )
    ParagraphFactory(paper=paper, section="Results", text="Table 1 shows A beats B.", mentioned_tables=[table])
    return paper


def context_build(project, paper):
    return ContextFactory(project=project, paper=paper, paragraph=paper.paragraphs.first(), tables=paper.tables.all())


def instance_build(project, default_context, **fields: object):
    """An instance on `default_context` unless `fields` names another context."""
    fields.setdefault("context", default_context)
    fields.setdefault("scale", "")  # chosen: no scale (a draft without evidence has none chosen: null)
    return InstanceFactory(project=project, **fields)


# The fixtures below call the builders above; a module that builds its world once (tests/support/shared_world.py)
# calls the same builders, so both kinds of world are the same world.
@pytest.fixture
def make_user(db):
    return user_build


@pytest.fixture
def project(db):
    return project_build()


@pytest.fixture
def personas(project, make_user):
    return personas_build(project)


@pytest.fixture
def paper(project):
    return paper_build(project)


@pytest.fixture
def context(project, paper):
    return context_build(project, paper)


@pytest.fixture
def make_instance(project, context):
    def make(**fields: object):
        return instance_build(project, context, **fields)

    return make


def open_batch_build(project):
    return batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)


def drafts_build(project, open_batch, context) -> list:
    """Six drafts in the open batch, alternating two reasoning types."""
    types = list(ReasoningType.objects.filter(project=project, parent__isnull=False)[:2])
    return [
        instance_build(
            project, context, batch=open_batch, reasoning_type=types[i % 2], draft={"question": f"Draft question {i}?"}
        )
        for i in range(6)
    ]


@pytest.fixture
def open_batch(project):
    return open_batch_build(project)


@pytest.fixture
def drafts(project, open_batch, context):
    return drafts_build(project, open_batch, context)


@pytest.fixture
def api_client_for():
    def client_for(user) -> APIClient:
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return client

    return client_for


def postgres_only() -> pytest.MarkDecorator:
    from django.conf import settings

    return pytest.mark.skipif(not settings.IS_POSTGRES, reason="needs PostgreSQL (set DATABASE_URL)")


def redis_url() -> str:
    return os.environ.get("REDIS_URL", "")
