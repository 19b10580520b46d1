"""The batches page of a new project: its empty list leads to the form that makes the first batch."""

from __future__ import annotations

from curation.batches.services import batch_create
from curation.panel.models import Calibration
from tests.support.clients import logged_in


def test_an_empty_batch_list_leads_to_the_new_batch_form(project, personas):
    html = logged_in("manager").get(f"/p/{project.slug}/batches/").content.decode()
    assert '<a href="#new-batch">New batch</a>' in html and '<h2 id="new-batch">New batch</h2>' in html


def test_a_context_without_a_batch_is_offered_by_its_kind_number_and_paper(project, personas, context):
    """The walk saw "Short (a pa… · calamancy #5": the kind's long label cut mid-word."""
    html = logged_in("manager").get(f"/p/{project.slug}/batches/").content.decode()
    assert f'value="{context.pk}"> Short context #{context.pk} · A small paper</label>' in html
    assert "(a pa" not in html


def test_a_batch_that_holds_nothing_yet_says_so_instead_of_0_of_0(project, personas):
    """The walk saw "0 / 0" beside a new team's first batch, and beside its calibration before a worker counted it."""
    batch = batch_create(project=project, actor=None, name="Batch A")
    Calibration.objects.create(project=project, batch=batch)  # asked: no worker has counted its instances yet
    manager = logged_in("manager")
    batches = manager.get(f"/p/{project.slug}/batches/").content.decode()
    dashboard = manager.get(f"/p/{project.slug}/dashboard/").content.decode()
    for html in (batches, dashboard):
        row = html.split('data-batch="Batch A"', 1)[1].split("</tr>", 1)[0]
        assert "no drafts yet" in row and "0 / 0" not in row and "0 of 0" not in row
    calibration = batches.split('class="calibration-state">', 1)[1].split("</td>", 1)[0]
    assert calibration.startswith("Waiting for a worker") and "0 / 0" not in calibration
