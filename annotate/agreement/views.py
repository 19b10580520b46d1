"""Pages of double annotation: the second annotator's copy page, the round-one verifier's keep/merge form, and the
managers' settings form (the figures are a section of the dashboard)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.agreement import selectors as agreement_selectors
from annotate.agreement import services as agreement_services
from annotate.agreement.api import AgreementSettingsSerializer, CopyFieldsSerializer, DoubleDecideApi, decide_choices
from curation import selectors
from curation.answer_types import ANSWER_TYPE_LABELS, ANSWER_TYPES, SCALE_FORM_CHOICES, scale_for_form, scale_of_form
from curation.page_errors import page_input, service_attempt


def _copy_fields(request: HttpRequest) -> dict:
    """The copy form's POST in the API's input shape (answer one item per line, tables as checkboxes)."""
    post = request.POST
    data: dict = {name: post.get(name, "") for name in ("question", "rationale", "answer_form", "answer_source")}
    data["answer_type"] = post.get("answer_type", "")
    data["scale"] = scale_of_form(post.get("scale"))
    data["answer"] = [line.strip() for line in post.get("answer", "").splitlines() if line.strip()]
    data["reasoning_type_id"] = post.get("reasoning_type_id") or None
    data["relevant_table_ids"] = post.getlist("relevant_table_ids")
    return data


@login_required
def copy_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The second copy the queue served: the context and a form started from the draft; Save or Submit."""
    project = selectors.project_get(user=request.user, slug=slug)
    if agreement_services.held_copy(copy_id=pk, user=request.user) is None:
        # Handed in, passed on when its lease ran out, or never this person's: one answer for all, naming none.
        return render(request, "annotate/agreement/copy_gone.html", {"project": project, "copy_id": pk}, status=404)
    data = agreement_selectors.copy_shown(user=request.user, copy_id=pk)
    if data["project"].pk != project.pk:
        raise Http404("No such item in this project.")
    if request.method == "POST":
        fields = service_attempt(request, lambda: page_input(CopyFieldsSerializer, _copy_fields(request)))
        if fields is None:
            return redirect("double-copy", slug=slug, pk=pk)
        is_submit = request.POST.get("action") == "submit"
        service, said = (
            (agreement_services.copy_submit, "Submitted. Thank you — take the next one when you are ready.")
            if is_submit
            else (agreement_services.copy_save, "Saved.")
        )
        if service_attempt(request, lambda: service(copy_id=pk, user=request.user, fields=fields), said) and is_submit:
            return redirect("work-home", slug=slug)
        return redirect("double-copy", slug=slug, pk=pk)
    return render(
        request,
        "annotate/agreement/copy.html",
        {
            **data,
            "answer_types": [(value, ANSWER_TYPE_LABELS[value]) for value in ANSWER_TYPES],
            "scales": SCALE_FORM_CHOICES,
            "scale_value": scale_for_form(data["copy"].scale),
            "answer_text": "\n".join(data["copy"].answer),
            "problem_fields": {problem["field"] for problem in data["problems"]},
        },
    )


@login_required
@require_POST
def decide_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The round-one verifier keeps the first version, the second, or merges field by field (the form's radios per
    field are the API's `fields`; its input serializer checks them)."""
    selectors.project_get(user=request.user, slug=slug)
    post = request.POST
    fields = {name: post[f"choice_{name}"] for name in agreement_services.CHOSEN_FIELDS if f"choice_{name}" in post}
    data = {"expected_version": post.get("expected_version"), "keep": post.get("keep"), "fields": fields}
    payload = service_attempt(request, lambda: page_input(DoubleDecideApi.DecideInputSerializer, data))
    if payload is None:
        return redirect("review", slug=slug, pk=pk)
    keep, version = payload["keep"], payload["expected_version"]
    labels = {"first": "Kept the first version", "second": "Kept the second version", "merge": "Merged the versions"}
    service_attempt(
        request,
        lambda: agreement_services.double_decide(
            instance_id=pk, user=request.user, expected_version=version, choices=decide_choices(keep, fields)
        ),
        f"{labels[keep]}; now approve or request changes.",
    )
    return redirect(f"{reverse('review', kwargs={'slug': slug, 'pk': pk})}#double")


@login_required
@require_POST
def agreement_settings_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The dashboard's double-annotation form (managers); the API's input serializer checks it."""
    project = selectors.project_get(user=request.user, slug=slug)
    service_attempt(
        request,
        lambda: agreement_services.agreement_configure(
            project=project, actor=request.user, **page_input(AgreementSettingsSerializer, request.POST)
        ),
        "Double-annotation settings saved.",
    )
    return redirect(f"{reverse('dashboard', kwargs={'slug': slug})}#agreement")
