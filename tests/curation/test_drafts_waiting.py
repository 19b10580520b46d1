"""The project page's "Drafts waiting" counts what the annotator could take from the queue, as the queue does:
drafts of a batch not yet opened are not waiting for anyone."""

from __future__ import annotations

from annotate.work.queue import queue_counts
from curation.selectors import project_overview
from curation.services.batches import batch_create, batch_open


def test_drafts_of_an_unopened_batch_are_not_waiting(db, project, personas, make_instance):
    opened = batch_open(batch_id=batch_create(project=project, actor=None, name="Open").pk, actor=None)
    planned = batch_create(project=project, actor=None, name="Not yet open")
    make_instance(batch=opened, question="In the open batch?")
    for n in range(3):
        make_instance(batch=planned, question=f"Waiting for its batch {n}?")
    annotator = personas["annotator"]
    page = project_overview(user=annotator, project=project, roles={"annotator"})["annotator"]
    assert page["available"] == 1 == queue_counts(project=project, user=annotator)["available"]
