"""Pages of hidden gold: the managers' settings and restore forms (a probe is worked on in the workspace)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.quality import services as quality_services
from annotate.quality.api import QualitySettingsSerializer
from curation import selectors
from curation.page_errors import form_problems

# Both forms send the manager back to the dashboard's hidden-gold card, and say what happened there.
CARD = "hidden-gold"


@login_required
@require_POST
def quality_settings_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The dashboard's hidden-gold form (managers); the API's input serializer checks it."""
    project = selectors.project_get(user=request.user, slug=slug)
    values = request.POST.copy()
    values["is_pause_on_fail"] = "true" if request.POST.get("is_pause_on_fail") else "false"
    payload = QualitySettingsSerializer(data=values)
    if not payload.is_valid():
        messages.error(request, form_problems(payload), extra_tags=CARD)
    else:
        quality_services.quality_configure(project=project, actor=request.user, **payload.validated_data)
        messages.success(request, "Hidden-gold settings saved.", extra_tags=CARD)
    return redirect(reverse("dashboard", kwargs={"slug": slug}) + f"#{CARD}")


@login_required
@require_POST
def restore_page(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """A manager restores a paused annotator, with a reason."""
    project = selectors.project_get(user=request.user, slug=slug)
    quality_services.annotator_restore(
        project=project, actor=request.user, user_id=user_id, reason=request.POST.get("reason", "")
    )
    messages.success(request, "Restored: the annotator may claim drafts again.", extra_tags=CARD)
    return redirect(reverse("dashboard", kwargs={"slug": slug}) + f"#{CARD}")
