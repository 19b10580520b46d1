"""Constructs of real papers (tests/curation/latex/fixtures/constructs, truth written by hand) and the
macros whose text lives elsewhere: acronyms, siunitx numbers, asymmetric errors, bilingual captions."""

from __future__ import annotations

import json

import pytest

from curation.latex import extract_paper
from tests.curation.latex.conftest import FIXTURES

CONSTRUCTS = FIXTURES / "constructs"
TRUTH = {
    name: tables for name, tables in json.loads((CONSTRUCTS / "truth.json").read_text()).items() if name != "_about"
}
# (file, table index, field): where the extractor still reads a table differently from the truth (see README.md).
KNOWN_MISSES = {
    ("latex_book_tables.tex", 21, "header_rows"),
    ("gomap_rowcolor_threeparttable.tex", 1, "notes"),
}


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_each_real_table_reads_as_its_hand_written_truth(name: str) -> None:
    tables = extract_paper(CONSTRUCTS / name).tables
    assert len(tables) == len(TRUTH[name])
    for index, (table, truth) in enumerate(zip(tables, TRUTH[name], strict=True)):
        found = {"caption": table.caption, "cells": table.grid, "header_rows": table.header_rows, "notes": table.notes}
        for field, expected in truth.items():
            if (name, index, field) in KNOWN_MISSES:
                assert found[field] != expected, f"{name} #{index} {field} is right now: drop it from KNOWN_MISSES"
            else:
                assert found[field] == expected, f"{name} #{index} {field}"


def _table(extract_latex, body: str, preamble: str = ""):
    paper = extract_latex(body, preamble)
    assert paper.tables, paper.warnings
    return paper.tables[0]


def test_acronyms_print_their_terms_wherever_they_are_defined(extract_latex) -> None:
    preamble = (
        r"\newacronym{cnn}{CNN}{convolutional neural network}"
        r"\DeclareAcronym{rl}{short = RL, long = {reinforcement learning}}"
    )
    body = (
        r"\begin{table}\caption{\acf{cnn} results}\begin{tabular}{ll}"
        r"\ac{cnn} & \acs{leo} \\ \acl{leo} & \ac*{erp} \\ \acp{cnn} & \Acl{rl} \\ \ac{unknown} & \gls{rl} \\"
        r"\end{tabular}\end{table}"
        r"\begin{acronym}\acro{leo}[LEO]{Low Earth Orbit}\acro{erp}{Enterprise Resource Planning}\end{acronym}"
    )
    table = _table(extract_latex, body, preamble)
    assert table.caption == "convolutional neural network (CNN) results"
    assert table.rows == [
        ["CNN", "LEO"],
        ["Low Earth Orbit", "erp"],
        ["CNNs", "Reinforcement learning"],
        ["unknown", "RL"],
    ]


def test_siunitx_numbers_and_asymmetric_errors(extract_latex) -> None:
    body = (
        r"\begin{table}\caption{N}\begin{tabular}{lll}"
        r"\num{4.74e5} & \num{1.2 +- 0.3} & \SI{2e-3}{\second} \\"
        r"$4.21_{-2.60}^{+11.2}$ & ${21.35}^{+0.37}_{-0.26}$ & $2.70_{-0.22}^{+0.24}\times 10^{-4}$ \\"
        r"\end{tabular}\end{table}"
    )
    assert _table(extract_latex, body).rows == [
        ["4.74 × 10^5", "1.2 ± 0.3", "2 × 10^-3 s"],
        ["4.21 +11.2/-2.60", "21.35 +0.37/-0.26", "2.70 +0.24/-0.22 × 10^-4"],
    ]


def test_longtable_last_foot_is_notes_and_its_caption_line_no_row(extract_latex) -> None:
    body = r"""\begin{longtable}{ll}
    \caption[Short]{Long caption}\label{tab:l} \\ \toprule A & B \\ \midrule \endfirsthead
    \caption[]{Long caption (continued)} \\ \toprule A & B \\ \midrule \endhead
    \midrule \multicolumn{2}{r}{continued} \\ \endfoot
    \bottomrule \multicolumn{2}{l}{Note: values in ms.} \\ \endlastfoot
    x & 1 \\ y & 2 \\ \end{longtable}"""
    table = _table(extract_latex, body)
    assert (table.caption, table.rows, table.header_rows, table.notes) == (
        "Long caption",
        [["A", "B"], ["x", "1"], ["y", "2"]],
        1,
        ["Note: values in ms."],
    )


