"""A hidden-gold probe is listed as the draft it looks like, where that draft would be, in every list of the instances
its annotator may see: the instance API, the instance browser (page and API) and the work export — to its holder
only. `WithStandIns` pages such a merged list a slice at a time, checked against the whole list read at once; the
browser's filters read a stand-in as they read an instance."""

from __future__ import annotations

import json
import re

import pytest

from annotate.instances.selectors import InstanceFilters, instances_browse
from annotate.work.queue import queue_claim
from curation.models import Instance
from curation.stand_ins import WithStandIns
from curation.states import Status
from tests.annotate.quality_helpers import gold_on, make_refined_gold, refine_and_submit, work_until_probe
from tests.support.clients import logged_in


@pytest.fixture
def holding(personas, project, context, drafts):
    """The annotator has handed in drafts and holds the probe the queue served next: (client, a draft, the probe)."""
    make_refined_gold(project, context)
    claim = queue_claim(project_slug=project.slug, user=personas["annotator"])  # before hidden gold is on: a draft
    refine_and_submit(Instance.objects.get(pk=claim.instance_id), personas["annotator"])
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    draft = Instance.objects.filter(project=project, author=personas["annotator"]).order_by("id").first()
    assert draft is not None and draft.status == Status.SUBMITTED
    return logged_in("annotator"), draft.pk, probe.number


def ids(body: dict) -> list[int]:
    return [row["id"] for row in body["results"]]


def test_the_instance_api_lists_a_held_probe_where_its_number_falls(project, holding):
    client, draft, probe = holding
    listed = client.get("/api/instances/", {"project": project.slug}).json()
    assert probe in ids(listed) and draft in ids(listed) and ids(listed) == sorted(ids(listed))
    rows = {row["id"]: row for row in listed["results"]}
    assert set(rows[probe]) == set(rows[draft]) and rows[probe]["status"] == "in_refinement"
    assert listed["count"] == len(ids(listed))
    held = ids(client.get("/api/instances/", {"project": project.slug, "status": "in_refinement"}).json())
    assert held == [probe]
    submitted = ids(client.get("/api/instances/", {"status": "submitted"}).json())
    assert draft in submitted and probe not in submitted
    # One row a page: every page holds the next row, the probe among them once.
    paged = [ids(client.get("/api/instances/", {"limit": 1, "offset": n}).json()) for n in range(listed["count"])]
    assert [row for page in paged for row in page] == ids(client.get("/api/instances/").json())


def test_the_instance_browser_lists_a_held_probe_as_a_held_draft(project, holding):
    client, draft, probe = holding
    page = client.get(f"/p/{project.slug}/instances/").content.decode()
    numbers = [int(n) for n in re.findall(r'<tr data-instance="(\d+)"', page)]
    assert probe in numbers and draft in numbers and numbers == sorted(numbers, reverse=True)
    api = client.get(f"/api/projects/{project.slug}/instances/", {"status": Status.IN_REFINEMENT}).json()
    assert ids(api) == [probe]
    searched = client.get(f"/api/projects/{project.slug}/instances/", {"status": Status.SUBMITTED}).json()
    assert draft in ids(searched) and probe not in ids(searched)


def test_the_work_export_holds_a_held_probe_as_a_held_draft(project, holding):
    client, draft, probe = holding
    response = client.get(f"/api/projects/{project.slug}/work-export/", {"file_format": "jsonl"})
    assert response.status_code == 200
    records = {r["id"]: r for r in map(json.loads, b"".join(response.streaming_content).decode().splitlines())}
    assert draft in records and probe in records and list(records) == sorted(records)
    assert set(records[probe]) == set(records[draft]) and records[probe]["status"] == "in_refinement"
    url = f"/api/projects/{project.slug}/work-export/"
    handed_in = client.get(url, {"file_format": "jsonl", "status": "submitted"})
    handed_in_ids = [json.loads(line)["id"] for line in b"".join(handed_in.streaming_content).decode().splitlines()]
    assert draft in handed_in_ids and probe not in handed_in_ids


def test_nobody_else_sees_the_probe_in_a_list(project, holding):
    _, draft, probe = holding
    for name in ("manager", "verifier", "annotator2"):
        client = logged_in(name)
        listed = ids(client.get("/api/instances/", {"project": project.slug, "limit": 1000}).json())
        assert probe not in listed, name
        browsed = ids(client.get(f"/api/projects/{project.slug}/instances/", {"limit": 1000}).json())
        assert probe not in browsed, name
    assert draft in ids(logged_in("manager").get("/api/instances/", {"limit": 1000}).json())  # the lists were read


@pytest.mark.parametrize("descending", [False, True])
def test_a_merged_list_reads_slice_by_slice_as_it_reads_whole(project, make_instance, descending):
    rows = [make_instance(question=f"Row {n}?") for n in range(9)]
    # Numbers that are no instance's (as a probe's are): before, among and after the rows.
    gone = [rows[0], rows[3], rows[4], rows[8]]
    Instance.objects.filter(pk__in=[r.pk for r in gone]).delete()
    extra = [Instance(pk=r.pk, project=project, question="stand-in") for r in gone]
    queryset = Instance.objects.filter(project=project).order_by("-id" if descending else "id")
    merged = WithStandIns(queryset, extra, descending=descending)
    whole = [i.pk for i in merged]
    assert whole == sorted((r.pk for r in rows), reverse=descending)
    assert len(merged) == len(rows)
    for start in range(len(rows) + 1):
        for stop in range(start, len(rows) + 2):
            assert [i.pk for i in merged[start:stop]] == whole[start:stop], (start, stop)


FILTERS = [
    {},
    {"status": Status.DRAFTED},
    {"status": Status.VALIDATED},
    {"batch": 0},
    {"annotator": "annotator"},
    {"annotator": "nobody"},
    {"text": "ROW 1"},
    {"text": "42"},
]


def test_the_browser_s_filters_read_one_instance_as_they_read_the_database(project, personas, make_instance, context):
    from curation.models import Batch, ReasoningType

    batch = Batch.objects.create(project=project, name="B")
    kind = ReasoningType.objects.filter(project=project, parent__isnull=False).first()
    made = [
        make_instance(
            question="Row 1?", answer=["42"], initial_status=Status.VALIDATED, batch=batch, reasoning_type=kind
        ),
        make_instance(question="Row 2?", rationale="row 10 says so", author=personas["annotator"]),
        make_instance(question="Row 3?", context=context, answer=["7"]),
    ]
    more = [
        {"batch": batch.pk},
        {"reasoning_type": kind.pk},
        {"reasoning_type": kind.parent_id},
        {"paper": context.paper_id},
    ]
    visible = list(Instance.objects.filter(pk__in=[m.pk for m in made]))
    for values in FILTERS + more:
        filters = InstanceFilters(**values)
        expected = set(
            instances_browse(user=personas["manager"], project=project, filters=filters).values_list("pk", flat=True)
        )
        assert {i.pk for i in visible if filters.matches(i)} == expected, values
