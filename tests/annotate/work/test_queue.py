"""The queue: claims, leases, skip, submit validation, autosave conflicts and work time."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotate.work.leases import leases_reap
from annotate.work.models import WorkTime
from annotate.work.queue import lease_deadline, queue_claim
from annotate.work.selectors import workspace_read
from annotate.work.workspace import (
    submission_problems,
    work_ping,
    workspace_autosave,
    workspace_skip,
    workspace_submit,
)
from curation.batches.services import batch_create, batch_open
from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.models import Batch, Instance, TransitionEvent
from curation.services.lifecycle import instance_claim, instance_transition
from curation.states import Status
from curation.toolkit.answer_form import answer_form
from tests.annotate.work.helpers import queue_next
from tests.conftest import postgres_only


def complete(instance, user):
    """Fill in what submission needs and return the saved instance."""
    return workspace_autosave(
        instance_id=instance.pk,
        user=user,
        expected_version=instance.version,
        fields={
            "question": "Which model wins?",
            "answer": ["A"],
            "answer_form": "short",
            "answer_source": "table",
            "answer_type": "span",
            "relevant_table_ids": list(instance.context.tables.values_list("id", flat=True)),
        },
    )


def test_next_claims_a_draft_and_sets_a_lease(personas, project, drafts):
    instance = queue_next(project=project, user=personas["annotator"])
    assert instance.status == Status.IN_REFINEMENT
    assert instance.author == personas["annotator"]
    assert instance.lease_expires_at > timezone.now() + timedelta(minutes=25)


def test_next_gives_back_the_held_instance_first(personas, project, drafts):
    first = queue_next(project=project, user=personas["annotator"])
    assert queue_next(project=project, user=personas["annotator"]).pk == first.pk
    assert Instance.objects.filter(status=Status.IN_REFINEMENT).count() == 1


def test_only_open_batches_feed_the_queue(personas, project, make_instance):
    planned = batch_create(project=project, actor=None, name="later")
    make_instance(batch=planned)
    make_instance()  # no batch at all
    assert queue_next(project=project, user=personas["annotator"]) is None


def test_unqualified_annotator_and_verifier_have_no_queue(personas, project, drafts):
    with pytest.raises(NotPermitted, match="qualification"):
        queue_next(project=project, user=personas["novice"])
    with pytest.raises(NotPermitted, match="Only annotators"):
        queue_next(project=project, user=personas["verifier"])


def test_claims_take_batches_in_order(personas, project, open_batch, make_instance):
    later = batch_open(batch_id=batch_create(project=project, actor=None, name="B2").pk, actor=None)
    late = make_instance(batch=later)
    early = [make_instance(batch=open_batch) for _ in range(2)]
    claimed = [queue_next(project=project, user=personas[name]).pk for name in ("annotator", "annotator2")]
    assert sorted(claimed) == sorted(i.pk for i in early)
    assert Instance.objects.get(pk=late.pk).status == Status.DRAFTED


def test_claims_follow_the_batch_order_past_batches_without_drafts(personas, project, open_batch, make_instance):
    """The claim takes the first open batch in the batch order that still has a draft: an earlier one whose drafts
    are all taken is passed over, and a batch created last but ordered before the others comes first."""
    taken = batch_open(batch_id=batch_create(project=project, actor=None, name="taken").pk, actor=None)
    ordered_first = batch_open(batch_id=batch_create(project=project, actor=None, name="first").pk, actor=None)
    # Moved past every order taken so far, one at a time, as a batch's order is unique in its project.
    Batch.objects.filter(pk=taken.pk).update(order=10)
    Batch.objects.filter(pk=ordered_first.pk).update(order=11)
    Batch.objects.filter(pk=open_batch.pk).update(order=12)
    make_instance(batch=taken, initial_status=Status.VALIDATED)  # no draft left in it
    wanted = [make_instance(batch=ordered_first) for _ in range(2)]
    later = [make_instance(batch=open_batch) for _ in range(2)]
    claimed = [queue_next(project=project, user=personas[name]).pk for name in ("annotator", "annotator2")]
    assert sorted(claimed) == sorted(i.pk for i in wanted)
    assert set(Instance.objects.filter(pk__in=[i.pk for i in later]).values_list("status", flat=True)) == {
        Status.DRAFTED
    }


def test_the_claim_says_how_the_instance_came(personas, project, drafts):
    user = personas["annotator"]
    first = queue_claim(project_slug=project.slug, user=user)
    assert (first.how, first.status, first.version) == ("claimed", Status.IN_REFINEMENT, 2)
    again = queue_claim(project_slug=project.slug, user=user)
    assert (again.how, again.instance_id, again.version) == ("held", first.instance_id, 2)
    assert again.lease_expires_at >= first.lease_expires_at
    event = TransitionEvent.objects.filter(instance_id=first.instance_id).latest("id")
    assert (event.actor, event.from_status, event.to_status, event.version, event.reason) == (
        user,
        Status.DRAFTED,
        Status.IN_REFINEMENT,
        2,
        "claimed from the queue",
    )


def test_outsiders_learn_nothing_of_the_queue(personas, project, drafts):
    with pytest.raises(NotFound):
        queue_claim(project_slug=project.slug, user=personas["outsider"])
    with pytest.raises(NotFound):
        queue_claim(project_slug="no-such-project", user=personas["annotator"])


def test_the_claim_statement_itself_refuses_anyone_but_a_qualified_annotator(personas, project, drafts):
    """The role check is repeated inside the single claim statement, whoever calls it."""

    def claim(name):
        return instance_claim(project_slug=project.slug, actor=personas[name], lease_expires_at=lease_deadline())

    for name in ("novice", "verifier", "manager", "outsider"):
        assert claim(name) is None
    assert not Instance.objects.exclude(status=Status.DRAFTED).exists()
    assert claim("annotator") is not None
    assert claim("annotator") is None  # holding one, they get no second
    assert Instance.objects.filter(author=personas["annotator"]).count() == 1


def test_claims_spread_reasoning_types(personas, project, drafts):
    user = personas["annotator"]
    seen = []
    for _ in range(4):
        instance = queue_next(project=project, user=user)
        seen.append(instance.reasoning_type_id)
        workspace_submit(instance_id=instance.pk, user=user, expected_version=complete(instance, user).version)
    assert seen[0] != seen[1] and seen[2] != seen[3]


def test_changes_requested_come_back_to_the_author_first(personas, project, drafts):
    annotator, verifier = personas["annotator"], personas["verifier"]
    instance = queue_next(project=project, user=annotator)
    instance = workspace_submit(
        instance_id=instance.pk, user=annotator, expected_version=complete(instance, annotator).version
    )
    instance = instance_transition(instance_id=instance.pk, target=Status.ROUND1_REVIEW, actor=verifier)
    instance_transition(
        instance_id=instance.pk,
        target=Status.CHANGES_REQUESTED,
        actor=verifier,
        details={"comments": [{"field": "", "text": "Say which model."}]},
    )
    assert queue_claim(project_slug=project.slug, user=annotator).how == "resumed"
    again = queue_next(project=project, user=annotator)
    assert again.pk == instance.pk and again.status == Status.IN_REFINEMENT
    with pytest.raises(InvalidInput, match="cannot go back to the queue"):
        workspace_skip(instance_id=again.pk, user=annotator, reason="boring")


def test_skip_needs_a_reason_and_returns_the_draft(personas, project, drafts):
    user = personas["annotator"]
    instance = queue_next(project=project, user=user)
    with pytest.raises(InvalidInput, match="Say why"):
        workspace_skip(instance_id=instance.pk, user=user, reason="  ")
    skipped = workspace_skip(instance_id=instance.pk, user=user, reason="outside my field")
    assert (skipped.status, skipped.author) == (Status.DRAFTED, None)
    assert TransitionEvent.objects.filter(instance=instance).last().reason == "skipped: outside my field"


def test_submit_lists_what_is_missing(personas, project, drafts):
    user = personas["annotator"]
    instance = queue_next(project=project, user=user)
    instance = workspace_autosave(
        instance_id=instance.pk, user=user, expected_version=instance.version, fields={"question": "", "answer": []}
    )
    with pytest.raises(InvalidInput) as error:
        workspace_submit(instance_id=instance.pk, user=user, expected_version=instance.version)
    fields = {p["field"] for p in error.value.detail["problems"]}
    assert fields == {"question", "answer", "answer_source", "answer_form", "answer_type"}
    assert Instance.objects.get(pk=instance.pk).status == Status.IN_REFINEMENT


def test_source_must_agree_with_relevant_tables(personas, project, drafts):
    user = personas["annotator"]
    instance = complete(queue_next(project=project, user=user), user)
    assert submission_problems(instance) == []
    instance = workspace_autosave(
        instance_id=instance.pk, user=user, expected_version=instance.version, fields={"answer_source": "text"}
    )
    assert [p["field"] for p in submission_problems(instance)] == ["relevant_tables"]
    instance = workspace_autosave(
        instance_id=instance.pk,
        user=user,
        expected_version=instance.version,
        fields={"answer_source": "table", "excluded_table_ids": [t.pk for t in instance.relevant_tables.all()]},
    )
    assert "wrongly extracted" in submission_problems(instance)[0]["message"]


def test_submit_hands_the_instance_to_round_one(personas, project, drafts):
    user = personas["annotator"]
    instance = complete(queue_next(project=project, user=user), user)
    submitted = workspace_submit(instance_id=instance.pk, user=user, expected_version=instance.version)
    assert submitted.status == Status.SUBMITTED
    assert submitted.lease_expires_at is None
    assert submitted.revisions.filter(kind="submit").exists()


def test_a_stale_autosave_is_a_conflict(personas, project, drafts):
    user = personas["annotator"]
    instance = queue_next(project=project, user=user)
    workspace_autosave(instance_id=instance.pk, user=user, expected_version=instance.version, fields={"question": "1"})
    with pytest.raises(Conflict):
        workspace_autosave(
            instance_id=instance.pk, user=user, expected_version=instance.version, fields={"question": "2"}
        )
    assert Instance.objects.get(pk=instance.pk).question == "1"


def test_someone_else_cannot_autosave_or_submit(personas, project, drafts):
    instance = queue_next(project=project, user=personas["annotator"])
    # Neither another annotator (who may not see the instance) nor the verifier (who may) has it in their work: both
    # are told so as for a missing id (404), whether they write or read (`held`, the one rule).
    for person in ("annotator2", "verifier"):
        with pytest.raises(NotFound, match="in your work"):
            workspace_read(user=personas[person], instance_id=instance.pk, whole_paper=False)
        with pytest.raises(NotFound):
            workspace_autosave(
                instance_id=instance.pk,
                user=personas[person],
                expected_version=instance.version,
                fields={"question": "x"},
            )
        with pytest.raises(NotFound):
            workspace_submit(instance_id=instance.pk, user=personas[person], expected_version=instance.version)


def test_expired_lease_returns_to_queue_and_keeps_the_work(personas, project, drafts):
    user = personas["annotator"]
    instance = queue_next(project=project, user=user)
    workspace_autosave(
        instance_id=instance.pk, user=user, expected_version=instance.version, fields={"question": "Kept?"}
    )
    assert leases_reap(now=timezone.now() + timedelta(hours=1)) == 1
    returned = Instance.objects.get(pk=instance.pk)
    assert (returned.status, returned.author) == (Status.DRAFTED, None)
    assert returned.question == "Kept?"
    assert returned.revisions.filter(kind="lease-expired", fields__question="Kept?").exists()


def test_an_autosave_after_the_lease_was_reaped_says_the_instance_is_no_longer_held(personas, project, drafts):
    """The holder's page saves a moment after the reaper took the instance back: a 403 that says so (not a 404)."""
    user = personas["annotator"]
    instance = queue_next(project=project, user=user)
    assert leases_reap(now=timezone.now() + timedelta(hours=1)) == 1
    with pytest.raises(NotPermitted, match="do not hold this instance any more"):
        workspace_autosave(
            instance_id=instance.pk, user=user, expected_version=instance.version, fields={"question": "Late?"}
        )
    # Reopening the workspace says the same, whether the instance waits in the queue or someone else took it since.
    with pytest.raises(NotPermitted, match="do not hold this instance any more"):
        workspace_read(user=user, instance_id=instance.pk, whole_paper=False)
    Instance.objects.filter(pk=instance.pk).update(status=Status.IN_REFINEMENT, author=personas["annotator2"])
    with pytest.raises(NotPermitted, match="do not hold this instance any more"):
        workspace_read(user=user, instance_id=instance.pk, whole_paper=False)
    with pytest.raises(NotFound):  # an outsider still learns nothing, not even that the id exists
        workspace_autosave(
            instance_id=instance.pk, user=personas["outsider"], expected_version=instance.version, fields={}
        )


