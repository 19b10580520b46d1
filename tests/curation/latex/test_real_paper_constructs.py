"""Constructs met in real arXiv sources, each reduced to a small synthetic document."""

from __future__ import annotations


def test_let_saved_kernel_command_then_renewed_does_not_loop(extract_latex):
    result = extract_latex(
        r"\begin{table}\caption{C}\begin{tabular}{c} \mh-Large \\ \end{tabular}\end{table}"
        "\n\nText with {\\footnotesize small} and \\mh.",
        preamble=r"\newcommand{\mh}{\textsc{MHA}}\let\oldfootnotesize\footnotesize"
        r"\renewcommand{\footnotesize}{\oldfootnotesize\itshape}",
    )
    assert not result.warnings
    assert result.tables[0].rows == [["MHA-Large"]]
    assert result.paragraphs[0].text == "Text with small and MHA."


def test_one_recursive_macro_does_not_stop_the_others(extract_latex):
    result = extract_latex(r"\loop then \name.", preamble=r"\newcommand{\loop}{x\loop}\newcommand{\name}{Parti}")
    assert any("\\loop expands to itself" in warning for warning in result.warnings)
    assert result.paragraphs[0].text == "then Parti."


def test_run_in_paragraph_heading_followed_by_blank_line_opens_the_next_paragraph(extract_latex):
    result = extract_latex("\\paragraph{Setup}\n\nWe train.\n\nAnother one.")
    assert [paragraph.text for paragraph in result.paragraphs] == ["Setup We train.", "Another one."]


def test_starred_section_has_no_number(extract_latex):
    result = extract_latex("\\section{One}\nA.\n\\section*{Limitations}\nB.\n\\section{Two}\nC.")
    assert [(paragraph.section, paragraph.section_number) for paragraph in result.paragraphs] == [
        ("One", "1"),
        ("Limitations", ""),
        ("Two", "2"),
    ]


def test_bibliography_inside_a_size_group_is_not_text(extract_latex):
    result = extract_latex("Body.\n\n{\\small\n\\bibliographystyle{ieee_fullname}\n\\bibliography{egbib}\n}")
    assert [paragraph.text for paragraph in result.paragraphs] == ["Body."]


def test_label_inside_caption_names_the_table(extract_latex):
    result = extract_latex(
        r"""See Table~\ref{tab:sizes} and Table~\ref{tab:auto}.
        \begin{table}\begin{tabular}{c} a \\ \end{tabular}
        \caption{\label{tab:sizes} Sizes.}\end{table}
        \begin{table}\begin{tabular}{c} b \\ \end{tabular}
        \caption{Scores. \label{tab:auto}}\end{table}"""
    )
    assert [(table.label, table.caption) for table in result.tables] == [
        ("tab:sizes", "Sizes."),
        ("tab:auto", "Scores."),
    ]
    assert result.paragraphs[0].text == "See Table 1 and Table 2."
    assert result.paragraphs[0].mentions == ["tab:sizes", "tab:auto"]


def test_two_argument_counter_and_length_commands_leave_no_text(extract_latex):
    result = extract_latex(
        "Before.\n\n\\footnotetext[5]{\\url{https://example.org}}\n\\addtocounter{footnote}{1}\n"
        "\\setlength{\\tabcolsep}{4pt}\\setcounter{table}{2}\n\nAfter."
    )
    assert [paragraph.text for paragraph in result.paragraphs] == ["Before.", "After."]


def test_positioned_textblock_is_not_body_text(extract_latex):
    result = extract_latex(
        "Text.\n\n\\begin{textblock*}{100mm}(\\dimexpr 25mm,\\dimexpr\\paperheight - 26mm)\n"
        "\\includegraphics{logo.pdf}\n\\end{textblock*}"
    )
    assert [paragraph.text for paragraph in result.paragraphs] == ["Text."]


def test_table_building_macro_that_sets_arraystretch_expands_into_subtables(extract_latex):
    result = extract_latex(
        r"""\newcommand{\panel}[2]{\begin{subtable}{0.3\textwidth}\caption{#1}
        \renewcommand\arraystretch{0.9}\begin{tabular}{lc} M & S \\ \midrule #2 \end{tabular}\end{subtable}}
        See Table~\ref{tab:b}.
        \begin{table}\caption{Per dataset.}\label{tab:all}
        \panel{First}{a & 1 \\}\hfill\panel{Second\label{tab:b}}{b & 2 \\}
        \end{table}"""
    )
    table = result.tables[0]
    assert table.rows == [["M", "S"], ["a", "1"], ["M", "S"], ["b", "2"]]
    assert [(sub.caption, sub.label, sub.number) for sub in table.subtables] == [
        ("First", None, "1a"),
        ("Second", "tab:b", "1b"),
    ]
    assert result.paragraphs[0].text == "See Table 1b."


def test_table_of_contents_bookkeeping_is_not_text(extract_latex):
    result = extract_latex(
        "\\addtocontents{toc}{\\protect\\setcounter{tocdepth}{-10}}\n\\addcontentsline{toc}{section}{Extra}\nBody."
    )
    assert [paragraph.text for paragraph in result.paragraphs] == ["Body."]


def test_subfloat_and_subfigure_labels_read_as_figure_number_and_letter(extract_latex):
    result = extract_latex(
        r"""\begin{figure}\subfloat[One]{\includegraphics{a}\label{fig:a}}
        \subfloat[Two]{\includegraphics{b}\label{fig:b}}\caption{Pair.}\label{fig:pair}\end{figure}
        \begin{figure}\begin{subfigure}{.4\linewidth}\caption{Left}\label{fig:left}\end{subfigure}
        \begin{subfigure}{.4\linewidth}\caption{Right}\label{fig:right}\end{subfigure}
        \caption{Sides.}\end{figure}

        See Figures~\ref{fig:a}, \ref{fig:b}, \ref{fig:pair}, \ref{fig:left} and \ref{fig:right}."""
    )
    assert result.paragraphs[-1].text == "See Figures 1a, 1b, 1, 2a and 2b."
