"""TAT-QA's answer types, scales and answer sources, and the suggestion of a type and a scale from the evidence (pure).

A suggestion is made only from evidence: the cells the answer is read or computed from (their units, their row and
column headers), the table's scale notes, the notes of the surrounding text, and the derivation. When the evidence
is absent or conflicts, the suggestion has no value and nothing is preselected."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from curation.table_shape import EXCEPT as _EXCEPT
from curation.table_shape import TableShape, scale_note
from curation.toolkit.tools import ToolBox, ToolError

ANSWER_TYPES = ("span", "multi-span", "arithmetic", "count")
ANSWER_SOURCES = ("table", "text", "table-text")
ANSWER_TYPE_LABELS = {"span": "Span", "multi-span": "Multi-span", "arithmetic": "Arithmetic", "count": "Count"}
SCALES = ("", "thousand", "million", "billion", "percent")
SCALE_LABELS = {"": "None", "thousand": "Thousand", "million": "Million", "billion": "Billion", "percent": "Percent"}
# A stored scale is "" for None and null while nobody has chosen one. A page's <select> cannot tell "" from "not
# chosen", so there the scale None is NO_SCALE and "" is "— choose —".
NO_SCALE = "none"
SCALE_FORM_CHOICES = (("", "— choose —"), *((value or NO_SCALE, label) for value, label in SCALE_LABELS.items()))


def scale_of_form(value: str | None) -> str | None:
    """A page's scale choice as stored: None when not chosen, "" for the scale None."""
    return None if not value else "" if value == NO_SCALE else value


def scale_for_form(scale: str | None) -> str:
    """A stored scale as a page's <select> value (the inverse of `scale_of_form`)."""
    return "" if scale is None else scale or NO_SCALE


_NUMBER = re.compile(r"^[-−+(]?[$€£¥]?\s*[-−(]?\s*\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?\s*%?\)?$")
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
# An operation between two numbers ("87.3 - 81.0", "(2 + 3) / 2", "12 × 4") or a result line ("… = 6.3").
_OPERATION = re.compile(r"\d\s*[%)\]]*\s*[-−+*/×÷]\s*[(\[]*\s*[-−]?\s*[$€£]?\d|=\s*[-−]?[$€£]?\d")
_DIVISION = re.compile(r"\d\s*[%)\]]*\s*[/÷]")
_ADDITIVE = re.compile(r"\d\s*[%)\]]*\s*[-−+]\s*[(\[]*\s*[-−]?\s*[$€£]?\d")
_TIMES_HUNDRED = re.compile(r"[*×x]\s*100(?![\d.,])|\b100\s*[*×]|\btimes 100\b", re.IGNORECASE)
_COUNT_QUESTION = re.compile(r"^\s*(?:how many|what is the (?:total )?number of|count)\b", re.IGNORECASE)
# The question asks for a percentage ("percentage change", "what percent", "% change"); a "%" inside a name such as
# "Readmission (%)" is no such request.
_PERCENT_QUESTION = re.compile(
    r"\bpercent(?:age)?\b(?!\s*\))|(?<![(\w])%\s*(?:change|of|increase|decrease|growth)\b|\bas a percent", re.IGNORECASE
)
# Asks for a rank, not a name that holds the word ("ROME (rank-one)", "Rank-1 accuracy").
_RANK_QUESTION = re.compile(r"(?<![\w-])(?:rank(?:ed|ing)?|position)(?![\w-])", re.IGNORECASE)
# Row names that count things: their values are counts, whatever the column's unit.
_COUNT_ROW = re.compile(r"^\s*(?:observations|obs\.?|n|#\s*\w*|number of\b.*|no\. of\b.*|count)\s*$", re.IGNORECASE)
_PER_UNIT = re.compile(
    r"\bper (?:\w+ ){0,2}(?:share|unit|employee|ton|barrel|day)s?\b|\bEPS\b|\bratio\b", re.IGNORECASE
)
# Units that are no scale: "Lives (Years)", "(in days)", "(x)"; and counts of years, times, items.
_PLAIN_UNIT = re.compile(r"\(\s*(?:in\s+)?(?:years?|months?|days?|hours?|times|x)\s*\)", re.IGNORECASE)
_COUNT_OF_THINGS = re.compile(
    r"^\s*(?:in )?how many (?:years|times|months|quarters|periods|segments|countries)\b", re.IGNORECASE
)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_INTEGER = re.compile(r"^\d+$")
# An amount writing its own scale with its currency: "$18.2B", "€4.4bn", "$250K" ("512B" may be bytes, "5 m" metres).
_CELL_SCALE = re.compile(
    r"[$€£¥]\s*[-+]?\d[\d,]*(?:\.\d+)?\s*(?:(?P<billion>bn?|billions?)|(?P<million>m|mn|mm|millions?)"
    r"|(?P<thousand>k|thousands?))(?![^\W\d_])",
    re.IGNORECASE,
)
# Tools of a recorded program (the template drafter's essential actions) that read cells, and that compute a number.
_READ_TOOLS = frozenset({"get_cell", "get_column"})
ARITHMETIC_TOOLS = frozenset({"add", "sum", "subtract", "multiply", "divide", "mean", "proportion", "percentage"})
_PERCENT_TOOLS = frozenset({"proportion", "percentage", "percentage_change"})
_ADDITIVE_TOOLS = frozenset({"add", "sum", "subtract", "mean"})
# Units as tables write them, the first that matches: "%" as a unit ("Accuracy (%)", "% change", "Margin %"), not
# inside a name ("4.875% Senior Notes"); scale words "(in millions)", "$ in thousands", "in $000s", "(millions)",
# "Params (M)"; a lower-case "(m)" is metres ("Height Err. (m)"), never a million.
_HEADER_UNITS = {  # matched ignoring case
    "percent": r"(?<![\d.])%|\bpercent(?:age)?s?\b|\bpct\b",
    "billion": r"\bbillions?\b|[$€£¥]\s*['’]?bn\b|\bin\s+bn\b|\(\s*b\s*\)",
    "million": r"\bmillions?\b|[$€£¥]\s*['’]?m(?:n|m)?\b|\bin\s+m(?:n|m)\b|(?-i:\(\s*M\s*\))",
    "thousand": r"\bthousands?\b|[$€£¥]?\s*['’]000s?\b|\$\s*000s?\b|\bin\s+000s?\b|\(\s*k\s*\)",
}
# A scale note in running text: "(in thousands)", "in millions, except per share data", "$ in millions".
_TEXT_NOTES = {  # matched ignoring case
    "billion": r"\bin\s+(?:[$€£¥]\s*)?billions\b|\(\s*[$€£¥]?\s*billions?\s*\)",
    "million": r"\bin\s+(?:[$€£¥]\s*)?millions\b|\(\s*[$€£¥]?\s*millions?\s*\)",
    "thousand": r"\bin\s+(?:[$€£¥]\s*)?thousands\b|\(\s*[$€£¥]?\s*thousands?\s*\)|['’]000s?\b",
}


