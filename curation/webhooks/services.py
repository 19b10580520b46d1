"""Every write of webhooks: register, change, remove, reveal a secret; emit an event; send, replay and reap a delivery.

- **Managers only** for everything a person does here (`require_role`); `webhook_emit` is called by the services
  whose change the event reports (a release cut, a run finishing, a pause, a batch settling), never by a view.
- **One outbound rule** (`curation.endpoints.outbound`, `webhook_policy`): a hook's URL is checked at registration
  and again when each connection opens, against TATCURATE_WEBHOOK_HOSTS; loopback and private addresses only when
  listed as addresses, link-local never; the connection is pinned to the address checked.
- **No page is a probe**: an attempt records its status code and timing, never the receiver's body, and every
  failure to get an HTTP answer (refused, reset, timed out, not HTTP) reads alike, so open and closed ports look
  the same.
- **Never blocks the cause**: `webhook_emit` only writes delivery rows in the caller's transaction; their messages
  go after the commit (`curation.jobs`), and a broker that refuses them leaves the rows to the reaper.
- **Bounded retries**: 2xx delivers; 408, 429, 5xx, timeouts and connection errors are tried again after an
  exponential backoff, at most TATCURATE_WEBHOOK_MAX_ATTEMPTS times; any other answer gives up at once.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from curation.endpoints.django_client import outbound_policy
from curation.endpoints.outbound import GuardedBackend, OutboundPolicy, OutboundRefused
from curation.errors import InvalidInput, NotFound
from curation.jobs import JobKind, job_stall_cutoff, job_task
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role
from curation.webhooks.models import EVENT_NAMES, TEST_EVENT, Webhook, WebhookAttempt, WebhookDelivery
from curation.webhooks.selectors import delivery_get, webhook_get
from curation.webhooks.signing import secret_new, signed_headers

logger = logging.getLogger(__name__)

TASK_NAME = "curation.webhook_deliver"
RETRIED_STATUSES = frozenset({408, 429})
MAX_BACKOFF_S = 3600
NO_ANSWER = "no HTTP answer from the receiver (connection failed, reset or timed out)"


def webhook_policy() -> OutboundPolicy:
    """Where receivers may be: TATCURATE_WEBHOOK_HOSTS only, nothing implicit; a listed name reaches public addresses
    only (loopback and private ones must be listed as addresses or networks)."""
    return outbound_policy("TATCURATE_WEBHOOK_HOSTS", implicit=(), names_reach_private=False)


# --- Registration ---------------------------------------------------------------------------------------------


def _clean_url(url: str) -> str:
    url = (url or "").strip()
    if not url:
        raise InvalidInput("A webhook needs a URL.", detail={"field": "url"})
    if len(url) > 500:
        raise InvalidInput("A webhook URL has at most 500 characters.", detail={"field": "url"})
    if not url.lower().startswith(("http://", "https://")):
        raise InvalidInput(f"{url!r} is not an http:// or https:// URL.", detail={"field": "url"})
    refusal = webhook_policy().url_refusal(url)
    if refusal:
        raise InvalidInput(
            f"This URL is refused: {refusal}. An operator allows hosts with TATCURATE_WEBHOOK_HOSTS.",
            detail={"field": "url"},
        )
    return url


def _clean_events(events: list[str] | None) -> list[str]:
    events = list(dict.fromkeys(events or []))
    unknown = [event for event in events if event not in EVENT_NAMES]
    if unknown:
        raise InvalidInput(
            f"Unknown events: {', '.join(map(str, unknown))}; expected some of {', '.join(EVENT_NAMES)}.",
            detail={"field": "events"},
        )
    if not events:
        raise InvalidInput("Choose at least one event.", detail={"field": "events"})
    return [event for event in EVENT_NAMES if event in events]


@transaction.atomic
def webhook_create(
    *, project: Project, actor: AbstractBaseUser, url: str, events: list[str], description: str = ""
) -> tuple[Webhook, str]:
    """Register a URL for `events` with a new secret, returned this once. Managers only; the URL must pass the
    outbound allow-list."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="register webhooks")
    hook = Webhook.objects.create(
        project=project,
        url=_clean_url(url),
        events=_clean_events(events),
        description=(description or "").strip()[:200],
        secret=secret_new(),
        created_by=actor,
    )
    return hook, hook.secret


@transaction.atomic
def webhook_update(
    *,
    project: Project,
    actor: AbstractBaseUser,
    webhook_id: int,
    events: list[str] | None = None,
    is_active: bool | None = None,
    url: str | None = None,
    description: str | None = None,
) -> Webhook:
    """Change a hook's events, URL, description or whether it is active (the secret stays). Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="change webhooks")
    hook = webhook_get(user=actor, project=project, webhook_id=webhook_id)
    if events is not None:
        hook.events = _clean_events(events)
    if url is not None:
        hook.url = _clean_url(url)
    if is_active is not None:
        hook.is_active = bool(is_active)
    if description is not None:
        hook.description = description.strip()[:200]
    hook.save(update_fields=["events", "url", "is_active", "description"])
    return hook


@transaction.atomic
def webhook_delete(*, project: Project, actor: AbstractBaseUser, webhook_id: int) -> None:
    """Remove a hook and its deliveries. Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="remove webhooks")
    webhook_get(user=actor, project=project, webhook_id=webhook_id).delete()


