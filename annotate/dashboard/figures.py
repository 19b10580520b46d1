"""Figures of the manager's dashboard: batch progress, throughput, per-person quality, time and pay, CSV rows.

Figures are computed from the audit trail (TransitionEvent), the work-time pings and the exam attempts, so they
agree with the instance history a manager can open.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count
from django.utils import timezone

from annotate.agreement.selectors import agreement_csv_rows
from annotate.dashboard.draft_costs import draft_costs
from annotate.dashboard.edit_costs import flat_rows
from annotate.dashboard.models import PaySettings
from annotate.qualification.models import QualificationAttempt
from annotate.quality.drift import drift_rows, project_drift
from annotate.quality.selectors import gold_rows, project_gold_figures
from annotate.review.models import Discussion
from annotate.work.batches import SETTLED
from annotate.work.models import WorkTime
from curation.deadlines import deadline_state
from curation.errors import InvalidInput, NotPermitted
from curation.models import Batch, Instance, Membership, Project, TransitionEvent
from curation.selectors import roles_of
from curation.states import Role, Status

S = Status
ROUND1_DECISIONS = (S.ROUND2_REVIEW, S.CHANGES_REQUESTED)
ROUND2_DECISIONS = (S.VALIDATED, S.IN_DISCUSSION)
CSV_TABLES = (
    "batches",
    "throughput",
    "annotators",
    "verifiers",
    "time",
    "pay",
    "agreement",
    "gold",
    "drift",
    "draft_costs",
)


def require_manager(*, user: AbstractBaseUser, project: Project) -> None:
    """The dashboard is for the project's managers."""
    if Role.MANAGER not in roles_of(user=user, project=project):
        raise NotPermitted("Only managers of this project see its dashboard.")


def _events(project: Project) -> list[dict[str, Any]]:
    return list(
        TransitionEvent.objects.filter(instance__project=project)
        .order_by("created_at", "id")
        .values("instance_id", "actor_id", "from_status", "to_status", "created_at")
    )


def batch_progress(project: Project) -> list[dict[str, Any]]:
    """Per batch (and the unbatched rest): instances per status, total, settled share, whether it is complete, and its
    deadline; overdue batches first."""
    rows = Instance.objects.filter(project=project).values_list("batch_id", "status").annotate(n=Count("id"))
    per_batch: dict[int | None, dict[str, int]] = defaultdict(dict)
    for batch_id, status, n in rows:
        per_batch[batch_id][status] = n
    result = []
    batches: list[Batch | None] = list(Batch.objects.filter(project=project).order_by("order", "id"))
    if None in per_batch:
        batches.append(None)
    for batch in batches:
        counts = per_batch.get(batch.pk if batch else None, {})
        total = sum(counts.values())
        settled = sum(counts.get(s, 0) for s in SETTLED)
        segments = []
        offset = 0.0
        for status in Status:
            n = counts.get(status.value, 0)
            if n:
                width = 100 * n / total
                segments.append({"status": status.value, "label": status.label, "n": n, "x": offset, "width": width})
                offset += width
        result.append(
            {
                "batch": batch,
                "name": batch.name if batch else "(no batch)",
                "state": batch.state if batch else "",
                "counts": {s: counts.get(s, 0) for s in Status.values},
                "total": total,
                "settled": settled,
                "validated": counts.get(S.VALIDATED, 0) + counts.get(S.RELEASED, 0),
                "is_complete": bool(total) and settled == total,
                "segments": segments,
                "deadline": deadline_state(batch) if batch else None,
            }
        )
    # Overdue batches first (curation/deadlines.py), the rest in their order.
    return sorted(result, key=lambda row: not (row["deadline"] and row["deadline"].is_overdue))


