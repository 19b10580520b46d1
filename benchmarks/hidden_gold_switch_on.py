"""Print JSON: switching hidden gold on (1 in 4) for an open batch already drafted — its probes made among the unclaimed
drafts (`quality_configure`: `probes_top_up`, then `probes_interleave`) — as it is now (the probes made in bulk by
`instances_create`; the rows pointing at the re-numbered drafts moved by one SQL UPDATE … CASE per 500) beside the
earlier way (`instance_create` per probe; the ORM's Case/When for the same UPDATEs), measured in one run on two
identical projects.

    .venv/bin/python benchmarks/hidden_gold_switch_on.py [--drafts 1000] [--database-url postgres://…/bench]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import fresh_postgres_database, setup_django


def world(name: str, drafts: int):
    """A project with a manager, one paper, 20 validated gold items on it and `drafts` drafts in an open batch."""
    from django.contrib.auth import get_user_model

    from curation.models import Batch, Context, Paper, Paragraph, Table
    from curation.services.lifecycle import instances_create
    from curation.services.projects import membership_add, project_create
    from curation.states import Role, Status

    manager = get_user_model().objects.create_user(f"manager-{name}", password="x")
    project = project_create(name=name, creator=None)
    membership_add(project=project, actor=None, username=manager.username, role=Role.MANAGER)
    paper = Paper.objects.create(project=project, title="Paper", origin="bench")
    table = Table.objects.create(paper=paper, order=0, label="tab:0", cells=[["Model", "Acc"], ["A", "8"]])
    paragraph = Paragraph.objects.create(paper=paper, order=0, section="Results", text="A reaches 8.")
    context = Context.objects.create(project=project, paper=paper, kind=Context.Kind.SHORT, paragraph=paragraph)
    context.tables.set([table])
    batch = Batch.objects.create(project=project, name="B1", state=Batch.State.OPEN)
    common = {"context": context, "relevant_tables": [table.pk], "answer_form": "short"}
    instances_create(
        project_id=project.pk,
        actor=None,
        initial_status=Status.VALIDATED,
        rows=[{**common, "question": f"Gold {i}?", "answer": [str(i)], "draft": {"answer": ["x"]}} for i in range(20)],
    )
    instances_create(
        project_id=project.pk,
        actor=None,
        rows=[
            {**common, "batch": batch, "question": f"Draft {i}?", "draft": {"question": f"Draft {i}?"}}
            for i in range(drafts)
        ],
    )
    return project, manager


def one_by_one(**kwargs):
    """The earlier way: each probe its own inserts (instance, audit row, tables)."""
    from curation.services.lifecycle import instance_create

    rows = kwargs.pop("rows")
    return [instance_create(**kwargs, **row) for row in rows]


def orm_update_by_id(model, key, field, values):
    """The earlier way: the same UPDATEs written with the ORM's Case/When."""
    from django.db.models import Case, Value, When

    from annotate.quality.services import REISSUE_CHUNK

    keys = list(values)
    rows = model._base_manager.all()
    attname = model._meta.get_field(key).attname
    for start in range(0, len(keys), REISSUE_CHUNK):
        chunk = keys[start : start + REISSUE_CHUNK]
        cases = Case(
            *(When(**{attname: k}, then=Value(values[k])) for k in chunk), output_field=model._meta.get_field(field)
        )
        rows.filter(**{f"{attname}__in": chunk}).update(**{model._meta.get_field(field).attname: cases})


def switch_on(project, manager) -> tuple[float, int]:
    from django.db import transaction

    from annotate.quality.models import GoldProbe
    from annotate.quality.services import quality_configure

    started = time.perf_counter()
    with transaction.atomic():
        quality_configure(project=project, actor=manager, gold_every=4)
    return time.perf_counter() - started, GoldProbe.objects.filter(project=project).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", type=int, default=1000)
    parser.add_argument("--database-url", default=None, help="a PostgreSQL URL (its database is made afresh)")
    options = parser.parse_args()
    url = options.database_url
    setup_django(fresh_postgres_database(url, url.rsplit("/", 1)[1]) if url else None)
    from unittest import mock

    from django.db import connection

    bulk_project, bulk_manager = world("bulk", options.drafts)
    loop_project, loop_manager = world("earlier", options.drafts)
    bulk_s, bulk_probes = switch_on(bulk_project, bulk_manager)
    with (
        mock.patch("annotate.quality.services.instances_create", one_by_one),
        mock.patch("annotate.quality.services._update_by_id", orm_update_by_id),
    ):
        earlier_s, earlier_probes = switch_on(loop_project, loop_manager)
    print(
        json.dumps(
            {
                "benchmark": "hidden_gold_switch_on",
                "database": connection.vendor,
                "drafts": options.drafts,
                "probes": bulk_probes,
                "now_s": round(bulk_s, 3),
                "earlier_s": round(earlier_s, 3),
                "probes_same": bulk_probes == earlier_probes,
                "ratio_now_to_earlier": round(bulk_s / earlier_s, 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
