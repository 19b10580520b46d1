"""Filling a batch from papers: all short contexts of a paper, or a seeded N per paper (service, page, API, command)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotate.batches.views import _filled_message
from curation.batches.services import BatchSample, batch_fill_from_papers, sample_per_paper
from curation.errors import InvalidInput, NotPermitted
from curation.models import Batch, Context, Instance
from curation.services.lifecycle import instance_create
from tests.conftest import PASSWORD
from tests.factories import BatchFactory, LongContextFactory, PaperFactory, ShortContextFactory

ROLES = ["annotator", "annotator2", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture
def library(project):
    """Four papers with 5, 3, 1 and 2 short contexts without a batch, one long context each, and a batch."""
    papers = []
    for index, count in enumerate((5, 3, 1, 2)):
        paper = PaperFactory(project=project, title=f"Paper {index}")
        ShortContextFactory.create_batch(count, paper=paper)
        LongContextFactory(paper=paper)
        papers.append(paper)
    return {"papers": papers, "batch": BatchFactory(project=project, name="Sampled")}


def in_batch(batch) -> list[int]:
    return sorted(Context.objects.filter(batch=batch).values_list("pk", flat=True))


def test_sample_is_the_same_for_a_seed_and_takes_n_of_each_paper():
    pairs = [(context, paper) for paper in (1, 2, 3) for context in range(paper * 100, paper * 100 + 10)]
    first = sample_per_paper(pairs, per_paper=2, seed=7)
    assert first == sample_per_paper(list(reversed(pairs)), per_paper=2, seed=7)
    assert [sum(1 for c in first if c // 100 == paper) for paper in (1, 2, 3)] == [2, 2, 2]
    assert sample_per_paper(pairs, per_paper=2, seed=8) != first
    assert sample_per_paper(pairs, per_paper=None, seed=7) == sorted(c for c, _ in pairs)
    assert sample_per_paper(pairs, per_paper=50, seed=7) == sorted(c for c, _ in pairs)


def test_a_papers_draw_does_not_depend_on_the_other_papers():
    alone = sample_per_paper([(c, 1) for c in range(10)], per_paper=3, seed=4)
    with_others = sample_per_paper([(c, 1) for c in range(10)] + [(c, 2) for c in range(10, 30)], per_paper=3, seed=4)
    assert [c for c in with_others if c < 10] == alone


def test_fill_takes_n_short_contexts_per_paper_and_their_drafts(project, personas, library):
    papers, batch = library["papers"], library["batch"]
    first_short = Context.objects.filter(paper=papers[2], kind="short").get()
    draft = instance_create(project_id=project.pk, actor=None, context=first_short, question="Q?")
    sample = batch_fill_from_papers(batch_id=batch.pk, actor=personas["manager"], per_paper=1, seed=3)
    assert sample.papers == 4 and len(sample.context_ids) == 4 and in_batch(batch) == sample.context_ids
    chosen = Context.objects.filter(batch=batch)
    assert {c.paper_id for c in chosen} == {p.pk for p in papers} and {c.kind for c in chosen} == {"short"}
    assert Instance.objects.get(pk=draft.pk).batch_id == batch.pk and sample.moved == 1


def test_same_seed_same_contexts_other_seed_other_contexts(project, personas, library):
    batch = library["batch"]
    drawn = {}
    for seed in (1, 1, 2, 3, 4, 5):
        sample = batch_fill_from_papers(batch_id=batch.pk, actor=personas["manager"], per_paper=2, seed=seed)
        drawn.setdefault(seed, []).append(sample.context_ids)
        Context.objects.filter(batch=batch).update(batch=None)
    assert drawn[1][0] == drawn[1][1]
    # Another seed draws otherwise: one of four (any one may match by chance, 1 in 30 here: 2 of 5 and 2 of 3 alike).
    assert any(drawn[seed][0] != drawn[1][0] for seed in (2, 3, 4, 5))
    assert len(drawn[1][0]) == 2 + 2 + 1 + 2


def test_without_n_all_of_the_chosen_papers_contexts_go_in(project, personas, library):
    papers, batch = library["papers"], library["batch"]
    sample = batch_fill_from_papers(batch_id=batch.pk, actor=personas["manager"], paper_ids=[papers[0].pk])
    assert in_batch(batch) == sorted(Context.objects.filter(paper=papers[0], kind="short").values_list("pk", flat=True))
    assert sample.papers == 1 and len(sample.context_ids) == 5
    again = batch_fill_from_papers(batch_id=batch.pk, actor=personas["manager"], per_paper=1, seed=0)
    assert again.papers == 3  # paper 0 has nothing left without a batch


@pytest.mark.parametrize("name", ["annotator", "verifier", "outsider"])
def test_only_managers_fill_batches(project, personas, library, name):
    with pytest.raises(NotPermitted):
        batch_fill_from_papers(batch_id=library["batch"].pk, actor=personas[name], per_paper=1)
    assert in_batch(library["batch"]) == []


@pytest.mark.parametrize("kwargs", [{"per_paper": 0}, {"per_paper": -2}, {"paper_ids": [999999]}])
def test_bad_input_is_refused_and_nothing_moves(project, personas, library, kwargs):
    with pytest.raises(InvalidInput):
        batch_fill_from_papers(batch_id=library["batch"].pk, actor=personas["manager"], **kwargs)
    assert in_batch(library["batch"]) == []


def test_a_paper_of_another_project_or_a_closed_batch_is_refused(project, personas, library):
    foreign = PaperFactory(title="Foreign")  # of a project of its own
    with pytest.raises(InvalidInput, match="not in this project"):
        batch_fill_from_papers(batch_id=library["batch"].pk, actor=personas["manager"], paper_ids=[foreign.pk])
    Batch.objects.filter(pk=library["batch"].pk).update(state=Batch.State.CLOSED)
    with pytest.raises(InvalidInput, match="closed"):
        batch_fill_from_papers(batch_id=library["batch"].pk, actor=personas["manager"], per_paper=1)
    assert in_batch(library["batch"]) == []


@pytest.mark.parametrize(("role", "expected"), zip(ROLES, (403, 403, 403, 200, 404, 401), strict=True))
def test_fill_api_by_role(personas, library, api_client_for, role, expected):
    client = api_client_for(personas.get(role))
    response = client.post(f"/api/batches/{library['batch'].pk}/fill/", {"per_paper": 1, "seed": 5}, format="json")
    assert response.status_code == expected
    assert (len(in_batch(library["batch"])) == 4) == (expected == 200)


def test_fill_api_is_deterministic_and_validates(personas, library, api_client_for):
    client = api_client_for(personas["manager"])
    url = f"/api/batches/{library['batch'].pk}/fill/"
    first = client.post(url, {"per_paper": 2, "seed": 9}, format="json").json()
    Context.objects.update(batch=None)
    second = client.post(url, {"per_paper": 2, "seed": 9}, format="json").json()
    assert first["context_ids"] == second["context_ids"] and second["contexts"] == 7 and second["papers"] == 4
    Context.objects.update(batch=None)
    assert client.post(url, {"per_paper": 0}, format="json").status_code == 400
    assert in_batch(library["batch"]) == []


def test_batches_page_fills_a_sample_and_all_of_a_paper(personas, project, library):
    manager = Client()
    assert manager.login(username="manager", password=PASSWORD)
    url = f"/p/{project.slug}/batches/"
    page = manager.get(url).content.decode()
    assert 'id="fill-from-papers"' in page and "all 5 contexts of “Paper 0”" in page
    response = manager.post(
        url, {"action": "fill", "batch": library["batch"].pk, "per_paper": "1", "seed": "2"}, follow=True
    )
    assert "4 contexts from 4 papers (1 per paper of the short contexts, seed 2)" in response.content.decode()
    assert len(in_batch(library["batch"])) == 4
    # A refusal reads as the page labels the field, and says so once.
    for typed, says in (("0", "Contexts per paper must be at least 1."), ("x", "Contexts per paper: A valid")):
        refused = manager.post(url, {"action": "fill", "batch": library["batch"].pk, "per_paper": typed}, follow=True)
        assert says in refused.content.decode() and "Per paper:" not in refused.content.decode()
    Context.objects.update(batch=None)
    paper = library["papers"][1]
    manager.post(url, {"action": "fill", "batch": library["batch"].pk, "paper_ids": [paper.pk], "per_paper": ""})
    assert in_batch(library["batch"]) == sorted(
        Context.objects.filter(paper=paper, kind="short").values_list("pk", flat=True)
    )
    Context.objects.update(batch=None)
    refused = manager.post(url, {"action": "fill", "batch": library["batch"].pk, "per_paper": "0"}, follow=True)
    assert "at least 1" in refused.content.decode() and in_batch(library["batch"]) == []


@pytest.mark.parametrize("name", ["verifier", "annotator"])
def test_others_cannot_fill_from_the_page(personas, project, library, name):
    client = Client()
    assert client.login(username=name, password=PASSWORD)
    response = client.post(
        f"/p/{project.slug}/batches/", {"action": "fill", "batch": library["batch"].pk, "per_paper": "1"}
    )
    assert response.status_code == 403  # members who are not managers get the plain "not allowed" page
    assert in_batch(library["batch"]) == []


def test_fill_batch_command_prints_the_same_sample_for_a_seed(project, library):
    runs = []
    for _ in range(2):
        out = StringIO()
        call_command(
            "fill_batch",
            "--project",
            project.slug,
            "--batch",
            "Sampled",
            "--per-paper",
            "1",
            "--seed",
            "4",
            "--json",
            stdout=out,
        )
        runs.append(json.loads(out.getvalue()))
        Context.objects.update(batch=None)
    assert runs[0] == runs[1] and runs[0]["contexts"] == 4 and runs[0]["per_paper"] == 1
    with pytest.raises(CommandError, match="at least 1"):
        call_command("fill_batch", "--project", project.slug, "--batch", "Sampled", "--per-paper", "0")


def test_fill_message_says_one_context_paper_and_draft_in_the_singular():
    sample = BatchSample(batch_id=1, per_paper=None, seed=0, papers=1, context_ids=[5], moved=1)
    assert _filled_message(sample) == (
        "1 context from 1 paper (all their short contexts, seed 0) added to the batch, with 1 draft."
    )
    many = BatchSample(batch_id=1, per_paper=2, seed=3, papers=2, context_ids=[5, 6, 7], moved=0)
    assert _filled_message(many).startswith("3 contexts from 2 papers (2 per paper") and "with 0 drafts." in (
        _filled_message(many)
    )