@dataclass(frozen=True)
class Suggestion:
    """A suggested value with its evidence; `value` None means no suggestion (nothing is preselected)."""

    value: str | None
    evidence: str


def is_number(text: str) -> bool:
    """A single number as answers write it: 1,234.5, -3, $12, (4.2), 85%."""
    return bool(_NUMBER.match(text.strip()))


def is_computed_percentage(answer_type: str | None, answer: Sequence[str]) -> bool:
    """TAT-QA writes a computed percentage as its number with the scale Percent (25.14, percent), while a span keeps
    its own % with the scale None: an arithmetic answer "25.14%" takes the scale Percent."""
    return answer_type == "arithmetic" and any(item.strip().endswith("%") for item in answer)


def _value(text: str) -> float | None:
    """The magnitude a number in text stands for (sign, currency, % and thousands separators ignored)."""
    match = _NUMBER_IN_TEXT.search(text.replace(" ", "") if _NUMBER.match(text.strip()) else text)
    # Digits with commas and at most one decimal part: a float once the commas go.
    return abs(float(match.group().replace(",", ""))) if match else None


def _items(answer: Sequence[str]) -> list[str]:
    return [str(item).strip() for item in answer if str(item).strip()]


def suggest_answer_type(
    *, question: str, rationale: str, answer: Sequence[str], tools: Iterable[str] = ()
) -> Suggestion:
    """Multi-span for several items; count for a whole number a "how many" question gets without arithmetic;
    arithmetic for a number the recorded program (else the rationale) computes; span for a single item read as is."""
    items = _items(answer)
    tools = {tool for tool in tools if tool}
    if not items:
        return Suggestion(None, "no answer yet")
    # A recorded program is the evidence when there is one: names in its rationale ("Qwen3.6-27B") read as operations.
    computed = bool(tools & ARITHMETIC_TOOLS) if tools else bool(_OPERATION.search(rationale or ""))
    is_whole = len(items) == 1 and bool(_INTEGER.match(items[0].replace(",", "")))
    if is_whole and "count" in tools:
        return Suggestion("count", "the program counts")
    if is_whole and _COUNT_QUESTION.match(question or "") and not computed and not _YEAR.match(items[0]):
        if (rationale or "").strip() and not _NUMBER_IN_TEXT.fullmatch(rationale.strip().replace(",", "")):
            return Suggestion("count", "a 'how many' question answered by a whole number the rationale lists")
        return Suggestion(None, "a 'how many' question: a count or a value read from a cell — choose")
    if len(items) > 1:
        return Suggestion("multi-span", f"{len(items)} answer items")
    if computed:
        if not is_number(items[0]):
            return Suggestion("span", "one text item; the rationale compares numbers")
        return Suggestion("arithmetic", "the rationale computes the answer" if not tools else "the program computes")
    return Suggestion("span", "one answer item, not computed")


