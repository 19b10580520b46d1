"""Readable text from LaTeX nodes: references and citations resolved, markup removed, symbols via pylatexenc."""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from pylatexenc import latex2text, latexwalker, macrospec
from pylatexenc.latex2text._defaultspecs import unicode_accents_list

from curation.latex.symbols import FONT_SWITCHES, GLUE_COMMANDS, SPACES, SYMBOLS
from curation.latex.tokens import ACTIVE, ALIGN, CHAR, CS, MATH, SPACE, VERBATIM, Token, escape
from curation.latex.tree import Env, Group, Node, NodeCursor, has_content, to_latex

# pylatexenc logs every parse hiccup; malformed input is reported through our warnings instead.
logging.getLogger("pylatexenc").setLevel(logging.ERROR)

REF_COMMANDS = frozenset(
    {"ref", "autoref", "cref", "Cref", "vref", "Vref", "subref", "nameref", "labelcref", "namecref", "nameCref",
     "crefrange", "Crefrange", "cpageref", "Cpageref", "pageref", "hyperref", "eqref", "fullref", "tref", "autopageref"}
)  # fmt: skip
CITE_COMMANDS = frozenset(
    {"cite", "citep", "citet", "citealp", "citealt", "citeauthor", "citeyear", "citeyearpar", "parencite",
     "textcite", "autocite", "footcite", "Cite", "Citep", "Citet", "nocite", "citenum", "citeA", "shortcite"}
)  # fmt: skip
# Citations that print the authors as words of the sentence ("Cohen et al. (2018) (b = 128)"): in a cell they are the
# name itself, not a reference after it, so a cell keeps them.
TEXTUAL_CITE_COMMANDS = frozenset({"citet", "Citet", "citeauthor", "textcite", "citealt"})
TABULAR_ENVS = frozenset(
    {"tabular", "tabular*", "tabularx", "tabulary", "tabu", "longtable", "longtable*", "longtabu", "xltabular",
     "supertabular", "xtabular", "mpsupertabular", "NiceTabular", "NiceTabular*", "tblr", "longtblr", "talltblr",
     "array", "TAB"}
)  # fmt: skip
MATH_ENVS = frozenset(
    {"equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*", "eqnarray",
     "eqnarray*", "flalign", "flalign*", "alignat", "alignat*", "math", "displaymath", "split", "dmath", "dmath*"}
)  # fmt: skip
RULE_COMMANDS: dict[str, int] = {
    "hline": 0, "toprule": 0, "midrule": 0, "bottomrule": 0, "cmidrule": 1, "cline": 1, "specialrule": 3,
    "addlinespace": 0, "hdashline": 0, "cdashline": 1, "morecmidrules": 0, "Xhline": 1, "Xcline": 2, "hhline": 1,
    "noalign": 1, "rowcolor": 1, "rowcolors": 3, "arrayrulecolor": 1, "midrulec": 0, "hlineB": 1, "clineB": 2,
    "Hline": 0, "svhline": 0, "tabucline": 0, "firsthline": 0, "lasthline": 0, "thickhline": 0, "hrule": 0,
    "bottomrulec": 0, "toprulec": 0, "cmidrulec": 1, "hdottedline": 0, "cdottedline": 1, "heavyrulewidth": 0,
    "tabularnewline": 0, "pagebreak": 0, "nopagebreak": 0, "newpage": 0, "linewd": 0,
}  # fmt: skip

