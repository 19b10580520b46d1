"""Writes for annotation guidelines: managers publish numbered versions; members record which version they read."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Max

from annotate.qualification.models import Guidelines, GuidelinesRead
from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.models import Project
from curation.selectors import roles_of
from curation.services.projects import require_role
from curation.states import Role

MAX_TEXT_LENGTH = 200_000
DEFAULT_NOTE = "Default guidelines (task, questions, rationales, answers, answer source, three examples)"


@cache
def default_guidelines_text() -> str:
    return (Path(__file__).resolve().parent.parent / "default_guidelines.md").read_text(encoding="utf-8")


def _create_version(*, project: Project, text: str, note: str, created_by: AbstractBaseUser | None) -> Guidelines:
    # Two managers publishing at once both compute the same next number; the unique constraint makes one retry.
    for _ in range(3):
        latest = Guidelines.objects.filter(project=project).aggregate(v=Max("version"))["v"] or 0
        try:
            with transaction.atomic():
                return Guidelines.objects.create(
                    project=project, version=latest + 1, text=text, note=note[:300], created_by=created_by
                )
        except IntegrityError:
            continue
    raise Conflict("Someone else published guidelines at the same moment; reload and try again.")


def guidelines_ensure_default(*, project: Project) -> Guidelines:
    """The project's current guidelines, creating version 1 from the default text if it has none."""
    current = Guidelines.objects.filter(project=project).order_by("-version").first()
    if current is not None:
        return current
    try:
        with transaction.atomic():
            return Guidelines.objects.create(
                project=project, version=1, text=default_guidelines_text(), note=DEFAULT_NOTE, created_by=None
            )
    except IntegrityError:  # seeded by a concurrent first view
        return Guidelines.objects.filter(project=project).order_by("-version").first()


@transaction.atomic
def guidelines_publish(*, project: Project, actor: AbstractBaseUser, text: str, note: str = "") -> Guidelines:
    """Publish a new version (managers only); the author has read it, everyone else is flagged once."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="publish guidelines")
    text = (text or "").strip()
    if not text:
        raise InvalidInput("Guidelines cannot be empty.", detail={"field": "text"})
    if len(text) > MAX_TEXT_LENGTH:
        raise InvalidInput(f"Guidelines are limited to {MAX_TEXT_LENGTH:,} characters.", detail={"field": "text"})
    current = Guidelines.objects.filter(project=project).order_by("-version").first()
    if current is not None and current.text.strip() == text:
        raise InvalidInput("This text is the same as the current version; change something first.")
    guidelines = _create_version(project=project, text=text, note=(note or "").strip(), created_by=actor)
    GuidelinesRead.objects.get_or_create(user=actor, guidelines=guidelines)
    return guidelines


def guidelines_mark_read(*, project: Project, user: AbstractBaseUser, version: int | None = None) -> GuidelinesRead:
    """Record that a member read `version` (default: the current one), which clears its banner."""
    if not roles_of(user=user, project=project):
        raise NotPermitted("Only members of this project have guidelines to read.")
    versions = Guidelines.objects.filter(project=project)
    guidelines = versions.filter(version=version).first() if version else versions.order_by("-version").first()
    if guidelines is None:
        raise NotFound("These guidelines do not exist." if version else "This project has no guidelines yet.")
    read, _ = GuidelinesRead.objects.get_or_create(user=user, guidelines=guidelines)
    return read
