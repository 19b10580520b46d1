"""A run's scale mode: TAT-QA EM with the predicted scale, or ignoring it (the eval card's zero-shot option)."""

from __future__ import annotations

from scoring.runs.results import item_metrics

ITEM = {
    "uid": "t1",
    "source_format": "tatqa",
    "answer": ["1496.5"],
    "answer_type": "arithmetic",
    "answer_form": "short",
    "scale": "million",
}


def test_a_missing_scale_costs_tatqa_em_unless_the_run_ignores_scale():
    predicted = item_metrics(ITEM, answer=["1496.5"], scale="")
    ignored = item_metrics(ITEM, answer=["1496.5"], scale="", scale_mode="ignore")
    assert predicted["tatqa_em"] == 0.0 and predicted["scale_correct"] is False
    assert ignored["tatqa_em"] == 1.0 and ignored["scale_correct"] is None
    assert predicted["em"] == ignored["em"] == 1.0  # SciTaT EM never reads the scale
