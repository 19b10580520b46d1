"""The batches page of a new project: its empty list leads to the form that makes the first batch."""

from __future__ import annotations

from tests.support.clients import logged_in


def test_an_empty_batch_list_leads_to_the_new_batch_form(project, personas):
    html = logged_in("manager").get(f"/p/{project.slug}/batches/").content.decode()
    assert '<a href="#new-batch">New batch</a>' in html and '<h2 id="new-batch">New batch</h2>' in html
