"""Template context for every page: how many discussions the viewer is involved in are still undecided (badges)."""

from __future__ import annotations

from django.http import HttpRequest


def review_badges(request: HttpRequest) -> dict[str, object]:
    """`review_badges.open_discussions`: undecided threads the viewer takes part in or manages."""
    from annotate.review.selectors import unresolved_discussion_count

    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"review_badges": {"open_discussions": 0}}
    return {"review_badges": {"open_discussions": unresolved_discussion_count(user)}}
