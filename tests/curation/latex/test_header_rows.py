"""Header rows: the rule that closes a header survives tokenizing, and real-paper tables get the count a reader sees."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from curation.latex import extract_paper
from curation.latex.headers import header_rows, is_number
from curation.latex.macros import MacroTable
from curation.latex.results import CellSpan
from curation.latex.tables import parse_tabular
from curation.latex.text import TextRenderer
from curation.latex.tokens import tokenize
from curation.latex.tree import Env, build_tree
from curation.table_shape import shape_from_rows

from .conftest import FIXTURES

HEADERS = FIXTURES / "headers"
EXPECTED: dict[str, int] = json.loads((HEADERS / "expected.json").read_text(encoding="utf-8"))


def _parse(source: str):
    env = next(node for node in build_tree(tokenize(source), []) if isinstance(node, Env))
    return parse_tabular(env, TextRenderer({}), MacroTable().column_types)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_paper_shaped_tables_get_the_header_rows_a_reader_sees(name):
    (table,) = extract_paper(HEADERS / name).tables
    assert table.header_rows == EXPECTED[name]


def test_every_fixture_is_labelled_and_there_are_enough_of_them():
    assert sorted(EXPECTED) == sorted(path.name for path in HEADERS.glob("*.tex"))
    assert len(EXPECTED) >= 8


def test_rules_are_kept_above_the_rows_they_close_and_below_the_last():
    parsed = _parse(
        r"\begin{tabular}{lc}\toprule A & B \\ \cmidrule(lr){2-2} & x \\ \midrule \\ c & 1 \\ \bottomrule\end{tabular}"
    )
    assert parsed.rows == [["A", "B"], ["", "x"], ["c", "1"]]
    # The empty row between \midrule and "c" is gone, its rule moves down to the next row a reader sees.
    assert parsed.rules_before == [("toprule",), ("cmidrule",), ("midrule",)]
    assert parsed.rules_after == ("bottomrule",)
    assert parsed.header_rows == 2


def test_the_midrule_decides_where_a_header_of_numbers_ends():
    rows = [["", "Shots"], ["Model", "1", "5"], ["BERT", "61.2", "70.4"], ["XLM", "60.0", "69.9"]]
    spans = [CellSpan(row=0, cell=1, column=1, top=0, rowspan=1, colspan=2)]
    with_rule = header_rows(rows, spans, [("toprule",), (), ("midrule",), ()])
    without_rule = header_rows(rows, spans, [("toprule",), (), (), ()])
    assert (with_rule, without_rule) == (2, 1)


def test_a_header_row_reached_by_a_multirow_written_below_it_stays_in_the_header():
    # FastRecon's table: groups, \\midrule, method names, then `\\multirow{-2}{*}{Dataset}` and citations, \\midrule.
    rows = [["", "", "Image"], ["", "", "TDG", "Ours"], ["Dataset", "k", "[a]", "(ours)"], ["MVTec", "2", "71", "91"]]
    spans = [
        CellSpan(row=0, cell=2, column=2, top=0, rowspan=1, colspan=2),
        CellSpan(row=2, cell=0, column=0, top=1, rowspan=2, colspan=1),
        CellSpan(row=2, cell=1, column=1, top=1, rowspan=2, colspan=1),
    ]
    assert header_rows(rows, spans, [("toprule",), ("midrule",), (), ("midrule",)]) == 3


def test_bold_data_rows_and_group_labels_are_body_rows(extract_latex):
    result = extract_latex(
        r"""\begin{table}\begin{tabular}{lcc}
        \textbf{Model} & \textbf{EM} & \textbf{F1} \\
        \textbf{Ours} & \textbf{71.0} & \textbf{80.2} \\
        \multicolumn{3}{l}{\textit{Baselines}} \\
        TAGOP & 50.1 & 58.0 \\
        \end{tabular}\end{table}
        \begin{table}\begin{tabular}{lcc}\toprule
        Model & EM & F1 \\
        \multicolumn{3}{c}{\textit{Fine-tuned}} \\
        \midrule
        TAGOP & 50.1 & 58.0 \\
        \bottomrule\end{tabular}\end{table}"""
    )
    assert [table.header_rows for table in result.tables] == [1, 1]


def test_a_rule_above_a_total_row_does_not_make_the_body_a_header():
    rows = [["Language", "Tokens"], ["Wolof", "120k"], ["Hausa", "402k"], ["Total", "522k"]]
    assert header_rows(rows, [], [("hline",), (), (), ("hline",)]) == 1


def test_a_table_of_key_value_rows_has_no_header():
    rows = [["Learning rate", "2e-5"], ["Batch size", "32"], ["Epochs", "3"]]
    assert header_rows(rows, [], [("toprule",), (), ()]) == 0
    assert header_rows([], [], []) == 0


@pytest.mark.parametrize(
    ("text", "number"),
    [("85.6", True), ("-0.5", True), ("12%", True), ("85.62 ± 0.09", True), ("1,024", True), ("2e-5", True),
     (".5", True), ("120k", True), ("--", False), ("Model", False), ("v2", False), ("", False)],
)  # fmt: skip
def test_numbers_are_read_as_a_reader_reads_them(text, number):
    assert is_number(text) is number


def test_extract_paper_json_gives_each_tables_header_rows():
    out = io.StringIO()
    call_command("extract_paper", str(HEADERS / "pandas_multiindex.tex"), "--json", stdout=out)
    (table,) = json.loads(out.getvalue())["tables"]
    assert table["header_rows"] == 3
    assert table["rows"][2] == ["model", "", "", "", ""]


def test_several_tabulars_in_one_float_are_separate_grids_with_the_text_between(extract_latex):
    result = extract_latex(
        r"""\begin{table}\centering\caption{Two views.}\label{tab:two}
        \resizebox{\linewidth}{!}{\begin{tabular}{lcc}\toprule Model & Dev & Test \\ \midrule A & 1.0 & 2.0 \\
        \bottomrule\end{tabular}}
        \vspace{2mm}
        \textbf{(b)} Ablations on \emph{dev}
        \begin{tabular}{ll}\hline Setting & F1 \\ \hline w/o tools & 60.1 \\ w/o text & 58.3 \\ \hline\end{tabular}
        \end{table}"""
    )
    (table,) = result.tables
    assert table.header_rows == 1
    assert [(sub.caption, sub.first_row, sub.row_count, sub.header_rows) for sub in table.subtables] == [
        ("", 0, 2, 1),
        ("(b) Ablations on dev", 2, 3, 1),
    ]
    assert table.rows[2] == ["Setting", "F1"]


def test_a_multirow_reaching_the_last_row_does_not_make_the_whole_table_a_header():
    rows = [["x", "both"], ["", "2", "3"], ["low", "5", "nested cell"]]
    spans = [
        CellSpan(row=0, cell=1, column=1, top=0, rowspan=1, colspan=2),
        CellSpan(row=2, cell=0, column=0, top=1, rowspan=2, colspan=1),
    ]
    # `\multirow{-2}{*}{low}` written in the last row labels rows 1 and 2 alike: both are body rows ("low").
    assert header_rows(rows, spans, [("toprule",), (), ()]) == 1


def test_two_header_rows_separated_by_a_midrule_count_as_two():
    groups = [["Model", "Dev"], ["", "Acc", "F1"], ["A", "1", "2"], ["B", "3", "4"]]
    group_span = [CellSpan(row=0, cell=1, column=1, top=0, rowspan=1, colspan=2)]
    assert header_rows(groups, group_span, [("toprule",), ("midrule",), ("midrule",), ()]) == 2
    units = [["Model", "Time", "Memory"], ["", "(s)", "(GB)"], ["A", "1", "2"], ["B", "3", "4"]]
    assert header_rows(units, [], [("toprule",), ("midrule",), ("midrule",), ()]) == 2
    # A table ruled under every row: the first rule closes a one-row header.
    ruled = [["Model", "Note"], ["A", "good"], ["B", "bad"], ["C", "fair"]]
    assert header_rows(ruled, [], [("hline",), ("hline",), ("hline",), ("hline",)]) == 1
    # Summary rows set off by a second rule are body rows.
    summary = [["Model", "Acc"], ["A", "1"], ["B", "2"], ["Mean", "1.5"]]
    assert header_rows(summary, [], [("toprule",), ("midrule",), (), ("midrule",)]) == 1


def test_a_float_without_a_tabular_has_zero_header_rows(extract_latex):
    result = extract_latex(r"\begin{table}\caption{An image}\includegraphics{t.png}\end{table}")
    assert result.tables[0].rows == [] and result.tables[0].header_rows == 0


def test_layout_arguments_around_tabulars_are_not_text_between_them(extract_latex):
    result = extract_latex(
        r"""\begin{table}\caption{Side by side.}
        \begin{adjustbox}{max width=\linewidth}
        \begin{minipage}[t]{0.48\linewidth}\begin{tabular}{lc}\toprule Model & EM \\ \midrule A & 1.0 \\
        \bottomrule\end{tabular}\end{minipage}\hfill
        \begin{minipage}[t]{0.48\linewidth}\small Test split: \begin{tabular}{lc}\toprule Model & F1 \\ \midrule
        A & 2.0 \\ \bottomrule\end{tabular}\end{minipage}
        \end{adjustbox}\end{table}"""
    )
    (table,) = result.tables
    parts = [(sub.caption, sub.first_row, sub.row_count) for sub in table.subtables]
    assert parts == [("", 0, 2), ("Test split:", 2, 2)]


def test_clines_under_every_row_and_model_numbering_rows():
    grid_rows = [["", "A", "B"], ["1", "x", ""], ["2", "", "x"], ["3", "x", ""]]
    ruled = [(), ("cline",), ("cline",), ("cline",)]
    assert header_rows(grid_rows, [], ruled) == 1
    numbered = [["", "Score", "Score"], ["d (m)", "(1)", "(2)"], ["100", "0.01**", "0.008"], ["", "(0.1)", "(0.2)"]]
    assert header_rows(numbered, [], [("toprule",), (), ("midrule",), ()]) == 2


# infodemic's table (benchmarks/papers/templates/infodemic.tex): "False" and "True" sit over the middle one of
# their columns each, without \multicolumn, a \cmidrule under the row of names groups them.
INFODEMIC = r"""\begin{tabular}[t]{lccccccc}
 & \textbf{Sharing} &  & \textbf{False} &  &  & \textbf{True} & \\
 & \textbf{Discernment} & Any sharing & Messenger & Timeline & Any sharing & Messenger & Timeline\\\cmidrule(lr){2-2}
 \cmidrule(lr){3-5} \cmidrule(lr){6-8} \multicolumn{4}{l}{\textbf{Headline treatment effects}} \\
