"""Browser tests: Playwright driving Debian's Chromium against Django's live server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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


# Where the browser tests leave what they saw, for a person to look at: a folder named by TATCURATE_SCREENSHOTS. Unset
# (CI), none is taken: a full-page screenshot costs the browser a render of the whole page.
SCREENSHOTS = os.environ.get("TATCURATE_SCREENSHOTS", "")


def shot(target, name: str, *, full_page: bool = False) -> None:
    """A page (all of it with `full_page`) or a locator, as `name`.png in TATCURATE_SCREENSHOTS when it is set."""
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        target.screenshot(path=f"{SCREENSHOTS}/{name}.png", **({"full_page": True} if full_page else {}))


def type_into(page, selector: str, text: str) -> None:
    """Click a field, then type into it, as a person does: the click hit-tests, so a clipped or covered field fails."""
    field = page.locator(selector).first
    field.click()
    field.fill(text)


def choose_scale(page, value: str = "none") -> None:
    """Choose the scale as a person does when the draft has none chosen ("— choose —": no evidence decided it);
    a scale the draft already holds is kept."""
    if page.locator("#f-scale").input_value() == "":
        page.select_option("#f-scale", value)


def content_width(page) -> float:
    """The width of the page's content: <main> inside its padding."""
    return page.locator("main").evaluate(
        "m => { const s = getComputedStyle(m);"
        " return m.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); }"
    )


def follow(page, name: str, *, within: str = "body") -> None:
    """Click the visible link called `name` (exactly), inside `within` (e.g. the project navigation)."""
    page.locator(within).get_by_role("link", name=name, exact=True).first.click()
    page.wait_for_load_state()


def follow_project_nav(page, name: str) -> None:
    follow(page, name, within="nav.project-nav")


def open_in_project(page, name: str, project: str = "Test Project") -> None:
    """Open the project's page called `name`: through the project navigation, reaching the project first by its
    link in the top bar when the current page is outside it."""
    if page.locator("nav.project-nav").count() == 0:
        follow(page, project, within="header.topbar nav")
    follow_project_nav(page, name)


def log_in(page, url: str, username: str, password: str = PASSWORD) -> None:
    """Open the home page at `url` (the only typed URL), log in through the form, land at home."""
    page.goto(f"{url}/")
    page.wait_for_url("**/login/**")
    type_into(page, "input[name=username]", username)
    type_into(page, "input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


def person(browser, live_server, username: str, password: str | None = None, *, project: str | None = None, **args):
    """A person at their own browser (a 1366 x 900 window unless `args` say otherwise): logged in, with the demo
    password `demo-USERNAME` unless given one, then on `project`'s page when one is named."""
    context = browser.new_context(**{"viewport": {"width": 1366, "height": 900}, **args})
    context.set_default_timeout(20000)
    page = context.new_page()
    log_in(page, live_server.url, username, password or f"demo-{username}")
    if project:
        follow(page, project, within="main")
    return page


@pytest.fixture
def login(live_server):
    """login(page, username): log_in on the live server."""
    return lambda page, username, password=PASSWORD: log_in(page, live_server.url, username, password)


@pytest.fixture
def page(browser, browser_context_args):
    """A fresh page in its own browser context.

    Defined here because pytest-playwright's `page` goes through a fixture named `context`, which
    tests/conftest.py uses for a curation Context.
    """
    browser_context = browser.new_context(**browser_context_args)
    browser_context.set_default_timeout(15000)
    new_page = browser_context.new_page()
    # Every page a test visits must pass the Content-Security-Policy: Chromium reports each refusal on the console.
    violations: list[str] = []
    new_page.on(
        "console",
        lambda message: violations.append(f"{new_page.url}: {message.text}")
        if "Content Security Policy" in message.text
        else None,
    )
    yield new_page
    browser_context.close()
    assert not violations, "Content-Security-Policy violations:\n" + "\n".join(violations)
