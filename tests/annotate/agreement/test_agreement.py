"""Double annotation: the seeded selection, the copy served only to someone else (also concurrently on PostgreSQL),
round one held for the second version, keep/merge, nobody reviewing their own work, visibility per role, and the
agreement figures on the dashboard, API, CSV and command."""

from __future__ import annotations

import json
import re
import threading
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from annotate.agreement.models import DoubleAnnotation
from annotate.agreement.services import CHOSEN_FIELDS, agreement_configure, copy_save, double_decide, is_drawn
from annotate.review.services import (
    review_approve,
    review_claim,
    review_next,
    review_request_changes,
    round2_claim,
    round2_next,
)
from annotate.tasks import leases_reap_task
from annotate.work.queue import queue_claim
from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.models import Instance, Table
from curation.services.lifecycle import instance_transition
from curation.services.projects import membership_add
from curation.states import Status
from tests.annotate.agreement.helpers import (
    approved_pair,
    double_on,
    first_submission,
    second_submission,
    submit_instance,
)
from tests.conftest import postgres_only

# --- Selection ------------------------------------------------------------------------------------------------


def test_the_selection_is_seeded_reproducible_and_follows_the_fraction():
    ids = range(1, 4001)
    drawn = [i for i in ids if is_drawn(seed=7, fraction=0.2, instance_id=i)]
    assert drawn == [i for i in ids if is_drawn(seed=7, fraction=0.2, instance_id=i)]
    assert 0.17 < len(drawn) / 4000 < 0.23
    assert drawn != [i for i in ids if is_drawn(seed=8, fraction=0.2, instance_id=i)]
    assert not any(is_drawn(seed=7, fraction=0.0, instance_id=i) for i in ids)
    assert all(is_drawn(seed=7, fraction=1.0, instance_id=i) for i in ids)


def test_nothing_is_double_annotated_while_the_setting_is_off(personas, project, drafts):
    claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
    submit_instance(Instance.objects.get(pk=claim.instance_id), personas["annotator"])
    assert not DoubleAnnotation.objects.exists()


def test_a_first_submission_opens_a_copy_that_starts_from_the_draft_not_the_first_work(personas, project, drafts):
    double_on(project, personas["manager"])
    instance, double = first_submission(project=project, user=personas["annotator"], question="My own rewording?")
    assert double.state == DoubleAnnotation.State.WAITING
    assert double.first_annotator == personas["annotator"]
    assert double.first_fields["question"] == "My own rewording?"
    assert double.question == instance.draft["question"] != "My own rewording?"
    assert double.answer_form == double.answer_source == "" and double.relevant_table_ids == []


# --- The queue ------------------------------------------------------------------------------------------------


def test_the_queue_never_gives_the_copy_to_the_first_annotator(personas, project, drafts):
    double_on(project, personas["manager"])
    instance, double = first_submission(project=project, user=personas["annotator"])
    for _ in range(4):  # the first annotator works on: fresh drafts, never their own instance's copy
        claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
        assert claim is not None and claim.copy_id is None and claim.instance_id != instance.pk
        submit_instance(Instance.objects.get(pk=claim.instance_id), personas["annotator"])
    claim = queue_claim(project_slug=project.slug, user=personas["annotator2"])
    assert claim.copy_id == double.pk
    assert queue_claim(project_slug=project.slug, user=personas["annotator2"]).copy_id == double.pk  # held
    with pytest.raises(NotFound):
        copy_save(copy_id=double.pk, user=personas["annotator"], fields={"question": "sneak"})


def test_the_database_refuses_a_copy_for_the_first_annotator(personas, project, drafts):
    from django.db import IntegrityError, transaction

    double_on(project, personas["manager"])
    _, double = first_submission(project=project, user=personas["annotator"])
    with pytest.raises(IntegrityError), transaction.atomic():
        DoubleAnnotation.objects.filter(pk=double.pk).update(second_annotator=personas["annotator"])


def test_an_unqualified_annotator_is_not_served_a_copy(personas, project, drafts):
    double_on(project, personas["manager"])
    first_submission(project=project, user=personas["annotator"])
    with pytest.raises(NotPermitted):
        queue_claim(project_slug=project.slug, user=personas["novice"])


