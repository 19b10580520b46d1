"""Figures of the manager's dashboard: batch progress, throughput, per-person quality, time and pay, CSV rows.

Figures are computed from the audit trail (TransitionEvent), the work-time pings and the exam attempts, so they
agree with the instance history a manager can open.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Sum
from django.utils import timezone

from annotate.agreement.selectors import FIGURES as AGREEMENT_FIGURES
from annotate.agreement.selectors import agreement_csv_rows
from annotate.dashboard.draft_costs import draft_costs_of
from annotate.dashboard.edit_costs import COST_COLUMNS, flat_rows
from annotate.dashboard.models import PaySettings
from annotate.qualification.selectors import qualification_summary
from annotate.quality.drift import ROUND1_DECISIONS, ROUND2_DECISIONS, drift_rows, project_drift
from annotate.quality.drift import SERIES as DRIFT_SERIES
from annotate.quality.selectors import GOLD_COLUMNS, gold_rows, project_gold_figures
from annotate.review.models import Discussion
from annotate.work.models import WorkTime
from curation.batches.services import SETTLED
from curation.deadlines import deadline_state
from curation.errors import InvalidInput
from curation.figures_cache import project_figures
from curation.models import Batch, Instance, Membership, Project, TransitionEvent
from curation.selectors import status_counts
from curation.services.projects import require_role
from curation.states import Role, Status

S = Status


def require_manager(*, user: AbstractBaseUser, project: Project) -> None:
    """The dashboard is for the project's managers."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see its dashboard")


def _project_events(project: Project) -> QuerySet[TransitionEvent]:
    return TransitionEvent.objects.filter(instance__project=project).order_by()


def _first_of_kind(events: QuerySet[TransitionEvent], **kind: Any) -> QuerySet[TransitionEvent]:
    """The events of `events` that are their instance's first of `kind` (no earlier one, ties broken by id): read
    through the instance's own events, so a window of days costs what is in it, not the project's whole history."""
    earlier = TransitionEvent.objects.filter(instance_id=OuterRef("instance_id"), **kind).filter(
        Q(created_at__lt=OuterRef("created_at")) | Q(created_at=OuterRef("created_at"), id__lt=OuterRef("id"))
    )
    return events.filter(**kind).exclude(Exists(earlier))


def _since(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time(), tzinfo=timezone.get_current_timezone())


def batches_in_progress_order(project: Project) -> list[Batch]:
    """The project's batches in the order their progress rows are shown: overdue ones first (curation/deadlines.py),
    the rest in their order. A batch's deadline is its own fields, so the order costs one read of the batches."""
    batches = list(Batch.objects.filter(project=project).order_by("order", "id"))
    return sorted(batches, key=lambda batch: not deadline_state(batch).is_overdue)


PROGRESS_PER_PAGE = 10  # progress rows a page: each counts its batch's instances and carries its own forms


def batch_progress_page(project: Project, page: str | None) -> tuple[Page, list[dict[str, Any]]]:
    """One page of progress rows, overdue batches first, as the batches page and the dashboard show them: each row
    counts only its own batch's instances, and the "(no batch)" row comes on the last page."""
    progress_page = Paginator(batches_in_progress_order(project), PROGRESS_PER_PAGE).get_page(page)
    rows = batch_progress(project, batches=list(progress_page.object_list), with_unbatched=not progress_page.has_next())
    return progress_page, rows


def batch_progress(
    project: Project, *, batches: list[Batch] | None = None, with_unbatched: bool = True
) -> list[dict[str, Any]]:
    """Per batch, overdue first: instances per status, totals, completeness and deadline. `batches` narrows the rows
    (and the counting) to one page of them; `with_unbatched` adds a "(no batch)" row when instances are in none."""
    instances = Instance.objects.filter(project=project)
    chosen: list[Batch | None] = list(batches_in_progress_order(project) if batches is None else batches)
    if batches is not None:
        in_rows = Q(batch__in=[b.pk for b in batches])
        instances = instances.filter(in_rows | Q(batch__isnull=True) if with_unbatched else in_rows)
    rows = instances.values_list("batch_id", "status").annotate(n=Count("id"))
    per_batch: dict[int | None, dict[str, int]] = defaultdict(dict)
    for batch_id, status, n in rows:
        per_batch[batch_id][status] = n
    if None in per_batch:
        chosen.append(None)
    result = []
    for batch in chosen:
        counts = per_batch.get(batch.pk if batch else None, {})
        totals = _totals(counts)
        total = totals["total"]
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
                **totals,
                "is_complete": bool(total) and totals["settled"] == total,
                "segments": segments,
                "deadline": deadline_state(batch) if batch else None,
            }
        )
    return result


