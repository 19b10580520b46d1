"""Tools over a context's tables (data retrieval + arithmetic) for the tool loop and the template drafter."""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any

from curation.table_shape import HEADER_JOINER, row_names, shape_from_rows
from curation.toolkit.numbers import clean_cell, parse_number

DATA_TOOLS = ("list_tables", "search_column_names", "search_row_names", "get_cell", "get_row", "get_column")
ARITHMETIC_TOOLS = (
    "add", "subtract", "multiply", "divide", "sum", "mean", "max", "min", "count", "rank", "sort", "greater_than",
    "less_than", "proportion",
)  # fmt: skip
MARKER_TOOLS = ("think", "final_answer")
ALL_TOOLS = DATA_TOOLS + ARITHMETIC_TOOLS + MARKER_TOOLS


class ToolError(Exception):
    """A wrong tool call; the message is shown to the model so it can correct itself."""


@dataclass
class ToolOutcome:
    """One executed call: its arguments and either a result or an error message."""

    tool: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def message(self) -> str:
        """The text returned to the model for this call."""
        if self.error is not None:
            return f"Error: {self.error}"
        return json.dumps(self.result, ensure_ascii=False)

    def to_action(self) -> dict[str, Any]:
        """The call as an essential-action record: {tool, arguments, result}."""
        return {"tool": self.tool, "arguments": self.arguments, "result": self.result}


@dataclass
class _Table:
    label: str
    caption: str
    columns: list[str]
    row_names: list[str]
    cells: list[list[str]]  # body rows, aligned with columns (the first `name_width` columns make the row names)
    name: str = ""  # what the paper calls it ("Table 2"), as questions write it
    name_width: int = 1
    # The names rows had before they were named by the columns that identify them: each row's first cell. Essential
    # actions recorded then (in released items) name rows so, and `row_index` still resolves them.
    first_cell_names: list[str] = field(default_factory=list)


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", clean_cell(text)).strip().lower()


def _unique(names: Iterable[str], fallback: str) -> list[str]:
    seen: dict[str, int] = {}
    result = []
    for index, raw in enumerate(names):
        name = clean_cell(raw) or f"{fallback} {index + 1}"
        key = name.lower()
        seen[key] = seen.get(key, 0) + 1
        # Duplicate names get a stable suffix so every row and column stays addressable.
        result.append(name if seen[key] == 1 else f"{name} ({seen[key]})")
    return result


def _without_full_width_rows(columns: Sequence[str]) -> list[str]:
    """Column names without the text of a header row that spans the whole table, the row-name column included (a
    section or prompt row such as "Zero-shot prompting"): flattened, it is a part of every name, and names no column.
    A name made only of it is kept."""
    parts = [name.split(HEADER_JOINER) for name in columns]
    if len(parts) < 3:
        return list(columns)
    spanning = set(parts[0]).intersection(*parts[1:])
    kept = [[part for part in split if part not in spanning] for split in parts]
    return [HEADER_JOINER.join(left) or name for name, left in zip(columns, kept, strict=True)]


def normalise_tables(tables: Sequence[Mapping[str, Any]]) -> list[_Table]:
    """Turn raw tables ({label, caption, rows[, header_rows]}) into named rows and columns."""
    normalised = []
    used_labels: set[str] = set()
    for position, table in enumerate(tables):
        rows = [[str(cell) for cell in row] for row in table.get("rows") or []]
        label = str(table.get("label") or table.get("name") or f"Table {position + 1}")
        if label in used_labels:
            label = f"{label} ({position + 1})"
        used_labels.add(label)
        # Header flattening is the table representation's rule (curation.table_shape), shared with every prompt.
        shape = shape_from_rows(rows, header_rows=max(1, int(table.get("header_rows") or 1)))
        body = shape.body_rows()
        columns = _unique(_without_full_width_rows(shape.prompt_columns()), "column")
        names, name_width = row_names(body)
        name = str(table.get("name") or "")
        caption = str(table.get("caption") or "")
        first_cells = _unique((row[0] if row else "" for row in body), "row")
        row_names_now = _unique(names, "row")
        normalised.append(_Table(label, caption, columns, row_names_now, body, name, max(name_width, 1), first_cells))
    return normalised


def _clean_number(value: float) -> float | int:
    if math.isfinite(value) and float(value).is_integer() and abs(value) < 1e15:
        return int(value)
    return round(value, 10)


