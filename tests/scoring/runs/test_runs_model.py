"""End to end with the real local model (SmolLM2 via xllamacpp) through a real Celery worker, once per method.

The model is tiny, so the figures are low; the test checks the run mechanics and the metric plumbing.
"""

from __future__ import annotations

import pytest

from scoring.models import Prediction, ScoringRun
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from tests.scoring.run_support import endpoint_for, local_model_url, small_release
from tests.support.workers import celery_worker, wait_for

pytestmark = [pytest.mark.model, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

METHODS = ("direct", "cot", "pot", "car", "tatllm", "tool")


def test_every_method_scores_a_small_release_with_the_local_model(project, personas):
    release = small_release(project, questions=2)
    endpoint = endpoint_for(
        project,
        local_model_url(),
        name="smollm2",
        model="SmolLM2-135M-Instruct",
        timeout_s=120.0,
        concurrency_limit=1,
        generation_params={"temperature": 0.0, "max_tokens": 32},
        is_local_default=True,  # the worker checks the embedded model answers (it does: the session's server)
    )
    runs = [
        run_create(
            release=release,
            actor=personas["verifier"],
            method=method,
            endpoint=endpoint,
            max_turns=2,
            tools="data",
        )
        for method in METHODS
    ]
    with celery_worker() as worker:
        for run in runs:
            run_start(run=run, actor=personas["verifier"], queue=worker["queue"])
        wait_for(
            lambda: ScoringRun.objects.filter(pk__in=[r.pk for r in runs], status="completed").count() == len(runs),
            timeout=600,
            interval=1.0,
            what="every method's run to complete",
        )
    for run in runs:
        run.refresh_from_db()
        predictions = list(Prediction.objects.filter(run=run))
        assert len(predictions) == 2, run.method
        assert all(p.status == "scored" and p.raw_output for p in predictions), [p.error for p in predictions]
        assert all(p.tokens_out and p.prompt for p in predictions)
        assert run.results["count"] == 2 and "em" in run.results["figures"] and "tatqa_em" in run.results["figures"]
        if run.method in ("pot", "car"):
            # Model-written code ran in the sandbox, never in the worker.
            assert all(p.program_result and p.program_result["isolation"] in ("bwrap", "degraded") for p in predictions)
            assert run.isolation in ("bwrap", "degraded")
        if run.method == "car":
            assert all({"calculator", "reasoner"} <= set(p.stages) for p in predictions)
            assert all(p.stages["calculator"]["tips"] in p.stages["reasoner"]["prompt"] for p in predictions)
        if run.method == "tatllm":
            assert all("steps" in p.stages and "executor" in p.stages for p in predictions)
        if run.method == "tool":
            assert all(p.stages["protocol"] == "json" for p in predictions)
            assert any(p.tool_trace for p in predictions)
            assert "tool" in run.results