# Macros pylatexenc is taught: their arguments (its spec: `{` mandatory, `[` optional, `*` a star) and what they print
# (`%(n)s`: their n-th argument; None: nothing). Macros its own specs already read and print alike are left to them.
_MACROS: dict[str, tuple[str, str | None]] = {
    "texttt": ("{", "%(1)s"), "textsf": ("{", "%(1)s"), "href": ("{{", "%(2)s"), "rule": ("[{{", None),
    "includegraphics": ("[{", None), "cellcolor": ("[{", None), "rowcolor": ("[{", None), "color": ("[{", None),
    "hspace": ("*{", " "), "vspace": ("*{", None), "phantom": ("{", None), "hphantom": ("{", None),
    "vphantom": ("{", None), "makebox": ("[[{", "%(3)s"), "parbox": ("[[[{{", "%(5)s"), "raisebox": ("{[[{", "%(4)s"),
    "resizebox": ("*{{{", "%(4)s"), "scalebox": ("{[{", "%(3)s"), "adjustbox": ("{{", "%(2)s"),
    "makecell": ("[{", "%(2)s"), "thead": ("[{", "%(2)s"), "shortstack": ("[{", "%(2)s"), "fontsize": ("{{", None),
    "addlinespace": ("[", None), "footnotemark": ("[", None), "footnotetext": ("[{", None), "tnote": ("{", None),
    "tablefootnote": ("{", None), "thanks": ("{", None), "sisetup": ("{", None), "mbox": ("{", "%(1)s"),
    "fbox": ("{", "%(1)s"), "uline": ("{", "%(1)s"), "sout": ("{", "%(1)s"), "st": ("{", "%(1)s"),
    "hl": ("{", "%(1)s"), "Block": ("[{{", "%(3)s"), "SetCell": ("[{", None), "rotatebox": ("[{{", "%(3)s"),
    "rot": ("{", "%(1)s"), "bigstrut": ("[", None), "textsubscript": ("{", "%(1)s"), "bm": ("{", "%(1)s"),
    "boldsymbol": ("{", "%(1)s"), "label": ("{", None), "centering": ("", None), "xspace": ("", None),
    "strut": ("", None), "mathds": ("{", "%(1)s"), "mathbbm": ("{", "%(1)s"), "textup": ("{", "%(1)s"),
    "textmd": ("{", "%(1)s"), "textnormal": ("{", "%(1)s"), "tabularnewline": ("", " "), "mathit": ("{", "%(1)s"),
    "mathbf": ("{", "%(1)s"), "mathsf": ("{", "%(1)s"), "mathtt": ("{", "%(1)s"), "mathnormal": ("{", "%(1)s"),
    "setlength": ("{{", None), "addtolength": ("{{", None), "renewcommand": ("{{", None), "footnote": ("[{", None),
    "url": ("{", "%(1)s"), "nolinkurl": ("{", "%(1)s"), "orcidlink": ("{", None), "email": ("{", "%(1)s"),
    "textls": ("[{", "%(2)s"), "maketitle": ("", None), "twocolumn": ("[", None), "onecolumn": ("", None),
    "scriptsize": ("", None), "selectfont": ("", None), "linebreak": ("[", " "),
    # fractions and binomials pylatexenc does not know: read as their two arguments run together (`\tfrac{1}{2}` → 12)
    "tfrac": ("{{", "%(1)s/%(2)s"), "dfrac": ("{{", "%(1)s/%(2)s"), "cfrac": ("[{{", "%(2)s/%(3)s"),
    "sfrac": ("{{", "%(1)s/%(2)s"), "textfrac": ("{{", "%(1)s/%(2)s"), "binom": ("{{", "(%(1)s choose %(2)s)"),
    "dbinom": ("{{", "(%(1)s choose %(2)s)"), "tbinom": ("{{", "(%(1)s choose %(2)s)"),
    "operatorname": ("*{", "%(2)s"),
}  # fmt: skip
# Wide accents pylatexenc prints without their mark (`\widehat{y}` → y): combining marks set like its own accents.
_WIDE_ACCENTS = [("widehat", "\u0302"), ("widetilde", "\u0303"), ("overline", "\u0305"), ("mathring", "\u030a")]
# pifont's \ding numbers for the check and cross marks papers use in tables.
_DINGS = {"51": "✓", "52": "✔", "55": "✗", "56": "✘", "72": "★", "73": "☆", "108": "●", "109": "❍", "110": "■"}


@lru_cache(maxsize=1)
def _converter() -> tuple[macrospec.LatexContextDb, latex2text.LatexNodes2Text]:
    macros = {
        **_MACROS,
        **{name: ("", char) for name, char in SYMBOLS.items()},
        **dict.fromkeys(SPACES, ("", " ")),
        "ding": ("{", _ding),
        "xrightarrow": ("[{", _arrow),
        "xleftarrow": ("[{", _arrow),
        "sqrt": ("[{", _root),
        **{name: (arguments, _quantity) for name, (arguments, _, _) in _QUANTITY_ARGS.items()},
    }
    walker_db = latexwalker.get_default_latex_context_db()
    walker_specs = [macrospec.MacroSpec(name, arguments) for name, (arguments, _) in macros.items()]
    walker_specs += [macrospec.MacroSpec(name, "{") for name, _ in _WIDE_ACCENTS]
    # TeX prints a grave accent in text as an opening single quote (`Tool' → ‘Tool’); pylatexenc knows only ``.
    walker_db.add_context_category(
        "tat-curate", macros=walker_specs, specials=[macrospec.SpecialsSpec("`")], prepend=True
    )
    text_db = latex2text.get_default_latex_context_db()
    # A macro without a replacement (None) is discarded: MacroTextSpec's default.
    text_specs = [latex2text.MacroTextSpec(name, simplify_repl=repl) for name, (_, repl) in macros.items()]
    text_specs += [
        latex2text.MacroTextSpec(name, simplify_repl=lambda node, l2tobj, mark=mark: _accented(node, l2tobj, mark))
        for name, mark in [*unicode_accents_list, *_WIDE_ACCENTS]
    ]
    text_db.add_context_category(
        "tat-curate", macros=text_specs, specials=[latex2text.SpecialsTextSpec("`", "‘")], prepend=True
    )
    return walker_db, latex2text.LatexNodes2Text(latex_context=text_db, math_mode="text", strict_latex_spaces=False)


def _accented(node: latexwalker.LatexMacroNode, l2tobj: latex2text.LatexNodes2Text, mark: str) -> str:
    """An accent on the first character of its argument only, as TeX sets it on the nucleus: `\\dot{\\beta_i}` → β̇i
    (pylatexenc marks every character, β̇i̇)."""
    arguments = node.nodeargd.argnlist if node.nodeargd else []
    text = l2tobj.nodelist_to_text([argument for argument in arguments if argument][-1:]).strip()
    first = {"ı": "i", "ȷ": "j"}.get(text[:1], text[:1]) or " "
    return unicodedata.normalize("NFC", first + mark) + text[1:]