def _schema(properties: dict[str, Any], *optional: str) -> dict[str, Any]:
    required = [name for name in properties if name not in optional]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_NUMBER = {"type": ["number", "string"], "description": "A number, or a numeric cell such as '1,234' or '12.5%'."}
_NUMBERS = {"type": "array", "items": _NUMBER, "minItems": 1, "description": "The numbers."}
_TABLE = {"type": "string", "description": 'The table\'s label or its name ("Table 2"), as list_tables returns them.'}
_ROW = {"type": "string", "description": "The row name, as returned by search_row_names."}
_COLUMN = {"type": "string", "description": "The column name (header), as returned by search_column_names."}
_QUERY = {"type": "string", "description": "Keywords to look for."}
_OPTIONAL_TABLE = {"type": "string", "description": "Optional: only search this table."}

TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "list_tables": (
        'List the tables in the context with their labels, names ("Table 2"), captions and sizes.',
        _schema({}),
    ),
    "search_column_names": (
        "Find column names (headers) that match keywords; returns [{table, column}].",
        _schema({"query": _QUERY, "table": _OPTIONAL_TABLE}, "table"),
    ),
    "search_row_names": (
        "Find row names (the cells that identify each row) that match keywords; returns [{table, row}].",
        _schema({"query": _QUERY, "table": _OPTIONAL_TABLE}, "table"),
    ),
    "get_cell": (
        "Get the cell at a row and column of a table, as written.",
        _schema({"table": _TABLE, "row": _ROW, "column": _COLUMN}),
    ),
    "get_row": ("Get a whole row of a table as {column: cell}.", _schema({"table": _TABLE, "row": _ROW})),
    "get_column": ("Get a whole column of a table as {row: cell}.", _schema({"table": _TABLE, "column": _COLUMN})),
    "add": ("Add numbers together.", _schema({"numbers": _NUMBERS})),
    "subtract": ("Compute a - b.", _schema({"a": _NUMBER, "b": _NUMBER})),
    "multiply": ("Multiply numbers together.", _schema({"numbers": _NUMBERS})),
    "divide": ("Compute a / b.", _schema({"a": _NUMBER, "b": _NUMBER})),
    "sum": ("Sum a list of numbers.", _schema({"numbers": _NUMBERS})),
    "mean": ("Average (arithmetic mean) of a list of numbers.", _schema({"numbers": _NUMBERS})),
    "max": ("Largest of a list of numbers.", _schema({"numbers": _NUMBERS})),
    "min": ("Smallest of a list of numbers.", _schema({"numbers": _NUMBERS})),
    "count": (
        "Count the items in a list.",
        _schema({"items": {"type": "array", "items": {}, "description": "The items to count."}}),
    ),
    "rank": (
        "Order named values (e.g. a column from get_column) from largest to smallest (or the reverse); "
        "with `item`, return that item's 1-based position instead of the order.",
        _schema(
            {
                "values": {
                    "type": "object",
                    "additionalProperties": _NUMBER,
                    "description": "Mapping of name to number.",
                },
                "descending": {"type": "boolean", "description": "Largest first (default true)."},
                "item": {"type": "string", "description": "Optional: the name whose position to return."},
            },
            "descending",
            "item",
        ),
    ),
    "sort": (
        "Sort a list of numbers (ascending unless descending is true).",
        _schema({"numbers": _NUMBERS, "descending": {"type": "boolean"}}, "descending"),
    ),
    "greater_than": ("Whether a > b.", _schema({"a": _NUMBER, "b": _NUMBER})),
    "less_than": ("Whether a < b.", _schema({"a": _NUMBER, "b": _NUMBER})),
    "proportion": (
        "The share of a part in a total: part / total, or as a percentage if as_percentage is true.",
        _schema({"part": _NUMBER, "total": _NUMBER, "as_percentage": {"type": "boolean"}}, "as_percentage"),
    ),
    "think": ("Write down a thought or plan; it does not change anything.", _schema({"thought": {"type": "string"}})),
    "final_answer": (
        "Give the final answer and stop.",
        _schema({"answer": {"type": ["string", "number", "array", "boolean"]}}),
    ),
}

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}


