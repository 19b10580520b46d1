"""The drafting pages validate their POSTs (the run form; the endpoint pages with the API's input serializer): a wrong
field is named beside it, what was typed stays, and nothing is written."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.test import Client

from curation.drafting.models import DraftingRun, PromptTemplate
from curation.drafting.templates import TEMPLATES
from curation.endpoints.models import ModelEndpoint
from curation.models import Batch
from tests.conftest import PASSWORD
from tests.factories import BatchFactory

pytestmark = pytest.mark.django_db


def _manager(personas) -> Client:
    client = Client()
    assert client.login(username=personas["manager"].username, password=PASSWORD)
    return client


def _errors_beside(page: str, field: str) -> str:
    """The text between a field's input and the next label: where its error paragraph sits."""
    after = page.split(f'name="{field}"', 1)[1]
    return after.split("<label", 1)[0]


def test_a_run_with_a_word_for_temperature_and_bad_context_ids_is_refused_field_by_field(project, personas):
    client = _manager(personas)
    response = client.post(
        f"/p/{project.slug}/drafting/", {"kind": "llm", "temperature": "warm", "contexts": "12 x", "max_tokens": "0"}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "Enter a number." in _errors_beside(page, "temperature")
    assert "Context ids are whole numbers" in _errors_beside(page, "contexts")
    assert "greater than or equal to 1" in _errors_beside(page, "max_tokens")
    assert 'value="warm"' in page  # what the manager typed stays in the field
    assert not DraftingRun.objects.filter(project=project).exists()


def test_an_unknown_drafter_kind_is_a_field_error(project, personas):
    response = _manager(personas).post(f"/p/{project.slug}/drafting/", {"kind": "magic"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    assert not DraftingRun.objects.filter(project=project).exists()


def test_an_endpoint_with_parameters_that_are_not_a_json_object_is_not_added(project, personas):
    client = _manager(personas)
    response = client.post(
        f"/p/{project.slug}/endpoints/",
        {"name": "Bad", "base_url": "http://127.0.0.1:9/v1", "model": "m", "generation_params": "[1]",
         "max_attempts": "many"},
    )  # fmt: skip
    assert response.status_code == 400
    page = response.content.decode()
    assert "must be a JSON object" in _errors_beside(page, "generation_params")
    assert "A valid integer is required." in _errors_beside(page, "max_attempts")
    assert 'value="Bad"' in page
    assert not ModelEndpoint.objects.filter(name="Bad").exists()


def test_the_add_form_starts_from_the_models_defaults_and_the_edit_form_from_the_endpoint(project, personas):
    """One set of fields for both forms: a new endpoint's suggested settings, a stored one's as saved (its generation
    parameters as one line of JSON, which the form reads back)."""
    client = _manager(personas)
    page = client.get(f"/p/{project.slug}/endpoints/").content.decode()
    for name, value in (("timeout_s", "60.0"), ("max_attempts", "5"), ("concurrency_limit", "4")):
        assert f'name="{name}" type="number"' in page and f'value="{value}"' in page.split(f'name="{name}"', 1)[1][:80]
    assert 'name="generation_params" value="{&quot;temperature&quot;: 0}"' in page
    endpoint = ModelEndpoint.objects.create(
        project=project, name="Stored", base_url="http://127.0.0.1:9/v1", model="m", timeout_s=7.5,
        generation_params={"temperature": 0.2, "max_tokens": 64},
    )  # fmt: skip
    edit = client.get(f"/p/{project.slug}/endpoints/{endpoint.pk}/").content.decode()
    assert 'value="Stored"' in edit and 'value="7.5"' in edit
    assert f'<a href="/p/{project.slug}/endpoints/">Cancel</a>' in edit  # a way back that saves nothing
    shown = html.unescape(re.search(r'name="generation_params" value="([^"]*)"', edit).group(1))
    assert "\n" not in shown and json.loads(shown) == {"temperature": 0.2, "max_tokens": 64}  # (jsonb orders keys)


def test_editing_an_endpoint_with_a_negative_timeout_keeps_the_stored_one(project, personas):
    client = _manager(personas)
    created = client.post(
        f"/p/{project.slug}/endpoints/", {"name": "Mine", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    )
    assert created.status_code == 302
    endpoint = ModelEndpoint.objects.get(name="Mine")
    response = client.post(
        f"/p/{project.slug}/endpoints/{endpoint.pk}/",
        {"name": "Mine", "base_url": "http://127.0.0.1:9/v1", "model": "m", "timeout_s": "-1"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "greater than or equal to 0" in _errors_beside(page, "timeout_s")
    assert 'value="-1"' in page  # the typed value stays, not the stored one
    endpoint.refresh_from_db()
    assert endpoint.timeout_s > 0
    unknown = client.post(
        f"/p/{project.slug}/endpoints/{endpoint.pk}/",
        {"name": "Mine", "base_url": "http://127.0.0.1:9/v1", "model": "m", "generation_params": '{"nope": 1}'},
    )
    assert unknown.status_code == 400 and "unknown generation parameters: nope" in unknown.content.decode()
    endpoint.refresh_from_db()
    assert "nope" not in endpoint.generation_params


def test_a_refused_run_keeps_every_choice_the_manager_made(project, personas, drafting_batch):
    template_id = TEMPLATES[1].template_id
    response = _manager(personas).post(
        f"/p/{project.slug}/drafting/",
        {"kind": "template", "batch": str(drafting_batch.pk), "contexts": "12 x", "per_template": "2", "seed": "7",
         "unanswerable": "keep", "template_ids": [template_id], "redraft": "on"},
    )  # fmt: skip
    assert response.status_code == 400
    page = response.content.decode()
    assert f'<option value="{drafting_batch.pk}" selected>' in page
    assert '<input type="radio" name="kind" value="template" checked>' in page
    assert 'value="llm" checked' not in page
    assert 'name="per_template" type="number" value="2"' in page and 'name="seed" type="number" value="7"' in page
    assert '<option value="keep" selected>' in page and f'<option value="{template_id}" selected>' in page
    assert '<input type="checkbox" name="redraft" checked>' in page
    assert 'name="paraphrase_headers" checked' not in page  # left unticked stays unticked


def test_a_refused_prompt_version_keeps_the_typed_text_and_note_and_names_the_fault(project, personas):
    client = _manager(personas)
    response = client.post(
        f"/p/{project.slug}/drafting/prompts/",
        {"kind": "question", "text": "No placeholder at all, Question:", "note": "my try"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "The template must contain {{context}}" in page
    section = page.split('id="template-question"', 1)[1].split("</section>", 1)[0]
    assert "No placeholder at all, Question:</textarea>" in section and 'value="my try"' in section
    assert "No placeholder at all" not in page.split('id="template-question"', 1)[0]  # only its own form
    assert not PromptTemplate.objects.filter(project=project, note="my try").exists()
    empty = client.post(f"/p/{project.slug}/drafting/prompts/", {"kind": "question", "text": "", "note": ""})
    assert empty.status_code == 400 and "Text: This field may not be blank." in empty.content.decode()


def test_the_run_form_starts_on_the_one_batch_that_can_take_drafts_and_guesses_none_of_several(project, personas):
    client = _manager(personas)
    url = f"/p/{project.slug}/drafting/"
    only = BatchFactory(project=project, name="Only")
    BatchFactory(project=project, name="Done", state=Batch.State.CLOSED)  # a closed batch takes no drafts
    assert f'<option value="{only.pk}" selected>' in client.get(url).content.decode()
    # Opened on listed contexts (a run page's "draft with a model endpoint"), the form drafts those, in no batch.
    assert " selected>Only" not in client.get(url, {"contexts": "12 13"}).content.decode()
    BatchFactory(project=project, name="Second")
    batch_menu = client.get(url).content.decode().split('name="batch"')[1].split("</select>")[0]
    assert "Second" in batch_menu and " selected" not in batch_menu
