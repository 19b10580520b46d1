"""Drafting reads for the pages and API: runs, items and templates, for a project's managers only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from curation import selectors
from curation.drafting.models import DEFAULT_OPTIONS, DraftingItem, DraftingRun, PromptTemplate
from curation.drafting.templates import TEMPLATE_SUBTYPES
from curation.errors import NotFound, NotPermitted
from curation.models import Project, ReasoningType
from curation.states import Role


def runs_of_project(*, user: AbstractBaseUser, project: Project) -> QuerySet[DraftingRun]:
    """The project's drafting runs, newest first, for its managers."""
    if Role.MANAGER.value not in selectors.roles_of(user=user, project=project):
        return DraftingRun.objects.none()
    return DraftingRun.objects.filter(project=project).select_related("batch", "endpoint", "created_by")


def run_get(*, user: AbstractBaseUser, run_id: int, slug: str | None = None) -> DraftingRun:
    """One run, for a manager of its project (other members 403, everyone else 404); on a page, of the project `slug`
    names."""
    run = DraftingRun.objects.select_related("project", "batch", "endpoint").filter(pk=run_id).first()
    roles = selectors.roles_of(user=user, project=run.project) if run is not None and user.is_authenticated else set()
    if not roles:
        raise NotFound(f"No drafting run {run_id} that you may see.")
    if Role.MANAGER.value not in roles:
        raise NotPermitted("Only a manager of this project may see its drafting runs.")
    if slug not in (None, run.project.slug):
        raise NotFound("No such run in this project.")
    return run


def run_items(run: DraftingRun) -> QuerySet[DraftingItem]:
    """A run's items with their contexts, in order."""
    return run.items.select_related("context", "context__paper", "context__reasoning_type").order_by("pk")


def run_queued_behind(run: DraftingRun) -> int | None:
    """How many drafting runs started earlier on this run's queue are still unfinished, while no item of this
    run has begun (None once one has, or when the run is not waiting)."""
    if run.started_at is None or not run.is_active:
        return None
    if run.items.exclude(status__in=(DraftingItem.Status.PENDING, DraftingItem.Status.SKIPPED)).exists():
        return None
    earlier = Q(started_at__lt=run.started_at) | Q(started_at=run.started_at, pk__lt=run.pk)  # never an unstarted run
    queue = run.options.get("queue", "")
    return DraftingRun.objects.filter(earlier, options__queue=queue, status__in=DraftingRun.ACTIVE).count()


def prompt_templates_of(*, project: Project, kind: str | None = None) -> QuerySet[PromptTemplate]:
    """Every version of the project's templates, newest first (the caller has checked the role)."""
    qs = (
        PromptTemplate.objects.filter(project=project)
        .select_related("created_by")
        .order_by("kind", "-created_at", "-id")
    )
    return qs.filter(kind=kind) if kind else qs


def run_type_summary(run: DraftingRun) -> list[dict[str, Any]]:
    """Per assigned reasoning type of a run's contexts (its name and code): contexts assigned, drafts made, the ids of
    the contexts left for a language-model run (no template drafts their type: "routed"), and drafts dropped by their
    self-check with the reasons."""
    rows: dict[str, dict[str, Any]] = {}
    for item in run_items(run):
        reasoning_type = item.context.reasoning_type
        name = reasoning_type.name if reasoning_type else "(none assigned)"
        code = reasoning_type.code if reasoning_type else ""
        row = rows.setdefault(
            name, {"type": name, "code": code, "assigned": 0, "drafted": 0, "routed": [], "dropped": 0, "reasons": {}}
        )
        row["assigned"] += 1
        row["drafted"] += item.instance_count
        raw = item.raw_output or {}
        if raw.get("routed"):
            row["routed"].append(item.context_id)
        for rejected in raw.get("rejected") or []:
            row["dropped"] += 1
            reason = str(rejected.get("reason", "")) if isinstance(rejected, dict) else str(rejected)
            row["reasons"][reason] = row["reasons"].get(reason, 0) + 1
    return sorted(rows.values(), key=lambda row: row["type"])


