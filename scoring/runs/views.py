"""Pages of scoring: start a run from a release, the run page (live progress, results, charts, errors), a
prediction's drill-down with error tagging, the comparison across runs, uploads of prediction files, exports."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from curation import selectors
from curation.charts import bar_chart, colour, grouped_chart
from curation.page_errors import FORM_ERRORS, form_given, page_input, problems_said, service_attempt
from curation.queues import waiting_label
from curation.releases import selectors as release_selectors
from curation.templatetags.readable import answer_form
from scoring.methods.templates import DEFAULT_TEMPLATES
from scoring.methods.toolloop import MAX_TURNS_LIMIT
from scoring.metrics import benchmarks
from scoring.metrics.aggregate import interval_text
from scoring.metrics.error_analysis import MAX_PER_FORM
from scoring.metrics.error_analysis import PER_FORM as ERROR_SAMPLE_PER_FORM
from scoring.runs import lifecycle as run_lifecycle
from scoring.runs import predictions as prediction_services
from scoring.runs import progress as runs_progress
from scoring.runs import selectors as scoring_selectors
from scoring.runs import uploads as upload_services
from scoring.runs.api import (
    RUN_METHODS,
    ScoringErrorTagApi,
    ScoringOfficialFiguresApi,
    ScoringPredictionUploadApi,
    ScoringRunListApi,
    comparison_file_response,
    export_response,
    run_started,
    upload_scored,
)
from scoring.runs.comparison import SCITAT_METRICS, type_figures
from scoring.runs.creation import FEW_SHOTS, TOOL_OPTIONS
from scoring.runs.exports import release_harness_zip
from scoring.runs.forms import EXTRACTION_CHOICES, SCALE_MODE_CHOICES, ErrorSampleForm
from scoring.runs.models import ErrorSample, ErrorTag, ScoringRun
from scoring.runs.permissions import can_run, runner_require
from scoring.runs.results import FIGURES


@login_required
def release_score(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    release = release_selectors.release_get(user=request.user, release_id=pk, slug=slug)
    project = release.project
    typed, refusals = request.POST.dict(), {}
    if request.method == "POST":
        runner_require(request.user, project, "score models")
        # The API's input serializer checks the form, and the API's step starts the run.
        payload = ScoringRunListApi.ScoringRunCreateInputSerializer(data=_run_input(typed, release))
        try:
            if payload.is_valid():
                run = run_started(user=request.user, release=release, values=payload.validated_data)
                messages.success(request, f"Run {run.pk} started: {run.items_total} questions.")
                return redirect("scoring-run", slug=slug, pk=run.pk)
            for name, said in payload.errors.items():  # a generation parameter's refusal goes beside its own field
                refusals.update(said if isinstance(said, dict) else {name: said})
        except FORM_ERRORS as exc:
            refusals = {exc.detail.get("field", ""): [exc.message]}
    # Each field as typed with its refusals, so a refused start keeps what was typed and chosen; above the form each
    # refusal is said once more after its field's name (a template's, by its stage, is said there only).
    fields = {name: {"value": typed.get(name, ""), "errors": refusals.get(name, [])} for name in {*typed, *refusals}}
    refused = problems_said(refusals, {})
    endpoints = scoring_selectors.endpoints_for(user=request.user, project=project)
    context = {
        "project": project,
        "release": release,
        "may_run": can_run(user=request.user, project=project),
        "endpoints": endpoints,
        "endpoint_choices": [(str(e.pk), f"{e.name} · {e.model}") for e in endpoints],
        "methods": RUN_METHODS,
        "runs": [
            {"run": run, "waiting": waiting_label(runs_progress.run_queued_behind(run))}
            for run in scoring_selectors.runs_of(user=request.user, project=project, release=release)
        ],
        "template_fields": [
            (stage, text, fields.get(f"template_{stage}")) for stage, text in DEFAULT_TEMPLATES.items()
        ],
        "upload_formats": upload_services.UPLOAD_FORMATS,
        "fields": fields,
        "refused": refused,
        "max_turns_limit": MAX_TURNS_LIMIT,
        # One wording of the context settings and tool sets for both forms (a run's and an uploaded file's).
        "context_settings": ScoringRun.Setting.choices,
        "tool_sets": TOOL_OPTIONS.items(),
        "few_shots": [(str(n), str(n)) for n in FEW_SHOTS],
        "scale_modes": SCALE_MODE_CHOICES,
        "extraction_modes": EXTRACTION_CHOICES,
        "bertscore_models": runs_progress.BERTSCORE_MODELS.items(),
        "paper_bertscore_unavailable": runs_progress.paper_bertscore_unavailable(),
    }
    return render(request, "scoring/release_score.html", context, status=400 if refusals else 200)


def _run_input(typed: dict[str, str], release: Any) -> dict[str, Any]:
    """The run form as the API's run input: an empty field keeps its default, max tokens and temperature are
    generation parameters, and each filled `template_<stage>` a template (as the browser sent it, CRLF made LF)."""
    given = form_given(typed)
    return {
        **given,
        "release": release.pk,
        "generation_params": {name: given[name] for name in ("max_tokens", "temperature") if name in given},
        "templates": {
            stage: given[f"template_{stage}"].replace("\r\n", "\n")
            for stage in DEFAULT_TEMPLATES
            if given.get(f"template_{stage}", "").strip()
        },
    }


@login_required
def release_harness_tasks(request: HttpRequest, slug: str, pk: int) -> FileResponse:
    """The release as Inspect AI and lm-evaluation-harness tasks (a zip), for those who may score models on it."""
    release = release_selectors.release_get(user=request.user, release_id=pk, slug=slug)
    runner_require(request.user, release.project, "score models")
    out = tempfile.NamedTemporaryFile(suffix=".zip")  # removed when the response closes it
    release_harness_zip(release, Path(out.name))
    return FileResponse(out, as_attachment=True, filename=f"{release.label}-harness-tasks.zip")


@login_required
def release_upload(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    release = release_selectors.release_get(user=request.user, release_id=pk, slug=slug)
    if request.method != "POST":
        return redirect("release-score", slug=slug, pk=pk)
    # The API's input serializer checks the form (an empty field keeps its default).
    given = {**form_given(request.POST), **request.FILES.dict()}
    values = page_input(ScoringPredictionUploadApi.PredictionUploadInputSerializer, {**given, "release": release.pk})
    run = upload_scored(user=request.user, release=release, values=values)
    messages.success(request, f"{values['file'].name} scored against {release.label}.")
    return redirect("scoring-run", slug=slug, pk=run.pk)


def _run_context(request: HttpRequest, run: ScoringRun) -> dict[str, Any]:
    results = run.results or {}
    figures = results.get("figures", {})
    breakdowns = results.get("breakdowns", {})
    by_type = type_figures({"results": results})
    errors = scoring_selectors.error_distribution(run)
    may_see = release_selectors.can_read_gold(user=request.user, project=run.project)
    wrong_only = request.GET.get("wrong") == "1"
    predictions = None
    if may_see:
        predictions = scoring_selectors.predictions_page(
            user=request.user, run=run, wrong_only=wrong_only, page=request.GET.get("page")
        )
    modes, other_options = _modes(run)
    notes: dict[str, int] = {}  # filled in the order the tables show their cells
    headline = [(figure["label"], figure) for figure in (results.get("headline") or {}).get("figures", [])]
    listed = [(label, figures[key]) for key, label in FIGURES.items() if key in figures]
    headline_rows, figure_rows = (
        [(label, _estimate_cell(estimate, notes), (estimate or {}).get("count")) for label, estimate in estimates]
        for estimates in (headline, listed)
    )
    breakdown_tables = [
        (
            attribute.replace("_", " "),
            [
                (
                    answer_form(name) if attribute == "answer_form" else name,
                    values.get("count"),
                    *(_estimate_cell(values.get(key), notes) for key, _ in SCITAT_METRICS),
                )
                for name, values in groups.items()
            ],
        )
        for attribute, groups in breakdowns.items()
    ]
    return {
        "project": run.project,
        "run": run,
        "progress": runs_progress.run_progress(run),
        "may_run": can_run(user=request.user, project=run.project),
        "may_see": may_see,
        "results": results,
        "headline_rows": headline_rows,
        "figure_rows": figure_rows,
        "judge_agreement": prediction_services.judge_agreement(run),
        "breakdown_tables": breakdown_tables,
        "interval_notes": list(notes),
        "type_chart": grouped_chart(by_type, series=SCITAT_METRICS) if by_type else None,
        "error_charts": {form: bar_chart(counts) for form, counts in errors.items() if counts},
        "predictions": predictions,
        "wrong_only": wrong_only,
        "legend": [(label, colour(i)) for i, (_, label) in enumerate(SCITAT_METRICS)],
        "modes": modes,
        "other_options": other_options,
        "error_sample": scoring_selectors.error_sample_report(user=request.user, run=run),
        "error_sample_per_form": ERROR_SAMPLE_PER_FORM,
        "error_sample_max": MAX_PER_FORM,
    }


def _estimate_cell(estimate: dict[str, Any] | None, notes: dict[str, int]) -> dict[str, Any]:
    """An estimate as a table cell: its figure and interval, and, when it has a note (no interval, or one over
    questions), the note as the cell's title and its number among `notes`, which the page lists once."""
    note = (estimate or {}).get("note") or ""
    return {
        "text": interval_text(estimate, with_note=False),
        "note": note,
        "mark": notes.setdefault(note, len(notes) + 1) if note else None,
    }