def test_an_expired_copy_lease_passes_to_another_annotator_who_starts_afresh(
    personas, project, drafts, make_user, settings
):
    from datetime import timedelta

    from django.utils import timezone

    double_on(project, personas["manager"])
    _, double = first_submission(project=project, user=personas["annotator"])
    claim = queue_claim(project_slug=project.slug, user=personas["annotator2"])
    copy_save(copy_id=claim.copy_id, user=personas["annotator2"], fields={"question": "half done"})
    DoubleAnnotation.objects.filter(pk=double.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    third = make_user("annotator3")
    membership_add(project=project, actor=None, username="annotator3", role="annotator", is_qualified=True)
    assert queue_claim(project_slug=project.slug, user=third).copy_id == double.pk
    double.refresh_from_db()
    assert double.second_annotator == third and double.question == double.instance.draft["question"]


def test_the_lease_beat_task_sends_an_expired_copy_back_and_its_holder_keeps_their_work_if_they_take_it_again(
    personas, project, drafts
):
    from datetime import timedelta

    from django.utils import timezone

    double_on(project, personas["manager"])
    _, double = first_submission(project=project, user=personas["annotator"])
    claim = queue_claim(project_slug=project.slug, user=personas["annotator2"])
    copy_save(copy_id=claim.copy_id, user=personas["annotator2"], fields={"question": "half done"})
    assert leases_reap_task() == 0  # a live lease stays
    DoubleAnnotation.objects.filter(pk=double.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assert leases_reap_task() == 1
    double.refresh_from_db()
    assert (double.state, double.lease_expires_at) == (DoubleAnnotation.State.WAITING, None)
    with pytest.raises(NotFound):
        copy_save(copy_id=double.pk, user=personas["annotator2"], fields={"question": "too late"})
    assert queue_claim(project_slug=project.slug, user=personas["annotator2"]).copy_id == double.pk
    double.refresh_from_db()
    assert double.state == DoubleAnnotation.State.IN_REFINEMENT and double.question == "half done"


@postgres_only()
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_claimers_never_share_a_copy_nor_get_their_own(project, open_batch, make_user, context):
    from curation.services.lifecycle import instance_create

    firsts, others = [], []
    for i in range(6):
        user = make_user(f"first{i}")
        membership_add(project=project, actor=None, username=user.username, role="annotator", is_qualified=True)
        firsts.append(user)
    for i in range(12):
        user = make_user(f"other{i}")
        membership_add(project=project, actor=None, username=user.username, role="annotator", is_qualified=True)
        others.append(user)
    manager = make_user("boss")
    membership_add(project=project, actor=None, username="boss", role="manager")
    double_on(project, manager)
    for user in firsts:  # each first annotator claims one draft directly and submits it: six copies open
        draft = instance_create(
            project_id=project.pk, actor=None, context=context, batch=open_batch, draft={"question": "Q?"}
        )
        submit_instance(instance_transition(instance_id=draft.pk, target=Status.IN_REFINEMENT, actor=user), user)
    assert DoubleAnnotation.objects.filter(state=DoubleAnnotation.State.WAITING).count() == 6
    served: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    people = firsts + others
    barrier = threading.Barrier(len(people))

    def work(user):
        try:
            barrier.wait()
            for _ in range(2):  # a second Next in parallel with the others: held, never a second copy
                claim = queue_claim(project_slug=project.slug, user=user)
                if claim is not None and claim.copy_id is not None:
                    with lock:
                        served.append((claim.copy_id, user.pk))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(user,)) for user in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    holders: dict[int, set[int]] = {}
    for copy_id, user_id in served:
        holders.setdefault(copy_id, set()).add(user_id)
    assert len(holders) == 6 and all(len(users) == 1 for users in holders.values())  # each copy to one person
    for double in DoubleAnnotation.objects.all():
        assert double.second_annotator_id not in (None, double.first_annotator_id)
        assert holders[double.pk] == {double.second_annotator_id}
    per_person = [user_id for users in holders.values() for user_id in users]
    assert len(per_person) == len(set(per_person))  # nobody holds two copies


def test_discarding_an_instance_withdraws_its_open_copy(personas, project, drafts):
    double_on(project, personas["manager"])
    instance, double = first_submission(project=project, user=personas["annotator"])
    instance_transition(instance_id=instance.pk, target=Status.DISCARDED, actor=personas["manager"], reason="dup")
    assert not DoubleAnnotation.objects.filter(pk=double.pk).exists()
    claim = queue_claim(project_slug=project.slug, user=personas["annotator2"])
    assert claim.copy_id is None and claim.instance_id != instance.pk


# --- Round one ------------------------------------------------------------------------------------------------


def test_round_one_waits_for_the_second_version(personas, project, drafts):
    double_on(project, personas["manager"])
    instance, _ = first_submission(project=project, user=personas["annotator"])
    assert review_next(project=project, user=personas["verifier"]) is None
    with pytest.raises(Conflict):
        review_claim(instance_id=instance.pk, user=personas["verifier"])
    with pytest.raises(Conflict):  # the generic door meets the same guard
        instance_transition(instance_id=instance.pk, target=Status.ROUND1_REVIEW, actor=personas["verifier"])
    second_submission(project=project, user=personas["annotator2"])
    assert review_next(project=project, user=personas["verifier"]).pk == instance.pk


def test_approval_needs_a_kept_version_and_keep_second_continues_with_it(personas, project, drafts):
    double_on(project, personas["manager"])
    instance, _ = first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"], question="The second wording?", answer=["B"])
    held = review_next(project=project, user=personas["verifier"])
    with pytest.raises(InvalidInput):
        review_approve(instance_id=held.pk, user=personas["verifier"], expected_version=held.version)
    decided = double_decide(
        instance_id=held.pk,
        user=personas["verifier"],
        expected_version=held.version,
        choices=dict.fromkeys(("question", "rationale", "answer", "answer_form", "answer_source"), "second")
        | dict.fromkeys(("answer_type", "scale", "reasoning_type_id", "relevant_table_ids"), "second"),
    )
    assert decided.decision == DoubleAnnotation.Decision.KEPT_SECOND
    kept = Instance.objects.get(pk=instance.pk)
    assert (kept.question, kept.answer) == ("The second wording?", ["B"])
    assert kept.revisions.last().author == personas["verifier"]
    assert kept.author == personas["annotator"]  # the instance stays the pipeline's; the copy stays a record
    review_approve(instance_id=kept.pk, user=personas["verifier"], expected_version=kept.version)
    assert Instance.objects.get(pk=instance.pk).status == Status.ROUND2_REVIEW
    assert Instance.objects.filter(project=project).count() == len(drafts)  # no copy ever became an instance


def test_merge_takes_each_field_from_the_version_marked(personas, project, drafts):
    double_on(project, personas["manager"])
    instance, _ = first_submission(project=project, user=personas["annotator"], question="First question?")
    second_submission(
        project=project, user=personas["annotator2"], question="Second question?", rationale="Second rationale."
    )
    held = review_next(project=project, user=personas["verifier"])
    decided = double_decide(
        instance_id=held.pk,
        user=personas["verifier"],
        expected_version=held.version,
        choices={"question": "first", "rationale": "second"},
    )
    assert decided.decision == DoubleAnnotation.Decision.MERGED
    merged = Instance.objects.get(pk=instance.pk)
    assert (merged.question, merged.rationale) == ("First question?", "Second rationale.")


def test_a_stale_version_or_a_bad_choice_is_refused_and_writes_nothing(personas, project, drafts):
    double_on(project, personas["manager"])
    instance, double = first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"], question="Other?")
    held = review_next(project=project, user=personas["verifier"])
    with pytest.raises(Conflict):
        double_decide(
            instance_id=held.pk,
            user=personas["verifier"],
            expected_version=held.version - 1,
            choices={"question": "second"},
        )
    with pytest.raises(InvalidInput):
        double_decide(
            instance_id=held.pk, user=personas["verifier"], expected_version=held.version, choices={"question": "both"}
        )
    with pytest.raises(InvalidInput):
        double_decide(
            instance_id=held.pk, user=personas["verifier"], expected_version=held.version, choices={"author": "first"}
        )
    with pytest.raises(NotPermitted):  # only the verifier holding the review
        double_decide(
            instance_id=held.pk,
            user=personas["verifier2"],
            expected_version=held.version,
            choices={"question": "first"},
        )
    double.refresh_from_db()
    assert double.state == DoubleAnnotation.State.SUBMITTED and double.decision == ""
    assert Instance.objects.get(pk=instance.pk).version == held.version


def test_a_resubmission_after_changes_never_draws_again(personas, project, drafts):
    double_on(project, personas["manager"])
    instance, _ = first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"])
    held = review_next(project=project, user=personas["verifier"])
    double_decide(
        instance_id=held.pk, user=personas["verifier"], expected_version=held.version, choices={"question": "first"}
    )
    held.refresh_from_db()
    review_request_changes(
        instance_id=held.pk,
        user=personas["verifier"],
        expected_version=held.version,
        comments=[{"field": "question", "text": "Say which metric."}],
    )
    claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
    assert claim.how == "resumed"
    submit_instance(Instance.objects.get(pk=claim.instance_id), personas["annotator"], question="Which metric?")
    assert DoubleAnnotation.objects.filter(instance=instance).count() == 1
    assert DoubleAnnotation.objects.get(instance=instance).first_fields["question"] != "Which metric?"


def test_the_second_annotator_never_reviews_the_instance_in_round_two(personas, project, drafts, make_user):
    double_on(project, personas["manager"])
    instance, _ = first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"])
    held = review_next(project=project, user=personas["verifier"])
    double_decide(
        instance_id=held.pk, user=personas["verifier"], expected_version=held.version, choices={"question": "second"}
    )
    held.refresh_from_db()
    review_approve(instance_id=held.pk, user=personas["verifier"], expected_version=held.version)
    assert round2_next(project=project, user=personas["annotator2"]) is None
    with pytest.raises(NotPermitted):
        round2_claim(instance_id=instance.pk, user=personas["annotator2"])
    third = make_user("annotator3")
    membership_add(project=project, actor=None, username="annotator3", role="annotator", is_qualified=True)
    assert round2_next(project=project, user=third).pk == instance.pk


ALL_FIRST = {name: "first" for name in CHOSEN_FIELDS}
ALL_SECOND = {name: "second" for name in CHOSEN_FIELDS}


@pytest.mark.parametrize(
    ("choices", "reviewer", "excluded"),
    [(ALL_FIRST, "annotator2", "annotator"), (ALL_SECOND, "annotator", "annotator2")],
    ids=["kept-first", "kept-second"],
)
def test_with_two_annotators_the_one_whose_version_was_not_kept_reviews_round_two(
    personas, project, drafts, choices, reviewer, excluded
):
    instance = approved_pair(personas, project, choices)
    assert round2_next(project=project, user=personas[excluded]) is None
    with pytest.raises(NotPermitted, match="Nobody reviews their own work"):
        round2_claim(instance_id=instance.pk, user=personas[excluded])
    assert round2_next(project=project, user=personas[reviewer]).pk == instance.pk
    instance.refresh_from_db()
    assert instance.status == Status.ROUND2_REVIEW and instance.round2_reviewer == personas[reviewer]


def test_a_merged_pair_is_reviewed_in_round_two_by_neither_annotator(personas, project, drafts):
    instance = approved_pair(personas, project, {**ALL_FIRST, "question": "second"})
    for name in ("annotator", "annotator2"):
        assert round2_next(project=project, user=personas[name]) is None
        with pytest.raises(NotPermitted, match="Nobody reviews their own work"):
            round2_claim(instance_id=instance.pk, user=personas[name])
    assert Instance.objects.get(pk=instance.pk).round2_reviewer is None


def test_one_of_the_two_annotators_cannot_verify_the_pair_in_round_one(personas, project, drafts):
    double_on(project, personas["manager"])
    membership_add(project=project, actor=None, username="annotator2", role="verifier")
    instance, _ = first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"])
    assert review_next(project=project, user=personas["annotator2"]) is None
    with pytest.raises(NotPermitted):
        review_claim(instance_id=instance.pk, user=personas["annotator2"])


# --- Who sees what (every door, per role) -------------------------------------------------------------------


@pytest.fixture
def pair(personas, project, drafts):
    """A double-annotated instance with both versions in; the second answer is recognisably the second's."""
    double_on(project, personas["manager"])
    instance, _ = first_submission(project=project, user=personas["annotator"], question="First person's words?")
    double = second_submission(project=project, user=personas["annotator2"], question="Second person's words?")
    return instance, double


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("annotator", 404),
        ("annotator2", 404),
        ("novice", 404),
        ("verifier", 200),
        ("manager", 200),
        ("outsider", 404),
        (None, 401),
    ],
)
def test_the_side_by_side_api_per_role(personas, project, pair, api_client_for, persona, expected):
    instance, _ = pair
    response = api_client_for(personas[persona] if persona else None).get(f"/api/instances/{instance.pk}/double/")
    assert response.status_code == expected
    if expected == 200:
        rows = {row["field"]: row for row in response.json()["rows"]}
        assert rows["question"]["first"] == "First person's words?"
        assert rows["question"]["second"] == "Second person's words?" and not rows["question"]["is_same"]