# The run page's words for an option (curation/drafting/models.py: DEFAULT_OPTIONS), in the form's order.
OPTION_LABELS = {
    "template_ids": "Templates",
    "per_template": "Questions per template",
    "seed": "Seed",
    "unanswerable": "Unanswerable questions",
    "paraphrase_headers": "Header names paraphrased",
    "max_context_chars": "Longest context sent (characters)",
    "redraft": "Contexts already drafted",
    "chunk_size": "Contexts per chunk",
    "queue": "Queue",
}
# What only one drafter reads: the other's page does not show it.
TEMPLATE_OPTIONS = {"template_ids", "per_template", "seed", "unanswerable", "paraphrase_headers"}
LLM_OPTIONS = {"max_context_chars"}


def run_options_said(run: DraftingRun) -> list[tuple[str, str]]:
    """A run's options as its page says them: labelled, a default in words rather than the [] or "" that stands for
    it, and only those its drafter reads. `run_create` records every option, the chunk size it took included (an
    older run's missing option reads as its default)."""
    options = {**DEFAULT_OPTIONS, **run.options}
    template_run = run.kind == DraftingRun.Kind.TEMPLATE
    said = {
        "template_ids": ", ".join(options["template_ids"]) or "by each context's reasoning type",
        "per_template": str(options["per_template"]),
        "seed": str(options["seed"]),
        "unanswerable": "kept, for the unanswerable split" if options["unanswerable"] == "keep" else "skipped",
        "paraphrase_headers": "yes, by the run's endpoint" if options["paraphrase_headers"] else "no",
        "max_context_chars": f"{options['max_context_chars']:,}",
        "redraft": "drafted again" if options["redraft"] else "skipped",
        "chunk_size": str(options["chunk_size"] or "automatic"),  # runs before 2026-12 recorded 0
        "queue": options["queue"] or "not sent yet",
    }
    hidden = LLM_OPTIONS if template_run else TEMPLATE_OPTIONS
    return [(label, said[name]) for name, label in OPTION_LABELS.items() if name not in hidden]


def types_without_templates(*, project: Project) -> list[ReasoningType]:
    """The project's reasoning types no question template exercises (a type counts as covered when one of its
    subtypes is): a template run leaves contexts assigned them undrafted, for a language-model run."""
    types = ReasoningType.objects.filter(project=project).prefetch_related("subtypes").order_by("order")
    return [t for t in types if not {t.code, *(sub.code for sub in t.subtypes.all())} & TEMPLATE_SUBTYPES]


def endpoint_speeds(*, project: Project, endpoints: Iterable[Any], batches: Iterable[Any]) -> list[dict[str, Any]]:
    """Per endpoint: the measured seconds per context over its latest drafted LLM items (none yet: None), and the
    estimated time of a run over each batch's short contexts."""
    sizes = [(batch, batch.contexts.filter(kind="short").count()) for batch in batches]
    rows = []
    for endpoint in endpoints:
        items = (
            DraftingItem.objects.filter(
                run__project=project,
                run__kind=DraftingRun.Kind.LLM,
                run__endpoint=endpoint,
                status=DraftingItem.Status.DRAFTED,
                claimed_at__isnull=False,
                finished_at__isnull=False,
            )
            .order_by("-finished_at")
            .values_list("claimed_at", "finished_at")[:50]
        )
        durations = [(finished - claimed).total_seconds() for claimed, finished in items]
        seconds = sum(durations) / len(durations) if durations else None
        estimates = [
            {"batch": batch, "contexts": size, "minutes": seconds * size / 60}
            for batch, size in sizes
            if seconds is not None
        ]
        row = {"endpoint": endpoint, "seconds_per_context": seconds, "measured_contexts": len(durations)}
        rows.append({**row, "estimates": estimates})
    return rows
