"""A hidden-gold probe answers its annotator as the draft it looks like on every route that takes an instance number:
each GET (API and pages) while held and once handed in — same status, same keys, same kinds of values — its
autosave and submit, its history, and the queue's counts; the gold's refined answer reaches none of them."""

from __future__ import annotations

import json
import re
from typing import Any

from django.test import Client

from annotate.quality.models import GoldProbe
from curation.models import Instance, ReasoningType
from tests.annotate.quality_helpers import gold_on, make_refined_gold
from tests.annotate.test_qualification_gold_leak import route_templates
from tests.conftest import PASSWORD

# Routes whose number is an instance's (the workspace's, the history's, the review pages' and the instance API's);
# other numbered routes name papers, contexts, copies or discussions.
INSTANCE_ROUTE = re.compile(r"(^api/instances/<int:pk>/|/(work|review|round2|history)/<int:pk>/|^instances/<int:pk>/)")


def annotator_client() -> Client:
    client = Client(raise_request_exception=False)  # a server error is an answer too: it must match the draft's
    assert client.login(username="annotator", password=PASSWORD)
    return client


def shape(value: Any, key: str = "") -> Any:
    """The keys and kinds of a JSON answer, not its values: a list is a list whatever it holds (a draft's tables
    marked or not, its problems; the history's entries are compared on their own), and the draft record is whatever
    its drafter wrote."""
    if key == "draft":
        return "dict"
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in sorted(value.items())}
    return "list" if isinstance(value, list) else type(value).__name__


def answer(response, number: int) -> tuple:
    body = response.content.decode("utf-8", "replace")
    if response.get("Content-Type", "").startswith("application/json"):
        return response.status_code, shape(json.loads(body))
    return response.status_code, response.get("Location", "").replace(str(number), "N")


def instance_routes(slug: str) -> list[str]:
    routes = [route for route in route_templates() if INSTANCE_ROUTE.search(route)]
    assert len(routes) > 15  # the resolver's routes were read, not an empty list
    return [route.replace("<slug:slug>", slug) for route in routes]


def read_all(client: Client, number: int, routes: list[str]) -> dict[str, tuple]:
    return {route: answer(client.get("/" + route.replace("<int:pk>", str(number))), number) for route in routes}


def differences(draft: dict, probe: dict) -> dict:
    return {key: (draft[key], probe[key]) for key in draft if draft[key] != probe[key]}


def gold_with_reasoning_type(project, context) -> list[Instance]:
    # Gold typed as the drafts are, so a difference the test sees is the application's, not the data's.
    gold = make_refined_gold(project, context)
    kind = ReasoningType.objects.filter(project=project, parent__isnull=False).first()
    Instance.objects.filter(pk__in=[g.pk for g in gold]).update(reasoning_type=kind)
    return gold


def work(client: Client, number: int, version: int, tables: list[int]) -> dict[str, Any]:
    """What the workspace does with an item: autosave an edit, then submit it."""
    url = f"/api/instances/{number}/"
    saved = client.post(
        f"{url}autosave/",
        {"expected_version": version, "answer": ["42"], "answer_form": "short", "answer_source": "table"},
        content_type="application/json",
    )
    stale = client.post(
        f"{url}autosave/", {"expected_version": version, "question": "x"}, content_type="application/json"
    )
    final = {"expected_version": version + 1, "answer_type": "span", "relevant_table_ids": tables}
    client.post(f"{url}autosave/", final, content_type="application/json")
    submitted = client.post(f"{url}submit/", {"expected_version": version + 2}, content_type="application/json")
    again = client.post(f"{url}submit/", {"expected_version": version + 3}, content_type="application/json")
    return {
        "autosave": answer(saved, number),
        "stale": answer(stale, number),
        "submit": answer(submitted, number),
        "again": answer(again, number),
        "versions": (saved.json()["instance"]["version"] - version, submitted.json()["version"] - version),
    }


def history_outline(client: Client, number: int) -> tuple:
    history = client.get(f"/api/instances/{number}/history/").json()
    return (
        [(e["from_status"], e["to_status"], e["reason"], e["actor"]) for e in history["events"]],
        [(r["number"], r["kind"], r["author"]) for r in history["revisions"]],
    )


