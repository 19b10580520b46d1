"""The tool-calling loop (meta-level-reasoning paper §4): native tool calls, or a JSON action protocol without them.

A wrong call gets the tool's helpful error message back; the loop stops at `final_answer` or the turn limit.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from curation.endpoints.client import json_schema_format
from curation.endpoints.errors import EndpointBadRequest
from curation.toolkit.extraction import extract_answer, extract_program_answer
from curation.toolkit.tools import ARITHMETIC_TOOLS, DATA_TOOLS, MARKER_TOOLS, ToolBox
from scoring.methods.base import MIN_TURNS, Chat, MethodOutput, MethodSettings
from scoring.methods.templates import DATA_TOOLS_NOTE, render

# A loop needs a turn per call of its longest program (JSON actions come one per turn), plus `final_answer`, and a few
# to spare for a `think` or a call that failed and is retried; never fewer than MIN_TURNS (for items without a program).
SPARE_TURNS = 3
MAX_TURNS_LIMIT = 200

# Invented data for the n-shot examples, so an example never shows a value of the question's own tables.
_EXAMPLE_TABLE = {
    "label": "Table X",
    "caption": "Example table",
    "rows": [
        ["Model", "Accuracy", "F1"],
        ["Alpha", "71.2", "65.0"],
        ["Beta", "68.4", "70.3"],
        ["Gamma", "74.9", "69.1"],
    ],
}
_WORDS = ("accuracy", "f1", "alpha", "beta", "gamma", "model", "total", "loss")


def tool_names(option: str) -> tuple[str, ...]:
    """All tools, or the data tools only (arithmetic then happens in the model's text)."""
    return DATA_TOOLS + MARKER_TOOLS if option == "data" else DATA_TOOLS + ARITHMETIC_TOOLS + MARKER_TOOLS


def turn_cap(essential_action_lists: Iterable[Sequence[Mapping[str, Any]]]) -> tuple[int, int]:
    """(turn cap, longest program): the longest essential-action list (discovery included, markers excluded) plus
    `final_answer` and SPARE_TURNS, at least MIN_TURNS and at most MAX_TURNS_LIMIT."""
    longest = max(
        (
            sum(1 for action in actions if (action.get("tool") or action.get("name")) not in MARKER_TOOLS)
            for actions in essential_action_lists
        ),
        default=0,
    )
    return min(MAX_TURNS_LIMIT, max(MIN_TURNS, longest + 1 + SPARE_TURNS)), longest


def _random_arguments(name: str, rng: random.Random) -> dict[str, Any]:
    numbers = [round(rng.uniform(-50, 150), 1) for _ in range(rng.randint(2, 4))]
    rows, columns = ["Alpha", "Beta", "Gamma"], ["Accuracy", "F1"]
    by_name: dict[str, dict[str, Any]] = {
        "list_tables": {},
        "search_column_names": {"query": rng.choice(_WORDS)},
        "search_row_names": {"query": rng.choice(_WORDS)},
        "get_cell": {"table": "Table X", "row": rng.choice(rows), "column": rng.choice(columns)},
        "get_row": {"table": "Table X", "row": rng.choice(rows)},
        "get_column": {"table": "Table X", "column": rng.choice(columns)},
        **{name: {"a": numbers[0], "b": numbers[1]} for name in ("subtract", "divide", "greater_than", "less_than")},
        "proportion": {"part": abs(numbers[0]), "total": abs(numbers[0]) + abs(numbers[1]) + 1},
        "count": {"items": numbers},
        "rank": {"values": dict(zip(rows, numbers + [1.0] * 3, strict=False))},
        "sort": {"numbers": numbers},
        "think": {"thought": "I should look up the row first."},
        "final_answer": {"answer": str(numbers[0])},
    }
    return by_name.get(name, {"numbers": numbers})


def shot_examples(names: Sequence[str], shots: int, *, seed: int) -> str:
    """`shots` example calls per tool with random arguments and their real outputs (or errors)."""
    if shots <= 0:
        return ""
    rng = random.Random(seed)
    box = ToolBox([_EXAMPLE_TABLE], tools=names)
    lines = ["Examples of tool calls on an unrelated example table (inputs and outputs):"]
    for name in names:
        for _ in range(shots):
            arguments = _random_arguments(name, rng)
            outcome = box.execute(name, arguments)
            lines.append(f"{name}({json.dumps(arguments)}) -> {outcome.message()}")
    return "\n".join(lines)


def _protocol_text(box: ToolBox) -> str:
    described = "\n".join(
        f"- {schema['function']['name']}: {schema['function'].get('description', '')} "
        f"arguments: {json.dumps(schema['function'].get('parameters', {}).get('properties', {}))}"
        for schema in box.schemas()
    )
    return (
        'Reply with exactly one JSON object per turn: {"tool": "<tool name>", "arguments": {...}}. '
        "You will get the tool's result back. Tools:\n" + described
    )


def _answer_from(output: MethodOutput, value: Any) -> None:
    output.take(extract_answer(value, method="tool") if isinstance(value, str) else extract_program_answer(value))
    output.rule = "final_answer"


def _trace(output: MethodOutput, turn: int, name: str, arguments: Any, outcome: Any = None, error: str = "") -> None:
    output.tool_trace.append(
        {
            "turn": turn,
            "name": name,
            "arguments": arguments,
            "result": outcome.result if outcome is not None and outcome.ok else None,
            "error": outcome.error if outcome is not None and not outcome.ok else error or None,
            "is_error": bool(error) or (outcome is not None and not outcome.ok),
        }
    )


def run_tool_loop(
    *, question: str, paragraphs: str, tables: list[Mapping[str, Any]], chat: Chat, settings: MethodSettings
) -> MethodOutput:
    """Hold the model in a loop of tool calls until `final_answer` or `settings.max_turns` turns."""
    output = MethodOutput()
    names = tool_names(settings.tools)
    box = ToolBox(tables, tools=names)
    system = render(settings.templates["tool_system"], Paragraph=paragraphs, Question=question)
    examples = shot_examples(names, settings.few_shot, seed=settings.seed)
    native = settings.supports_tools
    if settings.tools == "data":
        system = f"{system}\n\n{DATA_TOOLS_NOTE}"
    if not native:
        system = f"{system}\n\n{_protocol_text(box)}"
    if examples:
        system = f"{system}\n\n{examples}"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": render(settings.templates["tool_user"], Question=question)},
    ]
    use_schema = settings.json_schema and not native
    action_schema = {
        "type": "object",
        "properties": {"tool": {"type": "string", "enum": list(names)}, "arguments": {"type": "object"}},
        "required": ["tool", "arguments"],
    }
    output.stages = {"protocol": "native" if native else "json", "json_schema": use_schema, "tools": list(names)}
    for turn in range(1, settings.max_turns + 1):
        output.messages = list(messages)
        if native:
            result = chat(messages, tools=box.schemas(), tool_choice="auto")
        else:
            try:
                result = chat(
                    messages,
                    response_format=json_schema_format("tool_action", action_schema) if use_schema else None,
                )
            except EndpointBadRequest:
                if not use_schema:
                    raise
                # The server does not take JSON-schema constraints: go on with the plain protocol.
                use_schema = False
                output.stages["json_schema"] = False
                result = chat(messages)
        output.record(result)
        output.raw_output = result.text or ""
        if native and not result.tool_calls:
            _answer_from(output, output.raw_output)
            output.rule = "text_without_tool_call"
            return output
        if native:
            calls = [(call.name, call.arguments_raw, call.id) for call in result.tool_calls]
            requested = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for n, a, i in calls]
            messages.append({"role": "assistant", "content": result.text or None, "tool_calls": requested})
        else:
            messages.append({"role": "assistant", "content": output.raw_output})
            try:
                action = json.loads(output.raw_output)
                if not isinstance(action, dict) or not isinstance(action.get("tool"), str):
                    raise ValueError('expected {"tool": "<name>", "arguments": {...}}')
            except ValueError as error:
                message = f"your reply is not a JSON action ({error}); reply with one JSON object"
                _trace(output, turn, "(invalid action)", output.raw_output[:500], error=message)
                messages.append({"role": "user", "content": f"Error: {message}"})
                continue
            arguments = action.get("arguments") if isinstance(action.get("arguments"), dict) else {}
            calls = [(action["tool"], arguments, None)]
        is_answered = False
        for name, arguments, call_id in calls:
            outcome = box.execute(name, arguments)
            _trace(output, turn, name, outcome.arguments, outcome)
            if native:
                messages.append({"role": "tool", "tool_call_id": call_id, "content": outcome.message()})
            else:
                messages.append({"role": "user", "content": f"Result of {name}: {outcome.message()}"})
            if name == "final_answer" and outcome.ok:
                _answer_from(output, outcome.result)
                is_answered = True
        if is_answered:
            return output
    output.rule = "turn_limit"
    return output
