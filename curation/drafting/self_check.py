"""A template draft checks itself: its essential actions are executed again through a fresh ToolBox on the frozen
tables, and the stated answer, its % and its answer type must follow from what they compute (pure).

`draft_problem` returns why a draft fails, or None; the template drafter drops a failing draft and counts it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from curation.answer_types import suggest_answer_type
from curation.toolkit.numbers import parse_number, parse_numeric, without_citations
from curation.toolkit.tools import SEARCH_TOOLS, ToolBox

_DISCOVERY = frozenset({"list_tables", *SEARCH_TOOLS.values()})
# The answer type each template's program yields; any other template's is a span, or a multi-span for several
# items (multi-span templates may yield a single item: a span).
_COMPUTING = (
    "cell_difference", "cell_ratio", "pair_sum", "change_between_columns", "percentage_change", "proportion_of_total",
    "column_sum", "column_mean", "subset_mean",
)  # fmt: skip
TEMPLATE_ANSWER_TYPES = {**dict.fromkeys(_COMPUTING, "arithmetic"), "count_beyond_row": "count"}


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _same(first: Any, second: Any) -> bool:
    a, b = parse_number(first), parse_number(second)
    if a is not None and b is not None:
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return first == second


def draft_problem(draft: Mapping[str, Any], tables: Sequence[Mapping[str, Any]]) -> str | None:
    """Why a template draft fails its self-check, or None: an action that fails or gives another result on the
    frozen tables, an answer its program does not compute, a "%" neither its cells nor its program give, or an
    answer type other than its template's."""
    if not draft.get("is_answerable", True):
        return None
    toolbox = ToolBox(tables)
    computed: list[float] = []
    names: set[str] = {str(table.get("name") or "") for table in tables}
    reads_percent, computes_percent, reads_plain = False, False, False
    verdicts: list[bool] = []
    for action in draft.get("essential_actions") or []:
        tool, arguments = action["tool"], action.get("arguments") or {}
        if tool in _DISCOVERY:
            continue
        outcome = toolbox.execute(tool, arguments)
        if not outcome.ok:
            return f"{tool} fails on the frozen table: {outcome.error}"
        if not _same(outcome.result, action.get("result")):
            return f"{tool} gives {outcome.result!r} on the frozen table, the draft recorded {action.get('result')!r}"
        names.update(_strings(arguments))
        names.update(_strings(outcome.result))
        if tool in ("get_cell", "get_column"):
            cells = list(outcome.result.values()) if isinstance(outcome.result, Mapping) else [outcome.result]
            numbers = [parse_numeric(cell) for cell in cells]
            reads_percent |= any(number is not None and number.is_percent for number in numbers)
            reads_plain |= any(number is not None and not number.is_percent for number in numbers)
        computes_percent |= tool == "proportion" and bool(arguments.get("as_percentage"))
        computes_percent |= tool == "multiply" and 100 in (arguments.get("numbers") or [])
        if isinstance(outcome.result, bool):
            verdicts.append(outcome.result)
        number = parse_number(outcome.result)
        if number is not None:
            computed.append(number)
    names.update({without_citations(name) for name in names})
    answer = [str(item) for item in draft.get("answer") or []]
    if not answer:
        return "an answerable draft without an answer"
    computed_items = []  # the answer items that are numbers the program computes, not names it reads ("90%")
    for item in answer:
        value = parse_number(item)
        if item in names or (verdicts and item.lower() == ("yes" if verdicts[-1] else "no")):
            continue
        computed_items.append(item)
        if value is None:
            return f"the answer {item!r} is no name the program reads or returns"
        # Answers carry two decimals, and a huge value four significant digits.
        # (1e-9: a half rounded up, 77.675 → 77.68, is 0.005 away from the float just below 77.675.)
        if not computed or abs(value - computed[-1]) > 0.005 + 1e-9 + 1e-4 * abs(value) * (abs(value) >= 1e15):
            return f"the answer {item} is not what the program computes ({computed[-1] if computed else 'nothing'})"
    gives_percent = computes_percent or (reads_percent and not reads_plain)
    if any(item.strip().endswith("%") for item in computed_items) and not gives_percent:
        return "the answer carries % but neither its cells nor its program give a percentage"
    expected = TEMPLATE_ANSWER_TYPES.get(str(draft.get("template_id")), "multi-span" if len(answer) > 1 else "span")
    tools = [action["tool"] for action in draft.get("essential_actions") or []]
    suggested = suggest_answer_type(
        question=str(draft.get("question", "")), rationale=str(draft.get("rationale", "")), answer=answer, tools=tools
    )
    if suggested.value is not None and suggested.value != expected:
        return (
            f"the answer type would start as {suggested.value} ({suggested.evidence}), the template computes {expected}"
        )
    return None