\hspace{1em}Fact check & \num{-0.031} & \num{-0.006} & \num{-0.008} & \num{-0.003} & \num{0.001} & \num{0.001} & 0\\
 & (\num{0.036}) & (\num{0.011}) & (\num{0.011}) & (\num{0.011}) & (\num{0.011}) & (\num{0.011}) & (0.01)\\
\hspace{1em}Facebook tips & \num{0.054} & \num{-0.020} & \num{-0.020} & \num{-0.016} & \num{0.005} & \num{0.010} & 0\\
\end{tabular}"""


def test_group_labels_written_without_multicolumn_keep_the_row_of_names_under_them_in_the_header():
    table = _parse(INFODEMIC)
    assert table.header_rows == 2
    columns = shape_from_rows(table.grid, header_rows=table.header_rows).prompt_columns()
    assert columns[1] == "Sharing - Discernment"
    assert columns[3] == "False - Messenger"


def test_a_group_label_written_without_multicolumn_spans_the_columns_its_cmidrule_groups():
    table = _parse(INFODEMIC)
    assert shape_from_rows(table.grid, header_rows=table.header_rows).prompt_columns()[1:] == [
        "Sharing - Discernment",
        "False - Any sharing",
        "False - Messenger",
        "False - Timeline",
        "True - Any sharing",
        "True - Messenger",
        "True - Timeline",
    ]
