"""How a delivery is signed: the Standard Webhooks spec (https://www.standardwebhooks.com), through its reference
library `standardwebhooks`, so a receiver verifies with a ready verifier in its own language.

Each attempt carries `webhook-id` (the event's id, the body's `id`: the one de-duplication key, the same on every
retry and on a replay), `webhook-timestamp` (unix seconds of this attempt) and `webhook-signature`
(`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the base64-decoded part of the `whsec_` secret).
A receiver refuses a timestamp more than 5 minutes away from its clock (the library's window) and one id it has
already processed, so a captured request cannot be replayed.
"""

from __future__ import annotations

import base64
import secrets
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook as StandardWebhook


def secret_new() -> str:
    """A fresh per-hook secret in the spec's form: `whsec_` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def signed_headers(*, secret: str, body: bytes, message_id: str, now: datetime | None = None) -> dict[str, str]:
    """Every header of one attempt (a new timestamp per attempt, over the same body and id)."""
    moment = now or datetime.now(UTC)
    return {
        "Content-Type": "application/json",
        "User-Agent": "TaT-Curate-Webhooks/2",
        "webhook-id": message_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": StandardWebhook(secret).sign(message_id, moment, body.decode()),
    }
