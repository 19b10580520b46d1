"""Template drafter: questions over a context's tables whose answers come from executed tool programs."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from itertools import combinations, permutations, product
from typing import Any

from curation.drafting.self_check import draft_problem
from curation.table_shape import HEADER_JOINER, row_names, scale_note
from curation.toolkit.numbers import clean_cell, format_number, parse_number, parse_numeric, without_citations
from curation.toolkit.tools import Program, ToolBox, ToolError, ToolOutcome

HeaderPhrases = Callable[[str], Sequence[str]]

# Rows that summarise other rows would be counted twice by column-wide aggregates.
_TOTAL_ROW = re.compile(r"\btotals?\b|^sum\b", re.IGNORECASE)
_AVERAGE_ROW = re.compile(r"\b(average|avg|mean|overall|all|median)\b", re.IGNORECASE)
_SUMMARY_ROW = re.compile(rf"{_TOTAL_ROW.pattern}|\bsum\b|{_AVERAGE_ROW.pattern}", re.IGNORECASE)
_AUTO_NAME = re.compile(r"^(row|column) \d+$")
_R_SQUARED = re.compile(r"\$?(?<![A-Za-z])R\s*\$?\s*\^\s*(?:\{\s*2\s*\}|2(?!\d))(?:\s*\$)?")
# Rows that describe a regression's fit, not an entity ("Observations", "Within R²", "Country FE"): beside the
# coefficients they make no sum, mean or comparison.
_STATISTIC_ROW = re.compile(
    r"^(?:observations|obs\.?|n|no\. of obs(?:ervations)?|number of observations|controls|.+ fe|.*fixed effects"
    r"|(?:(?:adj(?:usted)?\.?|within|between|overall|pseudo) )?r(?: ?\^ ?\{?2\}?|²|2|-squared)(?:_\{?\w+\}?)?"
    r"|(?:adj(?:usted)?\.?|within|between|overall|pseudo) r|f[- ]stat(?:istic)?|log[- ]likelihood|aic|bic)$",
    re.IGNORECASE,
)
# A header that names a spread: under it "(0.477)" is a standard error or deviation, not the accounting negative.
_SPREAD_HEADER = re.compile(
    r"(?<![\w.])(?:s\.?e\.?|s\.?d\.?|std\.?\s*(?:err(?:or)?|dev(?:iation)?)\.?|standard (?:error|deviation)s?)(?!\w)",
    re.IGNORECASE,
)


class _Missing(Exception):
    """A cell the question needs is empty or not a number: the question is unanswerable."""


class _Unsuitable(Exception):
    """The slots do not make a good question (tie, zero divisor, degenerate values): skip it."""


@dataclass(frozen=True)
class QuestionTemplate:
    """One question pattern: its phrasings, its reasoning subtype, and the program that answers it."""

    template_id: str
    subtype: str
    phrasings: tuple[str, ...]
    slots: tuple[str, ...]  # the dimensions its slots range over (`_DIMENSIONS`)
    solve: Callable[[Program, dict[str, Any]], list[str]]


class _TableView:
    """A table with its numeric columns, usable rows and wording helpers, for slot filling."""

    def __init__(self, toolbox: ToolBox, index: int, source: Mapping[str, Any]) -> None:
        self.table = toolbox.tables[index]
        self.label = self.table.label
        # What a reader calls the table ("Table 2"); the tool box keeps its label, which tool calls use.
        self.name = str(source.get("name") or "").strip() or self.label
        self.is_only_table = len(toolbox.tables) == 1
        # The columns that name the rows ("Model") hold no values of them. A row whose every value is a cell merged
        # across columns is a label or a setting ("Panel B"; "GHz" of each solver's processor), not an entry; nor is a
        # header row read as the body's first: a row of years ("($ in millions) | 2019 | 2018"), "(In Millions)".
        named_by = self.table.name_width
        merged = {tuple(position) for position in source.get("merged", ())}
        labels = {
            name
            for row, (name, cells) in enumerate(zip(self.table.row_names, self.table.cells, strict=True))
            if all((row, column) in merged for column in range(named_by, len(self.table.columns)))
            or _are_years(cells[named_by:], at_least=2)
            or scale_note(name)
            or not any(cell.strip() for cell in cells[named_by:])  # a section's title ("Americas:"), no values at all
        }
        self.rows = [
            name for name in self.table.row_names if name and not _AUTO_NAME.match(name) and name not in labels
        ]
        # A table without a header row has data values where its column names would be: no column to name.
        # Nor does a column that repeats the row names (a side-by-side table's second "Model" column).
        columns = (
            list(enumerate(self.table.columns[named_by:], start=named_by)) if source.get("has_header", True) else []
        )
        # A header the table repeats ("bermuda subsidiaries 2009" twice) is told apart only by the number the tool
        # box appends ("… (2)"), which no reader finds in the paper.
        lowered = {column.lower() for column in self.table.columns}
        repeated = {
            column
            for column in self.table.columns
            if f"{column} (2)".lower() in lowered
            or re.sub(r" \(\d+\)$", "", column).lower() in lowered - {column.lower()}
        }
        self.header_columns = [
            column
            for index, column in columns
            if _is_header_name(column) and not self._repeats_row_names(index) and column not in repeated
        ]
        self.numeric_columns = [
            column for index, column in columns if column in self.header_columns and self._is_mostly_numbers(index)
        ]
        # A mean the table prints ("Average", "Overall") is read off, not computed; a Total row is no mean's part.
        self.has_averages = any(_AVERAGE_ROW.search(row) for row in self.rows)
        given, _ = row_names(self.table.cells)
        # Tool calls name a row as the tool box cleaned it, footnote superscripts gone; "Within R^2" lost the square
        # of its R², which a question and its rationale write as the paper does, and by which it is a fit statistic.
        named = zip(self.table.row_names, given, strict=True)
        self.spoken = {name: said for name, raw in named if (said := _with_r_squared(raw))}
        self.statistic_rows = {row for row in self.rows if _STATISTIC_ROW.match(self.spoken.get(row, row))}
        self.subtotal_rows = self._subtotals([index for index, column in columns if column in self.numeric_columns])
        plain = [
            row
            for row in self.rows
            if not _SUMMARY_ROW.search(row) and row not in self.statistic_rows and row not in self.subtotal_rows
        ]
        # A table reporting a fit is a regression's: its rows are variables, and one coefficient beside another
        # compares two units, unless every row is one variable at points of an axis (an event study's "k = -2" …
        # "k = +3"). Its "Mean" is the dependent variable's, a statistic too.
        if self.statistic_rows:
            self.statistic_rows |= {row for row in self.rows if _AVERAGE_ROW.search(row)}
            plain = plain if _one_axis(plain) else []
        # Rows whose names state different units ("Gross profit (in thousands)", "Feed cost per dozen") are two kinds
        # of quantity; a roll-forward's rows (an opening and a closing balance, the movements between) are balances
        # and movements: in neither is a row compared, ranked or averaged with another.
        is_roll_forward = sum(bool(_BALANCE_ROW.search(row)) for row in self.rows) >= 2
        self.plain_rows = plain if len({_unit_note(row) for row in plain}) <= 1 and not is_roll_forward else []
        # A name several rows share (a variable repeated under each period of a panel; "LaCAM" and "LaCAM*" once the
        # footnote mark goes) is told apart only by the number the tool box appends ("Exports (3)"), which no reader
        # finds in the paper: no question or answer names those rows, though column-wide sums still count them.
        shared = Counter(clean_cell(name).lower() for name in given)
        self.unreadable_rows = {
            name for name, raw in zip(self.table.row_names, given, strict=True) if shared[clean_cell(raw).lower()] > 1
        }
        # So is a name that is only a citation key ("[Mello2024]", printed "Mello (2024)"); a rationale listing a
        # column writes its key ("Mello2024"), which its cleaning of citations would drop: "8,637 for under Total".
        cited = {name for name in self.table.row_names if not without_citations(f"{name} .")[:-1]}
        self.unreadable_rows |= cited
        self.named_rows = [row for row in self.rows if row not in self.unreadable_rows]
        self.spoken.update({name: name.strip("[] ") for name in cited})
        # A rationale listing a column writes a shared name as the table does ("LaCAM*", "Exports"), not numbered.
        self.spoken.update(
            {
                name: " ".join(raw.split())
                for name, raw in zip(self.table.row_names, given, strict=True)
                if name in self.unreadable_rows and name not in cited and not re.search(r"[\\$^{}]", raw)
            }
        )
        # Where a name holds a comma or an "and" ("Mel, MT3"), every name is quoted in a sentence, or "the mean of
        # Mel, MT3 and Jukebox" reads as three rows or two, whichever rows it names.
        if any(re.search(r",|\b(?:and|or)\b", self.spoken.get(name, name)) for name in self.table.row_names):
            self.spoken = {name: f'"{self.spoken.get(name, name)}"' for name in self.table.row_names}
        self.named_plain_rows = [row for row in self.plain_rows if row not in self.unreadable_rows]
        # A column of years holds points in time: ordered and subtracted, never divided or averaged ("2012.96").
        self.quantity_columns = [
            column
            for index, column in columns
            if column in self.numeric_columns and not _are_years(cells[index] for cells in self.table.cells)
        ]
        self.spread_columns = {column for column in self.numeric_columns if _SPREAD_HEADER.search(column)}
        # So is a column: "R^2" is the tool box's "R", and a question about the R of each variant asks another thing.
        header = (source.get("rows") or [[]])[0] if source.get("has_header", True) else []
        self.spoken_columns = {
            column: said
            for column, raw in zip(self.table.columns, header, strict=False)
            if (said := _with_r_squared(str(raw)))
        }
        # Columns whose plain rows the table shows to be parts of one whole, with that evidence: only these are summed.
        # Each column's cells by row name.
        texts = {
            column: dict(zip(self.table.row_names, (cells[index] for cells in self.table.cells), strict=True))
            for index, column in columns
        }
        self.wholes = {
            column: whole for column in self.numeric_columns if (whole := self._whole(column, texts[column]))
        }
        # Rows are ranked, counted or averaged where the table shows them to be peers (`peer_columns`): parts of one
        # whole, none below nil in any column (a bridge's outflows, an elimination take from the others), or points of
        # one axis. A report's lines (a scale note over the table, "£m"; a currency or an accountant's "(1,473)" in most
        # columns) are a statement's as often as peers, revenue beside its costs; so are rows beside a total that is not
        # their sum (three breakdowns of one revenue). Other rows (a paper's models, a cost among their scores) are.
        corner = self.table.columns[named_by - 1].split(HEADER_JOINER) if self.table.columns else []
        totals = {row for row in self.table.row_names if _TOTAL_ROW.search(row) or row in self.subtotal_rows}
        amounts = [
            column
            for column, cells in texts.items()
            if any(map(scale_note, column.split(HEADER_JOINER)))
            or any(
                _CURRENCY.search(text) or _NEGATIVE.fullmatch(text)
                for text in map(clean_cell, [column, *cells.values()])
            )
        ]
        is_noted = any(map(scale_note, [*corner, *self.table.row_names]))
        self.is_report = is_report = is_noted or 2 * len(amounts) > len(self.numeric_columns)
        are_parts = bool(self.wholes) and not any(
            _amount(texts[column][row]) < 0 for column in self.wholes for row in self.plain_rows
        )
        self.peer_columns = [
            column
            for column in self.numeric_columns
            if are_parts
            or _one_axis(self.plain_rows)
            or not (is_report or any(texts[column][row].strip() for row in totals))
        ]
        # The rows' own name: the lowest level of a layered header ("(i) Dissociation - model" names models).
        entity = clean_cell(self.table.columns[named_by - 1]).split(HEADER_JOINER)[-1] if self.table.columns else ""
        # A scale or currency note over the names ("( in thousands )", "£m", "€ million") names no entity.
        if not entity or _AUTO_NAME.match(entity) or len(entity) > 30 or _NOTE_NOT_NOUN.search(entity):
            entity = "entry"
        self.entity = entity if entity.isupper() else entity.lower()
        self.entity = _singular(self.entity)  # "Which contractual obligation …", its header "Contractual Obligations"
        self.entities = (
            self.entity
            if self.entity.lower().endswith("s")
            else f"{self.entity[:-1]}ies"
            if re.search(r"[^aeiou]y$", self.entity)
            else f"{self.entity}es"
            if re.search(r"(sh|ch|x|z)$", self.entity)
            else f"{self.entity}s"
        )
        self.where = "" if self.is_only_table else f" in {self.name}"

    def _whole(self, column: str, texts: Mapping[str, str]) -> str:
        """What makes the column's plain rows parts of one whole, as the table shows it: "100%" for percentages adding
        up to it (rounding aside, and whether a total row says so or not), or the name of a total row their sum equals
        at the cells' precision; else "". A sum of accuracies, p-values or per-share amounts means nothing, and
        nothing else tells those apart from amounts."""
        parts = [parse_numeric(texts[row]) for row in self.plain_rows]
        if len(parts) < 2 or None in parts or column in self.spread_columns:
            return ""
        written = [_DECIMALS.search(clean_cell(text)) for text in texts.values()]
        decimals = max((len(match.group(1)) for match in written if match), default=0)
        total = sum(part.value for part in parts)
        is_share = all(part.is_percent for part in parts) or "%" in column
        if is_share and abs(total - 100) <= (len(parts) + 1) * 0.5 * 10**-decimals:
            return "100%"  # their total is the whole itself, and a share of it the cell: summed in pairs only
        for row in self.table.row_names:  # an unnamed total too ("| | 785.3 | 826.0")
            if (_TOTAL_ROW.search(row) or row in self.subtotal_rows) and row not in self.plain_rows:
                stated = parse_numeric(texts[row])
                if stated is not None and round(total - stated.value, decimals) == 0:
                    return row
        return ""

    def _subtotals(self, indices: Sequence[int]) -> set[str]:
        """Rows equal to the sum of a run of 2 to 12 rows right above or below them, at the cells' precision, in
        every numeric column but shares (a tax-rate reconciliation's, all shares, are summed), two at least
        ("copenhagen and skoal" under copenhagen and skoal): a subtotal is no peer of its own parts."""
        body = self.table.cells
        amounts = [i for i in indices if "%" not in self.table.columns[i] and not any("%" in row[i] for row in body)]
        amounts = amounts or list(indices)
        if len(amounts) < 2:
            return set()
        values = [[_amount(cells[index]) for index in amounts] for cells in body]
        written = [_DECIMALS.search(clean_cell(cells[index])) for cells in body for index in amounts]
        decimals = max((len(match.group(1)) for match in written if match), default=0)

        def sums(row: int, run: Sequence[list[Any]]) -> bool:
            return all(
                round(sum(column) - total, decimals) == 0 for total, *column in zip(values[row], *run, strict=True)
            )

        found = set()
        for row, own in enumerate(values):
            if None in own or not any(own):
                continue
            for runs in (range(row - 2, max(row - 13, -1), -1), range(row + 3, min(row + 14, len(values) + 1))):
                for edge in runs:
                    run = values[edge:row] if edge < row else values[row + 1 : edge]
                    if any(None in part for part in run):
                        break
                    if sums(row, run):
                        found.add(self.table.row_names[row])
        return found

    def _is_mostly_numbers(self, index: int) -> bool:
        parsed = [parse_number(cells[index]) for cells in self.table.cells]
        return sum(value is not None for value in parsed) >= max(2, len(parsed) // 2 + 1)

    def said(self, names: Iterable[str]) -> str:
        """Names as a sentence writes them ("A, B and C"), each row name as `spoken`, any other item as it is."""
        return _join([self.spoken.get(name, name) for name in names])

    def _repeats_row_names(self, index: int) -> bool:
        named = zip(self.table.cells, self.table.row_names, strict=True)
        return bool(self.table.cells) and all(clean_cell(cells[index]) == clean_cell(name) for cells, name in named)


# Notes of scale and unit: over the names they name no entity ("( in thousands )", "£m"); in a name, the unit of its
# values ("Gross profit (in thousands)", "per dozen"). A name that is only a scale note is a header row read into the
# body ("(In Millions)": `table_shape.scale_note`).
_NOTE_NOT_NOUN = re.compile(r"[()\d$£€¥%]|\b(?:thousands?|millions?|billions?)\b", re.IGNORECASE)
_BALANCE_ROW = re.compile(
    r"\b(?:balance|outstanding|non-?vested|unvested)\b.*\b(?:at|as of|beginning|end|start|close)\b"
    r"|\b(?:beginning|end|start|close) of (?:the )?(?:year|period|fiscal)"
    r"|^(?:opening|closing|beginning|ending) balance",
    re.IGNORECASE,
)
_UNIT_NOTE = re.compile(r"\((?:[$£€]\s*)?in [^)]*\)|\((?:%|percent|[$£€]|x)\)|\bper \w+", re.IGNORECASE)


def _unit_note(name: str) -> str:
    """The unit or scale a row's name states ("(in thousands)", "per dozen", "(%)"), lowered; "" for none."""
    return " ".join(note.lower() for note in _UNIT_NOTE.findall(name))


def _are_years(cells: Iterable[str], *, at_least: int = 0) -> bool:
    """Whether the numbers among `cells` are whole years (2019, 1998), `at_least` of them."""
    written = [clean_cell(cell) for cell in cells if parse_number(cell) is not None]
    return len(written) >= at_least and all(re.fullmatch(r"(?:1[6-9]|20)\d\d", text) for text in written)


def _with_r_squared(raw: str) -> str:
    """A name holding R² as a reader writes it ("Within R²"), cleaned as the tool box cleans names (with a stand-in
    for R², whose "²" its cleaning strips as a footnote mark); "" for a name without R²."""
    return clean_cell(_R_SQUARED.sub("RSQUARED", raw)).replace("RSQUARED", "R²") if _R_SQUARED.search(raw) else ""


def _is_header_name(column: str) -> bool:
    """Whether a flattened header reads as a name (Accuracy, 2019, 3-shot), not as a data value (81.3, 12%)."""
    if not column or _AUTO_NAME.match(column):
        return False
    parsed = parse_numeric(column)
    if parsed is None:
        return True
    whole = re.fullmatch(r"\d{1,4}", clean_cell(column).strip())
    return bool(whole) and not parsed.is_percent


# A number that stands as a word of a header ("2019", "Epoch 5", "50B", "d=447"), not one that is a part of a name
# ("CIFAR-100", "Col2", "τ1"): only such a number places a column on an axis.
_POINT = re.compile(r"(?<![^\W_])(?<![\d.,])(?<![^\W\d_]-)[-+]?\d[\d.,]*")
_QUARTER = re.compile(r"\b(?:first|second|third|fourth) quarter\b", re.IGNORECASE)  # a report's "Third Quarter"
# Numbers that count columns of one kind rather than place them: a regression's "(1)" … "(6)", "Task 2", "Model 3".
_ORDINAL_NAME = re.compile(
    r"(?:^|\s)\(⋄\)$|\b(?:task|model|col(?:umn)?|group|panel|spec(?:ification)?|setting|exp(?:eriment)?|fold|run|"
    r"variant|case|scenario|condition|type|class|category|part|method|test|subset|split|seed)\s*⋄",
    re.IGNORECASE,
)


def _axis_point(name: str) -> str:
    """The axis a name is a point of: the name with its standing numbers as "⋄" ("Epoch ⋄"); empty for a name
    without any, or whose numbers count things of one kind rather than place them ("Model ⋄", "(⋄)")."""
    marked = _POINT.sub("⋄", _period(name) or name).strip()  # "Years Ended December 31, - 2019" is 2018's peer
    marked = _QUARTER.sub("⋄ quarter", marked)
    return marked if "⋄" in marked and not _ORDINAL_NAME.search(marked) else ""


def _one_axis(rows: Sequence[str]) -> bool:
    """Whether every row is a point of one axis (an event study's "k = -2" … "k = +3", a report's quarters)."""
    return len({_axis_point(row) for row in rows} - {""}) == 1 and all(map(_axis_point, rows))


def _comparable_columns(columns: Sequence[str]) -> list[tuple[str, str]]:
    """Column pairs that measure the same thing at two points (2019/2020, Epoch 1/Epoch 5, 50B/300B), the earlier
    point first however the table orders them (a report's 2019 before its 2018); not the numbered models of a
    regression table, tasks or datasets whose names hold a number (CIFAR-10/CIFAR-100)."""

    def place(column: str) -> tuple[float, ...]:
        """Its standing numbers, the last first: "Q1 2019" comes after "Q4 2018", "January 31, 2018" before 2019's."""
        return tuple(
            float(number.replace(",", "")) for number in reversed(_POINT.findall(column)) if number[-1].isdigit()
        )

    pairs = [pair for pair in combinations(columns, 2) if _axis_point(pair[0]) and len({*map(_axis_point, pair)}) == 1]
    return [(first, second) if place(first) <= place(second) else (second, first) for first, second in pairs]


# Program helpers ---------------------------------------------------------------------------------


def _number(text: Any, slots: Mapping[str, Any], *, is_spread: bool = False) -> float | int:
    """A cell's number; under a spread's header (`is_spread`) a parenthesised "(0.477)" is the spread 0.477."""
    parsed = parse_numeric(text)
    if parsed is None:
        raise _Missing(f"not a number: {text!r}")
    slots["units"].add((parsed.unit.lower(), parsed.is_percent))
    if _GROUPED.search(str(text)):
        slots["written"].add("grouped")
    cleaned = clean_cell(str(text))
    if written := _DECIMALS.search(cleaned):
        slots["decimals"] = min(4, max(slots["decimals"], len(written.group(1))))
    if exponent := _EXPONENT.search(cleaned):  # 1e-3 is written to the thousandth: 0.1 + 1e-3 is 0.101, not 0.1
        slots["decimals"] = min(6, max(slots["decimals"], len(exponent.group(1) or "") - int(exponent.group(2))))
    value = parsed.value
    if is_spread and re.fullmatch(r"\([^()]*\)", clean_cell(str(text))):
        value = abs(value)
    return int(value) if value.is_integer() and abs(value) < 1e15 else value


def _cell(program: Program, slots: Mapping[str, Any], row: str, column: str) -> float | int:
    text = program.run("get_cell", table=slots["table"], row=row, column=column)
    return _number(text, slots, is_spread=column in slots["spreads"])


def _column(program: Program, slots: Mapping[str, Any], column: str = "column") -> dict[str, float | int]:
    """The numbers of the plain rows under the `column` slot's column ("column_a": under that slot's)."""
    cells = program.run("get_column", table=slots["table"], column=slots[column])
    is_spread = slots[column] in slots["spreads"]
    return {row: _number(cells[row], slots, is_spread=is_spread) for row in slots["rows"]}


_DASH = re.compile(r"[-–—]")
_CURRENCY = re.compile(r"[$£€¥]")
_PERCENT_CHANGE = re.compile(r"%.*\b(?:change|chg|inc|dec)|\b(?:change|chg|inc|dec)\b.*%", re.IGNORECASE)
# An accountant's negative, "(1,473)", "$(2,227)", "(149)%": not a standard error's "(0.036)" nor a table's "(3.0)".
_NEGATIVE = re.compile(r"\D?\((?:\d{1,3}(?:,\d{3})+(?:\.\d+)?\)|[\d.]+%\)|[\d.]+\)%)")


def _amount(text: str) -> float | None:
    """A cell's value as a part of a sum: a dash is nil; None for a cell that is no number."""
    if _DASH.fullmatch(text.strip()):
        return 0.0
    parsed = parse_numeric(text)
    return parsed.value if parsed else None


_GROUPED = re.compile(r"\d,\d{3}(?!\d)")
_DECIMALS = re.compile(r"^\D*\d[\d,]*\.(\d+)")
_EXPONENT = re.compile(r"^\D*\d+(?:\.(\d+))?e([-+]?\d+)$", re.IGNORECASE)


def _fmt(value: float, decimals: int = 2) -> str:
    """A computed answer: two decimals, or as many as keep two significant digits of a small value (0.006, never
    0.01), and a huge value in scientific notation, never its float digits."""
    if abs(value) >= 1e15:
        mantissa, exponent = f"{float(value):.4e}".split("e")
        return f"{format_number(float(mantissa), decimals=4)}e{int(exponent)}"
    if 0 < abs(value) < 1:
        decimals = max(decimals, min(6, 1 - math.floor(math.log10(abs(value)))))
    # Half up, as a person rounds (77.675 → 77.68): the float nearest 77.675 lies just below it, so its float
    # rounding gave 77.67 where 68.825 gave 68.83. Ten decimals first drop the float's noise.
    exact = Decimal(repr(float(value))).quantize(Decimal("1e-10"))
    return format_number(float(exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)), decimals=decimals)


