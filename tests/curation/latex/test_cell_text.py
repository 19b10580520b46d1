"""Cell and paragraph text as a reader reads it: operators spaced, scripts flattened, \\xspace's space kept."""

from __future__ import annotations

import pytest

CELLS = [
    (r"$85.62 \pm 0.09$", "85.62 ± 0.09"),
    (r"$85.62\pm0.09$", "85.62 ± 0.09"),
    (r"85.62$\pm$0.09", "85.62 ± 0.09"),
    (r"85.62{\scriptsize$\pm$0.09}", "85.62 ± 0.09"),
    (r"3$\times$4", "3 × 4"),
    (r"$3{\times}10^{21}$", "3 × 10^21"),
    (r"$\approx$3", "≈3"),
    (r"12$\approx$12.1", "12 ≈ 12.1"),
    (r"$\sim$5", "∼5"),
    (r"4$\sim$5", "4 ∼ 5"),
    (r"2$\times$", "2×"),
    (r"$\beta_2$", "β2"),
    (r"$\beta_{2}$", "β2"),
    (r"$\text{F}_1$", "F1"),
    (r"$\mathrm{BLEU}_{4}$", "BLEU4"),
    (r"$\alpha_i$", "αi"),
    (r"$10^{21}$", "10^21"),
    (r"$10^{-3}$", "10^-3"),
    (r"$R^2$", "R^2"),
    (r"$R^2_w$", "R^2_w"),
    (r"$\beta_{x,\max}$", "βx,max"),
    (r"87.3$^*$", "87.3*"),
    (r"87.3$^\dagger$", "87.3†"),
    (r"$5^{th}$", "5th"),
    (r"$90^\circ$", "90°"),
    (r"$90^{\circ}$C", "90°C"),
    (r"\texttt{a\_b}", "a_b"),
    # A word as a script is a name: it keeps its mark, as plain-text tables write it (not `Accdev`).
    (r"Acc$_{dev}$", "Acc_dev"),
    (r"F1$_{\text{macro}}$", "F1_macro"),
    (r"Precision$_{\text{Macro}}$", "Precision_Macro"),
    (r"$\text{F1}_\text{weighted}$", "F1_weighted"),
    (r"$\mathrm{Acc}_{dev}$ (\%)", "Acc_dev (%)"),
    (r"LOWNER$_{train}$", "LOWNER_train"),
    (r"$L_{CE}$", "L_CE"),
    (r"Acc$^{test}$", "Acc^test"),
    (r"$\text{BLEU}^{*}$", "BLEU*"),
    (r"BLEU$^{\dagger}$", "BLEU†"),
    # The base of a script written just before the formula is still its base: the exponent keeps its caret.
    (r"10$^{-3}$", "10^-3"),
    (r"(×10$^{-3}$)", "(×10^-3)"),
    (r"g cm$^{-3}$", "g cm^-3"),
    (r"m$^2$", "m^2"),
    (r"2$^{nd}$", "2nd"),
    # Text-mode scripts read like math ones: a word or number keeps its mark, an ordinal or a symbol does not.
    (r"Annotations\textsuperscript{a}", "Annotations^a"),
    (r"10\textsuperscript{3}", "10^3"),
    (r"1\textsuperscript{st}", "1st"),
    (r"87.3\textsuperscript{*}", "87.3*"),
    (r"Acc\textsubscript{dev}", "Acc_dev"),
    (r"H\textsubscript{2}O", "H2O"),
    # An accent marks one character, the first of its argument: its script and the letters after it stay bare.
    (r"$\dot{\beta_i}$", "β̇i"),
    (r"$\dot{\psi}_i$", "ψ̇i"),
    (r"$\hat{y}$", "ŷ"),
    (r"$\tilde{x_1}$", "x̃1"),
    # A line broken inside a cell reads as a space, but a word broken after its hyphen reads whole.
    (r"\makecell{Total GPU\\Power}", "Total GPU Power"),
    (r"\shortstack{\textbf{Cross-}\\\textbf{region}}", "Cross-region"),
    (r"\makecell[l]{Semi-\\[2pt] supervised}", "Semi-supervised"),
    (r"\makecell{1.29 -\\4.26}", "1.29 - 4.26"),
    # \protect only guards the next command in moving arguments: the line break it guards still reads as a space.
    (r"\textbf{Open\protect\newline source}", "Open source"),
    (r"\makecell{Open\protect\\source}", "Open source"),
    # rotating's turn and rotate environments: the angle is layout, not text.
    (r"\begin{turn}{90}Exploratory\end{turn}", "Exploratory"),
    (r"\begin{rotate}{45}Abc\end{rotate}", "Abc"),
    # TeX spaces a relation between two atoms of a formula; not alone, not in a script, not where `\!` closes it up.
    (r"$\gamma=0.3$", "γ = 0.3"),
    (r"$p<0.05$", "p < 0.05"),
    (r"$\theta^d=0.85$", "θd = 0.85"),
    (r"$t=10^{-4}$", "t = 10^-4"),
    (r"$x\leq5$", "x ≤ 5"),
    (r"$\gamma = 0.3$", "γ = 0.3"),
    (r"$<$0.05", "<0.05"),
    (r"$\kappa\!=\!0.26$", "κ=0.26"),
    (r"$\sum_{i=1}^n x_i$", "∑i=1n xi"),
]