def _check_type(value: Any, schema: Mapping[str, Any], where: str) -> None:
    expected = schema.get("type")
    if expected is None:
        return
    types = expected if isinstance(expected, list) else [expected]
    if not any(_JSON_TYPES[kind](value) for kind in types):
        raise ToolError(f"{where} must be {' or '.join(types)}, got {type(value).__name__} {value!r:.60}")
    if isinstance(value, list) and "items" in schema:
        if len(value) < schema.get("minItems", 0):
            raise ToolError(f"{where} is too short: {len(value)} given, at least {schema['minItems']} needed")
        for index, item in enumerate(value):
            _check_type(item, schema["items"], f"{where}[{index}]")
    if isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        for key, item in value.items():
            _check_type(item, schema["additionalProperties"], f"{where}[{key!r}]")


# Arithmetic tools: those over the list `numbers`, and those over two numbers `a` and `b`.
_NUMBER_LIST_TOOLS: dict[str, Callable[[list[float]], float]] = {
    "add": math.fsum, "sum": math.fsum, "multiply": math.prod, "max": max, "min": min,
    "mean": lambda values: math.fsum(values) / len(values),
}  # fmt: skip
_TWO_NUMBER_TOOLS: dict[str, Callable[[float, float], float | bool]] = {
    "subtract": operator.sub, "divide": operator.truediv, "greater_than": operator.gt, "less_than": operator.lt
}  # fmt: skip


def _to_number(value: Any, where: str) -> float:
    number = parse_number(value)
    if number is None:
        raise ToolError(f"{where} is not a number: {value!r:.60}")
    return number


