"""The one chart module: pure (no Django), and every kind of chart colours its n-th series alike."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from curation import charts


def test_every_chart_gives_the_same_series_the_same_palette_colour():
    rows = [{"user": "a", "x": 2, "y": 4}]
    line = charts.line_chart(rows, series=("x", "y"), label=lambda row: row["user"])
    bars = charts.grouped_bars(rows, label="user", series=("x", "y"))
    counts = charts.bar_chart({"x": 2, "y": 4})
    grouped = charts.grouped_chart({"a": {"x": 0.2, "y": 0.4}}, series=(("x", "X"), ("y", "Y")))
    firsts = {line["lines"][0]["colour"], bars["legend"][0]["colour"], counts["bars"][0]["colour"]}
    assert firsts == {grouped["bars"][0]["colour"]} == {charts.PALETTE[0]}
    assert counts["bars"][1]["colour"] == grouped["bars"][1]["colour"] == charts.PALETTE[1]
    assert charts.colour(len(charts.PALETTE)) == charts.PALETTE[0]


def _imports(path: str) -> set[str]:
    tree = ast.parse(Path(path).read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def test_the_chart_module_imports_only_the_standard_library_and_the_one_rounding():
    from curation.toolkit import numbers

    standard = set(sys.stdlib_module_names) | {"__future__"}
    assert {name.split(".")[0] for name in _imports(charts.__file__) - {"curation.toolkit.numbers"}} <= standard
    assert {name.split(".")[0] for name in _imports(numbers.__file__)} <= standard


def test_chart_labels_round_half_up_as_the_tables_do():
    grouped = charts.grouped_chart({"a": {"x": 0.6345, "y": 0.4015}}, series=(("x", "X"), ("y", "Y")))
    assert [bar["value"] for bar in grouped["bars"]] == ["63.5", "40.2"]
    assert [bar["percent"] for bar in charts.bar_chart({"x": 1, "y": 15})["bars"]] == ["6.3", "93.8"]
