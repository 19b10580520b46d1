"""FinQA execution and program accuracy rules from issue 4, and the gold-program regression on dev_200."""

from __future__ import annotations

import json

import pytest

from scoring.metrics import finqa
from tests.scoring.metrics.shared_data import shared_data_dir

TABLE = [
    ["", "2019", "2018"],
    ["revenue", "$ 1,200", "$ 1,000 ( restated )"],
    ["costs", "300", "n/a"],
]


def tokens(program: str) -> list[str]:
    return finqa.program_tokenization(program)


def test_tokenization_groups_four_tokens_per_step_and_ends_with_eof():
    assert tokens("divide(637, const_5)") == ["divide(", "637", "const_5", ")", "EOF"]


def test_final_token_is_dropped_whatever_it_is():
    assert finqa.eval_program(["add(", "1", "2", ")", "EOF"], []) == (0, 3.0)
    # Without a trailing EOF the closing bracket is dropped: no step runs and the result is "n/a".
    assert finqa.eval_program(["add(", "1", "2", ")"], []) == (0, "n/a")


def test_arguments_numbers_commas_percent_constants_and_step_references():
    assert finqa.eval_program(tokens("add(1,000, 5%)"), [])[1] == 1000.05
    assert finqa.eval_program(tokens("multiply(const_m1, const_100)"), [])[1] == -100.0
    assert finqa.eval_program(tokens("subtract(10, 4), divide(#0, 3)"), [])[1] == 2.0


def test_table_operations_look_up_row_by_exact_first_cell_strip_dollar_and_cut_at_parenthesis():
    assert finqa.eval_program(tokens("table_max(revenue, none)"), TABLE) == (0, 1200.0)
    assert finqa.eval_program(tokens("table_average(revenue, none)"), TABLE) == (0, 1100.0)
    assert finqa.eval_program(tokens("table_sum(Revenue, none)"), TABLE)[0] == 1
    assert finqa.eval_program(tokens("table_min(costs, none)"), TABLE)[0] == 1


def test_greater_yields_yes_or_no():
    assert finqa.eval_program(tokens("greater(5, 3)"), []) == (0, "yes")
    assert finqa.eval_program(tokens("greater(2, 3)"), []) == (0, "no")


def test_result_is_rounded_to_five_decimals_and_must_equal_exe_ans():
    assert finqa.eval_program(tokens("divide(1, 3)"), [])[1] == 0.33333
    record = {"id": "x", "table": [], "qa": {"program": "divide(1, 3)", "exe_ans": 0.33333}}
    assert finqa.score_question(record, tokens("divide(1, 3)")).exe_correct
    record["qa"]["exe_ans"] = 0.3333
    assert not finqa.score_question(record, tokens("divide(1, 3)")).exe_correct


def test_invalid_programs_are_wrong():
    assert finqa.eval_program(["plus(", "1", "2", ")", "EOF"], [])[0] == 1
    assert finqa.eval_program(tokens("divide(1, 0)"), [])[0] == 1
    assert finqa.eval_program(tokens("add(foo, 1)"), [])[0] == 1
    assert finqa.eval_program(tokens("add(#3, 1)"), [])[0] == 1


def test_program_accuracy_uses_symbolic_equivalence():
    gold = tokens("add(a, b), multiply(#0, c)")
    assert finqa.equal_program(gold, tokens("add(b, a), multiply(c, #0)"))
    assert not finqa.equal_program(gold, tokens("add(a, b), divide(#0, c)"))
    # An argument absent from the gold program has no symbol, so the program is not equal.
    assert not finqa.equal_program(gold, tokens("add(a, d), multiply(#0, c)"))


def test_official_accuracy_divides_by_predictions_and_over_gold_counts_missing_as_wrong():
    records = [
        {"id": "a", "table": [], "qa": {"program": "add(1, 2)", "exe_ans": 3.0}},
        {"id": "b", "table": [], "qa": {"program": "add(2, 2)", "exe_ans": 4.0}},
    ]
    report = finqa.score_dataset(records, {"a": tokens("add(2, 1)")})
    # evaluate.py: exe_correct / len(predictions) — the one prediction is right.
    assert report.execution_accuracy == 1.0 and report.headline == 1.0
    assert report.execution_accuracy_over_gold == 0.5
    assert report.program_accuracy_over_gold == 0.5
    assert report.official_failure is None and report.execution_accuracy_over_known is None
    # An id the gold lacks stops evaluate.py: no official figure, ours over the known ids apart.
    stopped = finqa.score_dataset(records, {"a": tokens("add(2, 1)"), "zzz": tokens("add(1, 1)")})
    assert stopped.execution_accuracy is None and stopped.headline is None
    assert stopped.execution_accuracy_over_known == 1.0 and stopped.unknown_uids == ["zzz"]
    assert "KeyError at prediction 2 of 2 (id 'zzz'" in (stopped.official_failure or "")
    fixed = finqa.score_dataset(records, {"a": tokens("add(2, 1)")}, mode="fixed")
    assert fixed.headline == 0.5


