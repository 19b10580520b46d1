"""Pages for ingestion: a project's papers, the manager's upload page, and a paper page to judge its extraction."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from curation import selectors
from curation.errors import InvalidInput
from curation.models import Paragraph, Project
from curation.page_errors import form_problems, service_attempt
from curation.papers import ingestion
from curation.papers import selectors as paper_selectors
from curation.papers import services as paper_services
from curation.papers.display import mention_segments
from curation.services import contexts as context_services
from curation.services.contexts import leaf_reasoning_types
from curation.states import Role
from curation.table_shape import shape_from_row

STAFF = {Role.MANAGER.value, Role.VERIFIER.value}


class ContextAssignForm(forms.Form):
    """Assign reasoning types to a paper's short contexts, a batch's, or every unassigned one, with a seed."""

    seed = forms.IntegerField(required=False)
    paper = forms.IntegerField(required=False, min_value=1)
    batch = forms.ModelChoiceField(
        queryset=None, required=False, error_messages={"invalid_choice": "There is no such batch in this project."}
    )

    def __init__(self, *args: Any, batches: QuerySet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["batch"].queryset = batches


def _project_for(request: HttpRequest, slug: str, *, roles: set[str], action: str) -> tuple[Project, set[str]]:
    project = selectors.project_get(user=request.user, slug=slug)
    held = selectors.roles_of(user=request.user, project=project)
    if not held & roles:
        raise PermissionDenied(f"Only a {' or '.join(sorted(roles))} of this project may {action}.")
    return project, held


@login_required
def project_papers(request: HttpRequest, slug: str) -> HttpResponse:
    project, roles = _project_for(request, slug, roles=STAFF, action="see its papers")
    papers = paper_selectors.papers_of_project(user=request.user, project=project, page=request.GET.get("page"))
    is_manager = Role.MANAGER in roles
    unassigned, unassigned_more = (
        paper_selectors.unassigned_context_count(user=request.user, project=project) if is_manager else (0, False)
    )
    context = {
        "project": project,
        "papers": papers,
        "is_manager": is_manager,
        "batches": selectors.batches_visible_to(request.user, project),
        "unassigned": unassigned,
        "unassigned_more": unassigned_more,
    }
    return render(request, "curation/papers.html", context)


@login_required
def papers_upload(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = _project_for(request, slug, roles={Role.MANAGER.value}, action="ingest papers")
    context: dict[str, object] = {
        "project": project,
        "batches": selectors.batches_visible_to(request.user, project),
        "jobs": paper_selectors.ingest_jobs_open(user=request.user, project=project),
    }
    if request.method != "POST":
        return render(request, "curation/papers_upload.html", context)
    batch_id = request.POST.get("batch") or ""
    batch_pk = int(batch_id) if batch_id.isdigit() else None
    batch = selectors.batch_of_project(user=request.user, project=project, batch_id=batch_pk)
    try:
        job = ingestion.ingest_job_request(
            project=project, actor=request.user, uploads=request.FILES.getlist("files"), batch=batch
        )
    except InvalidInput as exc:
        context["error"] = exc.message
        context["rejected"] = exc.detail.get("rejected", [])
        return render(request, "curation/papers_upload.html", context, status=400)
    return redirect("ingest-job", project.slug, job.pk)


@login_required
def ingest_job_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, _ = _project_for(request, slug, roles={Role.MANAGER.value}, action="ingest papers")
    job = paper_selectors.ingest_job_get(user=request.user, project=project, job_id=pk)
    context = {
        "project": project,
        "job": job,
        "is_active": job.state in (job.State.PENDING, job.State.RUNNING),
        # Only a short context is drafted (SciTaT §2.1): without one, batching is no next step.
        "short_contexts": sum(result["contexts"]["short"] for result in job.results or []),
    }
    return render(request, "curation/ingest_job.html", context)


@login_required
@require_POST
def ingest_job_retry(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, _ = _project_for(request, slug, roles={Role.MANAGER.value}, action="ingest papers")
    job = paper_selectors.ingest_job_get(user=request.user, project=project, job_id=pk)
    service_attempt(
        request, lambda: ingestion.ingest_job_retry(job=job, actor=request.user), f"Ingestion {job.pk} is queued again."
    )
    return redirect("ingest-job", project.slug, job.pk)


@login_required
@require_POST
def ingest_job_discard(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, _ = _project_for(request, slug, roles={Role.MANAGER.value}, action="ingest papers")
    job = paper_selectors.ingest_job_get(user=request.user, project=project, job_id=pk)
    discarded = service_attempt(
        request,
        lambda: ingestion.ingest_job_discard(job=job, actor=request.user),
        f"Ingestion {job.pk} discarded; its files are deleted and nothing was stored.",
    )
    if discarded is None:
        return redirect("ingest-job", project.slug, job.pk)
    return redirect("papers-upload", project.slug)


@login_required
def paper_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, roles = _project_for(request, slug, roles=STAFF, action="see its papers")
    paper = paper_selectors.paper_get(user=request.user, project=project, paper_id=pk)
    tables = list(paper.tables.all())
    paragraphs = list(paper.paragraphs.all())
    mentioned_by: dict[int, list[Paragraph]] = {table.pk: [] for table in tables}
    paragraph_rows = []
    for paragraph in paragraphs:
        linked = list(paragraph.mentioned_tables.all())
        numbers: dict[str, int] = {}
        for table in linked:
            mentioned_by.setdefault(table.pk, []).append(paragraph)
            if table.number:
                numbers[table.number] = table.pk
            for sub in table.subtables or []:
                if sub.get("number"):
                    numbers[str(sub["number"])] = table.pk
        paragraph_rows.append(
            {"paragraph": paragraph, "segments": mention_segments(paragraph.text, numbers), "tables": linked}
        )
    contexts = paper_selectors.contexts_of_paper(user=request.user, paper=paper)
    counts = paper_selectors.context_counts(paper)
    context = {
        "project": project,
        "paper": paper,
        "is_manager": Role.MANAGER in roles,
        "tables": [
            {
                "table": table,
                "header_rows": shape_from_row(table).html_header_rows(),
                "mentioned_by": mentioned_by[table.pk],
            }
            for table in tables
        ],
        "paragraphs": paragraph_rows,
        "contexts": contexts,
        "flag": paper_services.paper_flag_reason(
            table_count=len(tables), short_context_count=counts["short"], origin=paper.origin
        ),
        "context_counts": counts,
        "leaf_types": leaf_reasoning_types(project),
        "versions": paper_selectors.paper_versions(user=request.user, paper=paper),
    }
    return render(request, "curation/paper.html", context)


@login_required
@require_POST
def contexts_assign(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = _project_for(request, slug, roles={Role.MANAGER.value}, action="assign reasoning types")
    target = request.POST.get("next", "")
    if not target.startswith("/") or target.startswith("//"):  # only a page of this site
        target = reverse("project-papers", args=[project.slug])
    form = ContextAssignForm(request.POST, batches=selectors.batches_visible_to(request.user, project))
    if not form.is_valid():
        messages.error(request, form_problems(form))
        return redirect(target)
    paper_id, batch = form.cleaned_data["paper"], form.cleaned_data["batch"]
    chosen = None
    if paper_id:
        chosen = paper_selectors.short_contexts_of_paper(user=request.user, project=project, paper_id=paper_id)
        batch = None
    result = service_attempt(
        request,
        lambda: context_services.contexts_assign_reasoning_types(
            project=project, actor=request.user, seed=form.cleaned_data["seed"] or 0, contexts=chosen, batch=batch
        ),
    )
    if result is not None:
        messages.success(request, f"Assigned reasoning types to {result.assigned} contexts (seed {result.seed}).")
    return redirect(target)


@login_required
@require_POST
def context_reasoning_type(request: HttpRequest, pk: int) -> HttpResponse:
    context = paper_selectors.context_get(user=request.user, context_id=pk)
    code = request.POST.get("reasoning_type", "")
    target = reverse("paper", args=[context.project.slug, context.paper_id]) + f"#context-{context.pk}"
    updated = service_attempt(
        request, lambda: context_services.context_set_reasoning_code(context=context, code=code, actor=request.user)
    )
    if updated is not None:  # the type as the page's menu names it, not its code
        chosen = updated.reasoning_type
        messages.success(request, f"Context {context.pk}: reasoning type set to {chosen.name if chosen else 'none'}.")
    return redirect(target)
