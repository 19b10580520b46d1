"""A manager posts an announcement and sets a deadline on the batches page; an annotator sees the announcement once
— on the next page they open, until "I've read it" — and the deadline's countdown in the work queue."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotate.batches.models import AnnouncementRead
from tests.browser.conftest import follow, follow_project_nav, person, shot
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_annotator_sees_the_announcement_once_and_the_deadline(browser, live_server, personas, project, drafts):
    manager = person(browser, live_server, "manager", PASSWORD)
    follow(manager, "Test Project", within="header.topbar nav")
    follow_project_nav(manager, "Batches")
    row = manager.locator("tr[data-batch='B1']")
    when = (timezone.localtime() + timedelta(days=2, hours=5)).strftime("%Y-%m-%dT%H:%M")
    row.get_by_label("Deadline of B1").click()
    row.get_by_label("Deadline of B1").fill(when)
    row.get_by_role("button", name="Set").click()
    expect(manager.locator(".messages")).to_contain_text("Deadline saved.")
    expect(manager.locator("tr[data-batch='B1'] .batch-deadline")).to_contain_text("due in 2 days")
    manager.get_by_label("Announcement (Markdown)").click()
    manager.keyboard.type("Please read **section 3** of the guidelines before your next instance.")
    manager.locator("#announcements select[name=batch]").select_option(label="B1")
    manager.get_by_role("button", name="Post announcement").click()
    expect(manager.locator("#announcements")).to_contain_text("read by 0 of 5")
    expect(manager.locator(".announcement-banner")).to_have_count(0)  # the author is not told
    shot(manager, "batches-announcements-1366", full_page=True)

    annotator = person(browser, live_server, "annotator", PASSWORD, viewport={"width": 390, "height": 900})
    banner = annotator.locator(".announcement-banner")
    expect(banner).to_have_count(1)
    # The manager's message, who wrote it, the batch it is about and that batch's deadline, as the queue words it.
    expect(banner.locator(".announcement-text")).to_have_text(
        "Please read section 3 of the guidelines before your next instance."
    )
    expect(banner.locator("strong", has_text="section 3")).to_be_visible()
    expect(banner).to_contain_text("from manager")
    expect(banner).to_contain_text("about batch B1")
    expect(banner.locator(".announcement-deadline")).to_contain_text(re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"))
    expect(banner.locator(".announcement-deadline")).to_contain_text("due in 2 days")
    follow(annotator, "Test Project", within="header.topbar nav")
    expect(annotator.locator(".announcement-banner")).to_have_count(1)  # still there until read
    shot(annotator, "announcement-390", full_page=True)
    annotator.locator(".announcement-banner").get_by_role("button", name="I've read it").click()
    expect(annotator.locator(".announcement-banner")).to_have_count(0)
    assert AnnouncementRead.objects.filter(user=personas["annotator"]).count() == 1
    for name in ("Work queue", "Guidelines", "Instances", "Releases"):
        follow_project_nav(annotator, name)
        expect(annotator.locator(".announcement-banner")).to_have_count(0)
    follow_project_nav(annotator, "Work queue")
    expect(annotator.locator("#deadlines li")).to_contain_text(re.compile(r"^B1:\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC"))
    expect(annotator.locator("#deadlines")).to_contain_text("due in 2 days")
    shot(annotator, "queue-deadline-390", full_page=True)

    manager.reload()
    expect(manager.locator("#announcements")).to_contain_text("read by 1 of 5")
