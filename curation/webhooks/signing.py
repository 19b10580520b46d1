"""How a delivery is signed and how a receiver verifies it (pure; no Django).

The signed string is `<timestamp>.<raw body>`; the signature is HMAC-SHA256 with the hook's secret, sent as
`X-TatCurate-Signature: sha256=<hex>` beside `X-TatCurate-Timestamp: <unix seconds>`. A receiver recomputes it over
the bytes it received and refuses a timestamp older than a few minutes, so a captured request cannot be replayed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

SIGNATURE_HEADER = "X-TatCurate-Signature"
TIMESTAMP_HEADER = "X-TatCurate-Timestamp"
EVENT_HEADER = "X-TatCurate-Event"
DELIVERY_HEADER = "X-TatCurate-Delivery"
TOLERANCE_S = 300


def secret_new() -> str:
    """A fresh per-hook secret (256 bits, URL-safe)."""
    return "whsec_" + secrets.token_urlsafe(32)


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """The header value `sha256=<hex>` of `body` sent at `timestamp`."""
    signed = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signed_headers(*, secret: str, body: bytes, event: str, delivery: str, now: float | None = None) -> dict[str, str]:
    """Every header of one attempt (a new timestamp per attempt, over the same body)."""
    timestamp = int(now if now is not None else time.time())
    return {
        "Content-Type": "application/json",
        "User-Agent": "TaT-Curate-Webhooks/1",
        EVENT_HEADER: event,
        DELIVERY_HEADER: delivery,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(secret=secret, timestamp=timestamp, body=body),
    }


def is_valid(
    *, secret: str, body: bytes, timestamp: str, header: str, now: float | None = None, tolerance_s: int = TOLERANCE_S
) -> bool:
    """What a receiver checks: the signature matches (constant time) and the timestamp is recent."""
    try:
        sent_at = int(timestamp)
    except (TypeError, ValueError):
        return False
    if abs((now if now is not None else time.time()) - sent_at) > tolerance_s:
        return False
    return hmac.compare_digest(signature(secret=secret, timestamp=sent_at, body=body), header or "")
