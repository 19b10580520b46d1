"""Two people acting on one instance at once, with real transactions on PostgreSQL: exactly one wins."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from annotate.instances.services import instance_discard
from annotate.review import services as review
from annotate.review.models import ReviewComment
from annotate.work.workspace import workspace_submit
from curation.batches.services import batch_create, batch_open, project_gating_set
from curation.errors import Conflict, DomainError
from curation.models import Batch, Instance
from curation.states import Status
from tests.annotate.review.helpers import COMPLETE, submit, to_round2
from tests.conftest import postgres_only

pytestmark = [postgres_only(), pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROUNDS = 8


def race(*actions: Callable[[], object]) -> list[object]:
    """Run the actions in threads released together; each result is the return value or the raised exception."""
    results: list[object] = [None] * len(actions)
    barrier = threading.Barrier(len(actions))

    def run(index: int, action: Callable[[], object]) -> None:
        try:
            barrier.wait()
            results[index] = action()
        except BaseException as exc:  # reported through results
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(actions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.fixture
def many_drafts(project, make_instance):
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)
    return [make_instance(batch=batch) for _ in range(ROUNDS)]


def test_two_verifiers_claiming_at_once_one_wins(personas, project, many_drafts):
    for draft in many_drafts:
        submitted = submit(project, personas["annotator"], draft)
        results = race(
            lambda: review.review_claim(instance_id=submitted.pk, user=personas["verifier"]),
            lambda: review.review_claim(instance_id=submitted.pk, user=personas["verifier2"]),
        )
        winners = [r for r in results if isinstance(r, Instance)]
        losers = [r for r in results if isinstance(r, Conflict)]
        assert (len(winners), len(losers)) == (1, 1), results
        assert "reload" in losers[0].message or "changed meanwhile" in losers[0].message
        current = Instance.objects.get(pk=submitted.pk)
        assert current.status == Status.ROUND1_REVIEW
        assert current.round1_verifier_id == winners[0].round1_verifier_id
        assert current.events.filter(to_status=Status.ROUND1_REVIEW).count() == 1


def test_review_next_never_hands_one_instance_to_two_verifiers(personas, project, many_drafts):
    for draft in many_drafts:
        submit(project, personas["annotator"], draft)
    claimed: list[int] = []
    lock = threading.Lock()

    def drain(user):
        def work():
            while True:
                instance = review.review_next(project=project, user=user)
                if instance is None:
                    return
                with lock:
                    claimed.append(instance.pk)
                review.review_approve(instance_id=instance.pk, user=user, expected_version=instance.version)

        return work

    results = race(drain(personas["verifier"]), drain(personas["verifier2"]))
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert sorted(claimed) == sorted(d.pk for d in many_drafts)


def test_verifier_and_author_at_once_never_lose_the_authors_submission(personas, project, many_drafts):
    """The author submits while the verifier tries to claim: the claim either sees the submitted work or gets a
    Conflict; the submission always goes through with its text."""
    outcomes = set()
    for i, draft in enumerate(many_drafts):
        from tests.annotate.work.helpers import queue_next

        held = queue_next(project=project, user=personas["annotator"])
        assert held.pk == draft.pk
        text = f"Final question {i}?"
        fields = {
            **COMPLETE,
            "question": text,
            "relevant_table_ids": list(draft.context.tables.values_list("id", flat=True)),
        }
        results = race(
            lambda: workspace_submit(
                instance_id=held.pk, user=personas["annotator"], expected_version=held.version, fields=fields
            ),
            lambda: review.review_claim(instance_id=held.pk, user=personas["verifier"]),
        )
        assert isinstance(results[0], Instance), results
        claim = results[1]
        assert isinstance(claim, (Instance, Conflict)), results
        current = Instance.objects.get(pk=held.pk)
        assert current.question == text
        assert current.status == (Status.ROUND1_REVIEW if isinstance(claim, Instance) else Status.SUBMITTED)
        outcomes.add(type(claim).__name__)
    assert outcomes  # at least one round ran; which side wins is up to the scheduler


def test_manager_discarding_during_a_review_one_wins_and_nothing_half_written(personas, project, many_drafts):
    for _ in many_drafts:
        # A change request heads the annotator's queue, so the next instance may be the previous one again.
        submitted = submit(project, personas["annotator"])
        claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
        results = race(
            lambda: review.review_request_changes(
                instance_id=claimed.pk,
                user=personas["verifier"],
                expected_version=claimed.version,
                comments=[{"field": "answer", "text": "Fix the answer."}],
            ),
            lambda: instance_discard(
                instance_id=claimed.pk, actor=personas["manager"], expected_version=claimed.version, reason="dup"
            ),
        )
        winners = [r for r in results if isinstance(r, Instance)]
        losers = [r for r in results if isinstance(r, Conflict)]
        assert (len(winners), len(losers)) == (1, 1), results
        current = Instance.objects.get(pk=claimed.pk)
        comments = ReviewComment.objects.filter(instance=current, instance_version__gt=claimed.version).count()
        if current.status == Status.DISCARDED:
            assert comments == 0  # the verifier's refused decision left no comment behind
        else:
            assert (current.status, comments) == (Status.CHANGES_REQUESTED, 1)


def test_concurrent_last_validations_open_the_next_batch_exactly_once(personas, project, make_instance):
    first = batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)
    second = batch_create(project=project, actor=None, name="B2")
    project_gating_set(project=project, actor=personas["manager"], gating="sequential")
    a, b = make_instance(batch=first), make_instance(batch=first)
    make_instance(batch=second)
    ready = []
    for instance, reviewer in ((a, personas["annotator2"]), (b, personas["annotator2"])):
        approved = to_round2(project, personas, instance)
        ready.append(review.round2_claim(instance_id=approved.pk, user=reviewer))
    results = race(
        *(
            (
                lambda inst=inst: review.round2_confirm(
                    instance_id=inst.pk, user=personas["annotator2"], expected_version=inst.version
                )
            )
            for inst in ready
        )
    )
    assert all(isinstance(r, Instance) for r in results), results
    assert Batch.objects.get(pk=second.pk).state == Batch.State.OPEN
    assert Batch.objects.get(pk=first.pk).state == Batch.State.CLOSED
    assert not any(isinstance(r, DomainError) for r in results)