def webhook_secret_reveal(*, project: Project, actor: AbstractBaseUser, webhook_id: int) -> str:
    """A hook's secret, for a manager who asks for it (never part of a list, a log or another page)."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="see webhook secrets")
    return webhook_get(user=actor, project=project, webhook_id=webhook_id).secret


# --- Emission -------------------------------------------------------------------------------------------------


def _nudge(delivery_id: int, countdown: float = 0) -> None:
    """Send the delivery's message once the caller commits. A broker that refuses it loses nothing: the row is
    the record, and the reaper sends a pending row whose attempt is overdue."""

    def send() -> None:
        try:
            job_task(TASK_NAME).apply_async(args=[delivery_id], countdown=countdown or None)  # curation.queues
        except Exception:
            logger.warning("webhook delivery %s: the broker refused the message; the reaper sends it", delivery_id)

    transaction.on_commit(send)


def _deliveries_create(
    *, project: Project, hooks: list[Webhook], event: str, payload: dict[str, Any]
) -> list[WebhookDelivery]:
    created = []
    for hook in hooks:
        delivery = WebhookDelivery(webhook=hook, event=event, next_attempt_at=timezone.now())
        envelope = {
            "id": str(delivery.uid),
            "event": event,
            "created_at": timezone.now().isoformat(),
            "project": {"slug": project.slug, "name": project.name},
            "data": payload,
        }
        delivery.body = json.dumps(envelope, cls=DjangoJSONEncoder, sort_keys=True, ensure_ascii=False)
        delivery.save()
        _nudge(delivery.pk)
        created.append(delivery)
    return created


def webhook_emit(*, project: Project, event: str, payload: dict[str, Any]) -> list[WebhookDelivery]:
    """Queue `event` for every active hook of `project` that subscribed to it, in the caller's transaction (so a
    rolled-back cause sends nothing); the worker sends them after the commit. Called by services, not by people.
    Without a subscribed hook it costs one query (and no savepoint)."""
    if event not in EVENT_NAMES:
        raise ValueError(f"unknown webhook event {event!r}")
    hooks = [hook for hook in Webhook.objects.filter(project=project, is_active=True) if event in hook.events]
    if not hooks:
        return []
    with transaction.atomic(savepoint=False):  # part of the cause's transaction, or its own
        return _deliveries_create(project=project, hooks=hooks, event=event, payload=payload)


@transaction.atomic
def webhook_test_send(*, project: Project, actor: AbstractBaseUser, webhook_id: int) -> WebhookDelivery:
    """Queue a `webhook.test` event to one hook (active or not), so a manager can check the receiver. Managers
    only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="send test events")
    hook = webhook_get(user=actor, project=project, webhook_id=webhook_id)
    payload = {"message": "A test event from TaT-Curate.", "sent_by": actor.get_username()}
    return _deliveries_create(project=project, hooks=[hook], event=TEST_EVENT, payload=payload)[0]


@transaction.atomic
def delivery_replay(*, project: Project, actor: AbstractBaseUser, delivery_id: int) -> WebhookDelivery:
    """Send a past delivery's body again as a new delivery with new attempts; the event id (body `id`, header
    `webhook-id`) stays, so a receiver that has processed it drops the replay. Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="replay webhook deliveries")
    original = delivery_get(user=actor, project=project, delivery_id=delivery_id)
    if original is None:
        raise NotFound(f"No webhook delivery {delivery_id} in this project.")
    replay = WebhookDelivery.objects.create(
        webhook=original.webhook,
        event=original.event,
        body=original.body,
        next_attempt_at=timezone.now(),
        replay_of=original,
    )
    _nudge(replay.pk)
    return replay


# --- Sending (the worker's side) ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one POST gave: its status code (None without an answer), the answer's headers, the error, and whether the
    outbound allow-list refused it (never retried). Never the receiver's body."""

    status_code: int | None
    error: str = ""
    is_refused: bool = False
    headers: dict[str, str] = field(default_factory=dict)


# An answer's headers as an attempt keeps them: at most this many, each value cut to this many characters.
KEPT_HEADERS, KEPT_HEADER_CHARS = 30, 200


