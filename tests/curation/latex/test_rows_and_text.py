"""Row, cell and paragraph rules on small inline documents."""

from __future__ import annotations


def test_rules_are_not_rows_and_empty_rows_are_dropped(extract_latex):
    result = extract_latex(
        r"""\begin{table}\caption{C}\begin{tabular}{|c|c|}\hline
        \toprule A & B \\ \cline{1-2} \specialrule{1pt}{2pt}{2pt}
        & \\ \hdashline
        \rowcolor{gray} 1 & 2 \\[3pt] \hline\hline
        \end{tabular}\end{table}"""
    )
    assert result.tables[0].rows == [["A", "B"], ["1", "2"]]


def test_cell_markup_is_removed_and_symbols_become_unicode(extract_latex):
    result = extract_latex(
        r"""\begin{table}\begin{tabular}{cccccc}
        \textbf{87.3} & $\pm$0.2 & 12\% & a~b & \emph{\underline{x}} & \'e$\uparrow$ \\
        \end{tabular}\end{table}"""
    )
    assert result.tables[0].rows == [["87.3", "±0.2", "12%", "a b", "x", "é↑"]]


def test_siunitx_quantities_keep_their_units(extract_latex):
    result = extract_latex(
        r"""We reach \SI{93.2}{\percent} in \qty{3.2}{\milli\second} per \si{\giga\byte}.

        \begin{table}\begin{tabular}{cccc}
        \SI{12}{\kilo\gram\per\metre\squared} & \SIrange{1}{5}{\hour} & \num{1.5} & \SI[round-precision=2]{20}{ms} \\
        \end{tabular}\end{table}"""
    )
    assert "We reach 93.2% in 3.2 ms per GB." in [p.text for p in result.paragraphs]
    assert result.tables[0].rows == [["12 kg/m²", "1–5 h", "1.5", "20 ms"]]


def test_optional_default_and_renewcommand_macros_expand_in_cells(extract_latex):
    result = extract_latex(
        r"\begin{table}\begin{tabular}{cc} \val{1} & \val[2]{3} \\ \new & \oldmacro \\ \end{tabular}\end{table}",
        preamble=r"\newcommand{\val}[2][9]{#2.#1} \newcommand{\oldmacro}{old} \renewcommand{\oldmacro}{renewed}"
        r"\providecommand{\oldmacro}{provided} \def\new{fresh}",
    )
    assert result.tables[0].rows == [["1.9", "3.2"], ["fresh", "renewed"]]


def test_star_column_repetition_and_hidden_column_with_arguments(extract_latex):
    result = extract_latex(
        r"\begin{table}\begin{tabular}{*{2}{c}Hp{2cm}} a & b & gone & d \\ \end{tabular}\end{table}",
        preamble=r"\newcolumntype{H}{>{\iffalse}c<{\fi}@{}}",
    )
    assert result.tables[0].rows == [["a", "b", "d"]]


def test_table_without_tab_prefix_and_ref_macro_link(extract_latex):
    result = extract_latex(
        r"""See \tabref{results} and \autoref{results}.

        \begin{table}\caption{R}\label{results}\begin{tabular}{c} 1 \\ \end{tabular}\end{table}""",
        preamble=r"\newcommand{\tabref}[1]{Tab.~\ref{#1}}",
    )
    paragraph = result.paragraphs[0]
    assert paragraph.text == "See Tab. 1 and Table 1."
    assert paragraph.mentions == ["results"]


def test_references_inside_cells_are_recorded_on_the_table_not_paragraphs(extract_latex):
    result = extract_latex(
        r"""\begin{table}\caption{A}\label{a}\begin{tabular}{c} see \ref{b} \\ \end{tabular}\end{table}
        \begin{table}\caption{B}\label{b}\begin{tabular}{c} x \\ \end{tabular}\end{table}"""
    )
    assert result.tables[0].cell_references == ["b"]
    assert result.tables[0].rows == [["see 2"]]
    assert result.paragraphs == []


