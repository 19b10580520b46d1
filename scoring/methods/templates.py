# ruff: noqa: E501  (the prompts keep the paper's line breaks)
"""Default prompt templates, written after the structure of SciTaT appendix B.2 (tables 9–10) and TAT-LLM's step table.

Placeholders are `{Table}`, `{Paragraph}`, `{Question}` and `{Tips}`; they are replaced literally (not with
str.format), so braces in tables, code or LaTeX never break a prompt.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

from curation.toolkit.extraction import ABSTENTION_INSTRUCTION

DIRECT = """Based on the information in the Table and Paragraph, you should answer the question.
If there are multiple questions, you need to answer them one by one, and the answers are separated by "\\n\\n".
Table (including its label, caption, and content):
{Table}
Paragraph:
{Paragraph}
Please answer the question "{Question}"."""

COT = """Based on the information in the Table and Paragraph, you should answer the question.
Represent your answer with: "Reason: <Your Reason> Answer: <Your Answer>".
If there are multiple questions, you need to answer them one by one, and the answers are separated by "\\n\\n".
Table (including its label, caption and content):
{Table}
Paragraph:
{Paragraph}
Please answer the question "{Question}"."""

POT = """Table (including its label, caption and content):
{Table}
Paragraph:
{Paragraph}
Read the above Table and Paragraph, and then write code to answer the question "{Question}".
Please directly use the information such as numbers in tables and paragraphs, do not define tables and then process them.
You must return the answer `ans = ` at the end of the code instead of `print`.
Attention that if there are multiple questions, you need to answer them one by one, and the answers are separated by "\\n\\n"."""

CALCULATOR = """Table (including its label, caption, and content):
{Table}
Paragraph:
{Paragraph}
Read the above Table and Paragraph, and then write code to answer the question "{Question}".
Please directly use the information such as numbers in tables and paragraphs, do not define tables and then process them.
You must return the answer `ans = ` at the end of the code instead of `print`.
You cannot return just one or a few numbers or words, you must return a complete sentence."""

REASONER = """Based on the Table and Paragraph with the Tips, you should answer the question.
Please determine whether the tips are correct, use the tips reasonably in Reason, and organize the Answer into an appropriate form.
Represent your answer with: "Reason: <Your Reason> Answer: <Your Answer>".
Attention that if there are multiple questions, you need to answer them one by one, and the answers are separated by "\\n\\n".
Table (including its label, caption, and content):
{Table}
Paragraph:
{Paragraph}
Tips:
{Tips}
Please answer the question "{Question}"."""

# CaR reversed (SciTaT §4.3): the Calculator runs after the Reasoner and verifies and corrects its numbers.
CALCULATOR_CHECK = """Table (including its label, caption, and content):
{Table}
Paragraph:
{Paragraph}
Tips:
{Tips}
Read the above Table, Paragraph and Tips, and then write code to answer the question "{Question}".
The Tips are another solver's reasoning and answer: verify them and correct any numerical errors.
Please directly use the information such as numbers in tables and paragraphs, do not define tables and then process them.
You must return the final answer `ans = ` at the end of the code instead of `print`.
Attention that if there are multiple questions, you need to answer them one by one, and the answers are separated by "\n\n"."""

TATLLM = """Below is an instruction that describes a question answering task over a table and text.
Given a table and a list of texts, answer the question by filling in the following table step by step.
| step | output |
| 1 | {question type: span, multi-span, arithmetic or count} |
| 2 | {evidence from the table} |
| 3 | {evidence from the text} |
| 4 | {equation, only for arithmetic questions, e.g. (1496.5 - 1202.9) / 1202.9 * 100} |
| 5 | {answer; several spans separated by #} |
| 6 | {scale: none, percent, thousand, million or billion} |
Table:
{Table}
Text:
{Paragraph}
Question: {Question}
Fill in the table with six rows and nothing else."""

TOOL_SYSTEM = """You answer questions about scientific or financial tables and text with tools.
The question cannot be answered in a single step: make a short step-by-step plan, then carry it out with tool calls,
using the result of each step to inform the next. Start with `list_tables` to learn the tables' labels, and find the
exact row and column names with `search_row_names` and `search_column_names` before you read cells, rows or columns;
never guess a name. If there is a tool available that can help you with the next step, you must use it rather than
trying to solve the problem without it. If a tool call fails, use the error message to re-plan and try again.
Use `think` to reason between steps. When you know the answer, call `final_answer` with it (a list for several items):
only the answer itself, without explanations, rounding or formatting.
Text:
{Paragraph}"""

# Appended for the data-tools-only setting (meta-level paper appendix A.2.2): arithmetic happens in the model's text.
DATA_TOOLS_NOTE = """Only data retrieval tools are available. Use them to fetch the data the question needs. However, you
must perform any necessary arithmetic manually, without tool support for computation: if the answer requires
calculations (e.g. differences, sums, averages, ratios, counts), compute them yourself from the retrieved data."""

TOOL_USER = """Question: {Question}"""

# The judge's rubric for free-form answers (an optional metric beside BERTScore, never an official one). Its hash,
# recorded with every verdict, is its version; a project saves its own under the stage "judge".
JUDGE = """You grade an answer to a question about a scientific table and its text, against the gold answer.
Question: {Question}
Gold answer: {Gold}
Answer to grade: {Answer}
Rubric:
- correct: the answer states what the gold answer states (wording, order and rounding may differ; nothing it
  says contradicts the gold answer).
- partially correct: it states part of the gold answer, or the gold answer with a claim the gold answer does not
  support.
- incorrect: it misses the gold answer's point, contradicts it, or answers another question.
Reply on two lines: "Reasoning: <one or two sentences>" then "Verdict: <correct | partially correct | incorrect>"."""

DEFAULT_TEMPLATES: dict[str, str] = {
    "direct": DIRECT,
    "cot": COT,
    "pot": POT,
    "calculator": CALCULATOR,
    "reasoner": REASONER,
    "calculator_check": CALCULATOR_CHECK,
    "tatllm": TATLLM,
    "tool_system": TOOL_SYSTEM,
    "tool_user": TOOL_USER,
    "judge": JUDGE,
}

STAGES_BY_METHOD: dict[str, tuple[str, ...]] = {
    "direct": ("direct",),
    "cot": ("cot",),
    "pot": ("pot",),
    "car": ("calculator", "reasoner"),
    "calculator": ("calculator",),
    "reversing": ("cot", "calculator_check"),
    "tatllm": ("tatllm",),
    "tool": ("tool_system", "tool_user"),
    "upload": (),
}


def templates_for(method: str, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The template texts a method uses: the defaults, replaced stage by stage by `overrides`."""
    if method not in STAGES_BY_METHOD:
        raise ValueError(f"unknown method {method!r}")
    overrides = overrides or {}
    return {stage: str(overrides.get(stage) or DEFAULT_TEMPLATES[stage]) for stage in STAGES_BY_METHOD[method]}


def templates_offering_abstention(templates: Mapping[str, str]) -> dict[str, str]:
    """The templates with the abstention instruction after each stage that asks the question, for releases that hold
    unanswerable questions (meta paper §3): without it a model rarely says a question cannot be answered. The
    instruction becomes part of the prompt version (the templates' hash), so such runs never share a cell with
    runs of the paper's own prompts."""
    return {
        stage: (
            f"{text}\n{ABSTENTION_INSTRUCTION}" if "{Question}" in text and ABSTENTION_INSTRUCTION not in text else text
        )
        for stage, text in templates.items()
    }


def templates_hash(templates: Mapping[str, str]) -> str:
    """sha256 over every stage's text, in stage-name order."""
    return hashlib.sha256(json.dumps(dict(sorted(templates.items())), ensure_ascii=False).encode()).hexdigest()


def render(template: str, **values: str) -> str:
    """Replace `{Table}`, `{Paragraph}`, `{Question}`, `{Tips}` literally; unknown braces are left alone.

    A placeholder with nothing to fill it that stands on its own line under a heading (`Paragraph:` over
    `{Paragraph}`, when the release excluded the paragraph) takes its heading with it: no empty section is shown.
    """
    text = template
    for name, value in values.items():
        if not value.strip():
            placeholder = re.escape("{" + name + "}")
            text = re.sub(rf"(?m)^[^\n{{}}]*:[ \t]*\n[ \t]*{placeholder}[ \t]*(?:\n|\Z)", "", text)
        text = text.replace("{" + name + "}", value)
    return text
