"""Webhook deliveries end to end on a real Celery worker process: a receiver on localhost gets a signed
`release.cut` that verifies with the hook's secret; 5xx answers are retried with backoff and every attempt is
recorded; an unreachable receiver is given up after the bounded attempts; a worker stopped mid-attempt hands the
delivery back at once."""

from __future__ import annotations

import os
import signal
import threading
from contextlib import ExitStack

import pytest
from standardwebhooks.webhooks import Webhook as Verifier
from standardwebhooks.webhooks import WebhookVerificationError

from curation.releases.services import cut as cut_services
from curation.webhooks import services as webhook_services
from curation.webhooks.models import WebhookDelivery
from tests.curation.releases.test_release_scale import validated_world
from tests.curation.webhooks.conftest import LOOPBACK_ALLOWED
from tests.curation.webhooks.receivers import closed_port_url, receiver
from tests.support.workers import celery_worker, handed_back, private_queue, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def shared_webhook_worker(django_db_setup, django_db_blocker):
    """A worker on a private queue that sends webhooks with a one-second backoff and at most three attempts, started
    once for the tests of this module that use it (each test waits for its own delivery to finish, so none leaves
    work behind for the next)."""
    queue = private_queue("test-webhooks")
    env = {
        "TATCURATE_WEBHOOKS_QUEUE": queue,
        "TATCURATE_WEBHOOK_BACKOFF_S": "1",
        "TATCURATE_WEBHOOK_MAX_ATTEMPTS": "3",
        "TATCURATE_WEBHOOK_HOSTS": ",".join(LOOPBACK_ALLOWED),
    }
    with ExitStack() as stack:
        with django_db_blocker.unblock():  # the start waits for the worker's heartbeat row
            worker = stack.enter_context(celery_worker(queue=queue, env=env))
        yield worker


@pytest.fixture
def webhook_worker(project, settings, shared_webhook_worker):
    """The module's webhook worker, with this test's settings sending to its queue under its limits."""
    settings.TATCURATE_WEBHOOKS_QUEUE = shared_webhook_worker["queue"]
    settings.TATCURATE_WEBHOOK_MAX_ATTEMPTS = 3
    return shared_webhook_worker


def _finished(delivery_id: int) -> WebhookDelivery | None:
    return WebhookDelivery.objects.filter(pk=delivery_id, state__in=("delivered", "failed")).first()


def test_a_release_cut_reaches_the_receiver_signed_with_the_hooks_secret(project, personas, webhook_worker):
    batch = validated_world(project, papers=1, per_paper=2)
    with receiver([200]) as hook_receiver:
        hook, secret = webhook_services.webhook_create(
            project=project, actor=personas["manager"], url=hook_receiver["url"], events=["release.cut"]
        )
        release = cut_services.release_cut(project=project, actor=personas["manager"], name="v1", batch_ids=[batch.pk])
        delivery = WebhookDelivery.objects.get(webhook=hook)
        done = wait_for(lambda: _finished(delivery.pk), timeout=60, what="the worker to deliver release.cut")
        assert (done.state, done.attempts, done.worker) == ("delivered", 1, webhook_worker["hostname"])
        [request] = hook_receiver["requests"]
    # A receiver verifies with the Standard Webhooks library and the hook's secret, and no other secret.
    event = Verifier(secret).verify(request["body"], request["headers"])
    with pytest.raises(WebhookVerificationError):
        Verifier("whsec_" + "d3Jvbmc=").verify(request["body"], request["headers"])
    headers = {name.lower(): value for name, value in request["headers"].items()}
    assert event["event"] == "release.cut" and event["id"] == headers["webhook-id"] == str(delivery.uid)
    assert event["data"]["release"]["id"] == release.pk and event["data"]["release"]["item_count"] == 2
    [attempt] = done.attempt_rows.all()
    assert (attempt.status_code, attempt.error) == (200, "")
    worker_log = webhook_worker["log"].read_text()
    assert "curation.webhook_deliver" in worker_log and secret not in worker_log  # never logged


