"""Celery's autodiscover_tasks() imports only `<app>.tasks`; the run tasks live in their package (scoring/runs/)."""

import scoring.runs.tasks  # noqa: F401
from curation.jobs import job_kind_task
from scoring.calibration import CALIBRATIONS

calibrate_task = job_kind_task(CALIBRATIONS)
