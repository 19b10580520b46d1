"""Drafting runs through the services (inline): LLM and template drafts, errors, retry, skip and cancel."""

from __future__ import annotations

import pytest

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.selectors import run_options_said
from curation.drafting.services.items import run_process_inline
from curation.drafting.services.runs import run_cancel, run_create, run_retry_failed, run_start
from curation.drafting.templates import TEMPLATES
from curation.errors import InvalidInput, NotPermitted
from curation.models import Instance
from curation.states import Status
from tests.curation.drafting.conftest import endpoint_on, garbage, make_contexts
from tests.factories import LongContextFactory
from tests.support.fault_server import Fault, FaultServer, completion_body, ok, unauthorized

pytestmark = pytest.mark.django_db

# The contexts are assigned Comparison; a choice of templates is drafted as chosen, every type.
EVERY = {"template_ids": [template.template_id for template in TEMPLATES]}


def _run(project, manager, kind, batch, **kwargs) -> DraftingRun:
    run = run_create(project=project, actor=manager, kind=kind, batch=batch, **kwargs)
    return run_process_inline(run_id=run.pk)


def test_llm_run_drafts_each_context_with_provenance(
    project, personas, drafting_batch, drafting_contexts, model_server
):
    endpoint = endpoint_on(project, model_server.base_url)
    run = _run(project, personas["manager"], "llm", drafting_batch, endpoint=endpoint)

    assert run.status == DraftingRun.Status.COMPLETED
    instances = list(Instance.objects.filter(project=project).order_by("pk"))
    assert [i.context_id for i in instances] == [c.pk for c in drafting_contexts]
    first = instances[0]
    assert first.status == Status.DRAFTED
    assert first.batch_id == drafting_batch.pk
    assert first.question == "Which model is best on Dev, Ours or RoBERTa?"
    assert first.answer == ["Ours"]
    assert first.rationale == "Ours has 88.9 and RoBERTa 87.6 on Dev."
    assert first.draft["endpoint"]["name"] == "Fault model"
    assert first.draft["model"] == "fault-model"
    assert set(first.draft["template_hashes"]) == {"question", "rationale_answer"}
    assert first.draft["params"]["max_tokens"] == 64
    assert first.draft["raw"]["question"].startswith("Sure!")
    assert "parse_error" not in first.draft
    assert first.events.get().to_status == Status.DRAFTED
    assert run.items.get(context=drafting_contexts[0]).instance_id == first.pk


def test_unparseable_output_is_kept_raw_and_flagged(project, personas, drafting_batch, drafting_contexts):
    with FaultServer(default=ok("I am a small model and I like tables.")) as server:
        run = _run(project, personas["manager"], "llm", drafting_batch, endpoint=endpoint_on(project, server.base_url))
    assert run.status == DraftingRun.Status.COMPLETED
    instance = Instance.objects.filter(project=project).first()
    assert instance.question == "I am a small model and I like tables."
    assert "no question found" in instance.draft["parse_error"]
    assert "flagged for the annotator" in run.items.first().error


@pytest.mark.parametrize(
    ("fault", "words"),
    [(unauthorized(), "refused the credentials (HTTP 401)"), (garbage(), "not a chat completion")],
)
def test_bad_endpoint_fails_each_context_with_a_clear_error(
    project, personas, drafting_batch, drafting_contexts, fault, words
):
    with FaultServer(default=fault) as server:
        run = _run(project, personas["manager"], "llm", drafting_batch, endpoint=endpoint_on(project, server.base_url))
    assert run.status == DraftingRun.Status.FAILED
    assert "3 of 3 contexts failed" in run.error and words in run.error
    assert all(words in item.error for item in run.items.all())
    assert not Instance.objects.filter(project=project).exists()