# --- scale -------------------------------------------------------------------------------------------------------


def _unit_of(text: str) -> str | None:
    """The scale a header or cell text names, or None ("except per share and percentages" names no scale)."""
    text = _EXCEPT.sub("", text)
    return next((scale for scale, pattern in _HEADER_UNITS.items() if re.search(pattern, text, re.IGNORECASE)), None)


@dataclass(frozen=True)
class _Cell:
    table: int
    row: int
    column: int
    text: str


def _source_cells(tables: Sequence[TableShape], values: Sequence[float]) -> list[_Cell]:
    """The cells whose number equals one of `values` (each value's cells)."""
    found: list[_Cell] = []
    for t, table in enumerate(tables):
        for r, row in enumerate(table.grid):
            for c, cell in enumerate(row):
                text = str(cell).strip()
                if not text or not re.search(r"\d", text) or len(text) > 24:
                    continue
                number = _value(text)
                if number is not None and any(abs(number - v) < 1e-9 for v in values):
                    found.append(_Cell(t, r, c, text))
    return found


def _program_cells(tables: Sequence[TableShape], actions: Iterable[Mapping]) -> list[_Cell] | None:
    """The cells a recorded program read (its get_cell and get_column calls), placed in `tables`; None when it read
    none. When a read names no cell of `tables`, or its cell now holds other text, none is placed: a program's
    sources are all known or not at all."""
    reads = [action for action in actions if isinstance(action, Mapping) and action.get("tool") in _READ_TOOLS]
    if not reads:
        return None
    # Labelled as the drafter's tool box labels a context's tables (drafting.services.drafter).
    toolbox = ToolBox(
        [table.tool_input(table.display_label(position), position) for position, table in enumerate(tables)]
    )
    cells: list[_Cell] = []
    try:
        for action in reads:
            arguments, result = action.get("arguments") or {}, action.get("result")
            # A draft's own table is the one it read, whatever label its drafting gave it.
            found = toolbox.tables[0] if len(tables) == 1 else toolbox.table(str(arguments.get("table", "")))
            index = toolbox.tables.index(found)
            column = toolbox.column_index(found, str(arguments.get("column", "")))
            read = result if action["tool"] == "get_column" else {arguments.get("row"): result}
            for row, text in dict(read or {}).items():
                body_row = toolbox.row_index(found, str(row))
                if str(found.cells[body_row][column]) != str(text):
                    return []
                top = tables[index].height - len(found.cells)  # the header rows above the body
                cells.append(_Cell(index, top + body_row, column, str(text).strip()))
    except (ToolError, TypeError, ValueError, IndexError):
        return []
    return cells


_NO_NAMES = {"the", "and", "for", "of", "in", "on", "at", "to", "by", "as", "is", "or", "an", "what", "how"}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W\d_]{2,}|(?<!\d)(?:19|20)\d\d(?!\d)", text.lower())) - _NO_NAMES


def _names_in(text: str, names: Iterable[str]) -> bool:
    """Whether `text` names one of `names` (a row's or a column's texts): shares a word or a year with it ("current
    year" names the row "Current year1", "December" the column "Outstanding as of December 31,")."""
    words = _words(text)
    return any(words & _words(name) for name in names)


