"""The project wiring: settings, URLconf, Celery app, WSGI/ASGI and the web server's configuration.

It names every app, so it sits above them all; the core (curation) imports nothing from here."""

from config.celery import app as celery_app

__all__ = ("celery_app",)
