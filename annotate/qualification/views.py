"""Pages of the qualification exam (candidate, results, manager set-up) and of the versioned guidelines."""

from __future__ import annotations

import difflib
from itertools import chain
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.forms.models import model_to_dict
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.utils import timezone
from django.views.decorators.http import require_POST

from annotate.qualification import first_gold, selectors, services
from annotate.qualification import guidelines as guidelines_services
from annotate.qualification.api import QualificationSettingsApi, exam_configure
from annotate.rendering import render_markdown
from curation.answer_types import ANSWER_TYPE_LABELS, SCALE_FORM_CHOICES, scale_for_form, scale_of_form
from curation.errors import DomainError, NotFound
from curation.models import Instance
from curation.page_errors import FORM_ERRORS, form_given, service_attempt
from curation.selectors import project_get, roles_of
from curation.services.projects import require_role
from curation.states import Role, Status


class GoldForm(forms.Form):
    """A manager's check of a draft before it becomes exam gold: what an annotator's submission holds."""

    expected_version = forms.IntegerField(widget=forms.HiddenInput)
    question = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    answer = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), help_text="one answer item per line")
    rationale = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    answer_type = forms.ChoiceField(choices=[("", "— choose —"), *ANSWER_TYPE_LABELS.items()])
    scale = forms.ChoiceField(choices=SCALE_FORM_CHOICES)
    answer_form = forms.ChoiceField(choices=[("", "— choose —"), *Instance.AnswerForm.choices])
    answer_source = forms.ChoiceField(choices=[("", "— choose —"), *Instance.AnswerSource.choices])
    relevant_table_ids = forms.TypedMultipleChoiceField(
        coerce=int, required=False, label="Relevant tables", widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, tables: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["relevant_table_ids"].choices = [(t.pk, f"Table {t.number or t.label or t.pk}") for t in tables]

    def edit_fields(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data.pop("expected_version")
        data["answer"] = [line.strip() for line in data["answer"].splitlines() if line.strip()]
        data["scale"] = scale_of_form(data["scale"])
        return {**data, "is_answerable": True}


def _exam_given(post: QueryDict) -> dict[str, Any]:
    """The set-up form as the API's settings input: a number left empty keeps the saved one, an empty time limit is
    none, and the ticked items are the pool unless auto-pick is ticked."""
    given = form_given({name: post.get(name, "") for name in ("threshold", "size", "retry_delay_hours")})
    given |= {"time_limit_minutes": post.get("time_limit_minutes") or None, "auto_pick": bool(post.get("auto_pick"))}
    if not given["auto_pick"]:
        given["instance_ids"] = post.getlist("instance_ids")
    return given


def _answers_from_form(request: HttpRequest) -> dict[str, dict[str, Any]]:
    """Items the form carries (`item-<id>` marker): `answer-<id>` inputs, one per list item, and `rationale-<id>`;
    the service refuses an item that is not the attempt's.

    The marker tells "every answer item removed" (an empty list) from "not in this request" (keep what is saved).
    """
    item_ids = [name.removeprefix("item-") for name in request.POST if name.startswith("item-")]
    return {
        pk: {"answer": request.POST.getlist(f"answer-{pk}"), "rationale": request.POST.get(f"rationale-{pk}", "")}
        for pk in item_ids
    }


@login_required
def qualification_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    roles = roles_of(user=request.user, project=project)
    context: dict[str, Any] = {"project": project, "roles": roles, "is_manager": Role.MANAGER in roles}
    if Role.ANNOTATOR in roles:
        context["status"] = selectors.candidate_status(user=request.user, project=project)
    context["guidelines"] = guidelines_services.guidelines_ensure_default(project=project)
    return render(request, "annotate/qualification/index.html", context)


@login_required
@require_POST
def qualification_start(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    attempt = services.attempt_start(project=project, user=request.user)
    return redirect("qualification-attempt", pk=attempt.pk)


@login_required
def attempt_page(request: HttpRequest, pk: int) -> HttpResponse:
    attempt = selectors.attempt_get(user=request.user, attempt_id=pk)
    if services.attempts_close_expired(attempts=[attempt]):
        attempt.refresh_from_db()
        messages.info(request, "Time ran out: your attempt was scored with the answers saved before the deadline.")
    project = attempt.project
    request.project_slug = project.slug  # the project navigation, although the address has no slug
    exam = services.settings_of(project)
    is_own = attempt.user_id == request.user.pk
    context: dict[str, Any] = {"attempt": attempt, "project": project, "exam": exam, "is_own": is_own}
    if attempt.submitted_at is not None:
        # Each item keeps its exam number; the page lists the mistakes first, then what was right.
        results = [{**result, "number": number} for number, result in enumerate(attempt.results or [], start=1)]
        context.update(
            {
                "results": results,
                "mistakes": [r for r in results if r.get("em") == 0.0],
                "correct": [r for r in results if r.get("em")],
                "unscored": [r for r in results if r.get("em") is None],
                "retry_at": None
                if attempt.passed
                else services.retry_at(project=project, user=attempt.user, exam=exam),
            }
        )
        return render(request, "annotate/qualification/results.html", context)
    if not is_own:
        return render(request, "annotate/qualification/in_progress.html", context)
    items = selectors.gold_items_shown(attempt.item_ids)
    answers = attempt.answers or {}
    for item in items:
        saved = answers.get(str(item["instance_id"]), {})
        item["answer_items"] = saved.get("answer") or [""]
        item["rationale"] = saved.get("rationale", "")
    guidelines = guidelines_services.guidelines_ensure_default(project=project)
    context |= {"items": items, "guidelines": guidelines, "guidelines_html": render_markdown(guidelines.text)}
    context["now"] = timezone.now()
    return render(request, "annotate/qualification/exam.html", context)


@login_required
@require_POST
def attempt_save(request: HttpRequest, pk: int) -> HttpResponse:
    """htmx autosave: answers the form holds now; replies with a one-line status."""
    try:
        attempt = services.attempt_save(attempt_id=pk, user=request.user, answers=_answers_from_form(request))
    except DomainError as exc:
        # The autosave is an htmx fragment: its one-line status shows every refusal in place.
        return render(
            request, "annotate/qualification/_save_status.html", {"error": exc.message}, status=exc.status_code
        )
    answered = sum(1 for value in attempt.answers.values() if value.get("answer"))
    context = {"saved_at": timezone.now(), "answered": answered, "total": len(attempt.item_ids)}
    return render(request, "annotate/qualification/_save_status.html", context)


@login_required
@require_POST
def attempt_submit(request: HttpRequest, pk: int) -> HttpResponse:
    services.attempt_submit(attempt_id=pk, user=request.user, answers=_answers_from_form(request))
    return redirect("qualification-attempt", pk=pk)


@login_required
def qualification_manage(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    require_role(user=request.user, project=project, roles=(Role.MANAGER,), action="set up the exam")
    refusals: dict[str, list[str]] = {}
    if request.method == "POST":
        payload = QualificationSettingsApi.SettingsInput(data=_exam_given(request.POST))  # the API's input serializer
        if not payload.is_valid():  # an item's refusals (keyed by its index) are said beside the items
            refusals = {
                name: [str(e) for e in (chain(*said.values()) if isinstance(said, dict) else said)]
                for name, said in payload.errors.items()
            }
    if request.method == "POST" and not refusals:
        try:
            saved = exam_configure(project=project, actor=request.user, values=payload.validated_data)
        except FORM_ERRORS as exc:
            refusals = {exc.detail.get("field", ""): [exc.message]}
        else:
            messages.success(request, "The exam is saved; new attempts use it (open attempts keep their items).")
            capacity = services.exam_pool_capacity(saved)
            if not capacity["retries"]:
                pool, size, to_add = capacity["pool"], capacity["size"], capacity["to_add"]
                fills = "does not fill one attempt" if not capacity["attempts"] else "supports no retry"
                messages.warning(
                    request,
                    f"The pool of {pool} gold item{pluralize(pool)} at {size} item{pluralize(size)} per attempt "
                    f"{fills}: a candidate who fails meets no unseen items to retry with. Add {to_add} more gold "
                    f"item{pluralize(to_add)}, or ask fewer items per attempt.",
                )
            return redirect("qualification-manage", slug=project.slug)
    exam = services.settings_of(project)
    chosen = set(exam.item_links.values_list("instance_id", flat=True)) if exam.pk else set()
    attempts = list(selectors.attempts_visible_to(user=request.user, project=project))
    candidates = services.gold_candidates(project)
    context = {
        "project": project,
        "exam": exam,
        "chosen": chosen,
        "candidates": candidates,
        # Released items are public wherever their release went: a candidate may have read their answers.
        "chosen_released": sum(1 for i in candidates if i.pk in chosen and i.status == Status.RELEASED),
        "attempts": attempts,
        "capacity": services.exam_pool_capacity(exam),
        "annotators": selectors.annotators_with_exam_summary(project=project),
        # The refusals where the template reads a form's: above it (no field's), and each beside its field.
        "form": {
            "non_field_errors": refusals.get("", []),
            **{name: {"errors": said} for name, said in refusals.items()},
        },
    }
    return render(request, "annotate/qualification/manage.html", context, status=400 if refusals else 200)


@login_required
def gold_drafts(request: HttpRequest, slug: str) -> HttpResponse:
    """Drafts a manager may check and validate as the exam's first gold."""
    project = project_get(user=request.user, slug=slug)
    require_role(user=request.user, project=project, roles=(Role.MANAGER,), action="validate drafts as exam gold")
    drafts = first_gold.drafts_to_validate(project)
    exam = services.settings_of(project)
    pool = exam.item_links.count() if exam.pk else 0
    context = {"project": project, "drafts": drafts[:100], "total": drafts.count(), "exam": exam, "pool": pool}
    return render(request, "annotate/qualification/gold_drafts.html", context)


@login_required
def gold_check(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """One draft beside its context: the manager corrects it and validates it as gold, or goes back."""
    project = project_get(user=request.user, slug=slug)
    require_role(user=request.user, project=project, roles=(Role.MANAGER,), action="validate drafts as exam gold")
    instance = first_gold.instance_of(project, pk)
    if instance is None:
        raise NotFound(f"No draft #{pk} in this project.")
    (shown,) = selectors.gold_items_shown([instance.pk])  # the context as the exam will show it
    data = {"instance": instance, "item": shown}
    initial = {
        "expected_version": instance.version,
        **model_to_dict(instance, fields=("question", "rationale", "answer_type", "answer_form", "answer_source")),
        "scale": scale_for_form(instance.scale),
        "answer": "\n".join(instance.answer or []),
        "relevant_table_ids": sorted(instance.relevant_tables.values_list("id", flat=True)),
    }
    form = GoldForm(request.POST or None, initial=initial, tables=shown["tables"])
    if request.method == "POST" and form.is_valid():
        try:
            first_gold.gold_validate(
                project=project,
                actor=request.user,
                instance_id=pk,
                expected_version=form.cleaned_data["expected_version"],
                fields=form.edit_fields(),
            )
        except FORM_ERRORS as exc:
            problems = exc.detail.get("problems") or [{"field": exc.detail.get("field"), "message": exc.message}]
            for problem in problems:
                form.add_error(problem["field"] if problem.get("field") in form.fields else None, problem["message"])
        else:
            messages.success(request, f"#{pk} is validated and in the exam's gold pool.")
            return redirect("qualification-gold", slug=project.slug)
    context = {**data, "project": project, "form": form, "is_draft": instance.status == Status.DRAFTED}
    return render(request, "annotate/qualification/gold_check.html", context, status=400 if form.errors else 200)


def _line_diff(old: str, new: str) -> list[tuple[str, str]]:
    """(kind, line) pairs: kind is 'same', 'added' or 'removed' (ndiff's '? ' hint lines are left out)."""
    kinds = {"  ": "same", "+ ": "added", "- ": "removed"}
    return [
        (kinds[line[:2]], line[2:]) for line in difflib.ndiff(old.splitlines(), new.splitlines()) if line[:2] in kinds
    ]


@login_required
def guidelines_page(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    roles = roles_of(user=request.user, project=project)
    is_manager = Role.MANAGER in roles
    draft_text = None
    if request.method == "POST":
        draft_text, note = request.POST.get("text", ""), request.POST.get("note", "")
        published = service_attempt(
            request,
            lambda: guidelines_services.guidelines_publish(
                project=project, actor=request.user, text=draft_text, note=note
            ),
        )
        if published:
            messages.success(
                request, f"Version {published.version} is published; every member will see it flagged once."
            )
            return redirect("guidelines", slug=project.slug)
    guidelines_services.guidelines_ensure_default(project=project)
    versions = list(selectors.guidelines_versions(user=request.user, project=project))
    by_number = {str(v.version): v for v in versions}  # as the query string names them (?v=, ?a=&b=)
    shown = by_number.get(request.GET.get("v", ""), versions[0])
    # Opening the page is reading it: the banner for this version goes away.
    guidelines_services.guidelines_mark_read(project=project, user=request.user, version=shown.version)
    context: dict[str, Any] = {
        "project": project,
        "versions": versions,
        "shown": shown,
        "shown_html": render_markdown(shown.text),
        "is_current": shown.pk == versions[0].pk,
        "is_manager": is_manager,
        "draft_text": draft_text if draft_text is not None else versions[0].text,
    }
    left, right = by_number.get(request.GET.get("a", "")), by_number.get(request.GET.get("b", ""))
    if left and right:
        context["compare"] = {
            "left": left,
            "right": right,
            "left_html": render_markdown(left.text),
            "right_html": render_markdown(right.text),
            "diff": _line_diff(left.text, right.text),
        }
    return render(request, "annotate/guidelines/page.html", context)
