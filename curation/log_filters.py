"""Logging filters of the console handler (settings.LOGGING)."""

from __future__ import annotations

import logging


class RefusalsOnOneLine(logging.Filter):
    """A 403 or 404 is a refusal the app meant, not a fault: Django logs it with the exception's traceback, which
    buried the log in tracebacks of people opening pages they may not. Keep the one line (method, path, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) in (403, 404):
            record.exc_info = None
            record.exc_text = None
        return True