def work_both(project, context) -> dict[str, dict[str, Any]]:
    """The annotator takes "Next" until they have held and handed in a real draft and a probe, through the API; what
    every instance route answered at each step, per kind."""
    client = annotator_client()
    routes = instance_routes(project.slug)
    tables = sorted(context.tables.values_list("id", flat=True))
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(12):
        waiting = client.get(f"/api/projects/{project.slug}/queue/").json()
        response = client.post(f"/api/projects/{project.slug}/queue/next/")
        assert response.status_code == 200, response.content
        claim = response.json()
        number = claim["instance"]
        is_probe = GoldProbe.objects.filter(user__username="annotator", number=number).exists()
        kind = "probe" if is_probe else "draft"
        record = {
            "number": number,
            "claim": shape(claim),
            "claim_version": claim["version"],
            "counts": (waiting, client.get(f"/api/projects/{project.slug}/queue/").json()),
            "held": read_all(client, number, routes),
            "held_history": history_outline(client, number),
        }
        record["work"] = work(client, number, claim["version"], tables)
        record["done"] = read_all(client, number, routes)
        record["done_history"] = history_outline(client, number)
        record["bodies"] = [client.get(f"/{route.replace('<int:pk>', str(number))}").content for route in routes]
        seen.setdefault(kind, record)
        if len(seen) == 2:
            return seen
    raise AssertionError("no hidden gold in 12 claims")


def test_every_instance_route_answers_a_held_probe_as_a_held_draft(personas, project, context, drafts):
    gold_with_reasoning_type(project, context)
    gold_on(project, personas["manager"])
    seen = work_both(project, context)
    draft, probe = seen["draft"], seen["probe"]
    assert draft["held"]["api/instances/<int:pk>/"][0] == 200  # the routes really were read as the holder
    assert differences(draft["held"], probe["held"]) == {}
    assert draft["claim"] == probe["claim"] and draft["claim_version"] == probe["claim_version"] == 2


def test_every_instance_route_answers_a_handed_in_probe_as_a_handed_in_draft(personas, project, context, drafts):
    gold_with_reasoning_type(project, context)
    gold_on(project, personas["manager"])
    seen = work_both(project, context)
    draft, probe = seen["draft"], seen["probe"]
    assert draft["done"]["api/instances/<int:pk>/history/"][0] == 200
    assert differences(draft["done"], probe["done"]) == {}


def test_autosave_and_submit_answer_a_probe_as_a_draft(personas, project, context, drafts):
    gold_with_reasoning_type(project, context)
    gold_on(project, personas["manager"])
    seen = work_both(project, context)
    draft, probe = seen["draft"]["work"], seen["probe"]["work"]
    assert [draft[step][0] for step in ("autosave", "stale", "submit", "again")] == [200, 409, 200, 403]
    assert draft == probe
    assert draft["versions"] == (1, 3)  # autosaved twice, then submitted: the version moves on alike


def test_a_probe_s_history_reads_as_a_claimed_draft_s(personas, project, context, drafts):
    gold_with_reasoning_type(project, context)
    gold_on(project, personas["manager"])
    seen = work_both(project, context)
    for when in ("held_history", "done_history"):
        assert seen["draft"][when] == seen["probe"][when], when
    events, revisions = seen["probe"]["done_history"]
    assert [to for _, to, _, _ in events] == ["drafted", "in_refinement", "submitted"]
    assert [kind for _, kind, _ in revisions] == ["autosave", "autosave", "submit"]


def test_the_queue_counts_a_claimed_probe_as_a_claimed_draft(personas, project, context, drafts):
    gold_with_reasoning_type(project, context)
    gold_on(project, personas["manager"])
    seen = work_both(project, context)
    for kind in ("draft", "probe"):
        before, after = seen[kind]["counts"]
        assert (before["available"] - after["available"], after["held"] - before["held"]) == (1, 1), kind


def test_no_route_of_a_probe_shows_the_refined_gold(personas, project, context, drafts):
    gold = gold_with_reasoning_type(project, context)
    gold_on(project, personas["manager"])
    seen = work_both(project, context)
    probe = GoldProbe.objects.get(number=seen["probe"]["number"])
    refined = next(g for g in gold if g.pk == probe.gold_id)
    bodies = b"".join(seen["probe"]["bodies"]).decode()
    assert refined.question in bodies  # the routes showed the probe
    assert refined.answer[0] not in bodies and refined.rationale not in bodies
    assert Instance.objects.get(pk=refined.pk).version == refined.version  # the gold instance was never touched
