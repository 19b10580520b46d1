"""Template context for every page: what the viewer has not read yet — projects whose newest guidelines they have not
opened, and managers' announcements they have not marked read. One rule for both: shown on every page until read
(not on error pages: they say only what went wrong)."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject


def guidelines_banner(request: HttpRequest) -> dict[str, object]:
    """`unread_guidelines`: projects with a guidelines version the viewer has not opened yet;
    `unread_announcements`: announcements to the viewer they have not marked read (each with its HTML). Read only
    when a template shows them."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"unread_guidelines": [], "unread_announcements": []}
    unread = SimpleLazyObject(lambda: _unread(request))
    return {
        "unread_guidelines": SimpleLazyObject(lambda: unread["guidelines"]),
        "unread_announcements": SimpleLazyObject(lambda: unread["announcements"]),
    }


def _unread(request: HttpRequest) -> dict[str, list]:
    from annotate.batches.selectors import unread_announcements
    from annotate.qualification.selectors import unread_guidelines
    from curation.context_processors import current_project_slug

    guidelines, announcements = unread_guidelines(request.user), unread_announcements(request.user)
    slug = current_project_slug(request)
    if slug:  # a project's page shows that project's banners only (the home page shows them all)
        guidelines = [p for p in guidelines if p.slug == slug]
        announcements = [row for row in announcements if row["announcement"].project.slug == slug]
    return {"guidelines": guidelines, "announcements": announcements}
