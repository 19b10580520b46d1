"""TaT-Curate project package and core domain."""

from curation.celery import app as celery_app

__all__ = ("celery_app",)
