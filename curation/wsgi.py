"""WSGI entry point (gunicorn curation.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
application = get_wsgi_application()
