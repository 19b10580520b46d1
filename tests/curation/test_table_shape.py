"""One table representation: rectangular file grids, flattened prompt headers and HTML spans, from every source."""

from __future__ import annotations

from pathlib import Path

from curation.latex import extract_paper
from curation.table_shape import (
    Span,
    is_rectangular,
    row_names,
    shape_from_extracted,
    shape_from_frozen,
    shape_from_rows,
)

DEMO_PAPER = Path(__file__).resolve().parents[2] / "curation" / "demo" / "paper"


def texts(layout):
    return [[(cell["text"], cell["rowspan"], cell["colspan"]) for cell in row] for row in layout]


def demo_main_table():
    extraction = extract_paper(DEMO_PAPER)
    return next(t for t in extraction.tables if t.label == "tab:main")


def test_multicolumn_header_is_one_cell():
    shape = shape_from_rows([["Model", "Dev", "Dev"], ["A", "1", "2"]], spans=[Span(0, 1, 1, 2)])
    assert texts(shape.html_layout()) == [
        [("Model", 1, 1), ("Dev", 1, 2)],
        [("A", 1, 1), ("1", 1, 1), ("2", 1, 1)],
    ]


def test_multirow_covers_the_cells_below():
    shape = shape_from_rows([["Group", "x"], ["Group", "y"], ["Other", "z"]], spans=[Span(0, 0, 2, 1)])
    assert texts(shape.html_layout()) == [
        [("Group", 2, 1), ("x", 1, 1)],
        [("y", 1, 1)],
        [("Other", 1, 1), ("z", 1, 1)],
    ]


def test_spans_reaching_past_the_grid_are_clipped_and_overlaps_ignored():
    shape = shape_from_rows([["a", "b"], ["c", "d"]], spans=[Span(1, 0, 5, 9), Span(1, 1, 2, 1)])
    assert texts(shape.html_layout()) == [[("a", 1, 1), ("b", 1, 1)], [("c", 1, 2)]]


def test_ragged_rows_are_padded():
    shape = shape_from_rows([["a", "b"], ["c"]])
    assert texts(shape.html_layout()) == [[("a", 1, 1), ("b", 1, 1)], [("c", 1, 1), ("", 1, 1)]]


def test_demo_table_file_grid_is_rectangular_with_avg_over_its_own_column():
    shape = shape_from_extracted(demo_main_table())
    grid = shape.file_grid()
    assert is_rectangular(grid, 7)
    assert grid[0] == ["Method", "Params (M)", "LAS on test", "", "", "", "Avg."]
    assert grid[1] == ["", "", "Wolof", "Faroese", "Tagalog", "Yoruba", ""]
    assert grid[2][6] == "74.9" and grid[2][2] == "78.4"


def test_prompt_columns_flatten_the_two_header_rows():
    shape = shape_from_extracted(demo_main_table())
    assert shape.header_rows == 2
    assert shape.prompt_columns() == [
        "Method",
        "Params (M)",
        "LAS on test - Wolof",
        "LAS on test - Faroese",
        "LAS on test - Tagalog",
        "LAS on test - Yoruba",
        "Avg.",
    ]
    assert shape.prompt_rows()[1] == ["Full fine-tuning", "560", "78.4", "80.1", "71.9", "69.2", "74.9"]
    assert len(shape.prompt_rows()) == 5


def test_frozen_table_rebuilds_the_same_shape():
    shape = shape_from_extracted(demo_main_table())
    again = shape_from_frozen(shape.to_frozen())
    assert again == shape


def test_old_release_without_grid_is_padded_to_a_rectangle():
    ragged = {"label": "t", "caption": "", "cells": [["A", "B"], ["a", "1", "2"]]}
    shape = shape_from_frozen(ragged)
    assert shape.file_grid() == [["A", "B", ""], ["a", "1", "2"]]


def test_extractor_header_rows_win_over_the_span_count():
    table = demo_main_table()
    table.header_rows = 1
    assert shape_from_extracted(table).header_rows == 1
    table.header_rows = None
    assert shape_from_extracted(table).header_rows == 2


