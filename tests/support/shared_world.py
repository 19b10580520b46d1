"""A test module's world built once, each test run inside it in a savepoint that is rolled back.

A permission matrix asks the same question of many (endpoint, role) cells about one world; rebuilding the world
for every cell was most of its time. `shared_world` opens one transaction for the module, builds the world in
it, and yields; every test then takes the `db` fixture, whose atomic block nests as a savepoint inside it and is
rolled back after the test, so each cell still sees the world exactly as built. The module's transaction is
rolled back at its end, so nothing leaks into other modules.

    @pytest.fixture(scope="module")
    def _world(django_db_setup, django_db_blocker):
        with shared_world(django_db_blocker):
            yield build_my_world()

    @pytest.fixture
    def world(_world, db):
        return world_copy(_world)

A test gets a deep copy of the built objects, so one that refreshes or edits an object in memory leaves the next
test's copy as built (the database side is the savepoint's job).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest
from django.db import transaction
from django.test.utils import override_settings


@contextmanager
def shared_world(django_db_blocker) -> Iterator[pytest.MonkeyPatch]:
    """Database access, fast password hashing and a monkeypatch for the module, inside one rolled-back atomic."""
    with (
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]),
        pytest.MonkeyPatch.context() as monkeypatch,
        transaction.atomic(),
    ):
        yield monkeypatch
        transaction.set_rollback(True)


World = TypeVar("World")


def world_copy(world: World) -> World:
    """The module's world as built, for one test (model objects are copied with what they have cached)."""
    return copy.deepcopy(world)


def base_world_build(*, with_drafts: bool = False) -> dict:
    """What the conftest fixtures give one test (project, personas, paper, context; and the open batch with six
    drafts), built by the same builders, for a module-scoped world."""
    from tests.conftest import (
        context_build,
        drafts_build,
        open_batch_build,
        paper_build,
        personas_build,
        project_build,
    )

    project = project_build()
    personas = personas_build(project)
    paper = paper_build(project)
    world = {"project": project, "personas": personas, "paper": paper, "context": context_build(project, paper)}
    if with_drafts:
        world["open_batch"] = open_batch_build(project)
        world["drafts"] = drafts_build(project, world["open_batch"], world["context"])
    return world