def test_text_under_the_tabular_in_its_float_is_a_note(extract_latex) -> None:
    body = r"""\begin{table}\caption{T}\begin{tabular*}{\linewidth}{@{\extracolsep{\fill}}lc} A & B \\ x & 1 \\
    \end{tabular*}\par\vspace{2pt}\begin{minipage}{\linewidth}\scriptsize\textit{Notes:} Values in ms.
    \end{minipage}\label{tab:t}\end{table}
    \begin{table}\centering\small\begin{tabular}{c} y \\ \end{tabular}\vspace{3pt}\caption{U}\end{table}"""
    tables = extract_latex(body).tables
    assert [(table.rows, table.notes) for table in tables] == [
        ([["A", "B"], ["x", "1"]], ["Notes: Values in ms."]),
        ([["y"]], []),
    ]


def test_tablenotes_are_notes_one_per_item(extract_latex) -> None:
    body = r"""\begin{table}\begin{threeparttable}\caption{T}\begin{tabular}{lc}\toprule A & B\tnote{a} \\
    \midrule x & 1 \\ \bottomrule\end{tabular}\begin{tablenotes}[flushleft]\footnotesize
    \item[a] First note. \item Second note.\end{tablenotes}\end{threeparttable}\end{table}"""
    table = _table(extract_latex, body)
    assert (table.rows, table.notes) == ([["A", "B"], ["x", "1"]], ["a First note.", "Second note."])


def test_bicaption_diagbox_and_rotated_floats(extract_latex) -> None:
    body = r"""\begin{sidewaystable}\bicaption[短]{中文表题}[Short]{English caption}
    \begin{tabular}{ccc}\diagbox[width=5em]{Row}{Column} & a & \backslashbox{x}{y}{z} \\ \hline 1 & 2 & 3 \\
    \end{tabular}\end{sidewaystable}"""
    table = _table(extract_latex, body)
    assert (table.caption, table.rows, table.kind) == (
        "中文表题 / English caption",
        [["Row / Column", "a", "x / y / z"], ["1", "2", "3"]],
        "sidewaystable",
    )


def test_siunitx_s_columns_print_their_numbers(extract_latex) -> None:
    body = r"""\newcolumntype{Y}{S[table-format=1.2e1]}
    \begin{table}\caption{S}\begin{tabular}{lS[table-format=1.2]Yc}\toprule
    {Model} & {Rate} & {Events} & Raw \\ \midrule
    A & 1.2 +- 0.3 & 4.74e5 & 4.74e5 \\ B & 0.5 & 2e-3 & x \\ \bottomrule\end{tabular}\end{table}"""
    assert _table(extract_latex, body).rows == [
        ["Model", "Rate", "Events", "Raw"],
        ["A", "1.2 ± 0.3", "4.74 × 10^5", "4.74e5"],
        ["B", "0.5", "2 × 10^-3", "x"],
    ]


def test_a_decimal_comma_is_a_decimal_point_to_siunitx_but_not_in_a_cell_of_its_own_type(extract_latex) -> None:
    body = r"""\begin{table}\caption{C}\begin{tabular}{lSl}
    Current & 0,5 & \qty{-1,236}{A} \\ Observations & \multicolumn{1}{c}{16,962} & \num{1,5e3} \\
    \end{tabular}\end{table}"""
    assert _table(extract_latex, body).rows == [
        ["Current", "0.5", "-1.236 A"],
        ["Observations", "16,962", "1.5 × 10^3"],
    ]


def test_columns_joined_by_at_expressions_read_as_one_cell(extract_latex) -> None:
    body = r"""\begin{table}\caption{J}\begin{tabular}{@{}lr@{.}lS@{${}\pm{}$}S@{}}\toprule
    Item & \multicolumn{2}{c}{Amount} & \multicolumn{2}{c}{Time (ms)} \\ \midrule
    A & 12345&6 & 85.6 & 0.3 \\ B & 765&43 & 1e3 & 12 \\ \bottomrule\end{tabular}\end{table}"""
    table = _table(extract_latex, body)
    assert table.grid == [
        ["Item", "Amount", "Time (ms)"],
        ["A", "12345.6", "85.6 ± 0.3"],
        ["B", "765.43", "1 × 10^3 ± 12"],
    ]
    assert table.header_rows == 1


def test_a_minipages_three_optional_arguments_and_width_are_layout_not_text(extract_latex) -> None:
    """\\begin{minipage}[pos][height][inner-pos]{width}: the four arguments are layout, in a table or in the text."""
    body = r"""Before. \begin{minipage}[t][2cm][c]{0.4\linewidth}Body words.\end{minipage} After.
    \begin{table}\caption{T}\begin{tabular}{lc} A & B \\
    x & \begin{minipage}[b][1em][t]{3em}12.5\end{minipage} \\ \end{tabular}\end{table}"""
    paper = extract_latex(body)
    text = " ".join(paragraph.text for paragraph in paper.paragraphs)
    assert "Body words." in text and "2cm" not in text and "linewidth" not in text and "0.4" not in text
    assert paper.tables[0].rows == [["A", "B"], ["x", "12.5"]]