def _same_unit(value: float, slots: Mapping[str, Any]) -> str:
    """A computed value in the cells' unit and precision (0.548 − 0.514 is 0.034, not 0.03), % kept for percentages."""
    text = _fmt(value, slots["decimals"])
    return text + "%" if slots["units"] and all(is_percent for _, is_percent in slots["units"]) else text


def _unique_best(values: Mapping[str, float], *, highest: bool) -> str:
    best = max(values.values()) if highest else min(values.values())
    winners = [name for name, value in values.items() if value == best]
    if len(winners) != 1:
        raise _Unsuitable("tie for the extreme value")
    return winners[0]


# Slots ---------------------------------------------------------------------------------------------------

# What a template's slots range over in a table, each as the list of its values (partial slot dicts); a template's
# candidates are the product of its dimensions, in order. A condition is a dimension of one empty value, or none.
_DIMENSIONS: dict[str, Callable[[_TableView], list[dict[str, Any]]]] = {
    "column": lambda view: [{"column": column} for column in view.numeric_columns],
    "quantity column": lambda view: [{"column": column} for column in view.quantity_columns],
    "header column": lambda view: [{"column": column} for column in view.header_columns],
    "column pair": lambda view: [{"column_a": a, "column_b": b} for a, b in _comparable_columns(view.numeric_columns)],
    # Columns whose rows are ranked, counted or averaged: peers (`_TableView.peer_columns`).
    "peer column": lambda view: [{"column": column} for column in view.peer_columns],
    # A mean of percentage changes ("% CHANGE": 2.5, 2.1, 6.5, 50.0) is no change of anything.
    "peer quantity column": lambda v: [
        {"column": c} for c in v.quantity_columns if c in v.peer_columns and not _PERCENT_CHANGE.search(c)
    ],
    "peer column pair": lambda view: [
        {"column_a": a, "column_b": b}
        for a, b in _comparable_columns(view.numeric_columns)
        if {a, b} <= {*view.peer_columns}
    ],
    # Sums only of parts of a whole the table shows (`_TableView._whole`), "whole" their evidence: its total row, whose
    # value a sum over them matches, or (for a pair's sum, not a total that is the whole itself) shares of 100%.
    "totalled column": lambda view: [{"column": c, "whole": w} for c, w in view.wholes.items() if w != "100%"],
    "parts column": lambda view: [{"column": column, "whole": whole} for column, whole in view.wholes.items()],
    # A look-up names an entity: "What Tests is reported for Total?" reads as if Total were one (a sum asks for it).
    "row": lambda view: [{"row": row} for row in view.named_rows if not _SUMMARY_ROW.search(row)],
    # A change from one column to the next of a fit statistic (Observations, R²) compares two models, not two points.
    "measured row": lambda view: [{"row": row} for row in view.named_rows if row not in view.statistic_rows],
    "plain row": lambda view: [{"row": row} for row in view.named_plain_rows],
    "row pair": lambda view: [{"row_a": a, "row_b": b} for a, b in permutations(view.named_plain_rows, 2)],
    # C(n, 3) grows fast; the first dozen rows give plenty of candidates.
    # Three of more than three: three of three is the whole column's mean asked again.
    "row triple": lambda view: [
        {"subset": list(subset)} for subset in combinations(view.named_plain_rows[:12], 3) if len(view.plain_rows) > 3
    ],
    "top 3": lambda view: [{"k": 3}],
    "higher or lower": lambda view: [{"direction": way} for way in ("higher", "lower")],
    "highest or lowest": lambda view: [{"direction": way} for way in ("highest", "lowest")],
    "3 rows": lambda view: [{}] if len(view.plain_rows) >= 3 else [],
    "4 rows": lambda view: [{}] if len(view.plain_rows) >= 4 else [],
    # A mean the table prints already: asked again, the question is a look-up (sums ask for their evidence instead).
    "no averages": lambda view: [] if view.has_averages else [{}],
    "other tables": lambda view: [] if view.is_only_table else [{}],
}


