"""Pages' doors for a manager's vouch (annotate.quality.vouching decides; refusals become 403/404 or a
message on the page the form was on)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotate.quality import vouching
from curation.page_errors import service_attempt
from curation.selectors import project_get


def _back(request: HttpRequest, slug: str) -> HttpResponseRedirect:
    """To the page the form was on (members, exam set-up, project), else the members page."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False):
        target = reverse("members", kwargs={"slug": slug})
    return HttpResponseRedirect(target)


@login_required
@require_POST
def vouch_create(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    chosen = request.POST.get("user", "")  # the service checks the person and the reason (as it refuses them)
    user_id = int(chosen) if chosen.isdigit() else None
    reason = request.POST.get("reason", "")
    vouch = service_attempt(
        request, lambda: vouching.vouch_create(project=project, actor=request.user, user_id=user_id, reason=reason)
    )
    if vouch:
        messages.success(request, f"You vouched for {vouch.user.username}: they are qualified in {project.name}.")
    return _back(request, slug)


@login_required
@require_POST
def vouch_revoke(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    vouch = service_attempt(request, lambda: vouching.vouch_revoke(project=project, actor=request.user, vouch_id=pk))
    if vouch:
        taken = "; the qualification it gave is withdrawn" if vouch.gave_qualification else ""
        messages.success(request, f"Vouch for {vouch.user.username} revoked{taken}.")
    return _back(request, slug)
