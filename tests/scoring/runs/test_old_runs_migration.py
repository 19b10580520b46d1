"""Runs stored before their predictions named the release's format, or before their results held answerability, are
brought to today's shape by scoring's migration 0009, with the values the pages used to work out when reading them."""

from __future__ import annotations

import importlib

import pytest

from curation.releases.models import Release, ReleaseItem
from scoring.runs.comparison import tool_cells
from scoring.runs.models import Prediction, ScoringRun
from scoring.runs.progress import prediction_records
from scoring.runs.results import run_summary
from tests.factories import ProjectFactory
from tests.support.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("scoring", "0008_drop_scoring_template")
FILL = importlib.import_module("scoring.migrations.0009_old_runs_to_current_shape").old_runs_fill


@pytest.fixture
def release():
    project = ProjectFactory()
    release = Release.objects.create(project=project, name="old", version=1, content_hash="0" * 64, item_count=4)
    ReleaseItem.objects.bulk_create(
        ReleaseItem(release=release, position=n, uid=f"q{n}", data={"uid": f"q{n}", "answer": ["1"]}) for n in range(4)
    )
    return release


def old_run(apps, release, label: str, metrics: list[dict], results: dict) -> int:
    """A run of the historical model with one prediction of each of `metrics` (in the release's order)."""
    run = apps.get_model("scoring", "ScoringRun").objects.create(
        project_id=release.project_id, release_id=release.pk, label=label, method="tool", config_hash=label,
        status="completed", results=results,
    )  # fmt: skip
    items = ReleaseItem.objects.filter(release=release).order_by("position")
    historical_prediction = apps.get_model("scoring", "Prediction")
    historical_prediction.objects.bulk_create(
        historical_prediction(
            run_id=run.pk,
            item_id=item.pk,
            position=item.position,
            uid=item.uid,
            status="scored",
            metrics=figures,
            is_correct=bool(figures.get("is_correct")),
        )
        for item, figures in zip(items, metrics, strict=False)
    )
    return run.pk


def formats(run_id: int) -> list[str | None]:
    return [p.metrics.get("source_format") for p in Prediction.objects.filter(run_id=run_id).order_by("position")]


def test_old_runs_get_the_format_and_answerability_the_pages_worked_out(release):
    apps = migrate([BEFORE])
    summarised = {"count": 4, "failed": 0, "correct": 2, "accuracy": 0.5}
    metrics = [
        {"em": 1.0, "tatqa_em": 1.0, "is_correct": True},
        {"em": 0.0},
        {"em": 1.0, "is_correct": True, "abstained": True},
        {"is_answerable": False, "abstained": False},
    ]
    tatqa = old_run(apps, release, "tatqa", metrics, summarised)
    finqa = old_run(apps, release, "finqa", [{"em": 0.0}, {"em": 1.0, "finqa_execution": 1.0}], {})
    scitat = old_run(apps, release, "scitat", [{"em": 1.0}, {"f1": 0.4}], {})
    # Today's shape (a prediction names a format, the results hold answerability) is left as it is.
    answerability = {"answerable": {"count": 3, "accuracy": 0.25}, "unanswerable": {"count": 1, "accuracy": 1.0}}
    current = old_run(
        apps, release, "current", [{"em": 1.0, "source_format": "tatdqa", "tatqa_em": 1.0}, {"em": 0.0}],
        {**summarised, "answerability": answerability},
    )  # fmt: skip

    migrate()

    assert formats(tatqa) == ["tatqa", "tatqa", "tatqa", None]  # the unanswerable question names none, as today
    assert formats(finqa) == ["finqa", "finqa"] and formats(scitat) == ["scitat", "scitat"]
    assert formats(current) == ["tatdqa", None]
    for run_id, fmt in ((tatqa, "tatqa"), (finqa, "finqa"), (scitat, "scitat"), (current, "tatdqa")):
        run = ScoringRun.objects.get(pk=run_id)
        assert run_summary(prediction_records(run), resamples=10)["headline"]["format"] == fmt
    # The summary held answerable questions only: the answerable accuracy is the run's, nothing was unanswerable.
    results = ScoringRun.objects.get(pk=tatqa).results
    assert results["answerability"] == {
        "answerable": {"count": 4, "accuracy": 0.5},
        "unanswerable": {"count": 0, "accuracy": None},
        "abstained_on_answerable": 1,
    }
    assert [cell["text"] for cell in tool_cells({"results": results})][0::4] == ["0.50", "0.50"]
    assert ScoringRun.objects.get(pk=current).results["answerability"] == answerability
    assert ScoringRun.objects.get(pk=finqa).results == {}  # a run never summarised has no results to fill in


def test_the_migration_runs_again_and_back_without_changing_anything(release):
    apps = migrate([BEFORE])
    run_id = old_run(apps, release, "old", [{"em": 1.0, "tatqa_em": 1.0}], {"count": 1, "failed": 0, "accuracy": 1.0})
    migrate()
    filled = list(Prediction.objects.filter(run_id=run_id).values_list("metrics", flat=True))
    results = ScoringRun.objects.get(pk=run_id).results
    FILL(migrate(), None)
    migrate([BEFORE])  # the reverse keeps today's shape, which older code reads as it reads new runs
    assert list(Prediction.objects.filter(run_id=run_id).values_list("metrics", flat=True)) == filled
    assert ScoringRun.objects.get(pk=run_id).results == results
    migrate()
    assert list(Prediction.objects.filter(run_id=run_id).values_list("metrics", flat=True)) == filled
