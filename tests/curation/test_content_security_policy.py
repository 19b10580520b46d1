"""Every response carries a Content-Security-Policy that allows no inline script, and no page needs one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.IGNORECASE)


def _policy(response) -> dict[str, list[str]]:
    header = response.headers["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/login/", "/api/docs/", "/healthz", "/no/such/page/"])
def test_every_response_has_a_policy_without_inline_script(client, path):
    policy = _policy(client.get(path))
    assert policy["script-src"] == ["'self'"]
    # Only the API docs let Swagger UI's script add <style> elements.
    assert policy["style-src"] == (["'self'", "'unsafe-inline'"] if path == "/api/docs/" else ["'self'"])
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]


def test_no_template_has_an_inline_script():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "templates").rglob("*.html")
        if INLINE_SCRIPT.search(path.read_text())
    ]
    assert offenders == []


@pytest.mark.django_db
def test_the_api_docs_page_loads_its_script_from_a_url(client):
    page = client.get("/api/docs/").content.decode()
    assert not INLINE_SCRIPT.search(page)
    assert re.search(r'<script src="[^"]+"', page)


@pytest.mark.django_db
def test_the_browsable_api_has_its_code_colours_from_a_style_sheet_and_a_way_back(client, personas, project):
    """DRF's browsable API writes its code colours in an inline <style>, which the policy blocks: they come from a
    style sheet of this site instead, and the page links back to the app and the API docs."""
    client.force_login(personas["manager"])
    response = client.get(f"/api/projects/{project.slug}/", HTTP_ACCEPT="text/html")
    page = response.content.decode()
    assert response.status_code == 200 and _policy(response)["style-src"] == ["'self'"]
    assert "<style" not in page and not INLINE_SCRIPT.search(page)
    sheet = re.search(r'<link rel="stylesheet" type="text/css" href="(/api/code-style\.css)"', page)
    assert sheet, "the page links its code colours"
    colours = client.get(sheet.group(1))
    assert colours["Content-Type"].startswith("text/css") and b".highlight" in colours.content
    assert 'href="/"' in page and 'href="/api/docs/"' in page
    assert client.get("/api/").url == "/api/docs/"  # the API's root leads to its documentation
