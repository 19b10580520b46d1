"""Writes for hidden gold: configure it, serve a probe in the queue, score its submission, pause and restore.

A probe is never an Instance of the pipeline: serving it touches no instance, its answer is stored on the probe
only, and the gold answer is read only inside `probe_submit` (scoring).
"""

from __future__ import annotations

import math
import random
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotate.qualification.services import clean_answer, gold_candidates, items_seen_in_exams
from annotate.quality.intervals import wilson_interval
from annotate.quality.models import GoldProbe, QualityDecision, QualitySettings
from curation.errors import Conflict, InvalidInput, NotFound
from curation.members.selectors import is_qualified_annotator
from curation.models import Batch, Instance, Membership, Project
from curation.selectors import instances_visible_to
from curation.services.projects import require_role
from curation.states import Role, Status
from curation.webhooks.services import webhook_emit
from scoring.metrics.scitat import exact_match

MAX_GOLD_EVERY = 1000


def quality_settings_of(project: Project) -> QualitySettings:
    """The project's hidden-gold settings, or unsaved defaults (hidden gold off)."""
    return QualitySettings.objects.filter(project=project).first() or QualitySettings(project=project)


def _number(name: str, value: Any, low: float, high: float, *, whole: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) or not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low:g} and {high:g}.", detail={"field": name})
    if whole and int(value) != value:
        raise InvalidInput(f"{name} must be a whole number.", detail={"field": name})
    return value


