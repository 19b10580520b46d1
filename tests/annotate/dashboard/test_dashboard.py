"""Dashboard figures from a scripted history: batch counts, per-person rates, time, pay, and the CSV agreeing."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from annotate.dashboard import figures as dashboard
from annotate.dashboard.services import pay_settings_set
from annotate.qualification.models import QualificationAttempt
from annotate.review import services as review
from annotate.work.models import WorkTime
from curation import charts
from curation.errors import NotPermitted
from curation.models import Instance
from tests.annotate.review.helpers import sent_back, submit, to_round2


@pytest.fixture
def history(personas, project, drafts):
    """i1 validated cleanly; i2 sent back once, then flagged and the flag rejected; i3 held in round one."""
    p = personas
    i1 = to_round2(project, p, drafts[0])
    i1 = review.round2_claim(instance_id=i1.pk, user=p["annotator2"])
    review.round2_confirm(instance_id=i1.pk, user=p["annotator2"], expected_version=i1.version)

    sent_back(project, p, {"field": "", "text": "x"}, drafts[1])
    i2 = to_round2(project, p, drafts[1])
    i2 = review.round2_claim(instance_id=i2.pk, user=p["annotator2"])
    discussion = review.round2_flag(
        instance_id=i2.pk, user=p["annotator2"], expected_version=i2.version, comments=[{"field": "", "text": "y"}]
    )
    review.discussion_resolve(
        discussion_id=discussion.pk,
        user=p["verifier"],
        outcome="rejected",
        expected_version=Instance.objects.get(pk=i2.pk).version,
    )

    i3 = submit(project, p["annotator"], drafts[2])
    review.review_claim(instance_id=i3.pk, user=p["verifier"])

    for instance, seconds in ((drafts[0], 300), (drafts[1], 900), (drafts[2], 600)):
        WorkTime.objects.update_or_create(
            user=p["annotator"], instance=instance, activity="refine", defaults={"active_seconds": seconds}
        )
    now = timezone.now()
    for score in (0.9, 1.0, 0.95):
        QualificationAttempt.objects.create(
            project=project, user=p["annotator"], submitted_at=now, score=score, passed=score >= 0.95
        )
        now += timedelta(seconds=1)
    return {"i1": i1, "i2": i2, "i3": i3}


def by_user(rows):
    return {row["user"]: row for row in rows}


def test_annotator_figures(personas, project, history):
    rows = by_user(dashboard.annotator_stats(project))
    a = rows["annotator"]
    assert (a["refined"], a["validated"]) == (3, 2)
    assert (a["round1_decided"], a["round1_clean"], a["round1_clean_rate"]) == (2, 1, 0.5)
    assert (a["round2_decided"], a["round2_flagged"], a["round2_flag_rate"]) == (2, 1, 0.5)
    assert a["median_active_seconds"] == 600
    assert (a["exam_latest"], a["exam_best"], a["exam_attempts"]) == (0.95, 1.0, 3)
    assert rows["annotator2"]["round2_reviews"] == 2
    assert rows["annotator2"]["refined"] == 0 and rows["annotator2"]["round1_clean_rate"] is None


def test_verifier_figures(personas, project, history):
    rows = by_user(dashboard.verifier_stats(project))
    assert (rows["verifier"]["reviews"], rows["verifier"]["changes_requested"]) == (3, 1)
    assert rows["verifier"]["discussions_resolved"] == 1
    assert rows["verifier2"]["reviews"] == 0


def test_batch_progress_counts_every_state(personas, project, history, drafts):
    (row,) = dashboard.batch_progress(project)
    assert row["counts"]["validated"] == 2
    assert row["counts"]["round1_review"] == 1
    assert row["counts"]["drafted"] == len(drafts) - 3
    assert row["total"] == len(drafts) and not row["is_complete"]
    assert sum(seg["n"] for seg in row["segments"]) == row["total"]
    assert round(sum(seg["width"] for seg in row["segments"]), 6) == 100


def test_throughput_counts_first_submissions_and_validations_today(personas, project, history):
    today = dashboard.throughput(project)[-1]
    assert (today["submitted"], today["validated"]) == (3, 2)  # i2's resubmission is not a second submission


def test_pay_report_uses_the_project_rate(personas, project, history):
    today = timezone.localdate()
    report = dashboard.pay_report(project, start=today, end=today)
    assert report["rows"][0]["user"] == "annotator"
    assert (report["total_instances"], report["total_amount"]) == (2, Decimal("1.00") * 2)
    pay_settings_set(project=project, actor=personas["manager"], pay_per_instance="1.50")
    report = dashboard.pay_report(project, start=today, end=today)
    assert report["total_amount"] == Decimal("3.00")
    assert report["rows"][0]["minutes_per_instance"] == 10.0  # (300 + 900) s over 2 instances
    yesterday = today - timedelta(days=1)
    assert dashboard.pay_report(project, start=yesterday, end=yesterday)["rows"] == []
    with pytest.raises(NotPermitted):
        pay_settings_set(project=project, actor=personas["verifier"], pay_per_instance="9")


@pytest.mark.parametrize("table", dashboard.CSV_TABLES)
def test_csv_matches_the_selectors(personas, project, history, api_client_for, table):
    response = api_client_for(personas["manager"]).get(f"/api/projects/{project.slug}/dashboard/csv/?table={table}")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    parsed = list(csv.DictReader(io.StringIO(response.content.decode())))
    expected = dashboard.csv_rows(user=personas["manager"], project=project, table=table)
    assert len(parsed) == len(expected)
    for got, want in zip(parsed, expected, strict=True):
        assert got == {k: "" if v is None else str(v) for k, v in want.items()}


def test_dashboard_json_and_page_agree(personas, project, history, api_client_for, client):
    data = api_client_for(personas["manager"]).get(f"/api/projects/{project.slug}/dashboard/").json()
    assert data["batches"][0]["counts"]["validated"] == 2
    assert by_user(data["annotators"])["annotator"]["refined"] == 3
    assert data["pay"]["total_instances"] == 2
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'data-batch="B1" data-total="6" data-validated="2"' in page
    # The batch is named by its number in the project, as the batches page and a release cut name it.
    batch_row = page.split('data-batch="B1"', 1)[1].split("</tr>", 1)[0]
    assert ">#1</span> B1</td>" in batch_row
    assert '<td class="reviews">3</td>' in page
    assert 'id="pay-total-instances">2<' in page
    assert "<polyline" in page and "stacked-bar" in page


def test_dashboard_api_pages_its_batch_rows_as_the_page_does(personas, project, api_client_for):
    """Every batch at once grew the answer with the project (10 → 100 batches at 10k → 100k instances): the API
    answers one page of rows, overdue first, the project's totals beside them, and refuses a page past the end."""
    from curation.models import Batch

    Batch.objects.bulk_create([Batch(project=project, name=f"Z{n:02}", order=100 + n) for n in range(12)])
    pages = dashboard.PROGRESS_PER_PAGE
    batches = Batch.objects.filter(project=project).count()
    manager = api_client_for(personas["manager"])
    first = manager.get(f"/api/projects/{project.slug}/dashboard/").json()
    assert len(first["batches"]) == pages
    assert first["batches_page"] == {"number": 1, "pages": -(-batches // pages), "batches": batches}
    last = manager.get(f"/api/projects/{project.slug}/dashboard/?batches_page={first['batches_page']['pages']}")
    names = [row["name"] for row in last.json()["batches"]]
    assert names[-1] == "Z11" and len(names) == batches - pages * (first["batches_page"]["pages"] - 1)
    assert first["totals"]["total"] == Instance.objects.filter(project=project).count()
    for bad in ("0", "x", str(first["batches_page"]["pages"] + 1)):
        refused = manager.get(f"/api/projects/{project.slug}/dashboard/?batches_page={bad}")
        assert refused.status_code == 400 and "batches_page" in str(refused.json())


def test_dashboard_is_for_managers_only(personas, project, history):
    for person in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            dashboard.dashboard_data(user=personas[person], project=project)


def test_chart_geometry_scales_to_the_largest_value():
    rows = [{"user": "a", "x": 2, "y": 4}, {"user": "b", "x": 0, "y": 1}]
    bars = charts.grouped_bars(rows, label="user", series=("x", "y"))
    widths = [bar["width"] for group in bars["groups"] for bar in group["bars"]]
    assert widths == [109.0, 218.0, 0.0, 54.5]  # the largest value spans the plot, the rest in proportion
    assert bars["width"] == charts.GROUPED_BARS_WIDTH == 400  # about a phone's width: its text is drawn near 12 px
    named = charts.grouped_bars(rows, label="user", series=("x", "y"), names={"x": "Reviews"})
    assert [entry["name"] for entry in named["legend"]] == ["Reviews", "y"]  # a key without a name stands as it is
    line = charts.line_chart(rows, series=("y",), label=lambda row: row["user"])
    assert line["lines"][0]["total"] == 5 and line["yticks"][-1]["value"] == 5


def test_imported_gold_is_nobodys_paid_work(personas, project, history, make_instance):
    """Instances created validated (imports, exam items) have no annotator and are not in the pay report."""
    from curation.services.lifecycle import instance_create

    before = dashboard.pay_report(project, start=timezone.localdate(), end=timezone.localdate())
    instance_create(project_id=project.pk, actor=None, initial_status="validated", question="Gold?", answer=["1"])
    after = dashboard.pay_report(project, start=timezone.localdate(), end=timezone.localdate())
    assert after["rows"] == before["rows"]
    assert after["total_instances"] == before["total_instances"]


def test_the_pay_rate_form_saves_a_rate_and_refuses_a_negative_one(personas, project, client):
    from annotate.dashboard.models import PaySettings

    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/dashboard/"
    saved = client.post(url, {"pay_per_instance": "1.25", "currency": "EUR"}, follow=True).content.decode()
    assert "Pay rate saved." in saved
    assert PaySettings.objects.get(project=project).pay_per_instance == Decimal("1.25")
    refused = client.post(url, {"pay_per_instance": "-1"}, follow=True).content.decode()
    assert "Pay per instance: Ensure this value is greater than or equal to 0." in refused
    assert PaySettings.objects.get(project=project).pay_per_instance == Decimal("1.25")


# Two validated instances: under 0.18 s in all, or 3 s each (0.0 active hours as shown: no rate, not 300 an hour).
@pytest.mark.parametrize("seconds", [0.0001, 0.05, 0.08, 3])
def test_a_tiny_refine_time_gives_no_hourly_rate_on_page_api_and_csv(
    personas, project, history, drafts, api_client_for, client, seconds
):
    """Issue 19.6: a refine time above 0 but under 0.18 s divided by hours rounded to zero (a 500 everywhere)."""
    WorkTime.objects.filter(activity="refine").update(active_seconds=seconds)
    today = timezone.localdate()
    rows = dashboard.pay_report(project, start=today, end=today)["rows"]
    assert [row["hourly"] for row in rows] == [None]
    manager = api_client_for(personas["manager"])
    api = manager.get(f"/api/projects/{project.slug}/dashboard/")
    assert api.status_code == 200 and api.json()["pay"]["rows"][0]["hourly"] is None
    pay_csv = manager.get(f"/api/projects/{project.slug}/dashboard/csv/?table=pay")
    assert pay_csv.status_code == 200
    assert [row["hourly"] for row in csv.DictReader(io.StringIO(pay_csv.content.decode()))] == [""]
    client.force_login(personas["manager"])
    assert client.get(f"/p/{project.slug}/dashboard/").status_code == 200


# gold rows are built from GOLD_COLUMNS itself (and the scripted history has no gold).
@pytest.mark.parametrize("table", [t for t in dashboard.CSV_TABLES if t != "gold"])
def test_csv_columns_are_the_rows_keys(personas, project, history, table):
    rows = dashboard.csv_rows(user=personas["manager"], project=project, table=table)
    assert rows, table
    assert list(rows[0]) == list(dashboard.CSV_TABLES[table].columns)


@pytest.mark.parametrize("table", ("gold", "drift", "draft_costs", "pay", "time"))
def test_an_empty_table_downloads_its_header_row(personas, project, client, table):
    client.force_login(personas["manager"])
    response = client.get(f"/p/{project.slug}/dashboard/{table}.csv")
    assert response.status_code == 200
    assert response.content.decode() == ",".join(dashboard.CSV_TABLES[table].columns) + "\n"


def test_csv_links_have_readable_names(personas, project, client):
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    links = page[page.index('class="csv-links small">CSV:') :].split("</p>", 1)[0]
    assert ">draft costs</a>" in links and ">hidden gold</a>" in links and "draft_costs</a>" not in links


def test_a_new_projects_people_charts_say_there_is_nothing_yet(personas, project, client):
    """Before anyone has worked, the people charts say so instead of drawing rows of zeros."""
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    annotators = page[page.index("<h2>Annotators</h2>") : page.index('id="annotator-table"')]
    verifiers = page[page.index("<h2>Verifiers</h2>") : page.index('id="verifier-table"')]
    assert "Nothing to chart yet: the bars appear once someone has refined or reviewed a draft." in annotators
    assert "Nothing to chart yet: the bars appear once someone has reviewed in round one." in verifiers
    assert "<svg" not in annotators + verifiers
    assert charts.grouped_bars([{"user": "a", "x": 1}], label="user", series=("x",))["is_empty"] is False
