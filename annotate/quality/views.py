"""Pages of hidden gold: the probe page (as a draft looks) and the managers' settings and restore forms."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.quality import selectors as quality_selectors
from annotate.quality import services as quality_services
from annotate.quality.api import QualitySettingsSerializer
from curation import selectors
from curation.page_errors import form_problems


class ProbeForm(forms.Form):
    answer = forms.CharField(widget=forms.Textarea, max_length=60_000)
    rationale = forms.CharField(widget=forms.Textarea, required=False, max_length=10_000)


@login_required
def probe_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The item the queue served: question and context, an answer to give; submitting takes the next item."""
    project = selectors.project_get(user=request.user, slug=slug)
    data = quality_selectors.probe_shown(user=request.user, probe_id=pk)
    if data["project"].pk != project.pk:
        raise Http404("No such item in this project.")
    form = ProbeForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            answer = [line.strip() for line in form.cleaned_data["answer"].splitlines() if line.strip()]
            quality_services.probe_submit(
                probe_id=pk, user=request.user, answer=answer, rationale=form.cleaned_data["rationale"]
            )
            messages.success(request, "Submitted. Thank you — take the next one when you are ready.")
            return redirect("work-home", slug=slug)
        messages.error(request, form_problems(form))
    return render(request, "annotate/quality/probe.html", {**data, "form": form})


@login_required
@require_POST
def quality_settings_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The dashboard's hidden-gold form (managers); the API's input serializer checks it."""
    project = selectors.project_get(user=request.user, slug=slug)
    values = request.POST.copy()
    values["is_pause_on_fail"] = "true" if request.POST.get("is_pause_on_fail") else "false"
    payload = QualitySettingsSerializer(data=values)
    if not payload.is_valid():
        messages.error(request, form_problems(payload))
    else:
        quality_services.quality_configure(project=project, actor=request.user, **payload.validated_data)
        messages.success(request, "Hidden-gold settings saved.")
    return redirect(f"{_dashboard(slug)}#hidden-gold")


@login_required
@require_POST
def restore_page(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """A manager restores a paused annotator, with a reason."""
    project = selectors.project_get(user=request.user, slug=slug)
    quality_services.annotator_restore(
        project=project, actor=request.user, user_id=user_id, reason=request.POST.get("reason", "")
    )
    messages.success(request, "Restored: the annotator may claim drafts again.")
    return redirect(f"{_dashboard(slug)}#hidden-gold")


def _dashboard(slug: str) -> str:
    return reverse("dashboard", kwargs={"slug": slug})