def test_a_receiver_that_fails_twice_is_retried_and_three_attempts_are_recorded(project, personas, webhook_worker):
    with receiver([500, 500, 200]) as hook_receiver:
        hook, _ = webhook_services.webhook_create(
            project=project, actor=personas["manager"], url=hook_receiver["url"], events=["release.cut"]
        )
        delivery = webhook_services.webhook_test_send(project=project, actor=personas["manager"], webhook_id=hook.pk)
        done = wait_for(lambda: _finished(delivery.pk), timeout=60, what="the third attempt")
        assert len(hook_receiver["requests"]) == 3
    attempts = list(done.attempt_rows.values_list("number", "status_code", "error"))
    assert (done.state, done.attempts) == ("delivered", 3)
    assert attempts == [(1, 500, "HTTP 500"), (2, 500, "HTTP 500"), (3, 200, "")]
    # The same body and webhook-id each time (the receiver's de-duplication key), each attempt signed anew.
    bodies = {bytes(r["body"]) for r in hook_receiver["requests"]}
    ids = {r["headers"]["webhook-id"] for r in hook_receiver["requests"]}
    assert len(bodies) == 1 and ids == {str(delivery.uid)}


def test_an_unreachable_receiver_is_given_up_after_the_bounded_attempts(project, personas, webhook_worker):
    hook, _ = webhook_services.webhook_create(
        project=project, actor=personas["manager"], url=closed_port_url(), events=["release.cut"]
    )
    delivery = webhook_services.webhook_test_send(project=project, actor=personas["manager"], webhook_id=hook.pk)
    done = wait_for(lambda: _finished(delivery.pk), timeout=60, what="the delivery to be given up")
    assert (done.state, done.attempts) == ("failed", 3)
    assert "given up after 3 attempts" in done.error
    attempts = list(done.attempt_rows.all())
    assert [a.number for a in attempts] == [1, 2, 3]
    assert all(a.status_code is None and a.error == webhook_services.NO_ANSWER for a in attempts)


def test_a_4xx_answer_is_not_retried(project, personas, webhook_worker):
    with receiver([404]) as hook_receiver:
        hook, _ = webhook_services.webhook_create(
            project=project, actor=personas["manager"], url=hook_receiver["url"], events=["release.cut"]
        )
        delivery = webhook_services.webhook_test_send(project=project, actor=personas["manager"], webhook_id=hook.pk)
        done = wait_for(lambda: _finished(delivery.pk), timeout=60, what="the delivery to fail")
        assert len(hook_receiver["requests"]) == 1
    assert (done.state, done.attempts) == ("failed", 1) and "not retried" in done.error


def test_a_worker_stopped_mid_attempt_hands_the_delivery_back_at_once(project, personas, settings):
    """A cold shutdown abandons the attempt in progress; the worker hands the delivery back as it stops
    (curation/tasks.py), so a replacement sends it again without waiting for the stall reaper."""
    queue = private_queue("test-webhooks-stop")
    settings.TATCURATE_WEBHOOKS_QUEUE = queue
    # A stall threshold of minutes: only the worker's own hand-back can free the delivery within this test.
    env = {
        "TATCURATE_WEBHOOKS_QUEUE": queue,
        "TATCURATE_JOB_HEARTBEAT_S": "60",
        "TATCURATE_WEBHOOK_HOSTS": ",".join(LOOPBACK_ALLOWED),
    }
    hold = threading.Event()
    with receiver([200], hold=hold) as hook_receiver:
        hook, _ = webhook_services.webhook_create(
            project=project, actor=personas["manager"], url=hook_receiver["url"], events=["release.cut"]
        )
        # prefork: a cold shutdown terminates the child running the task, then the worker itself shuts down.
        with celery_worker(queue=queue, env=env, concurrency=2) as first:
            delivery = webhook_services.webhook_test_send(
                project=project, actor=personas["manager"], webhook_id=hook.pk
            )
            wait_for(lambda: len(hook_receiver["requests"]) == 1, timeout=60, what="the first attempt to arrive")
            assert WebhookDelivery.objects.get(pk=delivery.pk).worker == first["hostname"]
            os.killpg(first["process"].pid, signal.SIGQUIT)  # cold shutdown: the attempt in progress is abandoned
            # Handed back as the signal arrives, before Celery stops the pool (which can hang under load); its
            # message sent again before the worker is killed on leaving this block.
            wait_for(
                lambda: handed_back(first, "webhook deliveries") == 1,
                timeout=30,
                what="the stopped worker to hand the delivery back",
            )
        delivery.refresh_from_db()
        assert (delivery.state, delivery.claim_token, delivery.attempts) == ("pending", "", 1)
        with celery_worker(queue=queue, name="hooks-replacement", env=env) as second:
            done = wait_for(lambda: _finished(delivery.pk), timeout=60, what="the replacement to deliver")
        assert len(hook_receiver["requests"]) == 2
    assert (done.state, done.attempts, done.worker) == ("delivered", 2, second["hostname"])
    assert list(done.attempt_rows.values_list("number", "status_code")) == [(2, 200)]  # the abandoned one left none
