"""SciTaT table 6's CaR ablations as methods (Calculator only; Reversing) and the `official` answer extraction of
SciTaT's released scripts, over a scripted chat and the real sandbox."""

from __future__ import annotations

from curation.toolkit.extraction import extract_answer, extract_answer_official
from scoring.methods import METHODS, run_method, templates_for
from tests.scoring.methods.test_methods import CONTEXT, ScriptedChat, sandbox, settings_for


def test_calculator_only_answers_with_the_programs_sentence():
    chat = ScriptedChat("```python\nans = f'Total sales grew from 1202.9 to 1496.5, by {1496.5 - 1202.9:.1f}.'\n```")
    out = run_method("calculator", question="By how much?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("calculator"))  # fmt: skip
    assert out.requests == 1 and set(templates_for("calculator")) == {"calculator"}
    assert out.answer == ["Total sales grew from 1202.9 to 1496.5, by 293.6."]
    assert "complete sentence" in chat.calls[0]["messages"][0]["content"]


def test_reversing_runs_the_reasoner_first_and_the_calculator_checks_it():
    chat = ScriptedChat(
        "Reason: 1496.5 - 1202.9 is 293.5.\nAnswer: 293.5",
        "```python\nans = round(1496.5 - 1202.9, 1)\n```",
    )
    out = run_method("reversing", question="By how much?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("reversing"))  # fmt: skip
    assert out.requests == 2
    reasoner_prompt, calculator_prompt = (call["messages"][0]["content"] for call in chat.calls)
    assert 'Represent your answer with: "Reason:' in reasoner_prompt  # the Reasoner alone is the CoT prompt
    assert "Tips:\nReason: 1496.5 - 1202.9 is 293.5.\nAnswer: 293.5" in calculator_prompt
    assert "correct any numerical errors" in calculator_prompt
    assert out.stages["reasoner"]["tips"].endswith("Answer: 293.5")
    assert out.answer == ["293.6"]  # the corrected number, from the program


def test_reversing_with_a_failing_calculator_has_no_answer():
    chat = ScriptedChat("Reason: r\nAnswer: 3", "```python\nans = 1 / 0\n```")
    out = run_method("reversing", question="?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("reversing"))  # fmt: skip
    assert out.rule == "program_failed" and out.answer == []


def test_ablations_are_methods_beside_car():
    assert {"car", "calculator", "reversing", "cot"} <= set(METHODS)


def test_official_direct_extraction_keeps_the_whole_output():
    text = "The answer is 293.6."
    assert extract_answer(text, method="direct").items == ["293.6"]
    assert extract_answer_official(text, method="direct").items == ["The answer is 293.6."]
    assert extract_answer_official("A\n\nB", method="direct").items == ["A", "B"]


def test_official_cot_extraction_follows_the_scripts():
    text = "Reason: look.\nAnswer: **293.6**\n\n<BERT> and <RoBERTa>"
    assert extract_answer_official(text, method="cot").items == ["**293.6**", "BERT,RoBERTa"]
    assert extract_answer(text, method="cot").items[0] == "293.6"
    fenced = "Reason: x\nAnswer:\n```json\n[1, 2]\n```"
    assert extract_answer_official(fenced, method="cot").items == ["[1, 2]"]


def test_official_program_extraction_stringifies_ans_and_marks_errors():
    chat = ScriptedChat("```python\nans = ['BERT', 'RoBERTa']\n```", "```python\nans = 1 / 0\n```")
    settings = settings_for("pot", extraction="official")
    listed = run_method("pot", question="?", context=CONTEXT, chat=chat, run_program=sandbox, settings=settings)
    failed = run_method("pot", question="?", context=CONTEXT, chat=chat, run_program=sandbox, settings=settings)
    assert listed.answer == ["['BERT', 'RoBERTa']"]
    assert failed.answer == ["error"] and failed.rule == "program_failed"


def test_official_mode_reaches_the_methods():
    chat = ScriptedChat("The answer is 293.6.")
    out = run_method("direct", question="?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("direct", extraction="official"))  # fmt: skip
    assert out.answer == ["The answer is 293.6."] and out.rule == "official_direct"
