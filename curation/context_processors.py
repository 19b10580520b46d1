"""Template context shared by every page: the viewer's projects, and the current project's pages for its role."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from curation.states import Role


def current_project_slug(request: HttpRequest) -> str | None:
    """The slug of the project a page belongs to: its URL's <slug>, or what a view set as `request.project_slug`
    for a page addressed without one (an exam attempt)."""
    match = getattr(request, "resolver_match", None)
    return (match.kwargs.get("slug") if match else None) or getattr(request, "project_slug", None)


def navigation(request: HttpRequest) -> dict[str, object]:
    """`nav_projects` for the top bar; `nav_project` (project, roles, qualified) on pages under /p/<slug>/. Both are
    read only when a template shows them (a page fragment does not)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_projects": [], "nav_project": None}
    from curation.selectors import projects_visible_to

    projects = SimpleLazyObject(lambda: list(projects_visible_to(user).only("slug", "name")[:20]))
    return {"nav_projects": projects, "nav_project": SimpleLazyObject(lambda: _nav_project(request, projects))}


def _nav_project(request: HttpRequest, projects: list) -> dict[str, object] | None:
    from curation.members.selectors import is_qualified_annotator
    from curation.selectors import projects_visible_to, roles_of

    slug = current_project_slug(request)
    if not slug:
        return None
    user = request.user
    current = next((p for p in projects if p.slug == slug), None) or projects_visible_to(user).filter(slug=slug).first()
    if current is None:
        return None
    roles = roles_of(user=user, project=current)
    qualified = Role.ANNOTATOR in roles and is_qualified_annotator(project=current, user=user)
    return {"project": current, "roles": roles, "qualified": qualified, "url_name": request.resolver_match.url_name}
