"""Tool-call metrics as the meta-level paper defines them, end to end: a template question's essential actions
(discovery included), a model's trajectory through the real tool loop, and the precision/recall it earns."""

from __future__ import annotations

import json

import pytest

from curation.drafting.templates import draft_template_questions
from curation.toolkit.tools import ToolBox
from scoring.methods import MethodSettings, run_method, templates_for
from scoring.methods.base import tool_tables
from scoring.methods.toolloop import turn_cap
from scoring.runs import results
from scoring.runs.results import item_metrics
from tests.scoring.methods.test_methods import ScriptedChat, sandbox

CONTEXT = {
    "tables": [
        {
            "label": "tab:glue",
            "caption": "GLUE results",
            "cells": [
                ["Model", "Dev", "Test"],
                ["BERT-base", "84.1", "83.2"],
                ["BERT-large", "86.3", "85.9"],
                ["RoBERTa", "87.6", "86.9"],
                ["ALBERT", "81.3", "80.0"],
            ],
        }
    ],
    "paragraphs": [{"text": "Larger encoders score higher on both splits."}],
}


def _draft(template_id: str, **slots: object) -> dict:
    drafts = draft_template_questions(tool_tables(CONTEXT), seed=0, per_template=1000, template_ids=[template_id])
    return next(d for d in drafts if all(d["slots"].get(key) == value for key, value in slots.items()))


def _item(draft: dict) -> dict:
    return {
        "uid": "q1",
        "question": draft["question"],
        "answer": draft["answer"],
        "answer_form": "short",
        "essential_actions": draft["essential_actions"],
    }


def _loop(question: str, actions: list[dict], *, tools: str = "all", max_turns: int = 12):
    chat = ScriptedChat(*[json.dumps(action) for action in actions])
    settings = MethodSettings(templates=templates_for("tool"), tools=tools, max_turns=max_turns)
    output = run_method("tool", question=question, context=CONTEXT, chat=chat, run_program=sandbox, settings=settings)
    return output, chat


def test_correct_trajectory_with_a_multi_hit_search_scores_precision_and_recall_one():
    draft = _draft("cell_difference", row_a="BERT-large", row_b="BERT-base", column="Test")
    assert draft["answer"] == ["2.7"]
    output, _ = _loop(
        draft["question"],
        [
            {"tool": "list_tables", "arguments": {}},
            {"tool": "search_row_names", "arguments": {"query": "bert"}},
            {"tool": "search_column_names", "arguments": {"query": "test set"}},
            {"tool": "get_cell", "arguments": {"table": "tab:glue", "row": "BERT-large", "column": "Test"}},
            {"tool": "get_cell", "arguments": {"table": "tab:glue", "row": "BERT-base", "column": "Test"}},
            {"tool": "subtract", "arguments": {"a": "85.9", "b": "83.2"}},
            {"tool": "final_answer", "arguments": {"answer": "2.7"}},
        ],
    )
    hits = output.tool_trace[1]["result"]
    # The search is real and returns every BERT-like row (BERT-base, BERT-large, RoBERTa, ALBERT), not one name.
    assert {hit["row"] for hit in hits} == {"BERT-base", "BERT-large", "RoBERTa", "ALBERT"}
    metrics = item_metrics(_item(draft), answer=output.answer, scale=output.scale, tool_trace=output.tool_trace)
    assert metrics["em"] == 1.0
    assert metrics["tool_precision"] == 1.0
    assert metrics["tool_recall"] == 1.0


def test_a_search_that_misses_the_name_and_a_skipped_discovery_cost_precision_and_recall():
    draft = _draft("cell_difference", row_a="BERT-large", row_b="BERT-base", column="Test")
    output, _ = _loop(
        draft["question"],
        [
            {"tool": "search_row_names", "arguments": {"query": "roberta"}},  # finds only RoBERTa
            {"tool": "get_cell", "arguments": {"table": "tab:glue", "row": "BERT-large", "column": "Test"}},
            {"tool": "get_cell", "arguments": {"table": "tab:glue", "row": "BERT-base", "column": "Test"}},
            {"tool": "subtract", "arguments": {"a": "85.9", "b": "83.2"}},
            {"tool": "final_answer", "arguments": {"answer": "2.7"}},
        ],
    )
    metrics = item_metrics(_item(draft), answer=output.answer, scale=output.scale, tool_trace=output.tool_trace)
    assert metrics["tool_precision"] == pytest.approx(3 / 4)
    # 7 essential actions: list_tables, 2 row searches, 1 column search, 2 cells, subtract; 3 were done.
    assert len(draft["essential_actions"]) == 7
    assert metrics["tool_recall"] == pytest.approx(3 / 7)


def test_turn_cap_lets_the_longest_program_plus_discovery_finish():
    drafts = draft_template_questions(tool_tables(CONTEXT), seed=0, per_template=1000)
    cap, longest = turn_cap([d["essential_actions"] for d in drafts])
    assert cap > longest
    draft = max(drafts, key=lambda d: len(d["essential_actions"]))
    replay = [{"tool": a["tool"], "arguments": a["arguments"]} for a in draft["essential_actions"]]
    actions = [*replay, {"tool": "final_answer", "arguments": {"answer": draft["answer"]}}]
    finished, _ = _loop(draft["question"], actions, max_turns=cap)
    assert finished.rule == "final_answer" and finished.answer == draft["answer"]
    cut_off, _ = _loop(draft["question"], actions, max_turns=len(replay))
    assert cut_off.rule == "turn_limit" and cut_off.answer == []


