"""What the drafts cost: the distances, the figures by drafter / prompt / endpoint / reasoning type, bounded queries,
and the same figures on the API, the CSV and `manage.py draft_costs --json`, for managers only."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.dashboard.draft_costs import draft_costs, draft_costs_of
from annotate.dashboard.edit_costs import (
    REWRITTEN_ABOVE,
    field_distances,
    flat_rows,
    set_distance,
    text_distance,
)
from annotate.instances.services import instance_discard
from annotate.work.models import WorkTime
from curation.errors import NotPermitted
from curation.models import Instance
from tests.annotate.review.helpers import sent_back, submit

QUESTION = "Which model is more accurate?"
RATIONALE = "Table 1: A has 87.3, B has 81.0."


def llm_draft(table_ids, prompt_hash="a" * 64, endpoint="local"):
    return {
        "drafter": "llm",
        "run": 1,
        "endpoint": {"name": endpoint, "model": "smollm2"},
        "model": "smollm2",
        "template_hashes": {"question": prompt_hash, "answer": "b" * 64},
        "question": QUESTION,
        "rationale": RATIONALE,
        "answer": ["A"],
        "answer_type": "span",
        "scale": "",
        "relevant_table_ids": table_ids,
    }


def template_draft(table_ids):
    return {
        "drafter": "template",
        "template_id": "max_row",
        "question": "Which Model has the highest Acc in Table 1?",
        "rationale": "Table 1 gives 87.3 for A.",
        "answer": ["A"],
        "answer_type": "span",
        "scale": "",
        "relevant_table_ids": table_ids,
    }


def test_distances_are_normalised_by_the_longer_length():
    assert text_distance("abcd", "abcd") == 0
    assert text_distance("abcd", "abce") == pytest.approx(0.25)
    assert text_distance("ab", "abcd") == pytest.approx(0.5)  # two insertions over the longer length, 4
    assert text_distance("", "") == 0 and text_distance("", "x") == 1
    assert set_distance([1, 2], [2, 3]) == pytest.approx(2 / 3)
    assert set_distance([], []) == 0


def test_field_distances_compare_what_the_draft_recorded():
    draft = {"question": "abcd", "answer": ["1", "2"], "answer_type": "span", "relevant_table_ids": [1]}
    submitted = {"question": "abcd", "answer": ["1", "3"], "answer_type": "count", "scale": ""}
    distances = field_distances(draft, submitted)
    assert distances == {"question": 0, "answer": pytest.approx(1 / 3), "answer_type": 1.0, "relevant_tables": 1.0}
    assert "scale" not in distances and "rationale" not in distances  # the draft recorded neither


@pytest.fixture
def drafted(project, open_batch, context, personas):
    """Three LLM drafts of prompt a (one submitted unchanged, one rewritten, one resubmitted after changes), one
    LLM draft of prompt b on another endpoint, one template draft, a discarded one and a never-submitted one."""
    tables = sorted(context.tables.values_list("id", flat=True))

    def make(draft):
        return Instance.objects.get(
            pk=Instance.objects.create(
                project=project,
                batch=open_batch,
                context=context,
                question=draft["question"],
                rationale=draft["rationale"],
                answer=draft["answer"],
                answer_type=draft["answer_type"],
                scale=draft.get("scale", ""),
                draft=draft,
            ).pk
        )

    kept = make(llm_draft(tables))
    rewritten = make(llm_draft(tables))
    resubmitted = make(llm_draft(tables))
    other_prompt = make(llm_draft(tables, prompt_hash="c" * 64, endpoint="hosted"))
    template = make(template_draft(tables))
    discarded = make(llm_draft(tables))
    make(llm_draft(tables))  # never claimed
    annotator = personas["annotator"]
    submit(project, annotator, kept, question=QUESTION, rationale=RATIONALE, relevant_table_ids=tables)
    submit(
        project,
        annotator,
        rewritten,
        question="How many points separate the two models on accuracy?",
        rationale=RATIONALE,
        answer=["6.3"],
        answer_type="arithmetic",
        relevant_table_ids=tables,
    )
    sent_back(
        project,
        personas,
        {"field": "question", "text": "Rewrite it entirely."},
        resubmitted,
        question=QUESTION + " x",
        relevant_table_ids=tables,
    )
    submit(project, annotator, resubmitted, question="Something else entirely, as the verifier asked?")
    submit(project, annotator, other_prompt, question=QUESTION, relevant_table_ids=tables)
    submit(project, annotator, template, question="Which model has the highest accuracy?", relevant_table_ids=tables)
    done = submit(project, annotator, discarded, relevant_table_ids=tables)
    instance_discard(instance_id=done.pk, actor=personas["manager"], expected_version=done.version, reason="duplicate")
    for instance, seconds in ((kept, 60), (rewritten, 300), (resubmitted, 120), (template, 30)):
        WorkTime.objects.update_or_create(
            user=annotator, instance=instance, activity="refine", defaults={"active_seconds": seconds}
        )
    return {"kept": kept, "rewritten": rewritten, "resubmitted": resubmitted, "template": template}


def groups_of(figures, dimension):
    return {group["group"]: group for group in figures["dimensions"][dimension]}


def test_figures_by_drafter_prompt_and_endpoint(project, drafted):
    figures = draft_costs(project)
    assert figures["instances"] == 5  # discarded and never-submitted drafts are not counted
    by_drafter = groups_of(figures, "drafter")
    assert {name: g["instances"] for name, g in by_drafter.items()} == {"llm": 4, "template": 1}
    llm = by_drafter["llm"]["fields"]
    # kept: unchanged; rewritten: question and answer rewritten, type changed; resubmitted: the first submission
    # counts (" x" added), not the verifier-asked rewrite; other prompt: unchanged.
    assert llm["question"]["n"] == 4
    assert llm["question"]["unchanged_share"] == 0.5
    assert llm["question"]["rewritten_share"] == 0.25
    assert llm["answer_type"]["mean_distance"] == 0.25
    assert llm["relevant_tables"]["unchanged_share"] == 1.0
    resubmitted_question = text_distance(QUESTION, QUESTION + " x")
    rewritten_question = text_distance(QUESTION, "How many points separate the two models on accuracy?")
    assert rewritten_question > REWRITTEN_ABOVE > resubmitted_question
    assert llm["question"]["mean_distance"] == round((resubmitted_question + rewritten_question) / 4, 4)
    # Every submission pings the work time (0 s for other_prompt here): the median of 0, 60, 120 and 300.
    assert by_drafter["llm"]["median_seconds"] == 90 and by_drafter["llm"]["timed"] == 4
    by_prompt = groups_of(figures, "prompt_version")
    assert set(by_prompt) == {"prompt aaaaaaaa", "prompt cccccccc", "template max_row"}
    assert by_prompt["prompt aaaaaaaa"]["instances"] == 3
    by_endpoint = groups_of(figures, "endpoint")
    assert {name: g["instances"] for name, g in by_endpoint.items()} == {
        "no endpoint (template drafts)": 1,
        "hosted · smollm2": 1,
        "local · smollm2": 3,
    }
    assert by_endpoint["hosted · smollm2"]["fields"]["question"]["unchanged_share"] == 1.0
    by_type = groups_of(figures, "reasoning_type")
    assert sum(g["instances"] for g in by_type.values()) == 5


def test_a_named_prompt_version_is_shown_by_its_number(project, drafted):
    from curation.drafting.models import PromptTemplate

    PromptTemplate.objects.create(project=project, kind="question", text="Q?", content_hash="a" * 64)
    PromptTemplate.objects.create(project=project, kind="question", text="Q2?", content_hash="c" * 64)
    assert {"prompt v1", "prompt v2", "template max_row"} == set(groups_of(draft_costs(project), "prompt_version"))


def test_the_figures_take_the_same_queries_for_more_instances(project, open_batch, context, personas):
    """No per-instance query: ten times the submissions, the same number of queries."""
    tables = sorted(context.tables.values_list("id", flat=True))

    def submit_drafts(count):
        for _ in range(count):
            instance = Instance.objects.create(
                project=project, batch=open_batch, context=context, question=QUESTION, draft=llm_draft(tables)
            )
            submit(project, personas["annotator"], instance, relevant_table_ids=tables)
        with CaptureQueriesContext(connection) as queries:
            figures = draft_costs(project)
        return figures, len(queries)

    small, few = submit_drafts(2)
    large, many = submit_drafts(18)
    assert (small["instances"], large["instances"]) == (2, 20)
    assert few == many


def test_only_managers_see_the_figures(project, personas, drafted, api_client_for):
    assert draft_costs_of(user=personas["manager"], project=project)["instances"] == 5
    for person in ("annotator", "verifier"):
        with pytest.raises(NotPermitted):
            draft_costs_of(user=personas[person], project=project)
    url = f"/api/projects/{project.slug}/dashboard/draft-costs/"
    expected = {"manager": 200, "annotator": 403, "annotator2": 403, "verifier": 403, "outsider": 404}
    for person, status in expected.items():
        assert api_client_for(personas[person]).get(url).status_code == status, person
    assert api_client_for(None).get(url).status_code in (401, 403)


def test_api_csv_and_command_show_the_same_figures(project, personas, drafted, api_client_for, client):
    figures = draft_costs(project)
    api = api_client_for(personas["manager"]).get(f"/api/projects/{project.slug}/dashboard/draft-costs/").json()
    assert api == json.loads(json.dumps(figures))
    client.force_login(personas["manager"])
    response = client.get(f"/p/{project.slug}/dashboard/draft_costs.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    parsed = list(csv.DictReader(io.StringIO(response.content.decode())))
    rows = flat_rows(figures)
    assert parsed == [{k: "" if v is None else str(v) for k, v in row.items()} for row in rows]
    (question,) = [r for r in parsed if (r["dimension"], r["group"], r["field"]) == ("drafter", "llm", "question")]
    assert (question["instances"], question["unchanged_share"], question["rewritten_share"]) == ("4", "0.5", "0.25")
    out = io.StringIO()
    call_command("draft_costs", "--project", project.slug, "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["rows"] == json.loads(json.dumps(rows))
    assert printed["dimensions"] == api["dimensions"]
    text = io.StringIO()
    call_command("draft_costs", "--project", project.slug, stdout=text)
    assert "by drafter:" in text.getvalue() and "question: distance" in text.getvalue()


def test_csv_is_for_managers_only(project, personas, drafted, client):
    for person, status in {"annotator": 403, "verifier": 403, "outsider": 404}.items():
        client.force_login(personas[person])
        assert client.get(f"/p/{project.slug}/dashboard/draft_costs.csv").status_code == status, person


def test_the_dashboard_shows_the_section_and_an_empty_state(project, personas, client):
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert "What the drafts cost" in page and "No drafted instance was submitted yet" in page


def test_the_dashboard_shows_the_figures(project, personas, drafted, client):
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'data-dimension="drafter"' in page and 'data-group="template"' in page
    assert "/dashboard/draft_costs.csv" in page


def test_groups_read_as_a_person_would(project, drafted):
    """Reasoning types by their taxonomy name (not their code); what a draft has no value for says why."""
    from curation.models import ReasoningType

    reasoning_type = ReasoningType.objects.filter(project=project, parent__isnull=False).first()
    drafted["kept"].reasoning_type = reasoning_type
    drafted["kept"].save(update_fields=["reasoning_type"])
    figures = draft_costs(project)
    by_type = groups_of(figures, "reasoning_type")
    assert reasoning_type.name in by_type and reasoning_type.code not in by_type
    assert by_type["no reasoning type"]["instances"] == 4
    assert "(none)" not in json.dumps(figures)
    assert groups_of(figures, "endpoint")["no endpoint (template drafts)"]["instances"] == 1


def test_imported_drafts_say_they_were_imported(project, open_batch, context, personas):
    tables = sorted(context.tables.values_list("id", flat=True))
    draft = {**template_draft(tables), "drafter": "", "provenance": {"source": "import"}}
    draft.pop("template_id")
    instance = Instance.objects.create(project=project, batch=open_batch, context=context, question="Q?", draft=draft)
    submit(project, personas["annotator"], instance, question=draft["question"], relevant_table_ids=tables)
    figures = draft_costs(project)
    assert set(groups_of(figures, "drafter")) == {"import"}
    assert set(groups_of(figures, "prompt_version")) == {"imported (no prompt)"}
    assert set(groups_of(figures, "endpoint")) == {"imported (no endpoint)"}


def test_a_chart_of_zeros_says_nothing_was_changed(project, open_batch, context, personas, client):
    tables = sorted(context.tables.values_list("id", flat=True))
    instance = Instance.objects.create(
        project=project, batch=open_batch, context=context, question=QUESTION, draft=llm_draft(tables)
    )
    submit(project, personas["annotator"], instance, question=QUESTION, rationale=RATIONALE, relevant_table_ids=tables)
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    section = page[page.index('id="draft-costs"') :]
    assert section.count("No field was changed yet") == 4  # one per dimension, instead of bars of 0
    assert 'aria-label="Draft changes by' not in section


def source_queries(queries) -> list[str]:
    """The queries that read the figures' sources: submissions, refining times (the aggregate) and prompt names."""
    sources = ("curation_instancerevision", "annotate_worktime", "curation_prompttemplate", "SUM(")
    return [q["sql"] for q in queries.captured_queries if any(source in q["sql"] for source in sources)]


