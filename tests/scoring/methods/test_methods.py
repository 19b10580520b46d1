"""The methods as plain functions over a scripted chat: prompts, sandboxed programs, CaR stages, TAT-LLM executor,
the tool loop (native calls and the JSON protocol, error messages, n-shot examples, data-only tools)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from curation.endpoints.client import ToolCall
from scoring.methods import MethodSettings, run_method, templates_for, templates_hash
from scoring.methods.prompting import extract_code
from scoring.methods.toolloop import shot_examples, tool_names
from scoring.sandbox import run_program

CONTEXT = {
    "tables": [
        {
            "label": "tab:sales",
            "caption": "Sales by year",
            "cells": [
                ["", "2019", "2018"],
                ["Fixed Price", "1,452.4", "1,146.2"],
                ["Total sales", "1,496.5", "1,202.9"],
            ],
        }
    ],
    "paragraphs": [{"text": "Sales grew because of fixed-price contracts."}],
}


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tokens_in: int = 10
    tokens_out: int = 5
    latency_s: float = 0.01
    attempts: list[Any] = field(default_factory=list)


class ScriptedChat:
    def __init__(self, *replies: Reply | str) -> None:
        self.replies = [r if isinstance(r, Reply) else Reply(r) for r in replies]
        self.calls: list[dict[str, Any]] = []

    def __call__(self, messages, **kwargs):
        self.calls.append({"messages": json.loads(json.dumps(messages)), **kwargs})
        return self.replies.pop(0)


def settings_for(method: str, **extra: Any) -> MethodSettings:
    return MethodSettings(templates=templates_for(method), **extra)


def sandbox(code: str):
    return run_program(code, entry="ans", timeout_s=5)


def test_direct_prompt_carries_table_paragraph_and_question_and_reads_the_answer():
    chat = ScriptedChat("The answer is $1,496.5 million.")
    out = run_method("direct", question="What were total sales in 2019?", context=CONTEXT, chat=chat,
                     run_program=sandbox, settings=settings_for("direct"))  # fmt: skip
    prompt = chat.calls[0]["messages"][0]["content"]
    assert "| Total sales | 1,496.5 | 1,202.9 |" in prompt and "Table 1 (tab:sales): Sales by year" in prompt
    assert 'Please answer the question "What were total sales in 2019?"' in prompt
    assert "fixed-price contracts" in prompt
    assert out.answer == ["$1,496.5 million"] and out.scale == "million"
    assert out.tokens_out == 5 and out.requests == 1


def test_cot_takes_what_follows_answer():
    chat = ScriptedChat("Reason: 2019 is larger than 2018.\nAnswer: 2019")
    out = run_method("cot", question="Which year?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("cot"))  # fmt: skip
    assert out.answer == ["2019"] and out.rule == "answer_marker"


def test_pot_runs_the_program_in_the_sandbox_and_answers_with_ans():
    chat = ScriptedChat("Here is the code:\n```python\na = 1496.5\nb = 1202.9\nans = round((a - b) / b * 100, 2)\n```")
    out = run_method("pot", question="Change?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("pot"))  # fmt: skip
    assert out.program.startswith("a = 1496.5")
    assert out.program_result["ok"] and out.program_result["isolation"] in ("bwrap", "degraded")
    assert out.answer == ["24.41"]


def test_pot_program_that_reads_host_files_gets_nothing_and_the_answer_stays_empty():
    chat = ScriptedChat("```python\nans = open('/work/main/config/settings.py').read()\n```")
    out = run_method("pot", question="?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("pot"))  # fmt: skip
    if out.program_result["isolation"] == "bwrap":
        assert not out.program_result["ok"] and out.answer == [] and out.rule == "program_failed"


def test_car_turns_the_calculator_sentence_into_the_reasoners_tips():
    chat = ScriptedChat(
        "```python\nans = f'Total sales grew from 1202.9 to 1496.5, by {1496.5 - 1202.9:.1f}.'\n```",
        "Reason: the tips are right.\nAnswer: 293.6",
    )
    out = run_method("car", question="By how much?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("car"))  # fmt: skip
    tips = "Total sales grew from 1202.9 to 1496.5, by 293.6."
    assert out.stages["calculator"]["tips"] == tips
    assert f"Tips:\n{tips}" in chat.calls[1]["messages"][0]["content"]
    assert out.answer == ["293.6"] and out.requests == 2


def test_tatllm_evaluates_the_equation_safely_and_keeps_every_step():
    table = (
        "| step | output |\n| 1 | arithmetic |\n| 2 | 1,496.5 ; 1,202.9 |\n| 3 | |\n"
        "| 4 | (1,496.5 - 1,202.9) / 1,202.9 * 100 |\n| 5 | 24.4 |\n| 6 | percent |"
    )
    out = run_method("tatllm", question="Change?", context=CONTEXT, chat=ScriptedChat(table), run_program=sandbox,
                     settings=settings_for("tatllm"))  # fmt: skip
    assert out.stages["steps"]["equation"] == "(1,496.5 - 1,202.9) / 1,202.9 * 100"
    assert out.answer == ["24.41"] and out.scale == "percent" and out.rule == "tatllm_equation"


def test_tatllm_never_executes_code_in_the_equation():
    table = (
        "| step | output |\n| 1 | arithmetic |\n| 2 | |\n| 3 | |\n"
        "| 4 | __import__('os').system('touch /tmp/pwned') |\n| 5 | 3 |\n| 6 | |"
    )
    out = run_method("tatllm", question="?", context=CONTEXT, chat=ScriptedChat(table), run_program=sandbox,
                     settings=settings_for("tatllm"))  # fmt: skip
    assert out.stages["executor"]["error"] and out.answer == ["3"]


def test_tool_loop_with_native_calls_returns_errors_to_the_model_and_stops_at_final_answer():
    wrong = '{"table": "tab:sales", "row": "Totl", "column": "2019"}'
    right = '{"table": "tab:sales", "row": "Total sales", "column": "2019"}'
    chat = ScriptedChat(
        Reply(tool_calls=[ToolCall("c1", "get_cell", wrong, None)]),
        Reply(tool_calls=[ToolCall("c2", "get_cell", right, None)]),
        Reply(tool_calls=[ToolCall("c3", "final_answer", '{"answer": "1,496.5"}', None)]),
    )
    out = run_method("tool", question="Total sales in 2019?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("tool", supports_tools=True))  # fmt: skip
    assert [step["name"] for step in out.tool_trace] == ["get_cell", "get_cell", "final_answer"]
    assert out.tool_trace[0]["is_error"] and "Total sales" in out.tool_trace[0]["error"]
    tool_message = chat.calls[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"].startswith("Error:")
    assert out.tool_trace[1]["result"] == "1,496.5" and out.answer == ["1,496.5"]
    assert chat.calls[0]["tools"] and out.stages["protocol"] == "native"


def test_tool_loop_json_protocol_asks_for_a_schema_and_recovers_from_an_invalid_reply():
    chat = ScriptedChat(
        "I think the answer is 5",
        json.dumps({"tool": "search_row_names", "arguments": {"query": "total"}}),
        json.dumps({"tool": "final_answer", "arguments": {"answer": ["1,496.5"]}}),
    )
    out = run_method("tool", question="Total?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("tool"))  # fmt: skip
    assert chat.calls[0]["response_format"]["type"] == "json_schema"
    assert out.tool_trace[0]["is_error"] and out.tool_trace[0]["name"] == "(invalid action)"
    assert out.tool_trace[1]["result"] and out.answer == ["1,496.5"]


def test_tool_loop_stops_at_the_turn_limit():
    chat = ScriptedChat(*[json.dumps({"tool": "think", "arguments": {"thought": "hmm"}})] * 3)
    out = run_method("tool", question="?", context=CONTEXT, chat=chat, run_program=sandbox,
                     settings=settings_for("tool", max_turns=3))  # fmt: skip
    assert out.rule == "turn_limit" and len(out.tool_trace) == 3 and out.answer == []


def test_data_only_tools_leave_arithmetic_out_and_shots_use_random_arguments():
    assert "add" not in tool_names("data") and "get_cell" in tool_names("data") and "add" in tool_names("all")
    one = shot_examples(tool_names("all"), 1, seed=1)
    three = shot_examples(tool_names("all"), 3, seed=1)
    assert one.count("add(") == 1 and three.count("add(") == 3
    assert shot_examples(tool_names("all"), 1, seed=2) != one
    assert "1,496.5" not in three  # examples never show the question's own data
    assert shot_examples(tool_names("all"), 0, seed=1) == ""


def test_templates_are_overridable_and_hashed():
    default = templates_for("car")
    edited = templates_for("car", {"reasoner": "Tips: {Tips}\nQ: {Question}"})
    assert set(default) == {"calculator", "reasoner"}
    assert templates_hash(default) != templates_hash(edited)
    with pytest.raises(ValueError):
        templates_for("nonsense")


def test_code_is_found_in_fences_or_after_prose():
    assert extract_code("Sure!\n```python\nans = 1\n```\nDone") == "ans = 1"
    assert extract_code("We compute it.\nx = 2\nans = x * 3") == "x = 2\nans = x * 3"


@pytest.mark.parametrize("method", ["direct", "cot", "pot", "car", "calculator", "reversing", "tatllm", "tool"])
def test_a_context_without_paragraphs_shows_no_empty_paragraph_heading(method):
    # The release excluded the paragraph: SciTaT's layout shows the table and the question, no bare "Paragraph:".
    tables_only = {**CONTEXT, "paragraphs": []}
    chat = ScriptedChat(*["Reason: r\nAnswer: 1\n```python\nans = 1\n```"] * 2)
    if method == "tool":
        chat = ScriptedChat(Reply(tool_calls=[ToolCall("1", "final_answer", '{"answer": "1"}', {"answer": "1"})]))
    extra = {"supports_tools": True} if method == "tool" else {}
    run_method(method, question="Q?", context=tables_only, chat=chat, run_program=sandbox,
               settings=settings_for(method, **extra))  # fmt: skip
    prompts = [message["content"] for call in chat.calls for message in call["messages"]]
    for prompt in prompts:
        lines = [line.strip() for line in prompt.splitlines()]
        for heading in ("Paragraph:", "Text:"):
            assert heading not in lines, (method, prompt)
        assert "(none)" not in prompt
    assert any("| Total sales | 1,496.5 | 1,202.9 |" in prompt for prompt in prompts) or method == "tool"
    chat = ScriptedChat(*["Reason: r\nAnswer: 1\n```python\nans = 1\n```"] * 2)
    if method != "tool":
        run_method(method, question="Q?", context=CONTEXT, chat=chat, run_program=sandbox,
                   settings=settings_for(method))  # fmt: skip
        first = chat.calls[0]["messages"][0]["content"]
        assert "\nParagraph:\nSales grew" in first or "\nText:\nSales grew" in first, method
