"""End-to-end extraction of the fixture papers: files, tables, paragraphs and links."""

from __future__ import annotations

import pytest

from curation.latex import extract_paper

from .conftest import FIXTURES


@pytest.fixture(scope="module")
def multifile():
    return extract_paper(FIXTURES / "multifile")


@pytest.fixture(scope="module")
def floats():
    return extract_paper(FIXTURES / "floats" / "paper.tex")


def _table(result, label):
    return next(table for table in result.tables if table.label == label)


def test_main_file_and_followed_inputs(multifile):
    assert multifile.main_file == "main.tex"
    assert multifile.files == ["main.tex", "macros.tex", "sections/results.tex", "tables/ablation.tex",
                               "sections/appendix.tex"]  # fmt: skip
    assert multifile.unused_files == ["orphan.tex"]
    assert multifile.title == "A Test Paper on SciTaT"


def test_only_live_tables_in_document_order(multifile):
    assert [table.label for table in multifile.tables] == ["tab:main", "ablation", "tab:halves"]
    assert [table.number for table in multifile.tables] == ["1", "2", "3"]
    captions = " ".join(table.caption for table in multifile.tables)
    for dead in ("Dead", "Commented", "Percent", "Orphan"):
        assert dead not in captions


def test_table_fields(multifile):
    main = _table(multifile, "tab:main")
    assert main.env == "table*"
    assert main.kind == "table"
    assert main.file == "sections/results.tex"
    assert main.in_appendix is False
    assert main.caption == "Main results of CaR. See Table 2."
    assert main.caption_references == ["ablation"]
    assert "\\begin{tabular}" in main.raw


def test_multirow_multicolumn_hidden_column_and_macros_in_cells(multifile):
    main = _table(multifile, "tab:main")
    assert main.rows == [
        ["Model", "Acc."],
        ["", "Dev", "Test"],
        ["Baseline", "80.1", "79.5"],
        ["CaR", "87.3", "86.0 ± 0.2"],
    ]
    spans = {(span.row, span.cell): (span.rowspan, span.colspan) for span in main.spans}
    assert spans == {(0, 0): (2, 1), (0, 1): (1, 2)}
    assert main.grid[0] == ["Model", "Acc.", "Acc."]
    assert main.grid[1] == ["Model", "Dev", "Test"]
    assert all(len(row) == 3 for row in main.grid)


def test_line_breaks_inside_shortstack_and_makecell_do_not_end_rows(multifile):
    assert _table(multifile, "ablation").rows == [["Setting", "F1"], ["w/o calc", "70.2"], ["w/o reason", "68.9%"]]


def test_subtables_keep_their_labels_and_appendix_flag(multifile):
    halves = _table(multifile, "tab:halves")
    assert halves.in_appendix is True
    assert halves.file == "sections/appendix.tex"
    assert [(sub.label, sub.caption, sub.number) for sub in halves.subtables] == [
        ("tab:left", "Left", "3a"),
        ("tab:right", "Right", "3b"),
    ]
    assert halves.rows == [["A", "B"], ["1", "2"], ["C", "D"], ["3", "4"]]
    assert [(sub.first_row, sub.row_count) for sub in halves.subtables] == [(0, 2), (2, 2)]


def test_figure_with_tabular_is_not_a_table(multifile, floats):
    assert all("figure" not in table.caption.lower() for table in [*multifile.tables, *floats.tables])


def test_paragraphs_sections_and_links(multifile):
    texts = [paragraph.text for paragraph in multifile.paragraphs]
    assert texts[0] == "We study tables."
    intro = multifile.paragraphs[1]
    assert intro.section == "Introduction"
    assert intro.text == (
        "This is the first paragraph. It costs 5% more than before. Results are in Table 1, "
        "and Tables 1 and 2 summarise them [smith2020, lee2021]."
    )
    assert intro.mentions == ["tab:main", "ablation"]
    assert intro.tables == [0, 1]
    second = multifile.paragraphs[2]
    assert second.text == "Second paragraph refers to Section 2 only."
    assert second.mentions == []
    assert second.references == ["sec:results"]


def test_references_in_comments_and_captions_are_not_paragraph_links(multifile):
    mentioned = {label for paragraph in multifile.paragraphs for label in paragraph.mentions}
    assert "tab:hidden" not in mentioned
    results = next(paragraph for paragraph in multifile.paragraphs if paragraph.section == "Results")
    assert results.mentions == ["tab:main"]
    assert results.text == "CaR beats the baselines by 3.1 points on SciTaT (see Table 1)."


