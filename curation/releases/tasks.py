"""Celery tasks of releases (an id in, the kind's run); both run on the exports queue."""

from __future__ import annotations

from curation.jobs import job_kind_task
from curation.releases.services.jobs import EXPORT_BUILDS, RELEASE_CUTS

export_build_task = job_kind_task(EXPORT_BUILDS)
release_cut_task = job_kind_task(RELEASE_CUTS)
