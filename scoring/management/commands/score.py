"""`score --release R --project P --endpoint E --method M [--setting short|long] [--limit N] [--scale-mode M]
[--extraction M] [--bertscore M] [--json] [--wait]`."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import CommandError
from tqdm import tqdm

from curation.endpoints.models import ModelEndpoint
from curation.management.base import ReportCommand
from curation.management.lookup import project_named
from curation.models import Project
from curation.releases.models import Release
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


def project_release(options: dict[str, Any]) -> tuple[Project, Release]:
    """The project of `--project` (slug) and its release of `--release` (name, name-vN or id); CommandError names
    what is missing. Every scoring command that reads a release finds it here."""
    project, name = project_named(options["project"]), options["release"]
    releases = Release.objects.filter(project=project)
    if name.isdigit():
        found = releases.filter(pk=int(name)).first()
    elif "-v" in name and name.rsplit("-v", 1)[1].isdigit():
        base, version = name.rsplit("-v", 1)
        found = releases.filter(name=base, version=int(version)).first()
    else:
        found = releases.filter(name=name).order_by("-version").first()
    if found is None:
        raise CommandError(f"No release {name!r} in project {project.slug!r} (name, name-vN or id).")
    return project, found


def endpoint_named(project: Project, name: str) -> ModelEndpoint:
    """The endpoint usable in the project with this name (or id); CommandError lists the known ones."""
    endpoints = ModelEndpoint.objects.usable_in(project)
    found = endpoints.filter(pk=int(name)).first() if name.isdigit() else endpoints.filter(name=name).first()
    if found is None:
        known = ", ".join(endpoints.values_list("name", flat=True)) or "none"
        raise CommandError(f"No endpoint {name!r} for project {project.slug!r} (known: {known}).")
    return found


class Command(ReportCommand):
    help = "Score a model endpoint on a release with a method; --wait follows the workers with a progress bar."

    json_help = "print the run and its results as one JSON object"

    def add_options(self, parser) -> None:
        parser.add_argument("--release", required=True, help="release name (latest version), name-vN, or id")
        parser.add_argument("--project", required=True, help="project slug")
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
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def report(self, options: dict[str, Any]) -> dict[str, Any]:
        project, release = project_release(options)
        endpoint = endpoint_named(project, options["endpoint"])
        params = {key: options[key] for key in ("max_tokens", "temperature", "seed") if options[key] is not None}
        run = run_creation.run_create(
            release=release,
            actor=None,
            endpoint=endpoint,
            generation_params=params,
            **{key: options[key] for key in RUN_OPTIONS},
        )
        run_lifecycle.run_start(run=run, actor=None, queue=options["queue"], dispatch=not options["inline"])
        quiet = options["no_progress"] or options["json"]
        if not quiet:
            self.stderr.write(f"run {run.pk}: {run.items_total} items, {run.get_method_display()}, {run.setting}")
        bar = tqdm(total=run.items_total, desc=f"run {run.pk}", unit="q", disable=quiet)
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
            "release": release.label,
            "config_hash": run.config_hash,
            "progress": runs_progress.run_progress(run),
            "results": run.results,
        }

    def lines(self, data: dict[str, Any], options: dict[str, Any]) -> Any:
        done, total, failed = (data["progress"][key] for key in ("done", "total", "failed"))
        yield f"run {data['run']} {data['status']}: {done}/{total} done, {failed} failed"
        for name, estimate in (data["results"] or {}).get("figures", {}).items():
            yield f"{name}: {interval_text(estimate)} (n={estimate['count']})"
