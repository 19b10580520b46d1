"""One table representation: rectangular file grids, flattened prompt headers and HTML spans, from every source."""

from __future__ import annotations

from pathlib import Path

from curation.latex import extract_paper
from curation.table_shape import Span, is_rectangular, shape_from_extracted, shape_from_frozen, shape_from_rows

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