def throughput(project: Project, *, days: int = 30, today: date | None = None) -> list[dict[str, Any]]:
    """Per day over the last `days` days: instances submitted (first submissions) and validated."""
    today = today or timezone.localdate()
    start = today - timedelta(days=days - 1)
    buckets = {start + timedelta(days=i): {"submitted": 0, "validated": 0} for i in range(days)}
    first_submit: set[int] = set()
    for event in _events(project):
        day = timezone.localtime(event["created_at"]).date()
        if event["to_status"] == S.SUBMITTED and event["from_status"] == S.IN_REFINEMENT:
            if event["instance_id"] in first_submit:
                continue
            first_submit.add(event["instance_id"])
            if day in buckets:
                buckets[day]["submitted"] += 1
        elif event["to_status"] == S.VALIDATED and day in buckets:
            buckets[day]["validated"] += 1
    return [{"date": day, **counts} for day, counts in sorted(buckets.items())]


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _members(project: Project, role: str):
    return Membership.objects.filter(project=project, role=role).select_related("user").order_by("user__username")


def annotator_stats(project: Project) -> list[dict[str, Any]]:
    """Per annotator: exam EM (latest and best), instances refined, round-one approval without changes, round-two
    flag rate on their work, round-two reviews done, and median active refining time per instance."""
    events = _events(project)
    authors = dict(Instance.objects.filter(project=project).values_list("id", "author_id"))
    refined: dict[int, set[int]] = defaultdict(set)
    round1: dict[int, set[int]] = defaultdict(set)  # instances that got a round-one decision
    sent_back: set[int] = set()
    round2: dict[int, set[int]] = defaultdict(set)
    flagged: set[int] = set()
    reviews2: dict[int, int] = defaultdict(int)
    for e in events:
        iid, source, target = e["instance_id"], e["from_status"], e["to_status"]
        if source == S.IN_REFINEMENT and target == S.SUBMITTED and e["actor_id"]:
            refined[e["actor_id"]].add(iid)
        if source == S.ROUND1_REVIEW and target in ROUND1_DECISIONS:
            round1[authors.get(iid)].add(iid)
            if target == S.CHANGES_REQUESTED:
                sent_back.add(iid)
        if source == S.ROUND2_REVIEW and target in ROUND2_DECISIONS:
            round2[authors.get(iid)].add(iid)
            reviews2[e["actor_id"]] += 1
            if target == S.IN_DISCUSSION:
                flagged.add(iid)
    attempts: dict[int, list[QualificationAttempt]] = defaultdict(list)
    for attempt in QualificationAttempt.objects.filter(project=project, submitted_at__isnull=False).order_by(
        "submitted_at"
    ):
        attempts[attempt.user_id].append(attempt)
    seconds: dict[int, list[float]] = defaultdict(list)
    for user_id, value in WorkTime.objects.filter(instance__project=project, activity="refine").values_list(
        "user_id", "active_seconds"
    ):
        seconds[user_id].append(value)
    validated = dict(
        Instance.objects.filter(project=project, status__in=(S.VALIDATED, S.RELEASED))
        .values_list("author_id")
        .annotate(n=Count("id"))
        .values_list("author_id", "n")
    )
    rows = []
    for membership in _members(project, Role.ANNOTATOR):
        uid = membership.user_id
        scored = [a.score for a in attempts[uid] if a.score is not None]
        decided1 = round1[uid]
        decided2 = round2[uid]
        rows.append(
            {
                "user": membership.user.username,
                "is_qualified": membership.is_qualified,
                "exam_latest": scored[-1] if scored else None,
                "exam_best": max(scored) if scored else None,
                "exam_attempts": len(attempts[uid]),
                "refined": len(refined[uid]),
                "validated": validated.get(uid, 0),
                "round1_decided": len(decided1),
                "round1_clean": len(decided1 - sent_back),
                "round1_clean_rate": _rate(len(decided1 - sent_back), len(decided1)),
                "round2_decided": len(decided2),
                "round2_flagged": len(decided2 & flagged),
                "round2_flag_rate": _rate(len(decided2 & flagged), len(decided2)),
                "round2_reviews": reviews2[uid],
                "median_active_seconds": _median(seconds[uid]),
            }
        )
    return rows