@pytest.mark.parametrize("persona", ["annotator", "verifier", "manager", "novice", "outsider", "annotator2"])
def test_a_copy_is_seen_by_its_holder_only(personas, project, drafts, api_client_for, persona):
    double_on(project, personas["manager"])
    first_submission(project=project, user=personas["annotator"], question="First person's words?")
    copy_id = queue_claim(project_slug=project.slug, user=personas["annotator2"]).copy_id
    response = api_client_for(personas[persona]).get(f"/api/copies/{copy_id}/")
    page = api_client_for(personas[persona])
    page.force_login(personas[persona])
    html = page.get(f"/p/{project.slug}/work/copy/{copy_id}/")
    if persona == "annotator2":
        assert response.status_code == 200 and html.status_code == 200
        assert "First person's words?" not in response.content.decode() + html.content.decode()
    else:
        assert response.status_code == 404 and html.status_code == 404


def test_neither_annotator_meets_the_others_version_on_any_page(personas, project, pair, client):
    instance, _ = pair
    client.force_login(personas["annotator"])  # the first annotator: their instance's pages, never the copy
    for url in (f"/p/{project.slug}/review/{instance.pk}/", f"/p/{project.slug}/history/{instance.pk}/"):
        body = client.get(url).content.decode()
        assert "Second person&#x27;s words?" not in body and "Second person's words?" not in body
    assert client.get(f"/api/instances/{instance.pk}/").status_code == 200
    assert "Second person" not in client.get(f"/api/instances/{instance.pk}/history/").content.decode()
    client.force_login(personas["annotator2"])  # the second: the first annotator's instance does not exist for them
    for url in (
        f"/p/{project.slug}/review/{instance.pk}/",
        f"/p/{project.slug}/history/{instance.pk}/",
        f"/p/{project.slug}/work/{instance.pk}/",
        f"/api/instances/{instance.pk}/",
        f"/api/instances/{instance.pk}/history/",
        f"/api/workspace/{instance.pk}/",
    ):
        response = client.get(url)
        assert response.status_code in (302, 403, 404), url
        assert "First person" not in response.content.decode(), url


