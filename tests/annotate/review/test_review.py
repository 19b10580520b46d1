"""Two-round validation with the real services: the whole path, who may do what, comments, discussions, gating."""

from __future__ import annotations

import pytest

from annotate.instances.services import instance_discard, instance_restore
from annotate.review import services as review
from annotate.review.models import Discussion, DiscussionMessage, ReviewComment
from curation.batches.services import batch_assign, batch_create, batch_open, project_gating_set
from curation.errors import Conflict, InvalidInput, NotPermitted
from curation.models import Batch, Instance, InstanceRevision, TransitionEvent
from curation.states import Status
from tests.annotate.review.helpers import sent_back, submit, to_discussion, to_round2
from tests.annotate.work.helpers import queue_next
from tests.support.clients import logged_in


def test_whole_path_with_a_change_request_and_a_discussion(personas, project, drafts):
    p = personas
    first = submit(project, p["annotator"])
    claimed = review.review_next(project=project, user=p["verifier"])
    assert (claimed.pk, claimed.status, claimed.round1_verifier_id) == (
        first.pk,
        Status.ROUND1_REVIEW,
        p["verifier"].pk,
    )
    assert claimed.lease_expires_at is not None
    returned = review.review_request_changes(
        instance_id=claimed.pk,
        user=p["verifier"],
        expected_version=claimed.version,
        comments=[{"field": "answer", "text": "Give the model's full name."}],
    )
    assert returned.status == Status.CHANGES_REQUESTED
    assert ReviewComment.objects.get(instance=returned).field == "answer"

    # The change request heads the annotator's queue, and the resubmission returns to the same verifier.
    resumed = submit(project, p["annotator"], returned, answer=["Model A"])
    assert resumed.status == Status.SUBMITTED
    with pytest.raises(NotPermitted):
        review.review_claim(instance_id=resumed.pk, user=p["verifier2"])
    assert review.review_next(project=project, user=p["verifier2"]) is None
    again = review.review_next(project=project, user=p["verifier"])
    assert again.pk == resumed.pk
    approved = review.review_approve(instance_id=again.pk, user=p["verifier"], expected_version=again.version)
    assert approved.status == Status.ROUND2_REVIEW
    assert not ReviewComment.objects.filter(instance=approved, is_resolved=False).exists()

    taken = review.round2_next(project=project, user=p["annotator2"])
    assert (taken.pk, taken.round2_reviewer_id) == (approved.pk, p["annotator2"].pk)
    discussion = review.round2_flag(
        instance_id=taken.pk,
        user=p["annotator2"],
        expected_version=taken.version,
        comments=[{"field": "question", "text": "Ambiguous: accuracy on which set?"}],
    )
    assert Instance.objects.get(pk=taken.pk).status == Status.IN_DISCUSSION
    assert discussion.verifier_id == p["verifier"].pk and discussion.is_open
    review.discussion_reply(discussion_id=discussion.pk, user=p["verifier"], text="Agreed, I will fix it.")
    review.discussion_reply(discussion_id=discussion.pk, user=p["annotator2"], text="Thanks.")
    current = Instance.objects.get(pk=taken.pk)
    decided = review.discussion_resolve(
        discussion_id=discussion.pk,
        user=p["verifier"],
        outcome="accepted",
        action="edit",
        expected_version=current.version,
        fields={"question": "Which model is more accurate on the test set?"},
    )
    final = Instance.objects.get(pk=taken.pk)
    assert final.status == Status.VALIDATED
    assert final.question == "Which model is more accurate on the test set?"
    assert (decided.outcome, decided.resolution, decided.decided_by_id) == ("accepted", "edited", p["verifier"].pk)
    assert decided.decided_at is not None
    assert InstanceRevision.objects.filter(instance=final, author=p["verifier"]).exists()
    path = list(TransitionEvent.objects.filter(instance=final).values_list("to_status", flat=True))
    assert path == [
        "drafted",
        "in_refinement",
        "submitted",
        "round1_review",
        "changes_requested",
        "in_refinement",
        "submitted",
        "round1_review",
        "round2_review",
        "round2_review",  # the second annotator takes the review (audited, no status change)
        "in_discussion",
        "validated",
    ]