def _candidates(view: _TableView, dimensions: Sequence[str]) -> list[dict[str, Any]]:
    """The slots of every combination of the dimensions' values over `view`, the first dimension outermost."""
    return [
        {key: value for part in parts for key, value in part.items()}
        for parts in product(*(_DIMENSIONS[name](view) for name in dimensions))
    ]


# Solvers ---------------------------------------------------------------------------------------------


def _two_cells(program: Program, slots: dict[str, Any]) -> tuple[float | int, float | int]:
    """The pair's cells; in a report, refused for a positive beside a negative (an asset beside a liability, an inflow
    beside an outflow), whose difference, sum or "higher" reads the bracket as a sign: 676.8 - (480.5) is 1,157.3 to
    no reader. A paper's coefficients keep their signs."""
    a, b = (_cell(program, slots, slots[row], slots["column"]) for row in ("row_a", "row_b"))
    if slots["is_report"] and a * b < 0:
        raise _Unsuitable("two cells of opposite signs")
    return a, b


def _solve_difference(program: Program, slots: dict[str, Any]) -> list[str]:
    a, b = _two_cells(program, slots)
    if a <= b:
        raise _Unsuitable("the difference is phrased as how much more row_a has")
    return [_same_unit(program.run("subtract", a=a, b=b), slots)]


