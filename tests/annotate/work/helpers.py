"""Test shorthand: "Next" for an annotator, returning the instance they now hold (or None)."""

from __future__ import annotations

from annotate.work.queue import queue_claim
from curation.models import Instance


def queue_next(*, project, user) -> Instance | None:
    claim = queue_claim(project_slug=project.slug, user=user)
    return Instance.objects.get(pk=claim.instance_id) if claim else None
