"""Pages that move work in and out without a release: import external drafts, export work in progress."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse

from curation import selectors
from curation.exchange.draft_import import drafts_import
from curation.exchange.work_export import FORMATS, work_export
from curation.models import Batch
from curation.page_errors import FORM_ERRORS, form_error_add
from curation.states import Status
from curation.uploads import upload_read


class DraftImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL or CSV, UTF-8")
    file_format = forms.ChoiceField(choices=[("jsonl", "JSON lines"), ("csv", "CSV")], label="Format")
    batch = forms.TypedChoiceField(coerce=int, empty_value=None, required=False, label="Into batch")

    def __init__(self, *args: object, batches: list[Batch], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["batch"].choices = [("", "the batch of each context")] + [
            (b.pk, f"{b.name} ({b.state})") for b in batches if b.state != Batch.State.CLOSED
        ]


class WorkExportForm(forms.Form):
    file_format = forms.ChoiceField(choices=[(f, f.upper()) for f in FORMATS], label="Format")
    status = forms.MultipleChoiceField(
        choices=Status.choices, required=False, widget=forms.CheckboxSelectMultiple, help_text="none ticked: all"
    )
    batch = forms.TypedChoiceField(coerce=int, empty_value=None, required=False)

    def __init__(self, *args: object, batches: list[Batch], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["batch"].choices = [("", "every batch")] + [(b.pk, b.name) for b in batches]


@login_required
def draft_import(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.managed_project_get(user=request.user, slug=slug, action="import drafts")
    batches = list(selectors.batches_visible_to(request.user, project))
    form = DraftImportForm(request.POST or None, request.FILES or None, batches=batches)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            created = drafts_import(
                project=project,
                actor=request.user,
                content=upload_read(upload),
                file_format=form.cleaned_data["file_format"],
                source_name=upload.name,
                batch_id=form.cleaned_data["batch"],
            )
        except FORM_ERRORS as exc:
            problems = exc.detail.get("errors") or []
            if not problems:
                form_error_add(form, exc)
        else:
            messages.success(
                request,
                f"{len(created)} draft{pluralize(len(created))} imported from {upload.name}; "
                f"{pluralize(len(created), 'it waits,they wait')} in the queue.",
            )
            return redirect(f"{reverse('instances', args=[project.slug])}?status=drafted")
    return render(request, "curation/draft_import.html", {"project": project, "form": form, "problems": problems})


@login_required
def work_export_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    batches = list(selectors.batches_visible_to(request.user, project))
    form = WorkExportForm(request.GET or None, batches=batches)
    if request.GET and form.is_valid():
        try:
            export = work_export(
                user=request.user,
                project=project,
                file_format=form.cleaned_data["file_format"],
                statuses=form.cleaned_data["status"],
                batch_id=form.cleaned_data["batch"],
            )
        except FORM_ERRORS as exc:
            form_error_add(form, exc)
        else:
            response = StreamingHttpResponse(export.lines, content_type=export.content_type)
            response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
            return response
    return render(request, "curation/work_export.html", {"project": project, "form": form})