def verifier_stats(project: Project) -> list[dict[str, Any]]:
    """Per verifier: round-one reviews decided, changes requested among them, discussions resolved, median time."""
    reviews: dict[int, int] = defaultdict(int)
    changes: dict[int, int] = defaultdict(int)
    for e in _events(project):
        if e["from_status"] == S.ROUND1_REVIEW and e["to_status"] in ROUND1_DECISIONS:
            reviews[e["actor_id"]] += 1
            if e["to_status"] == S.CHANGES_REQUESTED:
                changes[e["actor_id"]] += 1
    resolved = dict(
        Discussion.objects.filter(instance__project=project)
        .exclude(decided_by=None)
        .values_list("decided_by")
        .annotate(n=Count("id"))
        .values_list("decided_by", "n")
    )
    seconds: dict[int, list[float]] = defaultdict(list)
    for user_id, value in WorkTime.objects.filter(instance__project=project, activity="review1").values_list(
        "user_id", "active_seconds"
    ):
        seconds[user_id].append(value)
    rows = []
    for membership in _members(project, Role.VERIFIER):
        uid = membership.user_id
        rows.append(
            {
                "user": membership.user.username,
                "reviews": reviews[uid],
                "changes_requested": changes[uid],
                "changes_rate": _rate(changes[uid], reviews[uid]),
                "discussions_resolved": resolved.get(uid, 0),
                "median_review_seconds": _median(seconds[uid]),
            }
        )
    return rows


def time_per_person(project: Project) -> list[dict[str, Any]]:
    """Active time per person and activity: total seconds, instances touched, and the per-instance median."""
    grouped: dict[tuple[str, str], list[float]] = defaultdict(list)
    for username, activity, value in WorkTime.objects.filter(instance__project=project).values_list(
        "user__username", "activity", "active_seconds"
    ):
        grouped[(username, activity)].append(value)
    return [
        {
            "user": username,
            "activity": activity,
            "instances": len(values),
            "total_seconds": round(sum(values), 1),
            "median_seconds": _median(values),
        }
        for (username, activity), values in sorted(grouped.items())
    ]


def time_per_instance(project: Project, *, limit: int = 500) -> list[dict[str, Any]]:
    """Active seconds per instance and person (refining and both review rounds), newest instances first."""
    rows = (
        WorkTime.objects.filter(instance__project=project)
        .select_related("user", "instance")
        .order_by("-instance_id", "user__username", "activity")[:limit]
    )
    return [
        {
            "instance": w.instance_id,
            "status": w.instance.status,
            "user": w.user.username,
            "activity": w.activity,
            "active_seconds": round(w.active_seconds, 1),
        }
        for w in rows
    ]


def pay_settings_of(project: Project) -> PaySettings:
    """The project's pay settings, or unsaved defaults ($1 per validated instance, as SciTaT paid)."""
    return PaySettings.objects.filter(project=project).first() or PaySettings(project=project)