def _post(*, url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """One POST through the outbound guard (redirects are not followed; the answer's body is never read)."""
    transport = httpx.HTTPTransport()
    transport._pool._network_backend = GuardedBackend(webhook_policy())  # checked and pinned per connection
    try:
        with httpx.Client(
            transport=transport, timeout=settings.TATCURATE_WEBHOOK_TIMEOUT_S, follow_redirects=False
        ) as client:
            with client.stream("POST", url, content=body, headers=headers) as response:
                code = response.status_code
                answered = {name.lower(): value[:KEPT_HEADER_CHARS] for name, value in response.headers.items()}
    except OutboundRefused as refused:
        return Outcome(None, error=str(refused)[:500], is_refused=True)
    except httpx.HTTPError:
        return Outcome(None, error=NO_ANSWER)
    kept = dict(list(answered.items())[:KEPT_HEADERS])
    return Outcome(code, error="" if 200 <= code < 300 else f"HTTP {code}", headers=kept)


def is_retried(outcome: Outcome) -> bool:
    """The retry rule: no answer (timeout, connection error) or 408/429/5xx is tried again; a URL the allow-list
    refuses, a 2xx and any other status are not."""
    if outcome.status_code is None:
        return not outcome.is_refused
    return outcome.status_code in RETRIED_STATUSES or outcome.status_code >= 500


def delivery_send(*, delivery_id: int, worker: str = "") -> WebhookDelivery | None:
    """Make one attempt of a pending delivery whose time has come (the task's only call), record it, and then
    deliver, schedule the next attempt, or give up. A delivered or failed one, one a live worker holds, or one not
    due yet is left alone, so a duplicated message is harmless."""
    return WEBHOOK_DELIVERIES.run(delivery_id, worker=worker)


class WebhookDeliveries(JobKind):
    """Webhook deliveries: a worker makes one attempt (`delivery_send`); a delivery whose worker went silent
    mid-attempt is sent again (or given up after TATCURATE_WEBHOOK_MAX_ATTEMPTS), and a pending one whose attempt
    is overdue by the stall time is nudged (its message was lost)."""

    name = "webhook deliveries"
    model = WebhookDelivery
    task_name = TASK_NAME
    running = WebhookDelivery.State.SENDING
    finished = (WebhookDelivery.State.DELIVERED, WebhookDelivery.State.FAILED)

    @property
    def waiting(self) -> Q:  # type: ignore[override]
        """A pending delivery whose attempt is due."""
        return Q(state=WebhookDelivery.State.PENDING) & (
            Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=timezone.now())
        )

    def max_attempts(self) -> int:
        return int(settings.TATCURATE_WEBHOOK_MAX_ATTEMPTS)

    def work(self, row: WebhookDelivery, pk: int, token: str) -> None:
        delivery = WebhookDelivery.objects.select_related("webhook").get(pk=pk)  # with the attempt the claim counted
        hook = delivery.webhook
        body = delivery.body.encode()
        headers = signed_headers(secret=hook.secret, body=body, message_id=delivery.event_id)
        started_at = timezone.now()
        clock = time.monotonic()
        # The attempt may outlast the stall threshold (a receiver that answers slowly): beat while it runs.
        with self.heartbeating(pk, token):
            outcome = _post(url=hook.url, body=body, headers=headers)
        WebhookAttempt.objects.update_or_create(
            delivery=delivery,
            number=delivery.attempts,
            defaults={
                "started_at": started_at,
                "status_code": outcome.status_code,
                "duration_ms": int((time.monotonic() - clock) * 1000),
                "response_headers": outcome.headers,
                "error": outcome.error,
            },
        )
        mine = self.mine(pk, token)
        now = timezone.now()
        code = outcome.status_code
        if code is not None and 200 <= code < 300:
            mine.update(state=WebhookDelivery.State.DELIVERED, finished_at=now, claim_token="", error="")
        elif is_retried(outcome) and delivery.attempts < settings.TATCURATE_WEBHOOK_MAX_ATTEMPTS:
            # 1, 2, 4… times TATCURATE_WEBHOOK_BACKOFF_S after failed attempt 1, 2, 3…
            wait = float(min(settings.TATCURATE_WEBHOOK_BACKOFF_S * 2 ** (delivery.attempts - 1), MAX_BACKOFF_S))
            if mine.update(
                state=WebhookDelivery.State.PENDING,
                next_attempt_at=now + timedelta(seconds=wait),
                claim_token="",
                error=outcome.error,
            ):
                _nudge(pk, countdown=wait)
        else:
            why = f" (given up after {delivery.attempts} attempts)" if is_retried(outcome) else " (not retried)"
            self.fail(pk, token, outcome.error + why)

    def send_again(self, rows: list[WebhookDelivery]) -> None:
        for delivery in rows:
            _nudge(delivery.pk)

    def reap(self, *, stall_s: float | None = None) -> int:
        with transaction.atomic():
            overdue = WebhookDelivery.objects.filter(
                state=WebhookDelivery.State.PENDING, next_attempt_at__lt=job_stall_cutoff(stall_s)
            ).values_list("pk", flat=True)
            for delivery_id in overdue:
                _nudge(delivery_id)
            return super().reap(stall_s=stall_s) + len(overdue)


WEBHOOK_DELIVERIES = WebhookDeliveries()
