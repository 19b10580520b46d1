"""The Celery application: configuration comes from Django settings (CELERY_* names)."""

from __future__ import annotations

import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# The embedded broker: kombu's filesystem transport, each message written whole before a worker can take it.
TRANSPORT_ALIASES["filesystem"] = "config.broker:Transport"

app = Celery("tatcurate")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


import curation.worker_heartbeat  # noqa: E402,F401  (connects the worker heartbeat signals)
