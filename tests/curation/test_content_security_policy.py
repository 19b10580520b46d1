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
def test_the_browsable_apis_code_colours_carry_the_responses_nonce(client, personas, project):
    """DRF's browsable API writes its code colours in an inline <style>: it runs with this response's nonce."""
    client.force_login(personas["manager"])
    response = client.get(f"/api/projects/{project.slug}/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    page, policy = response.content.decode(), _policy(response)
    styles = re.findall(r"<style([^>]*)>", page)
    assert styles, "the browsable API page has its code colours"
    nonces = {f"'nonce-{n}'" for n in re.findall(r'nonce="([^"]+)"', "".join(styles))}
    assert len(nonces) == 1 and all("nonce=" in attrs for attrs in styles)
    assert policy["style-src"] == ["'self'", *nonces]
    assert policy["script-src"] == ["'self'"]
