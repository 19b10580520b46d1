"""The dashboard stays flat as a project grows: figures reused until an instance changes, windows read by day."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from annotate.dashboard import figures as dashboard
from annotate.dashboard.services import pay_settings_set
from annotate.instances.services import instance_discard
from annotate.review import services as review
from curation.models import Instance, TransitionEvent
from tests.annotate.review.helpers import submit, to_round2
from tests.factories import BatchFactory


def drafted_count(data) -> int:
    return data["totals"]["counts"]["drafted"]


def test_second_dashboard_reuses_the_figures_in_a_few_queries(personas, project, drafts, django_assert_max_num_queries):
    manager = personas["manager"]
    first = dashboard.dashboard_data(user=manager, project=project)
    # The role, the pay settings and the project's latest change: nothing that reads the project's history.
    with django_assert_max_num_queries(4):
        again = dashboard.dashboard_data(user=manager, project=project)
    assert again == first


def test_a_changed_instance_shows_on_the_next_dashboard(personas, project, drafts):
    manager = personas["manager"]
    before = drafted_count(dashboard.dashboard_data(user=manager, project=project))
    instance_discard(instance_id=drafts[0].pk, actor=manager, expected_version=drafts[0].version, reason="dup")
    assert drafted_count(dashboard.dashboard_data(user=manager, project=project)) == before - 1


def test_a_saved_pay_rate_shows_at_once(personas, project, drafts):
    manager = personas["manager"]
    dashboard.dashboard_data(user=manager, project=project)
    pay_settings_set(project=project, actor=manager, pay_per_instance=Decimal("2.50"), currency="EUR")
    assert dashboard.dashboard_data(user=manager, project=project)["pay"]["rate"] == Decimal("2.50")


def test_figures_cache_off_computes_every_time(personas, project, drafts, settings, django_assert_max_num_queries):
    settings.TATCURATE_FIGURES_CACHE_S = 0
    manager = personas["manager"]
    dashboard.dashboard_data(user=manager, project=project)
    with pytest.raises(pytest.fail.Exception):
        with django_assert_max_num_queries(4):
            dashboard.dashboard_data(user=manager, project=project)


def test_throughput_counts_first_submissions_inside_the_window_only(personas, project, drafts):
    """A submission 60 days ago is outside the 30 days; an instance first submitted then and again today is not a
    first submission today; one first submitted today is."""
    old, new = drafts[0], drafts[1]
    submit(project, personas["annotator"], old)
    TransitionEvent.objects.filter(instance=old).update(created_at=timezone.now() - timedelta(days=60))
    Instance.objects.filter(pk=old.pk).update(status="in_refinement", author=personas["annotator"])
    TransitionEvent.objects.create(instance=old, from_status="in_refinement", to_status="submitted", version=9)
    submit(project, personas["annotator2"], new)
    rows = dashboard.throughput(project)
    assert sum(row["submitted"] for row in rows) == 1
    assert rows[-1]["submitted"] == 1


def test_drafts_cost_is_reused_until_an_instance_changes(personas, project, drafts, django_assert_max_num_queries):
    from annotate.dashboard.draft_costs import draft_costs_of

    manager = personas["manager"]
    first = draft_costs_of(user=manager, project=project)
    # The role and the project's latest change: no revision is read again.
    with django_assert_max_num_queries(2):
        assert draft_costs_of(user=manager, project=project) == first
    submit(project, personas["annotator"], drafts[0])
    assert draft_costs_of(user=manager, project=project) != first


def validate(project, people, instance: Instance) -> None:
    approved = to_round2(project, people, instance)
    claimed = review.round2_claim(instance_id=approved.pk, user=people["annotator2"])
    review.round2_confirm(instance_id=claimed.pk, user=people["annotator2"], expected_version=claimed.version)


def pay_csv(client, project) -> list[dict[str, str]]:
    import csv
    import io

    response = client.get(f"/api/projects/{project.slug}/dashboard/csv/?table=pay")
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_pay_csv_is_reused_until_an_instance_changes_and_lists_every_annotator_paid(
    personas, project, drafts, api_client_for, django_assert_max_num_queries
):
    manager = api_client_for(personas["manager"])
    validate(project, personas, drafts[0])
    first = pay_csv(manager, project)
    assert [(row["user"], row["validated"]) for row in first] == [("annotator", "1")]
    with django_assert_max_num_queries(7):  # who asks, their role, the rate, the latest change: no event is read
        assert pay_csv(manager, project) == first
    validate(project, personas, drafts[1])
    assert [(row["user"], row["validated"]) for row in pay_csv(manager, project)] == [("annotator", "2")]


def dashboard_batch_rows(html: str) -> list[str]:
    import re

    table = html.split('id="batch-table"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-batch="([^"]+)"', table)


def test_the_dashboard_shows_a_page_of_batches_like_the_batches_page(personas, project, client, make_instance):
    batches = [
        BatchFactory(project=project, name=f"Wave {n:03d}", order=n) for n in range(dashboard.PROGRESS_PER_PAGE + 2)
    ]
    make_instance(question="In no batch?")
    client.force_login(personas["manager"])
    first = client.get(f"/p/{project.slug}/dashboard/", {"start": "2026-01-01"}).content.decode()
    assert dashboard_batch_rows(first) == [b.name for b in batches[: dashboard.PROGRESS_PER_PAGE]]
    assert 'id="progress-pager"' in first and 'href="?start=2026-01-01&amp;page=2"' in first
    second = client.get(f"/p/{project.slug}/dashboard/", {"page": 2}).content.decode()
    assert dashboard_batch_rows(second) == [b.name for b in batches[dashboard.PROGRESS_PER_PAGE :]] + ["(no batch)"]
    # The API and the CSV keep every batch.
    assert len(dashboard.csv_rows(user=personas["manager"], project=project, table="batches")) == len(batches) + 1


def drift_person(user: str, first_week, weeks: int, markers: list[int]) -> dict:
    return {
        "user": user,
        "rows": [{"week": first_week + timedelta(weeks=n), "n": {}} for n in range(weeks)],
        "markers": [{"index": index, "text": f"guidelines v{index}"} for index in markers],
    }


def test_drift_window_keeps_the_last_weeks_and_leads_to_earlier_ones():
    from datetime import date

    from annotate.quality.drift import drift_window

    monday = date(2026, 1, 5)
    people = [drift_person("old", monday, 40, [0, 30]), drift_person("gone", monday, 5, [])]
    recent = drift_window(people, weeks=26)
    assert [p["user"] for p in recent["people"]] == ["old"]  # nothing of "gone" in the last 26 weeks
    (old,) = recent["people"]
    assert len(old["rows"]) == 26 and old["rows"][-1]["week"] == monday + timedelta(weeks=39)
    assert old["markers"] == [{"index": 30 - 14, "text": "guidelines v30"}]
    assert recent["earlier"] == monday + timedelta(weeks=13) and recent["later"] is None
    earlier = drift_window(people, last_week=recent["earlier"], weeks=26)
    assert [len(p["rows"]) for p in earlier["people"]] == [14, 5] and earlier["earlier"] is None
    assert earlier["later"] == monday + timedelta(weeks=39)
    whole = drift_window(people, weeks=None)
    assert [len(p["rows"]) for p in whole["people"]] == [40, 5] and whole["first"] == monday


def test_the_dashboard_offers_the_whole_drift_history(personas, project, drafts, client):
    from tests.annotate.review.helpers import to_round2

    to_round2(project, personas)
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'id="drift-pager"' in page and 'href="?drift_weeks=all#drift">Whole history</a>' in page
    whole = client.get(f"/p/{project.slug}/dashboard/", {"drift_weeks": "all"}).content.decode()
    assert 'data-user="annotator"' in whole and 'href="?#drift">The last 26 weeks</a>' in whole


def test_the_dashboard_draws_a_page_of_annotators_drift(personas, project, client, monkeypatch, settings):
    """A chart per annotator, a page of them at once (the CSV keeps everyone); the pager says which and leads on."""
    import re

    from annotate.dashboard import views
    from annotate.quality.drift import DRIFT_PEOPLE_PER_PAGE, SERIES, week_of

    settings.TATCURATE_FIGURES_CACHE_S = 0
    first_week = week_of(timezone.localdate()) - timedelta(weeks=3)
    people = [drift_person(f"person-{n:02d}", first_week, 4, []) for n in range(DRIFT_PEOPLE_PER_PAGE + 2)]
    for person in people:
        for row in person["rows"]:
            row.update({name: 0.5 for name in SERIES})
    monkeypatch.setattr(views, "drift_of", lambda **_: people)
    client.force_login(personas["manager"])

    def drawn(html: str) -> list[str]:
        return re.findall(r'<figure class="drift" data-user="([^"]+)"', html)

    first = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert drawn(first) == [person["user"] for person in people[:DRIFT_PEOPLE_PER_PAGE]]
    shown = f"Annotators 1–{DRIFT_PEOPLE_PER_PAGE} of {len(people)}"
    assert shown in first and 'href="?drift_page=2#drift">Next</a>' in first
    second = client.get(f"/p/{project.slug}/dashboard/", {"drift_page": 2}).content.decode()
    assert drawn(second) == [person["user"] for person in people[DRIFT_PEOPLE_PER_PAGE:]]
    assert f"Annotators {DRIFT_PEOPLE_PER_PAGE + 1}–{len(people)} of {len(people)}" in second
    assert 'href="?drift_page=1#drift">Previous</a>' in second and ">Next</a>" not in second.split('id="drift"')[1]


def dashboard_queries(client, url: str) -> int:
    """The queries of the dashboard once its figures are cached (the first visit after a change fills them)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url)
    with CaptureQueriesContext(connection) as sent:
        assert client.get(url).status_code == 200
    return len(sent)


