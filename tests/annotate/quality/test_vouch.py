"""A manager's vouch qualifies a new project's first annotators: recorded (who, when, why), shown on the members,
exam set-up and dashboard pages, counted wherever qualification counts, and revocable; managers only. The project
page's first-release checklist, which leads a manager there, ticks each step only on that step's own evidence."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.dashboard.checklist import Step, first_release_steps
from annotate.qualification import services as exam
from annotate.qualification.models import Vouch
from annotate.quality import vouching
from annotate.quality.selectors import pause_of
from annotate.quality.services import annotator_restore
from annotate.review import services as review
from curation.api_errors import exception_handler
from curation.errors import Conflict, InvalidInput, NotPermitted
from curation.members.selectors import is_qualified_annotator
from curation.models import Instance, Membership
from curation.services.lifecycle import instance_claim
from curation.states import Role, Status
from tests.annotate.qualification.test_first_gold import post_gold
from tests.annotate.quality.helpers import gold_on, submit_probe, work_until_probe
from tests.annotate.review.helpers import sent_back, to_discussion, to_round2
from tests.support.clients import logged_in


def claim(project, user):
    return instance_claim(project_slug=project.slug, actor=user, lease_expires_at=timezone.now() + timedelta(hours=1))


def test_a_vouch_qualifies_is_recorded_and_revoking_takes_the_qualification_back(project, personas, drafts):
    novice = personas["novice"]
    assert not is_qualified_annotator(project=project, user=novice)
    assert claim(project, novice) is None

    vouch = vouching.vouch_create(
        project=project, actor=personas["manager"], user_id=novice.pk, reason="Co-wrote the guidelines"
    )
    assert (vouch.vouched_by, vouch.reason, vouch.gave_qualification) == (
        personas["manager"],
        "Co-wrote the guidelines",
        True,
    )
    assert is_qualified_annotator(project=project, user=novice)
    claimed = claim(project, novice)  # the claim's own SQL counts the vouch too
    assert claimed is not None
    assert Instance.objects.get(pk=claimed[0]).status == Status.IN_REFINEMENT

    vouching.vouch_revoke(project=project, actor=personas["manager"], vouch_id=vouch.pk)
    vouch.refresh_from_db()
    assert vouch.revoked_at is not None and vouch.revoked_by == personas["manager"]
    assert not is_qualified_annotator(project=project, user=novice)
    with pytest.raises(Conflict):
        vouching.vouch_revoke(project=project, actor=personas["manager"], vouch_id=vouch.pk)


def test_revoking_a_vouch_for_someone_qualified_already_leaves_their_qualification(project, personas):
    vouch = vouching.vouch_create(
        project=project, actor=personas["manager"], user_id=personas["annotator"].pk, reason="Passed elsewhere"
    )
    assert vouch.gave_qualification is False
    vouching.vouch_revoke(project=project, actor=personas["manager"], vouch_id=vouch.pk)
    assert is_qualified_annotator(project=project, user=personas["annotator"])


def test_bad_vouches_are_refused_with_a_reason(project, personas):
    manager = personas["manager"]
    with pytest.raises(InvalidInput, match="Say why"):
        vouching.vouch_create(project=project, actor=manager, user_id=personas["novice"].pk, reason="  ")
    with pytest.raises(InvalidInput, match="Only an annotator"):
        vouching.vouch_create(project=project, actor=manager, user_id=personas["verifier"].pk, reason="x")
    vouching.vouch_create(project=project, actor=manager, user_id=personas["novice"].pk, reason="x")
    with pytest.raises(Conflict, match="already"):
        vouching.vouch_create(project=project, actor=manager, user_id=personas["novice"].pk, reason="again")


@pytest.mark.parametrize("who", ["annotator", "verifier"])
def test_only_managers_vouch(project, personas, who):
    with pytest.raises(NotPermitted):
        vouching.vouch_create(project=project, actor=personas[who], user_id=personas["novice"].pk, reason="x")


@pytest.mark.parametrize(("who", "status"), [("annotator", 403), ("verifier", 403), ("outsider", 404)])
def test_pages_refuse_vouch_and_revoke_to_everyone_but_managers(project, personas, who, status):
    vouch = vouching.vouch_create(project=project, actor=personas["manager"], user_id=personas["novice"].pk, reason="x")
    client = logged_in(who)
    created = client.post(f"/p/{project.slug}/vouches/", {"user": personas["novice"].pk, "reason": "y"})
    revoked = client.post(f"/p/{project.slug}/vouches/{vouch.pk}/revoke/")
    assert (created.status_code, revoked.status_code) == (status, status)
    vouch.refresh_from_db()
    assert vouch.revoked_at is None and Vouch.objects.count() == 1
    assert is_qualified_annotator(project=project, user=personas["novice"])


def test_a_manager_vouches_and_revokes_through_the_pages(project, personas):
    client = logged_in("manager")
    members = client.get(f"/p/{project.slug}/members/").content.decode()
    assert 'id="vouch-form"' in members and f'<option value="{personas["novice"].pk}">novice</option>' in members
    response = client.post(
        f"/p/{project.slug}/vouches/",
        {"user": personas["novice"].pk, "reason": "Wrote the pilot questions", "next": f"/p/{project.slug}/members/"},
    )
    assert response.status_code == 302 and response["Location"] == f"/p/{project.slug}/members/"
    members = client.get(f"/p/{project.slug}/members/").content.decode()
    assert 'data-vouch="novice"' in members and "Wrote the pilot questions" in members
    for page in (f"/p/{project.slug}/dashboard/", f"/p/{project.slug}/qualification/manage/"):
        assert 'data-vouch="novice"' in client.get(page).content.decode(), page
    vouch = Vouch.objects.get()
    client.post(f"/p/{project.slug}/vouches/{vouch.pk}/revoke/")
    assert not Membership.objects.get(user=personas["novice"], role=Role.ANNOTATOR).is_qualified
    assert 'data-vouch="novice"' not in client.get(f"/p/{project.slug}/members/").content.decode()


def test_the_exam_page_of_a_new_project_offers_the_three_ways_to_start(project, personas):
    html = logged_in("manager").get(f"/p/{project.slug}/qualification/manage/").content.decode()
    assert 'id="ways-to-start"' in html
    assert f'href="/p/{project.slug}/imports/"' in html and 'id="vouch-form"' in html
    assert f'href="/p/{project.slug}/qualification/gold/"' in html


def test_the_project_page_shows_managers_the_first_release_checklist(project, personas, drafts):
    manager_page = logged_in("manager").get(f"/p/{project.slug}/").content.decode()
    assert 'id="first-release-checklist"' in manager_page
    assert 'data-step="papers" data-done="yes"' in manager_page and 'data-step="drafts" data-done="yes"' in manager_page
    assert 'data-step="release" data-done="no"' in manager_page
    assert 'id="checklist-next">Review in round one' in manager_page  # the first step not done
    assert 'id="first-release-checklist"' not in logged_in("annotator").get(f"/p/{project.slug}/").content.decode()


def checklist(project) -> dict[str, Step]:
    return {step.key: step for step in first_release_steps(project=project)}


def ticks(project) -> tuple[bool, bool, bool]:
    """Whether round one, round two and the exam are ticked."""
    steps = checklist(project)
    return steps["round1"].done, steps["round2"].done, steps["exam"].done


def unqualify_annotators(project) -> None:
    """A new project: nobody qualified yet, so only the exam's pool can tick the exam."""
    Membership.objects.filter(project=project, role=Role.ANNOTATOR).update(is_qualified=False)


