"""Background work is routed to separate Celery queues, so drafting never starves scoring or exports."""

from __future__ import annotations

import pytest

from config.celery import app
from tests.support.workers import ROOT


def routed_queue(task_name: str, **options: object) -> str:
    return app.amqp.router.route(dict(options), task_name)["queue"].name


def test_drafting_scoring_and_exports_each_go_to_their_own_queue():
    queues = {
        name: routed_queue(name)
        for name in (
            "curation.drafting_chunk", "scoring.run_chunk", "curation.export_build", "curation.paper_ingest",
            "annotate.leases_reap", "curation.jobs_reap", "curation.webhook_deliver",
        )
    }  # fmt: skip
    assert queues == {
        "curation.drafting_chunk": "drafting",
        "scoring.run_chunk": "scoring",
        "curation.export_build": "exports",
        "curation.paper_ingest": "exports",
        # Short tasks that must never wait behind a long one (issue 35, defect 4: behind a 120 s hostile upload).
        "annotate.leases_reap": "control",
        "curation.jobs_reap": "control",
        "curation.webhook_deliver": "control",
    }


def test_webhook_deliveries_and_every_reaper_run_on_a_queue_no_long_task_uses(settings):
    from curation.queues import TASK_QUEUE_SETTINGS, queue_for

    short = {"curation.webhook_deliver", *(entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values())}
    assert {queue_for(name) for name in short} == {settings.TATCURATE_CONTROL_QUEUE} == {"control"}
    assert "control" not in {queue_for(name) for name in TASK_QUEUE_SETTINGS if name not in short} | {"celery"}
    start = (ROOT / "scripts" / "start").read_text()
    assert '"control:$control_queue:--beat"' in start  # its own worker, which also runs the scheduler


def test_a_worker_without_a_queue_list_consumes_every_queue():
    assert {"celery", "drafting", "scoring", "exports", "control"} <= set(app.amqp.queues)


def test_a_sender_naming_a_queue_wins_over_the_route():
    assert routed_queue("scoring.run_chunk", queue="private") == "private"
    assert routed_queue("scoring.run_chunk", queue=None) == "scoring"


def test_queue_settings_move_a_kind_of_work_at_send_time(settings):
    settings.TATCURATE_SCORING_QUEUE = "gpu-scoring"
    assert routed_queue("scoring.run_chunk") == "gpu-scoring"
    assert routed_queue("curation.drafting_chunk") == "drafting"


@pytest.mark.django_db
def test_started_runs_record_the_queue_of_their_kind(project, personas):
    from curation.drafting.services.runs import run_create, run_start
    from curation.models import Batch
    from scoring.runs.creation import run_create as scoring_run_create
    from scoring.runs.lifecycle import run_start as scoring_run_start
    from tests.curation.drafting.conftest import make_contexts
    from tests.scoring.run_support import endpoint_for, small_release

    batch = Batch.objects.create(project=project, name="Routed")
    make_contexts(project, batch, 1)
    drafting = run_create(project=project, actor=personas["manager"], kind="template", batch=batch)
    assert run_start(run_id=drafting.pk, actor=personas["manager"]).options["queue"] == "drafting"
    scoring = scoring_run_create(
        release=small_release(project, questions=1), actor=personas["manager"], method="cot",
        endpoint=endpoint_for(project, "http://127.0.0.1:9/v1"),
    )  # fmt: skip
    assert scoring_run_start(run=scoring, actor=personas["manager"]).queue == "scoring"
