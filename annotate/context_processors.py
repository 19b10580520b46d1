"""Template context for every page: what the viewer has not read yet — projects whose newest guidelines they have not
opened, and managers' announcements they have not marked read. One rule for both: shown on every page until read."""

from __future__ import annotations

from django.http import HttpRequest


def guidelines_banner(request: HttpRequest) -> dict[str, object]:
    """`unread_guidelines`: projects with a guidelines version the viewer has not opened yet;
    `unread_announcements`: announcements to the viewer they have not marked read (each with its HTML)."""
    from annotate.batches.selectors import unread_announcements
    from annotate.qualification.selectors import unread_guidelines

    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"unread_guidelines": [], "unread_announcements": []}
    return {"unread_guidelines": unread_guidelines(user), "unread_announcements": unread_announcements(user)}
