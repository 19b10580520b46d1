"""Template context shared by every page: the viewer's projects for the navigation bar."""

from __future__ import annotations

from django.http import HttpRequest


def navigation(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_projects": []}
    from curation.selectors import projects_visible_to

    return {"nav_projects": list(projects_visible_to(user).only("slug", "name")[:20])}