def _solve_ratio(program: Program, slots: dict[str, Any]) -> list[str]:
    a, b = (_cell(program, slots, slots[row], slots["column"]) for row in ("row_a", "row_b"))
    if a <= 0 or b <= 0:  # "how many times" asks of two amounts: 489 is not -0.1 times a loss of (4,697)
        raise _Unsuitable("a ratio of a zero or a negative value")
    ratio = _fmt(program.run("divide", a=a, b=b))
    if ratio in ("1", "-1"):  # 7,209.00 to 7,212.29 answered "1" says nothing the question could not
        raise _Unsuitable("a ratio of two cells that rounds to 1: nothing to compute")
    return [ratio]


def _solve_pair_sum(program: Program, slots: dict[str, Any]) -> list[str]:
    a, b = _two_cells(program, slots)
    if slots["row_a"] > slots["row_b"]:
        raise _Unsuitable("each unordered pair once")
    return [_same_unit(program.run("add", numbers=[a, b]), slots)]


def _solve_change(program: Program, slots: dict[str, Any]) -> list[str]:
    before, after = (_cell(program, slots, slots["row"], slots[column]) for column in ("column_a", "column_b"))
    if before == after:  # 35.0% in both years: a change of 0 is nothing to compute
        raise _Unsuitable("no change")
    return [_same_unit(program.run("subtract", a=after, b=before), slots)]