def test_the_verifier_sees_both_versions_side_by_side_on_the_review_page(personas, project, pair, client):
    instance, _ = pair
    review_next(project=project, user=personas["verifier"])
    client.force_login(personas["verifier"])
    body = client.get(f"/p/{project.slug}/review/{instance.pk}/").content.decode()
    assert 'id="double"' in body and 'id="keep-second"' in body
    text = re.sub(r"<[^>]+>", "", body)
    assert "First person&#x27;s words?" in text and "Second person&#x27;s words?" in text
    response = client.post(
        f"/p/{project.slug}/review/{instance.pk}/double/",
        {"keep": "second", "expected_version": Instance.objects.get(pk=instance.pk).version},
    )
    assert response.status_code == 302
    assert Instance.objects.get(pk=instance.pk).question == "Second person's words?"


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("verifier", 200),
        ("verifier2", 403),
        ("manager", 403),
        ("annotator", 403),
        ("annotator2", 404),
        ("outsider", 404),
    ],
)
def test_the_decide_api_per_role(personas, project, pair, api_client_for, persona, expected):
    instance, _ = pair
    held = review_next(project=project, user=personas["verifier"])
    response = api_client_for(personas[persona]).post(
        f"/api/instances/{instance.pk}/double/decide/",
        {"keep": "first", "expected_version": held.version},
        format="json",
    )
    assert response.status_code == expected, response.content
    decided = DoubleAnnotation.objects.get(instance=instance).state == DoubleAnnotation.State.DECIDED
    assert decided == (expected == 200)


