"""Manager pages for drafting: model endpoints (with a test button), prompt templates, runs with live progress."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from curation import selectors
from curation.drafting import endpoints as endpoint_services
from curation.drafting import selectors as drafting_selectors
from curation.drafting.api import ModelEndpointInputSerializer, PromptTemplateListApi
from curation.drafting.forms import DraftingRunForm
from curation.drafting.models import DraftingRun, PromptTemplate
from curation.drafting.services import prompt_versions
from curation.drafting.services import runs as run_services
from curation.drafting.templates import TEMPLATES
from curation.endpoints.django_client import limit_is_shared
from curation.endpoints.models import ModelEndpoint
from curation.models import Batch
from curation.page_errors import FORM_ERRORS, page_input
from curation.papers import selectors as paper_selectors

# Endpoints ------------------------------------------------------------------------------------------------------


@login_required
def endpoint_page(request: HttpRequest, slug: str, pk: int | None = None) -> HttpResponse:
    """The project's endpoints with the form that adds one, or (`pk`) one endpoint's form; a POST that holds goes
    back to the list."""
    project = selectors.managed_project_get(user=request.user, slug=slug, action="manage model endpoints")
    endpoint = None if pk is None else endpoint_services.endpoint_get(user=request.user, endpoint_id=pk)
    if endpoint is not None and endpoint.project_id not in (None, project.pk):
        raise Http404("No such endpoint in this project.")
    error = ""
    if request.method != "POST":
        # A new endpoint's form starts from the model's defaults, suggesting greedy decoding.
        form = ModelEndpointInputSerializer(endpoint or ModelEndpoint(generation_params={"temperature": 0}))
    elif (form := ModelEndpointInputSerializer(data=request.POST)).is_valid():
        # The API's input serializer is the form: its fields keep what was typed, and their refusals.
        try:
            if endpoint is None:
                added = endpoint_services.endpoint_create(project=project, actor=request.user, **form.validated_data)
                done = f"Endpoint “{added.name}” added. Test it before drafting."
            else:
                endpoint_services.endpoint_update(endpoint=endpoint, actor=request.user, **form.validated_data)
                done = f"Endpoint “{endpoint.name}” saved."
        except FORM_ERRORS as exc:
            error = exc.message
            if endpoint is not None:
                endpoint.refresh_from_db()
        else:
            messages.success(request, done)
            return redirect("drafting-endpoints", slug=project.slug)
    page = {"project": project, "error": error, "form": form}
    if endpoint is None:
        template = "curation/drafting/endpoints.html"
        page["endpoints"] = [
            {"endpoint": e, "key_status": endpoint_services.key_status(e), "can_edit": e.project_id is not None}
            for e in endpoint_services.endpoints_visible_to(request.user, project)
        ]
        page["limit_is_shared"] = limit_is_shared()
    else:
        template = "curation/drafting/endpoint_edit.html"
        page |= {"endpoint": endpoint, "key_status": endpoint_services.key_status(endpoint)}
    # A POST that gets here was refused.
    return render(request, template, page, status=400 if request.method == "POST" else 200)


@login_required
@require_POST
def endpoint_test(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    selectors.managed_project_get(user=request.user, slug=slug, action="test model endpoints")
    endpoint = endpoint_services.endpoint_get(user=request.user, endpoint_id=pk)
    result = endpoint_services.endpoint_test(endpoint=endpoint, actor=request.user)
    return render(request, "curation/drafting/_endpoint_test.html", {"endpoint": endpoint, "result": result})


# Prompt templates ------------------------------------------------------------------------------------------------


@login_required
def prompt_templates(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.managed_project_get(user=request.user, slug=slug, action="edit prompt templates")
    error = ""
    if request.method == "POST":
        try:  # the API's input serializer checks the form
            values = page_input(PromptTemplateListApi.PromptTemplateInputSerializer, request.POST)
            template = prompt_versions.prompt_template_save(project=project, actor=request.user, **values)
        except FORM_ERRORS as exc:
            error = exc.message
        else:
            messages.success(request, f"Saved {template.get_kind_display()} version {template.content_hash[:10]}.")
            return redirect("drafting-prompts", slug=project.slug)
    kinds = []
    for kind, label in PromptTemplate.Kind.choices:
        current = prompt_versions.prompt_template_current(project=project, kind=kind)
        history = list(drafting_selectors.prompt_templates_of(project=project, kind=kind)[:20])
        kinds.append({"kind": kind, "label": label, "current": current, "history": history})
    return render(
        request,
        "curation/drafting/prompts.html",
        {"project": project, "kinds": kinds, "error": error, "posted": request.POST},  # a refusal keeps the text
        status=400 if error else 200,
    )


# Runs -----------------------------------------------------------------------------------------------------------


@login_required
def drafting_home(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.managed_project_get(user=request.user, slug=slug, action="run drafting")
    batches = selectors.batches_visible_to(request.user, project)
    endpoints = endpoint_services.endpoints_visible_to(request.user, project)
    # A run page's "draft with a model endpoint" opens the form on its contexts, with the LLM drafter.
    initial = {name: request.GET[name] for name in ("kind", "contexts") if name in request.GET}
    # The one batch that can take drafts (any not closed) is the form's start; of several, none is guessed.
    takers = [batch.pk for batch in batches if batch.state != Batch.State.CLOSED]
    if len(takers) == 1 and "contexts" not in initial:
        initial["batch"] = takers[0]
    form = DraftingRunForm(request.POST or None, batches=batches, endpoints=endpoints, initial=initial)
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            run = run_services.run_create(project=project, actor=request.user, **form.run_arguments())
            run_services.run_start(run_id=run.pk, actor=request.user)
        except FORM_ERRORS as exc:
            error = exc.message
        else:
            return redirect("drafting-run", slug=project.slug, pk=run.pk)
    runs = list(drafting_selectors.runs_of_project(user=request.user, project=project)[:50])
    unassigned, unassigned_more = paper_selectors.unassigned_context_count(user=request.user, project=project)
    undraftable, undraftable_more = paper_selectors.papers_without_short_contexts(user=request.user, project=project)
    return render(
        request,
        "curation/drafting/home.html",
        {
            "project": project,
            "form": form,
            "batches": batches,
            "endpoints": endpoints,
            "preferred_endpoint": endpoint_services.endpoint_preferred(endpoints),
            "question_templates": TEMPLATES,
            "types_without_templates": drafting_selectors.types_without_templates(project=project),
            "unassigned": unassigned,
            "unassigned_more": unassigned_more,
            "undraftable": undraftable,
            "undraftable_more": undraftable_more,
            "endpoint_speeds": drafting_selectors.endpoint_speeds(
                project=project, endpoints=endpoints, batches=batches
            ),
            "runs": [{"run": run, **run_services.run_progress(run)} for run in runs],
            "error": error,
            "limit_is_shared": limit_is_shared(),
        },
        status=400 if error or form.errors else 200,
    )


def _run_context(run: DraftingRun) -> dict[str, Any]:
    return {
        "project": run.project,
        "run": run,
        **run_services.run_progress(run),
        "items": drafting_selectors.run_items(run),
        "type_summary": drafting_selectors.run_type_summary(run),
        "options": drafting_selectors.run_options_said(run),
        "is_active": run.is_active,
    }


@login_required
def run_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    run = drafting_selectors.run_get(user=request.user, run_id=pk, slug=slug)
    return render(request, "curation/drafting/run.html", _run_context(run))


@login_required
def run_progress(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    run = drafting_selectors.run_get(user=request.user, run_id=pk, slug=slug)
    status = 200 if run.is_active else 286  # htmx stops polling on 286
    return render(request, "curation/drafting/_run_progress.html", _run_context(run), status=status)


@login_required
@require_POST
def run_action(request: HttpRequest, slug: str, pk: int, action: str) -> HttpResponse:
    run = drafting_selectors.run_get(user=request.user, run_id=pk, slug=slug)
    service = run_services.RUN_ACTIONS.get(action)
    if service is None:
        raise Http404("Unknown action.")
    service(run_id=run.pk, actor=request.user)
    done = {"retry": "Failed contexts queued again.", "cancel": "Run cancelled."}.get(action, "Run requeued.")
    messages.success(request, done)
    return redirect("drafting-run", slug=slug, pk=run.pk)
