"""Drift per annotator and week: round-one approval, round-two flags on their work, hidden-gold EM, guideline
markers — the pure weekly figures and the dashboard's lines."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import Client

from annotate.qualification.guidelines import guidelines_publish
from annotate.quality.drift import drift_of, weekly_drift
from curation.errors import NotPermitted
from curation.states import Status
from tests.annotate.review.helpers import to_discussion, to_round2
from tests.conftest import PASSWORD

S = Status


def at(day: int) -> datetime:
    return datetime(2026, 3, day, 12, tzinfo=UTC)  # 2026-03-02 is a Monday


def test_weekly_rates_with_gaps_and_a_guidelines_marker():
    events = [
        {"instance_id": 1, "from_status": S.ROUND1_REVIEW, "to_status": S.ROUND2_REVIEW, "created_at": at(2)},
        {"instance_id": 2, "from_status": S.ROUND1_REVIEW, "to_status": S.CHANGES_REQUESTED, "created_at": at(3)},
        {"instance_id": 1, "from_status": S.ROUND2_REVIEW, "to_status": S.IN_DISCUSSION, "created_at": at(4)},
        {"instance_id": 2, "from_status": S.ROUND1_REVIEW, "to_status": S.ROUND2_REVIEW, "created_at": at(17)},
        {"instance_id": 3, "from_status": S.ROUND1_REVIEW, "to_status": S.ROUND2_REVIEW, "created_at": at(18)},
    ]
    probes = [{"user_id": 7, "submitted_at": at(5), "em": 1.0}, {"user_id": 7, "submitted_at": at(6), "em": 0.0}]
    people = weekly_drift(
        events=events, authors={1: 7, 2: 7, 3: 8}, probes=probes, guideline_dates=[(1, at(2)), (2, at(16))]
    )
    rows = people[7]["rows"]
    assert [r["week"].isoformat() for r in rows] == ["2026-03-02", "2026-03-09", "2026-03-16"]
    assert (rows[0]["round1_approval"], rows[0]["round2_flags"], rows[0]["gold_em"]) == (0.5, 1.0, 0.5)
    assert (rows[1]["round1_approval"], rows[1]["round2_flags"], rows[1]["gold_em"]) == (None, None, None)
    assert rows[2]["round1_approval"] == 1.0 and rows[2]["n"]["round1"] == 1
    assert people[7]["markers"] == [{"index": 0, "text": "guidelines v1"}, {"index": 2, "text": "guidelines v2"}]
    assert [r["round1_approval"] for r in people[8]["rows"]] == [1.0]


def test_drift_is_for_managers_only(personas, project):
    for name in ("annotator", "verifier"):
        with pytest.raises(NotPermitted):
            drift_of(user=personas[name], project=project)


def test_the_dashboard_draws_each_annotators_drift_with_the_guidelines_marker(personas, project, drafts):
    guidelines_publish(project=project, actor=personas["manager"], text="# New rules", note="clarified scales")
    to_round2(project, personas)  # annotator's work approved in round one
    to_discussion(project, personas)  # and another flagged in round two
    (person,) = [p for p in drift_of(user=personas["manager"], project=project) if p["user"] == "annotator"]
    (row,) = person["rows"]
    assert row["round1_approval"] == 1.0 and row["round2_flags"] == 1.0 and row["n"]["round1"] == 2
    assert person["markers"][0]["text"].startswith("guidelines v")
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'id="drift"' in page and 'data-user="annotator"' in page and "guidelines-marker" in page
    assert "round-one approval 1.0" in page and "round-two flags 1.0" in page