def _ding(node: latexwalker.LatexMacroNode, l2tobj: latex2text.LatexNodes2Text) -> str:
    arguments = node.nodeargd.argnlist if node.nodeargd else []
    number = l2tobj.nodelist_to_text([arguments[0]]).strip() if arguments and arguments[0] else ""
    return _DINGS.get(number, "")


def _arrow(node: latexwalker.LatexMacroNode, l2tobj: latex2text.LatexNodes2Text) -> str:
    """An extensible arrow, the label set over it written after it: `\\xrightarrow{n\\to\\infty}` → →(n→∞)."""
    arguments = node.nodeargd.argnlist if node.nodeargd else []
    label = l2tobj.nodelist_to_text([argument for argument in arguments[1:] if argument]).strip()
    arrow = "→" if node.macroname == "xrightarrow" else "←"
    return f"{arrow}({label})" if label else arrow


def _root(node: latexwalker.LatexMacroNode, l2tobj: latex2text.LatexNodes2Text) -> str:
    """A root with its index: `\\sqrt{2}` → √(2), `\\sqrt[3]{8}` → ∛(8), `\\sqrt[n]{x}` → (x)^(1/n); pylatexenc drops
    the index, and √(8) is another number than ∛(8)."""
    index, radicand = [*(node.nodeargd.argnlist if node.nodeargd else []), None, None][:2]
    inner = l2tobj.nodelist_to_text([radicand] if radicand else []).strip()
    degree = l2tobj.nodelist_to_text([index]).strip() if index else ""
    sign = {"": "√", "2": "√", "3": "∛", "4": "∜"}.get(degree)
    return f"{sign}({inner})" if sign else f"({inner})^(1/{degree})"


# siunitx: each macro's arguments, and which of them hold the number(s) and the unit (indices into the list).
_QUANTITY_ARGS: dict[str, tuple[str, tuple[int, ...], int | None]] = {
    "num": ("[{", (1,), None), "tablenum": ("[{", (1,), None), "numrange": ("[{{", (1, 2), None),
    "SI": ("[{[{", (1,), 3), "qty": ("[{{", (1,), 2), "si": ("[{", (), 1), "unit": ("[{", (), 1),
    "SIrange": ("[{{{", (1, 2), 3), "qtyrange": ("[{{{", (1, 2), 3),
}  # fmt: skip
_UNITS = {
    "percent": "%", "second": "s", "metre": "m", "meter": "m", "gram": "g", "kilogram": "kg", "hour": "h",
    "minute": "min", "day": "d", "hertz": "Hz", "byte": "B", "bit": "bit", "watt": "W", "volt": "V",
    "ampere": "A", "kelvin": "K", "degreeCelsius": "°C", "celsius": "°C", "joule": "J", "newton": "N",
    "pascal": "Pa", "litre": "L", "liter": "L", "mole": "mol", "decibel": "dB", "degree": "°",
    "electronvolt": "eV", "ohm": "Ω", "bel": "B", "tonne": "t", "angstrom": "Å", "arcminute": "′",
    "arcsecond": "″", "watthour": "Wh",
}  # fmt: skip
_PREFIXES = {
    "yocto": "y", "zepto": "z", "atto": "a", "femto": "f", "pico": "p", "nano": "n", "micro": "µ", "milli": "m",
    "centi": "c", "deci": "d", "deca": "da", "hecto": "h", "kilo": "k", "mega": "M", "giga": "G", "tera": "T",
    "peta": "P", "exa": "E", "zetta": "Z", "yotta": "Y", "kibi": "Ki", "mebi": "Mi", "gibi": "Gi", "tebi": "Ti",
}  # fmt: skip
_POWERS = {"square": "²", "cubic": "³"}
_UNIT_TOKEN = re.compile(r"\\([A-Za-z]+)(?:\s*\{([^{}]*)\})?|([^\\\s{}]+)")


def unit_text(source: str) -> str:
    """A siunitx unit (`\\kilo\\gram\\per\\second\\squared`, or literal `ms`) as it prints: kg/s²."""
    out, pending_prefix, power_next = "", "", ""
    for macro, argument, literal in _UNIT_TOKEN.findall(source):
        if literal:
            out += literal
        elif macro in _PREFIXES:
            pending_prefix += _PREFIXES[macro]
        elif macro in _POWERS:  # \\square\\metre: the power comes before its unit
            power_next = _POWERS[macro]
        elif macro in ("per", "squared", "cubed", "tothe", "raiseto", "text"):
            out += {"per": "/", "squared": "²", "cubed": "³", "text": argument}.get(macro, f"^{argument}")
        elif macro in _UNITS:
            out += pending_prefix + _UNITS[macro] + power_next
            pending_prefix = power_next = ""
        else:
            out += pending_prefix + macro
            pending_prefix = ""
    return out


_E_NOTATION = re.compile(r"^([-+−]?)(\d*[.,]?\d*)\s*[eEdD]\s*([-+−]?\d+)$")
_DECIMAL_COMMA = re.compile(r"(?<=\d),(?=\d)")