def test_the_dashboard_costs_the_same_queries_with_3_and_30_batches(personas, project, client, make_instance):
    from curation.models import Batch

    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/dashboard/"

    def grow_to(batches: int) -> None:
        for n in range(Batch.objects.filter(project=project).count(), batches):
            make_instance(question=f"In batch {n}?", batch=BatchFactory(project=project, name=f"B{n}", order=n))

    grow_to(3)
    few = dashboard_queries(client, url)
    grow_to(30)
    assert dashboard_queries(client, url) == few


def test_the_drift_window_drawn_is_cached_besides_the_history_it_is_cut_from(
    personas, project, client, monkeypatch, make_instance
):
    """A view of the default window reads that window back, not the whole history; another window is cut from the
    cached history (drift_of runs once for all of them until an instance changes)."""
    from annotate.dashboard import views
    from annotate.quality.drift import SERIES, week_of

    first_week = week_of(timezone.localdate()) - timedelta(weeks=39)
    people = [drift_person("long", first_week, 40, [])]
    for row in people[0]["rows"]:
        row.update({name: 0.5 for name in SERIES})
    computed: list[int] = []
    monkeypatch.setattr(views, "drift_of", lambda **_: computed.append(1) or people)
    cut: list[object] = []
    window = views.drift_window
    monkeypatch.setattr(
        views, "drift_window", lambda history, **how: cut.append(how["weeks"]) or window(history, **how)
    )
    make_instance(question="Something to stamp the figures with?")
    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/dashboard/"
    first = client.get(url).content.decode()
    again = client.get(url).content.decode()
    whole = client.get(url, {"drift_weeks": "all"}).content.decode()
    assert computed == [1]  # the history once …
    assert cut == [26, None]  # … and each window once: the second view read its window back whole
    assert 'data-user="long"' in first and first.count("<figure") == again.count("<figure")
    assert 'href="?#drift">The last 26 weeks</a>' in whole
