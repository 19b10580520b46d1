"""Pages: each role logs in and sees a page fit for its role; clear empty states and error pages."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.support.clients import logged_in


def test_login_page_and_redirect_for_anonymous(db, client):
    response = client.get("/p/test-project/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")
    assert b"Log in" in client.get("/login/").content


def test_login_with_wrong_password_says_so(personas, client):
    response = client.post("/login/", {"username": "annotator", "password": "wrong"})
    assert "didn't match" in response.content.decode()


@pytest.mark.parametrize(
    ("username", "present", "absent"),
    [
        (
            "annotator",
            ["annotator-panel", 'href="/p/test-project/work/"'],
            ["verifier-panel", "manager-panel", "to-exam"],
        ),
        ("novice", ["not passed the qualification exam", 'href="/p/test-project/qualification/"'], ["to-work-queue"]),
        ("verifier", ["verifier-panel", 'id="go-review"'], ["annotator-panel", "manager-panel"]),
        ("manager", ["manager-panel", "Members"], ["annotator-panel"]),
    ],
)
def test_project_page_fits_the_role(personas, make_instance, username, present, absent):
    make_instance()
    html = logged_in(username).get("/p/test-project/").content.decode()
    for text in present:
        assert text in html
    for text in absent:
        assert text not in html


def test_outsider_gets_the_not_found_page(personas):
    response = logged_in("outsider").get("/p/test-project/")
    assert response.status_code == 404
    assert "nothing you may see" in response.content.decode()


def test_home_shows_an_empty_state_for_a_user_without_projects(personas):
    html = logged_in("outsider").get("/").content.decode()
    assert "You are not in any project yet." in html
    assert "Ask a project manager to add you to their project." in html and "New project" not in html


def test_home_tells_a_user_who_may_start_a_project_how_to(personas, make_user):
    make_user("staffer", is_staff=True)
    html = logged_in("staffer").get("/").content.decode()
    assert "You are not in any project yet." in html and "Start one with <strong>New project</strong>" in html


def test_manager_sees_status_counts(personas, make_instance):
    make_instance()
    make_instance()
    html = logged_in("manager").get("/p/test-project/").content.decode()
    assert 'title="Drafted: 2"' in html


def test_status_counts_are_reused_until_an_instance_changes(personas, make_instance):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from curation.models import Instance

    make_instance()
    manager = logged_in("manager")
    manager.get("/p/test-project/")
    with CaptureQueriesContext(connection) as captured:
        manager.get("/p/test-project/")
    assert not any('GROUP BY "curation_instance"."status"' in q["sql"] for q in captured.captured_queries)
    Instance.objects.update(status="submitted")  # a write past the services (no updated_at): not a change
    make_instance()  # a new instance is a change of the project: counted at once
    html = manager.get("/p/test-project/").content.decode()
    assert 'title="Drafted: 1"' in html and 'title="Submitted: 1"' in html


def test_an_instance_page_shows_its_fields_its_table_and_its_timeline_in_words(personas, make_instance):
    """A manager opens a draft from the instance list and reads what a reviewer reads: the answer, the rationale,
    the context's table, and a timeline in the pages' words; the old address leads there, and an outsider gets 404."""
    from annotate.review.models import ReviewComment

    instance = make_instance(rationale="A is 87.3, B is 81.0.")
    ReviewComment.objects.create(
        instance=instance, author=personas["verifier"], round=1, field="answer", text="Check the unit.",
        instance_version=instance.version,
    )  # fmt: skip
    # A claim keeps the status: the timeline says what happened, not "Round 2 review → Round 2 review".
    instance.events.create(
        actor=personas["annotator2"], from_status="round2_review", to_status="round2_review",
        version=instance.version, reason="took the round-two review",
    )  # fmt: skip
    manager = logged_in("manager")
    listed = manager.get("/p/test-project/instances/").content.decode()
    assert f'href="/p/test-project/history/{instance.pk}/">Open</a>' in listed
    response = manager.get(f"/instances/{instance.pk}/history/", follow=True)
    assert response.redirect_chain == [(f"/p/test-project/history/{instance.pk}/", 302)]
    html = response.content.decode()
    assert '<dd id="v-rationale" class="pre">A is 87.3, B is 81.0.' in html
    assert "<li>A</li>" in html and "87.3" in html and "Accuracy by model." in html
    answer = html[html.index('<dd id="v-answer">') : html.index("<dt>Answer type</dt>")]
    assert "Check the unit." in answer  # a review comment beside the field it is about
    assert "created as <span" in html and "Drafted</li>" in html and "→ drafted" not in html and "new →" not in html
    assert "Round 2 review — <em>took the round-two review" in html and "Round 2 review →" not in html
    assert logged_in("annotator2").get(f"/instances/{instance.pk}/history/").status_code == 404
    assert logged_in("annotator2").get(f"/p/test-project/history/{instance.pk}/").status_code == 404


def test_api_docs_page_is_served_without_a_cdn(personas):
    html = logged_in("manager").get("/api/docs/").content.decode()
    assert "swagger-ui" in html
    assert "cdn.jsdelivr" not in html


def test_api_docs_answers_options_without_an_error(personas):
    client = logged_in("manager")
    assert client.options("/api/docs/").status_code == 405


def test_an_annotator_opening_the_dashboard_sees_a_plain_not_allowed_page(personas):
    response = logged_in("annotator").get("/p/test-project/dashboard/")
    assert response.status_code == 403
    html = response.content.decode()
    assert "403 · You may not do that" in html and "Only a manager of this project may see its dashboard." in html
    assert "URLconf" not in html and "Traceback" not in html


def test_the_500_page_is_plain_and_in_the_site_look(personas, settings):
    from django.urls import path

    def broken(request):
        raise RuntimeError("boom")

    settings.ROOT_URLCONF = type("urls", (), {"urlpatterns": [path("broken/", broken)], "handler500": None})
    client = Client(raise_request_exception=False)
    response = client.get("/broken/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "500 · Something went wrong" in html and "/static/app.css" in html and "boom" not in html
