"""A manager drafts template questions with a real endpoint set up: the form starts on it with header paraphrasing
on, and the endpoint paraphrases the header names in the questions."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from curation.models import Instance
from tests.browser.conftest import content_width, open_in_project, shot, type_into
from tests.curation.drafting.conftest import endpoint_on, make_contexts
from tests.support.fault_server import Fault, FaultServer, completion_body

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _reply(request: dict) -> Fault:
    prompt = request["messages"][-1]["content"]
    return Fault(body=completion_body("accuracy on the development set" if '"Dev"' in prompt else "a measure"))


def test_manager_drafts_template_questions_with_paraphrased_headers(
    page, live_server, login, project, personas, settings
):
    from curation.models import Batch

    settings.CELERY_TASK_ALWAYS_EAGER = True
    batch = Batch.objects.create(project=project, name="Paraphrase batch", state=Batch.State.OPEN)
    make_contexts(project, batch, 1)
    with FaultServer(responder=_reply) as server:
        endpoint = endpoint_on(project, server.base_url, name="Paraphraser")
        login(page, "manager")
        open_in_project(page, "Drafting")
        page.locator("#new-run select[name=batch]").select_option(label="Paraphrase batch (Open)")
        page.get_by_label("Templates: answers computed by tool programs (no model)").click()
        # A real endpoint is set up: the form starts on it, with paraphrasing on.
        expect(page.locator("#new-run select[name=endpoint] option:checked")).to_have_text(
            f"{endpoint.name} (fault-model)"
        )
        page.locator("#new-run select[name=template_ids]").select_option(["extreme_row"])
        type_into(page, "#new-run input[name=per_template]", "6")
        box = page.get_by_label("Paraphrase header names in the questions with the endpoint above")
        expect(box).to_be_visible()
        expect(box).to_be_checked()
        shot(page, "drafting-paraphrase-1366", full_page=True)
        page.get_by_role("button", name="Start drafting").click()
        expect(page.locator("#run-status")).to_contain_text("Completed")
        # The run's bar spans the content, as the scoring run's does (a bare <progress> was 160 px wide).
        bar = page.get_by_role("progressbar", name=re.compile(r"Progress of drafting run \d+"))
        expect(bar).to_have_attribute("aria-valuenow", "100")
        assert bar.bounding_box()["width"] >= 0.9 * content_width(page)
    dev = [i for i in Instance.objects.filter(context__batch=batch) if i.draft["slots"]["column"] == "Dev"]
    assert dev and all("accuracy on the development set" in i.question for i in dev)
