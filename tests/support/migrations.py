"""Migrating the test database to a past state and back, for the tests of a data migration."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(target: list[tuple[str, str]] | None = None):
    """Migrate to `target` (every app's latest when None); the apps of the state reached."""
    executor = MigrationExecutor(connection)
    target = target or executor.loader.graph.leaf_nodes()
    executor.migrate(target)
    executor.loader.build_graph()
    return executor.loader.project_state(target).apps
