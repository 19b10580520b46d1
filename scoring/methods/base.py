"""One entry point for every method: build prompts from a frozen item and context, call the model, parse the answer.

The model and the sandbox are passed in as callables, so the methods stay plain functions testable without a server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from curation.table_shape import shape_from_frozen

METHODS = ("direct", "cot", "pot", "car", "calculator", "reversing", "tatllm", "tool")
# The methods whose model-written Python runs in the sandbox (the others never execute model output).
PROGRAM_METHODS = ("pot", "car", "calculator", "reversing")

Chat = Callable[..., Any]  # (messages, *, tools=None, tool_choice=None, response_format=None) -> ChatResult
RunProgram = Callable[[str], Any]  # (code) -> SandboxResult
# The tool loop's fewest turns: enough for discovery, a few reads, arithmetic and `final_answer`.
MIN_TURNS = 12


@dataclass(frozen=True)
class MethodSettings:
    """What a run fixes for every item: templates, few-shot count, tool options."""

    templates: Mapping[str, str]
    few_shot: int = 0
    tools: str = "all"  # all | data
    max_turns: int = MIN_TURNS  # a run derives its cap from its longest program (toolloop.turn_cap)
    supports_tools: bool = False
    json_schema: bool = True
    seed: int = 0
    extraction: str = "default"  # default | official (SciTaT's scripts; curation.toolkit.extraction)


@dataclass
class MethodOutput:
    """Everything one item's answering produced; `requests` holds one record per model call."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    raw_output: str = ""
    answer: list[str] = field(default_factory=list)
    scale: str = ""
    is_parsed: bool = False
    rule: str = ""
    program: str = ""
    program_result: dict[str, Any] | None = None
    stages: dict[str, Any] = field(default_factory=dict)
    tool_trace: list[dict[str, Any]] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    attempts: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    isolation: str = ""

    def record(self, result: Any) -> None:
        """Add one chat result's cost to the totals."""
        self.requests += 1
        self.tokens_in += int(result.tokens_in or 0)
        self.tokens_out += int(result.tokens_out or 0)
        self.latency_s += float(result.latency_s or 0.0)
        self.attempts.extend(attempt.as_dict() for attempt in result.attempts)

    def take(self, extracted: Any) -> MethodOutput:
        """Take an extraction's answer items, scale, parsed flag and rule (`curation.toolkit.extraction`)."""
        self.answer, self.scale = list(extracted.items), extracted.scale
        self.is_parsed, self.rule = extracted.is_parsed, extracted.rule
        return self


def render_context(context: Mapping[str, Any] | None) -> tuple[str, str]:
    """(tables text, paragraphs text) of a frozen context."""
    if not context:
        return "", ""
    tables = "\n\n".join(
        shape_from_frozen(table).prompt_text(position) for position, table in enumerate(context.get("tables") or [])
    )
    paragraphs = "\n\n".join(str(p.get("text", "")) for p in context.get("paragraphs") or [] if p.get("text"))
    return tables, paragraphs


def tool_tables(context: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Frozen tables in the shape the ToolBox reads ({label, caption, rows})."""
    tables = []
    for position, table in enumerate((context or {}).get("tables") or []):
        shape = shape_from_frozen(table)
        tables.append(shape.tool_input(shape.display_label(position), position))
    return tables
