"""The web tier's gunicorn configuration, shared by scripts/start, the README's production shape and benchmarks.

gunicorn -c python:config.gunicorn_conf config.asgi --bind HOST:PORT
"""

from __future__ import annotations

import os

# Before the settings are read: under ASGI a kept database connection would outlive its request's thread.
os.environ.setdefault("DATABASE_CONN_MAX_AGE", "0")

from config import settings as app_settings

worker_class = "config.web_worker.WebWorker"
workers = app_settings.TATCURATE_WEB_WORKERS
keepalive = app_settings.TATCURATE_KEEPALIVE_S
# A worker whose event loop has not notified the arbiter for this long (hung) is restarted.
timeout = 60
graceful_timeout = 30
# Request lines and headers are bounded by h11 (16 KiB of unparsed input per connection, then 400).
