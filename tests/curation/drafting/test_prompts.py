"""Prompt building and parsing of messy small-model output (pure functions, no database)."""

from __future__ import annotations

import pytest

from curation.drafting.prompts import (
    DEFAULT_ANSWER_TEMPLATE,
    DEFAULT_QUESTION_TEMPLATE,
    ContextData,
    answer_messages,
    content_hash,
    parse_header_phrases,
    parse_question,
    parse_rationale_answer,
    question_messages,
    render,
    render_context,
    split_examples,
)
from curation.table_shape import shape_from_rows
from curation.taxonomy import DEFAULT_TAXONOMY

CONTEXT = ContextData(
    tables=[
        shape_from_rows(
            [["Model", "Acc"], ["A", "87.3"], ["B", "81.0"]], label="tab:main", caption="Accuracy by model.", number="1"
        )
    ],
    paragraphs=["Table 1 shows that A beats B."],
    reasoning_type="Causal Analysis",
    reasoning_type_code="causal_analysis",
    reasoning_description="Explain cause and effect behind the results.",
    parent_code="data_analysis",
)


def test_default_question_template_has_three_examples_for_every_leaf_type():
    leaf_codes = {sub[0] for _, _, _, subs in DEFAULT_TAXONOMY for sub in subs}
    assert leaf_codes <= set(split_examples(DEFAULT_QUESTION_TEMPLATE)[1])
    prompt = question_messages(DEFAULT_QUESTION_TEMPLATE, CONTEXT)[0]["content"]
    for code in leaf_codes:
        context = ContextData(tables=CONTEXT.tables, paragraphs=[], reasoning_type_code=code)
        text = question_messages(DEFAULT_QUESTION_TEMPLATE, context)[0]["content"]
        examples = text.split("Examples of questions of this type")[1].split("\nContext:\n")[0]
        assert examples.count("Question:") == 3, code
    assert "=== examples" not in prompt


def test_every_default_example_question_comes_after_its_own_table():
    # SciTaT Table 8 shows the model table -> paragraph -> question; a bare question teaches it nothing of the context.
    _, blocks = split_examples(DEFAULT_QUESTION_TEMPLATE)
    for code, block in blocks.items():
        examples = [example.strip() for example in block.split("\n\n")]
        assert len(examples) == 3, code
        for example in examples:
            lines = example.splitlines()
            assert lines[-1].startswith("Question: "), (code, example)
            assert lines[0].startswith("Table ") and "| " in lines[0], (code, example)
            assert sum(line.startswith("Question:") for line in lines) == 1, (code, example)
    prompt = question_messages(DEFAULT_QUESTION_TEMPLATE, CONTEXT)[0]["content"]
    assert "Paragraph: Without attention the decoder must compress" in prompt


def test_question_prompt_shows_context_type_and_text_requirement():
    prompt = question_messages(DEFAULT_QUESTION_TEMPLATE, CONTEXT)[0]["content"]
    assert 'question description "Causal Analysis"' in prompt
    assert "Explain cause and effect" in prompt
    assert "| A | 87.3 |" in prompt and "Table 1 (tab:main): Accuracy by model." in prompt
    assert "Paragraph: Table 1 shows that A beats B." in prompt
    assert "cannot be answered from the tables alone" in prompt
    assert "Why does removing the attention layer" in prompt  # a causal example, not a counting one
    # SciTaT Table 8: every type needs the paragraph too, except those that cannot (table look-up, tabulation).
    ranking = ContextData(tables=CONTEXT.tables, paragraphs=[], reasoning_type_code="ranking")
    assert (
        "cannot be answered from the tables alone"
        in question_messages(DEFAULT_QUESTION_TEMPLATE, ranking)[0]["content"]
    )
    lookup = ContextData(tables=CONTEXT.tables, paragraphs=[], reasoning_type_code="table_lookup")
    lookup_prompt = question_messages(DEFAULT_QUESTION_TEMPLATE, lookup)[0]["content"]
    assert "cannot be answered from the tables alone" not in lookup_prompt
    assert "a question over the tables alone is fine" in lookup_prompt
    assert "more reasoning and calculation" in lookup_prompt and "Do not generate multiple questions" in lookup_prompt


def test_answer_prompt_ends_with_reason_label_and_holds_the_question():
    prompt = answer_messages(DEFAULT_ANSWER_TEMPLATE, CONTEXT, "Why does A beat B?")[0]["content"]
    assert prompt.endswith("Reason:")
    assert "Question: Why does A beat B?" in prompt


def test_render_leaves_unknown_placeholders_and_braces_alone():
    assert render("{{a}} {b} {{ unknown }} {{a }}", {"a": "x"}) == "x {b} {{ unknown }} x"


def test_content_hash_ignores_line_ending_style():
    assert content_hash("a\r\nb") == content_hash("a\nb") != content_hash("a\nc")


