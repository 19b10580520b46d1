"""Celery tasks of the core (thin: ids in, one service call)."""

from __future__ import annotations

from celery import shared_task

from curation.services.releases import export_build, release_cut_build


@shared_task(name="curation.export_build", acks_late=True)
def export_build_task(artifact_id: int) -> str:
    """Write one release export; a redelivered task finds the artifact ready and exits quietly."""
    artifact = export_build(artifact_id=artifact_id)
    return artifact.state if artifact is not None else "missing"


@shared_task(name="curation.release_cut", acks_late=True)
def release_cut_task(cut_id: int) -> str:
    """Run one big release cut (exports queue); a redelivered task finds it ready or failed and exits quietly."""
    cut = release_cut_build(cut_id=cut_id)
    return cut.state if cut is not None else "missing"


# autodiscover_tasks() imports only `<app>.tasks`; the drafting tasks live in their own module.
import curation.drafting.tasks  # noqa: E402,F401
