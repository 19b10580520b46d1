"""A drafting run adds no drafts to a closed batch (the team's work on it is done), as filling it and importing drafts
into it are refused: a run over a closed batch, or over listed contexts of one, is refused naming the batch, on the
page, through the API and in the service, and no run is created."""

from __future__ import annotations

import pytest

from curation.drafting.models import DraftingRun
from curation.drafting.services.runs import run_create
from curation.errors import InvalidInput
from curation.models import Batch, Instance
from tests.curation.drafting.conftest import make_contexts
from tests.factories import BatchFactory
from tests.support.clients import logged_in

pytestmark = pytest.mark.django_db

REFUSED = "Batch “Done” is closed: a closed batch takes no new drafts."


@pytest.fixture
def closed_batch(project) -> Batch:
    batch = BatchFactory(project=project, name="Done")
    make_contexts(project, batch, 2)
    Batch.objects.filter(pk=batch.pk).update(state=Batch.State.CLOSED)
    batch.refresh_from_db()
    return batch


def test_a_run_over_a_closed_batch_is_refused_naming_it(project, personas, closed_batch):
    with pytest.raises(InvalidInput, match=REFUSED):
        run_create(project=project, actor=personas["manager"], kind="template", batch=closed_batch)
    assert not DraftingRun.objects.exists()


def test_listed_contexts_of_a_closed_batch_are_refused_and_others_are_drafted(project, personas, closed_batch):
    listed = list(closed_batch.contexts.values_list("pk", flat=True))
    open_contexts = make_contexts(project, BatchFactory(project=project, name="Still open"), 1)
    with pytest.raises(InvalidInput, match=REFUSED):
        run_create(
            project=project, actor=personas["manager"], kind="template", context_ids=[*listed, open_contexts[0].pk]
        )
    assert not DraftingRun.objects.exists()
    run = run_create(project=project, actor=personas["manager"], kind="template", context_ids=[open_contexts[0].pk])
    assert list(run.items.values_list("context_id", flat=True)) == [open_contexts[0].pk]


def test_the_drafting_page_says_the_batch_is_closed(project, personas, closed_batch):
    response = logged_in("manager").post(
        f"/p/{project.slug}/drafting/",
        {"batch": closed_batch.pk, "kind": "template", "per_template": "1", "seed": "0", "unanswerable": "skip"},
    )
    assert REFUSED in response.content.decode()
    assert not DraftingRun.objects.exists() and not Instance.objects.exists()


def test_the_api_refuses_a_run_over_a_closed_batch_with_400(project, personas, closed_batch, api_client_for):
    response = api_client_for(personas["manager"]).post(
        f"/api/projects/{project.slug}/drafting-runs/", {"kind": "template", "batch": closed_batch.pk}, format="json"
    )
    assert response.status_code == 400 and response.json()["detail"].startswith(REFUSED), response.json()
    assert response.json()["field"] == "batch"
    assert not DraftingRun.objects.exists()