@pytest.mark.parametrize(("source", "text"), CELLS)
def test_cells_read_as_a_reader_reads_them(extract_latex, source, text):
    result = extract_latex(f"\\begin{{table}}\\begin{{tabular}}{{l}}{source} \\\\ \\end{{tabular}}\\end{{table}}")
    assert result.tables[0].rows == [[text]]


def test_underscores_outside_math_stay(extract_latex):
    result = extract_latex(r"See \url{http://x.org/a_b} and \texttt{snake\_case} with $x_1$.")
    assert result.paragraphs[0].text == "See http://x.org/a_b and snake_case with x1."


def test_tex_single_quotes_print_as_quotes_and_verbatim_keeps_its_graves(extract_latex):
    # ClinQueryAgent's captions (`was this useful?'): TeX prints a grave accent as ‘; \verb prints it as written.
    result = extract_latex(r"Asked `did it help?' (it's `fine'), ``yes'' in \verb|`ls`| and the authors' data.")
    assert result.paragraphs[0].text == "Asked ‘did it help?’ (it's ‘fine’), “yes” in `ls` and the authors' data."


def test_xspace_keeps_its_space_before_a_parenthesis_but_not_before_punctuation(extract_latex):
    result = extract_latex(
        r"We call it \Model (ours), \Model. And \Model's size, \Model{} x, \Model~y, \Model\footnote{n} z.",
        preamble=r"\usepackage{xspace}\newcommand{\Model}{TaT-LLM\xspace}",
    )
    assert result.paragraphs[0].text.startswith(
        "We call it TaT-LLM (ours), TaT-LLM. And TaT-LLM's size, TaT-LLM x, TaT-LLM y, TaT-LLM"
    )


def test_word_subscripts_in_a_paragraph_read_as_names(extract_latex):
    result = extract_latex(r"We report F1$_{\text{macro}}$ and Acc$_{dev}$ with a rate of 10$^{-3}$ for $x_1$.")
    assert result.paragraphs[0].text == "We report F1_macro and Acc_dev with a rate of 10^-3 for x1."


def test_a_citation_after_a_name_in_a_cell_is_no_part_of_the_cell(extract_latex):
    # Parti's table 2 (rows of benchmarks/papers/templates/parti.tex): the key "imagen" has no digits, so no
    # bracket rule can tell it from a bracketed name; where \cite is rendered it is known to be a citation.
    result = extract_latex(
        r"\begin{table}\begin{tabular}{lll}\texttt{[CLS]} pooling & Encoder & 3.1 \\"
        r"Imagen~\cite{imagen} & Diffusion & 7.27 \\ Make-A-Scene \cite{gafni2022make} & Autoregressive & 11.84 \\"
        r"\cite{roth2022towards} & (ours) & 1 \\"
        r"\end{tabular}\end{table} See \cite{imagen}."
    )
    assert [row[0] for row in result.tables[0].rows] == [
        "[CLS] pooling",  # brackets written in the source stay
        "Imagen",
        "Make-A-Scene",
        "[roth2022towards]",  # a cell that is only a citation keeps it: it is the cell's content
    ]
    assert result.paragraphs[0].text == "See [imagen]."
