"""Chromium enforces the policy: an injected inline script does not run, and the console reports it; the API docs
render every operation of the schema under it."""

from __future__ import annotations

from playwright.sync_api import expect


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


def schema_operations(page, url: str) -> dict[str, int]:
    """How many operations each tag of the served OpenAPI schema has (what the docs page must show)."""
    schema = page.request.get(f"{url}/api/schema/?format=json").json()
    counts: dict[str, int] = {}
    for operations in schema["paths"].values():
        for method, operation in operations.items():
            if method in ("get", "put", "post", "delete", "patch", "head", "options", "trace"):
                tag = (operation.get("tags") or ["default"])[0]
                counts[tag] = counts.get(tag, 0) + 1
    return counts


def test_the_api_docs_render_every_operation_under_the_policy(page, live_server, login, personas):
    """Swagger UI windows a list of 150 rows or more (tags and operations), drawing only what is on screen: with
    every tag open the page once showed 7 of 143 operations, the rest neither in the page nor found by the
    browser's search. Tags start closed (`docExpansion: none`), so every tag is on the page; each opens to show
    all of its operations. The page fixture fails the test on any CSP violation the console reports."""
    login(page, "manager")
    page.get_by_role("link", name="API", exact=True).first.click()
    page.wait_for_selector(".swagger-ui .info", timeout=20000)
    expected = schema_operations(page, live_server.url)
    assert sum(expected.values()) >= 100  # the whole API, not a sample
    tags = page.locator(".swagger-ui .opblock-tag")
    expect(tags).to_have_count(len(expected))
    assert set(tags.evaluate_all("nodes => nodes.map(node => node.dataset.tag)")) == set(expected)
    assert page.locator(".swagger-ui .filter input").count() == 1  # the tag filter box
    shown = 0
    for tag, count in sorted(expected.items()):
        heading = page.locator(f".swagger-ui .opblock-tag[data-tag='{tag}']")
        operations = page.locator(".swagger-ui .opblock")
        expect(operations).to_have_count(0)  # every tag closed
        heading.click()
        expect(operations).to_have_count(count)  # this tag's operations, all of them
        shown += operations.count()
        heading.click()
    assert shown == sum(expected.values())


def test_the_browsable_api_keeps_its_colours_under_the_policy_when_its_forms_redraw_it(
    page, live_server, login, personas
):
    """DRF's OPTIONS button rewrites the page with the response it gets; the code colours of its descriptions come
    from a style sheet, so the redrawn page breaks no rule either (the page fixture fails the test on any CSP
    violation; with an inline <style> and a nonce, the redrawn page carried another response's nonce)."""
    login(page, "manager")
    page.goto(f"{live_server.url}/api/projects/")
    expect(page.get_by_role("heading", name="Project List")).to_be_visible()
    expect(page.locator('link[href="/api/code-style.css"]')).to_have_count(1)
    page.get_by_role("button", name="OPTIONS").click()
    expect(page.locator(".response-info")).to_contain_text('"name": "Project List Api"')  # the OPTIONS answer
    page.get_by_role("link", name="TaT-Curate").click()
    expect(page).to_have_url(f"{live_server.url}/")
