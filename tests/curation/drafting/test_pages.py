"""Drafting pages: endpoints with the test button, prompt editing, starting a run and watching its progress."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from curation.drafting.models import DraftingRun, PromptTemplate
from curation.endpoints.django_client import limit_is_shared
from curation.models import Batch, Instance
from tests.curation.drafting.conftest import endpoint_on
from tests.factories import LongContextFactory, ShortContextFactory, TableFactory
from tests.support.clients import logged_in
from tests.support.fault_server import FaultServer, unauthorized

pytestmark = pytest.mark.django_db


def test_non_managers_are_refused_every_drafting_page(project, personas):
    slug = project.slug
    for name, expected in (("annotator", 403), ("verifier", 403), ("outsider", 404)):
        client = logged_in(personas[name].username)
        for url in (f"/p/{slug}/drafting/", f"/p/{slug}/endpoints/", f"/p/{slug}/drafting/prompts/"):
            assert client.get(url).status_code == expected, (name, url)


def test_endpoints_page_shows_key_status_and_limit_scope_and_test_reports_401(project, personas, monkeypatch):
    monkeypatch.delenv("MISSING_DRAFT_KEY", raising=False)
    client = logged_in(personas["manager"].username)
    with FaultServer(default=unauthorized()) as server:
        created = client.post(
            f"/p/{project.slug}/endpoints/",
            {"name": "Hosted", "base_url": server.base_url, "model": "big", "api_key_env": "MISSING_DRAFT_KEY",
             "max_attempts": "1", "timeout_s": "5", "concurrency_limit": "2", "generation_params": "{}"},
        )  # fmt: skip
        assert created.status_code == 302
        page = client.get(f"/p/{project.slug}/endpoints/").content.decode()
        assert "$MISSING_DRAFT_KEY" in page and "not set on this server" in page
        assert ("shared by all workers" if limit_is_shared() else "per machine only") in page  # this backend's answer
        endpoint = project.endpoints.get(name="Hosted")
        monkeypatch.setenv("MISSING_DRAFT_KEY", "secret-123")
        fragment = client.post(f"/p/{project.slug}/endpoints/{endpoint.pk}/test/").content.decode()
    assert 'data-kind="unauthorized"' in fragment and "HTTP 401" in fragment
    assert "secret-123" not in fragment


def test_prompt_page_saves_a_new_version(project, personas):
    client = logged_in(personas["manager"].username)
    page = client.get(f"/p/{project.slug}/drafting/prompts/")
    assert page.status_code == 200 and "=== examples: comparison ===" in page.content.decode()
    response = client.post(
        f"/p/{project.slug}/drafting/prompts/",
        {"kind": "question", "text": "One question please.\n{{context}}\nQuestion:", "note": "shorter"},
    )
    assert response.status_code == 302
    assert PromptTemplate.objects.filter(project=project, kind="question").count() == 2


def test_manager_starts_a_template_run_and_the_run_page_shows_progress(
    project, personas, drafting_batch, drafting_contexts, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client = logged_in(personas["manager"].username)
    assert client.get(f"/p/{project.slug}/drafting/").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/p/{project.slug}/drafting/",
            {"batch": drafting_batch.pk, "kind": "template", "per_template": "1", "seed": "0", "unanswerable": "skip"},
        )
    run = DraftingRun.objects.get()
    assert response.status_code == 302 and response.url.endswith(f"/drafting/runs/{run.pk}/")
    page = client.get(response.url).content.decode()
    assert "Completed" in page and 'aria-valuenow="100"' in page and "3 drafted" in page
    # The run's options read as name and value, not as a Python dict.
    assert "<dt>Questions per template</dt><dd>1</dd>" in page and "{&#x27;" not in page
    assert client.get(f"/p/{project.slug}/drafting/runs/{run.pk}/progress/").status_code == 286
    assert Instance.objects.filter(batch=drafting_batch, status="drafted").count() == sum(
        run.items.values_list("instance_count", flat=True)
    )


def test_failed_llm_run_shows_the_error_and_retry(project, personas, drafting_batch, drafting_contexts, settings,
                                                  django_capture_on_commit_callbacks):  # fmt: skip
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client = logged_in(personas["manager"].username)
    endpoint = endpoint_on(project, "http://127.0.0.1:9/v1", name="Down")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/p/{project.slug}/drafting/", {"batch": drafting_batch.pk, "kind": "llm", "endpoint": endpoint.pk}
        )
    run = DraftingRun.objects.get()
    page = client.get(f"/p/{project.slug}/drafting/runs/{run.pk}/").content.decode()
    assert "3 of 3 contexts failed" in page and "is unreachable" in page and "Retry 3 failed" in page
    # The prompt versions by the names the prompts page gives them, with their hashes.
    assert f"question “{run.question_template.name}” <code" in page and f"answer “{run.answer_template.name}”" in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/p/{project.slug}/drafting/runs/{run.pk}/retry/")
    run.refresh_from_db()
    assert run.status == DraftingRun.Status.FAILED and set(run.items.values_list("attempts", flat=True)) == {2}


def test_template_run_form_offers_header_paraphrasing_with_the_chosen_endpoint(
    project, personas, drafting_batch, drafting_contexts
):
    client = logged_in(personas["manager"].username)
    page = client.get(f"/p/{project.slug}/drafting/").content.decode()
    assert 'name="paraphrase_headers"' in page and "Paraphrase header names in the questions" in page
    endpoint = endpoint_on(project, "http://127.0.0.1:9/v1", name="Paraphraser")
    fields = {"batch": drafting_batch.pk, "kind": "template", "endpoint": endpoint.pk, "template_ids": ["extreme_row"]}
    client.post(f"/p/{project.slug}/drafting/", fields)
    plain = DraftingRun.objects.get()
    assert plain.options["paraphrase_headers"] is False and plain.endpoint is None  # off unless ticked
    client.post(f"/p/{project.slug}/drafting/", {**fields, "paraphrase_headers": "on", "redraft": "on"})
    run = DraftingRun.objects.exclude(pk=plain.pk).get()
    assert run.options["paraphrase_headers"] is True and run.endpoint == endpoint
    assert run.template_hashes["header_paraphrase"]


def test_the_run_form_starts_on_a_real_endpoint_with_paraphrasing_on_and_on_the_demo_with_it_off(project, personas):
    import re

    client = logged_in(personas["manager"].username)
    box = re.compile(r'<input type="checkbox" name="paraphrase_headers"( checked)?')

    def form() -> tuple[str, bool]:
        page = client.get(f"/p/{project.slug}/drafting/").content.decode()
        selected = re.search(r'<option value="\d+" selected>([^<]*)</option>', page)
        return (selected.group(1) if selected else ""), bool(box.search(page).group(1))

    endpoint_on(project, "http://127.0.0.1:9/v1", name="Local demo", is_local_default=True)
    assert form() == ("Local demo (fault-model)", False)
    endpoint_on(project, "http://127.0.0.1:9/v1", name="Team model")
    assert form() == ("Team model (fault-model)", True)


def test_a_project_on_the_earlier_default_question_prompt_gets_todays_default_as_a_new_version(project, personas):
    from curation.drafting import prompts
    from curation.drafting.services.prompt_versions import prompt_template_current

    earlier = next(iter(prompts.SUPERSEDED_DEFAULT_HASHES["question"]))
    PromptTemplate.objects.create(
        project=project, kind="question", name=prompts.QUESTION_TEMPLATE_NAME, text="old", content_hash=earlier
    )
    current = prompt_template_current(project=project, kind="question")
    assert current.content_hash == prompts.content_hash(prompts.DEFAULT_QUESTION_TEMPLATE) != earlier
    assert "own short context" in current.note
    assert PromptTemplate.objects.filter(project=project, kind="question").count() == 2
    assert prompt_template_current(project=project, kind="question").pk == current.pk  # once, not on every read
    page = logged_in(personas["manager"].username).get(f"/p/{project.slug}/drafting/prompts/").content.decode()
    assert "BT denotes back-translation" in page


def test_an_edited_question_prompt_is_never_replaced_by_the_default(project, personas):
    from curation.drafting import prompts
    from curation.drafting.services.prompt_versions import prompt_template_current

    PromptTemplate.objects.create(
        project=project, kind="question", name="Mine", text="Mine {{context}}", content_hash=prompts.content_hash("x")
    )
    assert prompt_template_current(project=project, kind="question").name == "Mine"


@pytest.mark.parametrize(
    ("instances", "state", "words"),
    [
        (1, None, "1 draft in the queue"),
        (2, "open", "2 drafts in the queue"),
        (2, "planned", "2 drafts in batch B, which is planned: open it to put them in the annotators' queue"),
    ],
)
def test_the_run_progress_counts_drafts_in_words_that_agree(project, instances, state, words):
    """A planned batch's drafts are not in anyone's queue yet: the run page says where they wait."""
    batch = Batch(project=project, name="B", state=state) if state else None
    run = DraftingRun(pk=1, project=project, kind="template", status="completed", batch=batch)
    counts = {"drafted": 1, "failed": 0, "pending": 0, "running": 0, "skipped": 0, "cancelled": 0}
    html = render_to_string(
        "curation/drafting/_run_progress.html",
        {"run": run, "project": project, "counts": {**counts, "instances": instances}, "percent": 100, "items": []},
    )
    assert words in html


def test_no_assigned_type_is_silently_skipped_by_the_template_drafter(
    project, personas, drafting_batch, drafting_contexts, settings, django_capture_on_commit_callbacks
):
    from curation.models import ReasoningType

    settings.CELERY_TASK_ALWAYS_EAGER = True
    descriptive = ReasoningType.objects.get(project=project, code="descriptive_analysis")
    drafting_contexts[0].reasoning_type = descriptive
    drafting_contexts[0].save(update_fields=["reasoning_type"])
    client = logged_in(personas["manager"].username)
    home = client.get(f"/p/{project.slug}/drafting/").content.decode()
    # Before a run: which types no template drafts, and what happens to them.
    assert 'id="routed-types"' in home and "Descriptive Analysis" in home and "Tabulation" in home
    assert "<strong>Comparison</strong>" not in home
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/p/{project.slug}/drafting/",
            {"batch": drafting_batch.pk, "kind": "template", "per_template": "1", "seed": "0", "unanswerable": "skip"},
        )
    run = DraftingRun.objects.get()
    assert not Instance.objects.filter(context=drafting_contexts[0]).exists()
    assert Instance.objects.filter(context=drafting_contexts[1]).exists()
    page = client.get(f"/p/{project.slug}/drafting/runs/{run.pk}/").content.decode()
    assert "not drafted: no template drafts Descriptive Analysis; draft it with a language-model run" in page
    # Its row says it has no draft, not "Drafted".
    items = page[page.index('id="run-items"') :]
    row = items[items.index(f'<tr class="item-drafted"><td>{drafting_contexts[0].pk}</td>') :].split("</tr>", 1)[0]
    assert "<td>No draft</td>" in row and "Drafted" not in row
    # "draft with a model endpoint" opens the run form on those contexts, with the LLM drafter.
    routed = drafting_contexts[0].pk
    link = f"/p/{project.slug}/drafting/?kind=llm&amp;contexts={routed}#new-run"
    assert f'<a href="{link}" class="routed-next">' in page
    form = client.get(link.replace("&amp;", "&").split("#")[0]).content.decode()
    assert f'name="contexts" placeholder="12 13 14" value="{routed}"' in form
    assert '<input type="radio" name="kind" value="llm" checked>' in form
    summary = page[page.index('id="run-types"') : page.index('id="run-items"')]
    assert "Descriptive Analysis</a></td><td>1</td><td>0</td><td>1 · <a" in summary
    # Each type opens its instances in the instance browser, filtered to that type in the run's batch.
    link = f"/p/{project.slug}/instances/?reasoning_type=comparison&amp;batch={drafting_batch.pk}"
    assert (
        f'<tr><td><a href="{link}" title="This type\'s instances in the run\'s batch">Comparison</a></td><td>2</td>'
        in summary
    )
    listed = {i.pk for i in client.get(link.replace("&amp;", "&")).context["page"]}
    comparison = ReasoningType.objects.get(project=project, code="comparison")
    types = [comparison.pk, *comparison.subtypes.values_list("pk", flat=True)]
    shown = Instance.objects.filter(batch=drafting_batch, reasoning_type__in=types)
    assert listed == set(shown.values_list("pk", flat=True)) and listed
    # Options by their labels, a default in words rather than the [] that stands for it, and only those the
    # run's drafter reads: a template run sends no context to a model.
    facts = page[page.index('<dl class="facts">') : page.index("</dl>")]
    # No template chosen: each context's reasoning type chooses them (curation.drafting.templates), not "all".
    assert "<dt>Templates</dt><dd>by each context&#x27;s reasoning type</dd>" in facts
    assert "<dt>Unanswerable questions</dt><dd>skipped</dd>" in facts
    assert "<dt>Contexts already drafted</dt><dd>skipped</dd>" in facts
    assert "<dt>Contexts per chunk</dt><dd>25</dd>" in facts  # the size the run took, not the 0 asking for it
    assert "Longest context" not in facts and "template_ids" not in facts and "chunk_size" not in facts


def test_the_drafting_page_says_when_contexts_have_no_reasoning_type_and_where_to_assign_them(
    project, personas, drafting_batch, drafting_contexts
):
    # Found walking as a new manager: a template run over unassigned contexts drafted every template, "(none assigned)".
    client = logged_in(personas["manager"].username)
    assigned = client.get(f"/p/{project.slug}/drafting/").content.decode()
    assert 'id="unassigned-types"' not in assigned  # the fixture's contexts all have a type
    type(drafting_contexts[0]).objects.filter(pk=drafting_contexts[0].pk).update(reasoning_type=None)
    home = client.get(f"/p/{project.slug}/drafting/").content.decode()
    notice = home[home.index('id="unassigned-types"') :]
    assert notice.startswith('id="unassigned-types">1 short context has no reasoning type yet')
    assert f'<a href="/p/{project.slug}/papers/#assign-panel">Assign reasoning types</a>' in notice


def test_the_drafting_page_names_the_papers_that_cannot_be_drafted_and_why(project, personas, drafting_contexts):
    # Found walking as a new team: a paper of tables without body text had no short context and nothing said so.
    tables_only = TableFactory(paper__project=project, paper__origin="latex", paper__title="Tables only").paper
    LongContextFactory(paper=tables_only)
    cited = ShortContextFactory(paper__project=project, paper__origin="latex", paper__title="Cited").paper
    home = logged_in(personas["manager"].username).get(f"/p/{project.slug}/drafting/").content.decode()
    notice = home[home.index('id="undraftable-papers"') :].split("</p>")[0]
    assert "1 paper cannot be drafted: no paragraph in it cites a table, so it has no short context" in notice
    assert f'href="/p/{project.slug}/papers/{tables_only.pk}/">Tables only</a>' in notice
    assert f"/papers/{cited.pk}/" not in notice


def test_the_drafting_page_gives_each_endpoints_measured_speed_and_calls_the_local_model_a_demonstration(
    project, personas, drafting_batch, drafting_contexts, model_server
):
    from curation.drafting.services.items import run_process_inline
    from curation.drafting.services.runs import run_create

    local = endpoint_on(project, model_server.base_url, name="Local demo", is_local_default=True)
    client = logged_in(personas["manager"].username)
    page = client.get(f"/p/{project.slug}/drafting/").content.decode()
    assert "Local demo: no speed measured yet" in page
    assert 'id="local-model-note"' in page and f'href="/p/{project.slug}/endpoints/"' in page
    run = run_create(project=project, actor=personas["manager"], kind="llm", batch=drafting_batch, endpoint=local)
    run_process_inline(run_id=run.pk)
    page = client.get(f"/p/{project.slug}/drafting/").content.decode()
    speeds = page[page.index('id="endpoint-speeds"') :]
    assert "Local demo: measured" in speeds and "over the last 3" in speeds
    assert f"a run over {drafting_batch.name} (3 contexts) ≈" in speeds


def test_the_run_does_not_count_a_context_left_without_a_draft_as_drafted(
    project, personas, drafting_batch, drafting_contexts, settings, django_capture_on_commit_callbacks
):
    """A context whose type no template drafts is done but has no draft: the run's counts say so, not "drafted"."""
    from curation.models import ReasoningType

    settings.CELERY_TASK_ALWAYS_EAGER = True
    drafting_contexts[0].reasoning_type = ReasoningType.objects.get(project=project, code="descriptive_analysis")
    drafting_contexts[0].save(update_fields=["reasoning_type"])
    client = logged_in(personas["manager"].username)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/p/{project.slug}/drafting/",
            {"batch": drafting_batch.pk, "kind": "template", "per_template": "1", "seed": "0", "unanswerable": "skip"},
        )
    run = DraftingRun.objects.get()
    done = len(drafting_contexts)
    page = client.get(f"/p/{project.slug}/drafting/runs/{run.pk}/").content.decode()
    assert f'<span id="run-drafted">{done} done, 1 of them with no draft</span>' in page
    home = client.get(f"/p/{project.slug}/drafting/").content.decode()
    assert f'{done}/{done} <small class="muted">(1 with no draft)</small>' in home
    api = client.get(f"/api/drafting-runs/{run.pk}/")
    assert api.status_code == 200 and api.json()["counts"]["no_draft"] == 1
