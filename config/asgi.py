"""ASGI entry point: what the web tier serves (gunicorn -c python:config.gunicorn_conf config.asgi)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Under ASGI each request runs its sync views in a thread of its own, so a kept connection would outlive its
# thread unclosed (Django's documentation: disable persistent connections under ASGI).
os.environ.setdefault("DATABASE_CONN_MAX_AGE", "0")
application = get_asgi_application()
