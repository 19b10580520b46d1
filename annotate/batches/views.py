"""Pages of batches: create, fill with drafts or contexts, open, the gating mode, and difficulty against the panel
(managers)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotate.batches import selectors as announcement_selectors
from annotate.batches.announcements import announcement_mark_read, announcement_post
from annotate.batches.api import AssignSerializer, FillSerializer
from annotate.dashboard import figures as dashboard
from annotate.review import selectors as review_selectors
from curation import selectors
from curation.batches import services as batch_flow
from curation.batches.services import BatchSample, batch_create, batch_deadline_set, batch_open
from curation.models import Batch, Project
from curation.page_errors import page_input, service_attempt
from curation.panel import services as panel
from curation.selectors import project_get
from curation.services.projects import require_role
from curation.states import Role, Status


def _assigned_message(*, contexts: int, drafts: int) -> str:
    """What a batch fill did: contexts count as much as drafts (contexts are drafted later, inside the batch)."""
    parts = []
    if contexts:
        parts.append(f"{contexts} context{pluralize(contexts)}")
    if drafts or not contexts:
        parts.append(f"{drafts} draft{pluralize(drafts)}")
    return f"{' and '.join(parts)} added to the batch."


def _filled_message(sample: BatchSample) -> str:
    """What a fill from papers did: the contexts drawn, how, and the drafts that came with them."""
    drawn = "all their" if sample.per_paper is None else f"{sample.per_paper} per paper of the"
    contexts = len(sample.context_ids)
    return (
        f"{contexts} context{pluralize(contexts)} from {sample.papers} paper{pluralize(sample.papers)} ({drawn} "
        f"short contexts, seed {sample.seed}) added to the batch, with {sample.moved} draft{pluralize(sample.moved)}."
    )


class DeadlineForm(forms.Form):
    """A batch's deadline, in the server's time zone; empty removes it."""

    deadline_at = forms.DateTimeField(
        required=False,
        label="Deadline",
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )


class AnnouncementForm(forms.Form):
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), max_length=20_000, label="Announcement (Markdown)", strip=True
    )


# The card an action goes back to (the panel's to theirs); the rest go back to the top of the page.
ANCHORS = {"panel": "#panel", "calibrate": "#panel", "panel_order": "#panel", "announce": "#announcements"}
# The actions on the project as a whole; the others act on the batch posted.
PROJECT_ACTIONS = {"create", "gating", "panel", "announce"}
MAX_PAGE = 100_000
PANEL_BATCHES = 25  # the panel card's batches (the first, in batch order)


def _page_number(raw: str | None) -> int:
    """A 1-based page number from the query string; anything else (or past MAX_PAGE) is the nearest valid one."""
    return min(max(int(raw), 1), MAX_PAGE) if raw and raw.isdigit() and len(raw) < 12 else 1


@login_required
def batches_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Create batches, fill them with drafts or contexts, open them, and choose the gating mode."""
    project = project_get(user=request.user, slug=slug)
    require_role(user=request.user, project=project, roles=(Role.MANAGER,), action="manage its batches")
    if request.method == "POST":
        action = request.POST.get("action", "")
        batch_id = int(request.POST.get("batch", "0") or 0)
        post = request.POST.get
        # Some actions check their input first (assign and fill with the API's input serializers); a refusal is said
        # once, the same way for all of them.
        inputs = {
            "assign": AssignSerializer,
            "fill": FillSerializer,
            "deadline": DeadlineForm,
            "announce": AnnouncementForm,
        }
        back = f"{request.path}{ANCHORS.get(action, '')}"
        data = service_attempt(request, lambda: page_input(inputs[action], request.POST)) if action in inputs else {}
        if data is None:
            return redirect(back)
        # Each action is one service call: the service, what it is given besides the actor (and the project, or the
        # batch posted), and what the page says once it went through (from its result, when that names a count).
        steps = {
            "create": (batch_create, {"name": post("name", "")}, "Batch created."),
            "open": (batch_open, {}, "Batch opened."),
            "gating": (batch_flow.project_gating_set, {"gating": post("gating", "")}, "Gating saved."),
            # Difficulty against a panel (curation.panel): name the panel, calibrate a batch, set its queue order.
            "panel": (
                panel.panel_set,
                {"endpoint_ids": [int(v) for v in request.POST.getlist("endpoint_ids") if v.isdigit()]},
                "Panel saved.",
            ),
            "calibrate": (
                panel.calibration_request,
                {},
                "Calibration asked: each panel model answers every instance of the batch on the scoring worker.",
            ),
            "panel_order": (panel.batch_panel_order_set, {"order": post("panel_order", "")}, "Queue order saved."),
            "assign": (
                batch_flow.batch_assign,
                data,
                lambda moved: _assigned_message(contexts=len(set(data["context_ids"])), drafts=moved),
            ),
            "fill": (batch_flow.batch_fill_from_papers, data, _filled_message),
            "deadline": (
                batch_deadline_set,
                data,
                "Deadline saved." if data.get("deadline_at") else "Deadline removed.",
            ),
            "announce": (
                announcement_post,
                {**data, "batch_id": batch_id or None},
                "Announcement posted: each annotator and verifier sees it on their next page until they mark it read.",
            ),
        }
        if action in steps:
            service, given, said = steps[action]
            where = {"project": project} if action in PROJECT_ACTIONS else {"batch_id": batch_id}
            result = service_attempt(
                request, lambda: service(actor=request.user, **where, **given), said if isinstance(said, str) else ""
            )
            if result is not None and callable(said):
                messages.success(request, said(result))
        return redirect(back)
    batch_flow.batches_advance(project=project)
    progress_page, progress = dashboard.batch_progress_page(project, request.GET.get("page"))
    papers_page = _page_number(request.GET.get("papers"))
    papers_offset = (papers_page - 1) * review_selectors.FILL_PAPERS_PER_PAGE
    fill_papers, more_papers = review_selectors.papers_with_unbatched_contexts(
        user=request.user, project=project, offset=papers_offset, limit=review_selectors.FILL_PAPERS_PER_PAGE
    )
    panel_batches = list(selectors.batches_visible_to(request.user, project)[:PANEL_BATCHES])
    summaries = panel.panel_summaries(panel_batches)
    panel_rows = [(batch, summaries.get(batch.pk)) for batch in panel_batches]
    context = {
        "project": project,
        "batches": progress_page.paginator.object_list,
        "progress_page": progress_page,
        "progress": progress,
        "open_or_planned": selectors.batches_visible_to(request.user, project).exclude(state=Batch.State.CLOSED),
        **review_selectors.unbatched_work(user=request.user, project=project),
        "fill_papers": fill_papers,
        "fill_papers_from": papers_offset + 1,
        "fill_papers_to": papers_offset + len(fill_papers),
        "fill_papers_previous": papers_page - 1 if papers_page > 1 else None,
        "fill_papers_next": papers_page + 1 if more_papers else None,
        "gating_choices": Project.Gating.choices,
        "panel": project.panel.all(),
        "panel_endpoints": panel.panel_candidates(user=request.user, project=project),
        "panel_batches": panel_rows,
        "calibrations_active": any(summary and summary["active"] for _, summary in panel_rows),
        "panel_orders": Batch.PanelOrder.choices,
        "announcements": announcement_selectors.announcements_of(user=request.user, project=project),
        "announcement_form": AnnouncementForm(),
        "status_choices": [(s.value, s.label) for s in Status],
    }
    return render(request, "annotate/batches/batches.html", context)


@login_required
@require_POST
def announcement_read_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The banner's "I've read it": recorded once, then back to the page the viewer was on."""
    selectors.project_get(user=request.user, slug=slug)
    announcement_mark_read(announcement_id=pk, user=request.user)
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False):
        target = reverse("project", kwargs={"slug": slug})
    return redirect(target)
