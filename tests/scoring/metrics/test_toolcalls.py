"""Tool-call precision/recall post-processing rules of the meta-level reasoning paper §5, and the error rate."""

from __future__ import annotations

import pytest

from scoring.metrics.toolcalls import ToolCall, score_tool_calls

ESSENTIALS = [
    ToolCall("search_for_indicator_names", {"keywords": "school enrolment"}, result="School enrollment, secondary"),
    ToolCall("retrieve_value", {"country_code": "FRA", "indicator_code": "SE.SEC", "year": 2017}),
    ToolCall("add", {"values": [1, 2, 3]}),
    ToolCall("greater_than", {"value_a": 5, "value_b": 3}),
]


def test_less_than_is_normalised_to_greater_than_with_arguments_swapped():
    result = score_tool_calls([ToolCall("less_than", {"value_a": 3, "value_b": 5})], ESSENTIALS)
    assert result.true_positives == 1
    wrong_way = score_tool_calls([ToolCall("less_than", {"value_a": 5, "value_b": 3})], ESSENTIALS)
    assert wrong_way.true_positives == 0


def test_search_call_whose_result_contains_the_right_name_is_a_true_positive():
    found = ToolCall("search_for_indicator_names", {"keywords": "enrol"}, result="[School enrollment, secondary; X]")
    missed = ToolCall("search_for_indicator_names", {"keywords": "school enrolment"}, result="[Something else]")
    assert score_tool_calls([found], ESSENTIALS).true_positives == 1
    assert score_tool_calls([missed], ESSENTIALS).true_positives == 0


def test_list_values_are_right_as_a_multiset():
    assert score_tool_calls([ToolCall("add", {"values": [3, 1, 2]})], ESSENTIALS).true_positives == 1
    assert score_tool_calls([ToolCall("add", {"values": ["3", 1.0, 2]})], ESSENTIALS).true_positives == 1
    assert score_tool_calls([ToolCall("add", {"values": [1, 2, 3, 3]})], ESSENTIALS).true_positives == 0


def test_repeated_identical_call_counts_once_as_true_and_the_rest_as_false():
    call = ToolCall("retrieve_value", {"country_code": "FRA", "indicator_code": "SE.SEC", "year": 2017})
    result = score_tool_calls([call, call, call], ESSENTIALS)
    assert result.true_positives == 1
    assert result.precision == pytest.approx(1 / 3)
    assert result.recall == pytest.approx(1 / 4)


def test_think_and_final_answer_are_excluded():
    calls = [ToolCall("think", {"text": "plan"}), ToolCall("add", {"values": [1, 2, 3]}), ToolCall("final_answer", {})]
    result = score_tool_calls(calls, ESSENTIALS)
    assert result.scored_calls == 1
    assert result.precision == 1.0


def test_an_output_with_a_failing_call_counts_as_an_error_and_its_call_lowers_precision():
    good = [ToolCall("add", {"values": [1, 2, 3]})]
    failing = [ToolCall("retrieve_value", {"indicator_code": "BAD"}, is_error=True), *good]
    assert not score_tool_calls(good, ESSENTIALS).has_error
    scored = score_tool_calls(failing, ESSENTIALS)
    assert scored.has_error
    assert scored.precision == pytest.approx(0.5)
    assert scored.recall == pytest.approx(0.25)