def _solve_percentage_change(program: Program, slots: dict[str, Any]) -> list[str]:
    before, after = (_cell(program, slots, slots["row"], slots[column]) for column in ("column_a", "column_b"))
    if (
        before <= 0 or after < 0 or before == after
    ):  # 11.4 to (35.8) is no "-414.04%" a reader of the report would write
        raise _Unsuitable("percentage change from zero or a negative base, or into a negative value")
    change = program.run("subtract", a=after, b=before)
    share = program.run("divide", a=change, b=before)
    return [_fmt(program.run("multiply", numbers=[share, 100])) + "%"]


def _solve_proportion(program: Program, slots: dict[str, Any]) -> list[str]:
    values = _column(program, slots)
    if any(value < 0 for value in values.values()):
        raise _Unsuitable("a share of a total with negative parts")
    total = program.run("sum", numbers=list(values.values()))
    if total == 0:
        raise _Unsuitable("zero total")
    share = program.run("proportion", part=values[slots["row"]], total=total, as_percentage=True)
    return [_fmt(share) + "%"]


def _solve_compare(program: Program, slots: dict[str, Any]) -> list[str]:
    if slots["row_a"] > slots["row_b"]:
        raise _Unsuitable("each unordered pair once")
    a, b = _two_cells(program, slots)
    if a == b:
        raise _Unsuitable("tie")
    tool = "greater_than" if slots["direction"] == "higher" else "less_than"
    return [slots["row_a"] if program.run(tool, a=a, b=b) else slots["row_b"]]


def _solve_largest_increase(program: Program, slots: dict[str, Any]) -> list[str]:
    rows = slots["rows"]
    before, after = _column(program, slots, "column_a"), _column(program, slots, "column_b")
    changes = {row: program.run("subtract", a=after[row], b=before[row]) for row in rows}
    largest = program.run("max", numbers=list(changes.values()))
    if largest <= 0:
        raise _Unsuitable("nothing increased")
    return [_unique_best(changes, highest=True)]


def _solve_extreme_row(program: Program, slots: dict[str, Any]) -> list[str]:
    values = _column(program, slots)
    program.run("max" if slots["direction"] == "highest" else "min", numbers=list(values.values()))
    return [_unique_best(values, highest=slots["direction"] == "highest")]


def _solve_extreme_value(program: Program, slots: dict[str, Any]) -> list[str]:
    """The highest or lowest cell of a column as the table writes it ("71.0", "(3.0)", "$ 80"): a value read off the
    table is a span, its cell's text, where a computed one (sum, mean) is a formatted number."""
    cells = program.run("get_column", table=slots["table"], column=slots["column"])
    is_spread = slots["column"] in slots["spreads"]
    values = {row: _number(cells[row], slots, is_spread=is_spread) for row in slots["rows"]}
    if len(set(values.values())) == 1:  # an index's base year, 100 in every row: no highest to find
        raise _Unsuitable("every row has the same value")
    best = program.run("max" if slots["direction"] == "highest" else "min", numbers=list(values.values()))
    return [clean_cell(next(cells[row] for row, value in values.items() if value == best))]


def _column_aggregate(tool: str) -> Callable[[Program, dict[str, Any]], list[str]]:
    """A solver applying `tool` (sum or mean) to a whole column, in the cells' unit."""

    def solve(program: Program, slots: dict[str, Any]) -> list[str]:
        values = _column(program, slots)
        return [_same_unit(program.run(tool, numbers=list(values.values())), slots)]

    return solve


def _solve_subset_mean(program: Program, slots: dict[str, Any]) -> list[str]:
    values = [_cell(program, slots, row, slots["column"]) for row in slots["subset"]]
    return [_same_unit(program.run("mean", numbers=values), slots)]


def _solve_rank(program: Program, slots: dict[str, Any]) -> list[str]:
    values = _column(program, slots)
    if list(values.values()).count(values[slots["row"]]) > 1:
        raise _Unsuitable("tied position")
    return [str(program.run("rank", values=values, descending=True, item=slots["row"]))]


def _solve_top_k(program: Program, slots: dict[str, Any]) -> list[str]:
    values = _column(program, slots)
    order = program.run("rank", values=values, descending=True)
    k = slots["k"]
    if values[order[k - 1]] == values[order[k]]:
        raise _Unsuitable("tie at the cut-off")
    return list(order[:k])


def _solve_count(program: Program, slots: dict[str, Any]) -> list[str]:
    values = _column(program, slots)
    reference = values[slots["row"]]
    tool = "greater_than" if slots["direction"] == "higher" else "less_than"
    matching = [row for row, value in values.items() if row != slots["row"] and program.run(tool, a=value, b=reference)]
    return [str(program.run("count", items=matching))]


def _solve_above_mean(program: Program, slots: dict[str, Any]) -> list[str]:
    values = _column(program, slots)
    mean = program.run("mean", numbers=list(values.values()))
    if values[slots["row"]] == mean:
        raise _Unsuitable("exactly at the mean")
    return ["yes" if program.run("greater_than", a=values[slots["row"]], b=mean) else "no"]


def _solve_rows_above_mean(program: Program, slots: dict[str, Any]) -> list[str]:
    values = _column(program, slots)
    mean = program.run("mean", numbers=list(values.values()))
    above = [row for row, value in values.items() if program.run("greater_than", a=value, b=mean)]
    if not above or len(above) == len(values) or any(value == mean for value in values.values()):
        raise _Unsuitable("no split around the mean")
    return above


def _solve_span(program: Program, slots: dict[str, Any]) -> list[str]:
    text = clean_cell(program.run("get_cell", table=slots["table"], row=slots["row"], column=slots["column"]))
    if not text or text.lower() in {"-", "--", "—", "–", "n/a"}:
        raise _Missing("empty cell")
    if not re.search(r"[^\W_]", text):  # "•", "✓": a mark says yes or no, and "What P3 is reported for RQ1?" asks
        raise _Unsuitable("a mark, not a value to look up")
    return [text]


def _solve_table_lookup(program: Program, slots: dict[str, Any]) -> list[str]:
    found = program.run("search_row_names", query=slots["row"])
    tables = [hit["table"] for hit in found if hit["row"] == slots["row"]]
    holders = []
    for label in tables:
        outcome = program.toolbox.execute("get_cell", {"table": label, "row": slots["row"], "column": slots["column"]})
        if outcome.ok and parse_number(outcome.result) is not None:
            holders.append(label)
    if holders != [slots["table"]]:
        raise _Unsuitable("the value is reported in more than one table, or not where expected")
    _cell(program, slots, slots["row"], slots["column"])
    return [slots["name"]]  # what the paper calls it ("Table 2"), as a person answers "which table"


