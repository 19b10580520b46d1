"""Template context for every page: how many discussions the viewer is involved in are still undecided (badges)."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject


def review_badges(request: HttpRequest) -> dict[str, object]:
    """`review_badges.open_discussions`: undecided threads the viewer takes part in or manages, and how the badge
    writes it ("99+" past the cap), counted only when a template shows it and once per request (the annotate pages'
    navigation and every page's header both show it)."""
    from annotate.review import selectors

    def badges() -> dict[str, object]:
        if not hasattr(request, "_open_discussions"):
            user = getattr(request, "user", None)
            count = selectors.unresolved_discussion_count(user) if user is not None else 0
            shown = f"{selectors.BADGE_UP_TO}+" if count > selectors.BADGE_UP_TO else str(count)
            request._open_discussions = {"open_discussions": count, "open_discussions_shown": shown}
        return request._open_discussions

    return {"review_badges": SimpleLazyObject(badges)}
