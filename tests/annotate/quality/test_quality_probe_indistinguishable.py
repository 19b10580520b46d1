"""Done-when of hidden gold as instances: several annotators work a batch with hidden gold at one in two, through the
API and the pages, and nothing an annotator can read tells a probe from a draft — numbers, times, history, lease,
queue counts, lists, the work export, the pages — while the probes' statuses move on after submission."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.test import Client

from annotate.quality.models import GoldProbe
from curation.drafting.signals import drafts_committed
from curation.models import Instance, Membership
from curation.states import Role, Status
from tests.annotate.quality.helpers import gold_on, make_refined_gold
from tests.conftest import PASSWORD, instance_build

ANNOTATORS = ("annotator", "annotator2", "annotator3")
# What is bound to differ from one instance to the next, whatever its kind; everything else must read the same.
OWN_VALUES = re.compile(r"\d{4}-\d\d-\d\d[T ][\d:.]+(Z|[+-]\d\d:\d\d)?|#\d+|\b\d+\b")


@pytest.fixture
def world(project, personas, context, open_batch, django_user_model):
    third = django_user_model.objects.create_user("annotator3", password=PASSWORD)
    Membership.objects.create(project=project, user=third, role=Role.ANNOTATOR, is_qualified=True)
    make_refined_gold(project, context)
    make_refined_gold(project, context, variant=" in the appendix")  # eight: a batch holds each gold once at most
    gold_on(project, personas["manager"])  # one in two, before the batch is drafted
    tables = sorted(context.tables.values_list("id", flat=True))
    for i in range(8):  # drafting commits one context's draft at a time
        instance_build(
            project,
            context,
            batch=open_batch,
            question=f"What is the value {i} of model A?",
            answer=[f"{i}.5"],
            rationale=f"Row A, column {i}.",
            relevant_tables=list(context.tables.all()),  # as the drafter marks them, with its suggested kind
            answer_type="arithmetic",
            scale="percent",
            draft={
                "drafter": "llm",
                "run": 3,
                "context": context.pk,
                "question": f"What is the value {i} of model A?",
                "answer": [f"{i}.5"],
                "rationale": f"Row A, column {i}.",
                "answer_type": "arithmetic",
                "scale": "percent",
                "relevant_table_ids": tables,
            },
        )
        drafts_committed.send(sender=None, run=None, batch_id=open_batch.pk)
    return {"users": {**personas, "annotator3": third}}


def api_for(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def shape(value):
    """A response with the values every instance has its own of (ids, numbers, times) masked: what is left must be
    the same for a probe and a draft at the same step."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    if isinstance(value, str):
        return OWN_VALUES.sub("·", value)
    if isinstance(value, bool) or value is None:
        return value
    return type(value).__name__


def differences(left, right, path="") -> list[str]:
    """Where two shapes differ (for the failure message)."""
    if isinstance(left, dict) and isinstance(right, dict):
        keys = sorted(set(left) | set(right))
        return [d for key in keys for d in differences(left.get(key), right.get(key), f"{path}.{key}")]
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [d for n, (a, b) in enumerate(zip(left, right, strict=True)) for d in differences(a, b, f"{path}[{n}]")]
    return [] if left == right else [f"{path}: {left!r} != {right!r}"]


def instance_reads(client: Client, number: int) -> dict:
    """Every JSON read an annotator has of one instance in their hands."""
    return {
        "instance": client.get(f"/api/instances/{number}/").json(),
        "history": client.get(f"/api/instances/{number}/history/").json(),
        "workspace": client.get(f"/api/instances/{number}/workspace/").json(),
    }


def comparable(reads: dict) -> dict:
    """The reads without the instance's own text (question, answer, rationale, table data, draft texts)."""
    instance = {k: v for k, v in reads["instance"].items() if k not in ("question", "answer", "rationale")}
    draft = reads["workspace"].get("draft", {})
    events = [
        {**{k: v for k, v in event.items() if k != "created_at"}, "actor": event["actor"] and "the annotator"}
        for event in reads["history"]["events"]
    ]
    # The suggestions are read from the answer's own text and cells (evidence or none), content like the question.
    own_content = ("instance", "draft", "tables", "paragraphs", "suggested_type", "suggested_scale")
    workspace = {k: v for k, v in reads["workspace"].items() if k not in own_content and not k.endswith("_evidence")}
    return shape({"instance": instance, "draft_keys": sorted(draft), "events": events, "workspace": workspace})


