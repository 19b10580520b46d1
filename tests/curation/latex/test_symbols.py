"""No symbol is lost: every symbol command pylatexenc knows and every one of `curation.latex.symbols` converts
to its character inside a real table cell; spacing prints one space, font switches keep the word."""

from __future__ import annotations

import pytest
from pylatexenc import latex2text, latexwalker

from curation.latex.symbols import SPACES, SYMBOLS


def _pylatexenc_symbols() -> dict[str, str]:
    """Every argument-less macro of pylatexenc's latex2text with a printable replacement."""
    text_db = latex2text.get_default_latex_context_db()
    walker_db = latexwalker.get_default_latex_context_db()
    found: dict[str, str] = {}
    for spec in text_db.iter_macro_specs():
        repl = getattr(spec, "simplify_repl", None)
        walker_spec = walker_db.get_macro_spec(spec.macroname)
        takes_arguments = walker_spec is not None and getattr(walker_spec.args_parser, "argspec", "")
        if isinstance(repl, str) and "%" not in repl and repl.strip() and not takes_arguments:
            found[spec.macroname] = repl.strip()
    return found


def _cells(extract_latex, commands: list[str]) -> dict[str, str]:
    """Each command in a cell of its own, between two letters, read back from the extracted table."""
    body = "\n".join(f"{index} & x{command}{{}}y \\\\" for index, command in enumerate(commands))
    table = f"\\begin{{tabular}}{{ll}}\n{body}\n\\end{{tabular}}"
    paper = extract_latex(f"\\begin{{table}}\\caption{{S}}{table}\\end{{table}}")
    rows = paper.tables[0].rows
    return {commands[int(row[0])]: row[1] for row in rows}


def test_the_sweep_covers_pylatexenc_and_the_projects_table() -> None:
    assert len(_pylatexenc_symbols()) > 700
    theirs = _pylatexenc_symbols()
    overridden = {name for name in SYMBOLS if name in theirs and theirs[name] != SYMBOLS[name]}
    assert not set(SYMBOLS) & set(theirs) - overridden, "the table adds only what pylatexenc lacks or gets wrong"


def test_every_symbol_of_pylatexenc_and_of_the_table_converts(extract_latex) -> None:
    expected = {**_pylatexenc_symbols(), **SYMBOLS}
    cells = _cells(extract_latex, [f"\\{name}" for name in expected])
    dropped = {name: cells.get(f"\\{name}") for name, char in expected.items() if char not in cells[f"\\{name}"]}
    assert dropped == {}


# The LaTeX2e and textcomp text symbols the issue names, and more of both: each must come out as its character.
NAMED = {
    "textbar": "|", "textgreater": ">", "textless": "<", "textasciitilde": "~", "textbackslash": "\\",
    "textbullet": "•", "textdagger": "†", "textdaggerdbl": "‡", "textdegree": "°", "texttimes": "×",
    "textpm": "±", "textasciicircum": "^", "textunderscore": "_", "textbraceleft": "{", "textbraceright": "}",
    "textperthousand": "‰", "textmu": "µ", "textcopyright": "©", "textregistered": "®", "texttrademark": "™",
    "textsection": "§", "textparagraph": "¶", "textellipsis": "…", "textendash": "–", "textemdash": "—",
    "textminus": "−", "textdiv": "÷", "textonehalf": "½", "texteuro": "€", "textsterling": "£",
    "textcelsius": "℃", "textohm": "\u2126", "textsurd": "√", "textlnot": "¬", "textrightarrow": "→",
    "textquotedbl": '"', "textdollar": "$", "textcent": "¢", "textyen": "¥", "textnumero": "№",
    "checkmark": "✓", "leq": "≤", "geq": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sim": "∼", "times": "×",
    "pm": "±", "mp": "∓", "infty": "∞", "rightarrow": "→", "uparrow": "↑", "downarrow": "↓", "dagger": "†",
    "ddagger": "‡", "star": "⋆", "bullet": "∙", "cdot": "·", "circ": "∘", "alpha": "α", "mu": "μ",
    "Delta": "Δ", "upmu": "μ", "ell": "ℓ", "partial": "∂", "in": "∈", "propto": "∝", "ll": "≪", "gg": "≫",
}  # fmt: skip


