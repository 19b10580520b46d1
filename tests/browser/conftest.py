"""Browser tests: Playwright driving Debian's Chromium against Django's live server."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import PASSWORD

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test are still sync.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)
            if not os.path.exists(CHROMIUM):
                item.add_marker(pytest.mark.skip(reason="Debian's chromium is not installed (scripts/setup --browser)"))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture
def login(live_server):
    """login(page, username): log in through the real form and land on the home page."""

    def do_login(page, username: str, password: str = PASSWORD) -> None:
        page.goto(f"{live_server.url}/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    return do_login


@pytest.fixture
def page(browser, browser_context_args):
    """A fresh page in its own browser context.

    Defined here because pytest-playwright's `page` goes through a fixture named `context`, which
    tests/conftest.py uses for a curation Context.
    """
    browser_context = browser.new_context(**browser_context_args)
    browser_context.set_default_timeout(15000)
    yield browser_context.new_page()
    browser_context.close()
