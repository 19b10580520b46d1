"""Pages of the queue and the refinement workspace (interfaces only: the services decide)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotate.quality.selectors import pause_of
from annotate.work import queue, workspace
from annotate.work import selectors as work_selectors
from curation import selectors
from curation.errors import NotPermitted


@login_required
def work_home(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    context = {
        "project": project,
        "counts": queue.queue_counts(project=project, user=request.user),
        "assigned": queue.assigned_drafts(project=project, user=request.user)[:50],
        **work_selectors.work_of_annotator(user=request.user, project=project),
        "roles": selectors.roles_of(user=request.user, project=project),
        "deadlines": selectors.batch_deadlines(user=request.user, project=project),
        "pause": pause_of(project=project, user=request.user),
    }
    return render(request, "annotate/work/queue.html", context)


@login_required
@require_POST
def work_next(request: HttpRequest, slug: str) -> HttpResponse:
    """Claim the next draft and open it; after a submit (the workspace posts `submitted`), the page it leads to
    confirms the submission first."""
    project = selectors.project_get(user=request.user, slug=slug)
    submitted = request.POST.get("submitted", "")
    if submitted.isdigit():
        messages.success(request, f"Instance {submitted} submitted.")
    try:
        claim = queue.queue_claim(project_slug=slug, user=request.user)
    except NotPermitted:
        if pause_of(project=project, user=request.user) is None:
            raise
        # Paused by hidden gold (often right after submitting the probe that did it): the queue says why and how on.
        return redirect("work-home", slug=slug)
    if claim is None:
        messages.info(
            request,
            "Nothing is waiting for you in the open batches (drafts you skipped come back to you after a while)."
            " Well done — check back later.",
        )
        return redirect("work-home", slug=slug)
    if claim.copy_id is not None:
        return redirect("double-copy", slug=slug, pk=claim.copy_id)
    return redirect("workspace", slug=slug, pk=claim.instance_id)


@login_required
def workspace_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    try:
        data = work_selectors.workspace_data(user=request.user, instance_id=pk)
    except NotPermitted as exc:
        # An item that left your hands (submitted, lease lost) is no error of yours: back to your queue.
        messages.warning(request, exc.message)
        return redirect("work-home", slug=slug)
    if data["instance"].project_id != project.pk:
        raise Http404("No such instance in this project.")
    return render(request, "annotate/work/workspace.html", {"project": project, **data})


@login_required
def workspace_diff(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The draft-versus-current panel (swapped in by htmx after each save)."""
    instance = workspace.instance_held(pk, request.user)
    return render(
        request, "annotate/work/_diff.html", {"instance": instance, "diffs": work_selectors.draft_diffs(instance)}
    )


@login_required
@require_POST
def work_resume(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Open an item sent back to you (from "Sent back to you"), even while you hold a draft."""
    selectors.project_get(user=request.user, slug=slug)
    claim = queue.queue_resume(instance_id=pk, user=request.user)
    return redirect("workspace", slug=slug, pk=claim.instance_id)


@login_required
@require_POST
def workspace_skip(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    selectors.project_get(user=request.user, slug=slug)
    workspace.workspace_skip(instance_id=pk, user=request.user, reason=request.POST.get("reason", ""))
    messages.info(request, "Skipped; it went back to the queue for others (you will not be given it again soon).")
    if request.POST.get("then") == "stop":  # stop empty-handed: nothing new is claimed
        return redirect("work-home", slug=slug)
    return work_next(request, slug)
