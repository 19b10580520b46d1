"""Answer extraction on realistic model outputs, per prompting method."""

from __future__ import annotations

import pytest

from curation.toolkit.extraction import (
    extract_answer,
    extract_program_answer,
    normalize_scale,
    parse_tatllm_steps,
    split_items,
    split_scale,
)

# --- CoT / CaR: "Reason: … Answer: …" (SciTaT appendix B.2) ---


def test_cot_takes_the_text_after_answer():
    output = (
        "Reason: Table 2 shows BERT-large reaches 84.3 F1 and BERT-base 81.1 F1, so the difference is "
        "84.3 - 81.1 = 3.2.\nAnswer: 3.2"
    )
    answer = extract_answer(output, method="cot")
    assert answer.items == ["3.2"]
    assert answer.is_parsed and answer.rule == "answer_marker"


def test_cot_answer_inline_after_the_reason():
    output = "Reason: The model with the lowest perplexity in Table 3 is GPT-2 medium. Answer: GPT-2 medium."
    assert extract_answer(output, method="cot").items == ["GPT-2 medium"]


def test_multiple_answers_are_separated_by_blank_lines():
    output = "Reason: The first question asks for the accuracy on SST-2, the second for MNLI.\nAnswer: 93.5%\n\n91.2%"
    answer = extract_answer(output, method="cot")
    assert answer.items == ["93.5%", "91.2%"]
    assert answer.scale == "percent"
    assert answer.values == ["93.5", "91.2"]


def test_markdown_bold_answer_marker_and_value():
    output = "**Reason:** Summing the three rows of Table 1 gives 12 + 15 + 9 = 36.\n\n**Answer:** **36**\n"
    assert extract_answer(output, method="cot").items == ["36"]


def test_small_model_that_continues_with_another_example_is_cut_at_the_next_section():
    output = (
        "Reason: The table says the F1 of our method is 78.4.\n"
        "Answer: 78.4\n"
        "Question: What is the F1 of the baseline?\n"
        "Reason: The baseline has 75.0.\n"
        "Answer: 75.0"
    )
    assert extract_answer(output, method="cot").items == ["78.4"]


def test_free_form_answer_keeps_its_sentence():
    output = (
        "Reason: Larger batch sizes improve accuracy until 256, then it drops.\n"
        "Answer: Accuracy increases with batch size up to 256 and decreases after that."
    )
    answer = extract_answer(output, method="cot")
    assert answer.items == ["Accuracy increases with batch size up to 256 and decreases after that."]


def test_answer_marker_containing_the_answer_is_sentence():
    output = "Reason: 0.45 / 0.30 = 1.5.\nAnswer: The answer is 1.5."
    assert extract_answer(output, method="cot").items == ["1.5"]


def test_final_answer_heading():
    output = "Let me compute.\n\n2019 revenue minus 2018 revenue is 4,200 - 3,900.\n\n### Final Answer:\n$300 million"
    answer = extract_answer(output, method="cot")
    assert answer.items == ["$300 million"]
    assert answer.scale == "million"
    assert answer.values == ["300"]


def test_cot_without_marker_falls_back_to_the_last_paragraph_and_says_so():
    output = "The table lists three datasets.\n\nThe largest one is WikiTQ with 22,033 questions."
    answer = extract_answer(output, method="cot")
    assert answer.items == ["The largest one is WikiTQ with 22,033 questions."]
    assert not answer.is_parsed and answer.rule == "last_paragraph"


def test_thinking_block_is_ignored():
    output = "<think>Answer: maybe 5? No, recount.</think>\nAnswer: 6"
    assert extract_answer(output, method="cot").items == ["6"]


# --- "The answer is …" ---


def test_the_answer_is_sentence():
    output = (
        "First, find the values for 2019 and 2018: 1,496 and 1,257. The change is 1,496 - 1,257 = 239. "
        "Therefore, the answer is 239."
    )
    assert extract_answer(output, method="cot").items == ["239"]


def test_the_answer_is_with_a_trailing_clause():
    output = "The answer is 19.02%, which is the percentage change in revenue between 2018 and 2019."
    answer = extract_answer(output, method="direct")
    assert answer.items == ["19.02%"]
    assert answer.scale == "percent"


def test_the_last_answer_is_sentence_wins():
    output = "At first glance the answer is 12. Rechecking the column, the final answer is 14."
    assert extract_answer(output, method="cot").items == ["14"]


def test_boxed_latex_answer():
    output = "So the ratio is $\\frac{3}{4}$, i.e. \\boxed{0.75}"
    assert extract_answer(output, method="cot").items == ["0.75"]


# --- Direct QA ---


def test_direct_answer_is_the_whole_output_cleaned():
    answer = extract_answer("  **42.7** \n", method="direct")
    assert answer.items == ["42.7"] and answer.rule == "whole_output" and answer.is_parsed


def test_direct_bullet_list_gives_one_item_per_bullet():
    output = "- Precision\n- Recall\n- F1 score"
    assert extract_answer(output, method="direct").items == ["Precision", "Recall", "F1 score"]


def test_numbered_list_after_answer_marker():
    output = "Answer:\n1. BERT\n2. RoBERTa\n3. XLNet"
    assert extract_answer(output, method="direct").items == ["BERT", "RoBERTa", "XLNet"]


def test_code_fence_and_json_answers():
    output = 'Here is the result:\n```json\n{"answer": ["2019", "2018"], "scale": ""}\n```'
    answer = extract_answer(output, method="direct")
    assert answer.items == ["2019", "2018"] and answer.rule == "json"
    fenced = extract_answer("Answer:\n```\n1.35\n```", method="direct")
    assert fenced.items == ["1.35"]