# Each template's wordings: two to four, chosen at random per question.
_PHRASINGS: dict[str, tuple[str, ...]] = {
    "cell_difference": (
        "How much higher is the {column} of {row_a} than that of {row_b}{where}?",
        "What is the difference in {column} between {row_a} and {row_b}{where}?",
        "By how much does {row_a} exceed {row_b} in {column}{where}?",
    ),
    "cell_ratio": (
        "What is the ratio of the {column} of {row_a} to that of {row_b}{where}?",
        "The {column} of {row_a} is how many times that of {row_b}{where}?",
        "Divide the {column} of {row_a} by that of {row_b}{where}: what do you get?",
    ),
    "pair_sum": (
        "What is the combined {column} of {row_a} and {row_b}{where}?",
        "What is the sum of the {column} of {row_a} and {row_b}{where}?",
    ),
    "change_between_columns": (
        "What is the change in {row} from {column_a} to {column_b}{where}?",
        "By how much did {row} change between {column_a} and {column_b}{where}?",
        "How much does the value of {row} move from {column_a} to {column_b}{where}?",
    ),
    "percentage_change": (
        "What is the percentage change in {row} from {column_a} to {column_b}{where}?",
        "By what percentage did {row} change between {column_a} and {column_b}{where}?",
    ),
    "proportion_of_total": (
        "What proportion of the total {column} across all {entities}{where} does {row} account for?",
        "What share of the summed {column} of all {entities}{where} comes from {row}?",
        "What percentage of the total {column}{where} is contributed by {row}?",
    ),
    "compare_two_rows": (
        "Which has a {direction} {column}{where}: {row_a} or {row_b}?",
        "Between {row_a} and {row_b}, which one has the {direction} {column}{where}?",
        "Does {row_a} or {row_b} report a {direction} {column}{where}?",
    ),
    "largest_increase": (
        "Which {entity} had the largest increase from {column_a} to {column_b}{where}?",
        "From {column_a} to {column_b}, which {entity} grew the most{where}?",
        "Which {entity} shows the biggest gain between {column_a} and {column_b}{where}?",
    ),
    "extreme_row": (
        "Which {entity} has the {direction} {column}{where}?",
        "Which {entity} reports the {direction} {column}{where}?",
        "Among all {entities}{where}, which one has the {direction} {column}?",
    ),
    "extreme_value": (
        "What is the {direction} {column} reported for any {entity}{where}?",
        "What is the {direction} value of {column} across all {entities}{where}?",
    ),
    "column_sum": (
        "What is the total {column} across all {entities}{where}?",
        "What is the sum of {column} over every {entity}{where}?",
    ),
    "column_mean": (
        "What is the average {column} across all {entities}{where}?",
        "What is the mean {column} of the {entities}{where}?",
        "On average, what {column} do the {entities}{where} reach?",
    ),
    "subset_mean": (
        "What is the average {column} of {subset_text}{where}?",
        "What is the mean {column} over {subset_text}{where}?",
    ),
    "rank_position": (
        "Where does {row} rank by {column}{where}, counting from the highest?",
        "What position does {row} take when the {entities}{where} are sorted by {column} from highest to lowest?",
        "Ranked by {column} in descending order, what is the rank of {row}{where}?",
    ),
    "top_k": (
        "Which {k} {entities} have the highest {column}{where}, from highest to lowest?",
        "List the top {k} {entities} by {column}{where}, in descending order.",
    ),
    "count_beyond_row": (
        "How many {entities}{where} have a {direction} {column} than {row}?",
        "How many {entities}{where} report {a_column} {direction} than that of {row}?",
        "Count the {entities}{where} whose {column} is {direction} than that of {row}.",
    ),
    "above_mean": (
        "Is the {column} of {row} above the average {column} of all {entities}{where}?",
        "Does {row} report {a_column} higher than the mean across the {entities}{where}?",
    ),
    "rows_above_mean": (
        "Which {entities}{where} are above the average {column} of all {entities}?",
        "List the {entities}{where} whose {column} is higher than the mean {column}.",
    ),
    "span_lookup": (
        "What is the {column} of {row}{where}?",
        "What {column} is reported for {row}{where}?",
        "Which value does the table give for the {column} of {row}{where}?",
    ),
    "table_lookup": (
        "Which table reports the {column} of {row}?",
        "In which table can the {column} of {row} be found?",
    ),
}

# Each template's reasoning subtype, the dimensions of its slots (`_DIMENSIONS`), and the solver whose tool program
# answers it; the order is the drafting order.
_DECLARATIONS = {
    "cell_difference": ("arithmetic_calculation", ("column", "row pair"), _solve_difference),
    "cell_ratio": ("arithmetic_calculation", ("quantity column", "row pair"), _solve_ratio),
    "pair_sum": ("arithmetic_calculation", ("3 rows", "parts column", "row pair"), _solve_pair_sum),  # 2: the whole
    "change_between_columns": ("arithmetic_calculation", ("column pair", "measured row"), _solve_change),
    "percentage_change": ("arithmetic_calculation", ("column pair", "measured row"), _solve_percentage_change),
    "proportion_of_total": (
        "arithmetic_calculation",
        ("3 rows", "totalled column", "plain row"),
        _solve_proportion,
    ),
    "compare_two_rows": ("comparison", ("column", "row pair", "higher or lower"), _solve_compare),
    "largest_increase": ("comparison", ("3 rows", "peer column pair"), _solve_largest_increase),
    "extreme_row": ("comparison", ("3 rows", "peer column", "highest or lowest"), _solve_extreme_row),
    "extreme_value": ("aggregation", ("3 rows", "peer column", "highest or lowest"), _solve_extreme_value),
    "column_sum": ("aggregation", ("3 rows", "totalled column"), _column_aggregate("sum")),
    "column_mean": ("aggregation", ("no averages", "3 rows", "peer quantity column"), _column_aggregate("mean")),
    "subset_mean": ("aggregation", ("peer quantity column", "row triple"), _solve_subset_mean),
    "rank_position": ("ranking", ("3 rows", "peer column", "plain row"), _solve_rank),
    "top_k": ("ranking", ("4 rows", "peer column", "top 3"), _solve_top_k),
    "count_beyond_row": ("counting", ("3 rows", "peer column", "plain row", "higher or lower"), _solve_count),
    "above_mean": ("comparison", ("no averages", "3 rows", "peer quantity column", "plain row"), _solve_above_mean),
    "rows_above_mean": ("aggregation", ("no averages", "3 rows", "peer quantity column"), _solve_rows_above_mean),
    "span_lookup": ("span_lookup", ("row", "header column"), _solve_span),
    "table_lookup": ("table_lookup", ("other tables", "row", "column"), _solve_table_lookup),
}
TEMPLATES: tuple[QuestionTemplate, ...] = tuple(
    QuestionTemplate(template_id, subtype, _PHRASINGS[template_id], slots, solve)
    for template_id, (subtype, slots, solve) in _DECLARATIONS.items()
)


# The reasoning subtypes the templates truly exercise; a context assigned any other type is left for a language model.
TEMPLATE_SUBTYPES = frozenset(template.subtype for template in TEMPLATES)


# Rationale ---------------------------------------------------------------------------------------


