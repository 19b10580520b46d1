"""A manager registers a webhook by clicks, copies the secret shown once, sends a test event that a real worker
delivers to a receiver on localhost, and replays it; a refused URL is explained beside the field."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect
from standardwebhooks.webhooks import Webhook as Verifier

from curation.webhooks.models import WebhookDelivery
from tests.browser.conftest import follow, follow_project_nav, person, shot
from tests.conftest import PASSWORD
from tests.curation.webhooks.conftest import LOOPBACK_ALLOWED
from tests.curation.webhooks.receivers import receiver
from tests.support.workers import celery_worker, private_queue, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1366, 390])
def test_a_manager_registers_a_hook_and_a_worker_delivers_its_test_event(
    browser, live_server, personas, project, settings, width
):
    queue = private_queue(f"test-webhooks-browser-{width}")
    settings.TATCURATE_WEBHOOKS_QUEUE = queue
    settings.TATCURATE_WEBHOOK_HOSTS = LOOPBACK_ALLOWED
    page = person(browser, live_server, "manager", PASSWORD, viewport={"width": width, "height": 900})
    follow(page, "Test Project", within="header.topbar nav")
    follow_project_nav(page, "Webhooks")
    expect(page.locator("#no-hooks")).to_be_visible()

    page.click("#hook_url")
    page.keyboard.type("http://169.254.169.254/latest/meta-data/")
    page.get_by_label("A release was cut").check()
    page.get_by_role("button", name="Register").click()
    expect(page.locator("#add-hook")).to_contain_text("link-local, metadata or reserved")

    worker_env = {"TATCURATE_WEBHOOKS_QUEUE": queue, "TATCURATE_WEBHOOK_HOSTS": ",".join(LOOPBACK_ALLOWED)}

    with receiver([200]) as hook_receiver, celery_worker(queue=queue, env=worker_env):
        page.click("#hook_url")
        page.fill("#hook_url", hook_receiver["url"])
        page.get_by_label("A release was cut").check()
        page.get_by_role("button", name="Register").click()
        secret = page.locator("#webhook-secret").inner_text()
        assert secret.startswith("whsec_")
        expect(page.locator("#new-secret")).to_contain_text("only this once")
        follow_project_nav(page, "Webhooks")
        expect(page.locator("#webhook-secret")).to_have_count(0)  # gone on the next visit

        hooks = page.locator("#hooks")
        # "Active" is its own field, not one of the events; each button's accessible name starts with its text.
        expect(hooks.get_by_role("checkbox", name=re.compile(r"^\s*Active\b"))).to_be_checked()
        expect(hooks.locator("fieldset").get_by_role("checkbox", name=re.compile(r"^\s*Active\b"))).to_have_count(0)
        for button in hooks.locator("tbody button").all():
            assert (button.get_attribute("aria-label") or button.inner_text()).startswith(button.inner_text()), (
                button.inner_text()
            )
        page.get_by_role("button", name="Send test event to").first.click()
        expect(page.locator(".messages")).to_contain_text("Test event queued")
        wait_for(lambda: WebhookDelivery.objects.filter(state="delivered").exists(), what="the worker's delivery")
        page.reload()
        row = page.locator("#deliveries tbody tr").first
        expect(row).to_contain_text("webhook.test")
        receiver_url = urlsplit(hook_receiver["url"])
        expect(row).to_contain_text(f"{receiver_url.netloc}{receiver_url.path}")  # the receiver, not "1"
        expect(row.locator(".delivery-state")).to_contain_text("Delivered")
        row.locator("summary").first.click()  # the attempts; each attempt's answer headers fold inside
        expect(row).to_contain_text("HTTP 200")
        expect(row.locator(".answer-headers summary")).to_contain_text("answer headers")
        shot(page, f"webhooks-{width}", full_page=True)
        [request] = hook_receiver["requests"]
        headers = {k.lower(): v for k, v in request["headers"].items()}
        Verifier(secret).verify(request["body"], headers)  # the Standard Webhooks verifier, 5-minute window

        row.get_by_role("button", name="Replay delivery").click()
        expect(page.locator(".messages")).to_contain_text("Delivery queued again")
        wait_for(lambda: len(hook_receiver["requests"]) == 2, what="the replay to arrive")
    assert hook_receiver["requests"][1]["body"] == request["body"]
    # Removing asks first; once agreed, the hook is gone from the page.
    questions: list[str] = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    page.get_by_role("button", name="Remove webhook").first.click()
    expect(page.locator("#no-hooks")).to_be_visible()
    assert len(questions) == 1 and questions[0].startswith("Remove the webhook to 127.0.0.1:")