def test_json_constrained_output_with_scale():
    answer = extract_answer('{"answer": 12.5, "scale": "million"}', method="tool")
    assert answer.items == ["12.5"] and answer.scale == "million"


def test_units_stay_in_the_item_but_not_in_the_scale():
    answer = extract_answer("Answer: 35 ms", method="direct")
    assert answer.items == ["35 ms"]
    assert answer.scale == ""
    assert answer.values == ["35 ms"]


def test_scale_words_in_a_sentence_answer():
    answer = extract_answer("The answer is 2.1 billion dollars.", method="direct")
    assert answer.items == ["2.1 billion dollars"]
    assert answer.scale == "billion"


def test_inline_code_is_unwrapped():
    assert extract_answer("Answer: `ResNet-50`", method="direct").items == ["ResNet-50"]


# --- scale helpers ---


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("12.5%", ("12.5", "percent")),
        ("$1,234.5 million", ("1234.5", "million")),
        ("(3,400)", ("-3400", "")),
        ("-0.25", ("-0.25", "")),
        ("7 percent", ("7", "percent")),
        ("USD 3bn", ("3", "billion")),
        ("15k", ("15", "thousand")),
        ("2,000 thousand", ("2000", "thousand")),
        ("Table 3", ("Table 3", "")),
        ("35 ms", ("35 ms", "")),
    ],
)
def test_split_scale(item, expected):
    assert split_scale(item) == expected


def test_normalize_scale():
    assert normalize_scale("Millions") == "million"
    assert normalize_scale("%") == "percent"
    assert normalize_scale("none") == ""
    assert normalize_scale("**thousand**") == "thousand"


def test_split_items_reads_list_literals():
    assert split_items('["a", "b"]') == ["a", "b"]
    assert split_items("['2019', '2018']") == ["2019", "2018"]


# --- PoT: the program's `ans` ---


def test_program_answer_from_numbers_and_lists():
    assert extract_program_answer(0.1 + 0.2).items == ["0.3"]
    assert extract_program_answer(36.0).items == ["36"]
    assert extract_program_answer([1.5, "BERT"]).items == ["1.5", "BERT"]
    assert extract_program_answer("0.30000000000000004").items == ["0.3"]
    assert extract_program_answer("[3, 4]").items == ["3", "4"]


def test_program_answer_from_a_calculator_sentence():
    sentence = "The accuracy of BERT is 84.3% and of RoBERTa is 87.1%, a difference of 2.8%."
    answer = extract_program_answer(sentence)
    assert answer.items == [sentence]
    assert answer.scale == "percent"


def test_pot_method_uses_program_output():
    answer = extract_answer("12.345", method="pot")
    assert answer.items == ["12.345"] and answer.rule == "program_output"


def test_empty_program_output_is_not_parsed():
    assert not extract_program_answer("").is_parsed
    assert not extract_program_answer(None).is_parsed


# --- TAT-LLM step table ---

TATLLM_NAMED = """\
| step | output |
| --- | --- |
| 1 | Arithmetic |
| 2 | Revenue 2019: 5,000; Revenue 2018: 4,000 |
| 3 | Revenue grew because of new contracts |
| 4 | (5,000 - 4,000) / 4,000 * 100 |
| 5 | 25 |
| 6 | percent |
"""

TATLLM_LABELLED = """\
| Step | Description | Output |
|------|-------------|--------|
| 1 | Answer type | Multiple spans |
| 2 | Evidence from table | 2019, 2018 |
| 3 | Evidence from text | The company expanded in 2019 and 2018 |
| 4 | Equation | N.A. |
| 5 | Answer | "2019" # "2018" |
| 6 | Scale | none |
"""


def test_tatllm_numbered_six_step_table():
    steps = parse_tatllm_steps(TATLLM_NAMED)
    assert steps.answer_type == "Arithmetic"
    assert steps.equation == "(5,000 - 4,000) / 4,000 * 100"
    assert steps.evidence_text == "Revenue grew because of new contracts"
    answer = extract_answer(TATLLM_NAMED, method="tatllm")
    assert answer.items == ["25"] and answer.scale == "percent" and answer.rule == "tatllm_table"


def test_tatllm_labelled_table_with_multiple_spans():
    steps = parse_tatllm_steps(TATLLM_LABELLED)
    assert steps.evidence_table == "2019, 2018"
    assert steps.evidence_text == "The company expanded in 2019 and 2018"
    answer = extract_answer(TATLLM_LABELLED, method="tatllm")
    assert answer.items == ["2019", "2018"]
    assert answer.scale == ""


def test_tatllm_two_column_named_rows_and_closing_sentence():
    output = (
        "| Answer type | Span |\n| Evidence | Total assets were $12.3 million |\n"
        "| Equation | N.A. |\n\nThus, the answer is 12.3 and the scale is million."
    )
    steps = parse_tatllm_steps(output)
    assert steps.answer_type == "Span" and steps.equation == "N.A."
    answer = extract_answer(output, method="tatllm")
    assert answer.items == ["12.3"] and answer.scale == "million"


def test_tatllm_without_a_table_falls_back_to_generic_rules():
    answer = extract_answer("The answer is 42.", method="tatllm")
    assert answer.items == ["42"] and answer.rule == "answer_is"


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown method"):
        extract_answer("Answer: 1", method="magic")
