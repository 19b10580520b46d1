"""The API docs page (Swagger UI) has a way back into the app."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1366, 390])
def test_a_person_reaches_the_api_docs_and_follows_the_link_back(page, live_server, login, personas, width):
    page.set_viewport_size({"width": width, "height": 768})
    login(page, "manager")
    page.get_by_role("link", name="API", exact=True).first.click()
    page.wait_for_selector(".swagger-ui .info", timeout=20000)
    back = page.get_by_role("link", name="← Back to the app")
    expect(back).to_be_visible()
    assert back.evaluate("el => el.getBoundingClientRect().bottom <= innerHeight")  # at the top, no scrolling
    shot(page, f"api-docs-{width}")
    back.click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.get_by_role("link", name="Test Project").first).to_be_visible()
