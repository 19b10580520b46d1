"""The one table of symbol commands pylatexenc's latex2text lacks: LaTeX2e and textcomp text symbols, and the
math symbols papers put in tables. Everything else comes from pylatexenc's own tables; `_converter` in
`curation.latex.text` registers these beside them, and tests/curation/latex/test_symbols.py sweeps both."""

from __future__ import annotations

SYMBOLS: dict[str, str] = {
    # LaTeX2e text symbols (fontenc T1/OT1) and their short forms
    "textbar": "|", "textgreater": ">", "textless": "<", "textunderscore": "_", "textbraceleft": "{",
    "textbraceright": "}", "textquotedbl": '"', "pounds": "£", "copyright": "©", "ddag": "‡", "S": "§", "P": "¶",
    "slash": "/", "SS": "SS", "LaTeX": "LaTeX", "TeX": "TeX", "LaTeXe": "LaTeX2e",
    # textcomp (TS1) symbols
    "textminus": "−", "textsurd": "√", "textbardbl": "‖", "textpilcrow": "¶", "textcopyleft": "🄯",
    "textborn": "★", "textdied": "†", "textmarried": "⚭", "textdivorced": "⚮", "textleaf": "🙧",
    "textlquill": "⁅", "textrquill": "⁆", "textguarani": "₲", "textinterrobangdown": "⸘", "textlbrackdbl": "⟦",
    "textrbrackdbl": "⟧", "textdblhyphen": "⹀", "textdblhyphenchar": "⹀", "textgravedbl": "̏",
    "texttwelveudash": "—", "textthreequartersemdash": "—", "textquotestraightbase": "‚",
    "textquotestraightdblbase": "„", "textcentoldstyle": "¢", "textdollaroldstyle": "$",
    "textzerooldstyle": "0", "textoneoldstyle": "1", "texttwooldstyle": "2", "textthreeoldstyle": "3",
    "textfouroldstyle": "4", "textfiveoldstyle": "5", "textsixoldstyle": "6", "textsevenoldstyle": "7",
    "texteightoldstyle": "8", "textnineoldstyle": "9",
    # math and marker symbols seen in tables (amssymb, upgreek, pifont/bbding-style marks)
    "checkmark": "✓", "|": "‖", "ne": "≠", "degree": "°", "ddagger": "‡", "neg": "¬", "land": "∧", "lor": "∨",
    "Re": "ℜ", "Im": "ℑ", "triangle": "△", "heartsuit": "♡", "bigstar": "★", "models": "⊨", "bot": "⊥",
    "clubsuit": "♣", "spadesuit": "♠", "diamondsuit": "♢", "coloneqq": "≔", "nsim": "≁", "ohm": "Ω",
    "micro": "µ", "euro": "€", "EUR": "€", "Box": "□", "Diamond": "◇", "dashrightarrow": "⇢", "iff": "⟺",
    "implies": "⟹", "impliedby": "⟸", "gets": "←", "nleqslant": "⪇", "ngeqslant": "⪈", "eqsim": "≂",
    "Diamondblack": "◆", "varheartsuit": "♥", "vardiamondsuit": "♦",
    "upalpha": "α", "upbeta": "β", "upgamma": "γ", "updelta": "δ", "upepsilon": "ϵ", "upvarepsilon": "ε",
    "upzeta": "ζ", "upeta": "η", "uptheta": "θ", "upiota": "ι", "upkappa": "κ", "uplambda": "λ", "upmu": "μ",
    "upnu": "ν", "upxi": "ξ", "uppi": "π", "uprho": "ρ", "upsigma": "σ", "uptau": "τ", "upupsilon": "υ",
    "upphi": "ϕ", "upvarphi": "φ", "upchi": "χ", "uppsi": "ψ", "upomega": "ω", "upDelta": "Δ", "upGamma": "Γ",
    "upOmega": "Ω", "upSigma": "Σ", "upPhi": "Φ", "upPi": "Π", "upTheta": "Θ", "upLambda": "Λ",
    "xmark": "✗", "cmark": "✓", "tick": "✓", "cross": "✗",
    # amsmath's operator names pylatexenc drops (`$\Pr(x)$` read `(x)`)
    "arg": "arg", "cot": "cot", "coth": "coth", "csc": "csc", "deg": "deg", "det": "det", "dim": "dim", "gcd": "gcd",
    "hom": "hom", "ker": "ker", "lg": "lg", "Pr": "Pr", "sec": "sec", "injlim": "inj lim", "projlim": "proj lim",
    # pylatexenc has these, but not as LaTeX prints them
    "textasciicircum": "^",
}  # fmt: skip

# Spacing commands without an argument: each prints one space.
SPACES = frozenset(
    {"quad", "qquad", "enskip", "enspace", "thinspace", "medspace", "thickspace", ",", ";", ":", ">", " ",
     "hfill", "hfil", "hss", "space", "nobreakspace", "smallskip", "medskip", "bigskip"}
)  # fmt: skip
# TeX primitives followed by glue (`\hskip1em plus 2pt`) or a dimension (`\kern-1pt`): one space (none for a
# negative one); the glue is read, never printed.
GLUE_COMMANDS = frozenset({"hskip", "vskip", "kern", "mskip", "mkern", "hglue", "vglue"})
# Font switches print nothing; the words after them stay as they are (`{\rm abs}` reads `abs`).
FONT_SWITCHES = frozenset(
    {"rm", "bf", "it", "sf", "tt", "sc", "sl", "em", "cal", "mit", "bfseries", "itshape", "rmfamily",
     "sffamily", "ttfamily", "mdseries", "upshape", "scshape", "slshape", "normalfont", "boldmath",
     "unboldmath", "tiny", "scriptsize", "footnotesize", "small", "normalsize", "large", "Large", "LARGE",
     "huge", "Huge", "displaystyle", "textstyle", "scriptstyle", "scriptscriptstyle"}
)  # fmt: skip
