"""Exports of a run's results: JSON (configuration, aggregates, one record per prediction) and CSV (one row each)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from scoring.runs.models import ScoringRun
from scoring.runs.progress import prediction_records

CSV_COLUMNS = (
    "uid", "status", "answer", "scale", "is_correct", "short_form", "em", "f1", "bertscore", "tatqa_em", "tatqa_f1",
    "scale_correct", "finqa_execution", "tool_calls", "tool_error", "tool_precision", "tool_recall", "answer_tokens",
    "gold_tokens", "tokens_out", "reasoning_type", "answer_form", "answer_source", "paper", "context", "error",
)  # fmt: skip


def run_json(run: ScoringRun) -> dict[str, Any]:
    """The run as one JSON document (callers check that the viewer may see predictions)."""
    return {
        "run": {
            "id": run.pk,
            "label": run.label,
            "method": run.method,
            "setting": run.setting,
            "status": run.status,
            "release": {"id": run.release_id, "label": run.release.label, "content_hash": run.release.content_hash},
            "config": run.config,
            "config_hash": run.config_hash,
            "template_hash": run.template_hash,
            "isolation": run.isolation,
        },
        "results": run.results,
        "predictions": prediction_records(run),
    }


def run_csv(run: ScoringRun) -> str:
    """One row per prediction with its figures and item attributes."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for record in prediction_records(run):
        row = dict(record)
        row["answer"] = json.dumps(record.get("answer") or [], ensure_ascii=False)
        writer.writerow(row)
    return buffer.getvalue()