def test_a_duplicated_prediction_is_scored_twice_in_official_mode_and_reported():
    records = [
        {"id": f"q{i}", "table": [], "qa": {"program": f"add({i}, 1)", "exe_ans": float(i + 1)}} for i in range(10)
    ]
    entries = [(f"q{i}", tokens(f"add({i}, 1)")) for i in range(9)]
    entries += [("q9", tokens("add(9, 2)")), ("q0", tokens("add(0, 1)"))]
    report = finqa.score_dataset(records, entries)
    assert (report.prediction_count, report.execution_accuracy) == (11, 10 / 11)
    assert report.duplicate_uids == ["q0"]
    assert len(report.questions) == 11
    fixed = finqa.score_dataset(records, entries, mode="fixed")
    assert fixed.headline == 9 / 10
    assert len(fixed.questions) == 10


def test_numeric_answer_accuracy_uses_the_stated_tolerance():
    assert finqa.numeric_answer_correct("127.4", 127.4)
    assert finqa.numeric_answer_correct(127.0, 127.4)
    assert not finqa.numeric_answer_correct(120.0, 127.4)
    assert not finqa.numeric_answer_correct(127.0, 127.4, relative_tolerance=1e-4)
    assert finqa.numeric_answer_correct("Yes", "yes")


def test_gold_programs_of_dev_200_execute_to_exe_ans():
    records = json.loads((shared_data_dir() / "finqa" / "finqa_dev_200.json").read_text(encoding="utf-8"))
    predictions = {record["id"]: tokens(record["qa"]["program"]) for record in records}
    report = finqa.score_dataset(records, predictions)
    assert report.count == 200
    assert report.execution_accuracy == 1.0
    assert report.program_accuracy == 1.0


@pytest.mark.parametrize("program", ["table_max(#0, none)"])
def test_table_operation_on_a_step_reference_without_earlier_row_is_invalid(program):
    assert finqa.eval_program(tokens(program), TABLE)[0] == 1


def test_a_question_without_a_gold_program_scores_0_and_names_where_evaluate_py_stops():
    # A span, multi-span or count answer has no program: evaluate.py stops with an IndexError scoring such a gold
    # against itself (an empty prediction); it used to stop this scorer the same way.
    records = [
        {"id": "a", "table": [], "qa": {"program": "add(1, 2)", "exe_ans": 3.0}},
        {"id": "b", "table": [], "qa": {"program": "", "exe_ans": ""}},
    ]
    own = [("a", tokens("add(1, 2)")), ("b", tokens(""))]
    assert finqa.score_question(records[1], tokens("")) == finqa.FinqaQuestionScore(
        uid="b", exe_correct=False, prog_correct=False, official_stop="IndexError"
    )
    report = finqa.score_dataset(records, own)
    assert report.execution_accuracy is None and report.program_accuracy is None
    assert "stops with an IndexError at prediction 2 of 2 (id 'b': its gold program is empty)" in (
        report.official_failure or ""
    )
    assert (report.execution_accuracy_over_known, report.program_accuracy_over_known) == (0.5, 0.5)
    fixed = finqa.score_dataset(records, own, mode="fixed")
    assert (fixed.headline, fixed.program_accuracy_over_gold) == (0.5, 0.5)
    # An unreadable gold program is named the same way; a gold program evaluate.py can read never stops it.
    records[1]["qa"]["program"] = "add(1)"
    assert "(id 'b': its gold program 'add(1)' cannot be read)" in (
        finqa.score_dataset(records, own).official_failure or ""
    )


@pytest.mark.parametrize("predicted", ["", "add(1", "add(1)", "plus(1, 2)", "add(#4, 1)"])
def test_an_empty_or_unreadable_prediction_scores_0_against_a_gold_program(predicted):
    record = {"id": "a", "table": [], "qa": {"program": "add(1, 2)", "exe_ans": 3.0}}
    score = finqa.score_question(record, tokens(predicted) if predicted else [])
    assert (score.exe_correct, score.prog_correct, score.official_stop) == (False, False, None)
    assert finqa.score_dataset([record], [("a", tokens(predicted))]).execution_accuracy == 0.0