def test_paragraphs_split_on_blank_lines_sections_and_floats(extract_latex):
    result = extract_latex(
        r"""\section{One}
        First % comment ending the line
        continues.

        Second.
        \begin{table}\begin{tabular}{c} x \\ \end{tabular}\end{table}
        Third.
        \subsection{Two}Fourth with 50\% and \verb|a_b|."""
    )
    assert [(paragraph.section, paragraph.section_number, paragraph.text) for paragraph in result.paragraphs] == [
        ("One", "1", "First continues."),
        ("One", "1", "Second."),
        ("One", "1", "Third."),
        ("Two", "1.1", "Fourth with 50% and a_b."),
    ]


def test_iftrue_else_keeps_the_live_branch(extract_latex):
    result = extract_latex(r"\iftrue Kept. \else Dropped. \fi \iffalse Gone. \else Shown. \fi")
    assert result.paragraphs[0].text == "Kept. Shown."


def test_custom_environment_wrapping_a_table_float(extract_latex):
    result = extract_latex(
        r"\begin{mytab}\caption{Wrapped env}\begin{tabular}{c} v \\ \end{tabular}\end{mytab}",
        preamble=r"\newenvironment{mytab}{\begin{table}[t]\centering}{\end{table}}",
    )
    assert [(table.caption, table.rows) for table in result.tables] == [("Wrapped env", [["v"]])]


def test_captionof_table_outside_a_float_counts_as_a_table(extract_latex):
    result = extract_latex(
        r"\begin{minipage}{\linewidth}\captionof{table}{Inline}\label{inl}"
        r"\begin{tabular}{c} q \\ \end{tabular}\end{minipage}"
    )
    assert [(table.kind, table.label, table.rows) for table in result.tables] == [("captionof", "inl", [["q"]])]


def test_malformed_latex_gives_warnings_not_exceptions(extract_latex):
    result = extract_latex(
        r"""\section{Broken
        Text with } stray braces and \end{itemize} a missing begin.
        \begin{table}\caption{Unclosed}\begin{tabular}{cc} a & \textbf{b \\ c & d
        \newcommand{\loop}{\loop} \loop"""
    )
    assert result.warnings
    assert isinstance(result.tables, list)


def test_recursive_macro_is_stopped_with_a_warning(extract_latex):
    result = extract_latex(r"Start \loop end.", preamble=r"\newcommand{\loop}{x\loop}")
    assert any("stopped expanding macros" in warning for warning in result.warnings)


def test_xspace_and_local_style_file_macros(tmp_path):
    from curation.latex import extract_paper

    (tmp_path / "mystyle.sty").write_text(r"\newcommand{\Styled}{\textsc{Styled}\xspace}", encoding="utf-8")
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\\usepackage{amsmath,mystyle}\n\\begin{document}\n"
        "\\twocolumn[{\\maketitle}]\n\\Styled works. \\Styled is here.\n\\end{document}\n",
        encoding="utf-8",
    )
    assert [paragraph.text for paragraph in extract_paper(tmp_path).paragraphs] == ["Styled works. Styled is here."]


def test_an_environments_layout_arguments_are_no_text(extract_latex):
    # From the programmable-kv paper's introduction (19PINE-AI): enumitem options on its list of contributions.
    body = r"""\paragraph{Structure of the paper.}
\begin{itemize}[leftmargin=1.2em,itemsep=1pt,topsep=2pt]
\item A mechanism (Section 3).
\item[(b)] An editing capability.
\end{itemize}
\begin{enumerate}[label=(\roman*)]
\item One.
\end{enumerate}
\begin{list}{$\bullet$}{\setlength{\leftmargin}{1em}}
\item Listed.
\end{list}
\begin{minipage}[t]{0.45\linewidth}
Inside a minipage.
\end{minipage}
\begin{multicols}{2}
Two columns.
\end{multicols}
\begin{adjustwidth}{1cm}{1cm}
Adjusted.
\end{adjustwidth}"""
    texts = [
        paragraph.text for paragraph in extract_latex(body, r"\usepackage{enumitem,multicol,changepage}").paragraphs
    ]
    assert texts == [
        "Structure of the paper.", "A mechanism (Section 3).", "(b) An editing capability.", "One.", "Listed.",
        "Inside a minipage.", "Two columns.", "Adjusted.",
    ]  # fmt: skip