def test_a_draft_validated_as_gold_ticks_neither_round_nor_the_exam(project, personas, drafts):
    unqualify_annotators(project)
    assert post_gold(logged_in("manager"), project, drafts[0]).status_code == 302
    assert Instance.objects.get(pk=drafts[0].pk).status == Status.VALIDATED
    assert ticks(project) == (False, False, False)
    # One gold item in the pool of an exam of 20 (the default size): the step says what is missing.
    assert checklist(project)["exam"].action == "Choose the exam's gold (1 of the 20 items one attempt needs)"
    page = logged_in("manager").get(f"/p/{project.slug}/").content.decode()
    for key in ("round1", "round2", "exam"):
        assert f'data-step="{key}" data-done="no"' in page


def test_a_round_one_approval_ticks_round_one_only(project, personas, drafts):
    to_round2(project, personas, drafts[0])
    unqualify_annotators(project)  # a qualified annotator would tick the exam
    assert ticks(project) == (True, False, False)


def test_round_one_stays_ticked_when_a_flag_sends_the_approved_instance_back(project, personas, drafts):
    discussion = to_discussion(project, personas, drafts[0])
    review.discussion_resolve(
        discussion_id=discussion.pk,
        user=personas["verifier"],
        outcome="accepted",
        action="send_back",
        expected_version=Instance.objects.get(pk=drafts[0].pk).version,
    )
    assert Instance.objects.get(pk=drafts[0].pk).status == Status.CHANGES_REQUESTED
    steps = checklist(project)
    assert steps["round1"].done and not steps["round2"].done


