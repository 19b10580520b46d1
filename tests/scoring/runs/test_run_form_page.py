"""The page that starts a scoring run validates its POST with a form: wrong fields are named, no run is made."""

from __future__ import annotations

import pytest
from django.test import Client

from scoring.models import ScoringRun
from tests.conftest import PASSWORD
from tests.scoring.run_support import endpoint_for, small_release

pytestmark = pytest.mark.django_db


def test_a_zero_limit_and_negative_temperature_are_named_beside_their_fields(project, personas):
    release = small_release(project, questions=2)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    client = Client()
    assert client.login(username="verifier", password=PASSWORD)
    response = client.post(
        f"/p/{project.slug}/releases/{release.pk}/score/",
        {"endpoint": endpoint.pk, "method": "cot", "limit": "0", "temperature": "-1", "max_turns": "999"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    limit_part = page.split('name="limit"', 1)[1].split("<label", 1)[0]
    assert "greater than or equal to 1" in limit_part and 'value="0"' in page
    assert "greater than or equal to 0" in page.split('name="temperature"', 1)[1].split("<label", 1)[0]
    assert "less than or equal to 200" in page.split('name="max_turns"', 1)[1].split("<label", 1)[0]
    assert not ScoringRun.objects.filter(release=release).exists()


def test_a_method_that_is_not_offered_is_refused(project, personas):
    release = small_release(project, questions=2)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    response = client.post(
        f"/p/{project.slug}/releases/{release.pk}/score/", {"endpoint": endpoint.pk, "method": "upload"}
    )
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    assert not ScoringRun.objects.filter(release=release).exists()


def test_the_run_form_and_the_upload_form_word_context_and_tools_alike(project, personas):
    release = small_release(project, questions=2)
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    page = client.get(f"/p/{project.slug}/releases/{release.pk}/score/").content.decode()
    run_form = page.split('id="start-run"')[1].split("</form>")[0]
    upload_form = page.split('id="upload-predictions"')[1].split("</form>")[0]
    for form in (run_form, upload_form):
        setting = form.split('<select name="setting">')[1].split("</select>")[0]
        assert setting == '<option value="short">Short context</option><option value="long">Long context</option>'
        assert "<label>Context <select" in form and "<label>Setting <select" not in form
        tools = form.split('<select name="tools">')[1].split("</select>")[0]
        assert tools == '<option value="all">all tools</option><option value="data">data tools only</option>'


def test_a_refused_start_keeps_what_was_typed_and_chosen_and_names_the_field(project, personas):
    release = small_release(project, questions=2)
    endpoint_for(project, "http://127.0.0.1:9/v1")
    second = endpoint_for(project, "http://127.0.0.1:9/v1", name="second", model="second-model")
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    chosen = {
        "endpoint": second.pk, "method": "tool", "setting": "long", "tools": "data", "few_shot": "3",
        "scale_mode": "ignore", "extraction": "official", "judge": second.pk, "label": "mine", "max_tokens": "abc",
        "template_reasoner": "Q: {Question}",
    }  # fmt: skip
    response = client.post(f"/p/{project.slug}/releases/{release.pk}/score/", chosen)
    assert response.status_code == 400 and not ScoringRun.objects.filter(release=release).exists()
    page = response.content.decode()
    run_form = page.split('id="start-run"')[1].split("</form>")[0]
    assert "Max tokens: A valid integer is required." in run_form
    assert "A valid integer is required." in run_form.split('name="max_tokens"', 1)[1].split("<label", 1)[0]
    for name, value in chosen.items():
        select = run_form.split(f'name="{name}"', 1)[1].split("</select>", 1)[0]
        if name in ("label", "max_tokens"):
            assert select.startswith(f' value="{value}"'), name
        elif name == "template_reasoner":
            assert ">Q: {Question}</textarea>" in select
        else:
            assert f'<option value="{value}" selected>' in select, name
            assert select.count(" selected") == 1, name


def test_a_service_refusal_is_said_on_the_form_with_the_choices_kept(project, personas):
    release = small_release(project, questions=2)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    body = {"endpoint": endpoint.pk, "method": "pot", "limit": "1", "per_template": "2", "temperature": "0.5"}
    response = client.post(f"/p/{project.slug}/releases/{release.pk}/score/", body)
    assert response.status_code == 400 and not ScoringRun.objects.filter(release=release).exists()
    page = response.content.decode()
    assert "A per-template sample is a positive number of questions per template, without a limit." in page
    assert '<option value="pot" selected>' in page and 'name="temperature" value="0.5"' in page


def test_the_api_refuses_generation_params_of_the_wrong_type(project, personas):
    release = small_release(project, questions=2)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    url = f"/api/projects/{project.slug}/scoring-runs/"
    base = {"release": release.pk, "endpoint": endpoint.pk, "method": "cot"}
    for params, field in (({"max_tokens": "abc"}, "max_tokens"), ({"max_tokens": 0}, "max_tokens"),
                          ({"temperature": -1}, "temperature"), ({"temperature": "nan"}, "temperature")):  # fmt: skip
        response = client.post(url, {**base, "generation_params": params}, content_type="application/json")
        assert response.status_code == 400 and field in response.json()["generation_params"], params
    assert not ScoringRun.objects.filter(release=release).exists()
