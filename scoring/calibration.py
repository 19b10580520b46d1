"""Calibration: every instance of a batch answered by each model of the project's panel (Direct QA, the short
context, the official metric), recording per item "answered correctly by k of n" (curation.panel).

A job kind of the one mechanism (curation/jobs.py): a worker claims the calibration row, answers the batch a chunk
of instances at a time — the chunk's questions to all panel models at once, each endpoint within its own shared
concurrency limit — writes each answer as it is scored, and renews its claim per chunk. It resumes: a claim taken
over after a worker died skips what this calibration has answered already. An item with no gold answer to score
against is not asked (its k of n stays unknown).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db.models import Count, Q

from curation.endpoints.errors import EndpointError
from curation.endpoints.models import ModelEndpoint
from curation.jobs import JobKind, JobTakenOver
from curation.models import Instance
from curation.panel.models import Calibration, PanelAnswer
from curation.releases.services.cut import instances_frozen
from curation.states import Status
from curation.transient import is_transient
from scoring.methods import MethodSettings, run_method
from scoring.methods.templates import templates_for
from scoring.runs.chunks import endpoint_client
from scoring.runs.results import item_metrics

logger = logging.getLogger(__name__)

CHUNK = 8  # instances per claim renewal and per write
MAX_THREADS = 16
DIRECT = MethodSettings(templates=templates_for("direct"))


def _no_program(code: str) -> Any:
    raise RuntimeError("Direct QA runs no program")


def panel_ask(item: dict[str, Any], context: dict[str, Any] | None, endpoint: ModelEndpoint) -> dict[str, Any]:
    """One panel model's answer to one frozen item, scored by the official metric (no database access, so
    threads run it). An endpoint that fails gives no verdict (`error`), never a wrong answer."""
    try:
        output = run_method(
            "direct",
            question=item.get("question", ""),
            context=context,
            chat=endpoint_client(endpoint, use_cache=False).chat,  # a new calibration asks afresh
            run_program=_no_program,
            settings=DIRECT,
        )
    except EndpointError as error:
        return {"error": f"{type(error).__name__}: {error.message}"}
    except Exception as error:
        if is_transient(error):
            raise
        logger.exception("panel answer of %s by %s failed", item.get("uid"), endpoint.name)
        return {"error": f"{type(error).__name__}: {error}"}
    metrics = item_metrics(item, answer=output.answer, scale=output.scale)
    return {
        "answer": output.answer,
        "scale": output.scale,
        "raw_output": output.raw_output[:20_000],
        "is_correct": bool(metrics.get("is_correct")),
    }


def _verdicts_write(calibration: Calibration, instance_ids: list[int]) -> None:
    """Each instance's k of n from this calibration's answers; its answers from earlier calibrations go."""
    counts = {
        row["instance_id"]: (row["k"], row["n"])
        for row in PanelAnswer.objects.filter(calibration=calibration, instance_id__in=instance_ids, error="")
        .values("instance_id")
        .annotate(k=Count("id", filter=Q(is_correct=True)), n=Count("id"))
    }
    PanelAnswer.objects.filter(instance_id__in=instance_ids).exclude(calibration=calibration).delete()
    verdicts: dict[tuple[int | None, int | None], list[int]] = {}
    for instance_id in instance_ids:
        verdicts.setdefault(counts.get(instance_id, (None, None)), []).append(instance_id)
    for (k, n), ids in verdicts.items():  # one UPDATE per verdict, not per instance
        Instance.objects.filter(pk__in=ids).update(panel_correct=k, panel_size=n)


class Calibrations(JobKind):
    """Calibrations of batches against the panel (one row per request; `Calibration`)."""

    name = "calibrations"
    model = Calibration
    task_name = "scoring.calibrate"

    def describe(self, row: Calibration) -> str:
        return f"calibration {row.pk} of batch {row.batch_id}"

    def work(self, row: Calibration, pk: int, token: str) -> None:
        endpoints = list(row.endpoints.all())
        ids = list(
            Instance.objects.filter(batch_id=row.batch_id)
            .exclude(status=Status.DISCARDED)
            .order_by("id")
            .values_list("pk", flat=True)
        )
        self.hold(pk, token, items_total=len(ids))
        asked = set(PanelAnswer.objects.filter(calibration=row).values_list("instance_id", "endpoint_id"))
        threads = max(1, min(MAX_THREADS, sum(e.concurrency_limit or 1 for e in endpoints)))
        papers: dict[int, Any] = {}  # read once while consecutive chunks stay on a paper
        with self.heartbeating(pk, token) as lost, ThreadPoolExecutor(threads, "panel") as pool:
            for start in range(0, len(ids), CHUNK):
                chunk = list(Instance.objects.filter(pk__in=ids[start : start + CHUNK]).values_list("pk", flat=True))
                frozen = zip(
                    sorted(chunk), instances_frozen(project=row.project, ids=sorted(chunk), papers=papers), strict=True
                )
                asks = [
                    (instance_id, item, context, endpoint)
                    for instance_id, (item, context) in frozen
                    if item.get("answer") or item.get("is_answerable") is False  # a gold answer to score against
                    for endpoint in endpoints
                    if (instance_id, endpoint.pk) not in asked
                ]
                answers = pool.map(lambda ask: (ask, panel_ask(*ask[1:])), asks)
                PanelAnswer.objects.bulk_create(
                    [
                        PanelAnswer(calibration=row, instance_id=ask[0], endpoint=ask[3], model=ask[3].name, **answer)
                        for ask, answer in answers
                    ],
                    ignore_conflicts=True,  # a rival claim that wrote the same answer meanwhile
                )
                _verdicts_write(row, chunk)
                if lost.is_set():
                    raise JobTakenOver(pk)
                self.hold(pk, token, items_done=min(start + CHUNK, len(ids)))
        self.finish(pk, token)


CALIBRATIONS = Calibrations()