def siunitx_number(text: str) -> str:
    """A number as siunitx prints it: `4.74e5` → 4.74×10^5, `e-3` → 10^-3, `1.2 +- 0.3` → 1.2 ± 0.3, and a comma
    between digits as the decimal point it is to siunitx (`-1,236` → -1.236, never one thousand two hundred)."""
    compact = _DECIMAL_COMMA.sub(".", text.strip().replace("+-", " ± "))
    match = _E_NOTATION.match(compact.replace(" ", ""))
    if match is None:
        return compact
    sign, mantissa, exponent = match.groups()
    return f"{sign}{mantissa}×10^{exponent}" if mantissa else f"{sign}10^{exponent}"


def _quantity(node: latexwalker.LatexMacroNode, l2tobj: latex2text.LatexNodes2Text) -> str:
    """\\SI{5}{\\percent} → 5%, \\qty{3.2}{\\milli\\second} → 3.2 ms, \\si{\\GHz} → GHz, ranges with a dash."""
    _, number_indices, unit_index = _QUANTITY_ARGS[node.macroname]
    # None for an argument left out; the padding covers every index _QUANTITY_ARGS names (at most 3).
    arguments = [*(node.nodeargd.argnlist if node.nodeargd else []), None, None, None, None]
    numbers = [siunitx_number(l2tobj.nodelist_to_text([arguments[i]])) for i in number_indices if arguments[i]]
    unit_node = arguments[unit_index] if unit_index is not None else None
    unit = unit_text(unit_node.latex_verbatim().strip()[1:-1]) if unit_node is not None else ""
    if not numbers:
        return unit
    quantity = "–".join(numbers)
    return f"{quantity}{unit}" if unit in ("%", "°") else f"{quantity} {unit}".rstrip()


_NEEDS_PARSING = re.compile(r"[\\{}$~^_&#%`'\-]")


# A binary operator between two operands reads with a space on each side (`85.62 ± 0.09`, `3 × 10^21`);
# a prefix (`∼5`) or suffix (`2×`) stays attached to its number.
_BINARY_OPERATOR = re.compile(r"(?<=[\w%)\]])\s*([±∓×≈∼≃])\s*(?=[\w(.+\-−])")


def space_operators(text: str) -> str:
    """Put single spaces around ±, ∓, ×, ≈, ∼ and ≃ standing between two operands."""
    return _BINARY_OPERATOR.sub(r" \1 ", text)


# A quotation a grave accent opened (‘Tool') closes with its apostrophe as TeX prints it (‘Tool’); an apostrophe
# inside a word (‘it's') is no closing quote. Apostrophes elsewhere stay as written.
_SINGLE_QUOTED = re.compile(r"‘((?:[^‘’'\n]|'(?=\w))*)'(?!\w)")


def latex_to_text(source: str) -> str:
    """Unicode text for a LaTeX fragment via pylatexenc; never raises (falls back to a crude strip)."""
    if not _NEEDS_PARSING.search(source):
        return space_operators(normalize_space(source))
    walker_db, converter = _converter()
    try:
        nodes, _, _ = latexwalker.LatexWalker(source, latex_context=walker_db, tolerant_parsing=True).get_latex_nodes()
        text = converter.nodelist_to_text(nodes)
    except Exception:  # pylatexenc raises assorted errors on odd input; a crude strip is better than nothing.
        text = re.sub(r"\\[a-zA-Z@]+\*?|[{}$]", " ", source)
    return space_operators(normalize_space(_SINGLE_QUOTED.sub(r"‘\1’", text)))


LINE_BREAK = "\u2028"  # a `\\` inside a cell or paragraph: a space, except after a word's hyphen
_BROKEN_WORD = re.compile(r"(?<=\w-)\s*" + LINE_BREAK + r"\s*(?=\w)")


def normalize_space(text: str) -> str:
    """Collapse whitespace (including no-break spaces) to single spaces; a word broken after its hyphen by a line
    break reads whole (`Cross-\\\\region` → Cross-region)."""
    return " ".join(_BROKEN_WORD.sub("", text).replace("\xa0", " ").split())


@dataclass
class LabelTarget:
    """What a \\label names: its kind ("table", "section", …), the number a reader sees, the table index, and the
    heading \\nameref prints (a section's title)."""

    kind: str
    number: str
    table_index: int | None = None
    title: str = ""


_KIND_NAMES = {
    "table": ("Table", "Tables"), "figure": ("Figure", "Figures"), "section": ("Section", "Sections"),
    "equation": ("Equation", "Equations"), "appendix": ("Appendix", "Appendices"), "item": ("Item", "Items"),
    "algorithm": ("Algorithm", "Algorithms"), "subtable": ("Table", "Tables"), "subfigure": ("Figure", "Figures"),
}  # fmt: skip


