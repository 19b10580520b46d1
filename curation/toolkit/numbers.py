"""Parse numbers out of table cells as people write them: 1,234 · (5.2) · 12.3% · 85.1 ± 0.4 · **3.2**† · $4.5M."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

_EMPTY = {"", "-", "--", "—", "–", "n/a", "na", "nan", "none", "null", "?", "x", "✗", "✓"}

# LaTeX commands whose argument is kept (formatting) and marks that are footnotes, not data.
_WRAPPERS = re.compile(
    r"\\(?:textbf|mathbf|bf|textit|mathit|emph|underline|uline|bm|boldsymbol|mathrm|text|textrm|textsf"
    r"|mathsf|textup|ensuremath|cellcolor\{[^{}]*\}|color\{[^{}]*\}|textcolor\{[^{}]*\}|makecell|hl)\s*\{([^{}]*)\}"
)
_SUPERSCRIPT = re.compile(r"\^\s*(?:\{[^{}]*\}|\\?[A-Za-z*†‡§¶]+|\d)|\\textsuperscript\{[^{}]*\}|<sup>.*?</sup>")
_LATEX_MARKS = re.compile(r"\\(?:dagger|ddagger|ast|star|S|P|sharp|natural|flat|checkmark)\b|\\[,;:! ]")
_FOOTNOTE_CHARS = "*†‡§¶#⁎∗"
_UNICODE_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ⁺⁻"
_PLUS_MINUS = re.compile(r"±|\\pm\b|\+/-|\+-|\\mp\b|∓")
_CURRENCY = r"(?:US\$|A\$|C\$|HK\$|R\$|S\$|\$|€|£|¥|₹|₩|₽|₺|Rs\.?|USD|EUR|GBP|JPY|CNY|RMB|INR)"
_NUMBER = re.compile(
    rf"^(?P<sign>[+-])?\s*(?:(?P<currency>{_CURRENCY})\s*)?(?P<sign2>[+-])?\s*(?P<digits>\d+(?:\.\d*)?|\.\d+)"
    r"(?:[eE](?P<exp>[+-]?\d+))?"
    r"\s*(?P<rest>.*)$"
)
# What may follow the number: a percent sign and/or a short unit word (ms, GB, M, bn, °C, km/h, x).
_UNIT = re.compile(r"^(?:%|pp|p\.p\.)?\s*(?:[A-Za-zµ°Ω/]{1,12}\.?)?\s*(?:%)?$")
_TIMES_TEN = re.compile(r"\s*(?:×|x|\\times|\*|·|\\cdot)\s*10\s*\^\s*\{?\s*([+\-\u2212]?\d+)\s*\}?")
_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
_THOUSANDS_SPACE = re.compile(r"(?<=\d)[\u00a0\u2009\u202f' ](?=\d{3}(?:\D|$))")


@dataclass(frozen=True)
class ParsedNumber:
    """A number read from a cell: its value as written, whether it carried a percent sign, and its unit."""

    value: float
    is_percent: bool = False
    unit: str = ""  # currency and/or suffix as written ("$", "ms", "M"), so callers can refuse to mix units


# A citation left in a name: "[jing2021seeking]", "[devlin2019bert, liu2019]", "\\cite{key}" / "\\citep{key}".
_BIB_KEY = r"[A-Za-z][\w:.-]*\d{2,4}[\w:.-]*"
_CITATION = re.compile(rf"\s*(?:\[{_BIB_KEY}(?:\s*[,;]\s*{_BIB_KEY})*\]|\\cite[tp]?\*?\{{[^}}]*\}})")


def without_citations(text: str) -> str:
    """A name without the citation keys a LaTeX table left in it ("BERT [devlin2019bert]" → "BERT")."""
    return _CITATION.sub("", str(text)).strip() or str(text).strip()


def clean_cell(text: str) -> str:
    """Strip markup from a cell (bold markers, LaTeX wrappers, math dollars, footnote marks) and trim it."""
    cleaned = str(text).strip()
    for _ in range(4):
        unwrapped = _WRAPPERS.sub(r"\1", cleaned)
        if unwrapped == cleaned:
            break
        cleaned = unwrapped
    cleaned = re.sub(r"</?(?:b|strong|i|em|u)>", "", cleaned)
    cleaned = re.sub(r"\*\*|__", "", cleaned)
    cleaned = _SUPERSCRIPT.sub("", cleaned)
    cleaned = _LATEX_MARKS.sub(" ", cleaned)
    if cleaned.count("$") >= 2:  # math mode delimiters, not a currency sign
        cleaned = cleaned.replace("$", "")
    cleaned = cleaned.replace("\\%", "%").replace("{", "").replace("}", "")
    cleaned = cleaned.strip().rstrip(_FOOTNOTE_CHARS + _UNICODE_SUPERSCRIPTS).strip()
    cleaned = cleaned.lstrip(_FOOTNOTE_CHARS).strip()
    return re.sub(r"\s+", " ", cleaned)


def parse_numeric(text: object) -> ParsedNumber | None:
    """Parse a cell into a ParsedNumber, or None when the cell is not a single number."""
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, int | float):
        return ParsedNumber(float(text)) if math.isfinite(text) else None
    # "2.5 × 10^{3}" must become an exponent before footnote stripping removes the superscript.
    cleaned = _TIMES_TEN.sub(lambda match: "e" + match.group(1).replace("\u2212", "-"), str(text))
    cleaned = clean_cell(cleaned)
    if cleaned.lower() in _EMPTY:
        return None
    cleaned = cleaned.replace("\u2212", "-").replace("\u2013", "-").replace("\u2014", "-").replace("\ufe63", "-")
    head, *tail = _PLUS_MINUS.split(cleaned, maxsplit=1)
    is_percent_tail = bool(tail) and tail[0].strip().endswith("%")
    cleaned = head.strip()
    negative = False
    parenthesised = re.fullmatch(rf"({_CURRENCY}\s*)?\((.+)\)\s*(%?)", cleaned)
    if parenthesised:
        negative = True
        cleaned = (parenthesised.group(1) or "") + parenthesised.group(2).strip() + parenthesised.group(3)
    else:
        # "85.3 (0.4)": a spread in parentheses after the value.
        cleaned = re.sub(r"\s*\([^()]*\)\s*$", "", cleaned) if re.match(r"^[^()]*\d[^()]*\(", cleaned) else cleaned
    cleaned = _THOUSANDS_SPACE.sub("", _THOUSANDS_COMMA.sub("", cleaned))
    match = _NUMBER.match(cleaned)
    if match is None:
        return None
    rest = match.group("rest").strip()
    if not _UNIT.match(rest) or "," in rest:
        return None
    signs = (match.group("sign") or "") + (match.group("sign2") or "")
    if len(signs) > 1:
        return None
    value = float(match.group("digits"))
    if match.group("exp") is not None:
        exponent = int(match.group("exp"))
        if abs(exponent) > 300:
            return None
        value *= 10.0**exponent
    if signs == "-":
        value = -value
    if negative:
        value = -abs(value)
    if not math.isfinite(value):
        return None
    unit = " ".join(part for part in (match.group("currency") or "", rest.replace("%", "").strip()) if part)
    return ParsedNumber(value=value, is_percent="%" in rest or is_percent_tail, unit=unit)


def parse_number(text: object) -> float | None:
    """Return the numeric value of a cell as written (12.5% → 12.5), or None when it is not a number."""
    parsed = parse_numeric(text)
    return None if parsed is None else parsed.value


def half_up(value: float, digits: int, *, scale: int = 1) -> Decimal:
    """`value × scale` rounded half-up on its decimal value, as the papers round (0.6345 at scale 100 → 63.5, where
    float arithmetic and Python's half-even give 63.4). The one rounding of every printed figure."""
    rounded = (Decimal(str(value)) * scale).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return rounded if rounded else abs(rounded)  # never "-0.0"


def fixed(value: float | None, digits: int = 1, *, scale: int = 1, signed: bool = False, missing: str = "—") -> str:
    """A figure as printed on pages, CSV, LaTeX and commands: `digits` decimals rounded half-up (`half_up`), a sign
    when `signed`, `missing` for None or a non-finite value."""
    if value is None or not math.isfinite(value):
        return missing
    return format(half_up(value, digits, scale=scale), "+f" if signed else "f")


def format_number(value: float, *, decimals: int = 2) -> str:
    """Format a computed number for an answer: rounded, without trailing zeros (3.50 → '3.5', 4.0 → '4')."""
    rounded = round(float(value), decimals)
    if rounded == 0:
        rounded = 0.0  # avoid '-0'
    return f"{rounded:.{decimals}f}".rstrip("0").rstrip(".") if decimals > 0 else f"{rounded:.0f}"
