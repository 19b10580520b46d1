"""Template tags for the review pages: comments beside each field, and the open comments an annotator must address."""

from __future__ import annotations

from typing import Any

from django import template

from annotate.review.models import ReviewComment

register = template.Library()


@register.inclusion_tag("annotate/review/_field_comments.html")
def field_comments(comments: list[ReviewComment], field: str) -> dict[str, Any]:
    """The comments on one field ("" for the whole instance)."""
    return {"items": [c for c in comments or [] if c.field == field]}


@register.inclusion_tag("annotate/review/_author_comments.html")
def review_comments_for(instance: Any) -> dict[str, Any]:
    """Unresolved reviewer comments on an instance, for its annotator's workspace."""
    comments = ReviewComment.objects.filter(instance=instance, is_resolved=False).select_related("author")
    return {"comments": list(comments)}