def test_a_request_for_changes_is_no_round_one_passed(project, personas, drafts):
    sent_back(project, personas, {"field": "answer", "text": "Name both models."}, drafts[0])
    assert not checklist(project)["round1"].done


def test_a_round_two_confirmation_ticks_round_two(project, personas, drafts):
    approved = to_round2(project, personas, drafts[0])
    assert not checklist(project)["round2"].done  # waiting in round two is not round two done
    claimed = review.round2_claim(instance_id=approved.pk, user=personas["annotator2"])
    review.round2_confirm(instance_id=claimed.pk, user=personas["annotator2"], expected_version=claimed.version)
    assert ticks(project) == (True, True, True)


def test_a_flag_kept_as_is_by_the_discussion_ticks_round_two(project, personas, drafts):
    discussion = to_discussion(project, personas, drafts[0])
    assert not checklist(project)["round2"].done  # flagged, not yet decided
    review.discussion_resolve(
        discussion_id=discussion.pk,
        user=personas["verifier"],
        outcome="rejected",
        expected_version=Instance.objects.get(pk=drafts[0].pk).version,
    )
    assert checklist(project)["round2"].done


def test_the_exam_is_ticked_by_gold_for_one_attempt_or_by_a_qualified_annotator(project, personas, gold):
    assert checklist(project)["exam"].done  # annotator and annotator2 are qualified, with no exam at all
    unqualify_annotators(project)
    assert not checklist(project)["exam"].done
    exam.qualification_configure(project=project, actor=personas["manager"], instance_ids=[g.pk for g in gold])
    assert checklist(project)["exam"].done  # four gold items, four per attempt


def test_the_vouch_form_tells_no_annotators_from_all_qualified(project, personas):
    from curation.services.projects import project_create

    client = logged_in("manager")
    fresh = project_create(creator=personas["manager"], name="Fresh project")
    for page in (f"/p/{fresh.slug}/members/", f"/p/{fresh.slug}/qualification/manage/"):
        html = client.get(page).content.decode()
        assert "The project has no annotators yet" in html and "Every annotator is qualified" not in html, page
    vouching.vouch_create(project=project, actor=personas["manager"], user_id=personas["novice"].pk, reason="pilot")
    html = client.get(f"/p/{project.slug}/members/").content.decode()
    assert "Every annotator is qualified" in html and "no annotators yet" not in html


def test_the_exam_step_ticked_by_qualified_annotators_says_so_rather_than_open(project, personas, drafts):
    """With annotators qualified (the fixtures' are) and no gold chosen, the exam is not needed yet: the step is
    ticked, and its link says why instead of a bare "open" beside an exam of 0 items."""
    step = checklist(project)["exam"]
    assert step.done and step.action == "not needed yet: annotators are qualified (0 of 20 items chosen)"
    page = logged_in("manager").get(f"/p/{project.slug}/").content.decode()
    assert "not needed yet: annotators are qualified (0 of 20 items chosen)</a>" in page
    assert checklist(project)["papers"].action == "open"  # a step done by its own evidence opens its page


