"""The one rule for reading an uploaded file whole: over TATCURATE_MAX_UPLOAD_BYTES it is refused with a message
naming it, never read into memory and never read cut short (issue 19.3: every upload door)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from curation.errors import InvalidInput


def upload_read(upload: Any) -> bytes:
    """The whole content of `upload` (a Django UploadedFile); InvalidInput when it is over the upload limit.
    Paper sources do not come here: they are stored and read by a worker (curation/papers/ingestion.py)."""
    limit = settings.TATCURATE_MAX_UPLOAD_BYTES
    name = getattr(upload, "name", None) or "the file"
    size = getattr(upload, "size", None) or 0
    if size > limit:
        raise InvalidInput(
            f"{name}: the file is {size} bytes, over the {limit}-byte upload limit (TATCURATE_MAX_UPLOAD_BYTES); "
            "nothing was read.",
            detail={"source_name": name},
        )
    content = upload.read(limit + 1)
    if len(content) > limit:  # the declared size comes from the client; count what arrives
        raise InvalidInput(f"{name}: the file is over the {limit}-byte upload limit; nothing was read.")
    return content