def _as_written(value: Any, slots: Mapping[str, Any], *, same_unit: bool = True) -> str:
    """A computed number as the table writes its numbers: thousands grouped if its cells group them, % kept."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    text = _same_unit(value, slots) if same_unit else _fmt(value)
    if "grouped" in slots["written"] and "e" not in text:
        text = re.sub(r"\d+", lambda whole: f"{int(whole.group()):,}", text, count=1)
    return text


def _rationale(program: Program, view: _TableView, slots: Mapping[str, Any], answer: Sequence[str]) -> str:
    """One sentence per step of the program, in the words of the question (e.g. 'Table 2 gives 81.3 for BERT ...'),
    then the answer when the last step does not state it. Values read from the table keep the table's writing."""
    sentences: list[str] = []
    read: dict[float, str] = {}

    def number(value: Any) -> str:
        return read.get(value) or _as_written(value, slots) if isinstance(value, int | float) else str(value)

    cells: list[tuple[str, str]] = []
    cell_column = ""
    comparisons: list[str] = []

    def flush() -> None:
        nonlocal cells, comparisons
        if cells:
            given = _join([f"{text} for {view.spoken.get(row, row)}" for row, text in cells])
            sentences.append(
                _ending(f"{view.name} gives {given} under {view.spoken_columns.get(cell_column, cell_column)}")
            )
        if comparisons:
            compared = _join(comparisons)
            sentences.append(compared[:1].upper() + compared[1:] + ".")
        cells, comparisons = [], []

    for outcome in program.actions:
        tool, arguments, result = outcome.tool, outcome.arguments, outcome.result
        if tool == "get_cell":
            if comparisons or (cells and arguments["column"] != cell_column):
                flush()
            cell_column = arguments["column"]
            cells.append((arguments["row"], clean_cell(result)))
            _remember(read, [result])
            continue
        if tool in ("greater_than", "less_than"):
            relation = "higher" if tool == "greater_than" else "lower"
            a, b = number(arguments["a"]), number(arguments["b"])
            comparisons.append(f"{a} is {'' if result else 'not '}{relation} than {b}")
            continue
        flush()
        if tool == "get_column":
            _remember(read, list(result.values()))
        sentences.append(_step(outcome, view, slots, number))
    flush()
    sentences = [sentence for sentence in sentences if sentence]
    stated = view.said(answer)
    last = sentences[-1].replace(",", "") if sentences else ""
    if sentences and stated and not re.search(rf"(?<!\w){re.escape(stated.replace(',', ''))}(?!\w)", last):
        sentences.append(f"So the answer is {stated}.")
    return " ".join(sentences)


def _remember(read: dict[float, str], cells: Iterable[Any]) -> None:
    """Map each number read from the table to the way the table writes it (44.0 stays 44.0, 1,200 stays 1,200)."""
    for cell in cells:
        text = clean_cell(cell)
        value = parse_number(text)
        if value is not None:
            read.setdefault(value, text)


def _ending(text: str) -> str:
    """A full stop, once: a header ending in an abbreviation ("Multi.") gives "under Multi.", not "Multi.."."""
    return text if text.endswith(".") else text + "."


def _step(outcome: ToolOutcome, view: _TableView, slots: Mapping[str, Any], number: Callable[[Any], str]) -> str:
    """The sentence of one step other than reading a cell or comparing ("40.1 minus 39.8 is 0.3."); "" for none."""
    tool, arguments, result = outcome.tool, outcome.arguments, outcome.result
    if tool == "get_column":
        rows = [row for row in slots["rows"] if row in result]
        given = _join([f"{clean_cell(result[row])} for {view.spoken.get(row, row)}" for row in rows])
        column = view.spoken_columns.get(arguments["column"], arguments["column"])
        return _ending(f"{view.name} gives {given} under {column}")
    if tool == "subtract":
        return f"{number(arguments['a'])} minus {number(arguments['b'])} is {number(result)}."
    if tool in ("add", "sum", "mean"):
        return f"Their {'mean' if tool == 'mean' else 'sum'} is {number(result)}."
    if tool == "divide":
        quotient = _precise(result)
        return f"{number(arguments['a'])} divided by {number(arguments['b'])} is {quotient}."
    if tool == "multiply":
        # An intermediate value keeps four decimals: "0.3789 times 100 is 37.89", never "0.38 times 100 is 37.89".
        factors = " times ".join(_precise(value) for value in arguments["numbers"])
        return f"{factors} is {_as_written(result, slots, same_unit=False)}."
    if tool in ("max", "min"):
        return f"The {'largest' if tool == 'max' else 'smallest'} of them is {number(result)}."
    if tool == "proportion":
        return f"{number(arguments['part'])} is {_fmt(result)}% of {number(arguments['total'])}."
    if tool == "count":
        if not arguments["items"]:
            return f"No {view.entity} qualifies, so the count is 0."
        return f"Counting those ({view.said(arguments['items'])}) gives {result}."
    if tool == "rank":
        if arguments.get("item"):
            return f"Sorted from highest to lowest, {view.said([arguments['item']])} is at position {result}."
        return f"Sorted from highest to lowest, the order is {view.said(result)}."
    if tool == "search_row_names":
        return f"Searching the row names for {arguments['query']} finds it in {view.name}."
    return ""


def _precise(value: Any) -> str:
    """An intermediate result as a rationale states it: four decimals, so a later step does not round midway."""
    return format_number(value, decimals=4) if isinstance(value, int | float) and abs(value) < 1e15 else str(value)


def _phrase(header: str, rng: random.Random, header_phrases: HeaderPhrases | None) -> str:
    if header_phrases is None:
        return header
    options = [phrase for phrase in (header_phrases(header) or []) if phrase and phrase.strip()]
    return rng.choice(options).strip() if options else header


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(
    rf"{_MONTH} \d{{1,2}},? (?:19|20)\d\d|\d{{1,2}} {_MONTH},? (?:19|20)\d\d|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}", re.I
)
_SPAN = re.compile(rf"(?:(?:fiscal|fy|q[1-4]|h[12]|{_MONTH})\s*)?(?:19|20)\d\d|fy\s?\d\d", re.IGNORECASE)
# What a period's flattened header says beside its point: "Years Ended December 31, - 2019", "As of - 2018".
_PERIOD_WORDS = re.compile(
    rf"(?:(?:years?|months?|quarters?|weeks?|fiscal|ended|ending|as (?:of|at)|at|{_MONTH}|\d{{1,2}}),?\s*)+", re.I
)


def _period(column: str) -> str:
    """The period a column is named by alone ("2019", "Fiscal 2018", "December 31, 2019"): its last header part, when
    the parts above only describe the period ("Years Ended December 31, - 2019"); else ""."""
    *above, last = (part.strip() for part in column.split(HEADER_JOINER))
    is_period = all(map(_PERIOD_WORDS.fullmatch, above)) and (_DATE.fullmatch(last) or _SPAN.fullmatch(last))
    return last if is_period else ""


def _indefinite(noun: str) -> str:
    """The article before a header as it is said: a BLEU, an accuracy, an F1, an MAE, an RMSE, a unit, an 8-shot."""
    if re.match(r"(?:8|11|18)(?!\d)|8\d", noun):
        return "an"
    initialism = re.match(r"[A-Z][A-Z\d²]*(?![a-z])", noun)
    said_as_word = initialism and len(initialism.group()) > 3 and re.search(r"[AEIOU]{2}", initialism.group())
    if initialism and not said_as_word:  # said letter by letter: an MAE, an F1; but a BLEU, a ROUGE
        return "an" if noun[0] in "AEFHILMNORSX" else "a"
    if re.match(r"(?:uni|us[eu]|eu|one\b)", noun, re.IGNORECASE):
        return "a"
    if re.match(r"(?:hour|honest|honou?r)", noun, re.IGNORECASE):
        return "an"
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _singular(noun: str) -> str:
    """One of a plural noun ("obligations", "technologies", "boxes"); a noun not plural ("class", "series") as it is."""
    if noun.isupper() or not re.search(r"[^sui]s$", noun) or re.search(r"(series|species|news)$", noun):
        return noun
    if noun.endswith("ies"):
        return f"{noun[:-3]}y"
    return noun[:-2] if re.search(r"(sh|ch|x|z)es$", noun) else noun[:-1]


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