def test_author_can_never_review_their_own_instance(personas, project, drafts, make_user):
    from curation.services.projects import membership_add

    # The annotator is also a verifier: still not for their own work.
    membership_add(project=project, actor=None, username="annotator", role="verifier")
    submitted = submit(project, personas["annotator"])
    with pytest.raises(NotPermitted, match="own work"):
        review.review_claim(instance_id=submitted.pk, user=personas["annotator"])
    assert review.review_next(project=project, user=personas["annotator"]) is None
    approved = to_round2(project, personas)
    with pytest.raises(NotPermitted):
        review.round2_claim(instance_id=approved.pk, user=personas["annotator"])
    assert Instance.objects.get(pk=submitted.pk).status == Status.SUBMITTED


def test_round_one_verifier_can_never_do_round_two(personas, project, drafts):
    from curation.services.projects import membership_add

    membership_add(project=project, actor=None, username="verifier", role="annotator", is_qualified=True)
    approved = to_round2(project, personas)
    with pytest.raises(NotPermitted, match="other than the author and the round-one verifier"):
        review.round2_claim(instance_id=approved.pk, user=personas["verifier"])
    assert review.round2_next(project=project, user=personas["verifier"]) is None
    with pytest.raises(NotPermitted):
        review.round2_confirm(instance_id=approved.pk, user=personas["verifier"], expected_version=approved.version)
    assert Instance.objects.get(pk=approved.pk).status == Status.ROUND2_REVIEW


def test_unqualified_annotator_cannot_do_round_two(personas, project, drafts):
    approved = to_round2(project, personas)
    with pytest.raises(NotPermitted, match="qualification"):
        review.round2_claim(instance_id=approved.pk, user=personas["novice"])


def test_round_two_claim_keeps_others_out_until_the_lease_lapses(personas, project, drafts, make_user):
    from curation.services.projects import membership_add

    third = make_user("annotator3")
    membership_add(project=project, actor=None, username="annotator3", role="annotator", is_qualified=True)
    approved = to_round2(project, personas)
    held = review.round2_claim(instance_id=approved.pk, user=personas["annotator2"])
    with pytest.raises(Conflict):
        review.round2_claim(instance_id=approved.pk, user=third)
    Instance.objects.filter(pk=held.pk).update(lease_expires_at="2000-01-01T00:00:00Z")
    taken = review.round2_claim(instance_id=approved.pk, user=third)
    assert taken.round2_reviewer.username == "annotator3"
    # The first reviewer's decision now loses: their version is stale and they are no longer the reviewer.
    with pytest.raises((Conflict, NotPermitted)):
        review.round2_confirm(instance_id=held.pk, user=personas["annotator2"], expected_version=held.version)
    assert review.round2_confirm(instance_id=taken.pk, user=third, expected_version=taken.version)


