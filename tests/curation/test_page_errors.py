"""One page-side mapping of domain errors, seen through real pages: 404, the 403 page, or a message and a way back."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from curation.page_errors import form_given, problems_said
from scoring.runs.api import ScoringRunListApi
from tests.support.clients import logged_in

SLUG = "test-project"


def messages_of(response) -> list[tuple[str, str]]:
    return [(m.level_tag, m.message) for m in response.context["messages"]]


def test_not_found_from_a_service_is_the_404_page(personas):
    response = logged_in("annotator").post(f"/p/{SLUG}/work/999999/resume/")
    assert response.status_code == 404
    assert "404 · Not found" in response.content.decode()


def test_a_project_one_is_no_member_of_is_not_found(personas):
    response = logged_in("outsider").get(f"/p/{SLUG}/")
    assert response.status_code == 404


def test_not_permitted_from_a_service_is_the_403_page_with_its_reason(personas):
    response = logged_in("annotator").get(f"/p/{SLUG}/qualification/manage/")
    assert response.status_code == 403
    page = response.content.decode()
    assert "403 · You may not do that" in page and "set up the exam" in page


def test_a_conflict_is_a_warning_on_the_page_the_person_came_from(personas):
    client = logged_in("annotator")
    back = f"http://testserver/p/{SLUG}/qualification/"
    response = client.post(f"/p/{SLUG}/qualification/start/", HTTP_REFERER=back)
    assert response.status_code == 302 and response["Location"] == back
    page = client.get(response["Location"])
    assert ("warning", "You are already qualified in this project; there is no exam to take.") in messages_of(page)


def test_invalid_input_is_an_error_message_back_on_the_workspace_and_nothing_changes(personas, drafts):
    client = logged_in("annotator")
    claimed = client.post(f"/p/{SLUG}/work/next/")
    workspace = claimed["Location"]
    assert "/work/" in workspace
    response = client.post(f"{workspace}skip/", {"reason": ""}, HTTP_REFERER=f"http://testserver{workspace}")
    assert response.status_code == 302 and response["Location"] == f"http://testserver{workspace}"
    page = client.get(workspace)
    assert page.status_code == 200
    assert ("error", "Say why you skip this instance (it helps whoever takes it next).") in messages_of(page)


@pytest.mark.parametrize("referer", ["https://elsewhere.example/p/test-project/qualification/", ""])
def test_without_a_same_site_referer_the_way_back_is_the_project_page(personas, referer):
    headers = {"HTTP_REFERER": referer} if referer else {}
    response = logged_in("annotator").post(f"/p/{SLUG}/qualification/start/", **headers)
    assert response.status_code == 302 and response["Location"] == f"/p/{SLUG}/"


def test_refusals_are_said_once_each_after_their_fields_name():
    """The one wording of a form's refusals: a label or readable name leads, unless the refusal names it already;
    a refusal of no field stands alone; a nested serializer's come after their own fields."""
    payload = ScoringRunListApi.ScoringRunCreateInputSerializer(
        data={"release": 1, "limit": "x", "generation_params": {"max_tokens": "abc"}}
    )
    assert not payload.is_valid()
    said = problems_said(payload.errors, payload.fields)
    assert "Limit: A valid integer is required." in said
    assert "Max tokens: " in said and "generation_params" not in said
    errors = {"": ["Nothing to score."], "__all__": ["Pick one."], "per_template": ["Per template must be ≥ 1."]}
    assert problems_said(errors, {}) == "Nothing to score. Pick one. Per template must be ≥ 1."
    assert form_given({"limit": "", "method": "cot"}) == {"method": "cot"}


def test_a_nested_fields_label_leads_its_refusal():
    class Inner(serializers.Serializer):
        top_p = serializers.FloatField(label="Nucleus mass")

    class Outer(serializers.Serializer):
        params = Inner()

    payload = Outer(data={"params": {"top_p": "wide"}})
    assert not payload.is_valid()
    assert problems_said(payload.errors, payload.fields) == "Nucleus mass: A valid number is required."