def test_work_time_counts_short_gaps_only(personas, project, drafts, monkeypatch):
    user = personas["annotator"]
    instance = queue_next(project=project, user=user)
    start = timezone.now()
    for offset in (0, 30, 60, 600, 620):  # the 540 s gap is a break, not work
        monkeypatch.setattr(timezone, "now", lambda offset=offset: start + timedelta(seconds=offset))
        work_ping(instance_id=instance.pk, user=user, activity="refine")
    assert WorkTime.objects.get(user=user, instance=instance).active_seconds == pytest.approx(80)


@pytest.mark.parametrize(
    ("answer", "form"), [(["12.5"], "short"), (["one two three four five"], "short"), (["a b c d e f"], "free")]
)
def test_suggested_form_follows_scitats_five_word_rule(answer, form):
    assert answer_form(answer) == form


@postgres_only()
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_many_concurrent_claimers_never_share_an_instance(project, open_batch, make_instance, make_user):
    from curation.services.projects import membership_add

    instances = [
        make_instance(batch=open_batch, answer_form="short", answer_source="text", answer_type="span")
        for _ in range(96)
    ]
    users = []
    for i in range(32):
        user = make_user(f"claimer{i}")
        membership_add(project=project, actor=None, username=user.username, role="annotator", is_qualified=True)
        users.append(user)
    claims: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(users))

    def work(user):
        try:
            barrier.wait()
            while True:
                instance = queue_next(project=project, user=user)
                if instance is None:
                    return
                with lock:
                    claims.append((instance.pk, user.pk))
                # Hand it on so the next claim is a fresh one.
                instance_transition(instance_id=instance.pk, target=Status.SUBMITTED, actor=user)
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    claimed = [pk for pk, _ in claims]
    assert sorted(claimed) == sorted(i.pk for i in instances)  # every instance exactly once
    assert Instance.objects.filter(status=Status.SUBMITTED).count() == len(instances)
    assert len({user for _, user in claims}) > 1