@pytest.mark.parametrize(
    "body",
    [{"keep": "both", "expected_version": 1}, {"keep": "merge", "expected_version": 1}, {"keep": "first"}],
)
def test_a_bad_decision_is_a_400(personas, project, pair, api_client_for, body):
    instance, _ = pair
    review_next(project=project, user=personas["verifier"])
    response = api_client_for(personas["verifier"]).post(
        f"/api/instances/{instance.pk}/double/decide/", body, format="json"
    )
    assert response.status_code == 400
    assert DoubleAnnotation.objects.get(instance=instance).decision == ""


def test_an_incomplete_copy_cannot_be_submitted_and_the_api_says_why(personas, project, drafts, api_client_for):
    double_on(project, personas["manager"])
    first_submission(project=project, user=personas["annotator"])
    copy_id = queue_claim(project_slug=project.slug, user=personas["annotator2"]).copy_id
    client = api_client_for(personas["annotator2"])
    response = client.post(f"/api/copies/{copy_id}/submit/", {"answer": ["A"]}, format="json")
    assert response.status_code == 400 and "answer source" in response.content.decode().lower()
    assert DoubleAnnotation.objects.get(pk=copy_id).state == DoubleAnnotation.State.IN_REFINEMENT
    other_table = Table.objects.create(paper=Table.objects.first().paper, order=9, cells=[["x"]])
    bad = client.patch(f"/api/copies/{copy_id}/", {"relevant_table_ids": [other_table.pk]}, format="json")
    assert bad.status_code == 400 and "relevant_table_ids" in bad.content.decode()
    assert client.get(f"/api/work/{project.slug}/next/") is not None