def test_endpoint_that_is_down_fails_and_retry_drafts_only_the_failed(
    project, personas, drafting_batch, drafting_contexts, model_server
):
    endpoint = endpoint_on(project, "http://127.0.0.1:9/v1")
    run = _run(project, personas["manager"], "llm", drafting_batch, endpoint=endpoint)
    assert run.status == DraftingRun.Status.FAILED
    assert "is unreachable" in run.items.first().error

    endpoint.base_url = model_server.base_url
    endpoint.save()
    run_retry_failed(run_id=run.pk, actor=personas["manager"])
    run = run_process_inline(run_id=run.pk)
    assert run.status == DraftingRun.Status.COMPLETED and run.error == ""
    assert Instance.objects.filter(project=project).count() == 3
    assert set(run.items.values_list("attempts", flat=True)) == {2}


def test_partial_failure_keeps_what_was_drafted(project, personas, drafting_batch, drafting_contexts):
    with FaultServer(responder=lambda request: garbage()) as server:
        server.script(ok("Question: Which is best?"), ok("Reason: x\nAnswer: Ours"))
        run = _run(project, personas["manager"], "llm", drafting_batch, endpoint=endpoint_on(project, server.base_url))
    assert run.status == DraftingRun.Status.FAILED
    assert "2 of 3 contexts failed" in run.error
    assert Instance.objects.filter(project=project).count() == 1
    assert run.items.filter(status=DraftingItem.Status.DRAFTED).count() == 1


def test_template_run_drafts_questions_with_essential_actions(project, personas, drafting_batch, drafting_contexts):
    options = {"per_template": 1, "seed": 4, **EVERY}
    run = _run(project, personas["manager"], "template", drafting_batch, options=options)
    assert run.status == DraftingRun.Status.COMPLETED
    instances = Instance.objects.filter(project=project)
    assert instances.count() >= 3 * 10
    difference = instances.filter(draft__template_id="cell_difference").first()
    slots = difference.draft["slots"]
    values = {
        "BERT-base": {"Dev": 84.1, "Test": 83.2, "Params (M)": 110},
        "RoBERTa": {"Dev": 87.6, "Test": 86.9, "Params (M)": 125},
        "ALBERT": {"Dev": 81.3, "Test": 80.0, "Params (M)": 12},
        "Ours": {"Dev": 88.9, "Test": 87.7, "Params (M)": 118},
    }
    expected = values[slots["row_a"]][slots["column"]] - values[slots["row_b"]][slots["column"]]
    assert float(difference.answer[0]) == pytest.approx(expected, abs=0.01)
    tools = [action["tool"] for action in difference.essential_actions]
    assert tools[0] == "list_tables" and tools[-3:] == ["get_cell", "get_cell", "subtract"]
    assert difference.reasoning_type.code == "arithmetic_calculation"
    assert list(difference.relevant_tables.values_list("label", flat=True)) == [slots["table"]]
    assert difference.status == Status.DRAFTED and difference.batch_id == drafting_batch.pk


def test_rerun_skips_drafted_contexts_unless_asked(project, personas, drafting_batch, drafting_contexts):
    only = {"template_ids": ["cell_difference"]}
    _run(project, personas["manager"], "template", drafting_batch, options=only)
    count = Instance.objects.count()
    again = _run(project, personas["manager"], "template", drafting_batch, options=only)
    assert again.items.filter(status=DraftingItem.Status.SKIPPED).count() == 3
    assert Instance.objects.count() == count
    forced = _run(
        project, personas["manager"], "template", drafting_batch,
        options={"template_ids": ["cell_difference"], "redraft": True},
    )  # fmt: skip
    assert forced.items.filter(status=DraftingItem.Status.DRAFTED).count() == 3
    assert Instance.objects.count() == 2 * count


def test_contexts_of_one_table_never_get_the_same_question_twice(project, personas, drafting_batch):
    # Several paragraphs citing one table each became a context; with one seed each drew the same candidates, and a
    # real paper's run repeated 60 of its 129 drafts word for word.
    make_contexts(project, drafting_batch, 3, one_paper=True)
    _run(project, personas["manager"], "template", drafting_batch, options={"per_template": 1, **EVERY})
    questions = list(Instance.objects.filter(project=project).values_list("question", flat=True))
    assert len(questions) >= 3 * 10 and len(set(questions)) == len(questions)
    redrafted = _run(
        project, personas["manager"], "template", drafting_batch, options={"per_template": 1, "redraft": True, **EVERY}
    )
    again = Instance.objects.filter(project=project, draft__run=redrafted.pk).values_list("question", flat=True)
    assert again and not set(again) & set(questions)


