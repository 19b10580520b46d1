"""Manager pages for drafting: model endpoints (with a test button), prompt templates, runs with live progress."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from curation.drafting import endpoints as endpoint_services
from curation.drafting import selectors as drafting_selectors
from curation.drafting import services
from curation.drafting.models import DraftingRun, PromptTemplate
from curation.drafting.templates import TEMPLATES
from curation.endpoints.django_client import limit_is_shared
from curation.errors import DomainError, NotFound, NotPermitted
from curation.models import Batch, ModelEndpoint, Project
from curation.queues import waiting_label

ENDPOINT_FORM_FIELDS = ("name", "base_url", "model", "api_key_env", "timeout_s", "max_attempts", "concurrency_limit")


def _managed(request: HttpRequest, slug: str, action: str) -> Project:
    try:
        return drafting_selectors.managed_project_get(user=request.user, slug=slug, action=action)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except NotPermitted as exc:
        raise PermissionDenied(exc.message) from exc


def _run_for(request: HttpRequest, slug: str, pk: int) -> DraftingRun:
    try:
        run = drafting_selectors.run_get(user=request.user, run_id=pk)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except NotPermitted as exc:
        raise PermissionDenied(exc.message) from exc
    if run.project.slug != slug:
        raise Http404("No such run in this project.")
    return run


# Endpoints ------------------------------------------------------------------------------------------------------


def _endpoint_fields(post: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {name: post.get(name, "").strip() for name in ENDPOINT_FORM_FIELDS if name in post}
    for name, cast in (("timeout_s", float), ("max_attempts", int), ("concurrency_limit", int)):
        if fields.get(name):
            try:
                fields[name] = cast(fields[name])
            except ValueError as exc:
                raise DomainError(f"{name} must be a number.") from exc
        else:
            fields.pop(name, None)
    rpm = post.get("requests_per_minute", "").strip()
    fields["requests_per_minute"] = int(rpm) if rpm.isdigit() else None
    raw_params = post.get("generation_params", "").strip()
    try:
        fields["generation_params"] = json.loads(raw_params) if raw_params else {}
    except ValueError as exc:
        raise DomainError('Generation parameters must be a JSON object, e.g. {"temperature": 0}.') from exc
    fields["supports_tools"] = post.get("supports_tools") == "on"
    return fields


@login_required
def endpoint_list(request: HttpRequest, slug: str) -> HttpResponse:
    project = _managed(request, slug, "manage model endpoints")
    error = ""
    if request.method == "POST":
        try:
            endpoint = endpoint_services.endpoint_create(
                project=project, actor=request.user, **_endpoint_fields(request.POST)
            )
        except DomainError as exc:
            error = exc.message
        else:
            messages.success(request, f"Endpoint “{endpoint.name}” added. Test it before drafting.")
            return redirect("drafting-endpoints", slug=project.slug)
    endpoints = [
        {"endpoint": e, "key_status": endpoint_services.key_status(e), "can_edit": e.project_id is not None}
        for e in endpoint_services.endpoints_visible_to(request.user, project)
    ]
    return render(
        request,
        "curation/drafting/endpoints.html",
        {
            "project": project,
            "endpoints": endpoints,
            "limit_is_shared": limit_is_shared(),
            "error": error,
            "form": request.POST if error else {},
        },
        status=400 if error else 200,
    )


def _endpoint_for(request: HttpRequest, pk: int) -> ModelEndpoint:
    try:
        return endpoint_services.endpoint_get(user=request.user, endpoint_id=pk)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except NotPermitted as exc:
        raise PermissionDenied(exc.message) from exc


@login_required
def endpoint_edit(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = _managed(request, slug, "manage model endpoints")
    endpoint = _endpoint_for(request, pk)
    if endpoint.project_id not in (None, project.pk):
        raise Http404("No such endpoint in this project.")
    error = ""
    if request.method == "POST":
        try:
            endpoint_services.endpoint_update(endpoint=endpoint, actor=request.user, **_endpoint_fields(request.POST))
        except NotPermitted as exc:
            raise PermissionDenied(exc.message) from exc
        except DomainError as exc:
            error = exc.message
            endpoint.refresh_from_db()
        else:
            messages.success(request, f"Endpoint “{endpoint.name}” saved.")
            return redirect("drafting-endpoints", slug=project.slug)
    return render(
        request,
        "curation/drafting/endpoint_edit.html",
        {
            "project": project,
            "endpoint": endpoint,
            "params_json": json.dumps(endpoint.generation_params or {}),
            "key_status": endpoint_services.key_status(endpoint),
            "error": error,
        },
        status=400 if error else 200,
    )


@login_required
@require_POST
def endpoint_test(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    _managed(request, slug, "test model endpoints")
    endpoint = _endpoint_for(request, pk)
    try:
        result = endpoint_services.endpoint_test(endpoint=endpoint, actor=request.user)
    except NotPermitted as exc:
        raise PermissionDenied(exc.message) from exc
    return render(request, "curation/drafting/_endpoint_test.html", {"endpoint": endpoint, "result": result})


# Prompt templates ------------------------------------------------------------------------------------------------


@login_required
def prompt_templates(request: HttpRequest, slug: str) -> HttpResponse:
    project = _managed(request, slug, "edit prompt templates")
    error = ""
    if request.method == "POST":
        try:
            template = services.prompt_template_save(
                project=project,
                actor=request.user,
                kind=request.POST.get("kind", ""),
                text=request.POST.get("text", ""),
                note=request.POST.get("note", ""),
            )
        except DomainError as exc:
            error = exc.message
        else:
            messages.success(request, f"Saved {template.get_kind_display()} version {template.content_hash[:10]}.")
            return redirect("drafting-prompts", slug=project.slug)
    kinds = []
    for kind, label in PromptTemplate.Kind.choices:
        current = services.prompt_template_current(project=project, kind=kind)
        history = list(drafting_selectors.prompt_templates_of(project=project, kind=kind)[:20])
        kinds.append({"kind": kind, "label": label, "current": current, "history": history})
    return render(
        request,
        "curation/drafting/prompts.html",
        {"project": project, "kinds": kinds, "error": error},
        status=400 if error else 200,
    )


# Runs -----------------------------------------------------------------------------------------------------------


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value and value.strip().isdigit() else None


@login_required
def drafting_home(request: HttpRequest, slug: str) -> HttpResponse:
    project = _managed(request, slug, "run drafting")
    error = ""
    if request.method == "POST":
        post = request.POST
        try:
            batch = Batch.objects.filter(project=project, pk=_int_or_none(post.get("batch"))).first()
            context_ids = [int(x) for x in post.get("contexts", "").replace(",", " ").split() if x.isdigit()]
            endpoint = None
            if post.get("kind") == "llm":
                endpoint = (
                    endpoint_services.endpoints_visible_to(request.user, project)
                    .filter(pk=_int_or_none(post.get("endpoint")))
                    .first()
                )
            params: dict[str, Any] = {}
            if post.get("max_tokens", "").strip().isdigit():
                params["max_tokens"] = int(post["max_tokens"])
            if post.get("temperature", "").strip():
                params["temperature"] = float(post["temperature"])
            options = {
                "redraft": post.get("redraft") == "on",
                "seed": _int_or_none(post.get("seed")) or 0,
                "per_template": _int_or_none(post.get("per_template")) or 1,
                "unanswerable": "keep" if post.get("unanswerable") == "keep" else "skip",
                "template_ids": post.getlist("template_ids"),
            }
            run = services.run_create(
                project=project,
                actor=request.user,
                kind=post.get("kind", ""),
                batch=batch,
                context_ids=context_ids or None,
                endpoint=endpoint,
                generation_params=params,
                options=options,
            )
            services.run_start(run_id=run.pk, actor=request.user)
        except ValueError:
            error = "Temperature must be a number."
        except DomainError as exc:
            error = exc.message
        else:
            return redirect("drafting-run", slug=project.slug, pk=run.pk)
    runs = list(drafting_selectors.runs_of_project(user=request.user, project=project)[:50])
    return render(
        request,
        "curation/drafting/home.html",
        {
            "project": project,
            "batches": Batch.objects.filter(project=project),
            "endpoints": endpoint_services.endpoints_visible_to(request.user, project),
            "question_templates": TEMPLATES,
            "runs": [
                {
                    "run": run,
                    "counts": services.run_counts(run),
                    "waiting": waiting_label(drafting_selectors.run_queued_behind(run)),
                }
                for run in runs
            ],
            "error": error,
            "limit_is_shared": limit_is_shared(),
        },
        status=400 if error else 200,
    )


def _run_context(run: DraftingRun) -> dict[str, Any]:
    counts = services.run_counts(run)
    open_total = counts["total"] - counts["skipped"]
    done = counts["drafted"] + counts["failed"] + counts["cancelled"]
    return {
        "run": run,
        "counts": counts,
        "percent": round(100 * done / open_total) if open_total else 100,
        "items": drafting_selectors.run_items(run),
        "is_active": run.is_active,
        "waiting": waiting_label(drafting_selectors.run_queued_behind(run)),
    }


@login_required
def run_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    run = _run_for(request, slug, pk)
    return render(request, "curation/drafting/run.html", {"project": run.project, **_run_context(run)})


@login_required
def run_progress(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    run = _run_for(request, slug, pk)
    response = render(request, "curation/drafting/_run_progress.html", {"project": run.project, **_run_context(run)})
    if not run.is_active:
        # htmx stops polling on 286.
        response.status_code = 286
    return response


@login_required
@require_POST
def run_action(request: HttpRequest, slug: str, pk: int, action: str) -> HttpResponse:
    run = _run_for(request, slug, pk)
    service = {"retry": services.run_retry_failed, "cancel": services.run_cancel, "resume": services.run_resume}.get(
        action
    )
    if service is None:
        raise Http404("Unknown action.")
    try:
        service(run_id=run.pk, actor=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request, {"retry": "Failed contexts queued again.", "cancel": "Run cancelled."}.get(action, "Run requeued.")
        )
    return redirect("drafting-run", slug=slug, pk=run.pk)
