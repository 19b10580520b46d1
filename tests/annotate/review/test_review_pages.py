"""Review pages: who may open them, the forms' actions, comments in the workspace, badges and the history diff."""

from __future__ import annotations

import re

import pytest

from annotate.review import services as review
from annotate.review.context import review_badges
from annotate.review.models import Discussion
from curation.models import Batch, Instance
from curation.services.instances import instance_edit
from curation.states import Status
from tests.annotate.review.helpers import submit, to_discussion, to_round2
from tests.annotate.work.helpers import queue_next
from tests.support.clients import logged_in

ROLES = ["annotator", "annotator2", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture
def pages(personas, project, drafts):
    discussion = to_discussion(project, personas, drafts[0])
    r1 = review.review_claim(
        instance_id=submit(project, personas["annotator"], drafts[1]).pk, user=personas["verifier"]
    )
    slug = project.slug
    return {
        "home": f"/p/{slug}/review/",
        "review": f"/p/{slug}/review/{r1.pk}/",
        "round2": f"/p/{slug}/round2/{discussion.instance_id}/",
        "discussions": f"/p/{slug}/discussions/",
        "discussion": f"/p/{slug}/discussions/{discussion.pk}/",
        "history": f"/p/{slug}/history/{r1.pk}/",
        "batches": f"/p/{slug}/batches/",
        "dashboard": f"/p/{slug}/dashboard/",
        "csv": f"/p/{slug}/dashboard/annotators.csv",
    }


# In ROLES order; 302 = to the login page.
PAGE_MATRIX = {
    "home": (200, 200, 200, 200, 404, 302),
    "review": (200, 404, 200, 200, 404, 302),
    "round2": (200, 200, 200, 200, 404, 302),
    "discussions": (200, 200, 200, 200, 404, 302),
    "discussion": (200, 200, 200, 200, 404, 302),
    "history": (200, 404, 200, 200, 404, 302),
    # A member without the manager role is told "not allowed"; only outsiders get "not found".
    "batches": (403, 403, 403, 200, 404, 302),
    "dashboard": (403, 403, 403, 200, 404, 302),
    "csv": (403, 403, 403, 200, 404, 302),
}


@pytest.mark.parametrize("name", sorted(PAGE_MATRIX))
@pytest.mark.parametrize("role", ROLES)
def test_review_page_permissions(personas, pages, name, role):
    response = logged_in(None if role == "anonymous" else role).get(pages[name])
    assert response.status_code == PAGE_MATRIX[name][ROLES.index(role)]


def test_the_round_two_address_leads_to_the_review_home(personas, project):
    response = logged_in("annotator").get(f"/p/{project.slug}/round2/")
    assert response.status_code == 302 and response["Location"] == f"/p/{project.slug}/review/"


def test_verifier_requests_changes_from_the_page_and_the_author_sees_them(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    verifier = logged_in("verifier")
    response = verifier.post(f"/p/{project.slug}/review/next/")
    assert response.status_code == 302 and response.url == f"/p/{project.slug}/review/{submitted.pk}/"
    page = verifier.get(response.url).content.decode()
    assert 'id="approve-button"' in page and "Changes since the draft" in page
    assert "Underlined: the annotator's change." in page and "your change" not in page  # the verifier changed nothing
    # The heading names no "version N": the row's edit counter, which the revision list below does not number.
    heading = page[page.index("<h1>") : page.index("</h1>")]
    assert f"Round one · #{submitted.pk}" in heading and "version" not in heading
    claimed = Instance.objects.get(pk=submitted.pk)
    response = verifier.post(
        f"/p/{project.slug}/review/{claimed.pk}/decide/",
        {"action": "request_changes", "expected_version": claimed.version, "comment_answer": "Name the model."},
    )
    assert response.status_code == 302
    assert Instance.objects.get(pk=claimed.pk).status == Status.CHANGES_REQUESTED
    resumed = queue_next(project=project, user=personas["annotator"])
    workspace = logged_in("annotator").get(f"/p/{project.slug}/work/{resumed.pk}/").content.decode()
    assert "Your reviewers asked for changes" in workspace and "Name the model." in workspace
    # The comment carries no "vN": the row's edit counter, which matches no revision number the annotator sees.
    comment = workspace[workspace.index('<li class="comment') :]
    comment = comment[: comment.index("</li>")]
    assert "Name the model." in comment and not re.search(r"\bv\d+ ·", comment), comment


def test_request_changes_without_a_comment_is_refused_with_a_message(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    response = logged_in("verifier").post(
        f"/p/{project.slug}/review/{claimed.pk}/decide/",
        {"action": "request_changes", "expected_version": claimed.version},
        follow=True,
    )
    assert "Say what to change" in response.content.decode()
    assert Instance.objects.get(pk=claimed.pk).status == Status.ROUND1_REVIEW


def test_give_back_then_next_from_the_page_does_not_hand_the_same_review_back(personas, project, drafts):
    first = submit(project, personas["annotator"])
    second = submit(project, personas["annotator2"])
    claimed = review.review_next(project=project, user=personas["verifier"])
    client = logged_in("verifier")
    response = client.post(
        f"/p/{project.slug}/review/{claimed.pk}/decide/",
        {"action": "release", "expected_version": claimed.version, "then": "next"},
    )
    assert response.status_code == 302 and response["Location"] == f"/p/{project.slug}/review/"
    assert f'href="/p/{project.slug}/review/{claimed.pk}/"' in client.get(response["Location"]).content.decode()
    other = ({first.pk, second.pk} - {claimed.pk}).pop()
    assert client.post(f"/p/{project.slug}/review/next/")["Location"] == f"/p/{project.slug}/review/{other}/"
    assert Instance.objects.get(pk=claimed.pk).status == Status.SUBMITTED
    assert review.review_next(project=project, user=personas["verifier2"]).pk == claimed.pk


def test_a_stale_page_decision_shows_the_conflict(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    response = logged_in("verifier").post(
        f"/p/{project.slug}/review/{claimed.pk}/decide/",
        {"action": "approve", "expected_version": claimed.version - 1},
        follow=True,
    )
    assert "changed meanwhile" in response.content.decode()


def test_discussion_page_reply_and_reject(personas, project, drafts):
    discussion = to_discussion(project, personas)
    url = f"/p/{project.slug}/discussions/{discussion.pk}/"
    assert 'id="resolve-form"' not in logged_in("annotator2").get(url).content.decode()
    logged_in("annotator2").post(url + "reply/", {"text": "See table 1, row 2."})
    verifier = logged_in("verifier")
    page = verifier.get(url).content.decode()
    assert "See table 1, row 2." in page and 'id="resolve-form"' in page
    # The flag's comment opens the thread under its field's name, as the pages name fields.
    assert "Answer: The answer should name both models." in page and "[answer]" not in page
    assert '<span class="badge discussion-badge" id="discussion-state">Open</span>' in page
    instance = Instance.objects.get(pk=discussion.instance_id)
    verifier.post(url + "resolve/", {"decision": "reject", "expected_version": instance.version})
    decided = Discussion.objects.get(pk=discussion.pk)
    assert (decided.outcome, decided.decided_by_id) == ("rejected", personas["verifier"].pk)
    # The decision's own line is a record, not a message by someone called "decision".
    thread = verifier.get(url).content.decode().split('class="messages-thread"', 1)[1].split("</ol>", 1)[0]
    assert '<li class="system"><span class="muted small">Recorded</span>' in thread and ">decision<" not in thread
    assert Instance.objects.get(pk=instance.pk).status == Status.VALIDATED


def test_discussion_page_shows_the_flash_messages_not_the_thread_as_banners(personas, project, drafts):
    discussion = to_discussion(project, personas)
    url = f"/p/{project.slug}/discussions/{discussion.pk}/"
    response = logged_in("annotator2").post(url + "reply/", {"text": "See table 1, row 2."}, follow=True)
    html = response.content.decode()
    banners = html[html.index('<ul class="messages"') :]
    banners = banners[: banners.index("</ul>")]
    assert "Reply posted." in banners and "in discussion" not in banners and "See table 1" not in banners
    assert "See table 1, row 2." in html  # the thread itself is still shown


def test_badges_count_open_discussions_for_those_involved(personas, project, drafts, rf):
    to_discussion(project, personas)

    def badge(user):
        request = rf.get("/")
        request.user = user
        return review_badges(request)["review_badges"]["open_discussions"]

    assert [badge(personas[p]) for p in ("annotator", "annotator2", "verifier", "manager", "verifier2")] == [
        1,
        1,
        1,
        1,
        0,
    ]
    page = logged_in("verifier").get(f"/p/{project.slug}/review/").content.decode()
    assert 'class="badge discussion-badge" id="open-discussions-badge">1<' in page


def test_a_thread_seen_through_several_doors_counts_and_lists_once(personas, project, drafts, rf):
    from annotate.review.selectors import discussions_visible_to
    from curation.models import Membership
    from curation.states import Role

    to_discussion(project, personas)
    verifier = personas["verifier"]
    # The verifier of the thread who also manages the project sees it twice over: still one thread.
    Membership.objects.create(user=verifier, project=project, role=Role.MANAGER)
    request = rf.get("/")
    request.user = verifier
    assert review_badges(request)["review_badges"]["open_discussions"] == 1
    assert len(list(discussions_visible_to(verifier, project).filter(outcome=""))) == 1
    assert list(discussions_visible_to(personas["verifier2"], project)) == []


def test_the_badge_counts_up_to_its_cap_and_says_more(personas, project, drafts, rf, monkeypatch):
    """A manager's door holds every open thread of the project: the badge stops counting at the cap ("2+" here)."""
    from annotate.review import selectors as review_selectors
    from annotate.review.models import Discussion

    monkeypatch.setattr(review_selectors, "BADGE_UP_TO", 2)
    for instance in drafts[:3]:
        Discussion.objects.create(instance=instance, opened_by=personas["annotator2"], verifier=personas["verifier"])

    def badge(user):
        request = rf.get("/")
        request.user = user
        return review_badges(request)["review_badges"]

    assert badge(personas["manager"]) == {"open_discussions": 3, "open_discussions_shown": "2+"}
    assert badge(personas["verifier2"]) == {"open_discussions": 0, "open_discussions_shown": "0"}
    Discussion.objects.exclude(instance=drafts[0]).update(outcome=Discussion.Outcome.ACCEPTED)
    assert badge(personas["manager"]) == {"open_discussions": 1, "open_discussions_shown": "1"}
    page = logged_in("manager").get(f"/p/{project.slug}/review/").content.decode()
    assert 'id="open-discussions-badge">1<' in page and "1 open discussion<" in page


def test_history_page_diffs_two_chosen_revisions_and_manager_discards(personas, project, drafts):
    approved = to_round2(project, personas)
    numbers = list(approved.revisions.values_list("number", flat=True))
    manager = logged_in("manager")
    page = manager.get(f"/p/{project.slug}/history/{approved.pk}/?a={numbers[0]}&b={numbers[-1]}").content.decode()
    assert f"Revision {numbers[0]} → {numbers[-1]}" in page
    assert "approved in round one" in page  # the timeline shows why
    timeline = page.split("<h2>Timeline</h2>", 1)[1].split("</ol>", 1)[0]
    assert "Submitted →" in timeline and "submitted →" not in timeline, timeline  # names, not codes
    assert 'id="discard-button"' in page
    manager.post(
        f"/p/{project.slug}/history/{approved.pk}/discard/",
        {"expected_version": approved.version, "reason": "duplicate"},
    )
    gone = Instance.objects.get(pk=approved.pk)
    assert gone.status == Status.DISCARDED
    manager.post(f"/p/{project.slug}/history/{approved.pk}/restore/", {"expected_version": gone.version})
    assert Instance.objects.get(pk=approved.pk).status == Status.DRAFTED


def test_batches_page_creates_fills_opens_and_sets_gating(personas, project, make_instance):
    draft = make_instance()
    manager = logged_in("manager")
    url = f"/p/{project.slug}/batches/"
    manager.post(url, {"action": "create", "name": "Batch A"})
    batch = Batch.objects.get(project=project, name="Batch A")
    manager.post(url, {"action": "assign", "batch": batch.pk, "instance_ids": [draft.pk]})
    assert Instance.objects.get(pk=draft.pk).batch_id == batch.pk
    manager.post(url, {"action": "open", "batch": batch.pk})
    assert Batch.objects.get(pk=batch.pk).state == Batch.State.OPEN
    manager.post(url, {"action": "gating", "gating": "sequential"})
    project.refresh_from_db()
    assert project.gating == "sequential"
    page = manager.get(url).content.decode()
    assert 'data-batch="Batch A"' in page and 'data-status="drafted"' in page


def test_filling_a_batch_with_contexts_counts_the_contexts(personas, project, make_instance):
    draft = make_instance()
    manager = logged_in("manager")
    url = f"/p/{project.slug}/batches/"
    manager.post(url, {"action": "create", "name": "Batch B"})
    batch = Batch.objects.get(project=project, name="Batch B")
    fill = {"action": "assign", "batch": batch.pk, "context_ids": [draft.context_id]}
    response = manager.post(url, fill, follow=True)
    assert "1 context and 1 draft added to the batch." in response.content.decode()


def test_empty_review_queues_show_a_next_step_instead_of_a_dead_button(personas, project, drafts):
    """With nothing waiting, the review home offers no "next" button that leads nowhere, but a link onward."""
    home = f"/p/{project.slug}/review/"
    verifier = logged_in("verifier").get(home).content.decode()
    assert 'id="review-next"' not in verifier and 'id="round1-empty"' in verifier
    assert f'href="/p/{project.slug}/instances/"' in verifier
    annotator = logged_in("annotator2").get(home).content.decode()
    assert 'id="round2-next"' not in annotator and 'id="round2-empty"' in annotator
    assert f'href="/p/{project.slug}/work/"' in annotator

    to_round2(project, personas, drafts[0])  # approved in round one: annotator2 has a second look to take
    annotator = logged_in("annotator2").get(home).content.decode()
    assert 'id="round2-next"' in annotator and 'id="round2-empty"' not in annotator
    submit(project, personas["annotator"], drafts[1])
    verifier = logged_in("verifier").get(home).content.decode()
    assert 'id="review-next"' in verifier and 'id="round1-empty"' not in verifier


def test_a_decision_with_an_unknown_action_or_no_version_is_refused_and_changes_nothing(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    client = logged_in("verifier")
    url = f"/p/{project.slug}/review/{claimed.pk}/decide/"
    unknown = client.post(url, {"action": "publish", "expected_version": claimed.version}, follow=True)
    assert "Action: choose one of approve, request_changes, release." in unknown.content.decode()
    missing = client.post(url, {"action": "approve"}, follow=True)
    assert "Expected version: This field is required." in missing.content.decode()
    assert Instance.objects.get(pk=claimed.pk).status == Status.ROUND1_REVIEW


def test_a_decision_is_checked_by_the_api_input_serializer_of_its_step(personas, project, drafts):
    submitted = submit(project, personas["annotator"])
    claimed = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    client = logged_in("verifier")
    url = f"/p/{project.slug}/review/{claimed.pk}/decide/"
    long = {"action": "request_changes", "expected_version": claimed.version, "comment_answer": "x" * 5001}
    page = client.post(url, long, follow=True).content.decode()
    assert "Comment: Ensure this field has no more than 5000 characters." in page
    zero = client.post(url, {"action": "approve", "expected_version": 0}, follow=True).content.decode()
    assert "Expected version: Ensure this value is greater than or equal to 1." in zero
    assert Instance.objects.get(pk=claimed.pk).status == Status.ROUND1_REVIEW


def test_discard_without_a_reason_or_version_is_refused_by_the_api_serializer(personas, project, drafts):
    approved = to_round2(project, personas)
    url = f"/p/{project.slug}/history/{approved.pk}/discard/"
    manager = logged_in("manager")
    page = manager.post(url, {"expected_version": approved.version, "reason": ""}, follow=True).content.decode()
    assert "Reason: This field may not be blank." in page
    page = manager.post(url, {"expected_version": "latest", "reason": "duplicate"}, follow=True).content.decode()
    assert "Expected version: A valid integer is required." in page
    assert Instance.objects.get(pk=approved.pk).status == Status.ROUND2_REVIEW


def test_resolving_with_an_unknown_decision_is_refused_and_an_edit_saves_the_typed_answer(personas, project, drafts):
    discussion = to_discussion(project, personas)
    url = f"/p/{project.slug}/discussions/{discussion.pk}/"
    verifier = logged_in("verifier")
    instance = Instance.objects.get(pk=discussion.instance_id)
    refused = verifier.post(url + "resolve/", {"decision": "ignore", "expected_version": instance.version}, follow=True)
    assert "Outcome: &quot;ignore&quot; is not a valid choice." in refused.content.decode()
    assert Discussion.objects.get(pk=discussion.pk).outcome == ""
    verifier.post(
        url + "resolve/",
        {"decision": "edit", "expected_version": instance.version, "question": instance.question,
         "rationale": "Row 2 of table 1.", "answer": "B\n\n"},
    )  # fmt: skip
    edited = Instance.objects.get(pk=instance.pk)
    assert Discussion.objects.get(pk=discussion.pk).outcome == "accepted"
    assert edited.answer == ["B"] and edited.rationale == "Row 2 of table 1."


def test_a_manager_who_reviews_in_neither_round_sees_where_the_rounds_stand(personas, project, drafts):
    """The checklist's round one and round two steps lead a manager here: the page counts what is in each round and
    links where to follow it, where it showed only the open discussions."""
    submit(project, personas["annotator"], drafts[0])
    to_round2(project, personas, drafts[1])
    html = logged_in("manager").get(f"/p/{project.slug}/review/").content.decode()
    overview = html[html.index('id="reviews-overview"') : html.index('id="open-discussions"')]
    assert "<dt>In round one</dt><dd>1</dd>" in overview and "<dt>In round two</dt><dd>1</dd>" in overview
    assert f'href="/p/{project.slug}/dashboard/"' in overview
    assert 'id="reviews-overview"' not in logged_in("verifier").get(f"/p/{project.slug}/review/").content.decode()


@pytest.mark.django_db
def test_a_resubmission_returning_to_its_verifier_is_counted_once(project, personas, drafts):
    """A resubmitted instance goes back to the verifier who asked for changes: the review home counts it under
    "Returning to you", not also under "Waiting" (the walk saw 1 and 1 for one instance)."""
    submitted = submit(project, personas["annotator"])
    Instance.objects.filter(pk=submitted.pk).update(round1_verifier=personas["verifier"])
    home = logged_in("verifier").get(f"/p/{project.slug}/review/").content.decode()
    assert "<dt>Returning to you</dt><dd>1</dd>" in home and 'id="round1-waiting">0<' in home


def test_the_round_one_page_says_what_each_revision_changed(project, personas, drafts):
    """The review page lists the revisions as the history page does: a revision that changed the question says so,
    not "nothing"."""
    held = queue_next(project=project, user=personas["annotator"])
    instance_edit(
        instance_id=held.pk, actor=personas["annotator"], expected_version=held.version,
        fields={"question": "Which model is the most accurate?"},
    )  # fmt: skip
    claimed = review.review_claim(
        instance_id=submit(project, personas["annotator"], held).pk, user=personas["verifier"]
    )
    page = logged_in("verifier").get(f"/p/{project.slug}/review/{claimed.pk}/").content.decode()
    rows = page[page.index("<h2>Revisions</h2>") :].split("</table>", 1)[0]
    assert "first version" in rows and "<td>Question, Rationale, Answer form" in rows


def test_round_two_heading_says_round_two_once(personas, project, drafts):
    approved = review.round2_claim(instance_id=to_round2(project, personas).pk, user=personas["annotator2"])
    page = logged_in("annotator2").get(f"/p/{project.slug}/round2/{approved.pk}/").content.decode()
    heading = page[page.index("<h1>") : page.index("</h1>")]
    assert f"Round two · #{approved.pk}" in heading and "Round 2 review" not in heading
    # Once the instance has left round two, the heading says where it is now.
    flagged = to_discussion(project, personas, drafts[1])
    page = logged_in("manager").get(f"/p/{project.slug}/round2/{flagged.instance_id}/").content.decode()
    assert (
        Instance.objects.get(pk=flagged.instance_id).get_status_display()
        in page[page.index("<h1>") : page.index("</h1>")]
    )