def test_long_context_is_cut_to_the_budget():
    big = ContextData(
        tables=[shape_from_rows([[str(i), "x" * 50] for i in range(500)], header_rows=0, label="t")],
        paragraphs=["p" * 9000],
    )
    content = question_messages("{{context}}", big, max_chars=3000)[0]["content"]
    # Cut at the budget, the cut shown, and what is kept is the beginning of the whole rendering.
    assert len(content) == 3000
    assert content.endswith("…")
    assert content[:-1] == render_context(big, max_chars=10**6)[:2999]


@pytest.mark.parametrize(
    ("output", "question"),
    [
        (
            "Question: What is the difference in accuracy between A and B?",
            "What is the difference in accuracy between A and B?",
        ),
        (
            "Sure! Here is a question:\n\n**Question:** Which model has the highest Acc?\nAnswer: A",
            "Which model has the highest Acc?",
        ),
        ("1. What is the accuracy of A? 2. What is the accuracy of B?", "What is the accuracy of A?"),
        ("Here's a question based on the context: How much better is A than B?", "How much better is A than B?"),
        ('```\nQuestion: "Which is better, A or B?"\n```', "Which is better, A or B?"),
        ("Q: By how many points does A beat B?\nA: 6.3", "By how many points does A beat B?"),
        ("<think>hmm</think>\n### Question 1:\nWhy is A better than B?", "Why is A better than B?"),
        (
            "Question: Build a table of the models and their accuracy.",
            "Build a table of the models and their accuracy.",
        ),
    ],
)
def test_parse_question_finds_the_question_in_messy_output(output, question):
    parsed = parse_question(output)
    assert parsed.is_parsed and parsed.question == question


def test_parse_question_counts_extra_questions():
    parsed = parse_question("question 1: what is A's accuracy?\nquestion 2: what is B's accuracy?")
    assert parsed.question == "what is A's accuracy?" and parsed.extra_questions == 1


@pytest.mark.parametrize("output", ["The table shows results for models.", "", "   \n"])
def test_parse_question_flags_output_without_a_question(output):
    parsed = parse_question(output)
    assert not parsed.is_parsed and parsed.error
    assert parsed.question == output.strip()


@pytest.mark.parametrize(
    ("output", "rationale", "answer"),
    [
        (
            " A scores 87.3 and B 81.0. 87.3 - 81.0 = 6.3.\nAnswer: 6.3",
            "A scores 87.3 and B 81.0. 87.3 - 81.0 = 6.3.",
            ["6.3"],
        ),
        (
            "Reason: The difference is 6.3.\n**Answer:** 6.3 points\n\nQuestion: What is X?\nReason: b\nAnswer: 5",
            "The difference is 6.3.",
            ["6.3 points"],
        ),
        ("Reasoning: list them\nAnswer:\n- A\n- B", "list them", ["A", "B"]),
        ("Reason: compare\nFinal Answer: 12.5%", "compare", ["12.5%"]),
        # Reason and Answer on one line: the answer label stays out of the rationale.
        ("Reason: 74.0 - 71.5 = 2.5. Answer: 2.5", "74.0 - 71.5 = 2.5.", ["2.5"]),
        # Items one per line are separate items.
        ("Reason: the two lowest\nAnswer: S2\nS3", "the two lowest", ["S2", "S3"]),
        (
            "A is better than B because 87.3 > 81.0. So the answer is A.",
            "A is better than B because 87.3 > 81.0. So the answer is A.",
            ["A"],
        ),
    ],
)
def test_parse_rationale_answer_on_messy_output(output, rationale, answer):
    parsed = parse_rationale_answer(output)
    assert parsed.is_parsed
    assert parsed.rationale == rationale and parsed.answer == answer


def test_parse_rationale_answer_keeps_raw_reasoning_when_no_answer():
    parsed = parse_rationale_answer("I don't know what the table means")
    assert not parsed.is_parsed and parsed.answer == []
    assert parsed.rationale == "I don't know what the table means"


def test_parse_header_phrases_skips_chatter_and_duplicates():
    output = "Here are three phrases:\n1. accuracy\n2. Accuracy.\n3. test accuracy\n4. acc"
    assert parse_header_phrases(output, "Acc") == ["accuracy", "test accuracy", "acc"]
    assert parse_header_phrases("", "Acc") == ["Acc"]


def test_a_header_paraphrase_that_is_a_question_a_sentence_or_off_the_header_is_dropped():
    """What a small model said of "BLEU (en-yo)" on a walk: a question and a sentence went into every question
    drafted. A paraphrase names the header (a word of it, or its initials), or the header stands."""
    output = (
        "What is the What is the meaning of this?\n"
        "Bleu (en-yo) is a game of the upper echelon\n"
        "BLEU score from English to Yoruba"
    )
    assert parse_header_phrases(output, "BLEU (en-yo)") == ["BLEU score from English to Yoruba"]
    assert parse_header_phrases("accuracy on the development set", "Dev") == ["accuracy on the development set"]
    assert parse_header_phrases("exact match", "EM") == ["exact match"]
    assert parse_header_phrases("the weather today\nWhich column?", "F1") == ["F1"]
