"""The run page and the predictions API cost what they show, not the run's size: the counts are stored when the run
finishes (and stored again when a retry changes its predictions), the predictions are listed a page at a time, and
the statements are the same for a run of 20 predictions as for one of 200."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from curation.releases.models import Release, ReleaseItem
from scoring.runs import lifecycle as run_lifecycle
from scoring.runs import selectors as scoring_selectors
from scoring.runs.models import ErrorTag, Prediction, RunChunk, ScoringRun
from scoring.runs.progress import prediction_counts, prediction_records, results_are_current, run_counts
from scoring.runs.results import run_summary
from scoring.runs.states import run_finish_if_done

pytestmark = pytest.mark.django_db


def finished_run(project, size: int, *, label: str, method: str = "direct") -> ScoringRun:
    """A run of `size` predictions (every third one wrong, the seventh ones failed) finished by the one path that
    finishes a run (`run_finish_if_done`), so its results are computed and stored as a worker's would be. An upload
    run's file holds the gold answer of every item (what a retry of its failed items answers)."""
    release = Release.objects.create(project=project, name=label, version=1, content_hash="0" * 64, item_count=size)
    items = ReleaseItem.objects.bulk_create(
        ReleaseItem(
            release=release,
            position=n,
            uid=f"{label}-{n}",
            data={"uid": f"{label}-{n}", "question": f"Question {n} of {label}?", "answer": [str(n)]},
        )
        for n in range(size)
    )
    run = ScoringRun.objects.create(
        project=project, release=release, label=label, method=method, config_hash=label, items_total=size,
        status=ScoringRun.Status.RUNNING, started_at=timezone.now(),
        uploaded_predictions={item.uid: {"answer": item.data["answer"]} for item in items},
    )  # fmt: skip
    RunChunk.objects.bulk_create(
        RunChunk(run=run, index=c, first_position=c * 8, last_position=min(c * 8 + 7, size - 1), status="done")
        for c in range(-(-size // 8))
    )
    predictions = []
    for item in items:
        failed, correct = item.position % 7 == 6, item.position % 3 != 0
        prediction = Prediction(run=run, item=item, position=item.position, uid=item.uid, answer=[item.uid])
        prediction.status = "failed" if failed else "scored"
        prediction.metrics = {"short_form": True, "em": float(correct)}
        prediction.is_correct = correct and not failed
        predictions.append(prediction)
    Prediction.objects.bulk_create(predictions)
    assert run_finish_if_done(run_id=run.pk)
    return ScoringRun.objects.get(pk=run.pk)


def assert_stored_results_are_the_recomputed_ones(run: ScoringRun) -> None:
    assert results_are_current(run)
    recomputed = run_summary(prediction_records(run))
    for key in ("count", "scored", "failed", "correct", "accuracy", "figures", "breakdowns"):
        assert run.results[key] == recomputed[key], key
    assert run_counts(run) == prediction_counts(run)


def prediction_counts_sent(queries) -> list[str]:
    """The statements that count a run's predictions."""
    return [q["sql"] for q in queries if re.search(r'COUNT\(.*\) .*FROM "scoring_prediction"', q["sql"])]


def test_stored_counts_are_the_recounted_ones_once_the_run_finishes(project, personas):
    run = finished_run(project, 30, label="thirty")
    assert_stored_results_are_the_recomputed_ones(run)
    assert run.results["correct"] == Prediction.objects.filter(run=run, is_correct=True).count() == 18
    assert run_counts(run) == {"done": 30, "failed": 4, "wrong": 12}


def test_a_run_is_finished_and_given_its_results_in_one_update(project, personas):
    """Nobody who sees the run finished reads it without results (an API client polling for `completed`, a test
    that stops its worker once it sees the status)."""
    with CaptureQueriesContext(connection) as queries:
        run = finished_run(project, 9, label="one-step")
    finishing = [
        q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE") and "'completed'" in q["sql"]
    ]
    assert len(finishing) == 1 and '"results"' in finishing[0] and '"results_computed_at"' in finishing[0]
    assert run.finished_at == run.results_computed_at and run.results["count"] == 9


def test_a_chunk_that_finds_its_run_already_finished_does_not_compute_the_results(project, personas, monkeypatch):
    run = finished_run(project, 9, label="raced")

    def computed(run):
        raise AssertionError("the results of a finished run were computed again")

    monkeypatch.setattr("scoring.runs.states.run_results", computed)
    assert not run_finish_if_done(run_id=run.pk)


def test_a_retry_stores_the_counts_again(project, personas):
    run = finished_run(project, 30, label="retry", method=ScoringRun.Method.UPLOAD)
    assert run.results["failed"] == 4 and run.results["correct"] == 18
    assert_stored_results_are_the_recomputed_ones(run)
    # The failed items are answered again (the file's gold answers, scored inline like every upload): their
    # predictions change, and so must the stored results and counts.
    assert run_lifecycle.run_retry_failed(run=run, actor=personas["manager"]) == 4
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.COMPLETED
    assert run.results["failed"] == 0 and run.results["correct"] == 22
    assert_stored_results_are_the_recomputed_ones(run)
    assert run_counts(run) == {"done": 30, "failed": 0, "wrong": 8}


def test_a_run_with_more_failed_predictions_than_sqlites_expression_depth_is_retried(project, personas):
    size = 1100
    release = Release.objects.create(project=project, name="many", version=1, content_hash="0" * 64, item_count=size)
    items = ReleaseItem.objects.bulk_create(
        ReleaseItem(release=release, position=n, uid=f"q{n}", data={"uid": f"q{n}"}) for n in range(size)
    )
    run = ScoringRun.objects.create(
        project=project, release=release, method="direct", config_hash="many", items_total=size, status="failed"
    )
    RunChunk.objects.bulk_create(
        RunChunk(run=run, index=c, first_position=8 * c, last_position=8 * c + 7, status="done", deliveries=3)
        for c in range(size // 8 + 1)
    )
    Prediction.objects.bulk_create(
        Prediction(run=run, item=item, position=item.position, uid=item.uid, status="failed") for item in items
    )
    assert run_lifecycle.run_retry_failed(run=run, actor=personas["manager"]) == size
    assert not Prediction.objects.filter(run=run).exists()
    chunks = RunChunk.objects.filter(run=run)
    assert chunks.count() == chunks.filter(status=RunChunk.Status.QUEUED, deliveries=0).count() == 138


def test_a_retried_run_is_counted_until_its_results_are_stored_again(project, personas):
    run = finished_run(project, 30, label="retried")
    ScoringRun.objects.filter(pk=run.pk).update(status=ScoringRun.Status.RUNNING, finished_at=None)
    Prediction.objects.filter(run=run, status="failed").delete()
    run.refresh_from_db()
    assert not results_are_current(run)
    assert run_counts(run) == prediction_counts(run) == {"done": 26, "failed": 0, "wrong": 8}


def test_run_page_lists_predictions_a_page_at_a_time_with_the_filter_kept(client, personas, project, monkeypatch):
    monkeypatch.setattr(scoring_selectors, "PREDICTIONS_PER_PAGE", 10)
    run = finished_run(project, 25, label="paged")
    client.force_login(personas["manager"])
    url = reverse("scoring-run", args=[project.slug, run.pk])
    first = client.get(url).content.decode()
    assert "Predictions 1–10 of 25" in first and 'href="?page=2#predictions"' in first and "Previous" not in first
    assert re.findall(r"Question (\d+) of paged", first) == [str(n) for n in range(10)]
    last = client.get(url, {"page": 3}).content.decode()
    assert "Predictions 21–25 of 25" in last and 'href="?page=2#predictions"' in last and ">Next<" not in last
    assert re.findall(r"Question (\d+) of paged", last) == [str(n) for n in range(20, 25)]
    wrong = [p.position for p in Prediction.objects.filter(run=run, is_correct=False).order_by("position")]
    assert len(wrong) == 11
    page = client.get(url, {"wrong": "1", "page": 2}).content.decode()
    assert "Wrong predictions 11–11 of 11" in page and 'href="?wrong=1&amp;page=1#predictions"' in page
    assert re.findall(r"Question (\d+) of paged", page) == [str(wrong[10])]


def test_run_page_and_predictions_api_read_the_same_statements_at_20_and_200_predictions(client, personas, project):
    client.force_login(personas["manager"])
    statements = {}
    for size in (20, 200):
        run = finished_run(project, size, label=f"run-{size}")
        prediction = Prediction.objects.filter(run=run, is_correct=False).first()
        ErrorTag.objects.create(prediction=prediction, kind="grounding", tagged_by=personas["verifier"])
        with CaptureQueriesContext(connection) as page:
            html = client.get(reverse("scoring-run", args=[project.slug, run.pk])).content.decode()
        with CaptureQueriesContext(connection) as api:
            listed = client.get(f"/api/scoring-runs/{run.pk}/predictions/", HTTP_ACCEPT="application/json").json()
        assert f"Predictions 1–{min(size, 50)} of {size}" in html and "Grounding" in html
        assert len(listed["results"]) == min(size, 100) and listed["count"] == size
        # A finished run's page counts nothing over its predictions: its counts are the stored ones.
        assert not prediction_counts_sent(page.captured_queries)
        statements[size] = (len(page.captured_queries), len(api.captured_queries))
    assert statements[20] == statements[200]


def test_an_annotator_sees_the_figures_but_not_the_predictions(client, personas, project):
    run = finished_run(project, 20, label="gold")
    client.force_login(personas["novice"])
    html = client.get(reverse("scoring-run", args=[project.slug, run.pk])).content.decode()
    assert 'id="results"' in html and 'id="predictions"' not in html and "Question 1 of gold" not in html
    response = client.get(f"/api/scoring-runs/{run.pk}/predictions/", HTTP_ACCEPT="application/json")
    assert response.status_code == 403 and scoring_selectors.GOLD_REFUSAL in response.content.decode()
