"""What the annotate pages need around their own content (review, batches, dashboard): the project a page is under
and the navigation context with the review badge."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from annotate.review.context import open_discussions
from curation import selectors
from curation.models import Project


def project_of(request: HttpRequest, slug: str) -> Project:
    """The project a page is under, as the viewer may see it (NotFound otherwise: a 404 by the middleware)."""
    return selectors.project_get(user=request.user, slug=slug)


def page_context(request: HttpRequest, project: Project) -> dict[str, Any]:
    """What every annotate page's navigation needs: the viewer's roles and their open-discussion badge."""
    badge = open_discussions(request)
    return {
        "project": project,
        "roles": selectors.roles_of(user=request.user, project=project),
        "badges": {"open_discussions": badge["count"], "open_discussions_shown": badge["shown"]},
    }
