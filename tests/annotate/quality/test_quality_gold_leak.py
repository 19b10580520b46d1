"""No gold answer reaches an annotator who holds (or has answered) a hidden-gold probe: every URL of the application,
probed as that annotator, with the exam leak test's walker (routes from the resolver, ids filled in, bad writes)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.annotate.qualification.test_qualification_gold_leak import leaks, probe, probe_values
from tests.annotate.quality.helpers import DRAFTED, gold_on, make_refined_gold, submit_probe, work_until_probe
from tests.conftest import PASSWORD


@pytest.fixture
def probe_world(project, personas, context, paper, drafts):
    # Gold refined from drafts that said something else: the probe opens with the draft, never the refined gold.
    gold = make_refined_gold(project, context)
    gold_on(project, personas["manager"], drafts=drafts)
    answered = work_until_probe(project=project, user=personas["annotator"])
    submit_probe(answered, personas["annotator"], ["my guess"])
    held = work_until_probe(project=project, user=personas["annotator"])
    # The probes' instance numbers (an instance's URLs: page, diff, API) and their marks' ids.
    numbers = {answered.instance_id, held.instance_id}
    ids = sorted({answered.pk, held.pk, *numbers, paper.pk, context.pk, *(g.pk for g in gold), drafts[0].pk})
    values = probe_values(project, ids)
    return {"held": held, "values": values}


@pytest.mark.walk
@pytest.mark.django_db
def test_no_page_or_endpoint_shows_an_annotator_the_gold_of_a_probe(probe_world):
    client = Client(raise_request_exception=False)  # a server error is a response too: its page is searched
    assert client.login(username="annotator", password=PASSWORD)
    bodies = probe(client, probe_world["values"])
    assert len(bodies) > 200  # the walk really went through the application
    assert any(probe_world["held"].gold.question in body for body in bodies.values())  # and reached the probe
    held = probe_world["held"]
    workspace_pages = [url for url, body in bodies.items() if f"Refine #{held.instance_id}" in body]
    assert workspace_pages, "the walk opened the probe in the workspace"
    # The probe opens prefilled as a real draft: the draft's own answer and rationale are on its workspace page …
    drafted_answer, drafted_rationale = next((a, r) for a, r in DRAFTED if a == held.gold.draft["answer"])
    assert all(drafted_answer[0] in body and drafted_rationale in body for body in (bodies[u] for u in workspace_pages))
    # … while the refined gold answer and rationale, which differ from the draft's, are served nowhere.
    assert held.gold.answer != drafted_answer
    assert leaks(bodies) == []
