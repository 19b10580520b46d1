"""Pages of two-round validation, discussions and history (interfaces only)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework import serializers

from annotate.agreement.selectors import awaiting_second_count
from annotate.quality.selectors import reissued_as
from annotate.review import selectors as review_selectors
from annotate.review import services as review
from annotate.review.api import (
    INSTANCE_STEPS,
    DecisionSerializer,
    FlagSerializer,
    ReplySerializer,
    ResolveSerializer,
    VersionSerializer,
)
from annotate.review.models import Discussion, ReviewComment
from curation.answer_types import ANSWER_TYPE_LABELS, SCALE_FORM_CHOICES, scale_for_form, scale_of_form
from curation.errors import Conflict
from curation.models import Instance, Project
from curation.page_errors import FORM_ERRORS, form_given, page_input, service_attempt
from curation.selectors import project_get, roles_of
from curation.states import Role

COMMENT_FIELDS = [(value or "instance", label) for value, label in ReviewComment.Field.choices]


def _decision_given(post: QueryDict) -> dict[str, Any]:
    """A round page's decision as the API's input serializers take it: the version, one comment per field written
    (`comment_<field>`, "instance" for the whole instance) and the flag's message."""
    comments = [
        {"field": "" if value == "instance" else value, "text": text}
        for value, _label in COMMENT_FIELDS
        if (text := post.get(f"comment_{value}", "")).strip()
    ]
    return {**form_given({n: post.get(n, "") for n in ("expected_version", "message")}), "comments": comments}


# The discussion page's buttons as the API's outcome and action (an unknown one is left for the API to refuse).
RESOLVE_DECISIONS = {"reject": ("rejected", ""), "send_back": ("accepted", "send_back"), "edit": ("accepted", "edit")}


def _resolve_given(post: QueryDict) -> dict[str, Any]:
    """The discussion page's decision as the API's `ResolveSerializer` takes it; only an edit carries fields (the
    answer one item a line, the type and scale only when the page offered them)."""
    decision = post.get("decision", "")
    outcome, action = RESOLVE_DECISIONS.get(decision, (decision, ""))
    given = form_given(
        {"outcome": outcome, "action": action, **{n: post.get(n, "") for n in ("expected_version", "message")}}
    )
    if action == "edit":
        lines = post.get("answer", "").splitlines()
        edited = {"question": post.get("question", ""), "rationale": post.get("rationale", "")}
        given["fields"] = {**edited, "answer": [line.strip() for line in lines if line.strip()]}
        if "answer_type" in post:
            given["fields"]["answer_type"] = post["answer_type"]
        if "scale" in post:
            given["fields"]["scale"] = scale_of_form(post["scale"])  # "— choose —" is null: not chosen
    return given


@dataclass(frozen=True)
class Stage:
    """What differs between the two rounds' pages; the URLconf gives each round's views its stage."""

    take_next: Callable[..., Instance | None]  # the round's service that takes (or returns the held) next review
    page: str  # URL name of the round's review page
    template: str
    nothing_waits: str
    # action → its service, the API's input serializer of that step (which checks the page's form too), and what the
    # page says once done (formatted with the pk)
    decisions: dict[str, tuple[Callable[..., Instance | Discussion], type[serializers.Serializer], str]]


ROUND_ONE = Stage(
    take_next=review.review_next,
    page="review",
    template="annotate/review/review.html",
    nothing_waits="Nothing is waiting for review. Well done.",
    decisions={
        "approve": (review.review_approve, DecisionSerializer, "#{pk} approved: it goes to round two."),
        "request_changes": (
            review.review_request_changes,
            DecisionSerializer,
            "#{pk} went back to its annotator with your comments.",
        ),
        "release": (review.review_release, VersionSerializer, "#{pk} is back in the review pile."),
    },
)
ROUND_TWO = Stage(
    take_next=review.round2_next,
    page="round2",
    template="annotate/review/round2.html",
    nothing_waits="Nothing is waiting for round two.",
    decisions={
        "confirm": (review.round2_confirm, VersionSerializer, "#{pk} confirmed: it is validated."),
        "release": (review.round2_release, VersionSerializer, "#{pk} is back in the round-two pile."),
        "flag": (review.round2_flag, FlagSerializer, "#{pk} flagged: a discussion with its verifier is open."),
    },
)


# --- Round one ------------------------------------------------------------------------------------------------


