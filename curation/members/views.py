"""Pages for starting a project and managing its members (interfaces only: the services decide)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from curation import selectors
from curation.members import selectors as member_selectors
from curation.members import services as member_services
from curation.models import Project
from curation.page_errors import FORM_ERRORS, form_error_add, service_attempt
from curation.services import projects as project_services
from curation.states import Role


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(
        max_length=80, required=False, help_text="Part of every address; made from the name if empty"
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150, label="Existing user's name")
    role = forms.ChoiceField(choices=Role.choices)


class MemberCreateForm(forms.Form):
    username = forms.CharField(max_length=150, label="New username")
    email = forms.EmailField(required=False)
    role = forms.ChoiceField(choices=Role.choices)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


def with_article(role: str) -> str:
    """'an annotator', 'a verifier', 'a manager'."""
    return f"{'an' if role[:1] in 'aeiou' else 'a'} {role}"


@login_required
def project_new(request: HttpRequest) -> HttpResponse:
    if not project_services.can_create_projects(request.user):
        raise PermissionDenied("Only operators and project managers may create projects; ask one to add you.")
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = project_services.project_create(creator=request.user, **form.cleaned_data)
        except FORM_ERRORS as exc:
            form_error_add(form, exc)
        else:
            messages.success(request, f"Project {project.name} created; you are its manager. Add members next.")
            return redirect("members", slug=project.slug)
    return render(request, "curation/project_new.html", {"form": form})


def _members_page(request: HttpRequest, project: Project, **forms_and_extras: object) -> HttpResponse:
    members = list(member_selectors.members_of(user=request.user, project=project))
    context = {
        "project": project,
        "sole_manager_id": member_services.last_manager_id(members),  # no Remove: the services refuse it
        "members": [
            {"membership": m, "role_form": RoleForm(initial={"role": m.role}, prefix=f"m{m.pk}")} for m in members
        ],
        "add_form": MemberAddForm(auto_id="add_%s"),
        "create_form": MemberCreateForm(auto_id="new_%s"),
        **forms_and_extras,
    }
    return render(request, "curation/members.html", context)


@login_required
def members(request: HttpRequest, slug: str) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    if request.method != "POST":
        return _members_page(request, project)
    if "create" in request.POST:
        form = MemberCreateForm(request.POST, auto_id="new_%s")
        if form.is_valid():
            try:
                membership, password = member_services.member_create(
                    project=project, actor=request.user, **form.cleaned_data
                )
            except FORM_ERRORS as exc:
                form_error_add(form, exc)
            else:
                # Rendered, not redirected: the password is shown this once and stored nowhere in clear.
                created = {"username": membership.user.username, "password": password, "role": membership.role}
                return _members_page(request, project, created=created)
        return _members_page(request, project, create_form=form)
    form = MemberAddForm(request.POST, auto_id="add_%s")
    if form.is_valid():
        try:
            membership = project_services.membership_add(project=project, actor=request.user, **form.cleaned_data)
        except FORM_ERRORS as exc:
            form_error_add(form, exc)
        else:
            messages.success(
                request, f"{membership.user.username} is now {with_article(membership.role)} of {project.name}."
            )
            return redirect("members", slug=project.slug)
    return _members_page(request, project, add_form=form)


@login_required
@require_POST
def member_role(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    form = RoleForm(request.POST, prefix=f"m{pk}")
    if not form.is_valid():
        messages.error(request, "Choose a role.")
        return redirect("members", slug=project.slug)
    current = member_selectors.members_of(user=request.user, project=project).filter(pk=pk).first()
    if current is not None and current.role == form.cleaned_data["role"]:
        messages.info(request, f"{current.user.username} is already {with_article(current.role)}; nothing changed.")
        return redirect("members", slug=project.slug)
    membership = service_attempt(
        request,
        lambda: member_services.membership_set_role(
            project=project, actor=request.user, membership_id=pk, role=form.cleaned_data["role"]
        ),
    )
    if membership is not None:
        messages.success(request, f"{membership.user.username} is now {with_article(membership.role)}.")
    return redirect("members", slug=project.slug)


@login_required
@require_POST
def member_remove(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project = selectors.project_get(user=request.user, slug=slug)
    service_attempt(
        request,
        lambda: member_services.membership_remove(project=project, actor=request.user, membership_id=pk),
        "Member removed; their past work stays.",
    )
    return redirect("members", slug=project.slug)
