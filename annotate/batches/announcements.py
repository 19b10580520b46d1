"""Writes of announcements: a manager posts one; an annotator or verifier records "I've read it" (once)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotate.batches.models import Announcement, AnnouncementRead
from curation.errors import InvalidInput, NotFound, NotPermitted
from curation.models import Batch, Project
from curation.selectors import roles_of
from curation.services.projects import require_role
from curation.states import Role

# Who is told: the people doing the work (managers write the announcements and list them on the batches page).
AUDIENCE = (Role.ANNOTATOR, Role.VERIFIER)


@transaction.atomic
def announcement_post(
    *, project: Project, actor: AbstractBaseUser, text: str, batch_id: int | None = None
) -> Announcement:
    """Post Markdown to the project's annotators and verifiers, optionally about one of its batches. Managers
    only; the author has read it."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="post announcements")
    text = (text or "").strip()
    if not text:
        raise InvalidInput("An announcement needs a text.", detail={"field": "text"})
    batch = None
    if batch_id is not None:
        batch = Batch.objects.filter(project=project, pk=batch_id).first()
        if batch is None:
            raise InvalidInput(f"No batch {batch_id} in this project.", detail={"field": "batch"})
    announcement = Announcement.objects.create(project=project, batch=batch, text=text, created_by=actor)
    AnnouncementRead.objects.create(user=actor, announcement=announcement)
    return announcement


def announcement_mark_read(*, announcement_id: int, user: AbstractBaseUser) -> AnnouncementRead:
    """Record that `user` read the announcement (idempotent: the first time is kept). Members of its project only;
    anyone else learns nothing (NotFound)."""
    announcement = Announcement.objects.filter(pk=announcement_id).select_related("project").first()
    roles = roles_of(user=user, project=announcement.project) if announcement is not None else set()
    if announcement is None or not roles:
        raise NotFound(f"No announcement {announcement_id} for you.")
    if not roles & {str(role) for role in (*AUDIENCE, Role.MANAGER)}:
        raise NotPermitted("Only annotators and verifiers of this project read its announcements.")
    read, _ = AnnouncementRead.objects.get_or_create(user=user, announcement=announcement)
    return read