def _written_as(value: float | None, items: Sequence[str]) -> bool:
    """Whether `value` is one of the answer `items` as written, rounding included (3.70462 is the answer 3.7046)."""
    for item in items:
        answer, decimals = _value(item), re.search(r"\.(\d+)", item)
        tolerance = 0.5 * 10 ** -len(decimals.group(1)) if decimals else 1e-9
        if value is not None and answer is not None and abs(value - answer) <= tolerance:
            return True
    return False


def _named_cells(tables: Sequence[TableShape], cells: list[_Cell], text: str) -> tuple[list[_Cell], str]:
    """The cells whose row or column `text` names; all of them when it names none of their tables' rows and
    columns (nothing tells them apart). Second, the cells it leaves out, as the hint cites them."""
    named = [cell for cell in cells if _names_in(text, _line_texts(tables[cell.table], cell))]
    if named or not any(_names_in(text, _table_names(tables[t])) for t in {cell.table for cell in cells}):
        return named or cells, ""
    where = [
        f"cell '{cell.text}' ({', '.join(f'{k} {_quote(h)!r}' for k, h in _headers(tables[cell.table], cell))})"
        for cell in cells
    ]
    return [], "; ".join(dict.fromkeys(where))


def _line_texts(table: TableShape, cell: _Cell) -> list[str]:
    """The texts of a cell's row and of its column (above and below it): what names it."""
    line = [*table.grid[cell.row], *(row[cell.column] for row in table.grid)]
    return [str(text) for text in line if not is_number(str(text)) or _YEAR.match(str(text).strip())]


def _table_names(table: TableShape) -> list[str]:
    """The texts that name a table's rows and columns: every cell that is no number."""
    return [str(cell).strip() for row in table.grid for cell in row if str(cell).strip() and not is_number(str(cell))]


def _headers(table: TableShape, cell: _Cell) -> list[tuple[str, str]]:
    """The row header and the column headers of a cell as (kind, text)."""
    texts = [str(text).strip() for text in table.grid[cell.row][: cell.column]]
    out = [("row", text) for text in texts if text and not is_number(text)][:1]
    for above in table.grid[: cell.row]:
        # The nearest filled cell at or left of the column: its own header, or one spanning from the left.
        for c in range(min(cell.column, len(above) - 1), -1, -1):
            candidate = str(above[c]).strip()
            if candidate:
                if not is_number(candidate):
                    out.append(("column" if c == cell.column else "spanning column", candidate))
                break
    return out


def _table_notes(table: TableShape) -> set[str]:
    """Scale notes of a whole table: in its caption, or a text cell that is a note ("(in thousands)", "$ MILLION",
    "$'000"); a column's own unit ("Params (M)") is its column's, not the table's."""
    texts = [str(cell) for row in table.grid for cell in row if str(cell).strip() and not is_number(str(cell))]
    notes = _text_notes([table.caption, *texts])
    top = {str(cell) for cell in table.grid[0]} if table.grid else set()
    for text in texts:
        match = scale_note(text)
        # A bare "m" is a note atop the table (TAT-QA's stub "m"); in the body it is a value (male, a size).
        if match and (text in top or text.strip().lower() not in {"m", "mn", "bn"}):
            notes.add(match.lastgroup)
    return notes


def _text_notes(texts: Iterable[str]) -> set[str]:
    notes = _TEXT_NOTES.items()
    return {scale for text in texts for scale, pattern in notes if re.search(pattern, text or "", re.IGNORECASE)}