def _totals(counts: dict[str, int]) -> dict[str, Any]:
    return {
        "counts": {s: counts.get(s, 0) for s in Status.values},
        "total": sum(counts.values()),
        "settled": sum(counts.get(s, 0) for s in SETTLED),
        "validated": counts.get(S.VALIDATED, 0) + counts.get(S.RELEASED, 0),
    }


def throughput(project: Project, *, days: int = 30, today: date | None = None) -> list[dict[str, Any]]:
    """Per day over the last `days` days: instances submitted (first submissions) and validated."""
    today = today or timezone.localdate()
    start = today - timedelta(days=days - 1)
    buckets = {start + timedelta(days=i): {"submitted": 0, "validated": 0} for i in range(days)}
    window = _project_events(project).filter(created_at__gte=_since(start), created_at__lt=_since(today + timedelta(1)))
    first_submits = _first_of_kind(window, from_status=S.IN_REFINEMENT, to_status=S.SUBMITTED)
    for kind, events in (("submitted", first_submits), ("validated", window.filter(to_status=S.VALIDATED))):
        for created_at in events.values_list("created_at", flat=True):
            day = timezone.localtime(created_at).date()
            if day in buckets:
                buckets[day][kind] += 1
    return [{"date": day, **counts} for day, counts in sorted(buckets.items())]


def _per(rows: QuerySet, key: str, aggregate: Any) -> dict[Any, Any]:
    """`aggregate` of `rows` per value of `key` (an actor or an author), computed in the database."""
    return dict(rows.values_list(key).annotate(n=aggregate).values_list(key, "n"))


def _active_seconds(project: Project, *keys: str, **filters: Any) -> dict[Any, list[float]]:
    """The project's active seconds per value of `keys` (one key: its value; several: their tuple), for medians."""
    seconds: dict[Any, list[float]] = defaultdict(list)
    rows = WorkTime.objects.filter(instance__project=project, **filters).values_list(*keys, "active_seconds")
    for *key, value in rows:
        seconds[key[0] if len(key) == 1 else tuple(key)].append(value)
    return seconds


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _members(project: Project, role: str):
    return Membership.objects.filter(project=project, role=role).select_related("user").order_by("user__username")


def annotator_stats(project: Project) -> list[dict[str, Any]]:
    """Per annotator: exam EM (latest and best), instances refined, round-one approval without changes, round-two
    flag rate on their work, round-two reviews done, and median active refining time per instance."""
    events = _project_events(project)
    decided1 = Q(from_status=S.ROUND1_REVIEW, to_status__in=ROUND1_DECISIONS)
    decided2 = Q(from_status=S.ROUND2_REVIEW, to_status__in=ROUND2_DECISIONS)
    # Counted in the database, per person: what they refined (as the actor) and how their work fared (as the
    # instance's author); sent-back and flagged instances are among the decided ones.
    refined = _per(
        events.filter(from_status=S.IN_REFINEMENT, to_status=S.SUBMITTED, actor__isnull=False),
        "actor_id",
        Count("instance_id", distinct=True),
    )
    by_author = {
        row["instance__author_id"]: row
        for row in events.filter(decided1 | decided2)
        .values("instance__author_id")
        .annotate(
            round1=Count("instance_id", distinct=True, filter=decided1),
            sent_back=Count("instance_id", distinct=True, filter=Q(decided1, to_status=S.CHANGES_REQUESTED)),
            round2=Count("instance_id", distinct=True, filter=decided2),
            flagged=Count("instance_id", distinct=True, filter=Q(decided2, to_status=S.IN_DISCUSSION)),
        )
    }
    reviews2 = _per(events.filter(decided2), "actor_id", Count("id"))
    exams = qualification_summary(project=project)
    seconds = _active_seconds(project, "user_id", activity="refine")
    validated = _per(
        Instance.objects.filter(project=project, status__in=(S.VALIDATED, S.RELEASED)), "author_id", Count("id")
    )
    rows = []
    for membership in _members(project, Role.ANNOTATOR):
        uid = membership.user_id
        exam, fared = exams.get(uid, {}), by_author.get(uid, {})
        round1, clean1 = fared.get("round1", 0), fared.get("round1", 0) - fared.get("sent_back", 0)
        round2, flagged = fared.get("round2", 0), fared.get("flagged", 0)
        rows.append(
            {
                "user": membership.user.username,
                "is_qualified": membership.is_qualified,
                "exam_latest": exam.get("latest"),
                "exam_best": exam.get("best"),
                "exam_attempts": exam.get("attempts", 0),
                "refined": refined.get(uid, 0),
                "validated": validated.get(uid, 0),
                "round1_decided": round1,
                "round1_clean": clean1,
                "round1_clean_rate": _rate(clean1, round1),
                "round2_decided": round2,
                "round2_flagged": flagged,
                "round2_flag_rate": _rate(flagged, round2),
                "round2_reviews": reviews2.get(uid, 0),
                "median_active_seconds": _median(seconds[uid]),
            }
        )
    return rows


