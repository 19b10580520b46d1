"""Celery's autodiscover_tasks() imports only `<app>.tasks`; the run tasks live in their package (scoring/runs/)."""

import scoring.runs.tasks  # noqa: F401
