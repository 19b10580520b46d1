"""Server-rendered pages of the core: home, project overview per role, instance history, error pages."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views import defaults

from curation import selectors
from curation.members import selectors as member_selectors
from curation.states import Role
from curation.visibility import can_create_projects


@login_required
def home(request: HttpRequest) -> HttpResponse:
    projects: dict[int, dict[str, object]] = {}
    for membership in member_selectors.memberships_of_user(user=request.user):
        entry = projects.setdefault(membership.project_id, {"project": membership.project, "roles": []})
        entry["roles"].append(membership.get_role_display())
    context = {"projects": list(projects.values()), "can_create_projects": can_create_projects(request.user)}
    return render(request, "curation/home.html", context)


@login_required
def project_overview(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    roles = selectors.roles_of(user=request.user, project=project)
    context: dict[str, object] = {"project": project, "roles": roles}
    context.update(selectors.project_overview(user=request.user, project=project, roles=roles))
    if "annotator" in context:
        membership = member_selectors.membership_get(user=request.user, project=project, role=Role.ANNOTATOR)
        context["annotator"]["membership"] = membership
    if "manager" in context:
        context["manager"]["members"] = member_selectors.members_of(user=request.user, project=project)
    context["recent"] = selectors.recent_instances(user=request.user, project=project, roles=roles)
    return render(request, "curation/project.html", context)


@login_required
def instance_history(request: HttpRequest, pk: int) -> HttpResponse:
    """The old address of an instance's page: its project's instance page (fields, context, history)."""
    instance = selectors.instance_get(user=request.user, instance_id=pk)
    return redirect("review-history", slug=instance.project.slug, pk=pk)


View = Callable[..., HttpResponse]
API_PREFIX = "/api/"


def _connections_checked() -> None:
    """Close this thread's connections that are unusable or past their age and have the others health-checked at
    their next query (never one inside a transaction: a test's, or a view's that failed)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


def _error_page(status: int, code: str, detail: str) -> Callable[[View], View]:
    """An error page: under /api/ the API's JSON error body (`curation.api_errors`' shape, as the schema documents),
    else the HTML page. Under ASGI Django renders it in a thread pool of its own (response_for_exception with
    thread_sensitive=False), outside the request's started and finished signals, so the connection its session and
    user lookups open there is neither checked nor closed by them, and after a database restart it is stale: every
    error page checks its thread's connections before it renders and lets go of them after."""

    def decorate(view: View) -> View:
        @wraps(view)
        def page(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            if request.path.startswith(API_PREFIX):
                return JsonResponse({"error": code, "detail": detail}, status=status)
            _connections_checked()
            try:
                return view(request, *args, **kwargs)
            finally:
                _connections_checked()

        return page

    return decorate


@_error_page(403, "forbidden", "You may not do this.")
def forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "403.html", {"message": str(exception or "")}, status=403)


bad_request = _error_page(400, "invalid", "Bad request.")(defaults.bad_request)
not_found = _error_page(404, "not_found", "No API endpoint at this address.")(defaults.page_not_found)
server_error = _error_page(500, "server_error", "Server error.")(defaults.server_error)
