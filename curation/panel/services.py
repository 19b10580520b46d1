"""The panel of a project, a batch's panel order, and calibrations (asked here, answered by scoring's job kind)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q, QuerySet

from curation.endpoints.models import ModelEndpoint
from curation.errors import Conflict, InvalidInput, NotFound
from curation.exports.statistics import k_of_n_label
from curation.jobs import job_enqueue
from curation.models import Batch, Instance, Project
from curation.panel.models import PANEL_HELD, Calibration, PanelAnswer
from curation.services.projects import batch_managed, require_role
from curation.states import Role, Status

PANEL_MAX = 8
CALIBRATE_TASK = "scoring.calibrate"


def panel_candidates(*, user: AbstractBaseUser, project: Project) -> QuerySet[ModelEndpoint]:
    """The endpoints `user` may name to the project's panel: those usable in it that they may see."""
    return ModelEndpoint.objects.visible_to(user, project=project).order_by("name")


def panel_of(*, user: AbstractBaseUser, project: Project) -> list[int]:
    """The ids of the endpoints on the project's panel (its managers only)."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see the panel")
    return sorted(project.panel.values_list("pk", flat=True))


def calibration_summary(*, user: AbstractBaseUser, batch: Batch) -> dict[str, Any]:
    """The batch's latest calibration as `panel_summaries` gives it (its project's managers only)."""
    require_role(user=user, project=batch.project, roles=(Role.MANAGER,), action="see a batch's calibrations")
    summary = panel_summaries([batch]).get(batch.pk)
    if summary is None:
        raise NotFound(f"Batch {batch.name} was never calibrated.")
    return summary


def panel_set(*, project: Project, actor: AbstractBaseUser | None, endpoint_ids: list[int]) -> list[ModelEndpoint]:
    """Name the project's panel (replacing it); an empty list leaves the project without a panel. `actor=None` is
    an operator's command."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="name the panel")
    wanted = set(endpoint_ids)
    if len(wanted) > PANEL_MAX:
        raise InvalidInput(f"A panel has at most {PANEL_MAX} models; {len(wanted)} were chosen.")
    endpoints = list(ModelEndpoint.objects.usable_in(project).filter(pk__in=wanted))
    missing = wanted - {e.pk for e in endpoints}
    if missing:
        raise NotFound(f"No endpoint {', '.join(map(str, sorted(missing)))} usable in this project.")
    project.panel.set(endpoints)
    return endpoints


def batch_panel_order_set(*, batch_id: int, actor: AbstractBaseUser, order: str) -> Batch:
    """How the batch's queue uses its k of n (`Batch.PanelOrder`)."""
    batch = batch_managed(batch_id, actor, "set a batch's panel order")
    if order not in Batch.PanelOrder.values:
        choices = ", ".join(repr(value) for value in Batch.PanelOrder.values)
        raise InvalidInput(f"Panel order must be one of {choices}; got {order!r}.", detail={"field": "panel_order"})
    Batch.objects.filter(pk=batch.pk).update(panel_order=order)
    batch.panel_order = order
    return batch


def calibration_request(*, batch_id: int, actor: AbstractBaseUser | None) -> Calibration:
    """Ask the panel to answer every instance of the batch (a job on the scoring queue). 409 while one of the batch
    is still waiting or running; refused without a panel or without an instance to answer."""
    batch = batch_managed(batch_id, actor, "calibrate a batch")
    project = batch.project
    panel = list(project.panel.all())
    if not panel:
        raise InvalidInput(
            "Name the project's panel of models first (Panel, on the batches page).", detail={"field": "panel"}
        )
    if not batch.instances.exclude(status=Status.DISCARDED).exists():
        raise InvalidInput(f"Batch {batch.name} has no instance for the panel to answer.", detail={"field": "batch"})
    with transaction.atomic():
        Batch.objects.select_for_update().filter(pk=batch.pk).first()  # one calibration of a batch at a time
        busy = Calibration.objects.filter(batch=batch, state__in=Calibration.ACTIVE).first()
        if busy is not None:
            raise Conflict(f"Batch {batch.name} is being calibrated already (calibration {busy.pk}).")
        calibration = Calibration.objects.create(project=project, batch=batch, requested_by=actor)
        calibration.endpoints.set(panel)
        job_enqueue(task_name=CALIBRATE_TASK, args=[calibration.pk])  # sent after commit
    return calibration


def panel_summaries(batches: list[Batch]) -> dict[int, dict[str, Any]]:
    """Per batch id, for the batches calibrated at least once: the latest calibration, the distribution of k (of n)
    over its instances, the share each panel model answered correctly, how many drafts the panel order holds back
    and how many instances have no verdict. Five queries, however many batches."""
    ids = [batch.pk for batch in batches]
    latest: dict[int, Calibration] = {}
    for calibration in Calibration.objects.filter(batch_id__in=ids).order_by("batch_id", "-created_at", "-id"):
        latest.setdefault(calibration.batch_id, calibration)
    instances = Instance.objects.filter(batch_id__in=list(latest)).exclude(status=Status.DISCARDED)
    summaries: dict[int, dict[str, Any]] = {
        batch_id: {
            "calibration": calibration,
            "active": calibration.state in Calibration.ACTIVE,
            "k_of_n": {},
            "models": [],
            "held": 0,
            "uncalibrated": 0,
        }
        for batch_id, calibration in latest.items()
    }
    for row in (
        instances.filter(panel_size__isnull=False)
        .values("batch_id", "panel_correct", "panel_size")
        .annotate(n=Count("id"))
        .order_by("batch_id", "panel_size", "panel_correct")
    ):
        summaries[row["batch_id"]]["k_of_n"][k_of_n_label(row["panel_correct"], row["panel_size"])] = row["n"]
    for row in (
        PanelAnswer.objects.filter(instance__in=instances, error="")
        .values("instance__batch_id", "model")
        .annotate(answered=Count("id", filter=Q(is_correct=True)), asked=Count("id"))
        .order_by("instance__batch_id", "model")
    ):
        share = round(100 * row["answered"] / row["asked"], 1) if row["asked"] else 0.0
        summaries[row["instance__batch_id"]]["models"].append(
            {"model": row["model"], "answered": row["answered"], "asked": row["asked"], "percent": share}
        )
    counts = instances.values("batch_id").annotate(
        held=Count("id", filter=PANEL_HELD & Q(status=Status.DRAFTED)),
        uncalibrated=Count("id", filter=Q(panel_size__isnull=True)),
    )
    for row in counts.order_by("batch_id"):
        summaries[row["batch_id"]].update(held=row["held"], uncalibrated=row["uncalibrated"])
    return summaries