def test_html_header_never_cuts_a_rowspan():
    shape = shape_from_rows([["A", "B"], ["A", "x"], ["c", "d"]], spans=[Span(0, 0, 2, 1)], header_rows=1)
    assert shape.html_header_rows() == 2


# Body rows of three real tables (benchmarks/papers/templates): a rotated \multirow group label before the model
# name (embedders_dilemma), a \multirow task group before vehicle and method (drone_controller), and xtable's row
# numbers before scenario and evaluator type (wmt15_eyetracking).
EMBEDDERS = [
    ["LLM", "Gemini 3.1 Pro", "–", "85.2", "$154"],
    ["LLM", "Kimi-K2.6", "–", "84.5", "$111"],
    ["LLM", "Gemini 3.1 Flash Lite", "–", "82.9", "$7"],
    ["Embedding", "Jina-v5-S", "596M", "90.4", "$0.03"],
]
DRONE = [
    ["Free Hover", "small", "PID", "0.06", "0.51"],
    ["Free Hover", "small", "Ours", "0.05", "0.30"],
    ["Inertial Board", "small", "PID", "-", "-"],
    ["Inertial Board", "large", "PID", "0.31", "0.37"],
    ["Payload", "large", "PID", "0.19", "1.14"],
    ["Payload", "", "Ours", "0.04", "0.34"],  # the source's \multirow{2} for "large" leaves this cell empty
]
WMT15 = [
    ["1", "src", "biling", "36.89", "24.54"],
    ["2", "src", "mono", "44.11", "28.58"],
    ["3", "src+tgt", "biling", "40.16", "23.99"],
    ["4", "src+tgt", "mono", "46.76", "29.69"],
    ["5", "tgt", "biling", "26.41", "15.03"],
]


def test_a_repeated_group_label_in_the_first_column_does_not_name_the_rows():
    assert row_names(EMBEDDERS) == (["Gemini 3.1 Pro", "Kimi-K2.6", "Gemini 3.1 Flash Lite", "Jina-v5-S"], 2)
    assert row_names(DRONE) == (
        [
            "small, PID (Free Hover)",
            "small, Ours (Free Hover)",
            "small, PID (Inertial Board)",
            "large, PID (Inertial Board)",
            "large, PID (Payload)",
            "Ours (Payload)",
        ],
        3,
    )


def test_a_first_column_of_row_numbers_does_not_name_the_rows():
    assert row_names(WMT15) == (
        ["biling (src)", "mono (src)", "biling (src+tgt)", "mono (src+tgt)", "biling (tgt)"],
        3,
    )


def test_a_first_column_that_names_each_row_once_names_the_rows():
    years = [["2019", "12.1"], ["2020", "14.0"], ["2021", "15.2"]]
    assert row_names(years) == (["2019", "2020", "2021"], 1)
    numbered = [["1", "0.5"], ["2", "0.7"], ["3", "0.9"]]  # consecutive, but nothing else names the rows
    assert row_names(numbered) == (["1", "2", "3"], 1)
    parti = [["Imagen", "Diffusion", "7.27"], ["Parti", "Autoregressive", "7.23"], ["", "", "(0.1)"]]
    assert row_names(parti) == (["Imagen", "Parti", ""], 1)


