"""The run's status changes only by compare-and-set (`run_transition`); chunks are sent to the workers once the
transaction commits (`chunks_enqueue`); the last chunk done finishes the run — completed, or failed when no item
was answered — and computes its results."""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from curation.jobs import job_enqueue
from curation.webhooks.services import webhook_emit
from scoring.runs.models import Prediction, RunChunk, ScoringRun
from scoring.runs.progress import prediction_counts, run_results

Status = ScoringRun.Status
logger = logging.getLogger(__name__)


def run_transition(run: ScoringRun, sources: tuple[str, ...], target: str, **assignments: Any) -> bool:
    """Move a run from one of `sources` to `target` (compare-and-set); a run that finished (completed or failed)
    sends `scoring_run.finished` to the project's webhooks."""
    changed = ScoringRun.objects.filter(pk=run.pk, status__in=sources).update(status=target, **assignments)
    if changed:
        run.status = target
        for name, value in assignments.items():
            setattr(run, name, value)
        if target in FINISHED:
            webhook_emit(project=run.project, event="scoring_run.finished", payload=run_finished_payload(run))
    return bool(changed)


FINISHED = (Status.COMPLETED, Status.FAILED)


def run_finished_payload(run: ScoringRun) -> dict[str, Any]:
    """What the `scoring_run.finished` webhook event says about a run: its final status (completed or failed), how
    many of its items failed, and why it failed."""
    counts = prediction_counts(run)
    return {
        "run": {
            "id": run.pk,
            "status": run.status,
            "label": run.label,
            "method": run.method,
            "setting": run.setting,
            "items_total": run.items_total,
            "items_failed": counts["failed"],
            "finished_at": run.finished_at,
            "error": run.error,
        },
        "release": {"id": run.release_id},
    }


def chunks_enqueue(run: ScoringRun, chunk_ids: list[int]) -> None:
    """Send one task per chunk once the transaction commits (the row is the record, the message only a nudge)."""
    if not chunk_ids:
        return
    RunChunk.objects.filter(pk__in=chunk_ids).update(enqueued_at=timezone.now())
    for chunk_id in chunk_ids:
        job_enqueue(task_name="scoring.run_chunk", args=[chunk_id], queue=run.queue or None)


def run_finish_if_done(*, run_id: int) -> bool:
    """Running → finished, with its results, once every chunk is done (exactly one caller wins). Finished
    is `completed` when at least one item was answered, `failed` (with the first item's error) when every one
    failed — the endpoint never answered, the sandbox refused every program; "retry failed" redoes either."""
    if RunChunk.objects.filter(run_id=run_id).exclude(status=RunChunk.Status.DONE).exists():
        return False
    run = ScoringRun.objects.get(pk=run_id)
    counts = prediction_counts(run)
    # Never "completed" with an item unattempted: every item of the run (the release's, its first `limit` or its
    # per-template sample) has its prediction (a given-up chunk's items have failed ones), whatever the chunks' flags
    # say; (run, item) is unique, so the count tells.
    if counts["done"] < run.items_total:
        logger.warning("run %s: every chunk is done but some items have no prediction; not completing", run_id)
        return False
    target, why = Status.COMPLETED, {}
    if counts["done"] and counts["failed"] == counts["done"]:
        first = Prediction.objects.filter(run_id=run_id).order_by("position").values_list("error", flat=True).first()
        target = Status.FAILED
        why = {"error": f"Every one of the {counts['done']} items failed; the first: {first or 'no reason given'}"}
    # Two chunks finishing together both get here: a loser that re-reads the status skips computing the results.
    if not ScoringRun.objects.filter(pk=run_id, status=Status.RUNNING).exists():
        return False
    # The results are written in the same update that finishes the run: whoever sees it finished reads them.
    now = timezone.now()
    finished = {"finished_at": now, "results": run_results(run), "results_computed_at": now, **why}
    return run_transition(run, (Status.RUNNING,), target, **finished)
