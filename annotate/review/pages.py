"""What the annotate pages need around their own content (review, batches, dashboard): the project a page is under
and the navigation context."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from curation import selectors
from curation.models import Project


def project_of(request: HttpRequest, slug: str) -> Project:
    """The project a page is under, as the viewer may see it (NotFound otherwise: a 404 by the middleware)."""
    return selectors.project_get(user=request.user, slug=slug)


def page_context(request: HttpRequest, project: Project) -> dict[str, Any]:
    """What every annotate page's navigation needs besides its open-discussion badge (every page's `review_badges`,
    annotate.review.context): the project and the viewer's roles."""
    return {"project": project, "roles": selectors.roles_of(user=request.user, project=project)}
