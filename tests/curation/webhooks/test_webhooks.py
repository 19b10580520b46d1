"""Webhooks without a worker: registration and its allow-list, secrets shown once, the events each cause queues
(once, in the cause's transaction), signing, and every door per role."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta
from importlib import import_module
from io import StringIO

import kombu.exceptions
import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from standardwebhooks.webhooks import Webhook as Verifier
from standardwebhooks.webhooks import WebhookVerificationError

from curation.errors import InvalidInput, NotPermitted
from curation.jobs import job_task
from curation.services.lifecycle import instance_transition
from curation.states import Status
from curation.webhooks import services as webhook_services
from curation.webhooks.models import Webhook, WebhookDelivery
from curation.webhooks.services import WEBHOOK_DELIVERIES, Outcome, is_retried
from curation.webhooks.signing import secret_new, signed_headers
from scoring.runs.models import ScoringRun
from scoring.runs.states import run_transition
from tests.annotate.qualification.support import make_gold
from tests.annotate.quality.helpers import gold_on, submit_probe, work_until_probe
from tests.conftest import PASSWORD, instance_build
from tests.curation.webhooks.receivers import closed_port_url, receiver, silent_port
from tests.factories import BatchFactory
from tests.scoring.run_support import small_release

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]
RECEIVER = "http://127.0.0.1:9/hook"


def hook_for(project, personas, events=("release.cut",), url=RECEIVER) -> Webhook:
    return webhook_services.webhook_create(project=project, actor=personas["manager"], url=url, events=list(events))[0]


# --- Signing (pure) ---------------------------------------------------------------------------------------------


def _verifies(secret: str, body: bytes, headers: dict[str, str]) -> bool:
    """What a receiver does: the Standard Webhooks reference verifier (5-minute window)."""
    try:
        Verifier(secret).verify(body, headers)
    except WebhookVerificationError:
        return False
    return True


def test_a_signature_verifies_with_the_standard_verifier_only_with_its_secret_body_id_and_a_recent_timestamp():
    secret, body = secret_new(), b'{"event": "release.cut", "id": "e1"}'
    now = datetime.now(UTC)
    headers = signed_headers(secret=secret, body=body, message_id="e1", now=now)
    assert headers["webhook-id"] == "e1" and headers["webhook-signature"].startswith("v1,")
    assert _verifies(secret, body, headers)
    assert not _verifies(secret_new(), body, headers)
    assert not _verifies(secret, body + b" ", headers)
    assert not _verifies(secret, body, {**headers, "webhook-id": "e2"})
    assert not _verifies(secret, body, {**headers, "webhook-timestamp": str(int(now.timestamp()) + 1)})
    # Inside the 5-minute window a captured request verifies (the receiver drops its seen webhook-id); past it, not.
    recent = signed_headers(secret=secret, body=body, message_id="e1", now=now - timedelta(minutes=4))
    old = signed_headers(secret=secret, body=body, message_id="e1", now=now - timedelta(minutes=6))
    assert _verifies(secret, body, recent) and not _verifies(secret, body, old)


def test_an_old_secret_rewritten_by_the_migration_keeps_its_hmac_key(project, personas):
    old = "whsec_" + "A-b_" * 10  # the old form: its UTF-8 bytes were the key
    hook = hook_for(project, personas)
    Webhook.objects.filter(pk=hook.pk).update(secret=old)
    import_module("curation.migrations.0025_harden_webhooks_standard_signing").secrets_to_standard_form(
        django_apps, None
    )
    rewritten = Webhook.objects.get(pk=hook.pk).secret
    body, stamp = "{}", datetime.now(UTC)
    expected = hmac.new(old.encode(), f"e1.{int(stamp.timestamp())}.{body}".encode(), hashlib.sha256).digest()
    assert Verifier(rewritten).sign("e1", stamp, body) == "v1," + base64.b64encode(expected).decode()


def test_the_retry_rule():
    assert [is_retried(Outcome(code)) for code in (408, 429, 500, 503)] == [True] * 4
    assert [is_retried(Outcome(code)) for code in (200, 301, 400, 401, 404, 410)] == [False] * 6
    assert is_retried(Outcome(None, error="ConnectError"))
    assert not is_retried(Outcome(None, error="refused", is_refused=True))


# --- Registration ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, says",
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local, metadata or reserved"),
        ("http://10.1.2.3/hook", "not in TATCURATE_WEBHOOK_HOSTS"),
        ("http://127.0.0.2:8200/api/auth/token/", "not in TATCURATE_WEBHOOK_HOSTS"),
        ("http://[::1]:8200/", "not in TATCURATE_WEBHOOK_HOSTS"),
        ("http://[fe80::1]/hook", "link-local, metadata or reserved"),
        ("ftp://127.0.0.1/hook", "not an http:// or https:// URL"),
        ("", "may not be blank"),
    ],
)
def test_disallowed_urls_are_refused_at_registration_with_a_clear_400(project, personas, api_client_for, url, says):
    client = api_client_for(personas["manager"])
    response = client.post(
        f"/api/projects/{project.slug}/webhooks/", {"url": url, "events": ["release.cut"]}, format="json"
    )
    assert response.status_code == 400, response.content
    assert says in json.dumps(response.json())
    assert not Webhook.objects.exists()


def test_an_operator_listed_host_is_allowed_and_link_local_never(project, personas, settings):
    settings.TATCURATE_WEBHOOK_HOSTS = ["10.0.0.0/8", "169.254.0.0/16"]
    assert hook_for(project, personas, url="http://10.1.2.3/hook").url == "http://10.1.2.3/hook"
    with pytest.raises(InvalidInput, match="link-local"):
        hook_for(project, personas, url="http://169.254.169.254/")


def test_loopback_is_refused_unless_the_operator_lists_it_even_where_endpoints_may_go(project, personas, settings):
    settings.TATCURATE_WEBHOOK_HOSTS = []
    settings.TATCURATE_ENDPOINT_HOSTS = ["127.0.0.1"]
    with pytest.raises(InvalidInput, match="TATCURATE_WEBHOOK_HOSTS"):
        hook_for(project, personas, url="http://127.0.0.1:8200/api/auth/token/")
    # A listed name reaches public addresses only: a name resolving to loopback or a private range is refused.
    settings.TATCURATE_WEBHOOK_HOSTS = ["localhost", "*"]
    with pytest.raises(InvalidInput, match="loopback or private"):
        hook_for(project, personas, url="http://localhost:8200/")


def test_unknown_or_no_events_are_a_400_naming_the_field(project, personas, api_client_for):
    client = api_client_for(personas["manager"])
    for events in (["release.cut", "nonsense"], []):
        response = client.post(
            f"/api/projects/{project.slug}/webhooks/", {"url": RECEIVER, "events": events}, format="json"
        )
        assert response.status_code == 400 and "events" in response.json()
    assert not Webhook.objects.exists()


def test_the_secret_is_shown_at_creation_and_on_reveal_only(project, personas, api_client_for):
    client = api_client_for(personas["manager"])
    created = client.post(
        f"/api/projects/{project.slug}/webhooks/", {"url": RECEIVER, "events": ["release.cut"]}, format="json"
    )
    assert created.status_code == 201
    secret = created.json()["secret"]
    assert secret.startswith("whsec_") and len(secret) > 40
    hook_id = created.json()["id"]
    listed = client.get(f"/api/projects/{project.slug}/webhooks/").content.decode()
    detail = client.get(f"/api/projects/{project.slug}/webhooks/{hook_id}/").content.decode()
    webhook_services.webhook_test_send(project=project, actor=personas["manager"], webhook_id=hook_id)
    deliveries = client.get(f"/api/projects/{project.slug}/webhook-deliveries/").content.decode()
    assert secret not in listed and secret not in detail and secret not in deliveries
    assert "secret" not in listed
    revealed = client.post(f"/api/projects/{project.slug}/webhooks/{hook_id}/secret/")
    assert revealed.status_code == 200 and revealed.json() == {"secret": secret}


# --- Events -----------------------------------------------------------------------------------------------------


def test_emit_queues_one_delivery_per_subscribed_active_hook(project, personas):
    cut = hook_for(project, personas, events=["release.cut"])
    both = hook_for(project, personas, events=["release.cut", "batch.settled"])
    off = hook_for(project, personas, events=["release.cut"])
    webhook_services.webhook_update(project=project, actor=personas["manager"], webhook_id=off.pk, is_active=False)
    hook_for(project, personas, events=["annotator.paused"])
    deliveries = webhook_services.webhook_emit(project=project, event="release.cut", payload={"n": 1})
    assert {d.webhook_id for d in deliveries} == {cut.pk, both.pk}
    body = json.loads(deliveries[0].body)
    assert body["event"] == "release.cut" and body["data"] == {"n": 1} and body["project"]["slug"] == project.slug
    assert all(d.state == "pending" for d in deliveries)


def test_a_batch_settles_once_when_its_last_instance_is_discarded(project, personas, context):
    hook = hook_for(project, personas, events=["batch.settled"])
    batch = BatchFactory(project=project, name="B1")
    first, second = (instance_build(project, context, batch=batch) for _ in range(2))
    manager = personas["manager"]
    instance_transition(instance_id=first.pk, target=Status.DISCARDED, actor=manager, reason="dup")
    assert not WebhookDelivery.objects.filter(webhook=hook).exists()
    instance_transition(instance_id=second.pk, target=Status.DISCARDED, actor=manager, reason="dup")
    [delivery] = WebhookDelivery.objects.filter(webhook=hook)
    data = json.loads(delivery.body)["data"]
    assert data["batch"]["id"] == batch.pk and data["counts"] == {"discarded": 2}
    batch.refresh_from_db()
    assert batch.settled_at is not None
    # Restored and discarded again: the batch settled already, nothing is sent twice.
    instance_transition(instance_id=second.pk, target=Status.DRAFTED, actor=manager, reason="back")
    instance_transition(instance_id=second.pk, target=Status.DISCARDED, actor=manager, reason="dup")
    assert WebhookDelivery.objects.filter(webhook=hook).count() == 1


def test_a_finished_scoring_run_is_an_event(project, personas):
    hook = hook_for(project, personas, events=["scoring_run.finished"])
    release = small_release(project)
    run = ScoringRun.objects.create(
        project=project, release=release, method="direct", config_hash="x", status=ScoringRun.Status.RUNNING
    )
    assert run_transition(run, (ScoringRun.Status.RUNNING,), ScoringRun.Status.PAUSED)
    assert not WebhookDelivery.objects.filter(webhook=hook).exists()
    run_transition(run, (ScoringRun.Status.PAUSED,), ScoringRun.Status.RUNNING)
    assert run_transition(run, (ScoringRun.Status.RUNNING,), ScoringRun.Status.COMPLETED)
    [delivery] = WebhookDelivery.objects.filter(webhook=hook)
    data = json.loads(delivery.body)["data"]
    assert (data["run"]["id"], data["run"]["status"], data["release"]["id"]) == (run.pk, "completed", release.pk)


def test_replay_sends_the_same_body_as_a_new_delivery(project, personas, api_client_for):
    hook = hook_for(project, personas)
    [original] = webhook_services.webhook_emit(project=project, event="release.cut", payload={"n": 1})
    response = api_client_for(personas["manager"]).post(
        f"/api/projects/{project.slug}/webhook-deliveries/{original.pk}/replay/"
    )
    assert response.status_code == 202
    replay = WebhookDelivery.objects.get(pk=response.json()["id"])
    assert (replay.webhook_id, replay.body, replay.replay_of_id, replay.state) == (
        hook.pk,
        original.body,
        original.pk,
        "pending",
    )
    # One de-duplication key: the event id, the body's `id` and the `webhook-id` header, kept by the replay.
    assert replay.event_id == original.event_id == json.loads(original.body)["id"] == str(original.uid)
    assert replay.uid != original.uid


def test_services_refuse_people_who_are_not_managers(project, personas):
    hook = hook_for(project, personas)
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            webhook_services.webhook_create(project=project, actor=personas[name], url=RECEIVER, events=["release.cut"])
        with pytest.raises(NotPermitted):
            webhook_services.webhook_secret_reveal(project=project, actor=personas[name], webhook_id=hook.pk)


# --- Every door per role -----------------------------------------------------------------------------------------


def _requests(project, hook, delivery):
    slug = project.slug
    return {
        "list": ("get", f"/api/projects/{slug}/webhooks/", None),
        "create": ("post", f"/api/projects/{slug}/webhooks/", {"url": RECEIVER, "events": ["release.cut"]}),
        "detail": ("get", f"/api/projects/{slug}/webhooks/{hook.pk}/", None),
        "update": ("patch", f"/api/projects/{slug}/webhooks/{hook.pk}/", {"is_active": False}),
        "secret": ("post", f"/api/projects/{slug}/webhooks/{hook.pk}/secret/", None),
        "test": ("post", f"/api/projects/{slug}/webhooks/{hook.pk}/test/", None),
        "deliveries": ("get", f"/api/projects/{slug}/webhook-deliveries/", None),
        "replay": ("post", f"/api/projects/{slug}/webhook-deliveries/{delivery.pk}/replay/", None),
        "delete": ("delete", f"/api/projects/{slug}/webhooks/{hook.pk}/", None),
    }


MATRIX = {  # annotator, verifier, manager, outsider, anonymous
    "list": (403, 403, 200, 404, 401),
    "create": (403, 403, 201, 404, 401),
    "detail": (403, 403, 200, 404, 401),
    "update": (403, 403, 200, 404, 401),
    "secret": (403, 403, 200, 404, 401),
    "test": (403, 403, 202, 404, 401),
    "deliveries": (403, 403, 200, 404, 401),
    "replay": (403, 403, 202, 404, 401),
    "delete": (403, 403, 204, 404, 401),
}


@pytest.mark.parametrize("action", list(MATRIX))
@pytest.mark.parametrize("persona", ROLES)
def test_webhook_api_per_role(project, personas, api_client_for, action, persona):
    hook = hook_for(project, personas)
    [delivery] = webhook_services.webhook_emit(project=project, event="release.cut", payload={})
    method, url, body = _requests(project, hook, delivery)[action]
    client = api_client_for(None if persona == "anonymous" else personas[persona])
    response = getattr(client, method)(url, body, format="json") if body else getattr(client, method)(url)
    assert response.status_code == MATRIX[action][ROLES.index(persona)], response.content
    if response.status_code >= 400:
        assert b"whsec_" not in response.content


@pytest.mark.parametrize(
    "persona, expected", [("annotator", 403), ("verifier", 403), ("manager", 200), ("outsider", 404)]
)
def test_webhooks_page_per_role(project, personas, persona, expected):
    browser = Client()
    browser.login(username=personas[persona].username, password=PASSWORD)
    page = browser.get(f"/p/{project.slug}/webhooks/")
    assert page.status_code == expected
    if expected == 200:  # the page names the rule registration applies (the test above), not the endpoints' one
        assert "TATCURATE_WEBHOOK_HOSTS" in page.content.decode()
        assert "TATCURATE_ENDPOINT_HOSTS" not in page.content.decode()
    project_page = browser.get(f"/p/{project.slug}/").content.decode()
    assert (f'href="/p/{project.slug}/webhooks/"' in project_page) == (persona == "manager")


def test_anonymous_is_sent_to_log_in(project):
    response = Client().get(f"/p/{project.slug}/webhooks/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_page_registers_shows_the_secret_once_and_replays(project, personas):
    browser = Client()
    browser.login(username="manager", password=PASSWORD)
    url = f"/p/{project.slug}/webhooks/"
    assert "No webhooks yet" in browser.get(url).content.decode()
    refused = browser.post(url, {"url": "http://169.254.169.254/", "events": ["release.cut"]}).content.decode()
    assert "link-local, metadata or reserved" in refused and not Webhook.objects.exists()
    page = browser.post(url, {"url": RECEIVER, "events": ["release.cut", "batch.settled"]}).content.decode()
    hook = Webhook.objects.get()
    assert hook.events == ["batch.settled", "release.cut"] and hook.secret in page and "only this once" in page
    assert hook.secret not in browser.get(url).content.decode()
    browser.post(f"/p/{project.slug}/webhooks/{hook.pk}/test/")
    delivery = WebhookDelivery.objects.get()
    assert delivery.event == "webhook.test"
    page = browser.get(url).content.decode()
    assert "<code>webhook.test</code>" in page and "Waiting to be sent" in page
    # Refused twice and due again: the page says so, not "Waiting to be sent".
    due = timezone.now() + timedelta(minutes=5)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(attempts=2, next_attempt_at=due, error="HTTP 503")
    row = browser.get(url).content.decode().split(f'data-delivery="{delivery.pk}"', 1)[1].split("</tr>", 1)[0]
    assert f"Not delivered yet: tried again at {timezone.localtime(due):%H:%M:%S}" in row
    assert "Waiting to be sent" not in row and "HTTP 503" in row
    browser.post(f"/p/{project.slug}/webhook-deliveries/{delivery.pk}/replay/")
    replay = WebhookDelivery.objects.get(replay_of=delivery)
    assert f'#{replay.pk}</span> <code>webhook.test</code> <span class="muted">(replay of #{delivery.pk})' in (
        browser.get(url).content.decode()
    )
    assert hook.secret in browser.post(f"/p/{project.slug}/webhooks/{hook.pk}/secret/").content.decode()
    browser.post(f"/p/{project.slug}/webhooks/{hook.pk}/", {f"h{hook.pk}-events": ["release.cut"]})
    hook.refresh_from_db()
    assert hook.events == ["release.cut"] and not hook.is_active


def test_the_timestamp_header_is_recent():
    headers = signed_headers(secret=secret_new(), body=b"{}", message_id="d")
    assert abs(int(headers["webhook-timestamp"]) - datetime.now(UTC).timestamp()) < 300


def test_an_annotator_paused_by_hidden_gold_is_an_event(personas, project, drafts, context):
    make_gold(project, context)
    hook = hook_for(project, personas, events=["annotator.paused"])
    gold_on(project, personas["manager"], drafts=drafts, gold_threshold=0.9, gold_min_sample=2, is_pause_on_fail=True)
    annotator = personas["annotator"]
    for answer in ("wrong", "wrong again"):
        submit_probe(work_until_probe(project=project, user=annotator), annotator, [answer])
    [delivery] = WebhookDelivery.objects.filter(webhook=hook)
    data = json.loads(delivery.body)["data"]
    assert (data["annotator"], data["em"], data["sample"], data["threshold"]) == ("annotator", 0.0, 2, 0.9)


def test_a_broker_that_refuses_the_message_never_fails_the_cause_and_the_reaper_sends_it(
    project, personas, monkeypatch, django_capture_on_commit_callbacks
):
    """A fault injected where the message is sent: the cause commits, the delivery waits, the reaper nudges it."""
    hook = hook_for(project, personas)
    task = job_task("curation.webhook_deliver")
    sent: list[list] = []

    def refuse(*args, **kwargs):
        raise kombu.exceptions.OperationalError("broker down")

    monkeypatch.setattr(task, "apply_async", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        [delivery] = webhook_services.webhook_emit(project=project, event="release.cut", payload={})
    delivery.refresh_from_db()
    assert delivery.state == "pending" and delivery.attempts == 0
    monkeypatch.setattr(task, "apply_async", lambda args=None, **kwargs: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        assert WEBHOOK_DELIVERIES.reap(stall_s=0) == 1
    assert sent == [[delivery.pk]] and hook.pk == delivery.webhook_id


def test_the_deliveries_command_lists_with_json(project, personas):
    hook = hook_for(project, personas)
    [delivery] = webhook_services.webhook_emit(project=project, event="release.cut", payload={})
    out = StringIO()
    call_command("webhooks_deliveries", "--project", project.slug, "--json", stdout=out)
    [row] = json.loads(out.getvalue())
    assert (row["id"], row["webhook"], row["event"], row["state"], row["attempts"]) == (
        delivery.pk,
        hook.pk,
        "release.cut",
        "pending",
        [],
    )
    assert hook.secret not in out.getvalue()


def test_the_reaper_sends_a_silent_workers_delivery_again_and_gives_up_after_its_attempts(
    project, personas, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.TATCURATE_WEBHOOK_MAX_ATTEMPTS = 2
    hook_for(project, personas)
    [delivery] = webhook_services.webhook_emit(project=project, event="release.cut", payload={})
    sent: list = []
    monkeypatch.setattr(job_task("curation.webhook_deliver"), "apply_async", lambda args=None, **kw: sent.append(args))
    long_ago = timezone.now() - timedelta(hours=1)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        state="sending", attempts=1, claim_token="gone", heartbeat_at=long_ago, next_attempt_at=long_ago
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert WEBHOOK_DELIVERIES.reap(stall_s=60) >= 1
    delivery.refresh_from_db()
    assert delivery.state == "pending" and [delivery.pk] in sent
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        state="sending", attempts=2, claim_token="gone", heartbeat_at=long_ago
    )
    WEBHOOK_DELIVERIES.reap(stall_s=60)
    delivery.refresh_from_db()
    assert delivery.state == "failed" and "Given up after 2 attempts" in delivery.error


def test_a_worker_hands_back_the_deliveries_it_is_attempting_at_once(
    project, personas, monkeypatch, django_capture_on_commit_callbacks
):
    """On shutdown or a restart under its old name (curation/tasks.py) a worker's deliveries mid-attempt go back to
    pending whatever their heartbeat, never given up, and are sent again; another worker's are left alone."""
    from curation.jobs import jobs_release_for_worker

    hook_for(project, personas)
    [mine] = webhook_services.webhook_emit(project=project, event="release.cut", payload={})
    [theirs] = webhook_services.webhook_emit(project=project, event="release.cut", payload={})
    sent: list = []
    monkeypatch.setattr(job_task("curation.webhook_deliver"), "apply_async", lambda args=None, **kw: sent.append(args))
    now = timezone.now()
    for delivery, worker in ((mine, "hooks@host-a"), (theirs, "hooks@host-b")):
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            state="sending", attempts=9, claim_token="t", worker=worker, heartbeat_at=now
        )
    with django_capture_on_commit_callbacks(execute=True):
        counts = jobs_release_for_worker(worker="hooks@host-a")
    assert counts["webhook deliveries"] == 1 and sent == [[mine.pk]]
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.state, mine.claim_token, mine.error) == ("pending", "", "")  # 9 attempts, still not given up
    assert (theirs.state, theirs.claim_token) == ("sending", "t")