def test_cancel_stops_pending_items(project, personas, drafting_batch, drafting_contexts):
    run = run_create(project=project, actor=personas["manager"], kind="template", batch=drafting_batch)
    run_start(run_id=run.pk, actor=personas["manager"])
    run = run_cancel(run_id=run.pk, actor=personas["manager"])
    run = run_process_inline(run_id=run.pk)
    assert run.status == DraftingRun.Status.CANCELLED
    assert run.items.filter(status=DraftingItem.Status.CANCELLED).count() == 3
    assert not Instance.objects.exists()


def test_only_managers_create_runs(project, personas, drafting_batch, drafting_contexts):
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            run_create(project=project, actor=personas[name], kind="template", batch=drafting_batch)


def test_llm_run_needs_an_endpoint(project, personas, drafting_batch, drafting_contexts):
    with pytest.raises(InvalidInput, match="needs a model endpoint"):
        run_create(project=project, actor=personas["manager"], kind="llm", batch=drafting_batch)


def test_drafts_start_with_the_suggested_answer_type_and_no_scale_from_a_caption_alone(
    project, personas, drafting_batch, drafting_contexts
):
    drafting_contexts[0].tables.update(caption="Accuracy (%) on the task.")
    _run(project, personas["manager"], "template", drafting_batch, options={"per_template": 1, "seed": 4, **EVERY})
    instances = Instance.objects.filter(project=project)
    difference = instances.filter(draft__template_id="cell_difference", context=drafting_contexts[0]).first()
    # The caption's "%" is no evidence: the difference takes its cells' own column unit, or none.
    assert difference.answer_type == "arithmetic" and difference.scale != "percent"
    if "Params" in difference.question:
        assert difference.scale == "million"
    lookups = instances.exclude(answer_type__in=("span", "multi-span", "arithmetic", "count"))
    assert not lookups.exists()
    other = instances.filter(draft__template_id="cell_difference", context=drafting_contexts[1]).first()
    assert other.answer_type == "arithmetic" and other.scale == ("million" if "Params" in other.question else "")


def test_llm_drafts_start_with_the_suggested_answer_type(
    project, personas, drafting_batch, drafting_contexts, model_server
):
    _run(project, personas["manager"], "llm", drafting_batch, endpoint=endpoint_on(project, model_server.base_url))
    first = Instance.objects.filter(project=project).order_by("pk").first()
    assert first.answer == ["Ours"] and (first.answer_type, first.scale) == ("span", "")


def test_drafting_targets_short_contexts_only(project, personas, drafting_batch, drafting_contexts):
    paper = drafting_contexts[0].paper
    long = LongContextFactory(paper=paper, batch=drafting_batch, tables=paper.tables.all())
    run = _run(project, personas["manager"], "template", drafting_batch, options={"per_template": 1})
    assert set(run.items.values_list("context_id", flat=True)) == {c.pk for c in drafting_contexts}
    assert not Instance.objects.filter(context=long).exists()
    with pytest.raises(InvalidInput, match="long context"):
        run_create(project=project, actor=personas["manager"], kind="template", context_ids=[long.pk])


def test_an_empty_batch_says_how_to_fill_it(project, personas):
    from curation.batches.services import batch_create

    empty = batch_create(project=project, actor=None, name="Empty")
    with pytest.raises(InvalidInput, match=r"Batch “Empty” holds no short contexts yet.*Fill a batch from papers"):
        run_create(project=project, actor=personas["manager"], kind="template", batch=empty)
    assert not DraftingRun.objects.exists()


def _header_reply(request: dict) -> Fault:
    prompt = request["messages"][-1]["content"]
    phrases = {'"Dev"': "development-set accuracy", '"Test"': "test-set accuracy", '"Params (M)"': "parameter count"}
    for quoted, phrase in phrases.items():
        if quoted in prompt:
            return Fault(body=completion_body(f"{phrase}\n{phrase}"))
    return Fault(body=completion_body("something else"))