def test_the_queue_api_points_at_the_copy(personas, project, drafts, api_client_for):
    double_on(project, personas["manager"])
    first_submission(project=project, user=personas["annotator"])
    response = api_client_for(personas["annotator2"]).post(f"/api/projects/{project.slug}/queue/next/")
    assert response.status_code == 200, response.content
    copy_id = DoubleAnnotation.objects.get().pk
    assert response.json()["instance"] is None
    assert response.json()["workspace"] == f"/api/copies/{copy_id}/"
    assert response.json()["page"] == f"/p/{project.slug}/work/copy/{copy_id}/"


# --- Settings and figures -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("manager", 200), ("verifier", 403), ("annotator", 403), ("outsider", 404), (None, 401)],
)
def test_agreement_settings_api_per_role(personas, project, api_client_for, persona, expected):
    client = api_client_for(personas[persona] if persona else None)
    url = f"/api/projects/{project.slug}/agreement/"
    assert client.get(url).status_code == expected
    response = client.patch(url, {"double_fraction": 0.2, "seed": 11}, format="json")
    assert response.status_code == expected
    if expected == 200:
        assert response.json() == {"double_fraction": 0.2, "seed": 11}


@pytest.mark.parametrize(
    "body", [{"double_fraction": 1.5}, {"double_fraction": -0.1}, {"seed": -1}, {"double_fraction": "half"}]
)
def test_bad_agreement_settings_are_a_400_naming_the_field_and_save_nothing(personas, project, api_client_for, body):
    client = api_client_for(personas["manager"])
    response = client.patch(f"/api/projects/{project.slug}/agreement/", {"seed": 3, **body}, format="json")
    assert response.status_code == 400
    assert next(iter(body)) in response.content.decode()
    assert client.get(f"/api/projects/{project.slug}/agreement/").json() == {"double_fraction": 0.0, "seed": 0}


def test_the_service_refuses_settings_from_anyone_but_a_manager(personas, project):
    with pytest.raises(NotPermitted):
        agreement_configure(project=project, actor=personas["verifier"], double_fraction=0.5)


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("manager", 200), ("verifier", 403), ("annotator", 403), ("annotator2", 403), ("outsider", 404)],
)
def test_agreement_figures_api_per_role(personas, project, pair, api_client_for, persona, expected):
    response = api_client_for(personas[persona]).get(f"/api/projects/{project.slug}/agreement/figures/")
    assert response.status_code == expected
    if expected == 200:
        data = response.json()
        assert data["overall"]["n"] == 1 and data["pairs"][0]["pair"] == "annotator & annotator2"
        assert data["batches"][0]["batch"] == "B1" and data["batches"][0]["n"] == 1


