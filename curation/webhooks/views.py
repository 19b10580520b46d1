"""The managers' webhooks page: register a hook (events as checkboxes), change or remove it, reveal its secret, send
a test event, and read and replay recent deliveries (interfaces only: the services decide)."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from curation.models import Project
from curation.page_errors import FORM_ERRORS, form_error_add, page_input, service_attempt
from curation.selectors import managed_project_get
from curation.webhooks import selectors as webhook_selectors
from curation.webhooks import services as webhook_services
from curation.webhooks.models import EVENTS


class WebhookForm(forms.Form):
    url = forms.CharField(max_length=500, label="Receiver URL", widget=forms.URLInput(attrs={"size": 50}))
    events = forms.MultipleChoiceField(choices=EVENTS, widget=forms.CheckboxSelectMultiple, label="Events")
    description = forms.CharField(max_length=200, required=False, label="Description (optional)")


class WebhookEventsForm(forms.Form):
    events = forms.MultipleChoiceField(choices=EVENTS, widget=forms.CheckboxSelectMultiple, label="Events")
    is_active = forms.BooleanField(required=False, label="Active")


def _page(request: HttpRequest, project: Project, **extras: object) -> HttpResponse:
    context = {
        "project": project,
        "hooks": [
            {
                "hook": hook,
                "form": WebhookEventsForm(
                    initial={"events": hook.events, "is_active": hook.is_active}, prefix=f"h{hook.pk}"
                ),
            }
            for hook in webhook_selectors.webhooks_of(user=request.user, project=project)
        ],
        "deliveries": webhook_selectors.deliveries_of(user=request.user, project=project),
        "form": WebhookForm(auto_id="hook_%s"),
        **extras,
    }
    return render(request, "curation/webhooks.html", context)


@login_required
def webhooks_page(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the hooks and recent deliveries. POST: register a hook; its secret is shown on this answer only."""
    project = managed_project_get(user=request.user, slug=slug, action="use its webhooks")
    if request.method != "POST":
        return _page(request, project)
    form = WebhookForm(request.POST, auto_id="hook_%s")
    if form.is_valid():
        try:
            hook, secret = webhook_services.webhook_create(project=project, actor=request.user, **form.cleaned_data)
        except FORM_ERRORS as exc:
            form_error_add(form, exc)
        else:
            # Rendered, not redirected: the secret is shown this once.
            return _page(request, project, created={"hook": hook, "secret": secret})
    return _page(request, project, form=form)


@login_required
@require_POST
def webhook_update_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = managed_project_get(user=request.user, slug=slug, action="use its webhooks")
    values = service_attempt(request, lambda: page_input(WebhookEventsForm, request.POST, prefix=f"h{pk}"))
    if values is not None:
        webhook_services.webhook_update(project=project, actor=request.user, webhook_id=pk, **values)
        messages.success(request, "Webhook saved.")
    return redirect("webhooks", slug=slug)


@login_required
@require_POST
def webhook_secret_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Reveal a hook's secret on this answer only (a POST, so it is never in a link, a history or a cache)."""
    project = managed_project_get(user=request.user, slug=slug, action="see webhook secrets")
    secret = webhook_services.webhook_secret_reveal(project=project, actor=request.user, webhook_id=pk)
    return _page(request, project, revealed={"hook_id": pk, "secret": secret})


def _action_page(action: str, service: Callable[..., object], id_name: str, done: str) -> Callable[..., HttpResponse]:
    """A button's POST: `service` on one hook or delivery (managers: the service checks), then back to the page."""

    @login_required
    @require_POST
    def page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
        project = managed_project_get(user=request.user, slug=slug, action=action)
        service(project=project, actor=request.user, **{id_name: pk})
        messages.success(request, done)
        return redirect("webhooks", slug=slug)

    return page


webhook_delete_page = _action_page(
    "use its webhooks", webhook_services.webhook_delete, "webhook_id", "Webhook removed with its deliveries."
)
webhook_test_page = _action_page(
    "send test events",
    webhook_services.webhook_test_send,
    "webhook_id",
    "Test event queued; a worker sends it. Reload to see the attempt.",
)
delivery_replay_page = _action_page(
    "replay webhook deliveries",
    webhook_services.delivery_replay,
    "delivery_id",
    "Delivery queued again; a worker sends it.",
)
