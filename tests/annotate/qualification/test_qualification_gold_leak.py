"""No gold answer reaches a candidate before submission: every URL of the application, probed as the candidate.

The URL list comes from the resolver, so endpoints added later are probed too. Ids are filled with the project's,
the attempt's, the gold instances', the paper's and the context's ids; each GET is also tried with filters and
orderings that name the answer, and each API URL with write methods and malformed bodies (error paths).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

from annotate.qualification import services
from annotate.qualification.guidelines import guidelines_ensure_default
from annotate.qualification.models import QualificationAttempt
from curation.models import ReasoningType
from tests.annotate.qualification.support import GOLD, GOLD_STRINGS, make_gold
from tests.conftest import PASSWORD

PARAMETER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
QUERY_PROBES = [
    "?ordering=answer",
    "?ordering=-answer",
    "?ordering=rationale",
    # Prefixes of a gold answer: a filter that matched would answer with the whole gold string; echoing the
    # query back (a login redirect's ?next=) shows only the candidate's own input.
    "?search=Zyxq",
    "?answer=Zyxq",
    "?answer__icontains=Vexm",
    "?status=validated",
    "?format=json",
    "?format=api",
    "?v=1&a=1&b=1",
]
BAD_BODIES = [
    {"answers": "not an object", "expected_version": "nope", "instance_ids": ["x"], "ordering": "answer"},
    {"answers": {"424242": ["x"]}, "answer": "x", "threshold": "high", "text": ""},
]
# Writes that would legitimately end the exam (the point of the test is *before* submission) or the session.
WRITE_EXCLUDED = ("submit", "logout", "qualification/start")


def route_templates(patterns=None, prefix: str = "") -> list[str]:
    """Every route of the URLconf as a template string, e.g. 'api/qualification/attempts/<int:pk>/'. Of the admin's
    (130 routes, every one behind the admin's own staff check, which sends a non-staff persona to its login) only
    its index is walked."""
    out: list[str] = []
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if not isinstance(entry.pattern, RoutePattern):
            continue  # regex routes are the admin's; a candidate is not staff and is redirected to login
        route = prefix + str(entry.pattern)
        if route.startswith("admin/") and route != "admin/":
            continue
        if isinstance(entry, URLResolver):
            out.extend(route_templates(entry.url_patterns, route))
        elif isinstance(entry, URLPattern):
            out.append(route)
    return sorted(set(out))


def fill(route: str, values: dict[str, list[str]]) -> list[str]:
    """Concrete paths for a route: a parameter named `slug`, a project's slug wherever the URLconf has one, takes
    the project's (any other answers 404); every other parameter takes every candidate value of its converter."""
    parameters = list(PARAMETER.finditer(route))
    if not parameters:
        return ["/" + route]
    choices = [
        values["project"] if m.group("name") == "slug" else values.get(m.group("converter") or "str", values["str"])
        for m in parameters
    ]
    paths = []
    for combination in itertools.product(*choices):
        path = route
        for match, value in zip(parameters, combination, strict=True):
            path = path.replace(match.group(0), value, 1)
        paths.append("/" + path)
    return paths


def body_of(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


@pytest.fixture
def exam_world(project, personas, context, paper):
    gold = make_gold(project, context, ReasoningType.objects.filter(project=project, parent__isnull=False).first())
    services.qualification_configure(project=project, actor=personas["manager"], instance_ids=[g.pk for g in gold])
    guidelines_ensure_default(project=project)
    attempt = services.attempt_start(project=project, user=personas["novice"])
    services.attempt_save(attempt_id=attempt.pk, user=personas["novice"], answers={str(gold[0].pk): ["my guess"]})
    ids = sorted({attempt.pk, paper.pk, context.pk, *(g.pk for g in gold), *(t.pk for t in paper.tables.all())})
    values = probe_values(project, ids)
    return {"gold": gold, "attempt": attempt, "values": values, "project": project}


def probe_values(project, ids) -> dict[str, list[str]]:
    """What `probe` puts in each kind of URL parameter: the world's ids (`ids`), the project's slug and a reasoning
    type's code, a path and a uuid."""
    code = ReasoningType.objects.filter(project=project).first().code
    return {
        "project": [project.slug],
        "int": [str(i) for i in ids],
        "slug": [project.slug, code],
        "str": [project.slug, code],
        "path": ["x"],
        "uuid": ["00000000-0000-0000-0000-000000000000"],
    }


def probe(
    client: Client,
    values: dict[str, list[str]],
    *,
    writes: bool = True,
    queries: bool = True,
    until: Callable[[dict[str, str]], bool] | None = None,
) -> dict[str, str]:
    """Every reachable response body, keyed by 'METHOD path': GET everything, query probes, bad writes on the API.
    `until` is given each route's new bodies in turn and ends the walk once it answers true: a walk that must find
    something (the positive controls) need not go on once it has; one that must not (the leak checks) has no `until`."""
    bodies: dict[str, str] = {}
    seen = 0
    for route in route_templates():
        paths = fill(route, values)
        for index, path in enumerate(paths):
            response = client.get(path)
            bodies[f"GET {path}"] = body_of(response) + str(response.headers)
            # Filters and orderings can only change what a readable list shows; the schema describes types, not data.
            if queries and index == 0 and response.status_code == 200 and "/schema" not in path:
                for query in QUERY_PROBES:
                    response = client.get(path + query)
                    bodies[f"GET {path}{query}"] = body_of(response) + str(response.headers)
            if not writes or index > 0 or any(word in path for word in WRITE_EXCLUDED):
                continue
            if path.startswith("/api/"):
                for method, body in itertools.product(("post", "put", "patch"), BAD_BODIES):
                    response = getattr(client, method)(path, body, content_type="application/json")
                    bodies[f"{method.upper()} {path} {body}"] = body_of(response) + str(response.headers)
                response = client.options(path)
                bodies[f"OPTIONS {path}"] = body_of(response)
            elif index == 0:
                response = client.post(path, {"answer": "x", "ordering": "answer", "text": ""})
                bodies[f"POST {path}"] = body_of(response) + str(response.headers)
        if until is not None:
            fresh, seen = dict(itertools.islice(bodies.items(), seen, None)), len(bodies)
            if until(fresh):
                break
    return bodies


def leaks(bodies: dict[str, str]) -> list[tuple[str, str]]:
    return [(where, gold) for where, body in bodies.items() for gold in GOLD_STRINGS if gold in body]


@pytest.mark.walk
@pytest.mark.django_db
def test_no_page_or_endpoint_shows_a_candidate_any_gold_answer_before_submission(exam_world):
    client = Client(raise_request_exception=False)  # a server error is a response too: its page is searched
    assert client.login(username="novice", password=PASSWORD)
    bodies = probe(client, exam_world["values"])
    assert len(bodies) > 200  # the probe really went through the application
    assert any(exam_world["gold"][0].question in body for body in bodies.values())  # and reached the exam
    assert leaks(bodies) == []
    attempt = QualificationAttempt.objects.get(pk=exam_world["attempt"].pk)
    assert attempt.submitted_at is None, "a probe submitted the attempt: the test would no longer be 'before'"


@pytest.mark.walk
@pytest.mark.django_db
def test_the_probe_finds_gold_where_it_is_legitimately_shown(exam_world):
    # The same probe as the manager, who sees the exam items with their answers, must find them: the search works.
    client = Client(raise_request_exception=False)  # a server error is a response too: its page is searched
    assert client.login(username="manager", password=PASSWORD)
    expected, found = {answer for _, items, _ in GOLD for answer in items}, set()

    def all_found(fresh: dict[str, str]) -> bool:
        found.update(gold for _, gold in leaks(fresh))
        return expected <= found

    bodies = probe(client, exam_world["values"], writes=False, queries=False, until=all_found)
    assert expected <= {gold for _, gold in leaks(bodies)}


@pytest.mark.django_db
def test_after_submission_the_results_page_shows_every_gold_answer_and_reason(exam_world):
    client = Client(raise_request_exception=False)  # a server error is a response too: its page is searched
    assert client.login(username="novice", password=PASSWORD)
    attempt = exam_world["attempt"]
    response = client.post(f"/qualification/attempts/{attempt.pk}/submit/", {})
    assert response.status_code == 302
    html = client.get(f"/qualification/attempts/{attempt.pk}/").content.decode()
    for gold in GOLD_STRINGS:
        assert gold in html
    assert "No answer was given." in html
    assert "Different words" in html  # "my guess" vs "Zyxquorbel"
