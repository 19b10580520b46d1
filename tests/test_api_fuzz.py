"""Schema-driven fuzz run: every operation of /api/schema/ through hypothesis (schemathesis), as a manager.

The schema is loaded from the Django app itself (WSGI, in this process and this test's transaction), so the run
covers exactly what the code documents. Each operation gets a small, derandomized budget of generated requests
(valid and invalid ones); each response must not be a server error, must carry a documented status code and must
match the documented response schema. Every failure is collected, so one run names all of them.
"""

from __future__ import annotations

import time

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import context_build, drafts_build, open_batch_build, paper_build, personas_build, project_build

EXAMPLES_PER_OPERATION = 10

# Operations that cannot be fuzzed safely, each with why. Everything else in the schema is run.
EXCLUDED = {
    # Fetches whatever URL the endpoint names (an outbound network request to a generated host).
    ("POST", "/api/endpoints/{id}/test/"),
    # Start drafting or scoring runs: model calls through a worker, long jobs that outlive the test.
    ("POST", "/api/projects/{slug}/drafting-runs/"),
    ("POST", "/api/projects/{slug}/scoring-runs/"),
}

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def wsgi_app(monkeypatch):
    """The WSGI app with the connection kept open across requests, as Django's own test client does: closing it
    at request start or end would drop this test's transaction (and its world)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


# The operations are run in SHARDS parts, each a test of its own, so the test workers share the run (as one test it
# took about 150 s on one worker, often the last to finish).
SHARDS = 4


@pytest.mark.walk  # every endpoint as one persona: CI runs it once, on PostgreSQL (where a value out of range errs)
@pytest.mark.django_db
@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_operation_answers_documented_statuses_and_shapes(wsgi_app, capsys, shard):
    project = project_build()
    people = personas_build(project)
    context = context_build(project, paper_build(project))
    drafts_build(project, open_batch_build(project), context)
    headers = {"Authorization": f"Token {Token.objects.create(user=people['manager']).key}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app, headers=headers)

    failures: list[str] = []
    documented = operations = examples = 0
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in EXCLUDED:
            continue
        documented += 1
        if documented % SHARDS != shard:
            continue
        operations += 1

        # The project's own slug, so requests reach its views' validation rather than stopping at a 404: fixed in the
        # strategy, so no example spends its draws on a slug that would be replaced.
        fixed = {"path_parameters": {"slug": project.slug}} if "{slug}" in operation.path else {}

        @given(case=operation.as_strategy(**fixed))
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
            # No shrinking: a failure is reported by operation, with the request that failed, not a minimal one.
            phases=[Phase.explicit, Phase.generate],
        )
        def run(case):
            nonlocal examples
            examples += 1
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            run()
        except (FailureGroup, Exception) as exc:  # collected, so one run names every failing operation
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc)[:1500]}")

    with capsys.disabled():
        print(
            f"\nfuzz, part {shard + 1} of {SHARDS}: {operations} of {documented} operations, {examples} examples, "
            f"{time.monotonic() - started:.1f} s, {len(failures)} failing"
        )
    assert documented >= 100, documented  # the schema was loaded whole, not an empty or error page
    assert operations >= documented // SHARDS, operations
    assert not failures, "\n\n".join(failures)


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/batches/-1/assign/", "/api/no-such-endpoint/", "/api/papers/x/"])
def test_an_address_no_api_route_matches_answers_the_json_error_body_not_the_html_page(client, path):
    response = client.post(path)
    assert (response.status_code, response["Content-Type"]) == (404, "application/json")
    assert response.json()["error"] == "not_found"
    assert "<html" in client.get("/no-such-page/").content.decode()  # pages keep theirs
