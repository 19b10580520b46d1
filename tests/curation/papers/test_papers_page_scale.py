"""The papers page stays flat as a project grows: a page of papers with their counts, the same queries at any size."""

from __future__ import annotations

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from curation.models import Context, Paper, Paragraph, Table
from curation.papers.selectors import PAPERS_PER_PAGE
from tests.conftest import PASSWORD
from tests.factories import ContextFactory, PaperFactory


def add_papers(project, count: int) -> None:
    papers = Paper.objects.bulk_create([Paper(project=project, title=f"Paper {i:04d}") for i in range(count)])
    Table.objects.bulk_create([Table(paper=p, order=t, cells=[["a"]]) for p in papers for t in range(2)])
    paragraphs = Paragraph.objects.bulk_create([Paragraph(paper=p, order=0, text="x") for p in papers])
    Context.objects.bulk_create(
        [Context(project=project, paper=g.paper, kind="short", paragraph=g) for g in paragraphs]
    )


def papers_page(client: Client, query: str = "") -> tuple[str, int]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/p/test-project/papers/{query}")
    assert response.status_code == 200
    return response.content.decode(), len(captured)


def test_papers_page_shows_one_page_with_counts_in_the_same_queries_at_any_size(project, personas):
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    add_papers(project, 3)
    _, few = papers_page(client)
    add_papers(project, 2 * PAPERS_PER_PAGE)
    html, many = papers_page(client)
    assert many <= few + 1  # the page count is the one query a small project's page does not need
    assert html.count('<tr>\n    <td><a href="/p/test-project/papers/') == PAPERS_PER_PAGE
    assert f"Papers 1–{PAPERS_PER_PAGE} of {2 * PAPERS_PER_PAGE + 3}" in html
    assert "<td>2</td><td>1</td><td>1</td>" in html  # tables, paragraphs, contexts of a paper on the page
    last, _ = papers_page(client, "?page=3")
    assert last.count('<tr>\n    <td><a href="/p/test-project/papers/') == 3 and "Previous" in last


def test_the_unassigned_count_stops_at_a_thousand_and_says_more(client, personas, project, monkeypatch):
    from curation import pagination

    monkeypatch.setattr(pagination, "COUNT_UP_TO", 3)
    ContextFactory.create_batch(5, paper=PaperFactory(project=project, title="Many contexts"))
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/papers/").content.decode()
    assert '<p id="unassigned-count">More than 3 contexts without a reasoning type.' in page
    monkeypatch.setattr(pagination, "COUNT_UP_TO", 10)
    page = client.get(f"/p/{project.slug}/papers/").content.decode()
    assert '<p id="unassigned-count">5 contexts without a reasoning type.' in page


def test_without_papers_the_page_offers_no_reasoning_type_assignment(client, personas, project):
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/papers/").content.decode()
    assert "No papers yet." in page and 'id="assign-panel"' not in page and "Assign reasoning types" not in page
    PaperFactory(project=project, title="First paper")
    assert 'id="assign-panel"' in client.get(f"/p/{project.slug}/papers/").content.decode()