def test_template_run_can_paraphrase_header_names_with_its_endpoint(
    project, personas, drafting_batch, drafting_contexts
):
    options = {"template_ids": ["extreme_row", "cell_difference"], "per_template": 3, "paraphrase_headers": True}
    with FaultServer(responder=_header_reply) as server:
        endpoint = endpoint_on(project, server.base_url)
        with pytest.raises(InvalidInput, match="Paraphrasing header names needs a model endpoint"):
            run_create(
                project=project, actor=personas["manager"], kind="template", batch=drafting_batch, options=options
            )
        run = _run(project, personas["manager"], "template", drafting_batch, endpoint=endpoint, options=options)
        asked = server.chat_request_count
    assert run.status == DraftingRun.Status.COMPLETED, run.error
    assert 1 <= asked <= 3  # each header asked once per run, not once per question
    assert run.template_hashes["header_paraphrase"] and run.endpoint_snapshot["model"] == "fault-model"
    instances = list(Instance.objects.filter(project=project))
    phrase = {"Dev": "development-set accuracy", "Test": "test-set accuracy", "Params (M)": "parameter count"}
    for instance in instances:
        column = instance.draft["slots"]["column"]
        assert phrase[column] in instance.question, instance.question
        assert column not in instance.question.replace(phrase[column], "")
        assert instance.draft["header_paraphrase"] == run.template_hashes["header_paraphrase"]


def test_header_paraphrasing_is_off_by_default(project, personas, drafting_batch, drafting_contexts):
    with FaultServer(responder=_header_reply) as server:
        endpoint = endpoint_on(project, server.base_url)
        run = _run(
            project, personas["manager"], "template", drafting_batch, endpoint=endpoint,
            options={"template_ids": ["extreme_row"]},
        )  # fmt: skip
        assert server.chat_request_count == 0
    assert run.endpoint is None and "header_paraphrase" not in run.template_hashes
    assert all(i.draft["slots"]["column"] in i.question for i in Instance.objects.filter(project=project))
    with pytest.raises(InvalidInput, match="paraphrase_headers must be true or false"):
        run_create(
            project=project, actor=personas["manager"], kind="template", batch=drafting_batch,
            options={"paraphrase_headers": "yes"},
        )  # fmt: skip


def test_a_draft_records_every_field_the_annotator_may_change(project, personas, drafting_batch, drafting_contexts):
    """The draft keeps the suggested answer type and scale and the relevant tables it was made with, so the
    dashboard's *What the drafts cost* can compare them with the annotator's submission."""
    _run(project, personas["manager"], "template", drafting_batch, options={"template_ids": ["cell_difference"]})
    instance = Instance.objects.filter(project=project).first()
    assert instance.draft["answer_type"] == instance.answer_type and instance.answer_type
    assert instance.draft["scale"] == instance.scale
    assert instance.draft["relevant_table_ids"] == sorted(instance.relevant_tables.values_list("id", flat=True))


def test_a_runs_options_are_said_by_label_and_only_those_its_drafter_reads(
    project, personas, drafting_batch, drafting_contexts
):
    endpoint = endpoint_on(project, "http://127.0.0.1:9")
    llm = run_create(
        project=project, actor=personas["manager"], kind="llm", batch=drafting_batch, endpoint=endpoint,
        options={"chunk_size": 6, "redraft": True, "max_context_chars": 12000},
    )  # fmt: skip
    assert run_options_said(llm) == [
        ("Longest context sent (characters)", "12,000"),
        ("Contexts already drafted", "drafted again"),
        ("Contexts per chunk", "6"),
        ("Queue", "not sent yet"),
    ]
    template = run_create(
        project=project, actor=personas["manager"], kind="template", batch=drafting_batch,
        options={"template_ids": ["extreme_row", "compare_two_rows"], "per_template": 2, "unanswerable": "keep"},
    )  # fmt: skip
    said = dict(run_options_said(template))
    assert said["Templates"] == "extreme_row, compare_two_rows" and said["Questions per template"] == "2"
    assert said["Unanswerable questions"] == "kept, for the unanswerable split"
    assert said["Contexts per chunk"] == "25" and "Longest context sent (characters)" not in said  # the size it took
