"""Celery tasks of releases (thin: ids in, one service call); both run on the exports queue."""

from __future__ import annotations

from celery import shared_task

from curation.jobs import TransactionAwareTask
from curation.releases.services import export_build, release_cut_build


@shared_task(name="curation.export_build", acks_late=True, bind=True, base=TransactionAwareTask)
def export_build_task(self, artifact_id: int) -> str:
    """Write one release export; a redelivered task finds the artifact ready (or held by a live worker) and exits."""
    artifact = export_build(artifact_id=artifact_id, worker=self.request.hostname or "")
    return artifact.state if artifact is not None else "missing"


@shared_task(name="curation.release_cut", acks_late=True, bind=True, base=TransactionAwareTask)
def release_cut_task(self, cut_id: int) -> str:
    """Run one big release cut (exports queue); a redelivered task finds it ready, failed or held by a live worker
    and exits quietly."""
    cut = release_cut_build(cut_id=cut_id, worker=self.request.hostname or "")
    return cut.state if cut is not None else "missing"
