"""The tool box over a context's tables: schemas, data look-ups, arithmetic and helpful errors."""

from __future__ import annotations

import json

import pytest

from curation.toolkit.tools import ALL_TOOLS, ARITHMETIC_TOOLS, DATA_TOOLS, Program, ToolBox, ToolError

TABLES = [
    {
        "label": "tab:results",
        "caption": "Accuracy on the test set",
        "rows": [
            ["Model", "Acc", "F1"],
            ["BERT", "**85.1**", "80.2"],
            ["RoBERTa", "87.3†", "82.0"],
            ["GPT", "(1.5)", "-"],
            ["BERT", "70.0", "60.0"],
        ],
    },
    {"label": "tab:cost", "caption": "Cost", "rows": [["System", "Cost ($)"], ["A", "$1,200"], ["B", "$900"]]},
]


@pytest.fixture
def box() -> ToolBox:
    return ToolBox(TABLES)


def test_every_tool_has_an_openai_schema_and_description(box):
    schemas = box.schemas()
    assert [schema["function"]["name"] for schema in schemas] == list(ALL_TOOLS)
    for schema in schemas:
        assert schema["type"] == "function"
        assert schema["function"]["description"]
        assert schema["function"]["parameters"]["type"] == "object"
        json.dumps(schema)
    names = set(ALL_TOOLS)
    assert {"think", "final_answer", "get_cell", "proportion", "less_than"} <= names


def test_data_tools_only_box_refuses_arithmetic():
    box = ToolBox(TABLES, tools=DATA_TOOLS)
    outcome = box.execute("add", {"numbers": [1, 2]})
    assert not outcome.ok and "unknown tool 'add'" in outcome.error
    assert len(box.schemas()) == len(DATA_TOOLS)


def test_list_tables(box):
    assert box.call("list_tables") == [
        {"table": "tab:results", "caption": "Accuracy on the test set", "rows": 4, "columns": 3},
        {"table": "tab:cost", "caption": "Cost", "rows": 2, "columns": 2},
    ]


def test_search_names(box):
    assert box.call("search_column_names", {"query": "cost"}) == [{"table": "tab:cost", "column": "Cost ($)"}]
    rows = box.call("search_row_names", {"query": "bert", "table": "tab:results"})
    assert rows == [
        {"table": "tab:results", "row": "BERT"},
        {"table": "tab:results", "row": "RoBERTa"},
        {"table": "tab:results", "row": "BERT (2)"},
    ]


def test_get_cell_row_and_column(box):
    assert box.call("get_cell", {"table": "tab:results", "row": "RoBERTa", "column": "Acc"}) == "87.3†"
    assert box.call("get_cell", {"table": "TAB:RESULTS", "row": "roberta", "column": "acc"}) == "87.3†"
    assert box.call("get_cell", {"table": "tab:results", "row": "BERT (2)", "column": "F1"}) == "60.0"
    assert box.call("get_row", {"table": "tab:results", "row": "GPT"}) == {"Acc": "(1.5)", "F1": "-"}
    assert box.call("get_column", {"table": "tab:cost", "column": "Cost ($)"}) == {"A": "$1,200", "B": "$900"}


def test_arguments_may_arrive_as_json_text(box):
    assert box.call("add", '{"numbers": [1, 2.5]}') == 3.5
    outcome = box.execute("add", "{numbers: [1]}")
    assert not outcome.ok and "not valid JSON" in outcome.error


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("add", {"numbers": ["1,200", "$900", 0.5]}, 2100.5),
        ("subtract", {"a": "87.3†", "b": "**85.1**"}, 2.2),
        ("multiply", {"numbers": [2, "3", "(4)"]}, -24),
        ("divide", {"a": 1, "b": 4}, 0.25),
        ("sum", {"numbers": [1, 2, 3]}, 6),
        ("mean", {"numbers": [1, 2, 3, 4]}, 2.5),
        ("max", {"numbers": ["12%", "7%"]}, 12),
        ("min", {"numbers": [3, -1, 2]}, -1),
        ("count", {"items": ["a", "b", "c"]}, 3),
        ("sort", {"numbers": [3, 1, 2]}, [1, 2, 3]),
        ("sort", {"numbers": [3, 1, 2], "descending": True}, [3, 2, 1]),
        ("rank", {"values": {"a": 1, "b": 3, "c": "2"}}, ["b", "c", "a"]),
        ("rank", {"values": {"a": 1, "b": 3, "c": "2"}, "descending": False}, ["a", "c", "b"]),
        ("rank", {"values": {"a": 1, "b": 3, "c": "2"}, "item": "c"}, 2),
        ("rank", {"values": {"a": 3, "b": 3, "c": 1}, "item": "b"}, 1),
        ("greater_than", {"a": "85.1", "b": 80}, True),
        ("less_than", {"a": "85.1", "b": 80}, False),
        ("proportion", {"part": 1, "total": 4}, 0.25),
        ("proportion", {"part": 1, "total": 3, "as_percentage": True}, 33.3333333333),
        ("think", {"thought": "first get the cells"}, "ok"),
        ("final_answer", {"answer": "BERT"}, "BERT"),
    ],
)
def test_arithmetic_and_markers(box, tool, arguments, expected):
    outcome = box.execute(tool, arguments)
    assert outcome.ok, outcome.error
    assert outcome.result == pytest.approx(expected) if isinstance(expected, float) else outcome.result == expected