@login_required
def review_home(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    context: dict[str, Any] = {"project": project}
    roles = roles_of(user=request.user, project=project)
    if Role.VERIFIER in roles:
        context["round1"] = review_selectors.review_queue(project=project, user=request.user)
    if Role.VERIFIER in roles or Role.MANAGER in roles:
        context["awaiting_second"] = awaiting_second_count(project)
    if Role.ANNOTATOR in roles:
        context["round2"] = review_selectors.round2_queue(project=project, user=request.user)
    if Role.MANAGER in roles and not {Role.VERIFIER, Role.ANNOTATOR} & set(roles):
        # A manager who reviews in neither round sees where the rounds stand, and where to follow them.
        context["overview"] = review_selectors.rounds_overview(user=request.user, project=project)
    context["discussions"] = list(
        review_selectors.discussions_visible_to(request.user, project, open_only=True).select_related("instance")
    )
    return render(request, "annotate/review/home.html", context)


@login_required
@require_POST
def round_next(request: HttpRequest, slug: str, *, stage: Stage) -> HttpResponse:
    """Take the round's next review and open it; back to the review home when nothing waits."""
    project = project_get(user=request.user, slug=slug)
    instance = service_attempt(request, lambda: stage.take_next(project=project, user=request.user))
    if instance is True:
        messages.info(request, stage.nothing_waits)
    if not isinstance(instance, Instance):
        return redirect("review-home", slug=slug)
    return redirect(stage.page, slug=slug, pk=instance.pk)


@login_required
def round_page(request: HttpRequest, slug: str, pk: int, *, stage: Stage) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    data = review_selectors.review_data(user=request.user, instance_id=pk, project=project)
    context = {"project": project, "comment_fields": COMMENT_FIELDS}
    return render(request, stage.template, {**context, **data})


@login_required
@require_POST
def review_claim(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project_get(user=request.user, slug=slug)
    service_attempt(request, lambda: review.review_claim(instance_id=pk, user=request.user))
    return redirect("review", slug=slug, pk=pk)


@login_required
@require_POST
def round_decide(request: HttpRequest, slug: str, pk: int, *, stage: Stage) -> HttpResponse:
    """A round's decision (round one: approve, request changes or release; round two: confirm, flag or release),
    then on: back to the review on a refusal, to the discussion a flag opened, to the next review when asked, else
    to the review home."""
    project_get(user=request.user, slug=slug)
    action = request.POST.get("action", "")
    if action not in stage.decisions:
        messages.error(request, f"Action: choose one of {', '.join(stage.decisions)}.")
        return redirect(stage.page, slug=slug, pk=pk)
    service, input_serializer, success = stage.decisions[action]
    # The API's input serializer of this step checks the form.
    values = service_attempt(request, lambda: page_input(input_serializer, _decision_given(request.POST)))
    said = success.format(pk=pk)
    done = values and service_attempt(request, lambda: service(instance_id=pk, user=request.user, **values), said)
    if not done:
        return redirect(stage.page, slug=slug, pk=pk)
    if isinstance(done, Discussion):
        return redirect("discussion", slug=slug, pk=done.pk)
    # A release goes to the pile, not straight into the next review: with one verifier that would be this one again.
    if request.POST.get("then") == "next" and action != "release":
        return round_next(request, slug, stage=stage)
    return redirect("review-home", slug=slug)


# --- Discussions ----------------------------------------------------------------------------------------------


@login_required
def discussion_list(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    threads = review_selectors.discussions_visible_to(request.user, project).prefetch_related("messages")
    return render(request, "annotate/review/discussions.html", {"project": project, "threads": threads})


@login_required
def discussion_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    return _discussion_render(request, project_get(user=request.user, slug=slug), pk)


def _discussion_render(
    request: HttpRequest,
    project: Project,
    pk: int,
    refused: QueryDict | None = None,
    refusal: str = "",
    status: int = 200,
) -> HttpResponse:
    """The discussion page; after a refused correction (`refused`: what was posted, `refusal`: why), the correction
    as the verifier wrote it, its panel open and the refusal in it: a refusal loses nothing."""
    data = review_selectors.discussion_data(user=request.user, discussion_id=pk, project=project)
    instance = data["instance"]
    stored = {
        "question": instance.question,
        "rationale": instance.rationale,
        "answer": "\n".join(instance.answer),
        "answer_type": instance.answer_type,
        "scale": scale_for_form(instance.scale),
    }
    edit = {name: (refused or {}).get(name, value) for name, value in stored.items()}
    context = {
        "project": project,
        "edit": {**edit, "refusal": refusal},
        "answer_types": list(ANSWER_TYPE_LABELS.items()),
        "scales": SCALE_FORM_CHOICES,
    }
    return render(request, "annotate/review/discussion.html", {**context, **data}, status=status)


@login_required
@require_POST
def discussion_reply(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project_get(user=request.user, slug=slug)
    service_attempt(  # the API's input serializer checks the reply
        request,
        lambda: review.discussion_reply(
            discussion_id=pk, user=request.user, **page_input(ReplySerializer, request.POST)
        ),
        "Reply posted.",
    )
    return redirect("discussion", slug=slug, pk=pk)


@login_required
@require_POST
def discussion_resolve(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    refusal, status = None, 400
    try:
        decided = page_input(ResolveSerializer, _resolve_given(request.POST))  # the API's input serializer
        review.discussion_resolve(discussion_id=pk, user=request.user, **decided)
    except FORM_ERRORS as exc:
        refusal, status = exc.message, 409 if isinstance(exc, Conflict) else 400
    else:
        messages.success(request, "Discussion decided.")
    if refusal is not None and request.POST.get("decision") == "edit":
        # A refused correction is shown again as written, with the refusal beside it.
        return _discussion_render(request, project, pk, refused=request.POST, refusal=refusal, status=status)
    if refusal is not None:
        messages.error(request, refusal)
    return redirect("discussion", slug=slug, pk=pk)


@login_required
@require_POST
def discussion_hand(request: HttpRequest, slug: str, pk: int, *, step: Callable[..., Discussion]) -> HttpResponse:
    """Give a discussion back, or take a given-back one."""
    project_get(user=request.user, slug=slug)
    done = service_attempt(request, lambda: step(discussion_id=pk, user=request.user))
    if done and step is review.discussion_give_back:
        messages.success(request, "Given back: it waits for a verifier, and Next discussion serves it.")
        return redirect("discussions", slug=slug)
    return redirect("discussion", slug=slug, pk=pk)


@login_required
@require_POST
def discussion_next(request: HttpRequest, slug: str) -> HttpResponse:
    """Open the verifier's next discussion (held, else the oldest given back); back to the list when none."""
    project = project_get(user=request.user, slug=slug)
    discussion = service_attempt(request, lambda: review.discussion_next(project=project, user=request.user))
    if isinstance(discussion, Discussion):
        return redirect("discussion", slug=slug, pk=discussion.pk)
    if discussion is True:
        messages.info(request, "No discussion is waiting for you.")
    return redirect("discussions", slug=slug)


# --- History, discard, restore --------------------------------------------------------------------------------


@login_required
def history_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = project_get(user=request.user, slug=slug)
    numbers = {"first": request.GET.get("a"), "second": request.GET.get("b"), "restore": request.GET.get("restore")}
    reissued = reissued_as(user=request.user, project=project, instance_id=pk)  # a manager's older link
    if reissued is not None:
        return redirect("review-history", slug=slug, pk=reissued)
    data = review_selectors.history_data(user=request.user, instance_id=pk, project=project, **numbers)
    return render(request, "annotate/review/history.html", {"project": project, **data})


# The steps of an instance's history page: the API's step (its input serializer and service), and what the page says
# once done (formatted with the pk and the form's values). Restoring a revision is the undo (version-checked).
HISTORY_STEPS = {
    "discard": (INSTANCE_STEPS["api-instance-discard"], "#{pk} discarded (it can be restored)."),
    "restore": (INSTANCE_STEPS["api-instance-restore"], "#{pk} restored as a draft."),
    "restore-revision": (INSTANCE_STEPS["api-revision-restore"], "Revision {revision} restored as a new revision."),
}


@login_required
@require_POST
def history_step(request: HttpRequest, slug: str, pk: int, *, step: str) -> HttpResponse:
    """A step from an instance's history page (discard, restore, restore a revision): the API's input serializer
    checks the form, the service decides, and the page says what happened."""
    project_get(user=request.user, slug=slug)
    api_step, done = HISTORY_STEPS[step]
    values = service_attempt(request, lambda: page_input(api_step.input_serializer, request.POST))
    if values is not None:
        said = done.format(pk=pk, **values)
        service_attempt(request, lambda: api_step.step(instance_id=pk, actor=request.user, **values), said)
    return redirect("review-history", slug=slug, pk=pk)


instance_discard = partial(history_step, step="discard")
instance_restore = partial(history_step, step="restore")
revision_restore = partial(history_step, step="restore-revision")
