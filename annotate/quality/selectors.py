"""Reads of hidden gold: the managers' per-annotator figures, list of probes and reissued ids (nobody else reads
`GoldProbe` or `ReissuedId`)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, Subquery

from annotate.quality.models import GoldProbe, QualityDecision, QualitySettings, ReissuedId
from annotate.quality.services import batches_without_probes, gold_figure_of, is_below_threshold, quality_settings_of
from curation.members.selectors import is_qualified_annotator
from curation.models import Instance, Membership, Project
from curation.selectors import roles_of
from curation.services.projects import require_role
from curation.states import Role
from curation.visibility import QUALIFIED


def is_paused(*, last_decision: QualityDecision | None, is_qualified: bool) -> bool:
    """The one rule of "paused": the annotator's latest hidden-gold decision paused them and they have not
    re-qualified since (the exam passed again, or a manager's restore, makes them qualified)."""
    return bool(last_decision and last_decision.action == QualityDecision.Action.PAUSED and not is_qualified)


def latest_decisions(*, project: Project, user_ids: Any = None) -> dict[int, QualityDecision]:
    """Each annotator's latest hidden-gold decision, however old (what `is_paused` reads), by user id; only
    `user_ids` (ids or a subquery of them) when given."""
    decisions = QualityDecision.objects.filter(project=project)
    if user_ids is not None:
        decisions = decisions.filter(user_id__in=user_ids)
    newest = QualityDecision.objects.filter(project=project, user_id=OuterRef("user_id")).order_by("-created_at", "-id")
    latest = decisions.filter(pk=Subquery(newest.values("pk")[:1])).select_related("user", "actor")
    return {decision.user_id: decision for decision in latest}


def pause_of(*, project: Project, user: AbstractBaseUser) -> QualityDecision | None:
    """The decision that pauses this annotator now, or None: what the queue tells them and why."""
    last = latest_decisions(project=project, user_ids=[user.pk]).get(user.pk)
    qualified = is_qualified_annotator(project=project, user=user)
    return last if is_paused(last_decision=last, is_qualified=qualified) else None


def paused_annotators(*, project: Project) -> set[int]:
    """The user ids of the project's annotators paused now (`is_paused` of each one's latest decision): the
    vouch form leaves them out, since only a restore (on the dashboard) takes a pause back."""
    unqualified = Membership.objects.filter(project=project, role=Role.ANNOTATOR).exclude(QUALIFIED)
    latest = latest_decisions(project=project, user_ids=unqualified.values("user_id"))
    return {user_id for user_id, last in latest.items() if is_paused(last_decision=last, is_qualified=False)}


def gold_figures(*, user: AbstractBaseUser, project: Project) -> dict[str, Any]:
    """Managers only: every annotator's running hidden-gold EM with its sample size and Wilson interval, whether it
    is below the project's threshold (the alert), whether they are paused, and the audit of decisions."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see hidden-gold figures")
    return project_gold_figures(project)


def quality_settings_get(*, user: AbstractBaseUser, project: Project) -> QualitySettings:
    """Managers only: the project's hidden-gold settings (without computing anyone's figures)."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see hidden-gold settings")
    return quality_settings_of(project)


def reissued_as(*, user: AbstractBaseUser, project: Project, instance_id: int) -> int | None:
    """For a manager, the id the project's instance once numbered `instance_id` has now that hidden gold's late
    placement reissued it; for anyone else None, as for an id never reissued (which ids were reissued would tell the
    probes among the new ones). None too while an instance of the project holds the id."""
    if Role.MANAGER not in roles_of(user=user, project=project):
        return None
    if Instance.objects.visible_to(user).filter(pk=instance_id, project=project).exists():
        return None
    reissued = ReissuedId.objects.filter(old_id=instance_id, instance__project=project)
    return reissued.values_list("instance_id", flat=True).first()


def project_gold_figures(project: Project) -> dict[str, Any]:
    """`gold_figures` without the role check: the operator's command reads it (people come through `gold_figures`)."""
    quality = quality_settings_of(project)
    memberships = Membership.objects.filter(project=project, role=Role.ANNOTATOR).select_related("user")
    probed, scored = set(), defaultdict(list)  # every probe of the project in one read: who was served, what scored
    for user_id, em, submitted_at in GoldProbe.objects.filter(project=project).values_list(
        "user_id", "em", "submitted_at"
    ):
        probed.add(user_id)
        if em is not None:
            scored[user_id].append((em, submitted_at))
    decisions = list(QualityDecision.objects.filter(project=project).select_related("user", "actor")[:200])
    last_decision = latest_decisions(project=project)
    rows = []
    for membership in sorted(memberships, key=lambda m: m.user.username):
        if membership.user_id not in probed and membership.user_id not in last_decision:
            continue
        figure = gold_figure_of(scored[membership.user_id], qualified_at=membership.qualified_at)
        last = last_decision.get(membership.user_id)
        rows.append(
            {
                "user_id": membership.user_id,
                "user": membership.user.username,
                **figure,
                "is_below": is_below_threshold(quality=quality, figure=figure),
                "is_paused": is_paused(last_decision=last, is_qualified=membership.is_qualified),
                "total": len(scored[membership.user_id]),
            }
        )
    # The only place probes are listed as probes: the manager's quality figures.
    probes = list(
        GoldProbe.objects.filter(project=project, instance__isnull=False)
        .select_related("instance", "user")
        .order_by("-instance_id")[:200]
    )
    without_probes = batches_without_probes(project, gold_every=quality.gold_every) if quality.gold_every >= 2 else []
    return {
        "quality": quality,
        "gold_rows": rows,
        "decisions": decisions,
        "probes": probes,
        "batches_without_probes": without_probes,
    }


GOLD_COLUMNS = ("user", "n", "total", "em", "low", "high", "is_below", "is_paused")


def gold_rows(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """The hidden-gold table as the page shows it, one row per annotator: the CSV and `--json` shape."""
    return [{name: row[name] for name in GOLD_COLUMNS} for row in figures["gold_rows"]]
