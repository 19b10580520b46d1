"""Background work is routed to separate Celery queues, so drafting never starves scoring or exports."""

from __future__ import annotations

import pytest

from config.celery import app


def routed_queue(task_name: str, **options: object) -> str:
    return app.amqp.router.route(dict(options), task_name)["queue"].name


def test_drafting_scoring_and_exports_each_go_to_their_own_queue():
    queues = {
        name: routed_queue(name)
        for name in (
            "curation.drafting_chunk", "scoring.run_chunk", "curation.export_build", "annotate.leases_reap",
            "curation.jobs_reap",
        )
    }  # fmt: skip
    assert queues == {
        "curation.drafting_chunk": "drafting",
        "scoring.run_chunk": "scoring",
        "curation.export_build": "exports",
        "annotate.leases_reap": "celery",
        "curation.jobs_reap": "celery",  # the one job reaper stays on the default queue, beside the lease reaper
    }


def test_a_worker_without_a_queue_list_consumes_every_queue():
    assert {"celery", "drafting", "scoring", "exports"} <= set(app.amqp.queues)


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