def test_results_are_clean_numbers(box):
    assert box.call("add", {"numbers": [0.1, 0.2]}) == 0.3
    assert isinstance(box.call("add", {"numbers": [1, 2]}), int)


@pytest.mark.parametrize(
    ("tool", "arguments", "fragments"),
    [
        ("get_sell", {}, ["unknown tool 'get_sell'", "Did you mean get_cell"]),
        ("get_cell", {"table": "tab:result", "row": "BERT", "column": "Acc"}, ["no table", "'tab:results'"]),
        (
            "get_cell",
            {"table": "tab:results", "row": "BERT-large", "column": "Acc"},
            ["no row", "'BERT'", "search_row"],
        ),
        ("get_cell", {"table": "tab:results", "row": "BERT", "column": "Accuracy"}, ["no column", "'Acc'"]),
        ("get_cell", {"table": "tab:results", "row": "BERT"}, ["called without column, which it requires"]),
        ("add", {"nums": [1]}, ["does not take nums", "it takes: numbers"]),
        ("add", {"numbers": "1, 2"}, ["numbers must be array"]),
        ("add", {"numbers": []}, ["numbers is too short: 0 given, at least 1 needed"]),
        ("add", {"numbers": ["n/a"]}, ["numbers[0] is not a number"]),
        ("divide", {"a": 1, "b": "0"}, ["division by zero"]),
        ("proportion", {"part": 1, "total": 0}, ["total is 0"]),
        ("rank", {"values": {"a": 1}, "item": "z"}, ["item 'z' is not among"]),
        ("search_row_names", {"query": "  "}, ["at least one keyword"]),
        ("greater_than", {"a": True, "b": 1}, ["a must be number or string"]),
    ],
)
def test_wrong_calls_return_helpful_errors(box, tool, arguments, fragments):
    outcome = box.execute(tool, arguments)
    assert not outcome.ok
    assert outcome.message().startswith("Error: ")
    for fragment in fragments:
        assert fragment in outcome.error


def test_call_returns_error_text_instead_of_raising(box):
    assert box.call("divide", {"a": 1, "b": 0}) == "Error: division by zero: b is 0"


def test_program_records_essential_actions_and_raises_on_errors(box):
    program = Program(box)
    a = program.run("get_cell", table="tab:cost", row="A", column="Cost ($)")
    program.run("subtract", a=a, b="$900")
    listing, *searches, cell, difference = program.essential_actions()
    assert listing["tool"] == "list_tables" and [t["table"] for t in listing["result"]] == ["tab:results", "tab:cost"]
    # Discovery: one search per name the program reads; the stored result is the name, not the hit list.
    assert searches == [
        {"tool": "search_row_names", "arguments": {"query": "A"}, "result": {"table": "tab:cost", "row": "A"}},
        {
            "tool": "search_column_names",
            "arguments": {"query": "Cost ($)"},
            "result": {"table": "tab:cost", "column": "Cost ($)"},
        },
    ]
    assert cell == {
        "tool": "get_cell",
        "arguments": {"table": "tab:cost", "row": "A", "column": "Cost ($)"},
        "result": "$1,200",
    }
    assert difference == {"tool": "subtract", "arguments": {"a": "$1,200", "b": "$900"}, "result": 300}
    with pytest.raises(ToolError):
        program.run("get_cell", table="tab:cost", row="Z", column="Cost ($)")
    assert len(program.actions) == 2


def test_tool_groups_cover_the_issue_list():
    assert set(ARITHMETIC_TOOLS) >= {
        "add", "subtract", "multiply", "divide", "sum", "mean", "max", "min", "count", "rank", "greater_than",
        "less_than", "proportion",
    }  # fmt: skip