def test_turn_cap_grows_with_a_long_count_program():
    rows = [["Model", "Score"], *[[f"M{i}", str(i * 3 % 17)] for i in range(10)]]
    drafts = draft_template_questions(
        [{"label": "Table 1", "rows": rows}], seed=0, per_template=5, template_ids=["count_beyond_row"]
    )
    cap, longest = turn_cap([d["essential_actions"] for d in drafts])
    # list_tables, the column search, get_column, nine comparisons, count = 13 calls; the old default of 6 cut it off.
    assert longest == 13 and cap >= longest + 1


def test_data_tools_prompt_tells_the_model_to_do_the_arithmetic_itself():
    final = [{"tool": "final_answer", "arguments": {"answer": "1"}}]
    _, data_chat = _loop("?", final, tools="data")
    _, all_chat = _loop("?", final, tools="all")
    data_system = data_chat.calls[0]["messages"][0]["content"]
    assert "perform any necessary arithmetic manually" in data_system
    assert "perform any necessary arithmetic manually" not in all_chat.calls[0]["messages"][0]["content"]
    assert "list_tables" in data_system and "search_row_names" in data_system


def test_a_table_named_by_its_reader_name_matches_the_essential_action_naming_its_label():
    """The tools accept a table by label ("tab:glue") or by what the paper calls it ("Table 1"); so does scoring."""
    draft = _draft("cell_difference", row_a="BERT-large", row_b="BERT-base", column="Test")
    assert {a["arguments"].get("table") for a in draft["essential_actions"] if a["tool"] == "get_cell"} == {"tab:glue"}
    output, _ = _loop(
        draft["question"],
        [
            {"tool": "list_tables", "arguments": {}},
            {"tool": "search_row_names", "arguments": {"query": "bert"}},
            {"tool": "search_column_names", "arguments": {"query": "test set"}},
            {"tool": "get_cell", "arguments": {"table": "Table 1", "row": "BERT-large", "column": "Test"}},
            {"tool": "get_cell", "arguments": {"table": "table 1", "row": "BERT-base", "column": "Test"}},
            {"tool": "subtract", "arguments": {"a": "85.9", "b": "83.2"}},
            {"tool": "final_answer", "arguments": {"answer": "2.7"}},
        ],
    )
    cells = [step for step in output.tool_trace if step["name"] == "get_cell"]
    assert [(step["is_error"], step["result"]) for step in cells] == [(False, "85.9"), (False, "83.2")]
    metrics = item_metrics(
        _item(draft), answer=output.answer, scale=output.scale, tool_trace=output.tool_trace, context=CONTEXT
    )
    assert (metrics["tool_precision"], metrics["tool_recall"]) == (1.0, 1.0)
    # Without the item's tables the names are compared as text: the two cells do not count.
    blind = item_metrics(_item(draft), answer=output.answer, scale=output.scale, tool_trace=output.tool_trace)
    assert blind["tool_recall"] == pytest.approx(5 / 7)


def test_a_table_argument_naming_no_table_never_matches():
    draft = _draft("cell_difference", row_a="BERT-large", row_b="BERT-base", column="Test")
    output, _ = _loop(
        draft["question"],
        [
            {"tool": "get_cell", "arguments": {"table": "Table 9", "row": "BERT-large", "column": "Test"}},
            {"tool": "final_answer", "arguments": {"answer": "2.7"}},
        ],
    )
    assert output.tool_trace[0]["is_error"]
    metrics = item_metrics(
        _item(draft), answer=output.answer, scale=output.scale, tool_trace=output.tool_trace, context=CONTEXT
    )
    assert (metrics["tool_precision"], metrics["tool_recall"]) == (0.0, 0.0)


def test_a_context_s_tables_are_read_into_a_tool_box_once_for_all_its_items(monkeypatch):
    """A run scores many items of one frozen context: their tool calls are named by one tool box, built once; a
    context given anew (another mapping, even an equal one) gets its own, and the figures do not change."""
    built = []
    monkeypatch.setattr(results, "ToolBox", lambda tables: built.append(tables) or ToolBox(tables))
    draft = _draft("cell_difference", row_a="BERT-large", row_b="BERT-base", column="Test")
    trace = [{"name": "get_cell", "arguments": {"table": "Table 1", "row": "BERT-large", "column": "Test"}}]
    context = json.loads(json.dumps(CONTEXT))
    first, second = (item_metrics(_item(draft), answer=["2.7"], scale="", tool_trace=trace, context=context)
                     for _ in range(2))  # fmt: skip
    assert len(built) == 1 and first["tool_recall"] == second["tool_recall"] > 0
    again = item_metrics(
        _item(draft), answer=["2.7"], scale="", tool_trace=trace, context=json.loads(json.dumps(CONTEXT))
    )
    assert len(built) == 2 and again["tool_recall"] == first["tool_recall"]