def test_the_named_text_and_math_symbols_convert(extract_latex) -> None:
    cells = _cells(extract_latex, [f"\\{name}" for name in NAMED])
    # Binary operators get a space on each side (`x ± y`); the character itself must be there.
    read = {name: cells[f"\\{name}"].replace(" ", "") for name in NAMED}
    assert read == {name: f"x{char}y" for name, char in NAMED.items()}


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        (r"Phen \textasciitilde{} (Geo + Env)\textbar{}Gen", "Phen ~ (Geo + Env)|Gen"),
        (r"\# contigs (\textgreater{}= 1000 bp)", "# contigs (>= 1000 bp)"),
        (r"a\textless{}b", "a<b"),
    ],
)
def test_issue_cells_keep_their_symbols(extract_latex, cell: str, text: str) -> None:
    paper = extract_latex(f"\\begin{{table}}\\caption{{S}}\\begin{{tabular}}{{l}}{cell}\\end{{tabular}}\\end{{table}}")
    assert paper.tables[0].rows == [[text]]


def test_every_spacing_command_is_one_space(extract_latex) -> None:
    commands = [
        *(f"\\{name}" for name in SPACES if name != " "),
        "\\ ",
        "~",
        "\\hspace{1em}",
        "\\hspace*{2pt}",
        "\\hskip1em ",
        "\\hskip 2pt plus 1fil minus 1pt ",
        "\\hskip0.5\\tabcolsep ",
        "\\kern1em ",
        "\\mkern3mu ",
    ]
    cells = _cells(extract_latex, [command.removesuffix("{}") for command in commands])
    assert {command: cells[command] for command in commands} == dict.fromkeys(commands, "x y")


def test_spacing_never_leaks_its_argument(extract_latex) -> None:
    paper = extract_latex(
        "\\begin{table}\\caption{表~1\\hskip1em 对象接口}\\begin{tabular}{l}a\\kern-1pt b\\\\"
        "c\\hskip1em d\\end{tabular}\\end{table}"
    )
    assert paper.tables[0].caption == "表 1 对象接口"
    assert paper.tables[0].rows == [["ab"], ["c d"]]


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        (r"$f_{\rm abs}$", "f_abs"),
        (r"$\phi_{\rm h}$", "ϕ_h"),
        (r"$x_{\mathrm{max}}$", "x_max"),
        (r"$x_\text{i}$", "x_i"),
        (r"Acc$_{dev}$", "Acc_dev"),
        (r"Acc$_\text{dev}$", "Acc_dev"),
        (r"$\text{Acc}_{\textrm{dev}}$", "Acc_dev"),
        (r"Acc\textsubscript{dev}", "Acc_dev"),
        (r"$\mathit{Acc}_{\mathrm{dev}}$", "Acc_dev"),
        (r"{\rm Acc}$_{\rm dev}$", "Acc_dev"),
        (r"{\bf bold} {\it italic} \textrm{roman} {\sf sans}", "bold italic roman sans"),
        (r"\textbf{\rm Mixed}\ {\tt mono}", "Mixed mono"),
        (r"$\text{with space}$ and $\mathrm{d}x$", "with space and dx"),
        (r"H\textsubscript{2}O", "H2O"),
        (r"$\mathbf{x}$, $\mathsf{Var}$, $\mathtt{id}$", "x, Var, id"),
    ],
)
def test_font_switches_and_scripts_keep_words(extract_latex, cell: str, text: str) -> None:
    paper = extract_latex(f"\\begin{{table}}\\caption{{S}}\\begin{{tabular}}{{l}}{cell}\\end{{tabular}}\\end{{table}}")
    assert paper.tables[0].rows == [[text]]
