"""What the annotate pages need around their own content (review, batches, dashboard): the navigation context."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from curation import selectors
from curation.models import Project


def page_context(request: HttpRequest, project: Project) -> dict[str, Any]:
    """What every annotate page's navigation needs besides its open-discussion badge (every page's `review_badges`,
    annotate.review.context): the project and the viewer's roles."""
    return {"project": project, "roles": selectors.roles_of(user=request.user, project=project)}
