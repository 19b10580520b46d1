"""The grouped bar chart of scoring pages: labels never overlap their neighbours and stay inside the chart."""

from __future__ import annotations

from itertools import pairwise

from curation.charts import LABEL_CHARS, grouped_chart

CHAR_PX = 6.5  # an 11 px system font, generous


def test_neighbouring_labels_sit_on_different_rows_and_fit_their_space():
    names = ["Numerical Reasoning › Arithmetic Calculation", "Numerical Reasoning › Comparison", "Look Up › Span"]
    chart = grouped_chart(
        {name: {"em": 0.5, "f1": 0.6, "bertscore": 0.7} for name in names},
        series=(("em", "EM"), ("f1", "F1"), ("bertscore", "BERTScore")),
    )
    labels = chart["labels"]
    assert [label["label"] for label in labels] == names
    for left, right in pairwise(labels):
        assert left["y"] != right["y"]
    for label in labels:
        assert len(label["short"]) <= LABEL_CHARS
        half = CHAR_PX * len(label["short"]) / 2
        assert label["x"] - half >= 0 and label["x"] + half <= chart["width"]
    same_row = [label for label in labels if label["y"] == labels[0]["y"]]
    for left, right in pairwise(same_row):
        assert right["x"] - left["x"] >= CHAR_PX * LABEL_CHARS
