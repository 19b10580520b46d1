"""Tool-call precision and recall against essential actions, post-processed as in the meta-level reasoning paper §5.

Post-processing, in order: `think` and `final_answer` calls are dropped; `less_than(a, b)` becomes
`greater_than(b, a)`; a `search_…` call whose result contains the expected name matches the essential search
(the essential search's `result` is that name — a string, or a mapping such as {table, row}; a list result is searched
item by item, so a search returning several hits is credited when one of them is the name, and one search naming
several essential names credits each of them while counting once as a true call);
list arguments compare as multisets; `table` and `row` arguments (and a search's expected name) compare as the table
and row they name when the caller gives the tools' resolver (`names`: "Table 2" and its label "tab:results" are one
table; a row's first cell, the name an older release's essential actions give it, and its name today are one
row); each essential action is matched at most once, so a repeated identical call counts once as true and the rest
as false. Precision = true calls / scored calls; recall = matched essential actions / essential actions. The error
rate is the share of outputs with at least one failing tool call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

EXCLUDED_TOOLS = frozenset({"think", "final_answer"})


@dataclass(frozen=True)
class ToolCall:
    """One tool call: name, arguments (mapping or positional list), the result it returned, and whether it failed."""

    name: str
    arguments: Any = field(default_factory=dict)
    result: Any = None
    is_error: bool = False


def _canonical_value(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace(",", ""))
        except ValueError:
            return value.strip()
    if isinstance(value, list | tuple):
        # Values of a list-taking tool (add, mean, …) are right as a multiset, whatever their order.
        return ("multiset", tuple(sorted(Counter(_canonical_value(item) for item in value).items(), key=repr)))
    if isinstance(value, Mapping):
        return tuple(sorted((str(key), _canonical_value(item)) for key, item in value.items()))
    return repr(value)


def canonical_arguments(arguments: Any) -> Any:
    """Arguments in a comparable form: numbers as floats, lists as multisets, mappings sorted by key."""
    if isinstance(arguments, list | tuple):
        return ("positional", tuple(_canonical_value(value) for value in arguments))
    return _canonical_value(arguments)


def normalise_call(call: ToolCall) -> ToolCall:
    """`less_than(a, b)` → `greater_than(b, a)` (values swapped, argument names kept in order); others unchanged."""
    if call.name != "less_than":
        return call
    arguments = call.arguments
    if isinstance(arguments, Mapping) and len(arguments) == 2:
        keys = list(arguments)
        swapped: Any = {keys[0]: arguments[keys[1]], keys[1]: arguments[keys[0]]}
    elif isinstance(arguments, list | tuple) and len(arguments) == 2:
        swapped = [arguments[1], arguments[0]]
    else:
        swapped = arguments
    return ToolCall(name="greater_than", arguments=swapped, result=call.result, is_error=call.is_error)


def _folded(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


def result_contains(result: Any, name: Any) -> bool:
    """Whether a search result holds `name`: a hit list holds it when one hit does; a hit mapping when it has every
    key of a mapping `name` with the same text (or a value equal to a plain `name`); text when it contains it."""
    if isinstance(result, list | tuple):
        return any(result_contains(hit, name) for hit in result)
    if isinstance(name, Mapping):
        if isinstance(result, Mapping):
            return all(key in result and _folded(result[key]) == _folded(value) for key, value in name.items())
        return all(_folded(value) in _folded(result) for value in name.values())
    if isinstance(result, Mapping):
        return any(_folded(value) == _folded(name) for value in result.values())
    return _folded(name) in _folded(result)


Names = Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


def _search_credited(call: ToolCall, expected: Any, names: Names) -> bool:
    if call.result is None or call.is_error:
        return False
    found = names(call.result)
    if isinstance(expected, list | tuple):
        # Essential actions stored before the drafter recorded the name keep the whole hit list: any hit will do.
        return any(result_contains(found, names(name)) for name in expected)
    return result_contains(found, names(expected))


def _matches(call: ToolCall, essential: ToolCall, names: Names = _same) -> bool:
    if call.name != essential.name:
        return False
    if call.name.startswith("search_") and essential.result is not None:
        # The paper credits any search whose result contained the right name, whatever the query was.
        return _search_credited(call, essential.result, names)
    return canonical_arguments(names(call.arguments)) == canonical_arguments(names(essential.arguments))


@dataclass
class ToolCallScore:
    """Precision, recall and counts for one model output."""

    precision: float
    recall: float
    true_positives: int
    scored_calls: int
    has_error: bool


def score_tool_calls(
    calls: Sequence[ToolCall], essential_actions: Sequence[ToolCall], *, names: Names = _same
) -> ToolCallScore:
    """Compare one output's tool calls with its essential actions after the paper's post-processing; `names` (the
    ToolBox's `names_now` over the item's tables) says which table and row an argument or a search result names."""
    essentials = [normalise_call(action) for action in essential_actions if action.name not in EXCLUDED_TOOLS]
    scored = [normalise_call(call) for call in calls if call.name not in EXCLUDED_TOOLS]
    matched = [False] * len(essentials)
    true_positives = 0
    for call in scored:
        if call.name.startswith("search_"):
            # One search whose hit list names several essential names discovered them all: one true call.
            credited = [
                i for i, essential in enumerate(essentials) if not matched[i] and _matches(call, essential, names)
            ]
            for index in credited:
                matched[index] = True
            true_positives += bool(credited)
            continue
        for index, essential in enumerate(essentials):
            if not matched[index] and _matches(call, essential, names):
                matched[index] = True
                true_positives += 1
                break
    return ToolCallScore(
        precision=true_positives / len(scored) if scored else 0.0,
        recall=sum(matched) / len(essentials) if essentials else 1.0,
        true_positives=true_positives,
        scored_calls=len(scored),
        has_error=any(call.is_error for call in calls),
    )
