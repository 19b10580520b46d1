"""Template tags for a new project's first steps: the manager's checklist and the vouches (who vouched, when, why)
on the members, exam set-up and dashboard pages."""

from __future__ import annotations

from typing import Any

from django import template

from annotate.dashboard.checklist import first_release_steps
from annotate.quality.selectors import paused_annotators
from annotate.quality.vouching import standing_vouches
from curation.models import Membership
from curation.states import Role
from curation.visibility import QUALIFIED

register = template.Library()


@register.inclusion_tag("annotate/dashboard/_checklist.html")
def first_release_checklist(project: Any) -> dict[str, Any]:
    steps = first_release_steps(project=project)
    return {"steps": steps, "next_step": next((s for s in steps if not s.done), None)}


@register.inclusion_tag("annotate/qualification/_vouches.html", takes_context=True)
def vouches(context: template.Context, project: Any, editable: bool = True) -> dict[str, Any]:
    """The standing vouches; with `editable`, a Revoke button on each and a form to vouch for an unqualified
    annotator (the pages that show it are a manager's), or a word that every annotator is qualified, or that there
    are no annotators yet. Annotators paused by hidden gold are not offered (`vouch_create` refuses them): a line
    names them and links to the dashboard's Restore."""
    request = context.get("request")
    annotators = Membership.objects.filter(project=project, role=Role.ANNOTATOR)
    unqualified = (
        list(annotators.exclude(QUALIFIED).select_related("user").order_by("user__username")) if editable else []
    )
    paused = paused_annotators(project=project) if unqualified else set()
    return {
        "project": project,
        "vouches": list(standing_vouches(project=project)),
        "unqualified": [m for m in unqualified if m.user_id not in paused],
        "paused": [m.user.username for m in unqualified if m.user_id in paused],
        "has_annotators": bool(unqualified) or (editable and annotators.exists()),
        "editable": editable,
        "next": request.get_full_path() if request else "",
        "csrf_token": context.get("csrf_token"),
    }