# --- No page is a probe (issue 35, defect 1) ---------------------------------------------------------------------


def test_a_test_send_shows_status_and_timing_never_the_reply_and_ports_read_alike(project, personas, settings):
    settings.TATCURATE_WEBHOOK_MAX_ATTEMPTS = 1
    manager = personas["manager"]
    with receiver([500]) as service, silent_port() as silent:
        urls = {"answers": service["url"], "silent": silent, "closed": closed_port_url()}
        sent = {}
        for name, url in urls.items():
            hook = hook_for(project, personas, url=url)
            delivery = webhook_services.webhook_test_send(project=project, actor=manager, webhook_id=hook.pk)
            sent[name] = webhook_services.delivery_send(delivery_id=delivery.pk)
        assert len(service["requests"]) == 1
    [answered] = sent["answers"].attempt_rows.all()
    assert (answered.status_code, answered.error) == (500, "HTTP 500")
    # The answer's headers are kept (names lower-cased), its body never.
    assert answered.response_headers["x-receiver-trace"] == "trace-1"
    no_answer = [delivery.attempt_rows.get() for delivery in (sent["silent"], sent["closed"])]
    assert [(a.status_code, a.error, a.response_headers) for a in no_answer] == [
        (None, webhook_services.NO_ANSWER, {})
    ] * 2
    assert sent["silent"].error == sent["closed"].error
    browser = Client()
    browser.login(username=manager.username, password=PASSWORD)
    page = browser.get(f"/p/{project.slug}/webhooks/").content.decode()
    api = browser.get(f"/api/projects/{project.slug}/webhook-deliveries/").content.decode()
    assert "HTTP 500" in page and "answered 500" not in page and "answered 500" not in api
    assert "trace-1" in page and '"x-receiver-trace":"trace-1"' in api.replace(" ", "")
    assert "Connection refused" not in page + api and "ConnectError" not in page + api


def test_a_hook_whose_host_left_the_list_is_refused_at_send_time_without_a_request(project, personas, settings):
    with receiver([200]) as service:
        hook = hook_for(project, personas, url=service["url"])
        settings.TATCURATE_WEBHOOK_HOSTS = []
        delivery = webhook_services.webhook_test_send(project=project, actor=personas["manager"], webhook_id=hook.pk)
        done = webhook_services.delivery_send(delivery_id=delivery.pk)
        assert service["requests"] == []
    assert done.state == "failed" and "TATCURATE_WEBHOOK_HOSTS" in done.error and "not retried" in done.error
