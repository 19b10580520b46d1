"""Nothing strands: what a reviewer gives back returns to the pile and Next serves it again, with one verifier
(round one) or one second annotator (round two); nobody but the holder gives a review back."""

from __future__ import annotations

import pytest

from annotate.review import services as review
from curation.errors import Conflict, NotPermitted
from curation.models import Instance, Membership
from curation.states import Role, Status
from tests.annotate.review.helpers import submit, to_discussion, to_round2
from tests.support.clients import logged_in


@pytest.fixture
def one_verifier(personas):
    Membership.objects.filter(user=personas["verifier2"]).delete()
    return personas


def test_a_lone_verifier_gives_back_and_next_serves_it_again(project, one_verifier, drafts):
    submitted = submit(project, one_verifier["annotator"])
    client = logged_in("verifier")
    opened = client.post(f"/p/{project.slug}/review/next/")
    assert opened["Location"] == f"/p/{project.slug}/review/{submitted.pk}/"
    held = Instance.objects.get(pk=submitted.pk)
    gave = client.post(
        f"/p/{project.slug}/review/{held.pk}/decide/",
        {"action": "release", "expected_version": held.version, "then": "next"},
    )
    assert gave["Location"] == f"/p/{project.slug}/review/"
    assert Instance.objects.get(pk=held.pk).status == Status.SUBMITTED
    home = client.get(gave["Location"]).content.decode()
    assert 'id="round1-waiting">1<' in home and 'id="review-next"' in home
    assert f'href="/p/{project.slug}/review/{held.pk}/"' in home  # listed and openable
    again = client.post(f"/p/{project.slug}/review/next/")
    assert again["Location"] == f"/p/{project.slug}/review/{held.pk}/"  # Next serves it: nothing else waits
    assert Instance.objects.get(pk=held.pk).status == Status.ROUND1_REVIEW


def test_a_round_two_reviewer_gives_back_and_takes_it_again(project, one_verifier, drafts):
    approved = to_round2(project, one_verifier)
    client = logged_in("annotator2")
    assert client.post(f"/p/{project.slug}/round2/next/")["Location"] == f"/p/{project.slug}/round2/{approved.pk}/"
    held = Instance.objects.get(pk=approved.pk)
    assert held.round2_reviewer == one_verifier["annotator2"]
    page = client.get(f"/p/{project.slug}/round2/{held.pk}/").content.decode()
    assert 'id="release-button"' in page
    gave = client.post(
        f"/p/{project.slug}/round2/{held.pk}/decide/", {"action": "release", "expected_version": held.version}
    )
    assert gave["Location"] == f"/p/{project.slug}/review/"
    back = Instance.objects.get(pk=held.pk)
    assert (back.status, back.round2_reviewer, back.lease_expires_at) == (Status.ROUND2_REVIEW, None, None)
    assert back.events.filter(reason="round-two review given back", actor=one_verifier["annotator2"]).exists()
    assert 'id="round2-next"' in client.get(gave["Location"]).content.decode()
    assert client.post(f"/p/{project.slug}/round2/next/")["Location"] == f"/p/{project.slug}/round2/{held.pk}/"


def test_only_the_holder_gives_a_review_back(project, one_verifier, drafts):
    submitted = submit(project, one_verifier["annotator"])
    held = review.review_next(project=project, user=one_verifier["verifier"])
    assert held.pk == submitted.pk
    for who in ("annotator2", "manager"):
        response = logged_in(who).post(
            f"/p/{project.slug}/review/{held.pk}/decide/", {"action": "release", "expected_version": held.version}
        )
        assert response.status_code == 403, who
    assert Instance.objects.get(pk=held.pk).status == Status.ROUND1_REVIEW
    review.review_approve(instance_id=held.pk, user=one_verifier["verifier"], expected_version=held.version)
    taken = review.round2_next(project=project, user=one_verifier["annotator2"])
    for who in ("novice", "verifier"):
        response = logged_in(who).post(
            f"/p/{project.slug}/round2/{taken.pk}/decide/", {"action": "release", "expected_version": taken.version}
        )
        assert response.status_code == 403, who
    assert Instance.objects.get(pk=taken.pk).round2_reviewer == one_verifier["annotator2"]