class TextRenderer:
    """Renders node lists to text, resolving references against known labels and recording them."""

    def __init__(self, labels: dict[str, LabelTarget]) -> None:
        self.labels = labels

    def render(self, nodes: list[Node], references: list[str] | None = None, *, in_cell: bool = False) -> str:
        """Readable text of nodes; labels referenced are appended to `references`."""
        prepared = self._prepare(nodes, references if references is not None else [], in_cell)
        text = latex_to_text(to_latex(prepared))
        if not in_cell:
            return text
        # A citation after a name ("Imagen~\\cite{imagen}") is no part of the name; only here is it known to be one,
        # so a bracketed "[CLS]" written in the source stays. A cell holding nothing but citations keeps them.
        bare = _CITED.sub("", text).strip()
        return bare if bare else text.replace(_CITE_OPEN, "").replace(_CITE_CLOSE, "")

    def _prepare(
        self, nodes: list[Node], references: list[str], in_cell: bool, in_math: bool = False, formula: bool = False
    ) -> list[Node]:
        """`formula`: `nodes` are a formula's own atoms (an equation environment's body); formulas that open in
        `nodes` are too. Groups inside a formula (scripts, arguments) are not: TeX spaces no relation there."""
        out: list[Node] = []
        top = formula or not in_math  # relations between this list's atoms get TeX's spaces
        cursor = NodeCursor(_split_relations(nodes, in_math) if top else nodes)
        math = in_math
        math_start = 0  # where the current formula starts in `out`: a script needs something before it
        attached = False  # the formula opens right after a word (`Acc$_{dev}$`, `10$^{-3}$`): that is the base
        while (node := cursor.next()) is not None:
            if isinstance(node, Group):
                out.append(Group(self._prepare(node.children, references, in_cell, math)))
            elif isinstance(node, Token) and (node.kind == MATH or node.is_cs("(", ")", "[", "]")):
                math = not math if node.kind == MATH else node.name in ("(", "[")
                attached = math and _ends_word(out[-1] if out else None)
                out.append(node)
                math_start = len(out)
            elif isinstance(node, Token) and node.is_cs("ensuremath"):
                out.append(node)
                out.append(Group(self._prepare(cursor.argument() or [], references, in_cell, True)))
            elif math and top and _is_relation(node):
                spaced = _operand_before(out[math_start:]) and _operand_after(cursor)
                out.extend([Token(CHAR, " "), node, Token(CHAR, " ")] if spaced else [node])
            elif math and isinstance(node, Token) and (errors := _asymmetric_error(node, cursor)):
                out.extend(errors)
            elif isinstance(node, Token) and node.is_cs("diagbox", "slashbox", "backslashbox"):
                _, _, *labels = cursor.arguments("[[{{")
                if isinstance(cursor.peek(), Group):  # \\diagbox{row}{middle}{column}
                    labels.append(cursor.argument() or [])
                for position, label in enumerate(labels):
                    out.extend([Token(CHAR, " / ")] if position else [])
                    out.append(Group(self._prepare(label, references, in_cell, math)))
            elif math and isinstance(node, Token) and node.kind == CHAR and ("_" in node.text or "^" in node.text):
                out.extend(_flatten_scripts(node, cursor, has_base=attached or has_content(out[math_start:])))
            elif isinstance(node, Env) and node.name in MATH_ENVS:
                body = self._prepare(node.children, references, in_cell, True, formula=True)
                out.append(Env(node.name, body, node.file))
            elif isinstance(node, Env):
                if node.name in TABULAR_ENVS:
                    out.append(Token(CHAR, " "))
                    out.extend(self._prepare(tabular_parts(node)[1], references, in_cell))
                    out.append(Token(CHAR, " "))
                elif node.name in ("verbatim", "lstlisting", "minted", "tikzpicture", "pgfpicture"):
                    continue
                else:
                    out.append(Env(node.name, self._prepare(env_body(node), references, in_cell, math), node.file))
            elif node.kind == CS and node.name in REF_COMMANDS:
                out.append(Token(CHAR, escape(self._reference(node.name, cursor, references))))
            elif node.kind == CS and node.name in CITE_COMMANDS:
                cited = _citation(cursor)
                marked = in_cell and node.name not in TEXTUAL_CITE_COMMANDS
                out.append(Token(CHAR, escape(f"{_CITE_OPEN}{cited}{_CITE_CLOSE}" if marked else cited)))
            elif node.kind == CS and node.name in ("\\", "newline", "par"):
                cursor.arguments("*[")
                out.append(Token(SPACE, LINE_BREAK if node.name != "par" else " "))
            elif node.kind == CS and node.name == "protect":  # guards the next command; prints nothing, and left in
                continue  # place it would swallow the space a following `\\newline` becomes
            elif node.kind == CS and node.name in GLUE_COMMANDS:
                if not _skip_glue(cursor):
                    out.append(Token(SPACE, " "))
            elif node.kind == CS and node.name in FONT_SWITCHES:
                continue
            elif node.kind == CS and node.name in ("textsubscript", "textsuperscript"):
                script = cursor.argument() or []
                mark = _text_script_mark(node.name, latex_to_text(to_latex(script)).strip())
                out.extend([Token(CHAR, mark), Group(self._prepare(script, references, in_cell, math))])
            elif node.kind == CS and in_cell and node.name in ("footnote", "tablefootnote"):
                cursor.arguments("[{")
            elif node.kind == ACTIVE or node.kind == ALIGN:
                out.append(Token(SPACE, " "))
            elif node.kind == VERBATIM:
                out.append(Token(CHAR, escape(node.text)))
            else:
                out.append(node)
        return out

    def _reference(self, command: str, cursor: NodeCursor, references: list[str]) -> str:
        cursor.star()
        if command == "hyperref":
            label_nodes, text_nodes = cursor.arguments("[{")
            label = to_latex(label_nodes or []).strip()
            if label:
                references.append(label)
            return self.render(text_nodes)
        labels = [part.strip() for part in to_latex(cursor.argument() or []).split(",") if part.strip()]
        if command in ("crefrange", "Crefrange"):
            labels.append(to_latex(cursor.argument() or []).strip())
        references.extend(labels)
        if command in ("pageref", "cpageref", "Cpageref", "autopageref"):
            return "?"
        targets = [self.labels.get(label, LabelTarget("", "??")) for label in labels]
        numbers = [target.number for target in targets]
        if command == "eqref":
            return f"({numbers[0]})" if numbers else "(??)"
        if command in ("ref", "subref", "vref", "Vref", "labelcref", "tref"):
            return ", ".join(numbers)
        if command == "nameref":
            return " ".join(target.title or target.number for target in targets)
        kind = targets[0].kind if targets else ""
        singular, plural = _KIND_NAMES.get(kind, ("", ""))
        if command in ("namecref", "nameCref"):
            return singular
        joined = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
        if command in ("crefrange", "Crefrange"):
            joined = " to ".join(numbers)
        name = singular if len(numbers) == 1 else plural
        if command == "cref" and kind not in ("table", "figure", "subtable", "subfigure", "section"):
            name = name.lower()
        return f"{name} {joined}".strip()


