"""Exports of a run's results (JSON: configuration, aggregates, one record per prediction; CSV: one row each), and of
a release as the evaluation harnesses' tasks."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from curation.exports.rows import release_rows
from curation.releases.models import Release
from scoring.runs.harness import HARNESS_METHODS, HARNESS_SETTINGS, write_harness_zip
from scoring.runs.models import ScoringRun
from scoring.runs.progress import prediction_records

CSV_COLUMNS = (
    "uid", "status", "answer", "scale", "is_correct", "short_form", "em", "f1", "bertscore", "scitat_em", "scitat_f1",
    "tatqa_em", "tatqa_f1",
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
        writer.writerow({**record, "answer": json.dumps(record.get("answer") or [], ensure_ascii=False)})
    return buffer.getvalue()


HARNESS_README = """# {release.name} (version {release.version}) as evaluation harness tasks

{release.item_count} questions of the TaT-Curate project "{release.project.name}", \
content hash `{release.content_hash}`, in two context settings
({settings}) asked with the project's methods ({methods}): the prompts are the ones the project's scoring runs send.

Both scorers are the project's own, so run them where TaT-Curate is importable (its virtualenv).

Inspect AI (`tatcurate_task.py`, samples in `data/`):

    LOCAL_BASE_URL=http://127.0.0.1:8089/v1 LOCAL_API_KEY=none \\
      inspect eval tatcurate_task.py -T setting=short -T method=cot --model openai-api/local/MODEL

lm-evaluation-harness (`lm_eval/`, tasks `tatcurate_{{short,long}}_{{direct,cot}}`):

    lm_eval --include_path lm_eval --tasks tatcurate_short_cot --log_samples --output_path out \\
      --model local-chat-completions --apply_chat_template \\
      --model_args model=MODEL,base_url=http://127.0.0.1:8089/v1/chat/completions

Bring a run back: upload the Inspect log (`logs/*.eval`) as format `inspect`, or lm-evaluation-harness's samples file
(`out/**/samples_*.jsonl`) as format `lm_eval`, on the release's scoring page, with the API or with
`manage.py upload_predictions`: it becomes a scoring run with the project's metrics and breakdowns.

## License

{license}

## Sources and attribution

{attribution}
"""


def release_harness_zip(release: Release, out: Path) -> dict[str, int]:
    """The release as Inspect AI and lm-evaluation-harness tasks, in a zip at `out` (callers check that the viewer
    may see the release); returns the samples written per data file."""
    readme = HARNESS_README.format(
        release=release,
        settings=", ".join(HARNESS_SETTINGS),
        methods=", ".join(HARNESS_METHODS),
        license=release.license or "Not stated by the project.",
        attribution=release.attribution or "None recorded.",
    )
    return write_harness_zip(out, lambda: release_rows(release), readme=readme)