def verifier_stats(project: Project) -> list[dict[str, Any]]:
    """Per verifier: round-one reviews decided, changes requested among them, discussions resolved, median time."""
    decided = _project_events(project).filter(from_status=S.ROUND1_REVIEW, to_status__in=ROUND1_DECISIONS)
    reviews = _per(decided, "actor_id", Count("id"))
    changes = _per(decided.filter(to_status=S.CHANGES_REQUESTED), "actor_id", Count("id"))
    resolved = _per(
        Discussion.objects.filter(instance__project=project).exclude(decided_by=None), "decided_by", Count("id")
    )
    seconds = _active_seconds(project, "user_id", activity="review1")
    return [
        {
            "user": membership.user.username,
            "reviews": reviews.get(membership.user_id, 0),
            "changes_requested": changes.get(membership.user_id, 0),
            "changes_rate": _rate(changes.get(membership.user_id, 0), reviews.get(membership.user_id, 0)),
            "discussions_resolved": resolved.get(membership.user_id, 0),
            "median_review_seconds": _median(seconds[membership.user_id]),
        }
        for membership in _members(project, Role.VERIFIER)
    ]


def time_per_person(project: Project) -> list[dict[str, Any]]:
    """Active time per person and activity: total seconds, instances touched, and the per-instance median."""
    grouped = _active_seconds(project, "user__username", "activity")
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
    # Instances created validated (imported gold, exam items) were nobody's paid work: their first validation
    # has an empty source.
    period = _project_events(project).filter(created_at__gte=_since(start), created_at__lt=_since(end + timedelta(1)))
    first_validated = _first_of_kind(period, to_status=S.VALIDATED, from_status__gt="")
    in_period = list(first_validated.values_list("instance_id", flat=True))
    authors = dict(
        Instance.objects.filter(pk__in=in_period, author__isnull=False)
        .exclude(status=S.DISCARDED)
        .values_list("id", "author__username")
    )
    # Each author's own refining time on these instances, summed in the database.
    seconds = _per(
        WorkTime.objects.filter(instance_id__in=authors, activity="refine", user_id=F("instance__author_id")),
        "user__username",
        Sum("active_seconds"),
    )
    validated = Counter(authors.values())  # every instance here has an author
    rows = []
    for username, count in sorted(validated.items()):
        amount = settings.pay_per_instance * count
        hours = seconds.get(username, 0.0) / 3600
        # The rate divides by the hours as shown (2 places): under 18 s of work the page shows 0.0 hours and no
        # rate, not a rate out of hours it does not show (nor a 500 from dividing by zero).
        shown_hours = round(hours, 2)
        divisor = Decimal(str(shown_hours))
        rows.append(
            {
                "user": username,
                "validated": count,
                "active_hours": shown_hours,
                "minutes_per_instance": round(seconds.get(username, 0.0) / 60 / count, 1),
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


def _pay_period(project: Project, start: date | None, end: date | None) -> tuple[date, date, tuple]:
    """The pay period (default: this month so far) and the figures cache's key for it: the pay rate is part of the
    key, so a manager who just saved one sees it at once."""
    end = end or timezone.localdate()
    start = start or end.replace(day=1)
    pay = pay_settings_of(project)
    return start, end, (start, end, pay.pay_per_instance, pay.currency)


def dashboard_data(*, user: AbstractBaseUser, project: Project, start: date | None = None, end: date | None = None):
    """Everything the manager's dashboard shows, for managers of the project only."""
    require_manager(user=user, project=project)
    start, end, key = _pay_period(project, start, end)

    def compute() -> dict[str, Any]:
        return {
            # The whole project in one grouped count; the rows per batch come a page at a time (`batch_progress_page`).
            "totals": _totals(status_counts(project)),
            "throughput": throughput(project),
            "annotators": annotator_stats(project),
            "verifiers": verifier_stats(project),
            "time_people": time_per_person(project),
            "time_instances": time_per_instance(project, limit=100),
            "pay": pay_report(project, start=start, end=end),
            "status_choices": [(s.value, s.label) for s in Status],
        }

    return project_figures(project, "dashboard", compute, *key)


def _pay_rows(*, project: Project, start: date | None, end: date | None, **_: Any) -> list[dict[str, Any]]:
    start, end, key = _pay_period(project, start, end)
    # Cached like the dashboard's figures: the first validation of each event in the period is a probe per event,
    # but PostgreSQL's guess of a day's events grows with the table (a parallel plan at 100k).
    report = project_figures(project, "pay", lambda: pay_report(project, start=start, end=end), *key)
    period = {"rate": report["rate"], "currency": report["currency"], "start": report["start"], "end": report["end"]}
    return [{**row, **period} for row in report["rows"]]


@dataclass(frozen=True)
class CsvTable:
    """One dashboard table a manager may download: how its link is named, its columns in the order its rows have
    them (the header of an empty CSV), and its rows (the same figures the page shows), from keyword arguments
    user, project, start and end."""

    label: str
    columns: tuple[str, ...]
    rows: Callable[..., list[dict[str, Any]]]


ANNOTATOR_COLUMNS = (
    "user", "is_qualified", "exam_latest", "exam_best", "exam_attempts", "refined", "validated", "round1_decided",
    "round1_clean", "round1_clean_rate", "round2_decided", "round2_flagged", "round2_flag_rate", "round2_reviews",
    "median_active_seconds",
)  # fmt: skip
VERIFIER_COLUMNS = (
    "user", "reviews", "changes_requested", "changes_rate", "discussions_resolved", "median_review_seconds",
)  # fmt: skip
PAY_COLUMNS = (
    "user", "validated", "active_hours", "minutes_per_instance", "amount", "hourly", "rate", "currency", "start", "end",
)  # fmt: skip
# The registry of the dashboard's CSV tables, in the order the page links them (a date is written as YYYY-MM-DD).
CSV_TABLES: dict[str, CsvTable] = {
    "batches": CsvTable(
        "batches",
        ("batch", "state", "total", "settled", *Status.values),
        lambda project, **_: [
            {"batch": b["name"], "state": b["state"], "total": b["total"], "settled": b["settled"], **b["counts"]}
            for b in batch_progress(project)
        ],
    ),
    "throughput": CsvTable("throughput", ("date", "submitted", "validated"), lambda project, **_: throughput(project)),
    "annotators": CsvTable("annotators", ANNOTATOR_COLUMNS, lambda project, **_: annotator_stats(project)),
    "verifiers": CsvTable("verifiers", VERIFIER_COLUMNS, lambda project, **_: verifier_stats(project)),
    "time": CsvTable(
        "time per instance",
        ("instance", "status", "user", "activity", "active_seconds"),
        lambda project, **_: time_per_instance(project, limit=100_000),
    ),
    "pay": CsvTable("pay", PAY_COLUMNS, _pay_rows),
    "agreement": CsvTable(
        "agreement",
        ("group", "name", "n", "raters", *AGREEMENT_FIGURES),
        lambda user, project, **_: agreement_csv_rows(user=user, project=project),
    ),
    "gold": CsvTable("hidden gold", tuple(GOLD_COLUMNS), lambda project, **_: gold_rows(project_gold_figures(project))),
    "drift": CsvTable(
        "drift",
        ("user", "week", *DRIFT_SERIES, "round1_n", "round2_n", "gold_n", "guidelines"),
        lambda project, **_: drift_rows(project_drift(project)),
    ),
    "draft_costs": CsvTable(
        "draft costs",
        tuple(COST_COLUMNS),
        lambda user, project, **_: flat_rows(draft_costs_of(user=user, project=project)),
    ),
}


def csv_rows(
    *, user: AbstractBaseUser, project: Project, table: str, start: date | None = None, end: date | None = None
) -> list[dict[str, Any]]:
    """Rows of one dashboard table for CSV export (the same figures the page shows), for managers only; an unknown
    table is InvalidInput naming the others."""
    require_manager(user=user, project=project)
    if table not in CSV_TABLES:
        raise InvalidInput(f"Unknown table {table!r}; expected one of {', '.join(CSV_TABLES)}.")
    return CSV_TABLES[table].rows(user=user, project=project, start=start, end=end)


def to_csv(rows: list[dict[str, Any]], *, table: str) -> str:
    """CSV text of one dashboard table: its header row always (its columns when there are no rows), then the rows."""
    buffer = io.StringIO()
    columns = list(rows[0]) if rows else list(CSV_TABLES[table].columns)
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)
    return buffer.getvalue()
