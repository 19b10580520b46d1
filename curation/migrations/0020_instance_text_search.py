"""Trigram indexes for the instance browser's text search (question, answer, rationale), on PostgreSQL only.

The search is Django's `icontains`, which PostgreSQL runs as `UPPER(column) LIKE UPPER('%text%')`: a GIN index of
pg_trgm over the same expressions lets it read only the rows holding the text instead of every row of the project.
SQLite has no such index (its LIKE scans), so the operation does nothing there; the model state is unchanged.
"""

from __future__ import annotations

from django.db import migrations

# (index name, indexed expression): the expressions are the ones `instances_browse` filters on.
INDEXES = [
    ("instance_question_trgm", 'UPPER("question")'),
    ("instance_answer_trgm", 'UPPER(("answer")::text)'),
    ("instance_rationale_trgm", 'UPPER("rationale")'),
]


def create_indexes(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, expression in INDEXES:
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON "curation_instance" USING gin ({expression} gin_trgm_ops)'
        )
    schema_editor.execute('ANALYZE "curation_instance"')  # statistics of the indexed expressions, for the planner


def drop_indexes(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _ in INDEXES:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


class Migration(migrations.Migration):
    dependencies = [("curation", "0019_claim_indexes")]

    operations = [migrations.RunPython(create_indexes, drop_indexes, elidable=False)]
