"""Shared fixtures: the named personas of a project and small factories for papers and instances."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from curation.models import Context, Paper, Paragraph, Table
from curation.services.lifecycle import instance_create
from curation.services.projects import membership_add, project_create
from curation.states import Role

PASSWORD = "correct-horse-battery-staple"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Remove a previous run's SQLite test database with its WAL files: a stale -wal beside a new file is I/O errors."""
    from django.conf import settings

    name = settings.DATABASES["default"].get("TEST", {}).get("NAME")
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") and name:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{name}{suffix}").unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # PBKDF2 at full strength costs ~0.3 s a user; tests create many.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def make_user(db):
    def make(username: str, **extra: object):
        return get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)

    return make


@pytest.fixture
def project(db):
    return project_create(name="Test Project", creator=None, slug="test-project")


@pytest.fixture
def personas(project, make_user):
    """annotator, second annotator (both qualified), unqualified annotator, verifier, manager, outsider."""
    people = {
        name: make_user(name)
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


@pytest.fixture
def paper(project):
    paper = Paper.objects.create(project=project, title="A small paper", origin="test")
    table = Table.objects.create(
        paper=paper,
        order=0,
        label="tab:main",
        number="1",
        caption="Accuracy by model.",
        cells=[["Model", "Acc"], ["A", "87.3"], ["B", "81.0"]],
    )
    paragraph = Paragraph.objects.create(paper=paper, order=0, section="Results", text="Table 1 shows A beats B.")
    paragraph.mentioned_tables.add(table)
    return paper


@pytest.fixture
def context(project, paper):
    ctx = Context.objects.create(
        project=project, paper=paper, kind=Context.Kind.SHORT, paragraph=paper.paragraphs.first()
    )
    ctx.tables.set(paper.tables.all())
    return ctx


@pytest.fixture
def make_instance(project, context):
    def make(**fields: object):
        fields.setdefault("question", "Which model is more accurate?")
        fields.setdefault("answer", ["A"])
        fields.setdefault("context", context)
        return instance_create(project_id=project.pk, actor=None, **fields)

    return make


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
