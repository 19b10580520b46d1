"""Near-duplicates and contamination: planted duplicates of real TAT-QA questions (imported in another project on the
same site) and of the release's own questions are found, listed on the releases page with both sides, withheld
from the cut through the one registry, and counted in the release's notes and dataset card; near questions that
differ (another answer, another table) are not."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest
from django.test import Client

from curation.datasets.services import dataset_import
from curation.errors import InvalidInput, NotPermitted
from curation.exports import release_card_fields
from curation.exports.card import dataset_card
from curation.models import Instance
from curation.releases.models import NearDuplicate
from curation.releases.near_duplicates import near_duplicates_check, normalise
from curation.releases.services.cut import release_cut
from curation.services.projects import project_create
from curation.states import Status
from tests.conftest import instance_build, open_batch_build
from tests.factories import ContextFactory, TableFactory

TATQA_DEV = Path(__file__).resolve().parents[2] / "data" / "tatqa" / "tatqa_dataset_dev.json.xz"


@pytest.fixture
def public_tatqa(db):
    """The first ten documents of TAT-QA dev, imported into another project of the site (as a team would)."""
    documents = json.loads(lzma.decompress(TATQA_DEV.read_bytes()))[:10]
    public = project_create(name="Public benchmarks", creator=None, slug="public")
    dataset_import(
        project=public, actor=None, format="tatqa", source_name="tatqa_dataset_dev.json",
        content=json.dumps(documents).encode(),
    )  # fmt: skip
    return documents


def _with_table(project, rows):
    table = TableFactory(paper__project=project, paper__title="Our report", cells=rows)
    return ContextFactory(paper=table.paper, tables=[table])


def _validated(project, context, batch, question, answer):
    instance = instance_build(project, context, batch=batch, question=question, answer=answer)
    Instance.objects.filter(pk=instance.pk).update(status=Status.VALIDATED)
    return instance


@pytest.fixture
def planted(project, personas, public_tatqa):
    """Questions of our release: a reworded TAT-QA question over the same table with its answer (contamination), the
    same words with another answer, a question of our own and its reworded twin (a duplicate within the release)."""
    document = public_tatqa[0]
    source = next(q for q in document["questions"] if q["answer_type"] == "span")
    batch = open_batch_build(project)
    same_table = _with_table(project, document["table"]["table"])
    own = _with_table(project, [["Model", "Accuracy"], ["A", "87.3"], ["B", "81.0"]])
    words = source["question"].rstrip("?").split()
    reworded = " ".join(words[:-1]) + " in total " + words[-1] + "?"  # a small edit
    return {
        "source": source,
        "contaminated": _validated(project, same_table, batch, reworded.upper(), source["answer"]),
        "other_answer": _validated(project, same_table, batch, source["question"], ["something else"]),
        "first": _validated(project, own, batch, "Which model is the most accurate on the test set?", ["A"]),
        "twin": _validated(project, own, batch, "On the test set, which model is the most accurate?", ["A"]),
        "unrelated": _validated(project, own, batch, "How many models are compared?", ["2"]),
        "batch": batch,
    }


def test_planted_duplicates_are_found_with_their_sources_and_near_questions_that_differ_are_not(
    project, personas, planted
):
    check = near_duplicates_check(project=project, actor=personas["manager"], threshold=0.85)
    assert check.compared["candidates"] == 5 and check.compared["references"] >= 50
    found = {(f.instance_id, f.against, f.source) for f in NearDuplicate.objects.filter(project=project)}
    assert found == {
        (planted["contaminated"].pk, "imported", "TAT-QA tatqa_dataset_dev.json"),
        (planted["twin"].pk, "release", "this release"),
    }
    finding = NearDuplicate.objects.get(instance=planted["contaminated"])
    assert finding.other_question == planted["source"]["question"] and finding.other.project.slug == "public"


def test_the_releases_page_lists_them_the_manager_withholds_one_and_the_cut_and_card_say_so(project, personas, planted):
    client = Client()
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/releases/").content.decode()
    assert 'id="near-duplicates"' in page and "Not checked yet" in page
    response = client.post(f"/p/{project.slug}/releases/near-duplicates/check/", {"threshold": "0.85"}, follow=True)
    page = response.content.decode()
    assert "2 near-duplicates" in page
    contaminated = NearDuplicate.objects.get(instance=planted["contaminated"])
    assert f"/p/{project.slug}/history/{planted['contaminated'].pk}/" in page  # our side
    assert planted["source"]["question"][:40] in page and "an imported dataset: TAT-QA tatqa_dataset_dev.json" in page
    assert f"/p/public/history/{contaminated.other_id}/" not in page  # the manager is not a member of that project

    client.post(f"/p/{project.slug}/releases/near-duplicates/withhold/", {"withhold": [contaminated.pk]})
    assert list(NearDuplicate.objects.filter(is_withheld=True)) == [contaminated]
    assert (
        "1 validated instance marked as near-duplicates to withhold"
        in client.get(f"/p/{project.slug}/releases/").content.decode()
    )

    release = release_cut(project=project, actor=personas["manager"], name="ours", batch_ids=[planted["batch"].pk])
    released = set(release.items.values_list("instance_id", flat=True))
    assert planted["contaminated"].pk not in released and planted["twin"].pk in released
    card = "".join(dataset_card(release_card_fields(release), "jsonl", ["data.jsonl"]))
    assert "2 questions found (against TAT-QA tatqa_dataset_dev.json, this release), 1 withheld." in card
    assert "1 validated instance withheld from this release: 1 marked as near-duplicates to withhold." in card

    again = near_duplicates_check(project=project, actor=personas["manager"])  # a new check keeps what was withheld
    assert again.threshold == 0.85 and not NearDuplicate.objects.filter(instance__status=Status.RELEASED).exists()
    assert NearDuplicate.objects.get(instance=planted["contaminated"]).is_withheld


def test_a_release_cut_without_a_check_says_so(project, personas, planted):
    release = release_cut(project=project, actor=None, name="ours", batch_ids=[planted["batch"].pk])
    assert "No near-duplicate check was run before this cut." in release.notes


@pytest.mark.parametrize("threshold", [0.2, 1.5, "high", True])
def test_a_threshold_outside_half_to_one_is_refused_and_nothing_changes(project, personas, planted, threshold):
    with pytest.raises(InvalidInput) as error:
        near_duplicates_check(project=project, actor=personas["manager"], threshold=threshold)
    assert error.value.detail == {"field": "threshold"} and not NearDuplicate.objects.exists()


def test_a_typed_threshold_that_is_no_number_gets_a_message(project, personas, planted):
    client = Client()
    client.force_login(personas["manager"])
    page = client.post(
        f"/p/{project.slug}/releases/near-duplicates/check/", {"threshold": "high"}, follow=True
    ).content.decode()
    assert "The threshold is a similarity between 0.5 and 1" in page and not NearDuplicate.objects.exists()


@pytest.mark.parametrize(
    ("person", "status"),
    [("annotator", 403), ("verifier", 403), ("outsider", 404), (None, 302), ("manager", 302)],
)
def test_only_managers_check_and_withhold(project, personas, planted, person, status):
    client = Client()
    if person:
        client.force_login(personas[person])
    for door in ("check", "withhold"):
        response = client.post(f"/p/{project.slug}/releases/near-duplicates/{door}/", {"threshold": "0.9"})
        assert response.status_code == status, door
        if status == 302 and person is None:
            assert response["Location"].startswith("/login/?next=")
    if person != "manager":
        assert not NearDuplicate.objects.exists()
        with pytest.raises(NotPermitted):
            near_duplicates_check(project=project, actor=personas[person or "outsider"])


def test_normalising_keeps_numbers_and_drops_separators():
    assert normalise("What was Revenue in 2019 ($1,234.5)?") == "what was revenue in 2019 1234.5"


def test_the_command_checks_as_the_page_does_and_prints_json(project, planted):
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command("check_near_duplicates", "--project", project.slug, "--threshold", "0.85", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["candidates"] == 5 and report["found"] == 2
    assert {row["instance"] for row in report["near_duplicates"]} == {planted["contaminated"].pk, planted["twin"].pk}
    with pytest.raises(CommandError, match=r"between 0\.5 and 1"):
        call_command("check_near_duplicates", "--project", project.slug, "--threshold", "2")
