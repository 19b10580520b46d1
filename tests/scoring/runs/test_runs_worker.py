"""Scoring runs through a real Celery worker: chunks, one prediction per item, results; faults at a 20% rate."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from scoring.models import Prediction, RunChunk, ScoringRun
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from scoring.runs.progress import run_progress
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs
from tests.support.workers import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _answering(request: dict) -> fs.Fault:
    # A CoT-shaped reply naming the first table year, so extraction and metrics have something real to chew.
    return fs.ok("Reason: the table lists the totals by year. Answer: 2019", completion_tokens=12)


def test_a_run_through_a_worker_scores_every_item_once_and_computes_results(project, personas):
    release = small_release(project, questions=5)
    with fs.FaultServer(responder=_answering) as server:
        endpoint = endpoint_for(project, server.base_url)
        run = run_create(
            release=release, actor=personas["manager"], method="cot", endpoint=endpoint, chunk_size=2, use_cache=False
        )
        assert run.chunks.count() == 3
        with celery_worker() as worker:
            run_start(run=run, actor=personas["manager"], queue=worker["queue"])
            wait_for(
                lambda: ScoringRun.objects.get(pk=run.pk).status == "completed", timeout=90, what="the run to complete"
            )
    run.refresh_from_db()
    predictions = list(Prediction.objects.filter(run=run))
    assert len(predictions) == 5 == release.item_count
    assert {p.status for p in predictions} == {"scored"}
    assert all(p.answer == ["2019"] and p.worker.startswith("test-") for p in predictions)
    # The question "In which year is the amount of total sales the largest?" has the gold answer 2019.
    right = [p for p in predictions if p.uid == "f4142349-eb72-49eb-9a76-f3ccb1010cbc"]
    assert right and right[0].metrics["em"] == 1.0 and right[0].metrics["tatqa_em"] == 1.0 and right[0].is_correct
    assert set(RunChunk.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    assert run.results["count"] == 5 and run.results["failed"] == 0
    assert 0 < run.results["figures"]["em"]["mean"] < 1
    assert "tatqa_em" in run.results["figures"] and "answer_source" in run.results["breakdowns"]
    assert run_progress(run)["done"] == 5


def test_faults_at_a_twenty_percent_rate_leave_every_item_scored_or_failed_with_its_error(project, personas):
    release = small_release(project, documents=2, questions=5)
    faults = [
        fs.rate_limited("0.1"),
        _answering({}),
        _answering({}),
        fs.server_error(500),
        _answering({}),
        fs.slow(3.0),
        _answering({}),
        _answering({}),
        fs.malformed(),
        _answering({}),
        _answering({}),
        _answering({}),
        _answering({}),
        _answering({}),
        _answering({}),
        _answering({}),
        _answering({}),
        _answering({}),
        _answering({}),
        _answering({}),
    ]
    with fs.FaultServer() as server:
        server.cycle(faults)  # 4 faults in 20 replies
        endpoint = endpoint_for(project, server.base_url, timeout_s=1.0, max_attempts=2)
        run = run_create(
            release=release,
            actor=personas["manager"],
            method="direct",
            endpoint=endpoint,
            chunk_size=4,
            use_cache=False,
        )
        with celery_worker() as worker:
            run_start(run=run, actor=personas["manager"], queue=worker["queue"])
            wait_for(
                lambda: ScoringRun.objects.get(pk=run.pk).status == "completed", timeout=120, what="the run to complete"
            )
        statuses = [429, 500, None]
        assert server.chat_request_count > 10
    predictions = list(Prediction.objects.filter(run=run))
    assert len(predictions) == 10
    for prediction in predictions:
        assert prediction.status in ("scored", "failed")
        if prediction.status == "failed":
            assert prediction.error
    retried = [p for p in predictions if p.attempts > 1]
    assert retried, "some predictions needed a retry"
    assert {a["status"] for p in retried for a in p.attempt_log} & set(statuses)
    run.refresh_from_db()
    assert run.results["count"] == 10


def test_score_command_waits_for_the_workers_and_prints_the_results(project, personas):
    """`score --wait` dispatches to the workers and follows the run in the database until it completes."""
    release = small_release(project, questions=3)
    with fs.FaultServer(responder=_answering) as server:
        endpoint_for(project, server.base_url, name="fault")
        with celery_worker() as worker:
            out = StringIO()
            call_command(
                "score", "--release", release.name, "--project", project.slug, "--endpoint", "fault",
                "--method", "cot", "--chunk-size", "1", "--queue", worker["queue"], "--wait", "--json", stdout=out,
            )  # fmt: skip
    data = json.loads(out.getvalue())
    assert data["status"] == "completed" and data["progress"]["done"] == 3 and data["results"]["count"] == 3
    run = ScoringRun.objects.get(pk=data["run"])
    assert {p.worker for p in run.predictions.all()} == {worker["hostname"]}