def test_any_path_to_validated_settles_a_sequential_batch(personas, project, open_batch, make_instance):
    """Gating is a lifecycle hook, so even the generic transition function opens the next batch."""
    from curation.batches.services import batch_create
    from curation.models import Batch, Project

    Project.objects.filter(pk=project.pk).update(gating=Project.Gating.SEQUENTIAL)
    following = batch_create(project=project, actor=None, name="B2")
    instance = make_instance(batch=open_batch, answer_form="short", answer_source="text", answer_type="span")
    steps = [
        (Status.IN_REFINEMENT, "annotator"),
        (Status.SUBMITTED, "annotator"),
        (Status.ROUND1_REVIEW, "verifier"),
        (Status.ROUND2_REVIEW, "verifier"),
        (Status.VALIDATED, "annotator2"),
    ]
    for target, persona in steps:
        instance_transition(instance_id=instance.pk, target=target, actor=personas[persona])
    assert Batch.objects.get(pk=open_batch.pk).state == Batch.State.CLOSED
    assert Batch.objects.get(pk=following.pk).state == Batch.State.OPEN


def test_expired_round_two_lease_releases_the_reviewer(personas, project, open_batch, make_instance):
    instance = make_instance(batch=open_batch, answer_form="short", answer_source="text", answer_type="span")
    for target, persona in [
        (Status.IN_REFINEMENT, "annotator"),
        (Status.SUBMITTED, "annotator"),
        (Status.ROUND1_REVIEW, "verifier"),
        (Status.ROUND2_REVIEW, "verifier"),
    ]:
        instance = instance_transition(instance_id=instance.pk, target=target, actor=personas[persona])
    instance = instance_transition(
        instance_id=instance.pk,
        target=Status.ROUND2_REVIEW,
        actor=personas["annotator2"],
        assignments={"lease_expires_at": timezone.now() + timedelta(minutes=5)},
    )
    assert instance.round2_reviewer == personas["annotator2"]
    assert leases_reap(now=timezone.now() + timedelta(hours=1)) == 1
    released = Instance.objects.get(pk=instance.pk)
    assert (released.status, released.round2_reviewer) == (Status.ROUND2_REVIEW, None)
    assert released.events.last().reason == "lease expired"


