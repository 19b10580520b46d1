"""TAT-QA / TAT-DQA metric rules, each built from the facts of issue 4, and the official regression figures."""

from __future__ import annotations

import json

import pytest

from scoring.metrics import tatqa
from tests.scoring.metrics.shared_data import shared_data_dir


def question(answer, answer_type="span", scale="", uid="q1", answer_from="text"):
    return {"uid": uid, "answer": answer, "answer_type": answer_type, "scale": scale, "answer_from": answer_from}


def score(gold, prediction, predicted_scale="", **options):
    return tatqa.score_question(gold, prediction, predicted_scale, **options)


# Gold answers become a list.
def test_gold_arithmetic_becomes_its_string_and_count_its_integer_string():
    assert tatqa.gold_answer_items(question(12.5, "arithmetic")) == ["12.5"]
    assert tatqa.gold_answer_items(question(3.0, "count")) == ["3"]
    assert tatqa.gold_answer_items(question(["a", "b"], "multi-span")) == ["a", "b"]


# Prediction items are sorted with a plain, case-sensitive string sort and joined into one bag of words.
def test_official_sort_is_case_sensitive_and_fixed_sort_is_not():
    assert tatqa.answer_string(["b", "A", "a"], "") == "A a b"
    assert tatqa.answer_string(["b", "A", "a"], "", "fixed") in ("A a b", "a A b")
    assert tatqa.answer_string(["beta", "Alpha"], "", "fixed") == "Alpha beta"
    assert tatqa.answer_string(["beta", "alpha", "Gamma"], "") == "Gamma alpha beta"
    assert tatqa.answer_string(["beta", "alpha", "Gamma"], "", "fixed") == "alpha beta Gamma"


def test_multi_span_is_compared_as_one_bag_of_words_in_any_order():
    gold = question(["net income", "revenue"], "multi-span")
    assert score(gold, ["revenue", "net income"]).em == 1.0
    partial = score(gold, ["revenue"])
    assert partial.em == 0.0
    # one of three gold tokens: precision 1, recall 1/3
    assert partial.f1 == 0.5


# Numeric items: % keeps its own number, others rounded to 2 decimals times the scale factor.
def test_percent_item_ignores_scale_and_other_numbers_are_rounded_then_scaled():
    assert tatqa.answer_string(["12.5%"], "million") == "0.1250"
    assert tatqa.answer_string(["1.2345"], "thousand") == "1230.0000"
    assert tatqa.answer_string(["22.12"], "percent") == "0.2212"
    assert tatqa.answer_string(["7"], "") == "7.0000"


def test_scale_factor_is_matched_by_substring():
    assert tatqa.scale_to_number("in millions") == 1000000
    assert tatqa.scale_to_number("billion") == 1000000000
    assert tatqa.scale_to_number("thousand") == 1000
    assert tatqa.scale_to_number("percent") == 0.01
    assert tatqa.scale_to_number("") == 1


def test_non_numeric_item_gets_the_scale_appended():
    assert tatqa.answer_string(["about two"], "million") == "about two million"
    assert tatqa.answer_string(["about two"], "") == "about two"


def test_scale_must_match_for_numbers():
    gold = question(1.5, "arithmetic", scale="million")
    assert score(gold, 1.5, "million").em == 1.0
    assert score(gold, 1.5, "thousand").em == 0.0


# The ratio alternative: a single numeric item without % and with no predicted scale.
def test_ratio_prediction_without_scale_matches_percent_gold():
    gold = question(22.12, "arithmetic", scale="percent")
    assert score(gold, 0.2212, "").em == 1.0
    assert score(gold, "0.2212", "").em == 1.0
    assert score(gold, 0.2212, "", mode="tatllm").em == 0.0


def test_ratio_alternative_is_not_tried_when_a_scale_is_predicted_or_items_are_many():
    gold = question(22.12, "arithmetic", scale="percent")
    assert score(gold, 0.2212, "thousand").em == 0.0
    assert score(question(["0.2212", "x"], "multi-span", scale="percent"), ["0.2212", "x"], "").em == 0.0