class ToolBox:
    """Executes tool calls by name over a fixed set of tables; wrong calls come back as helpful errors."""

    def __init__(self, tables: Sequence[Mapping[str, Any]], *, tools: Iterable[str] = ALL_TOOLS) -> None:
        self.tables = normalise_tables(tables)
        self.tool_names = tuple(tools)
        if unknown := set(self.tool_names) - set(TOOL_SPECS):
            raise ValueError(f"unknown tools: {sorted(unknown)}")

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style tool definitions for the tools this box offers."""
        return [
            {"type": "function", "function": {"name": name, "description": spec[0], "parameters": spec[1]}}
            for name in self.tool_names
            for spec in [TOOL_SPECS[name]]
        ]

    def execute(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolOutcome:
        """Run one call; never raises for a wrong call — the outcome carries the error message instead."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as error:
                return ToolOutcome(name, {}, error=f"arguments are not valid JSON ({error.msg})")
        arguments = dict(arguments or {})
        if name not in self.tool_names:
            close = difflib.get_close_matches(str(name), self.tool_names, n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            return ToolOutcome(
                str(name),
                arguments,
                error=f"unknown tool {name!r}.{hint} Available tools: {', '.join(self.tool_names)}",
            )
        try:
            self._validate(name, arguments)
            if name in _NUMBER_LIST_TOOLS:
                result = _clean_number(_NUMBER_LIST_TOOLS[name](self._numbers(arguments["numbers"])))
            elif name in _TWO_NUMBER_TOOLS:
                result = self._compare_or_compute(name, **arguments)
            else:
                result = getattr(self, f"_tool_{name}")(**arguments)
        except ToolError as error:
            return ToolOutcome(name, arguments, error=str(error))
        return ToolOutcome(name, arguments, result=result)

    def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> Any:
        """Run one call and return its result, or its error message as a string starting with 'Error:'."""
        outcome = self.execute(name, arguments)
        return outcome.result if outcome.ok else outcome.message()

    def _validate(self, name: str, arguments: dict[str, Any]) -> None:
        schema = TOOL_SPECS[name][1]
        properties = schema["properties"]
        unexpected = [key for key in arguments if key not in properties]
        if unexpected:
            expected = ", ".join(properties) or "no arguments"
            raise ToolError(f"{name} does not take {', '.join(unexpected)}; it takes: {expected}")
        missing = [key for key in schema["required"] if key not in arguments]
        if missing:
            raise ToolError(f"{name} was called without {', '.join(missing)}, which it requires")
        for key, value in arguments.items():
            _check_type(value, properties[key], key)

    # Lookups -----------------------------------------------------------------------------------

    def table(self, label: str) -> _Table:
        """Find a table by label or by its name ("Table 2"), case-insensitive, or raise a ToolError listing them."""
        for table in self.tables:
            if table.label == label:
                return table
        wanted = _normalise(label)
        for table in self.tables:
            if _normalise(table.label) == wanted:
                return table
        named = [table for table in self.tables if table.name and _normalise(table.name) == wanted]
        if len(named) == 1:
            return named[0]
        labels = [table.label for table in self.tables]
        close = difflib.get_close_matches(label, labels, n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ToolError(f"no table labelled {label!r}.{hint} Tables: {', '.join(map(repr, labels)) or 'none'}")

    def names_now(self, value: Any) -> Any:
        """`value` with the table and row it names as the tools name them now: a mapping's `table` (its label or its
        reader name, "Table 2") becomes the table's label and its `row` (today's name or the row's first cell, the
        name rows had before) the row's name today; a list item by item; anything else, or what names nothing,
        unchanged. Two calls or results naming one table and row either way compare equal by it."""
        if isinstance(value, list | tuple):
            return [self.names_now(item) for item in value]
        if not isinstance(value, Mapping) or not isinstance(value.get("table"), str):
            return value
        try:
            table = self.table(value["table"])
        except ToolError:
            return value
        named = {**value, "table": table.label}
        if isinstance(value.get("row"), str):
            with contextlib.suppress(ToolError):
                named["row"] = table.row_names[self.row_index(table, value["row"])]
        return named

    @staticmethod
    def _resolve(name: str, candidates: Sequence[str], kind: str, table: _Table) -> int:
        if name in candidates:
            return candidates.index(name)
        wanted = _normalise(name)
        matches = [index for index, candidate in enumerate(candidates) if _normalise(candidate) == wanted]
        if len(matches) == 1:
            return matches[0]
        by_key = {_normalise(candidate): candidate for candidate in candidates}
        close = [by_key[key] for key in difflib.get_close_matches(wanted, list(by_key), n=3, cutoff=0.5)]
        overlapping = [
            candidate for key, candidate in by_key.items() if wanted and key and (wanted in key or key in wanted)
        ]
        suggestions = list(dict.fromkeys([*close, *overlapping]))[:5]
        hint = f" Did you mean {', '.join(map(repr, suggestions))}?" if suggestions else ""
        return_hint = f" Use search_{kind}_names to find {kind} names."
        raise ToolError(f"table {table.label!r} has no {kind} named {name!r}.{hint}{return_hint}")

    def row_index(self, table: _Table, row: str) -> int:
        """Index of a row by name in a table, or a ToolError with suggestions. A row's first cell, the name rows had
        before they were named by the columns that identify them, still names it when today's names do not."""
        try:
            return self._resolve(row, table.row_names, "row", table)
        except ToolError:
            with contextlib.suppress(ToolError):
                return self._resolve(row, table.first_cell_names, "row", table)
            raise

    def column_index(self, table: _Table, column: str) -> int:
        return self._resolve(column, table.columns, "column", table)

    def _search(self, kind: str, query: str, table: str | None = None) -> list[dict[str, str]]:
        tokens = [token for token in re.split(r"[^\w%.]+", _normalise(query)) if token]
        if not tokens:
            raise ToolError("query must contain at least one keyword")
        tables = [self.table(table)] if table is not None else self.tables
        scored = []
        for candidate_table in tables:
            names = candidate_table.row_names if kind == "row" else candidate_table.columns[1:]
            for name in names:
                text = _normalise(name)
                hits = sum(1 for token in tokens if token in text)
                if hits:
                    scored.append((-hits, candidate_table.label, name))
        scored.sort(key=lambda item: item[0])
        return [{"table": label, kind: name} for _, label, name in scored[:20]]

    # Data tools ----------------------------------------------------------------------------------

    def _tool_list_tables(self) -> list[dict[str, Any]]:
        return [
            {
                "table": table.label,
                **({"name": table.name} if table.name else {}),
                "caption": table.caption,
                "rows": len(table.row_names),
                "columns": len(table.columns),
            }
            for table in self.tables
        ]

    _tool_search_column_names = partialmethod(_search, "column")
    _tool_search_row_names = partialmethod(_search, "row")

    def _tool_get_cell(self, table: str, row: str, column: str) -> str:
        found = self.table(table)
        return found.cells[self.row_index(found, row)][self.column_index(found, column)]

    def _tool_get_row(self, table: str, row: str) -> dict[str, str]:
        found = self.table(table)
        cells = found.cells[self.row_index(found, row)]
        return dict(zip(found.columns[1:], cells[1:], strict=True))

    def _tool_get_column(self, table: str, column: str) -> dict[str, str]:
        found = self.table(table)
        index = self.column_index(found, column)
        return {name: cells[index] for name, cells in zip(found.row_names, found.cells, strict=True)}

    # Arithmetic --------------------------------------------------------------------------------

    @staticmethod
    def _numbers(values: Sequence[Any], where: str = "numbers") -> list[float]:
        return [_to_number(value, f"{where}[{index}]") for index, value in enumerate(values)]

    def _compare_or_compute(self, name: str, a: Any, b: Any) -> float | int | bool:
        if name == "divide" and _to_number(b, "b") == 0:
            raise ToolError("division by zero: b is 0")
        result = _TWO_NUMBER_TOOLS[name](_to_number(a, "a"), _to_number(b, "b"))
        return result if isinstance(result, bool) else _clean_number(result)

    def _tool_count(self, items: list[Any]) -> int:
        return len(items)

    def _tool_rank(self, values: dict[str, Any], descending: bool = True, item: str | None = None) -> Any:
        if not values:
            raise ToolError("values must not be empty")
        numbers = {name: _to_number(value, f"values[{name!r}]") for name, value in values.items()}
        order = sorted(numbers, key=lambda name: numbers[name], reverse=descending)
        if item is None:
            return order
        if item not in numbers:
            close = difflib.get_close_matches(item, list(numbers), n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ToolError(f"item {item!r} is not among the values.{hint}")
        # Competition ranking: ties share the better position.
        better = sum(
            1 for value in numbers.values() if (value > numbers[item] if descending else value < numbers[item])
        )
        return better + 1

    def _tool_sort(self, numbers: list[Any], descending: bool = False) -> list[float | int]:
        return [_clean_number(value) for value in sorted(self._numbers(numbers), reverse=descending)]

    def _tool_proportion(self, part: Any, total: Any, as_percentage: bool = False) -> float | int:
        whole = _to_number(total, "total")
        if whole == 0:
            raise ToolError("total is 0, so the proportion is undefined")
        share = _to_number(part, "part") / whole
        return _clean_number(share * 100 if as_percentage else share)

    # Markers -------------------------------------------------------------------------------------

    def _tool_think(self, thought: str) -> str:
        return "ok"

    def _tool_final_answer(self, answer: Any) -> Any:
        return answer


SEARCH_TOOLS = {"row": "search_row_names", "column": "search_column_names"}
# Which names each data tool reads: the names a model has to discover (by search) before it can make the call.
_NAMES_READ = {"get_cell": ("row", "column"), "get_row": ("row",), "get_column": ("column",)}


@dataclass
class Program:
    """A recorded sequence of tool calls — the essential actions behind a templated answer."""

    toolbox: ToolBox
    actions: list[ToolOutcome] = field(default_factory=list)

    def run(self, name: str, **arguments: Any) -> Any:
        """Execute a call, record it, and return its result; a failing call raises ToolError."""
        outcome = self.toolbox.execute(name, arguments)
        if not outcome.ok:
            raise ToolError(outcome.error)
        self.actions.append(outcome)
        return outcome.result

    def essential_actions(self) -> list[dict[str, Any]]:
        """Discovery first, then the program's own calls, as plain {tool, arguments, result} dicts.

        Discovery is what the tool-loop prompt tells a model to do before reading data, and the meta-level paper
        counts its search call as essential: one `list_tables`, then one search per row or column name the program
        reads. A search's stored result is the name it must return ({table, row} or {table, column}), not the whole
        hit list, so any search whose result contains that name is credited (scoring.metrics.toolcalls).
        """
        discovery: dict[tuple[str, str], dict[str, Any]] = {}
        for outcome in self.actions:
            for kind, tool in SEARCH_TOOLS.items():
                if outcome.tool == tool:
                    query = str(outcome.arguments.get("query", ""))
                    discovery.setdefault((kind, _normalise(query)), self._search_action(kind, query, None))
            for kind in _NAMES_READ.get(outcome.tool, ()):
                name = str(outcome.arguments[kind])
                table = str(outcome.arguments["table"])
                discovery.setdefault((kind, _normalise(name)), self._search_action(kind, name, table))
        listing = self.toolbox.execute("list_tables", {})
        program = [outcome.to_action() for outcome in self.actions if outcome.tool not in SEARCH_TOOLS.values()]
        return [listing.to_action(), *discovery.values(), *program]

    def _search_action(self, kind: str, name: str, table: str | None) -> dict[str, Any]:
        expected = {kind: name} if table is None else {"table": table, kind: name}
        return {"tool": SEARCH_TOOLS[kind], "arguments": {"query": name}, "result": expected}
