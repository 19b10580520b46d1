"""Drift: per annotator and week, round-one approval rate, round-two flag rate on their work and hidden-gold EM,
with the weeks in which a guidelines version was published. `weekly_drift` is pure; `drift_of` reads the project."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from statistics import fmean
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotate.qualification.models import Guidelines
from annotate.quality.models import GoldProbe
from curation.models import Instance, Membership, Project, TransitionEvent
from curation.services.projects import require_role
from curation.states import Role, Status

# What counts as a decision of each round (the dashboard's people figures count the same).
ROUND1_DECISIONS = (Status.ROUND2_REVIEW, Status.CHANGES_REQUESTED)
ROUND2_DECISIONS = (Status.VALIDATED, Status.IN_DISCUSSION)
SERIES = ("round1_approval", "round2_flags", "gold_em")
LABELS = {"round1_approval": "round-one approval", "round2_flags": "round-two flags", "gold_em": "hidden-gold EM"}


def week_of(moment: datetime | date) -> date:
    """The Monday of the ISO week a moment falls in."""
    day = moment.date() if isinstance(moment, datetime) else moment
    return day - timedelta(days=day.weekday())


def weekly_drift(
    *,
    events: Iterable[Mapping[str, Any]],
    authors: Mapping[int, int | None],
    probes: Iterable[Mapping[str, Any]],
    guideline_dates: Iterable[tuple[int, datetime]],
) -> dict[str, Any]:
    """Per author: one row per week from their first to their last measured week (None where nothing was decided),
    and the guideline versions by week. Round-one approval = decisions that sent the instance on to round two;
    round-two flags = round-two decisions on their work that opened a discussion (the dashboard's definitions)."""
    counts: dict[int, dict[date, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for e in events:
        author = authors.get(e["instance_id"])
        if author is None:
            continue
        week = week_of(e["created_at"])
        if e["from_status"] == Status.ROUND1_REVIEW and e["to_status"] in ROUND1_DECISIONS:
            counts[author][week]["round1"].append(float(e["to_status"] == Status.ROUND2_REVIEW))
        if e["from_status"] == Status.ROUND2_REVIEW and e["to_status"] in ROUND2_DECISIONS:
            counts[author][week]["round2"].append(float(e["to_status"] == Status.IN_DISCUSSION))
    for probe in probes:
        counts[probe["user_id"]][week_of(probe["submitted_at"])]["gold"].append(float(probe["em"]))
    guidelines = sorted((week_of(when), version) for version, when in guideline_dates)
    people = {}
    for user_id, weeks in counts.items():
        first, last = min(weeks), max(weeks)
        rows = []
        week = first
        while week <= last:
            measured = weeks.get(week, {})
            rows.append(
                {
                    "week": week,
                    **{
                        name: fmean(measured[key]) if measured.get(key) else None
                        for name, key in zip(SERIES, ("round1", "round2", "gold"), strict=True)
                    },
                    "n": {key: len(measured.get(key, [])) for key in ("round1", "round2", "gold")},
                }
            )
            week += timedelta(days=7)
        markers = [
            {"index": (w - first).days // 7, "text": f"guidelines v{v}"} for w, v in guidelines if first <= w <= last
        ]
        people[user_id] = {"rows": rows, "markers": markers}
    return people


DRIFT_WINDOW_WEEKS = 26  # weeks the dashboard draws at once; the CSV keeps every week
DRIFT_PEOPLE_PER_PAGE = 10  # annotators whose charts the dashboard draws at once; the CSV keeps everyone


def drift_window(
    people: Iterable[Mapping[str, Any]], *, last_week: date | None = None, weeks: int | None = DRIFT_WINDOW_WEEKS
) -> dict[str, Any]:
    """The drift lines cut to `weeks` weeks ending with `last_week` (the latest measured week when None); `weeks`
    None keeps every week. People with no week in the window are left out; markers keep their weeks. Returns the
    people, the window's first and last week, and the last week of the window before it (None at the start)."""
    people = list(people)
    latest = max((person["rows"][-1]["week"] for person in people if person["rows"]), default=None)
    earliest = min((person["rows"][0]["week"] for person in people if person["rows"]), default=None)
    if latest is None or weeks is None:
        return {"people": people, "first": earliest, "last": latest, "earlier": None, "later": None}
    last = week_of(min(last_week, latest)) if last_week else latest
    first = last - timedelta(weeks=weeks - 1)
    cut = []
    for person in people:
        keep = [index for index, row in enumerate(person["rows"]) if first <= row["week"] <= last]
        if not keep:
            continue
        start, stop = keep[0], keep[-1] + 1
        markers = [{**m, "index": m["index"] - start} for m in person["markers"] if start <= m["index"] < stop]
        cut.append({**person, "rows": person["rows"][start:stop], "markers": markers})
    return {
        "people": cut,
        "first": first,
        "last": last,
        "earlier": first - timedelta(weeks=1) if earliest < first else None,
        "later": min(last + timedelta(weeks=weeks), latest) if last < latest else None,
    }


def drift_of(*, user: AbstractBaseUser, project: Project) -> list[dict[str, Any]]:
    """Managers only: each annotator's weekly drift rows and guideline markers, by username."""
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see drift")
    return project_drift(project)


def project_drift(project: Project) -> list[dict[str, Any]]:
    """`drift_of` without the role check: the operator's command reads it (people come through `drift_of`)."""
    people = weekly_drift(
        events=TransitionEvent.objects.filter(instance__project=project).values(
            "instance_id", "from_status", "to_status", "created_at"
        ),
        authors=dict(Instance.objects.filter(project=project).values_list("id", "author_id")),
        probes=GoldProbe.objects.filter(project=project, em__isnull=False).values("user_id", "submitted_at", "em"),
        guideline_dates=Guidelines.objects.filter(project=project).values_list("version", "created_at"),
    )
    names = dict(
        Membership.objects.filter(project=project, role=Role.ANNOTATOR).values_list("user_id", "user__username")
    )
    return [
        {"user": names[user_id], **people[user_id]}
        for user_id in sorted(people, key=lambda pk: names.get(pk, ""))
        if user_id in names
    ]


def drift_rows(people: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The drift lines as the page draws them, one row per annotator and week (with the sample of each rate and
    the guidelines published that week): the CSV and `--json` shape."""
    rows = []
    for person in people:
        markers: dict[int, list[str]] = defaultdict(list)
        for marker in person["markers"]:
            markers[marker["index"]].append(marker["text"])
        for index, row in enumerate(person["rows"]):
            rows.append(
                {
                    "user": person["user"],
                    "week": row["week"].isoformat(),
                    **{name: None if row[name] is None else round(row[name], 4) for name in SERIES},
                    **{f"{key}_n": n for key, n in row["n"].items()},  # round1_n, round2_n, gold_n
                    "guidelines": "; ".join(markers.get(index, [])),
                }
            )
    return rows
