"""Chromium enforces the policy: an injected inline script does not run, and the console reports it."""

from __future__ import annotations


def test_an_injected_inline_script_is_refused_and_reported(browser, live_server):
    context = browser.new_context()
    page = context.new_page()
    reported: list[str] = []
    page.on("console", lambda message: reported.append(message.text))
    try:
        page.goto(f"{live_server.url}/login/")
        try:
            page.add_script_tag(content="window.injected = true;")
        except Exception:  # Playwright may itself notice the refusal
            pass
        assert page.evaluate("window.injected === undefined")
        assert any("Content Security Policy" in text for text in reported)  # what the page fixture listens for
    finally:
        context.close()


def test_the_api_docs_render_under_the_policy(page, live_server, login, personas):
    # The page fixture fails the test on any CSP violation the console reports.
    login(page, "manager")
    page.get_by_role("link", name="API", exact=True).first.click()
    page.wait_for_selector(".swagger-ui .info", timeout=20000)
    # Operations render tag by tag after the info block; wait for the first tags' operations, then count them.
    page.locator(".swagger-ui .opblock").nth(4).wait_for(state="attached", timeout=20000)
    assert page.locator(".swagger-ui .opblock").count() >= 5