def test_request_changes_needs_a_comment_and_only_known_fields(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    with pytest.raises(InvalidInput, match="Say what to change"):
        review.review_request_changes(
            instance_id=claimed.pk, user=personas["verifier"], expected_version=claimed.version, comments=[]
        )
    with pytest.raises(InvalidInput, match="not a field"):
        review.review_request_changes(
            instance_id=claimed.pk,
            user=personas["verifier"],
            expected_version=claimed.version,
            comments=[{"field": "status", "text": "x"}],
        )
    assert Instance.objects.get(pk=claimed.pk).status == Status.ROUND1_REVIEW


def test_only_the_holding_verifier_decides(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    for person in ("verifier2", "annotator", "manager"):
        with pytest.raises(NotPermitted):
            review.review_approve(instance_id=claimed.pk, user=personas[person], expected_version=claimed.version)


def test_stale_version_is_a_conflict_and_writes_nothing(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    with pytest.raises(Conflict):
        review.review_request_changes(
            instance_id=claimed.pk,
            user=personas["verifier"],
            expected_version=claimed.version - 1,
            comments=[{"field": "", "text": "stale"}],
        )
    assert not ReviewComment.objects.filter(instance=claimed).exists()


def test_released_review_goes_back_to_the_pile(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    released = review.review_release(instance_id=claimed.pk, user=personas["verifier"])
    assert released.status == Status.SUBMITTED and released.lease_expires_at is None


def test_rejected_flag_validates_and_records_the_decider(personas, project, drafts):
    discussion = to_discussion(project, personas)
    instance = Instance.objects.get(pk=discussion.instance_id)
    with pytest.raises(NotPermitted):
        review.discussion_resolve(
            discussion_id=discussion.pk,
            user=personas["annotator2"],
            outcome="rejected",
            expected_version=instance.version,
        )
    decided = review.discussion_resolve(
        discussion_id=discussion.pk, user=personas["verifier"], outcome="rejected", expected_version=instance.version
    )
    assert (decided.outcome, decided.resolution, decided.decided_by_id) == ("rejected", "kept", personas["verifier"].pk)
    assert Instance.objects.get(pk=instance.pk).status == Status.VALIDATED
    with pytest.raises(Conflict):
        review.discussion_reply(discussion_id=discussion.pk, user=personas["verifier"], text="late")
    with pytest.raises(Conflict):
        review.discussion_resolve(
            discussion_id=discussion.pk,
            user=personas["verifier"],
            outcome="rejected",
            expected_version=instance.version,
        )


def test_accepted_flag_can_send_the_instance_back_to_its_annotator(personas, project, drafts):
    discussion = to_discussion(project, personas)
    instance = Instance.objects.get(pk=discussion.instance_id)
    review.discussion_resolve(
        discussion_id=discussion.pk,
        user=personas["verifier"],
        outcome="accepted",
        action="send_back",
        expected_version=instance.version,
    )
    back = Instance.objects.get(pk=instance.pk)
    assert back.status == Status.CHANGES_REQUESTED
    assert queue_next(project=project, user=personas["annotator"]).pk == back.pk
    # The round-two comment is still open for the annotator to act on.
    assert ReviewComment.objects.filter(instance=back, round=2, is_resolved=False).count() == 1


def test_outsiders_cannot_take_part_in_a_discussion(personas, project, drafts):
    discussion = to_discussion(project, personas)
    for person in ("annotator", "verifier2", "outsider"):
        with pytest.raises(NotPermitted):
            review.discussion_reply(discussion_id=discussion.pk, user=personas[person], text="hello")
    review.discussion_reply(discussion_id=discussion.pk, user=personas["manager"], text="Manager here.")
    assert DiscussionMessage.objects.filter(discussion=discussion).count() == 2


def test_comment_resolution_by_the_annotator(personas, project, drafts):
    returned = sent_back(project, personas, {"field": "rationale", "text": "Cite the table."})
    comment = ReviewComment.objects.get(instance=returned)
    with pytest.raises(NotPermitted):
        review.comment_resolve(comment_id=comment.pk, user=personas["annotator2"])
    assert review.comment_resolve(comment_id=comment.pk, user=personas["annotator"]).is_resolved


def test_discard_and_restore_keep_everything(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    with pytest.raises(NotPermitted):
        instance_discard(
            instance_id=submitted.pk, actor=personas["verifier"], expected_version=submitted.version, reason="x"
        )
    with pytest.raises(InvalidInput):
        instance_discard(
            instance_id=submitted.pk, actor=personas["manager"], expected_version=submitted.version, reason=""
        )
    gone = instance_discard(
        instance_id=submitted.pk, actor=personas["manager"], expected_version=submitted.version, reason="duplicate"
    )
    assert gone.status == Status.DISCARDED and Instance.objects.filter(pk=gone.pk).exists()
    back = instance_restore(instance_id=gone.pk, actor=personas["manager"], expected_version=gone.version)
    assert (back.status, back.author_id, back.question) == (Status.DRAFTED, None, submitted.question)
    assert back.revisions.count() == submitted.revisions.count()


def test_sequential_gating_opens_the_next_batch_by_itself(personas, project, make_instance):
    first = batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)
    second = batch_create(project=project, actor=None, name="B2")
    project_gating_set(project=project, actor=personas["manager"], gating="sequential")
    a = make_instance(batch=first)
    b = make_instance(batch=first)
    make_instance(batch=second)
    to_round2(project, personas, a)
    approved_b = to_round2(project, personas, b)
    done = review.round2_claim(instance_id=a.pk, user=personas["annotator2"])
    review.round2_confirm(instance_id=a.pk, user=personas["annotator2"], expected_version=done.version)
    assert Batch.objects.get(pk=second.pk).state == Batch.State.PLANNED  # b is not done yet
    instance_discard(
        instance_id=approved_b.pk, actor=personas["manager"], expected_version=approved_b.version, reason="bad table"
    )
    assert Batch.objects.get(pk=second.pk).state == Batch.State.OPEN
    assert Batch.objects.get(pk=first.pk).state == Batch.State.CLOSED


def test_manual_gating_leaves_batches_to_the_manager(personas, project, make_instance):
    first = batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)
    second = batch_create(project=project, actor=None, name="B2")
    a = make_instance(batch=first)
    make_instance(batch=second)
    approved = to_round2(project, personas, a)
    claimed = review.round2_claim(instance_id=approved.pk, user=personas["annotator2"])
    review.round2_confirm(instance_id=a.pk, user=personas["annotator2"], expected_version=claimed.version)
    assert Batch.objects.get(pk=second.pk).state == Batch.State.PLANNED


def test_batch_assign_moves_only_drafts_and_is_for_managers(personas, project, make_instance, context):
    batch = batch_create(project=project, actor=None, name="B1")
    draft = make_instance()
    other = make_instance()
    with pytest.raises(NotPermitted):
        batch_assign(batch_id=batch.pk, actor=personas["verifier"], instance_ids=[draft.pk])
    assert batch_assign(batch_id=batch.pk, actor=personas["manager"], instance_ids=[draft.pk]) == 1
    assert batch_assign(batch_id=batch.pk, actor=personas["manager"], context_ids=[context.pk]) == 2
    assert set(Instance.objects.filter(batch=batch).values_list("id", flat=True)) == {draft.pk, other.pk}
    assert Discussion.objects.count() == 0


def test_discarding_an_instance_in_discussion_closes_the_discussion(personas, project, drafts):
    """Nobody will decide a discarded instance's discussion: it is closed, waits on nobody's badge, and the instance,
    restored, may be flagged again (the database allows one open discussion per instance)."""
    discussed = Instance.objects.get(pk=to_discussion(project, personas).instance_id)
    assert discussed.status == Status.IN_DISCUSSION
    gone = instance_discard(
        instance_id=discussed.pk, actor=personas["manager"], expected_version=discussed.version, reason="duplicate"
    )
    discussion = Discussion.objects.get(instance=discussed)
    assert discussion.outcome == Discussion.Outcome.CLOSED and discussion.decided_at is not None
    page = logged_in("manager").get(f"/p/{project.slug}/discussions/{discussion.pk}/").content.decode()
    assert "Closed: the instance was discarded, " in page and " by ," not in page
    restored = instance_restore(instance_id=gone.pk, actor=personas["manager"], expected_version=gone.version)
    assert restored.status == Status.DRAFTED
    assert Discussion.objects.create(instance=restored, opened_by=personas["annotator2"]).is_open