def test_appendix_paragraph_links_subtable_labels_to_parent(multifile):
    appendix = multifile.paragraphs[-1]
    assert appendix.in_appendix is True
    assert appendix.section_number == "A"
    assert appendix.text == "Subtables 3a and 3b of Table 3 are in the appendix."
    assert appendix.mentions == ["tab:left", "tab:right", "tab:halves"]
    assert appendix.tables == [2]


def test_other_floats_are_marked(floats):
    kinds = [(table.label, table.kind, table.env) for table in floats.tables]
    assert kinds == [
        ("wrap", "wraptable", "wraptable"),
        ("rot", "sidewaystable", "sidewaystable"),
        ("tpt", "table", "table"),
        ("tab:x", "table", "table"),
        ("tab:long", "longtable", "longtable"),
    ]


def test_tabularx_and_xparse_macros(floats):
    assert _table(floats, "rot").rows == [["Name", "Value"], ["alpha", "1/–"], ["beta", "2/x"]]


def test_threeparttable_tabular_star_nested_tabular_and_negative_multirow(floats):
    table = _table(floats, "tpt")
    assert table.caption == "Three parts"
    assert table.rows == [["x", "both"], ["", "2", "3"], ["low", "5", "nested cell"]]
    assert table.grid == [["x", "both", "both"], ["low", "2", "3"], ["low", "5", "nested cell"]]
    assert table.notes == ["a A note."]


def test_several_tabulars_in_one_float(floats):
    table = _table(floats, "tab:x")
    assert table.rows == [["L1", "L2"], ["R1", "R2", "R3"]]
    assert table.grid == [["L1", "L2", ""], ["R1", "R2", "R3"]]


def test_longtable_heads_and_feet_appear_once(floats):
    table = _table(floats, "tab:long")
    assert table.caption == "Long one"
    assert table.rows == [["Key", "Val"], ["k1", "v1"], ["k2", "v2"]]


def test_ref_family_and_user_ref_macros_link(floats):
    first = floats.paragraphs[0]
    assert first.text == (
        "Wrapped numbers are in Table 1 and the rotated ones in 2. Notes: Table 3 and Tables 4 and 5."
    )
    assert first.mentions == ["wrap", "rot", "tpt", "tab:x", "tab:long"]


def test_list_items_are_paragraphs_and_figure_refs_are_not_mentions(floats):
    texts = [paragraph.text for paragraph in floats.paragraphs]
    assert "Run-in A paragraph about Figure 1 and Equation (1). a = b" in texts
    assert "First item about 1." in texts
    assert "Second item." in texts
    assert texts[-1] == "After the list."
    figure_paragraph = next(paragraph for paragraph in floats.paragraphs if "Figure 1" in paragraph.text)
    assert figure_paragraph.mentions == []


def test_several_main_candidates_pick_the_one_reaching_most_content():
    result = extract_paper(FIXTURES / "drafts")
    assert result.main_file == "main.tex"
    assert result.main_file_candidates == ["main.tex", "old_draft.tex"]
    assert any("chose main.tex" in warning and "old_draft.tex" in warning for warning in result.warnings)
    assert [table.caption for table in result.tables] == ["Real table"]


def test_include_cycles_and_missing_files_are_warnings():
    result = extract_paper(FIXTURES / "cycle")
    assert [paragraph.text for paragraph in result.paragraphs] == ["Start. In a. In b."]
    assert any("cycle" in warning for warning in result.warnings)
    assert any("missing-file" in warning for warning in result.warnings)


def test_subfile_is_not_a_rival_main_file(multifile):
    assert not any("several main-file candidates" in warning for warning in multifile.warnings)


def test_a_label_inside_a_section_title_names_that_section_and_nameref_prints_its_title(extract_latex):
    # llm-stylometry (ContextLab/llm-stylometry, paper/main.tex, MIT): `\subsection{Data and preprocessing
    # \label{sec:data}}`, cited later as "Sec.~\ref{sec:data}", read "Sec. ??"; "(see \nameref{subsec:ablation})",
    # which prints the subsection's title, read its number once the label was found.
    result = extract_latex(
        r"\section{Methods}\subsection{Data and preprocessing \label{sec:data}} We used eight authors."
        r"\section{Results}\label{sec:results} We tested eight authors (see Sec.~\ref{sec:data} and \cref{sec:data})."
        r" As in \nameref{sec:data} and \nameref{sec:results}."
    )
    assert [paragraph.text for paragraph in result.paragraphs] == [
        "We used eight authors.",
        "We tested eight authors (see Sec. 1.1 and Section 1.1). As in Data and preprocessing and Results.",
    ]
