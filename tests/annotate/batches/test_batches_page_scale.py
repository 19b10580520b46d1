"""The batch page stays bounded as a project grows: progress rows a page at a time, papers to fill from a page at a
time, and the same queries however many batches and papers there are."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.dashboard import figures as dashboard_figures
from annotate.review import selectors as review_selectors
from curation.models import Batch, Context, Paper
from tests.factories import BatchFactory, ShortContextFactory


def add_batches(project, count: int, start: int = 0) -> list[Batch]:
    return [BatchFactory(project=project, name=f"Wave {n:03d}", order=n) for n in range(start, start + count)]


def add_papers(project, count: int, start: int = 0) -> list[Paper]:
    """Papers of one paragraph and its short context, in no batch."""
    return [
        ShortContextFactory(
            paper__project=project, paper__title=f"Free paper {n:03d}", paragraph__text="A paragraph."
        ).paper
        for n in range(start, start + count)
    ]


def progress_rows(html: str) -> list[str]:
    table = html.split('id="batch-progress"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-batch="([^"]+)"', table)


def fill_papers(html: str) -> list[int]:
    form = html.split('id="fill-from-papers"', 1)[1]
    return [int(pk) for pk in re.findall(r'name="paper_ids" value="(\d+)"', form)]


@pytest.fixture
def manager_client(client, personas):
    client.force_login(personas["manager"])
    return client


def test_progress_shows_a_page_of_batches_with_page_controls(manager_client, project, make_instance):
    batches = add_batches(project, dashboard_figures.PROGRESS_PER_PAGE + 3)
    make_instance(question="In no batch?")
    first = manager_client.get(f"/p/{project.slug}/batches/").content.decode()
    assert progress_rows(first) == [b.name for b in batches[: dashboard_figures.PROGRESS_PER_PAGE]]
    assert 'id="progress-pager"' in first and 'href="?page=2"' in first
    assert f"Batches 1–{dashboard_figures.PROGRESS_PER_PAGE} of {len(batches)}" in first
    second = manager_client.get(f"/p/{project.slug}/batches/", {"page": 2}).content.decode()
    # The rest of the batches, and the instances in no batch after them, on the last page.
    assert progress_rows(second) == [b.name for b in batches[dashboard_figures.PROGRESS_PER_PAGE :]] + ["(no batch)"]
    assert 'href="?page=1"' in second and 'href="?page=3"' not in second
    # An announcement may still be about any batch, whichever page of progress is shown.
    for html in (first, second):
        assert all(f'<option value="{b.pk}">{b.name}</option>' in html for b in batches)


def test_overdue_batches_come_first_across_pages(manager_client, project):
    from datetime import timedelta

    from django.utils import timezone

    batches = add_batches(project, dashboard_figures.PROGRESS_PER_PAGE + 2)
    late = batches[-1]
    Batch.objects.filter(pk=late.pk).update(state="open", deadline_at=timezone.now() - timedelta(days=1))
    first = manager_client.get(f"/p/{project.slug}/batches/").content.decode()
    assert progress_rows(first)[0] == late.name


def test_fill_from_papers_lists_a_page_of_papers_with_next_and_previous(manager_client, project, personas, monkeypatch):
    monkeypatch.setattr(review_selectors, "FILL_PAPERS_PER_PAGE", 3)
    papers = add_papers(project, 4)
    first = manager_client.get(f"/p/{project.slug}/batches/").content.decode()
    assert fill_papers(first) == [p.pk for p in papers[:3]]
    assert "(1–3, more on the next page)" in first and 'href="?papers=2#fill-from-papers"' in first
    second = manager_client.get(f"/p/{project.slug}/batches/", {"papers": 2}).content.decode()
    assert fill_papers(second) == [papers[3].pk]
    assert "(4–4)" in second and 'href="?papers=1#fill-from-papers"' in second and "Next papers" not in second
    # A paper whose short contexts are all in a batch is no longer offered.
    Context.objects.filter(paper=papers[0]).update(batch=add_batches(project, 1)[0])
    page, more = review_selectors.papers_with_unbatched_contexts(user=personas["manager"], project=project, limit=3)
    assert [p.pk for p in page] == [p.pk for p in papers[1:]] and not more
    assert [p.free_contexts for p in page] == [1, 1, 1]


def test_fill_papers_are_for_staff_only(project, personas):
    add_papers(project, 2)
    page, more = review_selectors.papers_with_unbatched_contexts(user=personas["annotator"], project=project)
    assert page == [] and not more


def test_the_batch_page_sends_the_same_queries_at_two_sizes(manager_client, project, make_instance):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            response = manager_client.get(f"/p/{project.slug}/batches/")
        assert response.status_code == 200
        return len(captured)

    add_batches(project, 3)
    add_papers(project, 2)
    make_instance(question="In no batch?")
    small = queries()
    add_batches(project, 4 * dashboard_figures.PROGRESS_PER_PAGE, start=3)
    add_papers(project, 3 * review_selectors.FILL_PAPERS_PER_PAGE, start=2)
    assert queries() == small


def test_fill_from_papers_on_one_page_says_how_many_papers_not_a_range(manager_client, project, personas):
    """One page of papers needs no "1–2": the legend counts them."""
    add_papers(project, 2)
    page = manager_client.get(f"/p/{project.slug}/batches/").content.decode()
    assert "<legend>Papers with short contexts left (2)</legend>" in page and "(1–2)" not in page
