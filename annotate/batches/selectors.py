"""Reads of announcements: what a viewer has not read yet (the banner on every page) and the managers' list."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q

from annotate.batches.announcements import AUDIENCE
from annotate.batches.models import Announcement, AnnouncementRead
from annotate.rendering import render_markdown
from curation.deadlines import deadline_state
from curation.members.selectors import members_of
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role


def unread_announcements(user: AbstractBaseUser, *, project: Project | None = None) -> list[dict[str, Any]]:
    """Announcements of the viewer's projects (as annotator or verifier) the viewer has not marked read, oldest
    first, each with its sanitised HTML and, when it is about a batch whose deadline still applies, that deadline:
    the same rule as unread guidelines, shown by the same banner (for a signed-in viewer: the banner and the API
    ask only for one)."""
    read = AnnouncementRead.objects.filter(user=user).values("announcement_id")
    unread = Announcement.objects.visible_to(user, AUDIENCE)
    if project is not None:
        unread = unread.filter(project=project)
    unread = (
        unread.exclude(pk__in=read)
        .exclude(created_by_id=user.pk)
        .select_related("project", "batch", "created_by")
        .order_by("created_at", "id")[:5]
    )
    rows = []
    for a in unread:
        deadline = deadline_state(a.batch) if a.batch is not None else None
        pending = deadline if deadline is not None and deadline.is_pending else None
        rows.append({"announcement": a, "html": render_markdown(a.text), "deadline": pending})
    return rows


def announcements_of(*, user: AbstractBaseUser, project: Project, limit: int = 20) -> list[dict[str, Any]]:
    """The project's recent announcements with how many of the audience read them; managers only."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see its announcements")
    members = members_of(user=user, project=project).filter(role__in=[str(role) for role in AUDIENCE])
    audience = set(members.values_list("user_id", flat=True))
    rows = (
        Announcement.objects.visible_to(user, (Role.MANAGER,))
        .filter(project=project)
        .select_related("batch", "created_by")
        .annotate(audience_reads=Count("reads", filter=Q(reads__user_id__in=audience)))
        .order_by("-created_at", "-id")[:limit]
    )
    return [
        {"announcement": a, "html": render_markdown(a.text), "reads": a.audience_reads, "audience": len(audience)}
        for a in rows
    ]
