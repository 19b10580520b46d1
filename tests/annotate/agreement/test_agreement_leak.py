"""Neither annotator of a double-annotated instance meets the other's version anywhere: every URL of the application,
probed as each of them with the exam leak test's walker (routes from the resolver, ids filled in, bad writes)."""

from __future__ import annotations

import pytest
from django.test import Client

from annotate.agreement.models import DoubleAnnotation
from annotate.work.queue import queue_claim
from tests.annotate.agreement.helpers import double_on, first_submission, second_submission
from tests.annotate.qualification.test_qualification_gold_leak import probe, probe_values
from tests.conftest import PASSWORD

FIRST_MARK = "Firstmarkquux"
SECOND_MARK = "Secondmarkzork"


@pytest.fixture
def pair_world(project, personas, context, paper, drafts):
    double_on(project, personas["manager"])
    mine = {"rationale": f"{FIRST_MARK} rationale.", "answer": [FIRST_MARK]}
    decided, _ = first_submission(project=project, user=personas["annotator"], question=f"{FIRST_MARK}?", **mine)
    second_submission(
        project=project,
        user=personas["annotator2"],
        question=f"{SECOND_MARK}?",
        rationale=f"{SECOND_MARK} rationale.",
        answer=[SECOND_MARK],
    )
    waiting, _ = first_submission(project=project, user=personas["annotator"], question=f"{FIRST_MARK} two?", **mine)
    held = queue_claim(project_slug=project.slug, user=personas["annotator2"])  # the second holds this copy
    assert held.copy_id == DoubleAnnotation.objects.get(instance=waiting).pk
    ids = sorted({decided.pk, waiting.pk, held.copy_id, paper.pk, context.pk, drafts[0].pk})
    values = probe_values(project, ids)
    return {"values": values, "waiting": waiting}


def _found(bodies: dict[str, str], mark: str) -> list[str]:
    return [where for where, body in bodies.items() if mark in body]


@pytest.mark.walk
@pytest.mark.django_db
def test_the_first_annotator_never_meets_the_second_version(pair_world):
    client = Client(raise_request_exception=False)  # a server error is a response too: its page is searched
    assert client.login(username="annotator", password=PASSWORD)
    bodies = probe(client, pair_world["values"])
    assert len(bodies) > 200  # the walk really went through the application
    assert _found(bodies, FIRST_MARK)  # and reached their own work
    assert _found(bodies, SECOND_MARK) == []


@pytest.mark.walk
@pytest.mark.django_db
def test_the_second_annotator_never_meets_the_first_version(pair_world):
    client = Client(raise_request_exception=False)
    assert client.login(username="annotator2", password=PASSWORD)
    bodies = probe(client, pair_world["values"])
    assert len(bodies) > 200
    assert _found(bodies, pair_world["waiting"].draft["question"])  # the copy they hold, as the draft had it
    assert _found(bodies, FIRST_MARK) == []


@pytest.mark.walk
@pytest.mark.django_db
def test_the_walk_finds_both_versions_where_they_are_shown(pair_world):
    client = Client(raise_request_exception=False)
    assert client.login(username="manager", password=PASSWORD)
    marks = set()

    def both_found(fresh: dict[str, str]) -> bool:
        marks.update(mark for mark in (FIRST_MARK, SECOND_MARK) if _found(fresh, mark))
        return len(marks) == 2

    bodies = probe(client, pair_world["values"], writes=False, queries=False, until=both_found)
    assert _found(bodies, FIRST_MARK) and _found(bodies, SECOND_MARK)
