"""The real TAT-QA dev file: import counts, release statistics, and the round trip through the TAT-QA export."""

from __future__ import annotations

import json
import zipfile
from io import StringIO

import pytest
from django.core.management import call_command

from curation.datasets.services import dataset_import
from curation.models import Project
from curation.releases.models import Release
from curation.releases.services.cut import release_hash_recompute
from curation.services.projects import project_create
from scoring.metrics import benchmarks, tatqa
from tests.scoring.metrics.shared_data import shared_data_dir

SLUG = "tatqa-dev-import"


@pytest.fixture(scope="module")
def tatqa_dev(django_db_setup, django_db_blocker):
    """TAT-QA dev imported once for the module (about ten seconds), removed afterwards."""
    data_dir = shared_data_dir()
    path = data_dir / "tatqa" / "tatqa_dataset_dev.json"
    with django_db_blocker.unblock():
        project = project_create(name="TAT-QA dev", slug=SLUG, creator=None)
        result = dataset_import(
            project=project,
            actor=None,
            format="tatqa",
            source_name=path.name,
            content=path.read_bytes(),
            as_release="tatqa-dev",
            extra_attribution=(path.parent / "SOURCE.md").read_text(encoding="utf-8"),
        )
    yield {"path": path, "project_id": project.pk, "release_id": result.release.pk, "counts": result.counts}
    with django_db_blocker.unblock():
        project = Project.objects.get(pk=project.pk)
        for release in Release.objects.filter(project=project):
            release.exports.all().delete()
            release.items.all().delete()
            release.contexts.all().delete()
            release.delete()
        project.instances.all().delete()  # Instance.context is PROTECT: instances go first
        project.delete()


@pytest.fixture
def exported_tatqa(tatqa_dev, tmp_path, db):
    out = tmp_path / "tatqa.zip"
    call_command(
        "export_release",
        "--release",
        "tatqa-dev",
        "--project",
        SLUG,
        "--format",
        "tatqa",
        "--out",
        str(out),
        "--no-progress",
        stdout=StringIO(),
    )
    with zipfile.ZipFile(out) as bundle:
        data = json.loads(bundle.read("data/tatqa-dev-v1.json"))
        card = bundle.read("README.md").decode()
    return data, card


def test_dev_import_counts(tatqa_dev, db):
    assert tatqa_dev["counts"]["questions"] == 1668
    assert tatqa_dev["counts"]["contexts"] == 278
    stats = Release.objects.get(pk=tatqa_dev["release_id"]).statistics
    assert stats["questions"] == 1668 and stats["contexts"] == 278
    assert stats["answer_type"] == {"arithmetic": 718, "span": 701, "multi-span": 217, "count": 32}
    assert stats["answer_source"] == {"table": 772, "text": 389, "table-text": 507}


def test_release_stats_command_on_the_import(tatqa_dev, db):
    out = StringIO()
    call_command("release_stats", "--release", "tatqa-dev", "--project", SLUG, "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["questions"] == 1668 and data["papers"] == 278
    assert data["answer_type"]["arithmetic"] == 718
    assert data["settings"]["long"]["avg_tables_per_context"] == 1.0
    assert data["scale"]["thousand"] == 345


def test_reimporting_the_dev_file_writes_nothing(tatqa_dev, db):
    project = Project.objects.get(pk=tatqa_dev["project_id"])
    before = project.instances.count()
    again = dataset_import(
        project=project, actor=None, format="tatqa", source_name="again", content=tatqa_dev["path"].read_bytes()
    )
    assert not again.created and project.instances.count() == before == 1668


def test_round_trip_is_equal_field_by_field(tatqa_dev, exported_tatqa):
    original = json.loads(tatqa_dev["path"].read_text(encoding="utf-8"))
    exported, _ = exported_tatqa
    assert len(exported) == len(original) == 278
    for mine, theirs in zip(exported, original, strict=True):
        assert mine["table"] == theirs["table"]
        assert mine["paragraphs"] == theirs["paragraphs"]
        assert len(mine["questions"]) == len(theirs["questions"])
        for q_mine, q_theirs in zip(mine["questions"], theirs["questions"], strict=True):
            for key in ("uid", "question", "answer", "scale", "answer_type", "answer_from", "derivation", "order"):
                assert q_mine[key] == q_theirs[key], (q_theirs["uid"], key)
                assert type(q_mine[key]) is type(q_theirs[key]), (q_theirs["uid"], key)
    assert exported == original


def test_official_scorer_gives_identical_results_on_both(tatqa_dev, exported_tatqa, tmp_path):
    exported, _ = exported_tatqa
    exported_path = tmp_path / "exported.json"
    exported_path.write_text(json.dumps(exported), encoding="utf-8")
    predictions = tatqa_dev["path"].parent / "sample_prediction.json"
    on_original = benchmarks.score_files("tatqa", tatqa_dev["path"], predictions)
    on_export = benchmarks.score_files("tatqa", exported_path, predictions)
    assert on_original.summary == on_export.summary
    assert on_original.details == on_export.details
    assert on_original.summary["count"] == 1668 and 0 < on_original.summary["em"] < 1
    gold = json.loads(tatqa_dev["path"].read_text(encoding="utf-8"))
    gold_as_predictions = {q["uid"]: (q["answer"], q["scale"]) for doc in exported for q in doc["questions"]}
    assert (
        tatqa.score_dataset(gold, gold_as_predictions).summary()
        == tatqa.score_dataset(exported, gold_as_predictions).summary()
    )


def test_dataset_card_carries_hash_statistics_and_attribution(tatqa_dev, exported_tatqa, db):
    _, card = exported_tatqa
    release = Release.objects.get(pk=tatqa_dev["release_id"])
    assert release.content_hash in card
    assert "CC BY 4.0" in card and "Zhu et al." in card and "870accc4" in card  # SOURCE.md is kept
    assert "| arithmetic | span | multi-span | count |" in card and "| 718 | 701 | 217 | 32 |" in card
    assert release_hash_recompute(release) == release.content_hash
