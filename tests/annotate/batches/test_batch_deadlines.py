"""Batch deadlines: set by managers (page, API, command), refused when in the past or naive, shown with a countdown
in the work queue and on the dashboard and batches page, overdue batches marked and listed first."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from curation.batches.services import batch_create, batch_deadline_set, batch_open
from curation.deadlines import deadline_state, duration_words
from curation.errors import InvalidInput, NotPermitted
from curation.models import Batch
from tests.support.clients import logged_in

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


def test_the_countdown_words_and_the_overdue_rule():
    now = timezone.now()
    batch = Batch(name="B", state="open", deadline_at=now + timedelta(days=2, hours=3, minutes=5))
    assert deadline_state(batch, now=now).label == "due in 2 days 3 h"
    batch.deadline_at = now - timedelta(hours=5)
    late = deadline_state(batch, now=now)
    assert late.is_overdue and late.label == "overdue by 5 h"
    batch.settled_at = now
    assert not deadline_state(batch, now=now).is_overdue  # a settled batch is never overdue
    assert deadline_state(Batch(name="none"), now=now).label == ""
    assert duration_words(30) == "less than a minute" and duration_words(3700) == "1 h 1 min"


def test_only_managers_set_a_deadline_and_it_must_be_in_the_future(project, personas, open_batch):
    future = timezone.now() + timedelta(days=3)
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            batch_deadline_set(batch_id=open_batch.pk, actor=personas[name], deadline_at=future)
    with pytest.raises(InvalidInput, match="in the future"):
        batch_deadline_set(batch_id=open_batch.pk, actor=personas["manager"], deadline_at=timezone.now())
    with pytest.raises(InvalidInput, match="time zone"):
        batch_deadline_set(batch_id=open_batch.pk, actor=personas["manager"], deadline_at=future.replace(tzinfo=None))
    open_batch.refresh_from_db()
    assert open_batch.deadline_at is None
    batch_deadline_set(batch_id=open_batch.pk, actor=personas["manager"], deadline_at=future)
    open_batch.refresh_from_db()
    assert open_batch.deadline_at == future
    batch_deadline_set(batch_id=open_batch.pk, actor=personas["manager"], deadline_at=None)
    open_batch.refresh_from_db()
    assert open_batch.deadline_at is None


@pytest.mark.parametrize("persona, expected", zip(ROLES, (403, 403, 200, 404, 401), strict=True), ids=ROLES)
def test_deadline_api_per_role(project, personas, open_batch, api_client_for, persona, expected):
    client = api_client_for(None if persona == "anonymous" else personas[persona])
    deadline = (timezone.now() + timedelta(days=1)).isoformat()
    response = client.post(f"/api/batches/{open_batch.pk}/deadline/", {"deadline_at": deadline}, format="json")
    assert response.status_code == expected, response.content
    open_batch.refresh_from_db()
    assert (open_batch.deadline_at is not None) == (expected == 200)
    if expected == 200:
        assert response.json()["is_overdue"] is False and response.json()["deadline_at"]


@pytest.mark.parametrize(
    "body", [{"deadline_at": "tomorrow"}, {}, {"deadline_at": "2001-01-01T00:00Z"}, {"deadline_at": "2999-01-15T17:00"}]
)
def test_a_bad_deadline_is_a_400_naming_the_field(project, personas, open_batch, api_client_for, body):
    response = api_client_for(personas["manager"]).post(f"/api/batches/{open_batch.pk}/deadline/", body, format="json")
    assert response.status_code == 400 and "deadline_at" in json.dumps(response.json())
    open_batch.refresh_from_db()
    assert open_batch.deadline_at is None


def _overdue(batch: Batch, hours: int = 2) -> None:
    Batch.objects.filter(pk=batch.pk).update(deadline_at=timezone.now() - timedelta(hours=hours))


def test_the_queue_shows_open_batches_deadlines_overdue_first(project, personas, open_batch, drafts):
    later = batch_open(batch_id=batch_create(project=project, actor=None, name="B2").pk, actor=None)
    batch_deadline_set(batch_id=later.pk, actor=None, deadline_at=timezone.now() + timedelta(days=2, hours=1))
    _overdue(open_batch)
    page = logged_in("annotator").get(f"/p/{project.slug}/work/").content.decode()
    section = page.split('id="deadlines"', 1)[1].split("</section>", 1)[0]
    assert section.index('data-batch="B1"') < section.index('data-batch="B2"')
    assert "overdue by 2 h" in section and "due in 2 days" in section and 'data-overdue="true"' in section
    # The batch's own name, not "Batch B1"; the deadline names its time zone.
    assert "<strong>B1</strong>:" in section and "Batch <strong>" not in section
    when = deadline_state(Batch.objects.get(pk=later.pk)).when
    assert when in section and when.endswith(" UTC")


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin"])
def test_a_deadline_is_worded_in_the_configured_time_zone(settings, zone):
    settings.TIME_ZONE = zone
    at = timezone.make_aware(timezone.datetime(2026, 7, 1, 12, 30), timezone.get_fixed_timezone(0))
    expected = {"UTC": "2026-07-01 12:30 UTC", "Europe/Berlin": "2026-07-01 14:30 CEST"}[zone]
    assert deadline_state(Batch(name="B", state="open", deadline_at=at)).when == expected


def test_the_dashboard_and_batches_page_mark_overdue_batches_and_list_them_first(project, personas, drafts):
    first = batch_create(project=project, actor=None, name="Alpha")
    second = batch_create(project=project, actor=None, name="Beta")
    _overdue(second, hours=30)
    manager = logged_in("manager")
    for url in (f"/p/{project.slug}/dashboard/", f"/p/{project.slug}/batches/"):
        page = manager.get(url).content.decode()
        assert page.index('data-batch="Beta"') < page.index('data-batch="Alpha"'), url
        assert "overdue by 1 day 6 h" in page and '<span class="badge">overdue</span>' in page
    assert first  # Alpha has no deadline: a dash, no countdown


def test_the_batches_page_sets_a_deadline(project, personas, open_batch):
    manager = logged_in("manager")
    when = (timezone.localtime() + timedelta(days=4)).strftime("%Y-%m-%dT%H:%M")
    manager.post(f"/p/{project.slug}/batches/", {"action": "deadline", "batch": open_batch.pk, "deadline_at": when})
    open_batch.refresh_from_db()
    assert timezone.localtime(open_batch.deadline_at).strftime("%Y-%m-%dT%H:%M") == when
    page = manager.get(f"/p/{project.slug}/batches/").content.decode()
    assert "due in 3 days 23 h" in page or "due in 4 days" in page
    refused = manager.post(
        f"/p/{project.slug}/batches/",
        {"action": "deadline", "batch": open_batch.pk, "deadline_at": "2001-01-01T10:00"},
        follow=True,
    ).content.decode()
    assert "must be in the future" in refused
    assert (
        logged_in("annotator")
        .post(f"/p/{project.slug}/batches/", {"action": "deadline", "batch": open_batch.pk, "deadline_at": when})
        .status_code
        == 403
    )


def test_the_command_sets_and_clears_a_deadline_with_json(project, open_batch):
    out = StringIO()
    when = (timezone.now() + timedelta(days=1, hours=2)).replace(microsecond=0)
    call_command(
        "batch_deadline", "--project", project.slug, "--batch", "B1", "--deadline", when.isoformat(), "--json",
        stdout=out,
    )  # fmt: skip
    result = json.loads(out.getvalue())
    assert result["batch"] == open_batch.pk and result["label"].startswith("due in 1 day")
    open_batch.refresh_from_db()
    assert open_batch.deadline_at == when
    call_command("batch_deadline", "--project", project.slug, "--batch", str(open_batch.pk), "--clear", stdout=out)
    open_batch.refresh_from_db()
    assert open_batch.deadline_at is None


def test_a_zoneless_deadline_is_refused_saying_how_to_give_one(project, personas, open_batch, api_client_for):
    response = api_client_for(personas["manager"]).post(
        f"/api/batches/{open_batch.pk}/deadline/", {"deadline_at": "2999-01-15T17:00"}, format="json"
    )
    assert response.status_code == 400 and "has no time zone" in json.dumps(response.json())
    zoned = api_client_for(personas["manager"]).post(
        f"/api/batches/{open_batch.pk}/deadline/", {"deadline_at": "2999-01-15T17:00+01:00"}, format="json"
    )
    assert zoned.status_code == 200
    open_batch.refresh_from_db()
    assert open_batch.deadline_at.isoformat() == "2999-01-15T16:00:00+00:00"
