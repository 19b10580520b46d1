"""Direct assignment: a manager gives drafts to one qualified annotator; their queue serves them first."""

from __future__ import annotations

import pytest

from annotate.work.workspace import workspace_skip
from curation.batches.services import batch_create, batch_open
from curation.errors import InvalidInput, NotFound, NotPermitted
from curation.models import Instance
from curation.services.assignments import instances_assign
from curation.states import Status
from tests.annotate.work.helpers import queue_next


def test_assigned_drafts_are_served_first_and_to_nobody_else(personas, project, drafts):
    last = drafts[-1]
    instances_assign(project=project, actor=personas["manager"], instance_ids=[last.pk], assignee_username="annotator2")
    # Someone else empties the rest of the queue but never receives the assigned draft.
    other = personas["annotator"]
    taken = []
    while (instance := queue_next(project=project, user=other)) is not None:
        taken.append(instance.pk)
        Instance.objects.filter(pk=instance.pk).update(status=Status.SUBMITTED)
    assert last.pk not in taken and len(taken) == len(drafts) - 1
    assert queue_next(project=project, user=personas["annotator2"]).pk == last.pk


def test_assignee_gets_their_draft_before_earlier_ones_even_in_a_later_batch(personas, project, drafts, make_instance):
    later = batch_open(batch_id=batch_create(project=project, actor=None, name="B2").pk, actor=None)
    assigned = make_instance(batch=later, question="Mine?")
    instances_assign(
        project=project, actor=personas["manager"], instance_ids=[assigned.pk], assignee_username="annotator"
    )
    assert queue_next(project=project, user=personas["annotator"]).pk == assigned.pk


def test_giving_an_assigned_draft_back_returns_it_to_everyone(personas, project, drafts):
    instances_assign(
        project=project, actor=personas["manager"], instance_ids=[drafts[3].pk], assignee_username="annotator"
    )
    claimed = queue_next(project=project, user=personas["annotator"])
    assert claimed.pk == drafts[3].pk
    skipped = workspace_skip(instance_id=claimed.pk, user=personas["annotator"], reason="not my field")
    assert skipped.status == Status.DRAFTED and skipped.assigned_to_id is None


@pytest.mark.parametrize("role", ["annotator", "verifier", "outsider"])
def test_only_managers_assign(personas, project, drafts, role):
    with pytest.raises(NotPermitted):
        instances_assign(
            project=project, actor=personas[role], instance_ids=[drafts[0].pk], assignee_username="annotator"
        )
    assert not Instance.objects.filter(assigned_to__isnull=False).exists()


@pytest.mark.parametrize(
    ("username", "message"),
    [("novice", "qualification"), ("verifier", "not an annotator"), ("nobody", "no user")],
)
def test_only_qualified_annotators_receive_assignments(personas, project, drafts, username, message):
    with pytest.raises(InvalidInput, match=message):
        instances_assign(
            project=project, actor=personas["manager"], instance_ids=[drafts[0].pk], assignee_username=username
        )


def test_an_assignment_with_one_non_draft_writes_nothing(personas, project, drafts):
    held = queue_next(project=project, user=personas["annotator"])
    others = [d.pk for d in drafts if d.pk != held.pk]
    with pytest.raises(InvalidInput, match=f"#{held.pk} is in_refinement"):
        instances_assign(
            project=project, actor=personas["manager"], instance_ids=[*others, held.pk], assignee_username="annotator2"
        )
    assert not Instance.objects.filter(assigned_to__isnull=False).exists()
    with pytest.raises(NotFound):
        instances_assign(
            project=project, actor=personas["manager"], instance_ids=[999999], assignee_username="annotator2"
        )


def test_the_queue_page_says_assigned_to_you(client, personas, project, drafts):
    instances_assign(
        project=project, actor=personas["manager"], instance_ids=[drafts[1].pk], assignee_username="annotator"
    )
    client.force_login(personas["annotator"])
    page = client.get(f"/p/{project.slug}/work/").content.decode()
    assert "Assigned to you" in page and f"#{drafts[1].pk}" in page
    client.force_login(personas["annotator2"])
    page = client.get(f"/p/{project.slug}/work/").content.decode()
    assert 'id="assigned"' not in page
    assert '<dd data-count="available">5</dd>' in page


def test_an_expired_lease_keeps_the_draft_with_its_assignee(personas, project, drafts):
    from datetime import timedelta

    from django.utils import timezone

    from annotate.work.leases import leases_reap

    instances_assign(
        project=project, actor=personas["manager"], instance_ids=[drafts[2].pk], assignee_username="annotator"
    )
    assert queue_next(project=project, user=personas["annotator"]).pk == drafts[2].pk
    assert leases_reap(now=timezone.now() + timedelta(hours=1)) == 1
    returned = Instance.objects.get(pk=drafts[2].pk)
    assert (returned.status, returned.assigned_to) == (Status.DRAFTED, personas["annotator"])
    assert queue_next(project=project, user=personas["annotator2"]).pk != drafts[2].pk
