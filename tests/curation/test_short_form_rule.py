"""The SciTaT short-form rule (≤ 5 tokens on a single-space split) is written once and every caller agrees on it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from curation.datasets.formats import parse_dataset
from curation.toolkit import answer_form as short_form
from scoring.metrics import scitat
from scoring.runs import results

ROOT = Path(__file__).resolve().parents[2]

# (answer items, form) — the edge cases where a second tokenisation would disagree with SciTaT's evaluate.py.
CASES = [
    (["12.5"], "short"),
    (["one two three four five"], "short"),
    (["one two three four five six"], "free"),
    (["12.5 %"], "short"),  # a number with its unit is two tokens
    (["3.2 million US dollars per year"], "free"),  # six tokens with the units
    (["BLEU, ROUGE-L, METEOR and chrF."], "short"),  # punctuation sticks to its word: five tokens
    (["A , B , C ."], "free"),  # spaced punctuation counts: six tokens
    (["a  b  c  d"], "free"),  # double spaces make empty tokens (7), as in the official script (4 on split())
    (["BERT", "RoBERTa large", "T5 with adapters on top"], "short"),  # multi-span: every item ≤ 5
    (["BERT", "a b c d e f"], "free"),  # multi-span: one long item makes it free
]


def _scitat_import_form(items: list[str]) -> str:
    record = {"id": "q1", "question": "Which?", "answer": items, "question_type": "Comparison"}
    return parse_dataset("scitat", [record]).questions[0].fields["answer_form"]


def _tatqa_import_form(items: list[str]) -> str:
    question = {
        "uid": "q1",
        "order": 1,
        "question": "Which?",
        "answer": items,
        "answer_type": "multi-span",
        "answer_from": "table",
        "scale": "",
    }
    data = [{"table": {"uid": "t", "table": [["a", "b"]]}, "paragraphs": [], "questions": [question]}]
    return parse_dataset("tatqa", data).questions[0].fields["answer_form"]


@pytest.mark.parametrize(("items", "form"), CASES)
def test_every_caller_agrees_on_the_short_form_rule(items, form):
    is_short = form == "short"
    assert short_form.is_short_form(items) is is_short
    assert scitat.score_question("q1", items, "Answer: x").short_form is is_short
    assert results.is_short_form({"answer": items}) is is_short
    assert short_form.answer_form(items) == form  # the workspace's suggestion
    assert _scitat_import_form(items) == form
    assert _tatqa_import_form(items) == form


def test_an_empty_answer_gets_no_suggestion_but_a_curated_form_wins_in_scoring():
    assert short_form.answer_form([]) == "" and short_form.answer_form(["  "]) == ""
    assert results.is_short_form({"answer": ["a b c d e f"], "answer_form": "short"}) is True


def test_the_rule_and_its_tokenisation_are_defined_once():
    sources = {
        path.relative_to(ROOT).as_posix(): path.read_text()
        for app in ("curation", "annotate", "scoring")
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
    }
    limits = [name for name, text in sources.items() if re.search(r"SHORT_FORM_MAX\w* = ", text)]
    assert limits == ["curation/toolkit/answer_form.py"]
    counting = [name for name, text in sources.items() if re.search(r"len\([^)]*\.split\([^)]*\)\) <= 5", text)]
    assert counting == []
