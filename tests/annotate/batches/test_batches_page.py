"""The batches page of a new project: its empty list leads to the form that makes the first batch."""

from __future__ import annotations

from tests.support.clients import logged_in


def test_an_empty_batch_list_leads_to_the_new_batch_form(project, personas):
    html = logged_in("manager").get(f"/p/{project.slug}/batches/").content.decode()
    assert '<a href="#new-batch">New batch</a>' in html and '<h2 id="new-batch">New batch</h2>' in html


def test_a_context_without_a_batch_is_offered_by_its_kind_number_and_paper(project, personas, context):
    """The walk saw "Short (a pa… · calamancy #5": the kind's long label cut mid-word."""
    html = logged_in("manager").get(f"/p/{project.slug}/batches/").content.decode()
    assert f'value="{context.pk}"> Short context #{context.pk} · A small paper</label>' in html
    assert "(a pa" not in html