# --- Lease expiry: one rule, one reaper -------------------------------------------------------------------------


def _sent_back_and_resumed(project, personas):
    """An instance a verifier sent back, resumed by its annotator (in refinement under a lease again)."""
    from tests.annotate.review.helpers import sent_back

    submitted = sent_back(project, personas, {"field": "answer", "text": "Name both models."})
    claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
    assert (claim.instance_id, claim.how) == (submitted.pk, "resumed")
    return Instance.objects.get(pk=submitted.pk)


def test_expired_lease_on_resumed_work_returns_it_to_its_author_and_next_review_keeps_working(
    personas, project, drafts, api_client_for
):
    from tests.annotate.review.helpers import submit

    resumed = _sent_back_and_resumed(project, personas)
    submit(project, personas["annotator2"])  # something for the verifiers to review
    Instance.objects.filter(pk=resumed.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    url = f"/api/projects/{project.slug}/review/next/"
    for name in ("verifier", "verifier2"):  # requests do not reap, so the expired lease cannot break them
        assert api_client_for(personas[name]).post(url).status_code in (200, 204)
    assert Instance.objects.get(pk=resumed.pk).status == Status.IN_REFINEMENT  # only the reaper returns it

    assert leases_reap() == 1
    returned = Instance.objects.get(pk=resumed.pk)
    assert (returned.status, returned.author, returned.lease_expires_at) == (
        Status.CHANGES_REQUESTED,
        personas["annotator"],
        None,
    )
    assert returned.revisions.last().kind == "lease-expired"
    statuses = [api_client_for(personas[name]).post(url).status_code for name in ("verifier", "verifier2")]
    assert 200 in statuses and set(statuses) <= {200, 204}
    assert queue_claim(project_slug=project.slug, user=personas["annotator"]).how == "resumed"


def test_the_reaper_logs_and_skips_a_row_it_cannot_move(personas, project, drafts, monkeypatch, caplog):
    from annotate.work import leases

    broken = queue_next(project=project, user=personas["annotator"])
    fine = queue_next(project=project, user=personas["annotator2"])
    real = leases.lease_return_target

    def target(instance):
        if instance.pk == broken.pk:
            raise RuntimeError("cannot decide")
        return real(instance)

    monkeypatch.setattr(leases, "lease_return_target", target)
    assert leases_reap(now=timezone.now() + timedelta(hours=1)) == 1
    assert Instance.objects.get(pk=fine.pk).status == Status.DRAFTED
    assert Instance.objects.get(pk=broken.pk).status == Status.IN_REFINEMENT
    assert not Instance.objects.get(pk=broken.pk).revisions.filter(kind="lease-expired").exists()  # rolled back
    assert f"instance {broken.pk}" in caplog.text


def test_the_return_target_covers_every_leased_status(personas, project, drafts):
    from annotate.work.leases import lease_return_target
    from curation.states import LEASED_STATUSES, SYSTEM_TRANSITIONS

    fresh = queue_next(project=project, user=personas["annotator2"])
    resumed = _sent_back_and_resumed(project, personas)
    for instance, expected in ((fresh, Status.DRAFTED), (resumed, Status.CHANGES_REQUESTED)):
        assert lease_return_target(instance) == expected
    for status, expected in ((Status.ROUND1_REVIEW, Status.SUBMITTED), (Status.ROUND2_REVIEW, Status.ROUND2_REVIEW)):
        assert lease_return_target(Instance(status=status)) == expected
    for status in LEASED_STATUSES:
        instance = resumed if status == Status.IN_REFINEMENT else Instance(status=status)
        assert (status, lease_return_target(instance)) in SYSTEM_TRANSITIONS
    with pytest.raises(InvalidInput):
        lease_return_target(Instance(status=Status.SUBMITTED))


# --- The queue behaves as people expect: skip, give back, sent back ---------------------------------------------


def test_a_skipped_draft_is_set_aside_for_the_skipper_only(personas, project, drafts):
    annotator, other = personas["annotator"], personas["annotator2"]
    skipped = queue_next(project=project, user=annotator)
    workspace_skip(instance_id=skipped.pk, user=annotator, reason="outside my field")
    following = queue_next(project=project, user=annotator)
    assert following.pk != skipped.pk
    assert queue_next(project=project, user=other).pk == skipped.pk  # others get it at once
    workspace_skip(instance_id=skipped.pk, user=other, reason="me neither")
    workspace_skip(instance_id=following.pk, user=annotator, reason="also not mine")
    assert queue_next(project=project, user=annotator).pk not in (skipped.pk, following.pk)


def test_skipping_every_draft_leaves_the_skipper_nothing_until_the_set_aside_time_is_over(
    personas, project, make_instance, settings
):
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="Only").pk, actor=None)
    only = make_instance(batch=batch)
    draft = queue_next(project=project, user=personas["annotator"])
    assert draft.pk == only.pk
    workspace_skip(instance_id=only.pk, user=personas["annotator"], reason="cannot read the table")
    assert queue_claim(project_slug=project.slug, user=personas["annotator"]) is None
    assert queue_next(project=project, user=personas["annotator2"]).pk == only.pk
    workspace_skip(instance_id=only.pk, user=personas["annotator2"], reason="same")
    settings.TATCURATE_SET_ASIDE_HOURS = 0  # the set-aside time is over: it comes back to them
    assert queue_next(project=project, user=personas["annotator"]).pk == only.pk