@transaction.atomic
def quality_configure(
    *,
    project: Project,
    actor: AbstractBaseUser,
    gold_every: int | None = None,
    gold_threshold: float | None = None,
    gold_min_sample: int | None = None,
    is_pause_on_fail: bool | None = None,
) -> QualitySettings:
    """Set hidden gold (managers only); every value is checked before anything is saved."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="configure hidden gold")
    quality, _ = QualitySettings.objects.select_for_update().get_or_create(project=project)
    if gold_every is not None:
        quality.gold_every = int(_number("gold_every", gold_every, 0, MAX_GOLD_EVERY, whole=True))
        if quality.gold_every == 1:
            raise InvalidInput(
                "gold_every of 1 would serve only gold; use 0 (off) or 2 and more.", detail={"field": "gold_every"}
            )
    if gold_threshold is not None:
        quality.gold_threshold = float(_number("gold_threshold", gold_threshold, 0.0, 1.0, whole=False))
    if gold_min_sample is not None:
        quality.gold_min_sample = int(_number("gold_min_sample", gold_min_sample, 1, 10_000, whole=True))
    if is_pause_on_fail is not None:
        quality.is_pause_on_fail = bool(is_pause_on_fail)
    quality.save()
    return quality


def number_reserve(project: Project) -> int:
    """A number from the instances' own id sequence that no instance will ever have: a bare row is inserted and
    deleted in the caller's transaction (a PostgreSQL sequence and SQLite's AUTOINCREMENT never hand a number out
    twice), so a probe's number sits among the drafts' numbers."""
    placeholder = Instance.objects.create(project=project)
    Instance.objects.filter(pk=placeholder.pk).delete()
    return placeholder.pk


def probe_numbered(probe: GoldProbe) -> GoldProbe:
    """The probe with its workspace number (probes served before numbers existed get one on their next claim)."""
    if probe.number is None:
        with transaction.atomic():
            GoldProbe.objects.filter(pk=probe.pk, number=None).update(number=number_reserve(probe.project))
        probe.refresh_from_db()
    return probe


def open_probe(*, project_id: int, user: AbstractBaseUser) -> GoldProbe | None:
    """The probe the annotator holds in this project (served, not yet submitted)."""
    return GoldProbe.objects.filter(project_id=project_id, user_id=user.pk, submitted_at=None).first()


def _claims_so_far(*, project_id: int, user: AbstractBaseUser) -> int:
    """Fresh claims the annotator made in the project (instances they authored) plus probes served."""
    authored = Instance.objects.filter(project_id=project_id, author_id=user.pk).count()
    return authored + GoldProbe.objects.filter(project_id=project_id, user_id=user.pk).count()


def probe_is_due(*, quality: QualitySettings, user: AbstractBaseUser, claims_so_far: int) -> bool:
    """One claim in every `gold_every` is gold; where in each block of N it falls is drawn per (project, user,
    block) with a seeded generator, so the pattern cannot be counted but is reproducible."""
    n = quality.gold_every
    if n < 2:
        return False
    block, position = divmod(claims_so_far, n)
    return position == random.Random(f"{quality.project_id}:{user.pk}:{block}").randrange(n)


def _gold_for(*, project: Project, user: AbstractBaseUser) -> Instance | None:
    """A gold instance the annotator has never been probed with, never saw in their qualification exam, and cannot
    open through their own work."""
    probed = set(GoldProbe.objects.filter(user_id=user.pk).values_list("gold_id", flat=True))
    seen = probed | items_seen_in_exams(user)
    candidates = [instance for instance in gold_candidates(project) if instance.pk not in seen]
    if not candidates:
        return None
    visible = set(instances_visible_to(user).filter(pk__in=[c.pk for c in candidates]).values_list("pk", flat=True))
    fit = [instance for instance in candidates if instance.pk not in visible]
    if not fit:
        return None
    return random.Random(f"{project.pk}:{user.pk}:{len(probed)}").choice(fit)


def probe_serve(*, project: Project, user: AbstractBaseUser) -> GoldProbe | None:
    """Called by the queue before a fresh claim: the annotator's open probe, or a new one when one is due; None
    otherwise. Only for a qualified annotator, and only while real drafts are waiting (an empty queue that still
    served work would give the gold away)."""
    probe = open_probe(project_id=project.pk, user=user)
    if probe is not None:
        return probe
    quality = quality_settings_of(project)
    if quality.gold_every < 2:
        return None
    if not is_qualified_annotator(project=project, user=user):
        return None
    if not Instance.objects.filter(project=project, status=Status.DRAFTED, batch__state=Batch.State.OPEN).exists():
        return None
    if not probe_is_due(quality=quality, user=user, claims_so_far=_claims_so_far(project_id=project.pk, user=user)):
        return None
    gold = _gold_for(project=project, user=user)
    if gold is None:
        return None
    try:
        with transaction.atomic():
            # At version 2, as a draft is once claimed (drafted at 1): the version the workspace shows must not differ.
            return GoldProbe.objects.create(
                project=project, user=user, gold=gold, number=number_reserve(project), version=2
            )
    except IntegrityError:  # a second tab served one at the same moment: that one is theirs
        return open_probe(project_id=project.pk, user=user)


def own_probe(*, probe_id: int, user: AbstractBaseUser, lock: bool = False) -> GoldProbe:
    """The annotator's own open probe; anything else is not found (a probe looks like a draft to no one else)."""
    probes = GoldProbe.objects.select_related("project")
    if lock:
        probes = probes.select_for_update()
    probe = probes.filter(pk=probe_id, user_id=user.pk, submitted_at=None).first() if user.is_authenticated else None
    if probe is None:
        raise NotFound(f"No item {probe_id} in your work.")
    return probe


@transaction.atomic
def probe_submit(
    *, probe_id: int, user: AbstractBaseUser, answer: Any, rationale: str = "", is_abstention: bool = False
) -> GoldProbe:
    """Score the annotator's answer to a probe with the exam's EM, close it, and check their running figure. An
    abstention (the workspace's "not answerable") answers nothing, so it scores 0 against the validated gold."""
    probe = own_probe(probe_id=probe_id, user=user, lock=True)
    cleaned = clean_answer(key=str(probe.pk), value={"answer": answer, "rationale": rationale})
    if not cleaned["answer"] and not is_abstention:
        raise InvalidInput("Give at least one answer item.", detail={"field": "answer"})
    gold = [str(item) for item in probe.gold.answer]
    em = float(exact_match(cleaned["answer"], gold)) if cleaned["answer"] else 0.0
    changed = GoldProbe.objects.filter(pk=probe.pk, submitted_at=None).update(
        submitted_at=timezone.now(),
        answer=cleaned["answer"],
        rationale=cleaned["rationale"],
        em=em,
        version=F("version") + 1,  # as a draft's submission moves its version on
    )
    if changed != 1:
        raise Conflict("This item was submitted already.")
    probe.refresh_from_db()
    annotator_check(project=probe.project, user=user)
    return probe


