"""The grouped bar chart of scoring pages: labels share a baseline, never overlap their neighbours and stay inside
the chart."""

from __future__ import annotations

from itertools import pairwise

from curation.charts import LABEL_CHARS, LABEL_LINES, grouped_chart

CHAR_PX = 6.5  # an 11 px system font, generous


def test_labels_share_one_baseline_and_wrap_within_their_group_so_neighbours_never_overlap():
    names = [
        "Numerical Reasoning › Arithmetic Calculation",
        "Look Up",
        "Numerical Reasoning › Comparison",
        "A very long reasoning type name that needs more than two lines to be told",
    ]
    chart = grouped_chart(
        {name: {"em": 0.5, "f1": 0.6, "bertscore": 0.7} for name in names},
        series=(("em", "EM"), ("f1", "F1"), ("bertscore", "BERTScore")),
    )
    labels = chart["labels"]
    assert [label["label"] for label in labels] == names
    assert len({label["y"] for label in labels}) == 1  # "Numerical Reasoning" sat a row below "Look Up"
    assert labels[0]["lines"] == ["Numerical Reasoning ›", "Arithmetic Calculation"] and labels[1]["lines"] == [
        "Look Up"
    ]
    assert len(labels[3]["lines"]) == LABEL_LINES and labels[3]["lines"][-1].endswith("…")
    for label in labels:
        half = CHAR_PX * max(len(line) for line in label["lines"]) / 2
        assert all(len(line) <= LABEL_CHARS for line in label["lines"])
        assert label["x"] - half >= 0 and label["x"] + half <= chart["width"]
    for left, right in pairwise(labels):
        assert right["x"] - left["x"] >= CHAR_PX * LABEL_CHARS