def test_a_second_view_is_served_from_the_cache_until_an_instance_changes(project, personas, drafted, client):
    manager = personas["manager"]
    first = draft_costs_of(user=manager, project=project)
    with CaptureQueriesContext(connection) as queries:
        again = draft_costs_of(user=manager, project=project)
    assert again == first
    assert source_queries(queries) == []  # the role check and the project's latest change only
    assert len(queries) <= 2
    client.force_login(manager)
    client.get(f"/p/{project.slug}/dashboard/")
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"/p/{project.slug}/dashboard/")
    assert page.status_code == 200 and 'data-group="template"' in page.content.decode()
    assert not [sql for sql in source_queries(queries) if "curation_instancerevision" in sql]
    # A change to one instance of the project (here a discard, through its service) is a new state: recomputed.
    kept = Instance.objects.get(pk=drafted["kept"].pk)
    instance_discard(instance_id=kept.pk, actor=manager, expected_version=kept.version, reason="duplicate")
    with CaptureQueriesContext(connection) as queries:
        changed = draft_costs_of(user=manager, project=project)
    assert source_queries(queries) != []
    assert (first["instances"], changed["instances"]) == (5, 4)


def test_the_cache_off_recomputes_every_view(project, personas, drafted, settings):
    settings.TATCURATE_FIGURES_CACHE_S = 0
    draft_costs_of(user=personas["manager"], project=project)
    with CaptureQueriesContext(connection) as queries:
        draft_costs_of(user=personas["manager"], project=project)
    assert source_queries(queries) != []
