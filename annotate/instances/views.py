"""The instance browser page: filters and search for every member, bulk actions for managers (services decide)."""

from __future__ import annotations

import math
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.functional import cached_property

from annotate.instances import services as instance_bulk
from annotate.instances.selectors import PAPER_CHOICES, browse_choices, instances_filtered
from curation import pagination, selectors
from curation.batches.services import batch_add_papers
from curation.page_errors import FORM_ERRORS, form_error_add
from curation.services.projects import require_role
from curation.states import Role

PAGE_SIZE = 50


class CappedPaginator(Paginator):
    """Pages of the newest matches, counting at most COUNT_UP_TO of them: a page costs what it shows, not the
    project's size (a count of every match reads every matching row). `is_capped` says the count stopped there."""

    @cached_property
    def count(self) -> int:
        return pagination.count_up_to(self.object_list)

    @property
    def is_capped(self) -> bool:
        return self.count > pagination.COUNT_UP_TO

    @cached_property
    def num_pages(self) -> int:
        return math.ceil(min(self.count, pagination.COUNT_UP_TO) / self.per_page) or 1


class IdListField(forms.Field):
    """Several instance ids sent under one name (ticked checkboxes: the browser's rows, the exam's items)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[int]:
        try:
            return [int(v) for v in (value or [])]
        except (TypeError, ValueError) as exc:
            raise ValidationError("Instance ids are numbers.") from exc


class BulkForm(forms.Form):
    ACTIONS = [
        ("assign", "Assign to an annotator"),
        ("unassign", "Give back to everyone"),
        ("retype", "Change reasoning type"),
        ("discard", "Discard"),
    ]
    # Not required here: clean() refuses an empty selection once, in the page's words, not twice.
    instances = IdListField(required=False)
    action = forms.ChoiceField(choices=ACTIONS)
    assignee = forms.ChoiceField(required=False, label="Annotator")
    reasoning_type = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="New reasoning type")
    reason = forms.CharField(required=False, max_length=500, label="Why discard")

    def __init__(self, *args: Any, choices: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assignee"].choices = [("", "—")] + [
            (m.user.username, m.user.username) for m in choices["qualified"]
        ]
        self.fields["reasoning_type"].choices = [("", "—")] + [
            (t.pk, f"{t.parent.name} › {t.name}" if t.parent else t.name) for t in choices["reasoning_types"]
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("instances"):
            raise ValidationError("Tick the instances to act on.")
        needed = {"assign": "assignee", "retype": "reasoning_type", "discard": "reason"}.get(data.get("action", ""))
        if needed and not data.get(needed):
            self.add_error(needed, "This action needs it.")
        return data


class PaperBatchForm(forms.Form):
    papers = forms.TypedMultipleChoiceField(coerce=int, widget=forms.CheckboxSelectMultiple)
    batch = forms.TypedChoiceField(coerce=int, label="Into batch")

    def __init__(self, *args: Any, choices: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["papers"].choices = [(p.pk, p.title[:80]) for p in choices["papers"]]
        self.fields["batch"].choices = [
            (b.pk, f"{b.name} ({b.state})") for b in choices["batches"] if b.state != "closed"
        ]


# What the page says once a bulk action went through ({s} is the plural ending of {count}).
BULK_DONE = {
    "assign": "{count} draft{s} assigned to {assignee}.",
    "unassign": "{count} draft{s} back in the common queue.",
    "retype": "{count} instance{s} got the new reasoning type.",
    "discard": "{count} instance{s} discarded.",
}


@login_required
def instance_browser(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    roles = selectors.roles_of(user=request.user, project=project)
    paper = request.GET.get("paper", "")
    choices = browse_choices(
        user=request.user, project=project, selected_paper=int(paper) if paper.isdigit() and len(paper) < 12 else None
    )
    filters = instances_filtered(user=request.user, project=project, data=request.GET or None).offer(choices)
    posted = request.POST if request.method == "POST" else None
    is_papers = "add_papers" in request.POST
    bulk_form = BulkForm(None if is_papers else posted, choices=choices, auto_id="bulk_%s")
    paper_form = PaperBatchForm(posted if is_papers else None, choices=choices, auto_id="papers_%s")
    here = f"{reverse('instances', args=[project.slug])}?{request.GET.urlencode()}"
    if posted is not None:
        require_role(user=request.user, project=project, roles=(Role.MANAGER,), action="change instances in bulk")
        form = paper_form if is_papers else bulk_form
        if form.is_valid():
            try:
                if is_papers:
                    moved = batch_add_papers(
                        project=project,
                        actor=request.user,
                        batch_id=form.cleaned_data["batch"],
                        paper_ids=form.cleaned_data["papers"],
                    )
                    done = (
                        f"{moved['contexts']} context{pluralize(moved['contexts'])} and {moved['drafts']} "
                        f"draft{pluralize(moved['drafts'])} put into the batch."
                    )
                else:
                    data = form.cleaned_data
                    count = instance_bulk.instances_bulk(
                        project=project,
                        actor=request.user,
                        instance_ids=data["instances"],
                        **{name: data[name] for name in ("action", "assignee", "reasoning_type", "reason")},
                    )
                    done = BULK_DONE[data["action"]].format(count=count, s=pluralize(count), assignee=data["assignee"])
            except FORM_ERRORS as exc:
                form_error_add(form, exc)
            else:
                messages.success(request, done)
                return redirect(here)
    # Filters that do not hold (a value out of range) filter nothing, and the form says why.
    rows = filters.qs if filters.is_valid() else filters.queryset
    page = CappedPaginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "project": project,
        "is_manager": Role.MANAGER in roles,
        "filter_form": filters.form,
        "bulk_form": bulk_form,
        "paper_form": paper_form,
        "page": page,
        "paper_choices": PAPER_CHOICES,
        "count_up_to": pagination.COUNT_UP_TO,
        "query": query.urlencode(),
        "here": here,
    }
    return render(request, "annotate/instances/browser.html", context)
