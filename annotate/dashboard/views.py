"""The manager's dashboard page: progress, throughput, people, time and pay, with CSV downloads."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotate.agreement import selectors as agreement_selectors
from annotate.dashboard import figures as dashboard
from annotate.dashboard import services as pay_services
from annotate.dashboard.api import PaySettingsSerializer, csv_response
from annotate.dashboard.draft_costs import draft_costs_of
from annotate.dashboard.edit_costs import DIMENSION_LABELS, FIELD_LABELS, FIELDS, chart_rows
from annotate.quality import selectors as quality_selectors
from annotate.quality.drift import DRIFT_PEOPLE_PER_PAGE, DRIFT_WINDOW_WEEKS, drift_of, drift_window
from annotate.quality.drift import LABELS as DRIFT_LABELS
from annotate.quality.drift import SERIES as DRIFT_SERIES
from annotate.review import selectors as review_selectors
from curation import charts
from curation.batches import services as batch_flow
from curation.errors import InvalidInput
from curation.models import Project
from curation.page_errors import page_input, service_attempt
from curation.selectors import project_get


def _day(request: HttpRequest, name: str) -> date | None:
    """A date from the query string; anything else is no date (the page's default)."""
    try:
        return date.fromisoformat(request.GET.get(name, ""))
    except ValueError:
        return None


def _period(request: HttpRequest) -> tuple[date | None, date | None]:
    return _day(request, "start"), _day(request, "end")


@login_required
def dashboard_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The manager's dashboard: batch progress, throughput, people, time and pay, with CSV downloads."""
    project = project_get(user=request.user, slug=slug)
    dashboard.require_manager(user=request.user, project=project)
    if request.method == "POST":
        service_attempt(  # the API's input serializer checks the form
            request,
            lambda: pay_services.pay_settings_set(
                project=project, actor=request.user, **page_input(PaySettingsSerializer, request.POST)
            ),
            "Pay rate saved.",
        )
        return redirect(f"{request.path}?{request.GET.urlencode()}")
    batch_flow.batches_advance(project=project)
    start, end = _period(request)
    data = dashboard.dashboard_data(user=request.user, project=project, start=start, end=end)
    # The API and the CSV keep every batch and week; the page shows a page of batches and a window of weeks.
    progress_page, progress = dashboard.batch_progress_page(project, request.GET.get("page"))
    last_week = _day(request, "drift_until")
    weeks = None if request.GET.get("drift_weeks") == "all" else DRIFT_WINDOW_WEEKS

    def window() -> dict[str, Any]:
        history = dashboard.project_figures(project, "drift", lambda: drift_of(user=request.user, project=project))
        return drift_window(history, last_week=last_week, weeks=weeks)

    # The window drawn is cached besides the whole history it is cut from: a long project's history is many times
    # the 26 weeks shown, and reading all of it back on every view grew the page with the project.
    drift = dashboard.project_figures(project, "drift-window", window, last_week, weeks)
    # A chart per annotator: a page of them at once (40 annotators over 26 weeks drew 300 kB of SVG).
    drift_page = Paginator(drift["people"], DRIFT_PEOPLE_PER_PAGE).get_page(request.GET.get("drift_page"))
    context = {
        "project": project,
        **data,
        "batches": progress,
        "progress_page": progress_page,
        # Not among the cached figures: it changes when an annotator qualifies, which changes no instance.
        "round2_stranded": review_selectors.round2_stranded(user=request.user, project=project),
        "drift_window": drift,
        "drift_window_weeks": DRIFT_WINDOW_WEEKS,
        "drift_page": drift_page,
        "throughput_chart": charts.line_chart(
            data["throughput"], series=("submitted", "validated"), label=lambda row: row["date"].strftime("%m-%d")
        ),
        # The bars are named as the tables below them name their columns.
        "annotator_chart": charts.grouped_bars(
            data["annotators"],
            label="user",
            series=("refined", "validated", "round2_reviews"),
            names={"refined": "Refined", "validated": "Validated", "round2_reviews": "Round-two reviews"},
        ),
        "verifier_chart": charts.grouped_bars(
            data["verifiers"],
            label="user",
            series=("reviews", "changes_requested", "discussions_resolved"),
            names={
                "reviews": "Reviews",
                "changes_requested": "Changes requested",
                "discussions_resolved": "Discussions resolved",
            },
        ),
        "csv_tables": [(name, table.label) for name, table in dashboard.CSV_TABLES.items()],
        "settings": dashboard.pay_settings_of(project),
        **quality_selectors.gold_figures(user=request.user, project=project),
        **_agreement_section(request, project),
        "drift": [
            {
                "user": person["user"],
                "chart": charts.rate_chart(
                    person["rows"],
                    series=DRIFT_SERIES,
                    label=lambda row: row["week"].strftime("%m-%d"),
                    markers=person["markers"],
                    labels=DRIFT_LABELS,
                ),
            }
            for person in drift_page.object_list
        ],
    }
    context["draft_costs"] = _draft_cost_sections(draft_costs_of(user=request.user, project=project))
    return render(request, "annotate/dashboard/dashboard.html", context)


def _agreement_section(request: HttpRequest, project: Project) -> dict:
    """The dashboard's agreement section: the figures per batch and per annotator pair, and their chart in the
    table's scale (0–1, two decimals; κ below 0 is drawn at 0, its label gives the value)."""
    figures = agreement_selectors.agreement_figures(user=request.user, project=project)
    series = agreement_selectors.CHART_SERIES
    chart = charts.grouped_chart(
        {row["batch"]: {key: row[key] for key in series} for row in figures["batches"]},
        series=[(key, agreement_selectors.FIGURE_LABELS[key]) for key in series],
        as_percent=False,
    )
    legend = [(agreement_selectors.FIGURE_LABELS[key], charts.colour(index)) for index, key in enumerate(series)]
    return {"agreement": {**figures, "chart": chart, "legend": legend, "labels": agreement_selectors.FIGURE_LABELS}}


def _draft_cost_sections(figures: dict) -> dict:
    """The draft-edit figures with one chart per dimension: mean change per field (%) and the median refining time.
    A chart whose values are all 0 is left out (`changed` / `timed` false): the page says so instead."""
    labels = [FIELD_LABELS[name] for name in FIELDS]
    sections = []
    for dimension, groups in figures["dimensions"].items():
        rows = chart_rows(groups)
        sections.append(
            {
                "dimension": dimension,
                "label": DIMENSION_LABELS[dimension],
                "groups": groups,
                "changed": any(row[label] for row in rows for label in labels),
                "timed": any(row["median seconds"] for row in rows),
                "chart": charts.grouped_bars(rows, label="group", series=labels),
                "time_chart": charts.grouped_bars(rows, label="group", series=("median seconds",)),
            }
        )
    return {**figures, "field_labels": labels, "sections": sections}


@login_required
def dashboard_csv(request: HttpRequest, slug: str, table: str) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    start, end = _period(request)
    try:
        return csv_response(user=request.user, project=project, table=table, start=start, end=end)
    except InvalidInput as exc:
        # The table is part of this page's path: an unknown one is no page (the API answers 400 for its query).
        raise Http404(exc.message) from exc
