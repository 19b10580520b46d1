"""Pages of releases: list and cut (managers), release statistics with charts, downloads, dataset import upload."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.http import require_POST

from curation import selectors
from curation.charts import bar_chart
from curation.datasets import jobs as dataset_jobs
from curation.datasets import services as dataset_services
from curation.datasets.formats import FORMATS
from curation.datasets.models import ImportJob
from curation.errors import InvalidInput
from curation.exports import EXPORT_FORMATS
from curation.exports.statistics import presented, settings_rows, table3_rows
from curation.models import Project
from curation.page_errors import FORM_ERRORS, page_input, service_attempt
from curation.releases import near_duplicates
from curation.releases import selectors as release_selectors
from curation.releases.api import ImportUploadSerializer, ReleaseCutSerializer
from curation.releases.models import ReleaseCut
from curation.releases.services import cut as cut_services
from curation.releases.services import exports as export_services
from curation.states import RUN_ROLES, Role
from curation.uploads import upload_read


def _project(request: HttpRequest, slug: str) -> tuple[Project, set[str]]:
    project = selectors.project_get(user=request.user, slug=slug)
    return project, selectors.roles_of(user=request.user, project=project)


@login_required
def release_list(request: HttpRequest, slug: str) -> HttpResponse:
    project, roles = _project(request, slug)
    is_manager = Role.MANAGER in roles
    refusal = ""
    if request.method == "POST":
        if not is_manager:
            raise PermissionDenied("Only a manager of this project may cut releases.")
        given = request.POST.copy()
        # The batches besides the ticked boxes, as `release_cut_request` reads them: "all" when the manager chose
        # every batch with validated instances, and the typed numbers and ranges (both, if both were given: the
        # service refuses that with a message).
        typed = request.POST.get("batch_range", "")
        is_all = request.POST.get("scope") == cut_services.ALL_BATCHES
        given["batches"] = f"{cut_services.ALL_BATCHES}, {typed}" if is_all else typed
        try:  # the API's input serializer checks the form
            values = page_input(ReleaseCutSerializer, given)
            result = cut_services.release_cut_request(project=project, actor=request.user, **values)
        except InvalidInput as exc:
            refusal = exc.message
        else:
            if isinstance(result, ReleaseCut):
                messages.success(
                    request, f"Release {result.name} is being cut on a worker: {result.items_total} instances."
                )
                return redirect("releases", slug=project.slug)
            messages.success(
                request,
                f"Release {result.label} cut: {result.item_count} instance{pluralize(result.item_count)} frozen.",
            )
            return redirect("release", slug=project.slug, pk=result.pk)
    batches = release_selectors.batches_to_release(user=request.user, project=project) if is_manager else None
    near = release_selectors.near_duplicates_of(user=request.user, project=project) if is_manager else None
    cuts = list(release_selectors.release_cuts_of(user=request.user, project=project))
    context = {
        "project": project,
        "roles": roles,
        "is_manager": is_manager,
        "releases": release_selectors.releases_of(user=request.user, project=project),
        "cuts": cuts,
        "cuts_active": any(c.state != ReleaseCut.State.FAILED for c in cuts),
        "batches": batches,
        "near": near,
        # What a refused cut asked for, shown again on the form with the refusal, so the manager corrects it rather
        # than starting over.
        "refusal": refusal,
        "asked": {
            **request.POST.dict(),  # the typed texts: name, batch numbers, split seed, description, …
            "scope": request.POST.get("scope", cut_services.ALL_BATCHES),
            "batch_ids": request.POST.getlist("batch_ids"),
            "include_withheld": request.POST.get("include_withheld") == "on",
        },
    }
    return render(request, "curation/releases.html", context)


@login_required
@require_POST
def near_duplicates_check(request: HttpRequest, slug: str) -> HttpResponse:
    """Run the near-duplicate check now (managers), at the threshold typed on the releases page."""
    project, _ = _project(request, slug)
    try:
        threshold = float(request.POST.get("threshold", ""))
    except ValueError:
        messages.error(request, "The threshold is a similarity between 0.5 and 1, such as 0.9.")
        return redirect(f"{reverse('releases', kwargs={'slug': slug})}#near-duplicates")
    check = service_attempt(
        request,
        lambda: near_duplicates.near_duplicates_check(project=project, actor=request.user, threshold=threshold),
    )
    if check is not None:
        found = check.compared["found"]
        messages.success(
            request,
            f"Checked {check.compared['candidates']} validated questions against {check.compared['references']} "
            f"others in {check.seconds:.1f} s: {found} near-duplicate{pluralize(found)}.",
        )
    return redirect(f"{reverse('releases', kwargs={'slug': slug})}#near-duplicates")


@login_required
@require_POST
def near_duplicates_withhold(request: HttpRequest, slug: str) -> HttpResponse:
    """Withhold exactly the ticked near-duplicates from cuts (managers)."""
    project, _ = _project(request, slug)
    ticked = [int(pk) for pk in request.POST.getlist("withhold") if pk.isdigit()]
    count = service_attempt(
        request,
        lambda: near_duplicates.near_duplicates_withhold(project=project, actor=request.user, withheld_ids=ticked),
    )
    if count is not None:
        messages.success(request, f"{count} near-duplicate{pluralize(count)} withheld from cuts.")
    return redirect(f"{reverse('releases', kwargs={'slug': slug})}#near-duplicates")


@login_required
def release_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    release = release_selectors.release_get(user=request.user, release_id=pk, slug=slug)
    stats = presented(release.statistics)
    reasoning = stats.get("reasoning_type", {})
    charts = {
        **{key: bar_chart(stats.get(key, {})) for key in ("answer_type", "answer_source", "scale")},
        "reasoning_type": bar_chart(reasoning, labels={k: v["name"] for k, v in reasoning.items()}),
        "answer_length": bar_chart(stats.get("answer_length", {}).get("buckets", {})),
    }
    sources, table3 = table3_rows(stats)
    labels = (
        "Questions",
        "Papers",
        "Avg. tables",
        "Avg. cells per table",
        "Avg. paragraphs",
        "Avg. |paragraph| (words)",
    )
    context = {
        "project": release.project,
        "release": release,
        "stats": stats,
        "charts": charts,
        "settings_rows": settings_rows(stats, labels),
        "table3_sources": sources,
        "table3_rows": table3,
        "can_download": release_selectors.can_read_gold(user=request.user, project=release.project),
        "can_score": bool(selectors.roles_of(user=request.user, project=release.project) & RUN_ROLES),
        "newer": release_selectors.newer_release(user=request.user, release=release),
    }
    return render(request, "curation/release.html", context)


@login_required
def release_downloads(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    release = release_selectors.release_gold_get(user=request.user, release_id=pk, slug=slug)
    if request.method == "POST":
        try:
            artifact = export_services.export_request(
                release=release, actor=request.user, format=request.POST.get("format", "")
            )
        except FORM_ERRORS as exc:
            messages.error(request, exc.message)
        else:
            named = EXPORT_FORMATS[artifact.format].split(" (")[0]  # "SciTaT JSON", without its explanation
            if artifact.state == "ready":
                messages.success(request, f"The {named} export is ready.")
            else:
                messages.info(request, f"The {named} export is being written by a worker.")
        return redirect("release-downloads", slug=slug, pk=pk)
    artifacts = release_selectors.exports_of(release=release)
    rows = [{"format": fmt, "label": label, "artifact": artifacts.get(fmt)} for fmt, label in EXPORT_FORMATS.items()]
    return render(
        request, "curation/release_downloads.html", {"project": release.project, "release": release, "rows": rows}
    )


@login_required
def release_download_file(request: HttpRequest, slug: str, pk: int, format: str) -> FileResponse:
    release = release_selectors.release_gold_get(user=request.user, release_id=pk, slug=slug)
    path = export_services.export_file(release=release, format=format)
    return FileResponse(path.open("rb"), as_attachment=True, filename=f"{release.label}-{format}.zip")


@login_required
def dataset_import_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.managed_project_get(user=request.user, slug=slug, action="import datasets")
    if request.method == "POST" and request.POST.get("action") == "dismiss":
        number = request.POST.get("job", "")
        job = release_selectors.import_job_get(user=request.user, job_id=int(number) if number.isdigit() else 0)
        service_attempt(
            request,
            lambda: dataset_jobs.import_job_dismiss(job=job, actor=request.user),
            f"The failed import of {job.source_name} was dismissed.",
        )
        return redirect("dataset-import", slug=project.slug)
    if request.method == "POST":
        try:
            values = page_input(ImportUploadSerializer, {**request.POST.dict(), **request.FILES.dict()})
            upload = values["file"]
            result = dataset_jobs.dataset_import_request(
                project=project,
                actor=request.user,
                format=values["format"],
                source_name=upload.name,
                content=upload_read(upload),
                as_release=values["as_release"],
            )
        except FORM_ERRORS as exc:
            messages.error(request, exc.message)
        else:
            if isinstance(result, ImportJob):
                messages.success(
                    request,
                    f"{upload.name} is being imported on a worker: {result.questions_total} questions. "
                    "Its progress is below; the import appears under Past imports when it is done.",
                )
                return redirect("dataset-import", slug=project.slug)
            counts = result.record.counts
            if result.created:
                messages.success(request, f"Imported {dataset_services.import_counts_text(counts)} from {upload.name}.")
                for note in result.record.notes:
                    messages.info(request, note)
            else:
                messages.info(request, f"{upload.name} was imported before (same sha256); nothing was written.")
            if result.release is not None:
                return redirect("release", slug=project.slug, pk=result.release.pk)
            return redirect("dataset-import", slug=project.slug)
    jobs = list(release_selectors.import_jobs_visible_to(user=request.user, project=project))
    context = {
        "project": project,
        "imports": release_selectors.imports_visible_to(user=request.user, project=project),
        "jobs": jobs,
        "jobs_active": any(job.state != ImportJob.State.FAILED for job in jobs),
        "async_min": settings.TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS,
        "formats": FORMATS,
    }
    return render(request, "curation/imports.html", context)