def _modes(run: ScoringRun) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The run's recorded modes, as a person reads them (one row each), and the rest of its options: an option is
    shown once, in its row or among the rest, never both (the options said "extraction default" above the
    "Answer extraction: lenient" row)."""
    options = run.options or {}
    shown = {"scale_mode", "extraction", "bertscore", "sample", "judge"}  # the last two are recorded only when set
    info = (run.results or {}).get("bertscore_info") or {}
    choices = {**dict(SCALE_MODE_CHOICES), **dict(EXTRACTION_CHOICES), **runs_progress.BERTSCORE_MODELS}
    bertscore = choices.get(options.get("bertscore", "minilm"), "")
    if info:
        bertscore = f"{info.get('model')}, layer {info.get('layer')} ({info.get('metric')})"
    rows = [
        ("Scale", choices.get(options.get("scale_mode", "predicted"), "")),
        ("Answer extraction", choices.get(options.get("extraction", "default"), "")),
        ("BERTScore model", bertscore),
    ]
    if sample := options.get("sample"):
        rows.append(("Sample", f"{sample['per_template']} answerable questions per template, seed {sample['seed']}"))
    if options.get("abstention"):
        rows.append(("Abstention", "offered: the prompts say to answer “Not answerable” when the context lacks it"))
        shown.add("abstention")
    if run.method == ScoringRun.Method.TOOL:
        turns = f"{options.get('max_turns')} turns"
        if options.get("max_turns_from") == "longest_program":
            turns += f" (longest program: {options.get('longest_program')} calls, + final answer and spares)"
        rows.append(("Turn limit", f"{turns}; tools: {options.get('tools', 'all')}, {options.get('few_shot', 0)}-shot"))
        shown |= {"max_turns", "max_turns_from", "longest_program", "tools", "few_shot"}
    if judge := options.get("judge"):
        rows.append(("Judge of free-form answers", f"{judge['model']}, with the project's rubric"))
    return rows, {key: value for key, value in options.items() if key not in shown}


@login_required
def run_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    run = scoring_selectors.run_get(user=request.user, run_id=pk, slug=slug)
    if request.method == "POST" and request.POST.get("action") == "draw-error-sample":
        return _draw_error_sample(request, run)
    if request.method == "POST":
        action = request.POST.get("action", "")
        if action not in run_lifecycle.RUN_ACTIONS:
            raise Http404("Unknown action.")
        run_lifecycle.RUN_ACTIONS[action](run=run, actor=request.user)
        messages.success(request, f"Run {run.pk}: {action.replace('-', ' ')} done.")
        return redirect("scoring-run", slug=slug, pk=pk)
    return render(request, "scoring/run.html", _run_context(request, run))


def _draw_error_sample(request: HttpRequest, run: ScoringRun) -> HttpResponse:
    def draw() -> ErrorSample:
        values = page_input(ErrorSampleForm, request.POST)
        per_form = values["per_form"] or ERROR_SAMPLE_PER_FORM
        return prediction_services.error_sample_draw(
            run=run, actor=request.user, seed=values["seed"], per_form=per_form
        )

    if sample := service_attempt(request, draw):
        drawn = len(sample.free_form) + len(sample.short_form)
        messages.success(request, f"Error sample drawn (seed {sample.seed}): {drawn} predictions to tag.")
    return redirect(f"{reverse('scoring-run', args=[run.project.slug, run.pk])}#error-analysis")


@login_required
def run_progress_fragment(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    run = scoring_selectors.run_get(user=request.user, run_id=pk, slug=slug)
    response = render(request, "scoring/_run_progress.html", {"run": run, "progress": runs_progress.run_progress(run)})
    if not run.is_active:  # the run stopped: reload the whole page once so its results appear
        response["HX-Refresh"] = "true"
    return response


@login_required
def run_export(request: HttpRequest, slug: str, pk: int, export_format: str) -> HttpResponse:
    run = scoring_selectors.run_get(user=request.user, run_id=pk, slug=slug)
    return export_response(user=request.user, run=run, export_format=export_format)


@login_required
def prediction_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    prediction = scoring_selectors.prediction_get(user=request.user, prediction_id=pk, slug=slug)
    if request.method == "POST":

        def save() -> ErrorTag | int:  # the same input serializer as the API's PUT of a tag; "clear" is its DELETE
            tag = page_input(ScoringErrorTagApi.ErrorTagInputSerializer, request.POST)
            if tag["kind"] == "clear":
                return prediction_services.error_tag_clear(prediction=prediction, actor=request.user)
            return prediction_services.error_tag_set(prediction=prediction, actor=request.user, **tag)

        service_attempt(request, save, "Error type saved.")
        return redirect("scoring-prediction", slug=slug, pk=pk)
    context = {
        "project": prediction.run.project,
        "run": prediction.run,
        "prediction": prediction,
        "stages": _stages(prediction.stages or {}),
        "item": prediction.item.data,
        "kinds": ErrorTag.Kind.choices,
        **scoring_selectors.prediction_page(user=request.user, prediction=prediction),
        "judged": (prediction.stages or {}).get("judge"),
    }
    return render(request, "scoring/prediction.html", context)


@login_required
@require_POST
def prediction_label(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """A member says whether a free-form prediction is correct (the judge's agreement is measured on these)."""
    prediction = scoring_selectors.prediction_get(user=request.user, prediction_id=pk, slug=slug)
    label = functools.partial(prediction_services.prediction_label_set, prediction=prediction, actor=request.user)
    # Who may not label is refused (403), not told on the page.
    is_correct = request.POST.get("is_correct") == "yes"
    service_attempt(request, lambda: label(is_correct=is_correct), "Your reading of this answer is saved.")
    return redirect("scoring-prediction", slug=slug, pk=pk)


# How a prediction's answer was read, as a person reads it: the recorded flags and counts by name, then each
# intermediate model call (CaR's reasoner, the calculator step) with its prompt and output.
STAGE_LABELS = {
    "rule": "Answer read by rule",
    "is_parsed": "Answer found in the output",
    "requests": "Model requests",
    "json_schema": "Answer schema sent to the model",
}


def _stages(stages: dict[str, Any]) -> dict[str, list[tuple[str, Any]]]:
    facts, steps = [], []
    for key, value in stages.items():
        if key == "judge":
            continue  # shown on its own, beside the labels
        if isinstance(value, dict):
            steps.append((key.replace("_", " ").capitalize(), {**value, "prompt": _prompt_text(value.get("prompt"))}))
            continue
        shown = ("yes" if value else "no") if isinstance(value, bool) else "—" if value in ("", None) else value
        facts.append((STAGE_LABELS.get(key, key.replace("_", " ").capitalize()), shown))
    return {"facts": facts, "steps": steps}


def _prompt_text(prompt: Any) -> str:
    """A recorded prompt as text: chat messages one after the other under their role, anything else as it is."""
    if isinstance(prompt, list):
        return "\n\n".join(
            f"{m.get('role', '')}:\n{m.get('content', '')}" if isinstance(m, dict) else str(m) for m in prompt
        )
    return "" if prompt is None else str(prompt)


def _comparison_charts(tables: dict[str, Any]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Figure 5 (one chart per method configuration, bars by reasoning type) and figure 2b (bars by model)."""
    by_method: dict[str, dict[str, dict[str, float | None]]] = {}
    for row in tables["figure5"]["rows"]:
        method, rtype = row["stub"][0], row["stub"][1]
        by_method.setdefault(f"{method} ({row['stub'][2]} models)", {})[rtype] = {
            key: None if cell["value"] is None else cell["value"] / 100
            for (key, _), cell in zip(SCITAT_METRICS, row["cells"], strict=True)
        }
    tool_series = (("all", "All tools"), ("data", "Data tools"))
    tools = {
        row["stub"][0]: {key: cell["value"] for (key, _), cell in zip(tool_series, row["cells"], strict=False)}
        for row in tables["figure2b"]["rows"]
    }
    return {
        "figure5": [(name, grouped_chart(groups, series=SCITAT_METRICS)) for name, groups in by_method.items()],
        "figure2b": [("Accuracy", grouped_chart(tools, series=tool_series))] if tools else [],
    }


@login_required
def release_compare(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    release = release_selectors.release_get(user=request.user, release_id=pk, slug=slug)
    comparison = scoring_selectors.comparison(user=request.user, release=release)
    tables = comparison["tables"]
    context = {
        "project": release.project,
        "release": release,
        "run_count": comparison["runs"],
        "tables": [tables[key] for key in ("table5", "table6", "table2", "figure2b", "table11", "figure5")],
        "charts": _comparison_charts(tables),
        "legend": [(label, colour(i)) for i, (_, label) in enumerate(SCITAT_METRICS)],
        "tool_legend": [(label, colour(i)) for i, label in enumerate(("All tools", "Data tools"))],
    }
    return render(request, "scoring/compare.html", context)


@login_required
def release_compare_file(request: HttpRequest, slug: str, pk: int, table: str, file_format: str) -> HttpResponse:
    release = release_selectors.release_get(user=request.user, release_id=pk, slug=slug)
    return comparison_file_response(user=request.user, release=release, table=table, file_format=file_format)


@login_required
def official_figures(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    figures = None
    if request.method == "POST":  # the API's input serializer checks the form, the API's step scores the pair
        given = {**request.POST.dict(), **request.FILES.dict()}
        payload = ScoringOfficialFiguresApi.OfficialFiguresInputSerializer
        figures = service_attempt(request, lambda: upload_services.official_figures(**page_input(payload, given)))
    return render(
        request, "scoring/official.html", {"project": project, "figures": figures, "benchmarks": benchmarks.FORMATS}
    )