def test_give_back_returns_the_review_to_the_pile_without_reclaiming_it(personas, project, drafts):
    from annotate.review import services as review
    from tests.annotate.review.helpers import submit

    first = submit(project, personas["annotator"])
    second = submit(project, personas["annotator2"])
    verifier, verifier2 = personas["verifier"], personas["verifier2"]
    taken = review.review_next(project=project, user=verifier)
    given_back = review.review_release(instance_id=taken.pk, user=verifier)
    assert (given_back.status, given_back.round1_verifier) == (Status.SUBMITTED, None)
    again = review.review_next(project=project, user=verifier)
    assert again.pk != taken.pk and {again.pk, taken.pk} == {first.pk, second.pk}
    assert review.review_next(project=project, user=verifier2).pk == taken.pk  # back in the pile for others
    review.review_release(instance_id=again.pk, user=verifier)
    # Nothing else waits for them: what they gave back comes back rather than stranding.
    assert review.review_next(project=project, user=verifier).pk == again.pk


def test_sent_back_work_opens_at_once_while_a_draft_is_held(personas, project, drafts, client):
    from annotate.review import services as review
    from annotate.work.queue import queue_resume
    from tests.annotate.review.helpers import submit

    annotator = personas["annotator"]
    sent_back = submit(project, annotator)
    held = queue_next(project=project, user=annotator)
    held = workspace_autosave(
        instance_id=held.pk, user=annotator, expected_version=held.version, fields={"question": "Half done?"}
    )
    claimed = review.review_claim(instance_id=sent_back.pk, user=personas["verifier"])
    review.review_request_changes(
        instance_id=claimed.pk,
        user=personas["verifier"],
        expected_version=claimed.version,
        comments=[{"field": "question", "text": "Ask about the second table."}],
    )

    client.force_login(annotator)
    home = client.get(f"/p/{project.slug}/work/").content.decode()
    assert f"Open #{sent_back.pk}" in home and "In your hands" in home
    done = home[home.index("<h2>Done</h2>") :]
    assert "Nothing submitted yet" not in done and 'is under "Sent back to you"' in done
    response = client.post(f"/p/{project.slug}/work/{sent_back.pk}/resume/")
    assert response.status_code == 302 and response["Location"] == f"/p/{project.slug}/work/{sent_back.pk}/"
    assert client.get(response["Location"]).status_code == 200
    assert Instance.objects.get(pk=sent_back.pk).status == Status.IN_REFINEMENT
    still_held = Instance.objects.get(pk=held.pk)  # the draft stays theirs, with its autosave and its lease
    assert (still_held.status, still_held.author, still_held.question) == (
        Status.IN_REFINEMENT,
        annotator,
        "Half done?",
    )
    assert queue_resume(instance_id=sent_back.pk, user=annotator).how == "held"  # opening it again is harmless


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("annotator", 200), ("annotator2", 404), ("verifier", 404), ("manager", 404), ("outsider", 404)],
)
def test_resume_api_by_role(personas, project, drafts, api_client_for, persona, expected):
    from tests.annotate.review.helpers import sent_back

    submitted = sent_back(project, personas, {"field": "", "text": "Fix it."})
    response = api_client_for(personas[persona]).post(f"/api/instances/{submitted.pk}/resume/")
    assert response.status_code == expected, response.content[:200]
    if expected == 200:
        assert response.json()["how"] == "resumed"
    assert Instance.objects.get(pk=submitted.pk).status == (
        Status.IN_REFINEMENT if expected == 200 else Status.CHANGES_REQUESTED
    )