# --- a hidden-gold pause is lifted by a restore, never by a vouch ---------------------------------------------------


@pytest.fixture
def paused(project, personas, drafts, gold):
    """annotator2 paused by the hidden-gold rule (one wrong probe under a 0.9 threshold); novice stays unqualified."""
    gold_on(project, personas["manager"], drafts=drafts, gold_threshold=0.9, gold_min_sample=1, is_pause_on_fail=True)
    submit_probe(work_until_probe(project=project, user=personas["annotator2"]), personas["annotator2"], ["wrong"])
    assert pause_of(project=project, user=personas["annotator2"]) is not None
    return personas["annotator2"]


def test_a_vouch_for_an_annotator_paused_by_hidden_gold_is_refused_and_names_the_restore(project, personas, paused):
    with pytest.raises(InvalidInput) as refused:
        vouching.vouch_create(project=project, actor=personas["manager"], user_id=paused.pk, reason="Knows the work")
    assert "annotator2 is paused by hidden gold" in refused.value.message
    assert "restore them on the Dashboard, under Hidden gold" in refused.value.message
    assert refused.value.detail == {"field": "user"}
    assert not Vouch.objects.exists() and not is_qualified_annotator(project=project, user=paused)
    assert pause_of(project=project, user=paused) is not None  # the decisions' latest entry is still the truth
    annotator_restore(project=project, actor=personas["manager"], user_id=paused.pk, reason="Talked it through")
    vouch = vouching.vouch_create(project=project, actor=personas["manager"], user_id=paused.pk, reason="Trusted")
    assert vouch.gave_qualification is False  # restored first: the vouch takes nothing back when revoked


def test_the_api_answers_the_refused_vouch_with_a_400_naming_the_user_field(project, personas, paused):
    """There is no vouch endpoint: a vouch's refusals reach an API client through the one exception handler."""
    with pytest.raises(InvalidInput) as refused:
        vouching.vouch_create(project=project, actor=personas["manager"], user_id=paused.pk, reason="Knows the work")
    response = exception_handler(refused.value, {})
    assert response.status_code == 400
    assert response.data["error"] == "invalid" and response.data["field"] == "user"
    assert "restore them on the Dashboard, under Hidden gold" in response.data["detail"]


def test_the_vouch_form_leaves_out_paused_annotators_and_says_where_to_restore_them(project, personas, paused):
    client = logged_in("manager")
    for page in (f"/p/{project.slug}/members/", f"/p/{project.slug}/qualification/manage/"):
        html = client.get(page).content.decode()
        assert f'<option value="{personas["novice"].pk}">novice</option>' in html, page
        assert f'<option value="{paused.pk}">' not in html, page
        assert "Not listed: annotator2, paused by hidden gold." in html, page
        assert f'<a href="/p/{project.slug}/dashboard/#hidden-gold">restore them on the Dashboard' in html, page
    vouching.vouch_create(project=project, actor=personas["manager"], user_id=personas["novice"].pk, reason="pilot")
    html = client.get(f"/p/{project.slug}/members/").content.decode()
    assert 'id="vouch-form"' not in html and "Every annotator is qualified" not in html  # annotator2 is not
    assert "Not listed: annotator2, paused by hidden gold." in html
    client.post(f"/p/{project.slug}/vouches/", {"user": paused.pk, "reason": "Knows the work"})  # a stale form
    assert not Vouch.objects.filter(user=paused).exists()
    html = client.get(f"/p/{project.slug}/members/").content.decode()
    assert "annotator2 is paused by hidden gold, and a vouch does not lift a pause" in html


def test_nobody_paused_no_word_about_pauses(project, personas):
    html = logged_in("manager").get(f"/p/{project.slug}/members/").content.decode()
    assert 'id="vouch-paused"' not in html and 'id="vouch-form"' in html
