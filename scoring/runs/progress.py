"""What a run has produced so far: one flat record per prediction, the run's results (computed once it completes),
its progress, and how much work waits ahead of it on its queue."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from curation.queues import waiting_label
from scoring.runs import results as result_metrics
from scoring.runs.models import Prediction, RunChunk, ScoringRun

logger = logging.getLogger(__name__)

Status = ScoringRun.Status


def prediction_records(run: ScoringRun) -> list[dict[str, Any]]:
    """One flat record per prediction (metrics + item attributes) for aggregation and export."""
    records = []
    fields = (
        "uid", "status", "metrics", "is_correct", "tokens_out", "item__data", "error", "answer", "scale", "context",
    )  # fmt: skip
    rows = Prediction.objects.filter(run=run).order_by("position").values(*fields)
    for row in rows.iterator(chunk_size=1000):
        metrics, data = row.pop("metrics") or {}, row.pop("item__data")
        records.append(
            {
                **metrics,
                **row,
                "paper": data.get("paper"),
                "reasoning_type": data.get("reasoning_type_name") or data.get("reasoning_type"),
                "answer_form": data.get("answer_form") or ("short" if metrics.get("short_form") else "free"),
                "answer_source": data.get("answer_source"),
            }
        )
    return records


def run_results(run: ScoringRun) -> dict[str, Any]:
    """The run's results, aggregated from its predictions (bootstrap CIs, breakdowns, tool and token figures); the
    run stores them in the same step that finishes it (`run_finish_if_done`)."""
    records = prediction_records(run)
    summary = result_metrics.run_summary(records)
    scorer = bertscorer_load(run.options.get("bertscore", "minilm")) if summary["free_form_count"] else None
    return {
        **summary,
        "setting": run.setting,
        # A short-setting run answers on the whole paper where the release has no short context (TAT-QA, FinQA):
        # said with the figures, so nobody reads them as short-context results.
        "long_context_fallbacks": sum(1 for r in records if r["context"] == "long") if run.setting == "short" else 0,
        "method": run.method,
        "metrics_s": sum(Prediction.objects.filter(run=run).values_list("metrics_s", flat=True)),
        "bertscore_info": scorer.info() if scorer is not None else None,
    }


def prediction_counts(run: ScoringRun) -> dict[str, int]:
    """How many items of the run have a prediction (`done`), how many of those failed (`failed`) and how many are
    wrong (`wrong`, the failed ones included), counted now (what finishing a run decides on)."""
    return Prediction.objects.filter(run=run).aggregate(
        done=Count("id"),
        failed=Count("id", filter=Q(status=Prediction.Status.FAILED)),
        wrong=Count("id", filter=Q(is_correct=False)),
    )


def results_are_current(run: ScoringRun) -> bool:
    """Whether the run's stored results describe its predictions as they are: computed after it last finished
    (a retry sets it running again with `finished_at` cleared, so until its results are computed anew they are
    not current)."""
    return (
        run.status in (Status.COMPLETED, Status.FAILED)
        and run.finished_at is not None
        and run.results_computed_at is not None
        and run.results_computed_at >= run.finished_at
    )


def run_counts(run: ScoringRun) -> dict[str, int]:
    """`prediction_counts` for pages: read from the results stored when the run finished while they are current
    (a finished run's predictions do not change), so a page costs the same for a run of 50 or 50,000 predictions;
    counted while it runs."""
    results = run.results
    if results_are_current(run):
        return {"done": results["count"], "failed": results["failed"], "wrong": results["count"] - results["correct"]}
    return prediction_counts(run)


def run_progress(run: ScoringRun) -> dict[str, Any]:
    """Done, failed, remaining, rate (items/s over the run so far) and an ETA in seconds."""
    counts = run_counts(run)
    done, total = counts["done"], run.items_total
    elapsed = ((run.finished_at or timezone.now()) - run.started_at).total_seconds() if run.started_at else 0.0
    rate = done / elapsed if elapsed > 0 and done else 0.0
    remaining = max(total - done, 0)
    return {
        "done": done,
        "failed": counts["failed"],
        "total": total,
        "percent": round(100 * done / total, 1) if total else 0.0,
        "rate_per_s": round(rate, 3),
        "eta_s": round(remaining / rate) if rate and run.status == Status.RUNNING else None,
        "status": run.status,
        "queued_behind": (queued_behind := run_queued_behind(run, done=done)),
        "waiting": waiting_label(queued_behind),
    }


def run_queued_behind(run: ScoringRun, *, done: int | None = None) -> int | None:
    """How many runs started earlier on this run's queue still have chunks to do, while no chunk of this run has
    begun (None once one has, or when the run is not running)."""
    if run.status != Status.RUNNING or run.method == ScoringRun.Method.UPLOAD or run.started_at is None:
        return None
    if done is None:
        done = Prediction.objects.filter(run=run).count()
    if done or run.chunks.exclude(status=RunChunk.Status.QUEUED).exists():
        return None
    earlier = Q(started_at__lt=run.started_at) | Q(started_at=run.started_at, pk__lt=run.pk)
    unfinished = (RunChunk.Status.QUEUED, RunChunk.Status.RUNNING)
    return (
        ScoringRun.objects.filter(earlier, queue=run.queue, status=Status.RUNNING, chunks__status__in=unfinished)
        .distinct()
        .count()
    )


# The BERTScore models a run can use, as the forms name them.
BERTSCORE_MODELS = {
    "minilm": "all-MiniLM-L6-v2 (offline default)",
    "paper": "bert-base-uncased, layer 12 (SciTaT paper)",
}


def paper_bertscore_unavailable() -> str:
    """Why the SciTaT paper's BERTScore (bert-base-uncased, layer 12) cannot be chosen here, or "" when it can."""
    from scoring.metrics.bertscore import BertScoreUnavailableError, paper_model_directory

    try:
        paper_model_directory(settings.TATCURATE_BERT_BASE_UNCASED_DIR)
    except BertScoreUnavailableError as error:
        return str(error)
    return ""


def bertscorer_load(model: str = "minilm") -> Any:
    """The run's BERTScore scorer — the bundled all-MiniLM-L6-v2, or the paper's bert-base-uncased from the configured
    folder — or None (logged) where its model cannot be loaded here."""
    from scoring.metrics.bertscore import BertScoreUnavailableError, default_scorer, paper_scorer

    try:
        if model == "paper":
            return paper_scorer(settings.TATCURATE_BERT_BASE_UNCASED_DIR)
        return default_scorer()
    except (BertScoreUnavailableError, OSError, ImportError) as error:
        logger.warning("BERTScore unavailable: %s", error)
        return None
