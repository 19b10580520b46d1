"""Starting a project and filling it with people, by clicks from the home page."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from curation.models import Membership
from tests.browser.conftest import person, shot
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_manager_starts_a_project_and_adds_people(browser, live_server, personas, project):
    page = person(browser, live_server, "manager", PASSWORD)
    page.get_by_role("link", name="New project").click()
    page.click("#id_name")
    page.keyboard.type("Finance tables")
    page.get_by_role("button", name="Create project").click()
    expect(page.locator(".messages")).to_contain_text("Project Finance tables created")

    page.click("#new_username")
    page.keyboard.type("newcomer")
    page.select_option("#new_role", "annotator")
    page.get_by_role("button", name="Create and add").click()
    password = page.locator("#initial-password").inner_text()
    assert get_user_model().objects.get(username="newcomer").check_password(password)
    expect(page.locator("tr[data-member='newcomer']")).to_contain_text("Not qualified yet")

    page.click("#add_username")
    page.keyboard.type("verifier")
    page.select_option("#add_role", "verifier")
    page.get_by_role("button", name="Add member").click()
    expect(page.locator(".messages")).to_contain_text("verifier is now a verifier of Finance tables")
    shot(page, "members-1366", full_page=True)

    row = page.locator("tr[data-member='newcomer']")
    row.get_by_label("Role of newcomer").select_option("verifier")
    row.get_by_role("button", name="Set role").click()
    expect(page.locator(".messages")).to_contain_text("newcomer is now a verifier")
    # Removing asks first: saying no leaves the member in place, saying yes removes them.
    questions: list[str] = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.dismiss()))
    page.locator("tr[data-member='verifier']").get_by_role("button", name="Remove").click()
    assert questions == ["Remove verifier as verifier of Finance tables? Their past work stays."]
    expect(page.locator("tr[data-member='verifier']")).to_have_count(1)
    assert Membership.objects.filter(project__slug="finance-tables", user__username="verifier").exists()
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("tr[data-member='verifier']").get_by_role("button", name="Remove").click()
    expect(page.locator("tr[data-member='verifier']")).to_have_count(0)
    roles = dict(Membership.objects.filter(project__slug="finance-tables").values_list("user__username", "role"))
    assert roles == {"manager": "manager", "newcomer": "verifier"}

    # The new person logs in with the password they were given and finds the project.
    newcomer = browser.new_context().new_page()
    newcomer.goto(f"{live_server.url}/")
    newcomer.click("input[name=username]")
    newcomer.keyboard.type("newcomer")
    newcomer.click("input[name=password]")
    newcomer.keyboard.type(password)
    newcomer.click("button[type=submit]")
    expect(newcomer.get_by_role("link", name="Finance tables").first).to_be_visible()