@pytest.mark.django_db
def test_probes_and_drafts_cannot_be_told_apart_by_an_annotator(project, world):
    probes = set(GoldProbe.objects.values_list("instance_id", flat=True))
    drafts = set(Instance.objects.filter(batch__isnull=False).without_probes().values_list("pk", flat=True))
    assert len(probes) == len(drafts) == 8  # one in two
    # Numbers interleaved: every probe follows a draft of the same batch, and drafts follow probes.
    assert min(drafts) < min(probes) < max(drafts) < max(probes) or min(drafts) < max(probes) < max(drafts)
    assert all(p - 1 in drafts for p in probes)

    seen: dict[str, list[tuple[bool, dict]]] = {"claimed": [], "submitted": []}
    kinds_served = set()
    for turn in range(12):
        name = ANNOTATORS[turn % len(ANNOTATORS)]
        client = api_for(name)
        counts_before = client.get(f"/api/projects/{project.slug}/queue/").json()
        if turn % 2:  # the API's Next
            number = client.post(f"/api/projects/{project.slug}/queue/next/").json()["instance"]
        else:  # the page's Next
            response = client.post(f"/p/{project.slug}/work/next/")
            number = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
        is_probe = number in probes
        kinds_served.add(is_probe)
        counts_after = client.get(f"/api/projects/{project.slug}/queue/").json()
        # Counts behave alike: one less waits, one more is held.
        assert counts_after["available"] == counts_before["available"] - 1
        assert counts_after["held"] == counts_before["held"] + 1
        first = instance_reads(client, number)
        second = instance_reads(client, number)
        # The lease is the one the claim set, read after read.
        assert first["instance"]["lease_expires_at"] == second["instance"]["lease_expires_at"]
        assert first["workspace"]["instance"]["lease_expires_at"] == first["instance"]["lease_expires_at"]
        # Created before the claim, drafted before claimed, by the run that drafted the batch.
        events = first["history"]["events"]
        assert [(e["from_status"], e["to_status"]) for e in events] == [("", "drafted"), ("drafted", "in_refinement")]
        assert events[0]["reason"] == "" and events[0]["actor"] is None
        assert first["instance"]["created_at"] < events[1]["created_at"]
        assert events[0]["created_at"] < events[1]["created_at"]
        assert first["workspace"]["draft"]["run"] == 3 and first["instance"]["batch"] is not None
        seen["claimed"].append((is_probe, comparable(first)))
        page = client.get(f"/p/{project.slug}/work/{number}/").content.decode()
        assert f"Refine #{number}" in page and "probe" not in page.lower()
        # Answered as a person would, through the API.
        tables = first["workspace"]["context_table_ids"]
        body = {
            "expected_version": first["instance"]["version"],
            "answer": ["a guess"],
            "answer_form": "short",
            "answer_source": "table",
            "answer_type": "span",
            "scale": "",
            "relevant_table_ids": tables,
        }
        submitted = client.post(f"/api/instances/{number}/submit/", body, content_type="application/json")
        assert submitted.status_code == 200, submitted.content
        counts_done = client.get(f"/api/projects/{project.slug}/queue/").json()
        assert counts_done["submitted"] == counts_after["submitted"] + 1
        assert counts_done["available"] == counts_after["available"]
        assert counts_done["held"] == counts_after["held"] - 1
        reads = {
            "instance": client.get(f"/api/instances/{number}/").json(),
            "history": client.get(f"/api/instances/{number}/history/").json(),
            "workspace": {},
        }
        seen["submitted"].append((is_probe, comparable(reads)))
    assert kinds_served == {True, False}, "both kinds were served"
    for step, rows in seen.items():
        probe_shapes = [s for is_probe, s in rows if is_probe]
        draft_shapes = [s for is_probe, s in rows if not is_probe]
        assert probe_shapes and draft_shapes
        for probe_shape in probe_shapes:
            assert probe_shape in draft_shapes, (step, differences(probe_shape, draft_shapes[0]))

    # Statuses move on after submission: round one takes a probe as it takes a draft, and its author sees it move.
    verifier = api_for("verifier")
    handed_in = Instance.objects.filter(status=Status.SUBMITTED)
    for pk in (handed_in.filter(pk__in=probes).first().pk, handed_in.exclude(pk__in=probes).first().pk):
        taken = verifier.post(f"/api/instances/{pk}/review/claim/")
        assert taken.status_code == 200 and taken.json()["status"] == "round1_review", taken.content
        author = Instance.objects.get(pk=pk).author.username
        assert api_for(author).get(f"/api/instances/{pk}/").json()["status"] == "round1_review"
        given_back = verifier.post(
            f"/api/instances/{pk}/review/release/",
            {"expected_version": taken.json()["version"]},
            content_type="application/json",
        )
        assert given_back.status_code == 200, given_back.content

    # Lists, the work export and the queue page read a probe as a draft.
    for name in ANNOTATORS:
        client = api_for(name)
        mine = set(Instance.objects.filter(author__username=name).values_list("pk", flat=True))
        listed = client.get("/api/instances/", {"project": project.slug}).json()
        rows = listed["results"] if isinstance(listed, dict) else listed
        assert {row["id"] for row in rows} == mine
        assert len({json.dumps(sorted(row)) for row in rows}) == 1  # the same fields for every row
        export = client.get(f"/api/projects/{project.slug}/work-export/", {"file_format": "csv"})
        exported = list(csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode())))
        assert {int(row["id"]) for row in exported} == mine
        browser = client.get(f"/p/{project.slug}/instances/").content.decode()
        queue_page = client.get(f"/p/{project.slug}/work/").content.decode()
        for pk in mine:
            assert f"#{pk}" in browser or f">{pk}<" in browser
            assert f">{pk}<" in queue_page
        assert "probe" not in browser.lower() and "probe" not in queue_page.lower()