def test_ratio_alternative_keeps_the_maximum_em_first():
    gold = question(["0.22"], "span")
    # First candidate "0.2200" matches exactly; the unrounded "0.2212" would not.
    assert score(gold, 0.2212, "").em == 1.0


# Number parsing.
def test_first_word_must_be_a_number_and_second_only_a_scale_word():
    assert tatqa.is_number("$1,234")
    assert tatqa.is_number("1.5 million")
    assert not tatqa.is_number("1.5 apples")
    assert not tatqa.is_number("about 5")
    assert not tatqa.is_number("nan")


def test_value_is_first_match_times_scale_word():
    assert tatqa.to_number("1.5 million") == 1500000.0
    assert tatqa.to_number("$1,234.5") == 1234.5
    assert tatqa.to_number("3 thousand 7") == 3000


def test_parenthesised_negatives_official_versus_fixed_and_tatllm():
    assert tatqa.to_number("(1234.5)") == -1234.5
    assert tatqa.to_number("(1,234.5)") == 1234.5
    assert tatqa.to_number("(48.18%)") == 0.4818
    assert tatqa.to_number("(1,234.5)", "fixed") == -1234.5
    assert tatqa.to_number("(48.18%)", "fixed") == -0.4818
    assert tatqa.to_number("(48.18%)", "tatllm") == -0.4818
    assert tatqa.to_number("(1,234.5)", "tatllm") == 1234.5


def test_percent_after_digits_divides_by_100_and_result_has_4_decimals():
    assert tatqa.to_number("12%") == 0.12
    assert tatqa.to_number("1.234567") == 1.2346


# Tokens.
def test_normalisation_lowercases_strips_punctuation_rerenders_numbers_and_drops_articles():
    assert tatqa.normalize_answer("The Revenue, of a  company!") == "revenue of company"
    assert tatqa.normalize_answer("$1,234") == "1234"
    assert tatqa.normalize_answer("4.50") == "4.5"


def test_em_is_string_equality_and_f1_is_rounded_to_two_decimals():
    assert tatqa.string_em_f1("net sales", "Net sales.") == (1.0, 1.0)
    em, f1 = tatqa.string_em_f1("x b c", "b c d e")
    assert em == 0.0
    assert f1 == round(2 * (2 / 3) * (2 / 4) / ((2 / 3) + (2 / 4)), 2) == 0.57


def test_arithmetic_and_count_f1_equals_em():
    partial = score(question(["1.5 million dollars"], "span"), "1.5 million")
    assert partial.f1 > 0
    arithmetic = score(question("12.5", "arithmetic"), "12.50 dollars")
    assert arithmetic.em == 0.0
    assert arithmetic.f1 == 0.0
    count = score(question(3, "count"), "3")
    assert (count.em, count.f1) == (1.0, 1.0)


def test_articles_are_removed_before_comparing():
    assert tatqa.string_em_f1("a b c", "b c") == (1.0, 1.0)


def test_span_f1_is_not_zeroed_when_numbers_differ():
    result = score(question(["revenue grew 5 percent"], "span"), "revenue grew 6 percent")
    assert result.em == 0.0
    assert result.f1 == 0.75


def test_missing_prediction_and_official_int_zero_score_nothing():
    gold = question(0, "arithmetic")
    assert (score(gold, None, None).em, score(gold, None, None).f1) == (0.0, 0.0)
    assert score(gold, 0, "").em == 0.0
    assert score(gold, 0, "", mode="fixed").em == 1.0
    assert score(gold, 0, "", mode="tatllm").em == 1.0


def test_official_mode_refuses_mixed_lists_and_fixed_mode_scores_them():
    gold = question(["1", "a"], "multi-span")
    with pytest.raises(ValueError, match="q1"):
        score(gold, [1, "a"])
    assert score(gold, [1, "a"], mode="fixed").em == 1.0