def _pairs(personas, project, make_user, versions):
    """Double-annotate one draft per (first fields, second fields)."""
    for first, second in versions:
        first_submission(project=project, user=personas["annotator"], **first)
        second_submission(project=project, user=personas["annotator2"], **second)


def test_the_figures_per_field_match_hand_computed_values(personas, project, drafts, make_user, client):
    double_on(project, personas["manager"])
    text = {"answer_source": "text", "relevant_table_ids": []}
    _pairs(
        personas,
        project,
        make_user,
        [
            ({"answer": ["A"], "answer_form": "short"}, {"answer": ["A"], "answer_form": "short"}),
            ({"answer": ["A"], "answer_form": "short"}, {"answer": ["B"], "answer_form": "free", **text}),
            ({"answer": ["87.3"], "answer_form": "free"}, {"answer": ["87.3"], "answer_form": "free"}),
            ({"answer": ["the A model"], "answer_form": "free"}, {"answer": ["A model wins"], "answer_form": "free"}),
        ],
    )
    from annotate.agreement.selectors import project_agreement

    overall = project_agreement(project)["overall"]
    assert overall["n"] == 4 and overall["raters"] == 2
    assert overall["answer_em"] == pytest.approx(0.5)
    # F1: 1, 0, 1 and, with articles dropped ("the", "a"), the bags {model} vs {model, wins}: precision ½,
    # recall 1 → F1 ⅔, rounded to 0.67 as the official scorer does
    assert overall["answer_f1"] == pytest.approx((1 + 0 + 1 + 0.67) / 4)
    # answer form: first S S F F, second S F F F → po = 3/4, pe = (2·1 + 2·3)/16 = 1/2 → κ = 0.5
    assert overall["answer_form_kappa"] == pytest.approx(0.5)
    # source: first T T T T (table), second T X T T → one label on one side: pe = 3/4, po = 3/4 → κ = 0
    assert overall["answer_source_kappa"] == pytest.approx(0.0)
    assert overall["reasoning_type_kappa"] == pytest.approx(1.0)  # the drafts' two types, kept by both
    assert overall["relevant_tables_jaccard"] == pytest.approx(0.75)
    # α for answer form, 2 raters, 4 units: coincidences S-S 2, S-F 1, F-S 1, F-F 4 → n=8, n_S=3, n_F=5 →
    # α = 1 − (n−1)·2 / (2·3·5) = 1 − 14/30 ≈ 0.53
    assert overall["answer_form_alpha"] == pytest.approx(1 - 14 / 30)
    client.force_login(personas["manager"])
    body = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'id="agreement-table"' in body and 'data-name="annotator &amp; annotator2"' in body
    assert "0.50" in body and "0.53" in body and "grouped-chart" in body
    csv_text = client.get(f"/p/{project.slug}/dashboard/agreement.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("group,name,n,raters,answer_em")
    assert "overall,all,4,2,0.5," in csv_text and "pair,annotator & annotator2,4" in csv_text
    out = StringIO()
    call_command("agreement", "--project", project.slug, "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["overall"]["n"] == 4 and result["overall"]["answer_form_kappa"] == pytest.approx(0.5)
    assert result["batches"][0]["batch"] == "B1"
    out = StringIO()
    call_command("agreement", "--project", project.slug, stdout=out)
    printed = out.getvalue()
    assert "pair annotator & annotator2 | 4 | 0.50" in printed and "Double annotation is off" not in printed


def test_the_agreement_command_says_how_to_turn_double_annotation_on(project):
    out = StringIO()
    call_command("agreement", "--project", project.slug, stdout=out)
    assert "double annotation 0%" in out.getvalue() and "Double annotation is off: set the share" in out.getvalue()


def test_alpha_counts_every_annotator_as_a_rater(personas, project, drafts, make_user):
    from annotate.agreement.selectors import project_agreement

    double_on(project, personas["manager"])
    third = make_user("annotator3")
    membership_add(project=project, actor=None, username="annotator3", role="annotator", is_qualified=True)
    first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"])
    first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=third, answer_form="free")
    figures = project_agreement(project)
    assert figures["overall"]["raters"] == 3
    assert [row["pair"] for row in figures["pairs"]] == ["annotator & annotator2", "annotator & annotator3"]
    assert [row["n"] for row in figures["pairs"]] == [1, 1]


def test_the_dashboard_form_sets_double_annotation_and_says_what_is_wrong(personas, project, client):
    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/agreement/settings/"
    client.post(url, {"double_fraction": "0.25", "seed": "5"})
    from annotate.agreement.services import agreement_settings_of

    assert agreement_settings_of(project).double_fraction == 0.25
    response = client.post(url, {"double_fraction": "2", "seed": "5"}, follow=True)
    assert (
        "Share of drafts: Ensure this value is less than or equal to 1." in response.content.decode()
    )  # the words of the field's label
    assert agreement_settings_of(project).double_fraction == 0.25
    body = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert "25 %" in body and "No item has both versions in yet." in body
    client.force_login(personas["verifier"])
    assert client.post(url, {"double_fraction": "0.5"}).status_code in (302, 403)
    assert agreement_settings_of(project).double_fraction == 0.25


def test_the_review_home_and_the_dashboard_say_how_many_wait_for_a_second_annotator(personas, project, drafts, client):
    double_on(project, personas["manager"])
    first_submission(project=project, user=personas["annotator"])
    first_submission(project=project, user=personas["annotator"])
    for name in ("verifier", "manager"):
        client.force_login(personas[name])
        home = client.get(f"/p/{project.slug}/review/").content.decode()
        assert re.search(r'id="awaiting-second">\s*2 waiting for a second annotator', home), name
    client.force_login(personas["manager"])
    dashboard = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert re.search(r'id="agreement-awaiting-second">\s*2 waiting for a second annotator', dashboard)
    second_submission(project=project, user=personas["annotator2"])
    dashboard = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert re.search(r'id="agreement-awaiting-second">\s*1 waiting for a second annotator', dashboard)
    client.force_login(personas["annotator"])  # annotators have no round-one pile: nothing said to them
    assert 'id="awaiting-second"' not in client.get(f"/p/{project.slug}/review/").content.decode()


def test_the_side_by_side_rows_show_labels_not_stored_codes(personas, project, drafts):
    from annotate.agreement.selectors import double_for_review

    instance = approved_pair(personas, project, ALL_FIRST)
    rows = {row["field"]: row for row in double_for_review(user=personas["verifier"], instance=instance)["rows"]}
    assert rows["answer_type"]["first"] == "Span" and rows["answer_form"]["first"] == "Short-form"
    assert rows["answer_source"]["first"] == "Table"
    reasoning_type = Instance.objects.get(pk=instance.pk).reasoning_type
    assert rows["reasoning_type_id"]["first"] == reasoning_type.name != reasoning_type.code


def test_the_agreement_chart_speaks_the_tables_scale(personas, project, drafts, client):
    double_on(project, personas["manager"])
    first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"])  # same answer: EM 1.00
    client.force_login(personas["manager"])
    body = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    section = body[body.index('id="agreement"') :]
    chart = section[section.index("<svg") : section.index("</svg>")]
    table = section[section.index('id="agreement-table"') :]
    em = re.search(r'<tr data-group="batch"[^>]*>.*?<td class="n">\d+</td><td>\d+</td><td>([^<]+)</td>', table, re.S)
    assert em and em.group(1) == "1.00"
    values = re.findall(r'class="value">([^<]*)</text>', chart)
    assert values[0] == "1.00" and "100.0" not in chart
    assert re.search(r'class="axis">1</text>', chart)


def test_a_field_reads_alike_in_a_revision_diff_and_beside_its_second_version():
    from annotate.diffing import field_text

    assert (field_text("scale", ""), field_text("scale", None)) == ("None", "")  # the scale None, and not chosen
    assert field_text("answer_form", "short") == "Short-form" and field_text("answer", ["A", 2]) == "A\n2"
    assert field_text("relevant_table_ids", [3, 4]) == "3, 4"
    assert field_text("relevant_table_ids", [3, 4], tables={3: "Table 1"}) == "Table 1, table 4"
    assert field_text("reasoning_type_id", 7, types={7: "Comparison"}) == "Comparison"