def pay_report(project: Project, *, start: date, end: date) -> dict[str, Any]:
    """Pay per annotator for instances first validated in [start, end], at the project's rate per instance."""
    if end < start:
        raise InvalidInput("The period ends before it starts.")
    settings = pay_settings_of(project)
    tz = timezone.get_current_timezone()
    since = datetime.combine(start, datetime.min.time(), tzinfo=tz)
    until = datetime.combine(end + timedelta(days=1), datetime.min.time(), tzinfo=tz)
    first_validated: dict[int, datetime] = {}
    for e in _events(project):
        # Instances created validated (imported gold, exam items) were nobody's paid work.
        if e["to_status"] == S.VALIDATED and e["from_status"] and e["instance_id"] not in first_validated:
            first_validated[e["instance_id"]] = e["created_at"]
    in_period = [iid for iid, at in first_validated.items() if since <= at < until]
    authors = dict(
        Instance.objects.filter(pk__in=in_period, author__isnull=False)
        .exclude(status=S.DISCARDED)
        .values_list("id", "author__username")
    )
    refine_seconds: dict[tuple[int, str], float] = {
        (iid, username): value
        for iid, username, value in WorkTime.objects.filter(instance_id__in=authors, activity="refine").values_list(
            "instance_id", "user__username", "active_seconds"
        )
    }
    per_person: dict[str, dict[str, Any]] = {}
    for iid, username in authors.items():
        row = per_person.setdefault(
            username or "(none)", {"user": username or "(none)", "validated": 0, "seconds": 0.0}
        )
        row["validated"] += 1
        row["seconds"] += refine_seconds.get((iid, username), 0.0)
    rows = []
    for row in sorted(per_person.values(), key=lambda r: r["user"]):
        amount = settings.pay_per_instance * row["validated"]
        hours = row["seconds"] / 3600
        # The rate divides by the hours as shown (4 places): under 0.36 s of work there is no rate, not a 500.
        divisor = Decimal(str(round(hours, 4)))
        rows.append(
            {
                "user": row["user"],
                "validated": row["validated"],
                "active_hours": round(hours, 2),
                "minutes_per_instance": round(row["seconds"] / 60 / row["validated"], 1) if row["validated"] else None,
                "amount": amount,
                "hourly": (amount / divisor).quantize(Decimal("0.01")) if divisor > 0 else None,
            }
        )
    return {
        "start": start,
        "end": end,
        "rate": settings.pay_per_instance,
        "currency": settings.currency,
        "rows": rows,
        "total_instances": sum(r["validated"] for r in rows),
        "total_amount": sum((r["amount"] for r in rows), Decimal("0")),
    }


def dashboard_data(*, user: AbstractBaseUser, project: Project, start: date | None = None, end: date | None = None):
    """Everything the manager's dashboard shows, for managers of the project only."""
    require_manager(user=user, project=project)
    end = end or timezone.localdate()
    start = start or end.replace(day=1)
    return {
        "batches": batch_progress(project),
        "throughput": throughput(project),
        "annotators": annotator_stats(project),
        "verifiers": verifier_stats(project),
        "time_people": time_per_person(project),
        "time_instances": time_per_instance(project, limit=100),
        "pay": pay_report(project, start=start, end=end),
        "status_choices": [(s.value, s.label) for s in Status],
    }


def csv_rows(
    *, user: AbstractBaseUser, project: Project, table: str, start: date | None = None, end: date | None = None
):
    """Rows of one dashboard table for CSV export (the same figures the page shows)."""
    require_manager(user=user, project=project)
    if table == "batches":
        return [
            {"batch": b["name"], "state": b["state"], "total": b["total"], "settled": b["settled"], **b["counts"]}
            for b in batch_progress(project)
        ]
    if table == "throughput":
        return [{**row, "date": row["date"].isoformat()} for row in throughput(project)]
    if table == "annotators":
        return annotator_stats(project)
    if table == "verifiers":
        return verifier_stats(project)
    if table == "time":
        return time_per_instance(project, limit=100_000)
    if table == "agreement":
        return agreement_csv_rows(user=user, project=project)
    if table == "pay":
        end = end or timezone.localdate()
        report = pay_report(project, start=start or end.replace(day=1), end=end)
        return [
            {
                **row,
                "rate": report["rate"],
                "currency": report["currency"],
                "start": report["start"],
                "end": report["end"],
            }
            for row in report["rows"]
        ]
    if table == "gold":
        return gold_rows(project_gold_figures(project))
    if table == "drift":
        return drift_rows(project_drift(project))
    if table == "draft_costs":
        return flat_rows(draft_costs(project))
    raise InvalidInput(f"Unknown table {table!r}; expected one of {', '.join(CSV_TABLES)}.")


def to_csv(rows: list[dict[str, Any]]) -> str:
    """CSV text with a header from the first row's keys (empty string when there are no rows)."""
    if not rows:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buffer.getvalue()
