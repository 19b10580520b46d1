"""`score --release R --project P --endpoint E --method M [--setting short|long] [--limit N] [--scale-mode M]
[--extraction M] [--bertscore M] [--json] [--wait]`."""

from __future__ import annotations

import time
from typing import Any

from curation.management.base import ReportCommand
from curation.management.lookup import endpoint_named
from curation.toolkit.extraction import EXTRACTION_MODES
from scoring.metrics.aggregate import interval_text
from scoring.metrics.tatqa import SCALE_MODES
from scoring.models import ScoringRun
from scoring.runs import chunks as run_chunks
from scoring.runs import creation as run_creation
from scoring.runs import lifecycle as run_lifecycle
from scoring.runs import progress as runs_progress
from scoring.runs.progress import BERTSCORE_MODELS

# The options passed to `run_create` as they are.
RUN_OPTIONS = "method setting label few_shot tools max_turns scale_mode extraction bertscore limit chunk_size".split()


class Command(ReportCommand):
    takes_project = True
    takes_release = True
    shows_progress = True
    help = "Score a model endpoint on a release with a method; --wait follows the workers with a progress bar."

    json_help = "print the run and its results as one JSON object"

    def add_options(self, parser) -> None:
        parser.add_argument("--endpoint", required=True, help="endpoint name or id")
        parser.add_argument("--method", required=True, choices=[m for m in ScoringRun.Method.values if m != "upload"])
        parser.add_argument("--setting", default="short", choices=ScoringRun.Setting.values)
        parser.add_argument("--limit", type=int, default=None, help="only the first N items")
        parser.add_argument("--label", default="", help="model name shown in comparisons")
        parser.add_argument("--max-tokens", type=int, default=None)
        parser.add_argument("--temperature", type=float, default=None)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--few-shot", type=int, default=0, choices=(0, 1, 3), help="tool examples (tool loop)")
        parser.add_argument("--tools", default="all", choices=run_creation.TOOL_OPTIONS, help="tool set (tool loop)")
        parser.add_argument(
            "--max-turns", type=int, default=None, help="turn limit (tool loop; default: longest program + 4)"
        )
        parser.add_argument("--scale-mode", default="predicted", choices=SCALE_MODES, help="TAT-QA scale")
        parser.add_argument("--extraction", default="default", choices=EXTRACTION_MODES, help="answer extraction")
        parser.add_argument("--bertscore", default="minilm", choices=BERTSCORE_MODELS, help="BERTScore model")
        parser.add_argument("--chunk-size", type=int, default=run_creation.DEFAULT_CHUNK_SIZE)
        parser.add_argument("--queue", default="", help="Celery queue (default queue when empty)")
        parser.add_argument("--wait", action="store_true", help="follow the run until it finishes")
        parser.add_argument("--inline", action="store_true", help="process the chunks in this process (no worker)")

    def report(self, options: dict[str, Any]) -> dict[str, Any]:
        endpoint = endpoint_named(self.project, options["endpoint"])
        params = {key: options[key] for key in ("max_tokens", "temperature", "seed") if options[key] is not None}
        run = run_creation.run_create(
            release=self.release,
            actor=None,
            endpoint=endpoint,
            generation_params=params,
            **{key: options[key] for key in RUN_OPTIONS},
        )
        run_lifecycle.run_start(run=run, actor=None, queue=options["queue"], dispatch=not options["inline"])
        bar = self.progress_bar(options, total=run.items_total, desc=f"run {run.pk}", unit="q")
        if not bar.disable:
            self.stderr.write(f"run {run.pk}: {run.items_total} items, {run.get_method_display()}, {run.setting}")
        try:
            if options["inline"]:
                for chunk_id in run.chunks.order_by("index").values_list("pk", flat=True):
                    run_chunks.chunk_process(chunk_id=chunk_id, worker="score-command")
                    bar.update(runs_progress.run_progress(run)["done"] - bar.n)
            elif options["wait"]:
                while True:
                    run.refresh_from_db()
                    progress = runs_progress.run_progress(run)
                    bar.update(progress["done"] - bar.n)
                    bar.set_postfix_str(progress["waiting"])  # "Queued behind 2 runs" until a worker begins
                    if not run.is_active:  # finished, failed, cancelled or paused
                        break
                    time.sleep(1.0)
        finally:
            bar.close()
        run.refresh_from_db()
        return {
            "run": run.pk,
            "status": run.status,
            "method": run.method,
            "setting": run.setting,
            "release": self.release.label,
            "config_hash": run.config_hash,
            "progress": runs_progress.run_progress(run),
            "results": run.results,
        }

    def lines(self, data: dict[str, Any], options: dict[str, Any]) -> Any:
        done, total, failed = (data["progress"][key] for key in ("done", "total", "failed"))
        yield f"run {data['run']} {data['status']}: {done}/{total} done, {failed} failed"
        for name, estimate in (data["results"] or {}).get("figures", {}).items():
            yield f"{name}: {interval_text(estimate)} (n={estimate['count']})"