# An exponent a reader must see raised: a number, a signed term (`e^{-x}`, never `e-x`) or a parenthesised index
# (`h^{(l)}`, never the call `h(l)`).
_EXPONENT = re.compile(r"^(?:[-+−]?[\d(]|[-+−]\S)")
_WORD_SCRIPT = re.compile(r"^[A-Za-z][A-Za-z-]*[A-Za-z]$")  # `dev`, `macro`, `CE`: a name, not an index
_ORDINAL = re.compile(r"^(?:st|nd|rd|th)$")


def _text_script_mark(name: str, script: str) -> str:
    """`_`/`^` before a text-mode script that would otherwise join the word (`Acc_dev`, `Annotations^a`, `x^2`,
    `10^-3`); none before a subscript index or number (`H2O`), an ordinal (`1st`) or a marker symbol (`87.3*`)."""
    if name == "textsubscript":
        return "_" if _WORD_SCRIPT.match(script) else ""
    return "^" if (script.isalnum() and not _ORDINAL.match(script)) or _EXPONENT.match(script) else ""


_TEXT_COMMANDS = ("text", "textrm", "mathrm", "textit", "mathit", "textsf", "mathsf", "textbf", "mathbf", "texttt")


def _flatten_scripts(token: Token, cursor: NodeCursor, *, has_base: bool) -> list[Node]:
    """A math run with `_`/`^` as a reader writes it on one line: `β_2` → β2, `10^{21}` → 10^21, `87.3^*` → 87.3*.

    The caret stays only before an exponent (a number, maybe signed, or a parenthesised index: `h^{(l)}` → h^(l))
    that follows something, where dropping it would change what is read; `^\\circ` is a degree sign. A script
    that is a word keeps its mark, as plain-text tables write it (`Acc_{dev}` → Acc_dev, `F1_{\\text{macro}}` →
    F1_macro), except an ordinal (`5^{th}` → 5th).
    """
    out: list[Node] = []
    text = ""
    in_exponent = False  # just after a kept `^2`: a subscript there keeps its `_` (`R^2_w`, not `R^2w`)
    for position, char in enumerate(token.text):
        if char not in "_^":
            text += char
            in_exponent = in_exponent and (char.isdigit() or char in "-+−.")
            continue
        has_base = has_base or bool(text.strip())
        if char == "_" and in_exponent:
            text += "_"
            in_exponent = False
            continue
        rest = token.text[position + 1 :]
        following = cursor.peek() if not rest else None
        if char == "^" and _is_circle(following):
            cursor.next()
            text += "°"
            continue
        if char == "^":
            script = rest or (latex_to_text(to_latex(following.children)) if isinstance(following, Group) else "")
            if has_base and _EXPONENT.match(script):
                text += "^"
                in_exponent = True
                continue
        script = _script_text(cursor, following) if not rest else ""
        if has_base and (_WORD_SCRIPT.match(script) or (_is_upright(following) and script.isalpha())):
            if char == "_" or not _ORDINAL.match(script):
                text += char
                continue
        if text:
            out.append(Token(CHAR, text, token.file))
            text = ""
        out.append(Group([]))  # keeps `\alpha` apart from the letters that followed its script mark
    if text:
        out.append(Token(CHAR, text, token.file))
    return out


