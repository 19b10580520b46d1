"""SciTaT rules of issue 4: short-form rule, EM (short-form), F1 and BERTScore (free-form), Answer: extraction."""

from __future__ import annotations

from curation.toolkit import answer_form as short_form
from scoring.metrics import scitat


class FakeScorer:
    def __init__(self):
        self.pairs = []

    def f1_many(self, candidates, references):
        self.pairs.extend(zip(candidates, references, strict=True))
        return [1.0 if candidate == reference else 0.25 for candidate, reference in self.pairs]

    def info(self):
        return {"metric": "fake", "model": "fake", "layer": 0}


def test_short_form_means_every_gold_item_has_at_most_five_space_tokens():
    assert short_form.is_short_form(["one two three four five"])
    assert not short_form.is_short_form(["one two three four five six"])
    assert not short_form.is_short_form(["short", "one two three four five six"])
    # Split on a single space: a double space makes an empty token.
    assert not short_form.is_short_form(["a  b c d e"])


def test_prediction_is_the_text_after_answer_split_on_blank_lines():
    text = "Reason: the table shows it.\nAnswer: BERT\n\nRoBERTa"
    assert scitat.prediction_items(text) == ["BERT", "RoBERTa"]
    assert scitat.prediction_items("no marker here") == ["no marker here"]


def test_em_for_short_form_and_f1_for_free_form():
    short = scitat.score_question("s", ["BERT"], "Reason: x\nAnswer: bert")
    assert (short.short_form, short.em, short.f1) == (True, 1.0, None)
    free = scitat.score_question("f", ["the model improves accuracy on every task"], ["the model improves accuracy"])
    assert free.short_form is False
    assert free.em is None
    assert free.f1 == 0.67


def test_fixed_mode_averages_em_over_every_short_and_f1_bertscore_over_every_free_question():
    gold = [
        {"id": "s1", "answer": ["BERT"]},
        {"id": "s2", "answer": ["GPT"]},
        {"id": "f1", "answer": ["accuracy improves on every single benchmark"]},
    ]
    predictions = {"s1": ["BERT"], "f1": "Answer: accuracy improves on every single benchmark", "x": ["?"]}
    scorer = FakeScorer()
    report = scitat.score_dataset(gold, predictions, bertscorer=scorer, mode="fixed")
    assert (report.short_form_count, report.free_form_count) == (2, 1)
    assert report.em == 0.5
    assert report.f1 == 1.0
    assert report.bertscore == 1.0
    assert scorer.pairs == [("accuracy improves on every single benchmark",) * 2]
    assert report.bertscore_info["metric"] == "fake"
    assert report.unknown_uids == ["x"]


def test_exact_match_ignores_item_order_case_and_number_formatting():
    assert scitat.exact_match(["12.50"], ["12.5"]) == 1.0
    assert scitat.exact_match(["RoBERTa", "bert"], ["BERT", "roberta"]) == 1.0
    assert scitat.exact_match(["12.4"], ["12.5"]) == 0.0
    assert scitat.exact_match(["BERT"], ["BERT", "RoBERTa"]) == 0.0


def test_exact_match_fixed_mode_sorts_case_insensitively_where_official_does_not():
    predicted, gold = ["bert", "ALBERT"], ["BERT", "albert"]
    assert scitat.exact_match(predicted, gold, mode="official") == 0.0
    assert scitat.exact_match(predicted, gold) == 1.0


def test_exact_match_of_no_items_or_blank_items_is_zero():
    assert scitat.exact_match([], ["A"]) == 0.0
    assert scitat.exact_match(["  "], ["A"]) == 0.0
