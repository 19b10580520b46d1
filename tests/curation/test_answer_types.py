"""Suggested answer type and scale (TAT-QA's kinds), from the answer, its rationale and its tables."""

from __future__ import annotations

import pytest

from curation.answer_types import header_texts, suggested_answer_type, suggested_scale, table_scale


@pytest.mark.parametrize(
    ("question", "rationale", "answer", "expected"),
    [
        ("Which model is best?", "Table 1: A has 87.3.", ["A"], "span"),
        ("Which models beat the baseline?", "", ["A", "B"], "multi-span"),
        ("By how much does A beat B?", "87.3 - 81.0 = 6.3", ["6.3"], "arithmetic"),
        ("What is the average?", "(2 + 4) / 2", ["3"], "arithmetic"),
        ("What is A's accuracy?", "Table 1 gives A 87.3.", ["87.3"], "span"),
        ("How many models exceed 80?", "A and B exceed 80.", ["2"], "count"),
        ("How many points does A gain?", "87.3 - 81.0 = 6.3", ["6.3"], "arithmetic"),
        ("Which model?", "", ["", " "], ""),
    ],
)
def test_answer_type_follows_the_answer_and_what_the_rationale_computes(question, rationale, answer, expected):
    assert suggested_answer_type(question=question, rationale=rationale, answer=answer) == expected


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["Revenue (in millions)"], "million"),
        (["", "$ in thousands"], "thousand"),
        (["€m", "2019"], "million"),
        (["Assets, in billions of dollars"], "billion"),
        (["Accuracy (%)", "Model"], "percent"),
        (["Model", "Acc"], ""),
    ],
)
def test_table_scale_reads_scale_words_of_captions_and_headers(texts, expected):
    assert table_scale(texts) == expected


def test_scale_applies_to_numeric_answers_only():
    texts = header_texts(caption="Sales (in millions).", rows=[["Region", "2019"], ["EU", "12.5"]])
    assert suggested_scale(question="What were EU sales in 2019?", answer=["12.5"], table_texts=texts) == "million"
    assert suggested_scale(question="Which region sold most?", answer=["EU"], table_texts=texts) == ""


def test_percent_comes_from_the_answer_or_the_question_first():
    texts = ["Sales (in millions)."]
    assert suggested_scale(question="What share?", answer=["12%"], table_texts=texts) == "percent"
    assert suggested_scale(question="What is the percentage change?", answer=["3.1"], table_texts=texts) == "percent"


def test_header_texts_stop_at_the_header_rows():
    rows = [["Model", "Acc (%)"], ["A", "in millions"]]
    assert header_texts(caption="", rows=rows, header_rows=1) == ["", "Model", "Acc (%)"]