_GLUE_NUMBER = re.compile(r"[-+]*(?:\d+(?:[.,]\d*)?|[.,]\d+)?")
_GLUE_UNIT = re.compile(r"(?:true)?(?:pt|pc|in|bp|cm|mm|dd|cc|sp|em|ex|mu|px|fil+)", re.IGNORECASE)


def _skip_glue(cursor: NodeCursor) -> bool:
    """Read the glue after `\\hskip`/`\\kern` (`1em`, `-2pt`, `0.5\\tabcolsep`, `2pt plus 1fil minus 1pt`) without
    printing it; True when it is negative (a kern pulling text together prints no space)."""
    negative = False
    for part in range(3):
        cursor.skip_spaces()
        node = cursor.peek()
        if part:  # only `plus <glue>` or `minus <glue>` may follow the dimension
            keyword = next((word for word in ("plus", "minus") if _char_text(node).startswith(word)), None)
            if keyword is None:
                break
            cursor.take_chars(len(keyword))
            cursor.skip_spaces()
            node = cursor.peek()
        if isinstance(node, Group):
            cursor.next()
            continue
        text = _char_text(node)
        length = _GLUE_NUMBER.match(text).end()  # the number is optional: this always matches
        unit = _GLUE_UNIT.match(text, length)
        negative = negative or (not part and text[:length].count("-") % 2 == 1)
        if unit:
            cursor.take_chars(unit.end())
            continue
        if length:
            cursor.take_chars(length)
        following = cursor.peek()
        if isinstance(following, Token) and following.kind == CS:  # a length register: \\tabcolsep, \\fill
            cursor.next()
    return negative


def _char_text(node: Node | None) -> str:
    return node.text if isinstance(node, Token) and node.kind == CHAR else ""


def _script_text(cursor: NodeCursor, following: Node | None) -> str:
    """The text of a braced script, or of a script that is one text command (`_\\text{macro}`)."""
    if isinstance(following, Group):
        return latex_to_text(to_latex(following.children)).strip()
    after = cursor.nodes[cursor.position + 1] if cursor.position + 1 < len(cursor.nodes) else None
    if isinstance(following, Token) and following.is_cs(*_TEXT_COMMANDS) and isinstance(after, Group):
        return latex_to_text(to_latex(after.children)).strip()
    return ""


_ERROR_BASE = re.compile(r"(\d[\d.]*)([_^])$")
_SIGNED = re.compile(r"^[-+−]\s*\d[\d.]*$")


def _asymmetric_error(token: Token, cursor: NodeCursor) -> list[Node] | None:
    """`4.21_{-2.60}^{+11.2}` (either order): a value with its lower and upper error, never a subtraction.

    It reads `4.21 +11.2/-2.60`, the upper error first, as plain-text catalogues write it."""
    nodes, position = cursor.nodes, cursor.position
    match = _ERROR_BASE.search(token.text) if token.kind == CHAR else None
    before = next((node for node in reversed(nodes[: position - 1]) if getattr(node, "kind", None) != SPACE), None)
    separate_base = isinstance(before, Group) or (isinstance(before, Token) and before.text[-1:].isdigit())
    if separate_base and token.text in ("_", "^"):  # `{21.35}^{+0.37}_{-0.26}`, `0.54 _{-0.16}^{+0.32}`
        match = re.match(r"()([_^])$", token.text)
    script, mark, other_script = [*nodes[position : position + 3], None, None, None][:3]
    other = "^" if match and match.group(2) == "_" else "_"
    if not (match and isinstance(script, Group) and _char_text(mark) == other and isinstance(other_script, Group)):
        return None
    first, second = (normalize_space(latex_to_text(to_latex(group.children))) for group in (script, other_script))
    if not (_SIGNED.match(first) and _SIGNED.match(second)):
        return None
    upper, lower = (second, first) if match.group(2) == "_" else (first, second)
    cursor.position += 3
    base = token.text[: match.start(2)]
    return [Token(CHAR, escape(f"{base} {upper.replace(' ', '')}/{lower.replace(' ', '')}"), token.file)]


def _ends_word(node: Node | None) -> bool:
    """Whether a letter or digit is the last thing printed before a formula (`Acc$_{dev}$`, `{\\rm Acc}$_x$`)."""
    if isinstance(node, Group):
        return _ends_word(node.children[-1] if node.children else None)
    return isinstance(node, Token) and node.kind == CHAR and node.text[-1:].isalnum()


def _is_upright(following: Node | None) -> bool:
    """A script set in a text font (`_{\\rm h}`, `_\\text{h}`, `_{\\mathrm{h}}`) is a name, however short."""
    if isinstance(following, Group):
        inner = [child for child in following.children if not (isinstance(child, Token) and child.kind == SPACE)]
        following = inner[0] if inner else None
    return isinstance(following, Token) and (following.is_cs(*_TEXT_COMMANDS) or following.is_cs(*FONT_SWITCHES))


def _is_circle(node: Node | None) -> bool:
    if isinstance(node, Group):
        inner = [child for child in node.children if not (isinstance(child, Token) and child.kind == SPACE)]
        return len(inner) == 1 and _is_circle(inner[0])
    return isinstance(node, Token) and node.is_cs("circ")