def test_an_imported_reports_header_rows_are_counted_from_what_they_hold():
    # TAT-QA dev tables (../shared/data/tatqa, CC BY 4.0), which carry no header count: the periods under their group
    # label, and a units row, are header rows; a section's title or a row of amounts is not.
    fiscal = [["", "", "Fiscal", ""], ["", "2019", "2018", "2017"], ["", "", "(in millions)", ""],
              ["Transportation Solutions:", "", "", ""], ["Automotive", "$ 6,092", "$ 6,588", "$ 5,686"]]  # fmt: skip
    shape = shape_from_rows(fiscal)
    assert shape.header_rows == 3
    # The label reaches over the empty cells after it (the merge the file lost), not back over 2019 before it.
    assert shape.prompt_columns()[1:] == ["2019", "Fiscal - 2018 - (in millions)", "Fiscal - 2017"]
    assert shape.file_grid() == fiscal  # a file gets the grid as it came
    units = [["", "30 June 2019", "30 June 2018", "Change"], ["", "$’000", "$’000", "%"],
             ["Net profit/(loss) after tax", "(9,819)", "6,639", "(248%)"]]  # fmt: skip
    assert shape_from_rows(units).header_rows == 2
    # A shipping report's note writes the country with stops: "U.S." is the note's word as "US" is.
    shipping = [["", "Revenues", "", "Income", ""], ["(in thousands of U.S. dollars)", "2019", "2018", "2019", "2018"],
                ["Teekay LNG", "601,256", "510,762", "299,253", "148,599"]]  # fmt: skip
    assert shape_from_rows(shipping).header_rows == 2
    # Under a row of group labels, a row naming every column is the header's last, its first cell naming the rows:
    # "What Payments Due By Period is reported for Operating leases?" had been answered from 1-3 Years.
    due = [["", "", "", "Payments Due By Period", "", ""],
           ["Contractual Obligations", "Total", "Less than 1 Year", "1-3 Years", "3-5 Years", "5 Years"],
           ["Operating leases", "47,774", "$15,363", "$22,919", "$ 9,382", "$110"]]  # fmt: skip
    assert shape_from_rows(due).prompt_columns() == [
        "Contractual Obligations",
        "Total",
        "Less than 1 Year",
        "Payments Due By Period - 1-3 Years",
        "Payments Due By Period - 3-5 Years",
        "Payments Due By Period - 5 Years",
    ]
    # Periods name columns too, and a scale note may head the group labels' row (TAT-QA test, shortened).
    regions = [["", "", "Years Ended December 31,", ""], ["Region", "2017", "2018", "2019"], ["", "%", "%", "%"],
               ["Taiwan", "32.8", "36.4", "36.4"], ["Japan", "3.2", "3.9", "6.6"]]  # fmt: skip
    assert shape_from_rows(regions).header_rows == 3
    allowance = [["(In millions)", "", "", ""], ["Year Ended June 30,", "2019", "2018", "2017"],
                 ["Write-offs", "(116)", "(98)", "(106)"]]  # fmt: skip
    assert shape_from_rows(allowance).prompt_columns()[1:] == ["2019", "2018", "2017"]
    priced = [
        ["", "", "(in millions)", ""],
        ["Transportation", "$  160", "$  144", "$  16"],
        ["Other", "49", "44", "5"],
    ]
    assert shape_from_rows(priced).header_rows == 1  # amounts, however spaced, name no column
    titled = [["(in millions, except per share amounts)", "2019", "2018"], ["", "Statements of Operations Data:", ""],
              ["Total revenues", "$39,506", "$39,383"]]  # fmt: skip
    assert shape_from_rows(titled).header_rows == 1  # a section's title in a body row
    unnamed = [["", "Q1", "Q2"], ["", "12.5", "13.0"], ["Net", "1.0", "2.0"]]  # amounts without a name are body rows
    assert shape_from_rows(unnamed).header_rows == 1
    # A label reaches over headings of one kind: "Percent Change" over Actual and Constant, not the 2018 after them.
    oracle = [["", "", "Percent Change", "", ""], ["(Dollars in millions)", "2019", "Actual", "Constant", "2018"],
              ["Americas", "$18,410", "2%", "3%", "$18,030"]]  # fmt: skip
    assert shape_from_rows(oracle).prompt_columns()[1:] == [
        "2019",
        "Percent Change - Actual",
        "Percent Change - Constant",
        "2018",
    ]
    # A header row with no label at all (TAT-QA dev's blank top rows) spans nothing.
    assert shape_from_rows([["", "", ""], ["", "2019", "2018"], ["Sales", "12", "10"]]).prompt_columns() == [
        "",
        "2019",
        "2018",
    ]
    # A count the source gives is kept.
    assert shape_from_rows(fiscal, header_rows=1).header_rows == 1