def gold_figure(*, project: Project, user_id: int) -> dict[str, Any]:
    """An annotator's running hidden-gold EM: sample size, mean and its 95 % Wilson interval.

    Counted from the annotator's latest qualification on (the exam passed again, or a manager's restore): that starts
    a fresh record, so the old figure does not pause them again at once; a pause keeps the figure it was based on."""
    probes = GoldProbe.objects.filter(project=project, user_id=user_id, em__isnull=False)
    qualified_at = (
        Membership.objects.filter(project=project, user_id=user_id, role=Role.ANNOTATOR)
        .values_list("qualified_at", flat=True)
        .first()
    )
    if qualified_at is not None:
        probes = probes.filter(submitted_at__gt=qualified_at)
    scores = list(probes.values_list("em", flat=True))
    n = len(scores)
    low, high = wilson_interval(sum(scores), n)
    return {"n": n, "em": (sum(scores) / n) if n else None, "low": low, "high": high}


def is_below_threshold(*, quality: QualitySettings, figure: dict[str, Any]) -> bool:
    """The one alert rule: at least the minimum sample scored, and the running EM under the threshold."""
    return figure["n"] >= quality.gold_min_sample and figure["em"] is not None and figure["em"] < quality.gold_threshold


def annotator_check(*, project: Project, user: AbstractBaseUser) -> QualityDecision | None:
    """After each scored probe: pause an annotator below the threshold when the project says so (audited), so they
    must pass the exam again. Returns the decision, or None when nothing changed."""
    quality = quality_settings_of(project)
    figure = gold_figure(project=project, user_id=user.pk)
    if not (quality.is_pause_on_fail and is_below_threshold(quality=quality, figure=figure)):
        return None
    changed = Membership.objects.filter(
        project=project, user_id=user.pk, role=Role.ANNOTATOR, is_qualified=True
    ).update(is_qualified=False)
    if not changed:
        return None
    decision = QualityDecision.objects.create(
        project=project,
        user_id=user.pk,
        action=QualityDecision.Action.PAUSED,
        actor=None,
        reason=(
            f"Hidden-gold EM {figure['em']:.2f} over {figure['n']} items is below the project's threshold "
            f"{quality.gold_threshold:.2f}; paused until re-qualified."
        ),
        em=figure["em"],
        sample=figure["n"],
    )
    payload = {
        "annotator": user.get_username(),
        "em": figure["em"],
        "sample": figure["n"],
        "threshold": quality.gold_threshold,
        "reason": decision.reason,
        "decided_at": decision.created_at,
    }
    webhook_emit(project=project, event="annotator.paused", payload=payload)
    return decision


@transaction.atomic
def annotator_restore(*, project: Project, actor: AbstractBaseUser, user_id: int, reason: str) -> QualityDecision:
    """A manager reverses a pause (audited with their reason); the annotator may claim again at once."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="restore a paused annotator")
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("Say why you restore this annotator.", detail={"field": "reason"})
    if len(reason) > 500:
        raise InvalidInput("A reason has at most 500 characters.", detail={"field": "reason"})
    last = QualityDecision.objects.filter(project=project, user_id=user_id).order_by("-created_at", "-id").first()
    if last is None or last.action != QualityDecision.Action.PAUSED:
        raise InvalidInput("This annotator is not paused by hidden gold.", detail={"field": "user"})
    changed = Membership.objects.filter(
        project=project, user_id=user_id, role=Role.ANNOTATOR, is_qualified=False
    ).update(is_qualified=True, qualified_at=timezone.now())
    if not changed:
        raise Conflict("This annotator has re-qualified already.")
    figure = gold_figure(project=project, user_id=user_id)
    return QualityDecision.objects.create(
        project=project,
        user_id=user_id,
        action=QualityDecision.Action.RESTORED,
        actor=actor,
        reason=reason,
        em=figure["em"],
        sample=figure["n"],
    )