def test_a_qualification_revoked_between_claims_is_refused_at_the_next_claim(personas, project, drafts):
    """The claim reads membership and qualification inside its own statement on every call (prepared once per
    connection on PostgreSQL, never a cached answer): a pause takes effect at the very next claim."""
    from curation.models import Membership

    user = personas["annotator"]
    for _ in range(7):  # enough claims on this connection for the statement to be prepared and planned once
        claim = queue_claim(project_slug=project.slug, user=user)
        assert claim is not None and claim.how == "claimed"
        instance_transition(instance_id=claim.instance_id, target=Status.DRAFTED, actor=None)  # the lease ran out
    # What a hidden-gold pause does (annotate.quality.services.annotator_check).
    Membership.objects.filter(project=project, user=user, role="annotator").update(is_qualified=False)
    with pytest.raises(NotPermitted, match="qualification exam"):
        queue_claim(project_slug=project.slug, user=user)
    assert instance_claim(project_slug=project.slug, actor=user, lease_expires_at=lease_deadline()) is None
    assert not Instance.objects.filter(project=project, status=Status.IN_REFINEMENT).exists()
    Membership.objects.filter(project=project, user=user, role="annotator").update(is_qualified=True)
    assert queue_claim(project_slug=project.slug, user=user).how == "claimed"  # re-qualified: at once again


