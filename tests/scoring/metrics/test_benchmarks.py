"""One scorer per benchmark: the file door and a run's per-item metrics score a prediction with the same object."""

from __future__ import annotations

import json

import pytest

from scoring.metrics import benchmarks
from scoring.metrics.files import PredictionFileError
from scoring.runs.results import item_metrics, native_headline

QUESTION = {"uid": "q1", "answer": ["12.5"], "answer_type": "span", "answer_from": "table", "scale": "million"}


@pytest.mark.parametrize(("answer", "scale"), [("12.5", "million"), ("12.5", ""), ("13", "million")])
def test_a_tatqa_prediction_scores_the_same_from_a_file_and_in_a_run(tmp_path, answer, scale):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps([{"questions": [QUESTION]}]))
    predictions = tmp_path / "pred.json"
    predictions.write_text(json.dumps({"q1": [answer, scale]}))
    (row,) = benchmarks.score_files("tatqa", gold, predictions).details
    item = {"uid": "q1", "answer": ["12.5"], "source_format": "tatqa", "native": QUESTION, "answer_form": "short"}
    metrics = item_metrics(item, answer=[answer], scale=scale)
    assert (metrics["tatqa_em"], metrics["tatqa_f1"]) == (row["em"], row["f1"])


def test_a_run_headline_names_its_benchmark_by_the_scorer_of_its_format():
    for fmt, scorer in benchmarks.SCORERS.items():
        records = [{"source_format": fmt, scorer.native_metrics[0][0]: 1.0}]
        headline = native_headline(records, {scorer.native_metrics[0][0]: {"mean": 1.0}})
        assert headline["benchmark"] == scorer.benchmark
        assert headline["figures"][0]["label"] == scorer.native_metrics[0][1]


def test_an_unknown_benchmark_is_refused_with_the_known_ones():
    with pytest.raises(PredictionFileError, match="tatqa, tatdqa, finqa, scitat"):
        benchmarks.scorer_of("squad")
