"""Navigation: every page a role may use in a project is one click away on every project page, and each works."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest

from tests.support.clients import logged_in

SLUG = "test-project"
EVERYONE = {"", "guidelines/", "releases/", "instances/", "work-export/"}
QUALIFIED = {"work/", "review/"}  # round two is on the review page
STAFF = {"discussions/", "papers/"}
MANAGER = {
    "batches/",
    "drafting/",
    "endpoints/",
    "drafting/prompts/",
    "dashboard/",
    "qualification/manage/",
    "imports/",
    "members/",
    "drafts/import/",
    "webhooks/",
}
EXPECTED = {
    "annotator": EVERYONE | QUALIFIED,
    "novice": EVERYONE | {"qualification/"},
    "verifier": EVERYONE | STAFF | {"review/"},
    "manager": EVERYONE | STAFF | MANAGER,
}


def project_nav_links(html: str) -> set[str]:
    nav = re.search(r'<nav class="project-nav" aria-label="Project">(.*?)</nav>', html, re.S)
    assert nav, "no project navigation on the page"
    prefix = f"/p/{SLUG}/"
    return {href.removeprefix(prefix) for href in re.findall(r'href="([^"]+)"', nav.group(1))}


@pytest.mark.parametrize("username", sorted(EXPECTED))
def test_project_navigation_links_every_page_of_the_role_and_each_opens(personas, make_instance, username):
    make_instance()
    client = logged_in(username)
    links = project_nav_links(client.get(f"/p/{SLUG}/").content.decode())
    assert links == EXPECTED[username]
    for link in links:
        response = client.get(f"/p/{SLUG}/{link}")
        assert response.status_code == 200, link
        # The same navigation is on every project page, so no page is a dead end.
        assert project_nav_links(response.content.decode()) == links, link


@pytest.mark.parametrize("username", sorted(EXPECTED))
def test_following_every_link_of_the_project_reaches_no_broken_page(personas, make_instance, username):
    make_instance()
    client = logged_in(username)
    seen: set[str] = set()
    todo = [f"/p/{SLUG}/"]
    while todo and len(seen) < 80:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code in (200, 302), f"{url} answered {response.status_code} for {username}"
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        for href in re.findall(r'<a [^>]*href="([^"#]+)', response.content.decode()):
            path = urlparse(href).path
            if path.startswith(f"/p/{SLUG}/") and not path.endswith(".csv") and path not in seen:
                todo.append(path)
    assert len(seen) >= len(EXPECTED[username])


def test_the_empty_project_page_links_each_step_it_names(personas):
    html = logged_in("manager").get(f"/p/{SLUG}/").content.decode()
    empty = html[html.index('<p class="empty">No instances yet.') :]
    empty = empty[: empty.index("</p>")]
    assert f'href="/p/{SLUG}/papers/upload/"' in empty
    assert f'href="/p/{SLUG}/batches/"' in empty
    assert f'href="/p/{SLUG}/drafting/"' in empty


def test_every_page_links_the_favicon_and_it_is_served(personas):
    client = logged_in("annotator")
    assert '<link rel="icon" href="/static/favicon.svg"' in client.get("/").content.decode()
    response = client.get("/static/favicon.svg")
    assert response.status_code == 200
    assert b"<svg" in b"".join(response.streaming_content if response.streaming else [response.content])