def test_the_claim_asks_the_queues_look_live_though_its_sql_is_compiled_once(personas, project, drafts):
    """A second copy opened after Next compiled its look: the claim with the look inside refuses (the queue then
    serves the copy first), the bare claim does not."""
    from annotate.work.queue import _something_first_sql
    from tests.annotate.agreement.helpers import double_on, first_submission

    user = personas["annotator"]

    def claim(**options):
        return instance_claim(project_slug=project.slug, actor=user, lease_expires_at=lease_deadline(), **options)

    claimed = claim(unless=_something_first_sql())
    assert claimed is not None
    instance_transition(instance_id=claimed[0], target=Status.DRAFTED, actor=None)
    double_on(project, personas["manager"])
    first_submission(project=project, user=personas["annotator2"])  # a copy now waits for a second annotator
    assert claim(unless=_something_first_sql()) is None
    assert not Instance.objects.filter(project=project, status=Status.IN_REFINEMENT, author=user).exists()
    assert claim() is not None


@postgres_only()
@pytest.mark.postgres
def test_the_claim_is_prepared_on_its_connection_and_nothing_else_is(personas, project, drafts):
    """The claim's statement is a prepared statement of the connection (planned once, then only executed); every
    other statement binds on the client and is never prepared, so the connection remembers none of their texts."""
    user = personas["annotator"]
    for _ in range(3):
        claim = queue_claim(project_slug=project.slug, user=user)
        assert claim is not None and claim.how == "claimed"
        instance_transition(instance_id=claim.instance_id, target=Status.DRAFTED, actor=None)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert len(prepared) == 1, prepared
    assert "UPDATE" in prepared[0].upper() and "curation_instance" in prepared[0]
    assert connection.connection.prepare_threshold is None  # off again once the claim has run