# Scale accuracy and the scale option.
def test_scale_accuracy_counts_only_scored_questions_in_official_mode():
    gold = question(1.0, "arithmetic", scale="")
    assert score(gold, 2.0, "").is_scale_correct is True
    assert score(gold, 0, "").is_scale_correct is False
    assert score(gold, 0, "", mode="tatllm").is_scale_correct is True


def test_ignore_scale_drops_scale_on_both_sides_and_reports_no_scale_accuracy():
    gold = question(1.5, "arithmetic", scale="million")
    assert score(gold, 1.5, "", scale_mode="ignore").em == 1.0
    assert score(gold, 1.5, "", scale_mode="predicted").em == 0.0
    report = tatqa.score_dataset([{"questions": [gold]}], {"q1": [1.5, ""]}, scale_mode="ignore")
    assert report.scale_mode == "ignore"
    assert report.scale_accuracy is None


def test_tatllm_numeric_tolerance_accepts_close_arithmetic_answers_only_when_enabled():
    gold = question(1234.56, "arithmetic")
    assert score(gold, 1234.9, "", mode="tatllm").em == 0.0
    assert score(gold, 1234.9, "", mode="tatllm", numeric_tolerance=True).em == 1.0
    assert score(gold, 1300, "", mode="tatllm", numeric_tolerance=True).em == 0.0


def test_dataset_means_pivots_and_unknown_uids():
    documents = [
        {
            "questions": [
                question(["x"], uid="a", answer_from="text"),
                question(["y"], uid="b", answer_from="table"),
                question(2, "count", uid="c", answer_from="table"),
            ]
        }
    ]
    report = tatqa.score_dataset(documents, {"a": [["x"], ""], "c": [2, ""], "zzz": [["q"], ""]})
    assert report.count == 3
    assert report.em == pytest.approx(2 / 3)
    assert report.pivots["span"]["table"] == {"count": 1, "em": 0.0, "f1": 0.0}
    assert report.pivots["count"]["table"]["em"] == 1.0
    assert report.unknown_uids == ["zzz"]


@pytest.fixture(scope="module")
def tatqa_dev():
    data = shared_data_dir() / "tatqa"
    gold = json.loads((data / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))
    predictions = json.loads((data / "sample_prediction.json").read_text(encoding="utf-8"))
    return gold, predictions


def test_official_sample_prediction_reproduces_the_official_figures(tatqa_dev):
    gold, predictions = tatqa_dev
    report = tatqa.score_dataset(gold, predictions, mode="official")
    assert report.count == 1668
    assert f"{report.em * 100:.2f}" == "45.92"
    assert f"{report.f1 * 100:.2f}" == "58.88"
    assert f"{report.scale_accuracy * 100:.2f}" == "90.95"


def test_fixed_mode_differs_from_official_on_the_sample(tatqa_dev):
    gold, predictions = tatqa_dev
    official = tatqa.score_dataset(gold, predictions, mode="official")
    fixed = tatqa.score_dataset(gold, predictions, mode="fixed")
    changed = [a.uid for a, b in zip(official.questions, fixed.questions, strict=True) if a.em != b.em]
    assert changed


def test_tatllm_null_scale_empties_a_numeric_answer_as_tatemandf1_does():
    # TATEmAndF1: scale_to_num(None) raises in get_answer_str, whose except returns [""] → EM 0, F1 0.
    gold = question(2.5, "arithmetic", scale="")
    result = score(gold, "2.5", None, mode="tatllm")
    assert (result.em, result.f1, result.is_scale_correct) == (0.0, 0.0, False)
    assert score(gold, "2.5", "", mode="tatllm").em == 1.0
    # A percentage never reaches scale_to_num, and text items only test `if scale`.
    assert score(question(["12.5%"], "span"), "12.5%", None, mode="tatllm").em == 1.0
    assert score(question(["yes"], "span"), "Yes", None, mode="tatllm").em == 1.0
    # The official and fixed modes read a null scale as no scale.
    assert score(gold, "2.5", None).em == 1.0
