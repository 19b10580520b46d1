"""What the drafts cost: per field, how much annotators changed each draft before submitting it, by drafter, prompt
version, model endpoint and reasoning type, with refining time. A fixed number of queries whatever the project's
size: the first submissions stream in one query, the times in one, the prompt names in one. The doors read them
through the project figures cache, so a second view until the next instance change reads none of them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Sum

from annotate.dashboard.edit_costs import NOT_RECORDED, CostTally, field_distances
from annotate.work.models import WorkTime
from curation.drafting.models import PromptTemplate
from curation.figures_cache import project_figures
from curation.models import Instance, InstanceRevision, Project
from curation.services.projects import require_role
from curation.states import Role, Status


def _group_labels(draft: dict[str, Any], reasoning_type: str | None, prompts: dict[str, str]) -> dict[str, str]:
    """The groups one draft (its record) falls in, worded as a person reads them. Template drafts name their question
    template as their prompt version and have no model endpoint; imported drafts have no drafter of ours (`import`),
    no prompt and no endpoint; what a draft did not record reads "not recorded"."""
    is_import = (draft.get("provenance") or {}).get("source") == "import"
    drafter = draft.get("drafter") or ("import" if is_import else "")
    if drafter == "template":
        prompt = f"template {draft['template_id']}" if draft.get("template_id") else ""
    else:
        digest = (draft.get("template_hashes") or {}).get("question") or ""
        prompt = prompts.get(digest, f"prompt {digest[:8]}") if digest else ""
    endpoint, model = (draft.get("endpoint") or {}).get("name") or "", draft.get("model")
    if endpoint and model and model != endpoint:
        endpoint = f"{endpoint} · {model}"
    missing = {"template": "no endpoint (template drafts)", "import": "imported (no endpoint)"}
    return {
        "drafter": drafter or NOT_RECORDED,
        "prompt_version": prompt or ("imported (no prompt)" if drafter == "import" else NOT_RECORDED),
        "endpoint": endpoint or missing.get(drafter, NOT_RECORDED),
        "reasoning_type": reasoning_type or "no reasoning type",
    }


def _prompt_names(project: Project) -> dict[str, str]:
    """Question prompt versions by content hash, numbered in the order they were made (the oldest is v1); a hash no
    version row has any more shows as `prompt <its first 8 hex digits>`."""
    names: dict[str, str] = {}
    hashes = (
        PromptTemplate.objects.filter(project=project, kind="question")
        .order_by("created_at", "id")
        .values_list("content_hash", flat=True)
    )
    for digest in hashes:
        names.setdefault(digest, f"prompt v{len(names) + 1}")
    return names


def draft_costs(project: Project) -> dict[str, Any]:
    """The project's draft-edit figures (no role check: `draft_costs_of` is the door for people, the command is the
    operator's). Each instance counts once, with its first submission: what the annotator made of the draft, before
    any reviewer asked for changes. Discarded instances and instances never submitted are not counted."""
    seconds = dict(
        WorkTime.objects.filter(instance__project=project, activity="refine")
        .values_list("instance_id")
        .annotate(total=Sum("active_seconds"))
        .values_list("instance_id", "total")
    )
    prompts = _prompt_names(project)
    submissions = (
        InstanceRevision.objects.filter(
            instance__in=Instance.objects.without_probes().filter(project=project), kind="submit"
        )
        .exclude(instance__status=Status.DISCARDED)
        .order_by("instance_id", "number")
        .values_list("instance_id", "fields", "instance__draft", "instance__reasoning_type__name")
    )
    tally = CostTally()
    previous = None
    for instance_id, fields, draft, reasoning_type in submissions.iterator(chunk_size=2000):
        if instance_id == previous:  # a resubmission after changes requested: the first one counts
            continue
        previous = instance_id
        draft = draft if isinstance(draft, dict) else {}
        if not draft:
            continue  # written from scratch, not drafted
        tally.add(
            groups=_group_labels(draft, reasoning_type, prompts),
            distances=field_distances(draft, fields),
            seconds=seconds.get(instance_id),
        )
    return tally.figures()


def draft_costs_of(*, user: AbstractBaseUser, project: Project) -> dict[str, Any]:
    """Managers only: the draft-edit figures the dashboard, its CSV and the API show (cached)."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see what the drafts cost")
    return draft_costs_cached(project)


def draft_costs_cached(project: Project) -> dict[str, Any]:
    """The draft-edit figures from the project figures cache (recomputed after any change of the project's
    instances); no role check, as `draft_costs`."""
    return project_figures(project, "draft_costs", lambda: draft_costs(project))
