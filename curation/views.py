"""Server-rendered pages of the core: home, project overview per role, instance history, error pages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from curation import selectors
from curation.models import Membership, Paper
from curation.states import Role, Status
from curation.visibility import can_create_projects


@login_required
def home(request: HttpRequest) -> HttpResponse:
    memberships = Membership.objects.filter(user=request.user).select_related("project").order_by("project__name")
    projects: dict[int, dict[str, object]] = {}
    for membership in memberships:
        entry = projects.setdefault(membership.project_id, {"project": membership.project, "roles": []})
        entry["roles"].append(membership.get_role_display())
    context = {"projects": list(projects.values()), "can_create_projects": can_create_projects(request.user)}
    return render(request, "curation/home.html", context)


@login_required
def project_overview(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    roles = selectors.roles_of(user=request.user, project=project)
    context: dict[str, object] = {"project": project, "roles": roles}
    mine = selectors.instances_visible_to(request.user, project)
    if Role.ANNOTATOR in roles:
        membership = Membership.objects.filter(user=request.user, project=project, role=Role.ANNOTATOR).first()
        context["annotator"] = {
            "membership": membership,
            "in_progress": mine.filter(author=request.user, status=Status.IN_REFINEMENT).count(),
            "changes_requested": mine.filter(author=request.user, status=Status.CHANGES_REQUESTED).count(),
            "submitted": mine.filter(author=request.user)
            .exclude(status__in=(Status.IN_REFINEMENT, Status.CHANGES_REQUESTED, Status.DRAFTED))
            .count(),
            "available": project.instances.filter(status=Status.DRAFTED).count(),
            "round2": project.instances.filter(status=Status.ROUND2_REVIEW)
            .exclude(author=request.user)
            .exclude(round1_verifier=request.user)
            .count(),
        }
    if Role.VERIFIER in roles:
        context["verifier"] = {
            "waiting": project.instances.filter(status=Status.SUBMITTED).exclude(author=request.user).count(),
            "reviewing": project.instances.filter(status=Status.ROUND1_REVIEW, round1_verifier=request.user).count(),
            "discussions": project.instances.filter(status=Status.IN_DISCUSSION, round1_verifier=request.user).count(),
        }
    if Role.MANAGER in roles:
        counts = selectors.status_counts(project)
        total = sum(counts.values()) or 1
        context["manager"] = {
            "counts": [(Status(s).label, s, n, round(100 * n / total, 1)) for s, n in counts.items()],
            "total": sum(counts.values()),
            "members": Membership.objects.filter(project=project).select_related("user").order_by("role"),
            "papers": Paper.objects.filter(project=project).count(),
            "batches": project.batches.all(),
        }
    recent = mine.order_by("-updated_at")[:10] if roles & {Role.MANAGER, Role.VERIFIER} else mine[:10]
    context["recent"] = recent
    return render(request, "curation/project.html", context)


@login_required
def instance_history(request: HttpRequest, pk: int) -> HttpResponse:
    instance = selectors.instance_get(user=request.user, instance_id=pk)
    context = {
        "instance": instance,
        "revisions": instance.revisions.select_related("author"),
        "events": instance.events.select_related("actor"),
    }
    return render(request, "curation/instance_history.html", context)


def forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "403.html", {"message": str(exception or "")}, status=403)