def test_a_discussion_stays_with_its_verifier_and_is_linked_from_their_reviews(project, one_verifier, drafts):
    from tests.annotate.review.helpers import to_discussion

    discussion = to_discussion(project, one_verifier)
    home = logged_in("verifier").get(f"/p/{project.slug}/review/").content.decode()
    assert f'href="/p/{project.slug}/discussions/{discussion.pk}/"' in home
    assert Membership.objects.filter(user=one_verifier["verifier"], role=Role.VERIFIER).exists()


def test_a_lone_verifier_gives_a_discussion_back_and_next_serves_it_again(project, one_verifier, drafts):
    discussion = to_discussion(project, one_verifier)
    instance = discussion.instance
    client = logged_in("verifier")
    page = client.get(f"/p/{project.slug}/discussions/{discussion.pk}/").content.decode()
    assert 'id="give-back-button"' in page
    gave = client.post(f"/p/{project.slug}/discussions/{discussion.pk}/give-back/")
    assert gave["Location"] == f"/p/{project.slug}/discussions/"
    discussion.refresh_from_db()
    assert discussion.verifier is None and discussion.is_open
    listing = client.get(gave["Location"]).content.decode()
    assert "given back, waiting" in listing and 'id="next-discussion"' in listing
    assert 'id="take-button"' in client.get(f"/p/{project.slug}/discussions/{discussion.pk}/").content.decode()
    with pytest.raises(Conflict, match="given back"):  # nobody decides it until someone takes it
        review.discussion_resolve(
            discussion_id=discussion.pk, user=one_verifier["verifier"], outcome="rejected", expected_version=0
        )
    again = client.post(f"/p/{project.slug}/discussions/next/")
    assert again["Location"] == f"/p/{project.slug}/discussions/{discussion.pk}/"  # Next serves it
    discussion.refresh_from_db()
    assert discussion.verifier == one_verifier["verifier"]
    assert 'id="reject-button"' in client.get(again["Location"]).content.decode()
    held = Instance.objects.get(pk=instance.pk)
    review.discussion_resolve(
        discussion_id=discussion.pk, user=one_verifier["verifier"], outcome="rejected", expected_version=held.version
    )
    assert Instance.objects.get(pk=instance.pk).status == Status.VALIDATED


def test_another_verifier_takes_a_given_back_discussion_and_decides_it(project, personas, drafts):
    discussion = to_discussion(project, personas)
    instance = discussion.instance
    review.discussion_give_back(discussion_id=discussion.pk, user=personas["verifier"])
    # The flag's two sides and other roles cannot take it; the second verifier can, through the API.
    for who in ("annotator", "annotator2", "manager"):
        response = logged_in(who).post(f"/api/discussions/{discussion.pk}/take/")
        assert response.status_code == 403, who
    assert logged_in("outsider").post(f"/api/discussions/{discussion.pk}/take/").status_code == 404
    taken = logged_in("verifier2").post(f"/api/discussions/{discussion.pk}/take/")
    assert taken.status_code == 200 and taken.json()["verifier"] == "verifier2"
    assert Instance.objects.get(pk=instance.pk).round1_verifier == personas["verifier2"]
    assert logged_in("verifier").post(f"/api/projects/{project.slug}/discussions/next/").status_code == 204
    assert (
        logged_in("verifier").post(f"/api/discussions/{discussion.pk}/give-back/").status_code == 404
    )  # not theirs now
    with pytest.raises(NotPermitted):
        review.discussion_resolve(
            discussion_id=discussion.pk, user=personas["verifier"], outcome="rejected", expected_version=0
        )
    held = Instance.objects.get(pk=instance.pk)
    review.discussion_resolve(
        discussion_id=discussion.pk, user=personas["verifier2"], outcome="rejected", expected_version=held.version
    )
    assert Instance.objects.get(pk=instance.pk).status == Status.VALIDATED


def test_the_review_pages_offer_what_the_viewers_roles_allow(project, personas, drafts):
    """The pages read the viewer's roles from the navigation context: a verifier may claim a submitted instance, and
    only a manager's review navigation links the batches and the dashboard."""
    submitted = submit(project, personas["annotator"])
    review_page = f"/p/{project.slug}/review/{submitted.pk}/"
    assert "Claim this review" in logged_in("verifier").get(review_page).content.decode()
    assert "Claim this review" not in logged_in("manager").get(review_page).content.decode()
    batches_link = f'href="/p/{project.slug}/batches/"'
    assert batches_link in logged_in("manager").get(f"/p/{project.slug}/review/").content.decode()
    assert batches_link not in logged_in("verifier").get(f"/p/{project.slug}/review/").content.decode()