def test_the_done_list_says_discarded_of_a_discarded_instance(personas, project, drafts, client):
    from annotate.instances.services import instance_discard
    from tests.annotate.review.helpers import submit

    annotator = personas["annotator"]
    kept, dropped = submit(project, annotator), submit(project, annotator)
    instance_discard(instance_id=dropped.pk, actor=personas["manager"], expected_version=dropped.version, reason="dup")

    client.force_login(annotator)
    rows = {
        row.split("</td>")[0]: row
        for row in client.get(f"/p/{project.slug}/work/").content.decode().split("<tr><td>")[1:]
    }
    assert "Handed in" in rows[str(kept.pk)] and "Discarded" not in rows[str(kept.pk)]
    assert "Discarded" in rows[str(dropped.pk)] and "Handed in" not in rows[str(dropped.pk)]
    # The column says what the annotator did, not the item's status now (a released item is no longer "handed in").
    assert "<th>What you did</th>" in client.get(f"/p/{project.slug}/work/").content.decode()


def test_the_done_list_labels_the_first_hand_in_of_a_resubmitted_instance(personas, project, drafts, client):
    from tests.annotate.review.helpers import submit

    annotator = personas["annotator"]
    once, again = submit(project, annotator), submit(project, annotator)
    # Sent back and handed in a second time: the time shown is still the first hand-in's, and the label says so.
    TransitionEvent.objects.create(
        instance=again, actor=annotator, from_status=Status.CHANGES_REQUESTED, to_status=Status.SUBMITTED, version=9
    )
    client.force_login(annotator)
    rows = {
        row.split("</td>")[0]: row
        for row in client.get(f"/p/{project.slug}/work/").content.decode().split("<tr><td>")[1:]
    }
    assert "First handed in <time" in rows[str(again.pk)]
    assert "Handed in <time" in rows[str(once.pk)] and "First" not in rows[str(once.pk)]
