"""The instance browser: filters, search, visibility per role, pagination, bulk actions (page and API)."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from rest_framework.test import APIClient

from annotate.instances.selectors import instances_filtered
from annotate.instances.services import instances_discard
from curation.batches.services import batch_add_papers, batch_create
from curation.errors import InvalidInput, NotFound, NotPermitted
from curation.models import Batch, Context, Instance, Paper, ReasoningType, TransitionEvent
from curation.services.instances import instances_retype
from curation.services.lifecycle import instance_transition
from curation.states import Status
from tests.annotate.work.helpers import queue_next
from tests.factories import PaperFactory

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture
def world(personas, project, paper, drafts, make_instance):
    """Six drafts in B1 (the annotator holds one), a loose draft about recall, and a second paper."""
    held = queue_next(project=project, user=personas["annotator"])
    loose = make_instance(question="What is the recall of B?", answer=["0.42"], rationale="Read row B.")
    other = PaperFactory(project=project, title="Another paper")
    return {"held": held, "loose": loose, "other_paper": other, "people": personas, "drafts": drafts}


def browse(user, project, **filters):
    data = {"q" if name == "text" else name: str(value) for name, value in filters.items()}
    found = instances_filtered(user=user, project=project, data=data)
    assert found.is_valid(), found.errors
    return set(found.qs.values_list("pk", flat=True))


def test_filters_narrow_by_status_batch_paper_type_annotator_and_text(world, project, open_batch):
    manager, held, loose = world["people"]["manager"], world["held"], world["loose"]
    everything = set(Instance.objects.values_list("pk", flat=True))
    assert browse(manager, project) == everything
    assert browse(manager, project, status=Status.IN_REFINEMENT) == {held.pk}
    assert browse(manager, project, batch=0) == {loose.pk}
    assert browse(manager, project, batch=open_batch.pk) == everything - {loose.pk}
    assert browse(manager, project, paper=world["other_paper"].pk) == set()
    subtype = world["drafts"][0].reasoning_type
    assert browse(manager, project, reasoning_type=subtype.pk) == {d.pk for d in world["drafts"][0::2]}
    assert browse(manager, project, reasoning_type=subtype.parent_id) >= {d.pk for d in world["drafts"][0::2]}
    # The codes the pages show work as well as ids, a type's code taking its subtypes in.
    assert browse(manager, project, reasoning_type=subtype.code) == {d.pk for d in world["drafts"][0::2]}
    assert browse(manager, project, reasoning_type=subtype.parent.code) == browse(
        manager, project, reasoning_type=subtype.parent_id
    )
    with pytest.raises(InvalidInput, match="No reasoning type 'XX-9'"):
        browse(manager, project, reasoning_type="XX-9")
    assert browse(manager, project, annotator="annotator") == {held.pk}
    assert browse(manager, project, text="RECALL") == {loose.pk}  # question, any case
    assert browse(manager, project, text="0.42") == {loose.pk}  # answer
    assert browse(manager, project, text="row b") == {loose.pk}  # rationale


def test_annotators_browse_only_their_own_work_and_outsiders_nothing(world, project):
    assert browse(world["people"]["annotator"], project) == {world["held"].pk}
    assert browse(world["people"]["annotator2"], project) == set()
    assert len(browse(world["people"]["verifier"], project)) == Instance.objects.count()
    with pytest.raises(NotFound):
        browse(world["people"]["outsider"], project)


def test_the_page_paginates_and_keeps_filters(client, world, project, make_instance):
    for n in range(55):
        make_instance(question=f"Paged question {n}?")
    client.force_login(world["people"]["verifier"])
    first = client.get(f"/p/{project.slug}/instances/", {"q": "Paged"}).content.decode()
    assert "55 instances" in first and "page 1 of 2" in first
    labels = re.findall(r'<label for="id_\w+">([^<]+?) <', first)
    assert labels[:6] == ["Status", "Batch", "Context paper", "Reasoning type", "Annotator", "Text"], labels
    assert "q=Paged&amp;page=2" in first
    second = client.get(f"/p/{project.slug}/instances/", {"q": "Paged", "page": 2}).content.decode()
    assert second.count("data-instance=") == 5
    assert 'name="instances"' not in second  # verifiers browse; only managers act in bulk


def test_bulk_discard_is_all_or_nothing(world, project, personas):
    manager = personas["manager"]
    validated = world["drafts"][1]
    Instance.objects.filter(pk=validated.pk).update(status=Status.VALIDATED)
    instance_transition(instance_id=validated.pk, target=Status.RELEASED, actor=None)
    ids = [world["loose"].pk, world["held"].pk, validated.pk]
    with pytest.raises(InvalidInput, match="Released"):
        instances_discard(project=project, actor=manager, instance_ids=ids, reason="off topic")
    assert not Instance.objects.filter(status=Status.DISCARDED).exists()
    assert instances_discard(project=project, actor=manager, instance_ids=ids[:2], reason="off topic") == 2
    assert TransitionEvent.objects.filter(to_status=Status.DISCARDED, reason="discarded: off topic").count() == 2
    with pytest.raises(NotPermitted):
        instances_discard(project=project, actor=personas["verifier"], instance_ids=ids[:1], reason="x")


def test_bulk_retype_bumps_versions_and_records_revisions(world, project, personas):
    target = ReasoningType.objects.filter(project=project, parent__isnull=False).last()
    held = world["held"]
    assert (
        instances_retype(
            project=project, actor=personas["manager"], instance_ids=[held.pk], reasoning_type_id=target.pk
        )
        == 1
    )
    held_now = Instance.objects.get(pk=held.pk)
    assert (held_now.reasoning_type_id, held_now.version) == (target.pk, held.version + 1)
    assert held_now.revisions.last().fields["reasoning_type_id"] == target.pk
    with pytest.raises(NotPermitted):
        instances_retype(
            project=project, actor=personas["annotator"], instance_ids=[held.pk], reasoning_type_id=target.pk
        )


def test_batching_whole_papers_moves_their_contexts_and_drafts(world, project, personas, paper, context):
    manager = personas["manager"]
    later = batch_create(project=project, actor=None, name="B2")
    with pytest.raises(InvalidInput, match="Another paper"):
        batch_add_papers(
            project=project, actor=manager, batch_id=later.pk, paper_ids=[paper.pk, world["other_paper"].pk]
        )
    assert Context.objects.get(pk=context.pk).batch_id is None
    moved = batch_add_papers(project=project, actor=manager, batch_id=later.pk, paper_ids=[paper.pk])
    # The held instance stays where it was handed out; every other draft of the paper moves.
    assert moved == {"contexts": 1, "drafts": Instance.objects.filter(status=Status.DRAFTED).count()}
    assert Context.objects.get(pk=context.pk).batch_id == later.pk
    assert Instance.objects.get(pk=world["held"].pk).batch.name == "B1"


def test_the_page_applies_a_bulk_assignment(client, world, project, personas):
    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/instances/?status=drafted"
    ids = [d.pk for d in world["drafts"] if d.pk != world["held"].pk][:2]
    response = client.post(url, {"instances": ids, "action": "assign", "assignee": "annotator2", "bulk": ""})
    assert response.status_code == 302 and response["Location"].endswith("?status=drafted")
    assert set(Instance.objects.filter(assigned_to=personas["annotator2"]).values_list("pk", flat=True)) == set(ids)
    response = client.post(url, {"instances": ids, "action": "discard", "reason": "", "bulk": ""})
    assert "This action needs it." in response.content.decode()
    response = client.post(url, {"action": "discard", "reason": "x", "bulk": ""})
    assert "Tick the instances" in response.content.decode()
    assert "This field is required." not in response.content.decode()  # said once, not twice


@pytest.mark.parametrize(("role", "expected"), [("annotator", 403), ("verifier", 403), ("outsider", 404)])
def test_only_managers_post_bulk_actions_on_the_page(client, world, project, personas, role, expected):
    client.force_login(personas[role])
    response = client.post(
        f"/p/{project.slug}/instances/", {"instances": [world["loose"].pk], "action": "discard", "reason": "x"}
    )
    assert response.status_code == expected
    assert Instance.objects.get(pk=world["loose"].pk).status == Status.DRAFTED


def test_the_project_page_links_the_browser(client, world, project, personas):
    for role in ("annotator", "verifier", "manager"):
        client.force_login(personas[role])
        assert f'href="/p/{project.slug}/instances/"' in client.get(f"/p/{project.slug}/").content.decode()


# API


def api_request(world, project, name):
    base = f"/api/projects/{project.slug}/"
    loose = world["loose"].pk
    batch = Batch.objects.get(project=project, name="B1").pk
    paper = world["drafts"][0].context.paper_id
    return {
        "browse": ("get", f"{base}instances/?q=recall", None),
        "bulk": ("post", f"{base}instances/bulk/", {"action": "discard", "instance_ids": [loose], "reason": "dup"}),
        "papers-to-batch": ("post", f"{base}papers/to-batch/", {"batch": batch, "papers": [paper]}),
    }[name]


API_MATRIX = {
    "browse": (200, 200, 200, 404, 401),
    "bulk": (403, 403, 200, 404, 401),
    "papers-to-batch": (403, 403, 200, 404, 401),
}


@pytest.mark.parametrize("endpoint", sorted(API_MATRIX))
@pytest.mark.parametrize("role", ROLES)
def test_instance_browser_api_permission_matrix(world, project, api_client_for, endpoint, role):
    user = None if role == "anonymous" else world["people"][role]
    method, url, body = api_request(world, project, endpoint)
    response = getattr(api_client_for(user), method)(url, body, format="json")
    assert response.status_code == API_MATRIX[endpoint][ROLES.index(role)], response.content[:300]


def test_api_browse_filters_and_bulk_retype(world, project, api_client_for, personas):
    manager = api_client_for(personas["manager"])
    found = manager.get(f"/api/projects/{project.slug}/instances/", {"q": "recall"}).json()
    assert [i["id"] for i in found["results"]] == [world["loose"].pk] and found["count"] == 1
    annotator = api_client_for(personas["annotator"]).get(f"/api/projects/{project.slug}/instances/").json()
    assert [i["id"] for i in annotator["results"]] == [world["held"].pk]
    target = ReasoningType.objects.filter(project=project, parent__isnull=False).last()
    body = {"action": "retype", "instance_ids": [world["loose"].pk], "reasoning_type": target.pk}
    assert manager.post(f"/api/projects/{project.slug}/instances/bulk/", body, format="json").json()["changed"] == 1
    missing = manager.post(
        f"/api/projects/{project.slug}/instances/bulk/", {"action": "assign", "instance_ids": [1]}, format="json"
    )
    assert missing.status_code == 400 and "assignee" in missing.json()


def test_browser_lists_a_bounded_number_of_papers_and_the_one_filtered_by(world, project, personas):
    """However many papers a project has, the filter and the batch form list the newest PAPER_CHOICES, and a paper
    asked for by its id (the link from a paper page) besides."""
    from django.test import Client

    from annotate.instances.selectors import PAPER_CHOICES
    from tests.conftest import PASSWORD

    oldest = PaperFactory(project=project, title="Oldest paper")
    Paper.objects.bulk_create(
        [Paper(project=project, title=f"Paper {i:04d}", origin="test") for i in range(PAPER_CHOICES + 20)]
    )
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    html = client.get(f"/p/{project.slug}/instances/").content.decode()
    assert html.count('name="papers"') == PAPER_CHOICES
    assert "Oldest paper" not in html
    html = client.get(f"/p/{project.slug}/instances/?paper={oldest.pk}").content.decode()
    assert f'<option value="{oldest.pk}" selected>Oldest paper</option>' in html


def test_the_page_counts_at_most_count_up_to_matches_and_says_so(client, world, project, make_instance, monkeypatch):
    from annotate.instances import views as browser_views
    from curation import pagination

    monkeypatch.setattr(pagination, "COUNT_UP_TO", 4)
    monkeypatch.setattr(browser_views, "PAGE_SIZE", 2)
    made = [make_instance(question=f"Counted question {n}?") for n in range(6)]
    client.force_login(world["people"]["verifier"])
    first = client.get(f"/p/{project.slug}/instances/", {"q": "Counted"}).content.decode()
    assert "More than 4 instances" in first and "page 1 of 2" in first
    assert [int(pk) for pk in re.findall(r'data-instance="(\d+)"', first)] == [made[5].pk, made[4].pk]
    last = client.get(f"/p/{project.slug}/instances/", {"q": "Counted", "page": 9}).content.decode()
    assert "page 2 of 2" in last and ">Next<" not in last
    # Under the limit the count is exact.
    exact = client.get(f"/p/{project.slug}/instances/", {"q": "Counted question 5"}).content.decode()
    assert "1 instance" in exact and "More than" not in exact


@pytest.mark.skipif(connection.vendor != "postgresql", reason="trigram indexes are PostgreSQL's")
def test_text_search_can_read_the_trigram_indexes_on_postgresql(world, project):
    from annotate.instances.filters import matching_text

    sql, params = matching_text(Instance.objects.order_by(), "recall of B").values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        # A tiny table is cheaper to read whole (or along any index); with those ways closed, what is left is a
        # bitmap over an index whose expression is the search's own.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    for index in ("instance_question_trgm", "instance_answer_trgm", "instance_rationale_trgm"):
        assert index in plan, plan
    manager = world["people"]["manager"]
    assert browse(manager, project, text="recall of B") == {world["loose"].pk}


def test_the_page_and_the_api_filter_by_the_type_codes_the_page_offers(client, world, project, personas):
    subtype = world["drafts"][0].reasoning_type
    expected = {d.pk for d in world["drafts"][0::2]}
    client.force_login(personas["manager"])
    html = client.get(f"/p/{project.slug}/instances/").content.decode()
    assert f'<option value="{subtype.code}">' in html  # the select box offers codes
    page = client.get(f"/p/{project.slug}/instances/", {"reasoning_type": subtype.code}).content.decode()
    assert {int(pk) for pk in re.findall(r'name="instances" value="(\d+)"', page)} == expected
    api = APIClient()
    api.force_authenticate(personas["manager"])
    url = f"/api/projects/{project.slug}/instances/"
    listed = api.get(url, {"reasoning_type": subtype.code}).json()
    assert {row["id"] for row in listed["results"]} == expected
    assert {row["id"] for row in api.get(url, {"reasoning_type": subtype.pk}).json()["results"]} == expected
    bad = api.get(url, {"reasoning_type": "XX-9"})
    assert bad.status_code == 400 and "XX-9" in str(bad.json())
    assert api.get(url, {"batch": "-1"}).status_code == 400
