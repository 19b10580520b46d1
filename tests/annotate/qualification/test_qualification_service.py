"""Qualification exam services: configure, start, autosave, submit; pass, fail, retry delay, deadline, feedback."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotate.qualification import services
from annotate.qualification.models import QualificationAttempt, QualificationItem
from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.models import Membership, ReasoningType
from curation.services.lifecycle import instance_create
from curation.states import Role, Status
from tests.annotate.qualification.support import GOLD, correct_answers, make_gold
from tests.conftest import PASSWORD
from tests.factories import ValidatedInstanceFactory


@pytest.fixture
def exam(project, personas, gold):
    return services.qualification_configure(
        project=project, actor=personas["manager"], instance_ids=[i.pk for i in gold], retry_delay_hours=24
    )


def membership(project, user) -> Membership:
    return Membership.objects.get(project=project, user=user, role=Role.ANNOTATOR)


def test_only_managers_configure_the_exam(project, personas, gold):
    for name in ("annotator", "novice", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            services.qualification_configure(project=project, actor=personas[name], instance_ids=[gold[0].pk])
    exam = services.qualification_configure(project=project, actor=personas["manager"], instance_ids=[gold[0].pk])
    assert list(exam.item_links.values_list("instance_id", flat=True)) == [gold[0].pk]
    assert exam.size == 1


def test_exam_items_must_be_validated_instances_of_the_project(project, personas, gold, make_instance):
    draft = make_instance()
    with pytest.raises(InvalidInput) as error:
        services.qualification_configure(
            project=project, actor=personas["manager"], instance_ids=[gold[0].pk, draft.pk, 999999]
        )
    assert error.value.detail["invalid_ids"] == [draft.pk, 999999]
    assert not QualificationItem.objects.exists()


def test_auto_pick_spreads_reasoning_types_and_prefers_short_answers(project, personas, context):
    look_up = ReasoningType.objects.get(project=project, code="span_lookup")
    counting = ReasoningType.objects.get(project=project, code="counting")
    causal = ReasoningType.objects.get(project=project, code="causal_analysis")

    def gold(reasoning_type, answer):
        return instance_create(
            project_id=project.pk,
            actor=None,
            initial_status=Status.VALIDATED,
            context=context,
            reasoning_type=reasoning_type,
            question="Q?",
            answer=answer,
        )

    lookups = [gold(look_up, ["x"]) for _ in range(3)]
    counts = [gold(counting, ["3"]) for _ in range(3)]
    free = gold(causal, ["because the sparse model regularises small treebanks well"])
    short_causal = gold(causal, ["regularisation"])
    exam = services.qualification_configure(project=project, actor=personas["manager"], instance_ids=None, size=2)
    pool = list(exam.item_links.order_by("order").values_list("instance_id", flat=True))
    # A pool of 3 × 2: one per top-level type in turn (data_analysis, look_up, numerical_reasoning), short-form first.
    assert pool == [short_causal.pk, lookups[0].pk, counts[0].pk, lookups[1].pk, counts[1].pk, lookups[2].pk]
    assert free.pk not in pool
    again = services.qualification_configure(project=project, actor=personas["manager"], instance_ids=None, size=2)
    assert list(again.item_links.order_by("order").values_list("instance_id", flat=True)) == pool
    attempt = services.attempt_start(project=project, user=personas["novice"])
    assert attempt.item_ids == pool[:2]


def _fail(attempt, user):
    wrong = {str(pk): {"answer": ["not it"], "rationale": "guess"} for pk in attempt.item_ids}
    return services.attempt_submit(attempt_id=attempt.pk, user=user, answers=wrong)


def test_replaying_feedback_on_every_retry_never_passes_and_an_exhausted_pool_refuses_with_the_reason(
    project, personas, context
):
    gold = make_gold(project, context) + make_gold(project, context)  # eight gold items
    services.qualification_configure(
        project=project, actor=personas["manager"], instance_ids=[i.pk for i in gold], size=3, retry_delay_hours=0
    )
    novice = personas["novice"]
    learned: dict[int, list[str]] = {}  # every gold answer the feedback has shown so far
    served: list[int] = []
    for _ in range(2):  # 8 items of 3 per attempt: the first attempt and one retry
        attempt = services.attempt_start(project=project, user=novice)
        assert not set(attempt.item_ids) & set(served)  # nothing whose answer was shown
        served += attempt.item_ids
        replayed = {
            str(pk): {"answer": learned.get(pk, ["not it"]), "rationale": "from the feedback"}
            for pk in attempt.item_ids
        }
        scored = services.attempt_submit(attempt_id=attempt.pk, user=novice, answers=replayed)
        assert scored.passed is False and scored.score == 0.0
        learned.update({row["instance_id"]: row["gold"] for row in scored.results})
    with pytest.raises(NotPermitted) as refused:
        services.attempt_start(project=project, user=novice)
    assert refused.value.detail == {"reason": "exam_pool_exhausted", "unseen": 2, "size": 3}
    assert "add gold" in refused.value.message
    client = Client()
    assert client.login(username="novice", password=PASSWORD)
    page = client.post(f"/p/{project.slug}/qualification/start/", follow=True)
    assert "only 2 remain" in page.content.decode()  # the candidate is told why
    assert QualificationAttempt.objects.filter(user=novice).count() == 2
    # Another candidate starts from the beginning of the pool.
    other = Membership.objects.get(project=project, user=personas["annotator2"], role=Role.ANNOTATOR)
    Membership.objects.filter(pk=other.pk).update(is_qualified=False)
    assert services.attempt_start(project=project, user=personas["annotator2"]).item_ids == served[:3]


def test_the_exam_page_says_how_many_retries_the_pool_supports(project, personas, context):
    gold = make_gold(project, context) + make_gold(project, context)
    services.qualification_configure(
        project=project, actor=personas["manager"], instance_ids=[i.pk for i in gold], size=3
    )
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    page = client.get(f"/p/{project.slug}/qualification/manage/").content.decode()
    assert "The pool of 8 items supports 1 retry per candidate" in page
    assert 'id="add-more-gold">Add 1 more gold item</a> for one more retry.' in page


@pytest.mark.parametrize(
    ("pool", "size", "seen", "drawn"),
    [
        ([1, 2, 3, 4, 5, 6], 2, set(), [1, 2]),
        ([1, 2, 3, 4, 5, 6], 2, {1, 2}, [3, 4]),
        ([1, 2, 3, 4, 5, 6], 2, {1, 2, 3, 4, 5}, []),  # one unseen item cannot make an exam of two
        ([1, 2, 3, 4, 5, 6], 3, {1, 2, 3, 4}, []),
        ([1, 2], 2, set(), [1, 2]),
    ],
)
def test_exam_items_draw_only_items_never_shown(pool, size, seen, drawn):
    assert services.exam_items_draw(pool=pool, size=size, seen=seen) == drawn


def test_auto_pick_takes_unreleased_items_before_released_ones(project, personas, context):
    from curation.services.lifecycle import instances_transition_bulk

    look_up = ReasoningType.objects.get(project=project, code="span_lookup")
    items = [
        ValidatedInstanceFactory(
            project=project, context=context, reasoning_type=look_up, question=f"Q{n}?", answer=["x"]
        )
        for n in range(4)
    ]
    released = items[:2]  # the oldest, which id order alone would pick first
    instances_transition_bulk(
        instance_ids=[i.pk for i in released], target=Status.RELEASED, expected_status=Status.VALIDATED, reason="cut"
    )
    exam = services.qualification_configure(project=project, actor=personas["manager"], instance_ids=None, size=1)
    pool = list(exam.item_links.order_by("order").values_list("instance_id", flat=True))
    assert pool == [items[2].pk, items[3].pk, items[0].pk]  # the unreleased first, released only to fill the pool


def test_auto_pick_without_gold_data_says_what_to_do(project, personas):
    with pytest.raises(InvalidInput, match="no validated instances"):
        services.qualification_configure(project=project, actor=personas["manager"], instance_ids=None)


def test_changing_numbers_keeps_hand_picked_items(project, personas, exam, gold):
    services.qualification_configure(project=project, actor=personas["manager"], keep_items=True, threshold=0.5)
    exam.refresh_from_db()
    assert exam.threshold == 0.5
    assert exam.item_links.count() == len(gold)


def test_only_unqualified_annotators_start_an_attempt(project, personas, exam):
    for name in ("verifier", "manager", "outsider"):
        with pytest.raises(NotPermitted):
            services.attempt_start(project=project, user=personas[name])
    with pytest.raises(Conflict, match="already qualified"):
        services.attempt_start(project=project, user=personas["annotator"])
    attempt = services.attempt_start(project=project, user=personas["novice"])
    assert attempt.item_ids == [link.instance_id for link in exam.item_links.order_by("order")]
    assert attempt.deadline_at is None


def test_starting_again_resumes_the_open_attempt(project, personas, exam):
    first = services.attempt_start(project=project, user=personas["novice"])
    assert services.attempt_start(project=project, user=personas["novice"]).pk == first.pk
    assert QualificationAttempt.objects.count() == 1


def test_no_exam_configured_is_a_clear_refusal(project, personas):
    with pytest.raises(Conflict, match="not set up"):
        services.attempt_start(project=project, user=personas["novice"])


def test_items_the_candidate_can_already_see_are_left_out(project, personas, exam, gold):
    # The novice becomes a verifier too, so every instance is visible: the exam would test nothing.
    Membership.objects.create(user=personas["novice"], project=project, role=Role.VERIFIER)
    with pytest.raises(NotPermitted, match="already see every exam item"):
        services.attempt_start(project=project, user=personas["novice"])


def test_time_limit_sets_a_deadline(project, personas, exam):
    services.qualification_configure(project=project, actor=personas["manager"], keep_items=True, time_limit_minutes=30)
    attempt = services.attempt_start(project=project, user=personas["novice"])
    assert attempt.deadline_at - attempt.started_at == timedelta(minutes=30)


def test_autosave_merges_answers_per_item_and_only_for_the_owner(project, personas, exam, gold):
    attempt = services.attempt_start(project=project, user=personas["novice"])
    services.attempt_save(attempt_id=attempt.pk, user=personas["novice"], answers={str(gold[0].pk): ["Zyx"]})
    services.attempt_save(
        attempt_id=attempt.pk, user=personas["novice"], answers={str(gold[1].pk): {"answer": ["a", " ", "b"]}}
    )
    attempt.refresh_from_db()
    assert attempt.answers == {
        str(gold[0].pk): {"answer": ["Zyx"], "rationale": ""},
        str(gold[1].pk): {"answer": ["a", "b"], "rationale": ""},
    }
    with pytest.raises(NotFound):
        services.attempt_save(attempt_id=attempt.pk, user=personas["annotator2"], answers={})
    with pytest.raises(InvalidInput, match="not part of this exam"):
        services.attempt_save(attempt_id=attempt.pk, user=personas["novice"], answers={"424242": ["x"]})
    with pytest.raises(InvalidInput, match="list of strings"):
        services.attempt_save(attempt_id=attempt.pk, user=personas["novice"], answers={str(gold[0].pk): {"answer": 5}})


def test_all_correct_passes_and_qualifies_the_annotator(project, personas, exam, gold):
    novice = personas["novice"]
    attempt = services.attempt_start(project=project, user=novice)
    answers = correct_answers(gold)
    answers[str(gold[2].pk)]["answer"] = ["73.9150"]  # equal after normalisation
    answers[str(gold[1].pk)]["answer"] = ["brambleworthset", "QUILLFEATHERSET"]  # order and case do not matter
    result = services.attempt_submit(attempt_id=attempt.pk, user=novice, answers=answers)
    assert (result.score, result.passed) == (1.0, True)
    assert all(item["em"] == 1.0 for item in result.results)
    assert "after normalisation" in result.results[2]["reason"]
    member = membership(project, novice)
    assert member.is_qualified and member.qualified_at == result.submitted_at


def test_a_mistake_fails_at_095_with_feedback_on_each_mistake(project, personas, exam, gold):
    novice = personas["novice"]
    attempt = services.attempt_start(project=project, user=novice)
    answers = correct_answers(gold)
    answers[str(gold[1].pk)]["answer"] = ["Quillfeatherset"]
    answers[str(gold[2].pk)]["answer"] = ["73.9"]
    del answers[str(gold[3].pk)]
    result = services.attempt_submit(attempt_id=attempt.pk, user=novice, answers=answers)
    assert result.score == 0.25
    assert result.passed is False
    by_id = {item["instance_id"]: item for item in result.results}
    assert by_id[gold[0].pk]["em"] == 1.0 and by_id[gold[0].pk]["reason"] == ""
    missing = by_id[gold[1].pk]
    assert missing["gold"] == ["Quillfeatherset", "Brambleworthset"]
    assert "You gave 1 item; the gold answer has 2" in missing["reason"]
    assert "Missing: “Brambleworthset”" in missing["reason"]
    assert by_id[gold[2].pk]["reason"].startswith("Rounded differently")
    assert by_id[gold[3].pk]["reason"] == "No answer was given."
    assert by_id[gold[3].pk]["gold_rationale"] == GOLD[3][2]
    assert not membership(project, novice).is_qualified


def test_threshold_is_inclusive(project, personas, exam, gold):
    services.qualification_configure(project=project, actor=personas["manager"], keep_items=True, threshold=0.75)
    attempt = services.attempt_start(project=project, user=personas["novice"])
    answers = correct_answers(gold)
    answers[str(gold[0].pk)]["answer"] = ["wrong"]
    assert services.attempt_submit(attempt_id=attempt.pk, user=personas["novice"], answers=answers).passed is True


def test_retry_waits_for_the_delay_and_every_attempt_is_kept(project, personas, context, gold):
    more = make_gold(project, context)  # a pool of two exams: the retry draws items never shown
    services.qualification_configure(
        project=project,
        actor=personas["manager"],
        instance_ids=[i.pk for i in gold + more],
        size=4,
        retry_delay_hours=24,
    )
    novice = personas["novice"]
    first = services.attempt_start(project=project, user=novice)
    first = services.attempt_submit(attempt_id=first.pk, user=novice, answers={})
    with pytest.raises(NotPermitted, match="try again from") as refusal:
        services.attempt_start(project=project, user=novice)
    retry_at = refusal.value.detail["retry_at"]
    assert retry_at.startswith(str((first.submitted_at + timedelta(hours=24)).date()))
    # The delay has passed (moved into the past rather than waiting).
    QualificationAttempt.objects.filter(pk=first.pk).update(submitted_at=timezone.now() - timedelta(hours=25))
    second = services.attempt_start(project=project, user=novice)
    assert second.pk != first.pk
    services.attempt_submit(attempt_id=second.pk, user=novice, answers=correct_answers(more))
    kept = QualificationAttempt.objects.filter(user=novice).order_by("started_at").values_list("passed", flat=True)
    kept = list(kept)
    assert kept == [False, True]
    with pytest.raises(Conflict, match="already qualified"):
        services.attempt_start(project=project, user=novice)


def test_submitting_twice_is_refused_and_answers_freeze(project, personas, exam, gold):
    novice = personas["novice"]
    attempt = services.attempt_start(project=project, user=novice)
    services.attempt_submit(attempt_id=attempt.pk, user=novice, answers={})
    with pytest.raises(Conflict, match="submitted already"):
        services.attempt_submit(attempt_id=attempt.pk, user=novice, answers=correct_answers(gold))
    with pytest.raises(Conflict, match="submitted"):
        services.attempt_save(attempt_id=attempt.pk, user=novice, answers=correct_answers(gold))
    attempt.refresh_from_db()
    assert attempt.score == 0.0


def test_after_the_deadline_only_answers_saved_in_time_count(project, personas, exam, gold):
    novice = personas["novice"]
    services.qualification_configure(project=project, actor=personas["manager"], keep_items=True, time_limit_minutes=10)
    attempt = services.attempt_start(project=project, user=novice)
    in_time = {str(gold[0].pk): ["Zyxquorbel"]}
    services.attempt_save(attempt_id=attempt.pk, user=novice, answers=in_time)
    QualificationAttempt.objects.filter(pk=attempt.pk).update(deadline_at=timezone.now() - timedelta(minutes=5))
    with pytest.raises(Conflict, match="Time is up"):
        services.attempt_save(attempt_id=attempt.pk, user=novice, answers=correct_answers(gold))
    result = services.attempt_submit(attempt_id=attempt.pk, user=novice, answers=correct_answers(gold))
    assert result.score == 0.25
    late = [item for item in result.results if item["instance_id"] != gold[0].pk]
    assert {item["reason"] for item in late} == {"No answer was saved before the time limit."}


def test_an_expired_attempt_closes_when_read_or_restarted(project, personas, exam, gold):
    novice = personas["novice"]
    services.qualification_configure(project=project, actor=personas["manager"], keep_items=True, time_limit_minutes=10)
    attempt = services.attempt_start(project=project, user=novice)
    services.attempt_save(attempt_id=attempt.pk, user=novice, answers=correct_answers(gold))
    QualificationAttempt.objects.filter(pk=attempt.pk).update(deadline_at=timezone.now() - timedelta(minutes=5))
    # Starting again scores the expired attempt first: it had every answer saved, so it passed.
    with pytest.raises(Conflict, match="you passed"):
        services.attempt_start(project=project, user=novice)
    attempt.refresh_from_db()
    assert attempt.submitted_at is not None and attempt.passed is True
    assert membership(project, novice).is_qualified


def test_a_removed_gold_instance_is_not_scored(project, personas, exam, gold):
    novice = personas["novice"]
    attempt = services.attempt_start(project=project, user=novice)
    QualificationAttempt.objects.filter(pk=attempt.pk).update(item_ids=[*attempt.item_ids, 987654])
    result = services.attempt_submit(attempt_id=attempt.pk, user=novice, answers=correct_answers(gold))
    assert result.score == 1.0
    assert result.results[-1]["em"] is None
