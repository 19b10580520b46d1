"""Template context for every page: how many discussions the viewer is involved in are still undecided (badges)."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject


def open_discussions(request: HttpRequest) -> dict[str, object]:
    """The viewer's open-discussion badge (`count`, and `shown`: "99+" past the cap), counted once per request:
    the annotate pages' navigation and every page's header both show it."""
    from annotate.review.selectors import discussion_badge, unresolved_discussion_count

    if not hasattr(request, "_open_discussions"):
        user = getattr(request, "user", None)
        count = unresolved_discussion_count(user) if user is not None and user.is_authenticated else 0
        request._open_discussions = {"count": count, "shown": discussion_badge(count)}
    return request._open_discussions


def review_badges(request: HttpRequest) -> dict[str, object]:
    """`review_badges.open_discussions`: undecided threads the viewer takes part in or manages (counted only when a
    template shows it)."""

    def badges() -> dict[str, object]:
        badge = open_discussions(request)
        return {"open_discussions": badge["count"], "open_discussions_shown": badge["shown"]}

    return {"review_badges": SimpleLazyObject(badges)}