# Private-use marks around a citation rendered in a cell, so `render` can tell it from text written in brackets.
_CITE_OPEN, _CITE_CLOSE = "\ue000", "\ue001"
_CITED = re.compile(f"\\s*{_CITE_OPEN}[^{_CITE_CLOSE}]*{_CITE_CLOSE}")


def _citation(cursor: NodeCursor) -> str:
    _, before, after, cited = cursor.arguments("*[[{")
    keys = [part.strip() for part in to_latex(cited).split(",") if part.strip()]
    note = to_latex(after if after is not None else before or []).strip()
    marker = ", ".join(keys)
    return f"[{marker}{', ' + latex_to_text(note) if note else ''}]"


def tabular_parts(env: Env) -> tuple[list[Node], list[Node]]:
    """A tabular environment's column specification and its body (the rows), its other arguments skipped."""
    name, cursor = env.name, NodeCursor(env.children)
    if name in ("tabular*", "tabularx", "tabulary", "xltabular", "NiceTabular*"):  # the width first
        cursor.arguments("[{")
    cursor.optional()
    if name in ("tabu", "longtabu"):  # `\\begin{tabu} to 0.5\\textwidth {…}`: the width comes before the columns
        cursor.skip_spaces()
        node = cursor.peek()
        if isinstance(node, Token) and node.kind == CHAR and node.text.strip().startswith(("to", "spread")):
            while not cursor.at_end() and not isinstance(cursor.peek(), Group):
                cursor.next()
    spec = cursor.argument() or []
    if name not in ("tblr", "longtblr", "talltblr"):
        cursor.optional()
    return spec, cursor.nodes[cursor.position :]


LIST_ENVS = frozenset(
    {"itemize", "enumerate", "description", "compactitem", "compactenum", "inparaenum", "asparaenum",
     "enumerate*", "itemize*", "description*", "tasks", "outline", "list"}
)  # fmt: skip
# Layout arguments an environment opens with, as `NodeCursor.arguments` reads them: dropped, never text
# (`\begin{itemize}[leftmargin=1em]`, `\begin{minipage}[t]{0.45\linewidth}`, `\begin{multicols}{2}`).
ENV_ARGUMENTS = {
    **dict.fromkeys(LIST_ENVS - {"list", "tasks"}, "["),
    "list": "{{", "minipage": "[[[{", "multicols": "{", "multicols*": "{", "adjustwidth": "{{", "adjustwidth*": "{{",
    "changemargin": "{{", "spacing": "{", "otherlanguage": "{", "otherlanguage*": "{", "tcolorbox": "[",
    "mdframed": "[", "columns": "[", "column": "[{", "turn": "{", "rotate": "{", "adjustbox": "[[{[",
    "tablenotes": "[[", "TableNotes": "[[",
}  # fmt: skip


def env_body(env: Env) -> list[Node]:
    """An environment's children without the layout arguments it opens with (`\\begin{turn}{90}Text` → `Text`)."""
    cursor = NodeCursor(env.children)
    cursor.arguments(ENV_ARGUMENTS.get(env.name, ""))
    return cursor.nodes[cursor.position :]


# Relations TeX sets with a thick space on each side when atoms stand on both sides (`$\\gamma=0.3$` → γ = 0.3).
_RELATION_CHARS = re.compile(r"([=<>])")
_RELATION_COMMANDS = frozenset({"leq", "geq", "neq", "le", "ge", "ne", "equiv", "ll", "gg", "leqslant", "geqslant"})


def _is_relation(node: Node) -> bool:
    return _char_text(node) in ("=", "<", ">") or (isinstance(node, Token) and node.name in _RELATION_COMMANDS)


def _split_relations(nodes: list[Node], in_math: bool) -> list[Node]:
    """The same nodes with `=`, `<` and `>` of this list's formulas as tokens of their own (`=0.3` → `=`, `0.3`)."""
    out: list[Node] = []
    math = in_math
    for node in nodes:
        if isinstance(node, Token) and (node.kind == MATH or node.is_cs("(", ")", "[", "]")):
            math = not math if node.kind == MATH else node.name in ("(", "[")
        if math and len(_char_text(node)) > 1 and _RELATION_CHARS.search(_char_text(node)):
            out.extend(Token(CHAR, part, node.file) for part in _RELATION_CHARS.split(node.text) if part)
        else:
            out.append(node)
    return out


def _operand_before(formula: list[Node]) -> bool:
    """An atom precedes in the formula so far, not closed up by `\\!` and not itself a relation."""
    for node in reversed(formula):
        if isinstance(node, Token) and (node.kind == SPACE or (node.kind == CHAR and not node.text.strip())):
            continue
        return not (isinstance(node, Token) and (node.is_cs("!") or _is_relation(node)))
    return False


def _operand_after(cursor: NodeCursor) -> bool:
    """An atom follows before the formula closes, not closed up by `\\!`."""
    for node in cursor.nodes[cursor.position :]:
        if isinstance(node, Token) and node.kind == SPACE:
            continue
        closing = isinstance(node, Token) and (node.kind == MATH or node.is_cs(")", "]", "!"))
        return not closing
    return False
