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
        return _world
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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
