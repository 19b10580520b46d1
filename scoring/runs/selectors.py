"""Reads of scoring runs, scoped to the viewer (roles in scoring/runs/permissions.py): members see runs and aggregate
figures; only gold readers see predictions beside gold answers; outsiders see nothing."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import Count, QuerySet

from curation import selectors
from curation.endpoints.models import ModelEndpoint
from curation.errors import InvalidInput, NotFound, NotPermitted
from curation.models import Project
from curation.releases.models import Release
from curation.releases.selectors import can_read_gold
from scoring.metrics import error_analysis
from scoring.runs import table_formats
from scoring.runs.comparison import TABLES, comparison_tables
from scoring.runs.models import ErrorSample, ErrorTag, Prediction, ScoringRun
from scoring.runs.progress import run_counts

GOLD_REFUSAL = "Predictions sit beside gold answers: managers, verifiers and qualified annotators only."
PREDICTIONS_PER_PAGE = 50


def runs_of(*, user: AbstractBaseUser, project: Project, release: Release | None = None) -> QuerySet[ScoringRun]:
    """Runs of a project the user belongs to (optionally of one release), newest first."""
    selectors.project_get(user=user, slug=project.slug)
    runs = (
        ScoringRun.objects.visible_to(user).filter(project=project).select_related("release", "endpoint", "created_by")
    )
    return runs.filter(release=release) if release is not None else runs


def run_get(*, user: AbstractBaseUser, run_id: int, slug: str | None = None) -> ScoringRun:
    """One run of a project the user belongs to (the project `slug` names, on a page); anything else is 'not found'."""
    run = (
        ScoringRun.objects.visible_to(user)
        .filter(pk=run_id)
        .select_related("project", "release", "endpoint", "created_by")
        .first()
    )
    if run is None or slug not in (None, run.project.slug):
        raise NotFound(f"No scoring run {run_id} that you may see.")
    return run


def predictions_of(*, user: AbstractBaseUser, run: ScoringRun) -> QuerySet[Prediction]:
    """A run's predictions in the release's order (the index on run and position) with their items (gold
    answers): gold readers only."""
    if not can_read_gold(user=user, project=run.project):
        raise NotPermitted(GOLD_REFUSAL)
    return (
        Prediction.objects.visible_to(user)
        .filter(run=run)
        .order_by("position")
        .select_related("item")
        .prefetch_related("error_tags__tagged_by")
    )


def predictions_page(*, user: AbstractBaseUser, run: ScoringRun, wrong_only: bool, page: str | int | None) -> Page:
    """One page (PREDICTIONS_PER_PAGE, in the release's order) of a run's predictions, or of its wrong ones, for gold
    readers; how many there are comes from the run's counts (stored once it finished), so a page of a run of 50,000
    reads 50 rows."""
    predictions = predictions_of(user=user, run=run)
    counts = run_counts(run)
    if wrong_only:
        predictions = predictions.filter(is_correct=False)
    paginator = Paginator(predictions, PREDICTIONS_PER_PAGE)
    paginator.count = counts["wrong"] if wrong_only else counts["done"]  # a cached_property, so never counted
    return paginator.get_page(page)


def prediction_get(*, user: AbstractBaseUser, prediction_id: int, slug: str | None = None) -> Prediction:
    """One prediction of a run the user may see (of the project `slug` names, on a page), if the user may read gold
    answers."""
    prediction = (
        Prediction.objects.visible_to(user)
        .filter(pk=prediction_id)
        .select_related("run__project", "run__release", "run__endpoint", "item")
        .first()
    )
    if prediction is None:
        raise NotFound(f"No prediction {prediction_id} that you may see.")
    if not can_read_gold(user=user, project=prediction.run.project):
        raise NotPermitted(GOLD_REFUSAL)
    if slug not in (None, prediction.run.project.slug):
        raise NotFound(f"No prediction {prediction_id} in this project.")
    return prediction


def endpoints_for(*, user: AbstractBaseUser, project: Project) -> QuerySet[ModelEndpoint]:
    """Endpoints usable in a project (its own and the global ones), for whoever may see them (curation.visibility);
    a project the user is not in is not found."""
    selectors.project_get(user=user, slug=project.slug)
    return ModelEndpoint.objects.visible_to(user, project=project)


def judge_for(*, user: AbstractBaseUser, project: Project, judge_id: int | None) -> ModelEndpoint | None:
    """The judge endpoint a run or an upload names (None when it names none), among those `user` may run."""
    if judge_id is None:
        return None
    judge = endpoints_for(user=user, project=project).filter(pk=judge_id).first()
    if judge is None:
        raise InvalidInput("No such judge endpoint in this project.", detail={"field": "judge"})
    return judge


def error_distribution(run: ScoringRun) -> dict[str, dict[str, int]]:
    """Tagged error types of a run's predictions, split by short-form and free-form answers (SciTaT figure 6)."""
    split: dict[str, Counter[str]] = {"short_form": Counter(), "free_form": Counter()}
    # Counted in the database, a row per (kind, label, form): the page reads the tallies, not every tag's prediction.
    tallies = (
        ErrorTag.objects.filter(prediction__run=run)
        .values_list("kind", "custom_label", "prediction__metrics__short_form")
        .annotate(tags=Count("id"))
        .order_by("kind", "custom_label")
    )
    for kind, custom_label, short_form, tags in tallies:
        split["short_form" if short_form else "free_form"][ErrorTag.label_of(kind, custom_label)] += tags
    return {form: dict(counts.most_common()) for form, counts in split.items()}


def error_sample_report(*, user: AbstractBaseUser | None, run: ScoringRun) -> dict[str, Any] | None:
    """The run's newest error sample (SciTaT §4.4) with the distribution of its tagged error types and its sample
    size — aggregates every member may read — and, for gold readers only (`user=None`: an operator command), the
    sampled predictions to tag."""
    sample = ErrorSample.objects.filter(run=run).select_related("drawn_by").first()
    if sample is None:
        return None
    ids = [*sample.free_form, *sample.short_form]
    labels: dict[int, list[str]] = {}
    for tag in ErrorTag.objects.filter(prediction_id__in=ids):
        labels.setdefault(tag.prediction_id, []).append(tag.label)
    drawn = {field: getattr(sample, field) for form in error_analysis.FORMS for field in (form, f"{form}_errors")}
    report: dict[str, Any] = {
        "seed": sample.seed,
        "per_form": sample.per_form,
        "drawn_at": sample.drawn_at,
        "drawn_by": sample.drawn_by.username if sample.drawn_by else "",
        "distribution": error_analysis.error_distribution(drawn, labels),
        "predictions": None,
    }
    if user is None or can_read_gold(user=user, project=run.project):
        by_id = {p.pk: p for p in Prediction.objects.filter(pk__in=ids).select_related("item")}
        report["predictions"] = {
            form: [
                {"prediction": by_id[pk], "label": error_analysis.prediction_label(labels.get(pk, []))}
                for pk in getattr(sample, form)
                if pk in by_id
            ]
            for form in error_analysis.FORMS
        }
    return report


def run_record(run: ScoringRun) -> dict[str, Any]:
    """A run as the comparison reads it: its whole configuration (comparison.IDENTITY) and its results. An uploaded
    file counts as the method, setting, n-shot and tool set it was declared to come from."""
    options = run.options or {}
    return {
        "run_id": run.pk,
        "created_at": run.created_at.isoformat() if run.created_at else "",
        # Runs group by the model they called (the endpoint's model); an upload has only its label to go by.
        "model": (run.endpoint.model if run.endpoint_id and run.endpoint.model else run.label),
        "label": run.label,
        "method": options.get("reported_method") or run.method,  # run_create records it for uploads only
        "setting": run.setting,
        "few_shot": int(options.get("few_shot") or 0),
        "tools": options.get("tools") or "all",
        # An uploaded file's prompts are not ours to know; a run's are the sha256 of the texts it used.
        "prompt": (run.template_hash or "")[:7] if run.method != ScoringRun.Method.UPLOAD else "",
        "scale_mode": options.get("scale_mode") or "predicted",
        "extraction": options.get("extraction") or "default",
        "results": run.results or {},
    }


def comparison(*, user: AbstractBaseUser, release: Release) -> dict[str, Any]:
    """Completed runs of a release laid out as the published tables (scoring/runs/comparison.py), each cell keyed by
    a run's whole configuration. Aggregates only, so every member may read it."""
    return release_comparison(runs_of(user=user, project=release.project, release=release))


def release_comparison(runs: QuerySet[ScoringRun]) -> dict[str, Any]:
    """The comparison of the completed runs among `runs` (already scoped: the selector above, or an operator's
    command, which sees every run of the release)."""
    completed = runs.filter(status=ScoringRun.Status.COMPLETED).select_related("endpoint").order_by("created_at", "id")
    records = [run_record(run) for run in completed]
    return {"runs": len(records), "tables": comparison_tables(records)}


def comparison_file(*, user: AbstractBaseUser, release: Release, table: str, file_format: str) -> tuple[str, str]:
    """(file name, text) of one comparison table as CSV or LaTeX, for every member; unknown names are not found."""
    if table not in TABLES:
        raise NotFound(f"No comparison table {table!r}; the tables are {', '.join(TABLES)}.")
    if file_format not in table_formats.FORMATS:
        raise NotFound(f"No format {file_format!r}; the formats are {', '.join(table_formats.FORMATS)}.")
    tables = comparison(user=user, release=release)["tables"]
    name = f"{release.project.slug}-release-{release.pk}-{table}.{file_format}"
    return name, table_formats.table_render(tables[table], file_format)


def prediction_page(*, user: AbstractBaseUser, prediction: Prediction) -> dict[str, Any]:
    """Around one prediction the viewer may read: its error tags, the viewer's own tag, the wrong ones either side."""
    wrong = Prediction.objects.visible_to(user).filter(run=prediction.run, is_correct=False)
    return {
        "tags": prediction.error_tags.select_related("tagged_by"),
        "my_tag": prediction.error_tags.filter(tagged_by=user).first(),
        "my_label": prediction.labels.filter(labelled_by=user).first(),
        "next_wrong": wrong.filter(position__gt=prediction.position).order_by("position").first(),
        "previous_wrong": wrong.filter(position__lt=prediction.position).order_by("-position").first(),
    }