def draft_template_questions(
    tables: Sequence[Mapping[str, Any]],
    *,
    seed: int = 0,
    per_template: int = 2,
    include_unanswerable: bool = False,
    header_phrases: HeaderPhrases | None = None,
    template_ids: Iterable[str] | None = None,
    subtypes: Sequence[str] = (),
    rejected: list[dict[str, Any]] | None = None,
    asked: Iterable[str] = (),
    idle: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Instantiate question templates over `tables`, answering each by executing its tool program.

    Deterministic for a given seed. Candidates whose required cells are missing are skipped, or (one per template)
    returned with `is_answerable=False` and an empty answer when `include_unanswerable` is set. Templates of the
    `subtypes` (the context's assigned reasoning type), when given, are the only ones drafted, in that order, so a
    run's drafts follow the types assigned to its contexts, unless `template_ids` names the templates: a choice of
    templates is drafted as chosen.
    A table may carry `name` (what the paper calls it, "Table 2": used in questions and rationales) and
    `has_header` (False: its first row is data, so no column is asked about).
    Every draft checks itself (curation.drafting.self_check): one that fails is dropped and, when `rejected` is
    given, recorded there as {template_id, question, reason}. A question already drafted, here or before (`asked`:
    the `asked_keys` of the paper's questions), is not drafted again: the template takes its next candidate.
    A template tried that drafts nothing here (no slot of the tables fits it, or all it fits is asked or unsuitable)
    is recorded in `idle`, when given, so a run can say which drafted nothing.
    """
    toolbox = ToolBox(tables)
    chosen = set(template_ids) if template_ids is not None else set(_DECLARATIONS)
    if unknown := chosen - set(_DECLARATIONS):
        raise ValueError(f"unknown template ids: {sorted(unknown)}")
    views = [_TableView(toolbox, index, tables[index]) for index in range(len(toolbox.tables))]
    drafts: list[dict[str, Any]] = []
    asked = set(asked)
    assigned = [template for code in subtypes for template in TEMPLATES if template.subtype == code]
    ordered = assigned if assigned and template_ids is None else TEMPLATES
    for template in (template for template in ordered if template.template_id in chosen):
        rng = random.Random(f"{seed}:{template.template_id}")
        candidates = [(view, slots) for view in views for slots in _candidates(view, template.slots)]
        rng.shuffle(candidates)
        # Drafts kept and wanted, answerable (True) and unanswerable (False).
        kept: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        quota = {True: per_template, False: int(include_unanswerable)}
        for view, slots in candidates:
            if all(len(kept[kind]) >= quota[kind] for kind in kept):
                break
            draft = _instantiate(template, view, slots, toolbox, rng, header_phrases)
            keys = asked_keys(draft["question"], draft["template_id"], draft["slots"]) if draft else set()
            if draft is None or keys & asked:
                continue
            asked.update(keys)
            problem = draft_problem(draft, tables)
            if problem:
                if rejected is not None:
                    rejected.append(
                        {"template_id": template.template_id, "question": draft["question"], "reason": problem}
                    )
                continue
            if len(kept[draft["is_answerable"]]) < quota[draft["is_answerable"]]:
                kept[draft["is_answerable"]].append(draft)
        drafts.extend(kept[True] + kept[False])
        if idle is not None and not kept[True] + kept[False]:
            idle.append(template.template_id)
    return drafts


def asked_keys(question: str, template_id: str = "", slots: Mapping[str, Any] | None = None) -> set[str]:
    """What a question asks, as the repeat check compares it: its words, and a whole-column template's column."""
    keys = {re.sub(r"\W+", " ", question.lower()).strip()}
    if template_id in _WHOLE_COLUMN and slots:
        keys.add(f"{template_id} of {slots.get('table')}:{slots.get('column')}")
    return keys


# Templates over a whole column: a context asks each once per column, however it is phrased.
_WHOLE_COLUMN = frozenset({"column_sum", "column_mean", "rows_above_mean", "extreme_value"})


def _instantiate(
    template: QuestionTemplate,
    view: _TableView,
    slots: dict[str, Any],
    toolbox: ToolBox,
    rng: random.Random,
    header_phrases: HeaderPhrases | None,
) -> dict[str, Any] | None:
    slots = {**slots, "table": view.label, "name": view.name, "rows": view.plain_rows, "units": set(), "written": set()}
    slots["spreads"], slots["is_report"] = view.spread_columns, view.is_report
    slots["decimals"] = 2  # at least two decimals; more when the cells the answer uses write more
    program = Program(toolbox)
    is_answerable = True
    try:
        answer = template.solve(program, slots)
        units = slots["units"]
        if any(_CURRENCY.fullmatch(unit) for unit, _ in units):
            units = units - {("", False)}  # a report writes its currency on a column's first and total rows only
        if len(units) > 1:
            raise _Unsuitable("the cells mix units (e.g. 125M and 1.5B, or % and plain numbers)")
        if view.unreadable_rows.intersection(answer):
            raise _Unsuitable("the answer names a row only the tool box's number tells apart")
    except _Missing:
        is_answerable, answer = False, []
    except (_Unsuitable, ToolError):
        # No good question; or (ToolError) a template asked for something the tables do not hold: a bug in slot
        # filling, not a question.
        return None
    phrasing_index = rng.randrange(len(template.phrasings))
    words = {
        "where": view.where,
        "entity": view.entity,
        "entities": view.entities,
        **{
            key: without_citations(view.spoken.get(slots.get(key, ""), slots.get(key, "")))
            for key in ("row", "row_a", "row_b")
        },
        "direction": slots.get("direction", ""),
        "k": slots.get("k", ""),
        "subset_text": without_citations(view.said(slots["subset"])) if "subset" in slots else "",
    }
    for key in ("column", "column_a", "column_b"):
        if key in slots:
            words[key] = without_citations(
                _phrase(view.spoken_columns.get(slots[key], slots[key]), rng, header_phrases)
            )
    for key in ("column", "column_a", "column_b"):
        if header_phrases is None and (point := _period(words.get(key, ""))):
            # "the 2019 of BERT", "a higher Fiscal 2018" read badly; a change goes "from 2018 to 2019"
            words[key] = point if key != "column" else f"value {'at' if _DATE.fullmatch(point) else 'in'} {point}"
    if "column" in words:
        words["a_column"] = f"{_indefinite(words['column'])} {words['column']}"
    question = template.phrasings[phrasing_index].format(**words)
    # Names as a reader writes them: a citation key left in a row name is no part of the question or the answer.
    answer = [without_citations(item) for item in answer]
    working = ("rows", "units", "written", "name", "decimals", "spreads", "is_report")  # the solvers', not asked
    recorded_slots = {key: value for key, value in slots.items() if key not in working}
    return {
        "question": question,
        "answer": answer,
        "answer_form": "short",
        "answer_source": "table",
        "reasoning_subtype": template.subtype,
        "template_id": template.template_id,
        "phrasing_index": phrasing_index,
        "slots": recorded_slots,
        "rationale": without_citations(_rationale(program, view, slots, answer)) if is_answerable else "",
        "essential_actions": program.essential_actions(),
        "relevant_tables": [view.label],
        "is_answerable": is_answerable,
    }
