"""A drafting chunk's lanes: an LLM run drafts several contexts of a chunk at once (up to the endpoint's limit in
flight), yet never two contexts of one paper at once, so a question already asked of the paper is still caught."""

from __future__ import annotations

import pytest
from django.db import transaction

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.items import lanes_width, run_process_inline
from curation.drafting.services.runs import run_create
from curation.models import Instance
from tests.curation.drafting.conftest import endpoint_on, make_contexts, scripted_reply
from tests.factories import BatchFactory
from tests.support.fault_server import FaultServer

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_llm_chunk_drafts_contexts_of_different_papers_at_once_within_the_endpoints_limit(project, personas):
    batch = BatchFactory(project=project, name="Lanes")
    contexts = make_contexts(project, batch, 8)  # each of its own paper
    with FaultServer(responder=scripted_reply, latency_s=0.3) as server:
        endpoint = endpoint_on(project, server.base_url, concurrency_limit=4)
        run = run_create(project=project, actor=personas["manager"], kind="llm", batch=batch, endpoint=endpoint)
        assert set(run.items.values_list("chunk", flat=True)) == {0}  # twice the limit: one chunk of 8
        assert lanes_width(run, 8) == 8
        run = run_process_inline(run_id=run.pk)
        in_flight = server.max_in_flight
    assert run.status == DraftingRun.Status.COMPLETED, run.error
    assert 2 <= in_flight <= 4  # drafted side by side (one at a time would be 1), never past the limit
    for context in contexts:
        assert Instance.objects.filter(context=context).count() == 1


def test_contexts_of_one_paper_are_drafted_one_after_another_so_a_repeated_question_is_rejected(project, personas):
    batch = BatchFactory(project=project, name="One paper")
    make_contexts(project, batch, 4, one_paper=True)
    # The fake model asks the same question of every context: only the first may become a draft.
    with FaultServer(responder=scripted_reply, latency_s=0.2) as server:
        endpoint = endpoint_on(project, server.base_url, concurrency_limit=4)
        run = run_create(project=project, actor=personas["manager"], kind="llm", batch=batch, endpoint=endpoint)
        run = run_process_inline(run_id=run.pk)
        in_flight = server.max_in_flight
    assert run.status == DraftingRun.Status.COMPLETED, run.error
    assert in_flight == 1
    assert Instance.objects.filter(project=project).count() == 1
    rejected = run.items.filter(status=DraftingItem.Status.DRAFTED, error__startswith="rejected: repeats an existing")
    assert rejected.count() == 3


def test_a_template_run_or_an_open_transaction_drafts_in_one_lane(project, personas):
    batch = BatchFactory(project=project, name="Templates")
    make_contexts(project, batch, 3)
    run = run_create(project=project, actor=personas["manager"], kind="template", batch=batch)
    assert lanes_width(run, 3) == 1
    with FaultServer(responder=scripted_reply) as server:
        endpoint = endpoint_on(project, server.base_url, concurrency_limit=4)
        llm = run_create(project=project, actor=personas["manager"], kind="llm", batch=batch, endpoint=endpoint)
        with transaction.atomic():  # other connections could not see this transaction's rows
            assert lanes_width(llm, 3) == 1
        assert lanes_width(llm, 3) == 3
