"""Tables render as a reader sees them: each span drawn once with its row/col span, nothing shifted."""

from __future__ import annotations

from curation.tables_html import table_layout


def texts(layout):
    return [[(cell["text"], cell["rowspan"], cell["colspan"]) for cell in row] for row in layout]


def test_multicolumn_header_is_one_cell():
    grid = [["Model", "Dev", "Dev"], ["A", "1", "2"]]
    spans = [{"row": 0, "cell": 1, "top": 0, "column": 1, "rowspan": 1, "colspan": 2}]
    assert texts(table_layout(grid, spans)) == [
        [("Model", 1, 1), ("Dev", 1, 2)],
        [("A", 1, 1), ("1", 1, 1), ("2", 1, 1)],
    ]


def test_multirow_covers_the_cells_below():
    grid = [["Group", "x"], ["Group", "y"], ["Other", "z"]]
    spans = [{"row": 0, "cell": 0, "top": 0, "column": 0, "rowspan": 2, "colspan": 1}]
    assert texts(table_layout(grid, spans)) == [
        [("Group", 2, 1), ("x", 1, 1)],
        [("y", 1, 1)],
        [("Other", 1, 1), ("z", 1, 1)],
    ]


def test_spans_reaching_past_the_grid_are_clipped_and_overlaps_ignored():
    grid = [["a", "b"], ["c", "d"]]
    spans = [
        {"top": 1, "column": 0, "rowspan": 5, "colspan": 9},
        {"top": 1, "column": 1, "rowspan": 1, "colspan": 1},
    ]
    assert texts(table_layout(grid, spans)) == [[("a", 1, 1), ("b", 1, 1)], [("c", 1, 2)]]


def test_ragged_rows_are_padded():
    assert texts(table_layout([["a", "b"], ["c"]])) == [[("a", 1, 1), ("b", 1, 1)], [("c", 1, 1), ("", 1, 1)]]
