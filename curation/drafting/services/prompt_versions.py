"""Prompt template versions of a project: the defaults, the current version of each kind, saving a new one."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation.drafting import prompts
from curation.drafting.models import PromptTemplate
from curation.errors import InvalidInput
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role


def _latest(project: Project, kind: str) -> PromptTemplate | None:
    return PromptTemplate.objects.filter(project=project, kind=kind).order_by("-created_at", "-id").first()


def prompt_templates_ensure_defaults(*, project: Project) -> None:
    """Give a project today's default of every kind it lacks or still holds an earlier, unedited default of."""
    for kind, (name, text) in prompts.DEFAULT_TEMPLATES.items():
        latest = _latest(project, kind)
        if latest is None or latest.content_hash in prompts.SUPERSEDED_DEFAULT_HASHES.get(kind, ()):
            PromptTemplate.objects.create(
                project=project,
                kind=kind,
                name=latest.name if latest else name,
                text=text,
                content_hash=prompts.content_hash(text),
                note=prompts.DEFAULT_UPDATE_NOTES.get(kind, "Default updated.") if latest else "",
            )


def prompt_template_current(*, project: Project, kind: str) -> PromptTemplate:
    """The latest version of a project's template of `kind`, creating the defaults first when none exist."""
    if kind not in PromptTemplate.Kind.values:
        raise InvalidInput(f"{kind!r} is not a template kind; expected one of {', '.join(PromptTemplate.Kind.values)}.")
    current = _latest(project, kind)
    if current is None or current.content_hash in prompts.SUPERSEDED_DEFAULT_HASHES.get(kind, ()):
        prompt_templates_ensure_defaults(project=project)
        current = _latest(project, kind)
    assert current is not None
    return current


@transaction.atomic
def prompt_template_save(
    *, project: Project, actor: AbstractBaseUser, kind: str, text: str, name: str = "", note: str = ""
) -> PromptTemplate:
    """Save a new version of a template (managers only); saving the current text again changes nothing."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="edit prompt templates")
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise InvalidInput("A prompt template cannot be empty.")
    current = prompt_template_current(project=project, kind=kind)
    digest = prompts.content_hash(text)
    if digest == current.content_hash and (not name or name == current.name):
        return current
    required = {"question": ("context",), "rationale_answer": ("question", "context"), "header_paraphrase": ("header",)}
    missing = [key for key in required.get(kind, ()) if "{{" + key + "}}" not in text.replace(" ", "")]
    if missing:
        raise InvalidInput(f"The template must contain {', '.join('{{' + key + '}}' for key in missing)}.")
    return PromptTemplate.objects.create(
        project=project,
        kind=kind,
        name=name or current.name,
        text=text,
        content_hash=digest,
        note=note,
        created_by=actor,
    )
