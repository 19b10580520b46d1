"""The project page's "Drafts waiting" counts what the annotator could take from the queue, as the queue does:
drafts of a batch not yet opened are not waiting for anyone."""

from __future__ import annotations

from annotate.work.queue import queue_counts
from curation.batches.services import batch_create, batch_open
from curation.selectors import project_overview


def test_drafts_of_an_unopened_batch_are_not_waiting(db, project, personas, make_instance):
    opened = batch_open(batch_id=batch_create(project=project, actor=None, name="Open").pk, actor=None)
    planned = batch_create(project=project, actor=None, name="Not yet open")
    make_instance(batch=opened, question="In the open batch?")
    for n in range(3):
        make_instance(batch=planned, question=f"Waiting for its batch {n}?")
    annotator = personas["annotator"]
    page = project_overview(user=annotator, project=project, roles={"annotator"})["annotator"]
    assert page["available"] == 1 == queue_counts(project=project, user=annotator)["available"]


def test_drafts_waiting_are_counted_up_to_the_cap_on_the_api_and_the_page(
    db, project, personas, make_instance, monkeypatch, api_client_for, client
):
    from curation import pagination

    monkeypatch.setattr(pagination, "COUNT_UP_TO", 2)
    opened = batch_open(batch_id=batch_create(project=project, actor=None, name="Open").pk, actor=None)
    make_instance(batch=opened, question="The first draft?")
    annotator = personas["annotator"]
    api = api_client_for(annotator)
    exact = api.get(f"/api/projects/{project.slug}/queue/").json()
    assert (exact["available"], exact["available_capped"]) == (1, False)
    for n in range(3):
        make_instance(batch=opened, question=f"One more draft {n}?")
    capped = api.get(f"/api/projects/{project.slug}/queue/").json()
    assert (capped["available"], capped["available_capped"]) == (2, True)
    client.force_login(annotator)
    page = client.get(f"/p/{project.slug}/work/").content.decode()
    assert '<dd data-count="available">more than 2</dd>' in page
