"""Template context for every page: projects whose newest guidelines the viewer has not read (the banner)."""

from __future__ import annotations

from django.http import HttpRequest


def guidelines_banner(request: HttpRequest) -> dict[str, object]:
    """`unread_guidelines`: projects with a guidelines version the viewer has not opened yet."""
    from annotate.qualification.selectors import unread_guidelines

    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"unread_guidelines": []}
    return {"unread_guidelines": unread_guidelines(user)}
