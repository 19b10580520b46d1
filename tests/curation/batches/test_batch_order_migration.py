"""Batches that share a number in their project (created at the same moment before batch_create locked the project)
are renumbered by curation's migration 0030 before it makes the number unique: in (order, id) order, moving a batch
up only as far as the one before it requires, and leaving projects without a shared number as they were."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from curation.models import Batch
from tests.factories import ProjectFactory
from tests.support.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("curation", "0029_panel")


def orders(project) -> list[tuple[str, int]]:
    return list(Batch.objects.filter(project=project).order_by("order", "id").values_list("name", "order"))


def test_batches_sharing_a_number_are_renumbered_in_order_and_the_number_is_then_unique():
    shared, shuffled, gapped = ProjectFactory(), ProjectFactory(), ProjectFactory()
    apps = migrate([BEFORE])
    historical_batch = apps.get_model("curation", "Batch")

    def add(project, name: str, order: int) -> None:
        historical_batch.objects.create(project_id=project.pk, name=name, order=order)

    for name, order in (("a", 0), ("b", 0), ("c", 1), ("d", 3)):
        add(shared, name, order)
    for name, order in (("late", 5), ("two", 2), ("two again", 2)):  # by (order, id), not by id
        add(shuffled, name, order)
    for name, order in (("first", 0), ("after a gap", 4)):
        add(gapped, name, order)

    migrate()

    assert orders(shared) == [("a", 0), ("b", 1), ("c", 2), ("d", 3)]
    assert orders(shuffled) == [("two", 2), ("two again", 3), ("late", 5)]
    assert orders(gapped) == [("first", 0), ("after a gap", 4)]  # nothing shared: the numbers stay
    with pytest.raises(IntegrityError), transaction.atomic():
        Batch.objects.create(project=gapped, name="same number", order=4)


def test_the_migration_goes_back_keeping_the_new_numbers():
    project = ProjectFactory()
    apps = migrate([BEFORE])
    historical_batch = apps.get_model("curation", "Batch")
    for name in ("a", "b"):
        historical_batch.objects.create(project_id=project.pk, name=name, order=0)
    migrate()
    migrate([BEFORE])
    assert orders(project) == [("a", 0), ("b", 1)]
    historical_batch.objects.create(project_id=project.pk, name="c", order=1)  # no constraint once back
    migrate()
    assert orders(project) == [("a", 0), ("b", 1), ("c", 2)]