def test_list_tables_names_each_table_as_questions_do_and_get_cell_accepts_that_name():
    from scoring.methods.base import tool_tables

    frozen = {
        "tables": [
            {"label": "tab:main", "number": "2", "caption": "Main results.", "cells": [["M", "Acc"], ["A", "1"]]},
            {"label": "", "number": "", "caption": "Table 5: Costs.", "cells": [["S", "Cost"], ["B", "9"]]},
            {"label": "tab:x", "number": "", "caption": "Extra.", "cells": [["S", "N"], ["C", "4"]]},
        ]
    }
    box = ToolBox(tool_tables(frozen))
    listing = box.call("list_tables")
    assert [(t["table"], t["name"]) for t in listing] == [
        ("tab:main", "Table 2"),
        ("Table 5", "Table 5"),  # no label: what the caption says the paper calls it
        ("tab:x", "Table 3"),
    ]
    assert box.call("get_cell", {"table": "tab:main", "row": "A", "column": "Acc"}) == "1"
    assert box.call("get_cell", {"table": "table 2", "row": "A", "column": "Acc"}) == "1"
    assert box.call("get_cell", {"table": "Table 5", "row": "B", "column": "Cost"}) == "9"
    assert box.call("get_row", {"table": "Table 3", "row": "C"}) == {"N": "4"}
    assert box.call("get_cell", {"table": "Table 9", "row": "A", "column": "Acc"}).startswith(
        "Error: no table labelled 'Table 9'."
    )


def test_the_drafter_and_the_tool_box_name_a_table_by_one_rule():
    from curation.drafting.services.drafter import table_input
    from curation.table_shape import shape_from_rows

    class Row:
        grid: list = []
        cells = [["M", "Acc"], ["A", "1"]]
        spans: list = []
        header_rows = 1
        label = "tab:a"
        caption = "Table 4: Speed."
        number = ""
        order = 0

    shape = shape_from_rows(Row.cells, label=Row.label, caption=Row.caption, number="")
    named = table_input(Row(), "", 0)["name"]
    assert named == shape.reader_name(0) == shape.tool_input(position=0)["name"] == "Table 4"


GROUPED = [
    {
        "label": "tab:models",
        "caption": "Accuracy by model family",
        "rows": [
            ["Family", "Model", "Acc"],
            ["LLM", "Kimi-K2.6", "70.1"],
            ["LLM", "Qwen3", "61.0"],
            ["Embed", "E5", "50.2"],
        ],
    }
]


def test_a_row_keeps_the_name_an_older_release_gave_it_for_calls_and_for_scoring():
    """Rows are named by the columns that identify them ("Qwen3"); before, by their first cell ("LLM (2)"), and the
    essential actions of items released then name them so: both names reach the row, and a model's call naming it
    today matches an essential action naming it the old way (and a search credited by either name)."""
    from scoring.metrics.toolcalls import ToolCall, score_tool_calls

    box = ToolBox(GROUPED)
    assert box.tables[0].row_names == ["Kimi-K2.6", "Qwen3", "E5"]
    today = box.call("get_cell", {"table": "tab:models", "row": "Qwen3", "column": "Acc"})
    assert today == box.call("get_cell", {"table": "TAB:MODELS", "row": "LLM (2)", "column": "Acc"}) == "61.0"

    older_release = [
        ToolCall("search_row_names", {"query": "LLM (2)"}, result={"table": "tab:models", "row": "LLM (2)"}),
        ToolCall("get_cell", {"table": "tab:models", "row": "LLM (2)", "column": "Acc"}),
    ]
    hits = box.call("search_row_names", {"query": "qwen"})
    model = [
        ToolCall("search_row_names", {"query": "qwen"}, result=hits),
        ToolCall("get_cell", {"table": "tab:models", "row": "Qwen3", "column": "Acc"}),
    ]
    scored = score_tool_calls(model, older_release, names=box.names_now)
    assert (scored.true_positives, scored.recall, scored.precision) == (2, 1.0, 1.0)
    # Without the resolver the two names are two rows: the rule the resolver adds is what makes them one.
    assert score_tool_calls(model, older_release).true_positives == 0
    # A row named the old way that is another row today stays a miss.
    wrong = [ToolCall("get_cell", {"table": "tab:models", "row": "Kimi-K2.6", "column": "Acc"})]
    assert score_tool_calls(wrong, older_release[1:], names=box.names_now).true_positives == 0