def _quote(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "…"


def _cell_scale(tables: Sequence[TableShape], cell: _Cell, notes: set[str]) -> Suggestion:
    """The scale of one cell: its own %, a unit in its row or column header, else the table's (or text's) note."""
    table = tables[cell.table]
    if "%" in cell.text:
        return Suggestion("percent", f"cell '{cell.text}' → percent")
    if written := _CELL_SCALE.search(cell.text):
        return Suggestion(written.lastgroup, f"cell '{cell.text}' writes its scale → {written.lastgroup}")
    headers = _headers(table, cell)
    # A per-share value is read in its own row, the section it stands in ("Net loss per share:" over "Basic") or its
    # nearest column header, not a title further up.
    above = table.grid[cell.row - 1 :: -1] if cell.row else []
    section = next((row[0] for row in above if row and row[0].strip() and not any(row[1:])), "")
    nearest = (
        [h for h in headers if h[0] == "row"] + [("section", section)] + [h for h in headers if h[0] == "column"][-1:]
    )
    for kind, header in nearest:
        plain = _EXCEPT.sub("", header)  # "(in thousands, except per share amounts)" scales the amounts
        if _PER_UNIT.search(plain) or _PLAIN_UNIT.search(plain) or (kind == "row" and _COUNT_ROW.match(header)):
            return Suggestion("", f"{kind} '{_quote(header)}' is a per-unit value or a duration → None")
    for kind, header in headers:
        unit = _unit_of(header)
        # A "%" header spanning from the left ("Percent Change" over "Actual", "Constant") is not a later column's.
        if unit and not (unit == "percent" and kind == "spanning column"):
            return Suggestion(unit, f"{kind} '{_quote(header)}' → {unit}")
    for found, where in ((_table_notes(table), "table"), (notes, "text")):
        if len(found) > 1:
            return Suggestion(None, f"the {where} names several scales")
        for scale in found:
            note = "note" if where == "table" else f"note 'in {scale}s'"
            return Suggestion(scale, f"the {where}'s {note} → {scale}")
    if re.search(r"[$€£¥]", cell.text):
        return Suggestion(None, f"cell '{cell.text}' is an amount, but no scale note is found")
    return Suggestion(None, f"cell '{cell.text}' has no unit and no scale note is found — choose")


def _agreed(suggestions: Sequence[Suggestion], disagreeing: str) -> Suggestion:
    values = {s.value for s in suggestions}
    if len(values) == 1:
        return suggestions[0]
    # Every cell's own evidence, the ones without a scale too: the hint says what disagrees with what.
    return Suggestion(None, f"{disagreeing}: " + "; ".join(dict.fromkeys(s.evidence for s in suggestions)))


def suggest_scale(
    *,
    question: str,
    rationale: str,
    answer: Sequence[str],
    tables: Sequence[TableShape] = (),
    notes: Sequence[str] = (),
    answer_type: str | None = None,
    tools: Iterable[str] = (),
    actions: Sequence[Mapping] = (),
) -> Suggestion:
    """The scale of the answer from its source: text answers, years and counts have none; a "%" on the answer,
    a ratio multiplied by 100 or a percentage tool gives percent; a value read from cells or computed by adding
    or subtracting them takes the cells' scale (their own %, their headers' units, the table's or text's note).
    The source cells are those the recorded program (`actions`, whose tools count as `tools`) read, else those
    holding the derivation's numbers or the answer's. A ratio of two cells, a value found in no cell, cells that
    disagree, or an answer whose number is only in cells the question does not name give no suggestion."""
    items = _items(answer)
    tools = {tool for tool in tools if tool} | {a.get("tool") for a in actions if isinstance(a, Mapping)} - {None}
    question, rationale = question or "", rationale or ""
    if not items:
        return Suggestion(None, "no answer yet")
    if not all(is_number(item) for item in items):
        # TAT-QA's convention: an answer that writes its unit ("$85.1 million") keeps the scale None.
        return Suggestion("", "the answer is text; any unit is written in it")
    if answer_type == "count" or _COUNT_OF_THINGS.match(question):
        return Suggestion("", "a count has no scale")
    if len(items) == 1 and _INTEGER.match(items[0]) and _RANK_QUESTION.search(question):
        return Suggestion("", "a rank has no scale")
    # A recorded program is the evidence of what was computed, as for the answer type: its rationale's words
    # ("k = -8", "Train / Test", a sum of 1,200 and 850 it writes without a "+") are names and prose.
    computed = bool(tools & ARITHMETIC_TOOLS) if tools else bool(_OPERATION.search(rationale))
    divides = "divide" in tools if tools else bool(_DIVISION.search(rationale))
    adds = bool(tools & _ADDITIVE_TOOLS) if tools else bool(_ADDITIVE.search(rationale))
    # Several years are names the answer lists (the years above a mean): a program computes one number.
    if all(_YEAR.match(item) for item in items) and (
        len(items) > 1 or not computed or re.match(r"\s*(?:which|what|in which) years?\b", question, re.I)
    ):
        return Suggestion("", "the answer is a year")
    if is_computed_percentage(answer_type, items):
        return Suggestion("percent", f"a computed answer '{items[0]}' is a percentage → Percent, as TAT-QA writes it")
    if any(item.endswith("%") for item in items):
        # TAT-QA's convention: a span that writes its own % keeps the scale None (scorers read the %).
        return Suggestion("", f"answer '{items[0]}' writes its own % → scale None")
    percent_question = bool(_PERCENT_QUESTION.search(question))
    if tools & _PERCENT_TOOLS or _TIMES_HUNDRED.search(rationale):
        return Suggestion("percent", "the derivation multiplies a ratio by 100")
    text_notes = _text_notes(notes)
    program = _program_cells(tables, actions)

    def from_cells(values: Sequence[float], what: str, *, is_read: bool = False) -> Suggestion | None:
        """The scale of the answer's source cells: those its recorded program read, else the cells holding `values`
        (an answer read as is: those the question or rationale names, when it names any of the tables)."""
        disagreeing = "the source cells disagree"
        if program == []:
            return Suggestion(None, "the cells its program read are not in these tables — choose")
        if program is not None:
            # A value the program read is the cell that holds it (a max: the largest), not every cell it read.
            cells = [cell for cell in program if _written_as(_value(cell.text), items)] if is_read else program
            if not cells:
                return Suggestion(None, "the answer is none of the cells its program read — choose")
        else:
            cells = _source_cells(tables, values)
            if is_read and cells:
                cells, unnamed = _named_cells(tables, cells, f"{question} {rationale}")
                if not cells:
                    return Suggestion(
                        None, f"the answer's number is only in cells the question does not name: {unnamed}"
                    )
                disagreeing = f"the answer's number is in {len(cells)} cells whose scales disagree"
        if not cells:
            return None
        found = _agreed([_cell_scale(tables, cell, text_notes) for cell in cells], disagreeing)
        return Suggestion(found.value, f"{what}{found.evidence}")

    numbers = [v for v in (_value(m.group()) for m in _NUMBER_IN_TEXT.finditer(rationale.split("=")[0])) if v]
    if divides:
        if percent_question:
            return Suggestion("percent", "a ratio the question asks as a percentage")
        divisor = re.search(r"[/÷]\s*\(?\s*(\d+(?:\.\d+)?)\s*\)?\s*$", rationale.split("=")[0].strip())
        if divisor and float(divisor.group(1)) in {2.0, 3.0, 4.0, 5.0, 6.0} and adds:
            # An average, (a + b) / 2, keeps its operands' scale.
            found = from_cells(numbers[:-1], "an average of cells: ")
            return found or Suggestion(None, "an average of values found in no cell")
        return Suggestion(None, "a ratio: its scale depends on how it is read — choose")
    if _PER_UNIT.search(question) and not percent_question:
        return Suggestion("", "the question asks for a per-unit value or a ratio → None")
    if computed:
        found = from_cells(numbers, "computed from cells: ")
        if found is None:
            return Suggestion(None, "the operands are found in no cell")
        if found.value == "percent" and not adds:
            return Suggestion(None, "a product of percentages — choose")
        return found
    found = from_cells([v for v in (_value(item) for item in items) if v is not None], "", is_read=True)
    if found is None:
        if percent_question:
            return Suggestion("percent", "the question asks for a percentage")
        return _text_unit(items, notes)
    if found.value is not None and percent_question and found.value != "percent":
        return Suggestion(None, f"the question asks for a percentage but {found.evidence}")
    return found


_TEXT_UNITS = (
    ("percent", r"\s*(?:%|percent\b|per cent\b)"),
    ("billion", r"\s*(?:billion\b|bn\b)"),
    ("million", r"\s*(?:million\b|mn\b|m\b)"),
    ("thousand", r"\s*thousand\b"),
)


def _text_unit(items: Sequence[str], notes: Sequence[str]) -> Suggestion:
    """The unit the text writes after the answer's number ("$5.2 million", "12.5%"), when every mention agrees."""
    found: set[str] = set()
    for item in items:
        number = re.escape(item.strip().lstrip("$€£¥").strip())
        for text in notes:
            for match in re.finditer(rf"(?<![\d.,]){number}(?![\d]|[.,]\d)", text or ""):
                rest = text[match.end() : match.end() + 12]
                found.add(next((unit for unit, pattern in _TEXT_UNITS if re.match(pattern, rest, re.IGNORECASE)), "?"))
    if len(found) == 1 and "?" not in found:
        (unit,) = found
        return Suggestion(unit, f"the text writes '{items[0]}' with its unit → {unit}")
    if found:
        return Suggestion(None, "the text writes the answer without a unit, or with several — choose")
    return Suggestion(None, "the answer is found in no cell and no text")
