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
from tests.annotate.review_helpers import submit, to_round2


def drafted_count(data) -> int:
    return sum(batch["counts"]["drafted"] for batch in data["batches"])


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
