"""Prompting methods (Direct QA, CoT, PoT, CaR, TAT-LLM step-wise, tool loop): pure prompt building and parsing.

`run_method` is the one entry point over every method: it picks the prompting or tool-loop runner, so `base` stays
below both."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from scoring.methods import prompting, toolloop
from scoring.methods.base import METHODS, Chat, MethodOutput, MethodSettings, RunProgram, render_context, tool_tables
from scoring.methods.templates import render, templates_for, templates_hash

__all__ = ["METHODS", "MethodSettings", "run_method", "templates_for", "templates_hash"]


def run_method(
    method: str,
    *,
    question: str,
    context: Mapping[str, Any] | None,
    chat: Chat,
    run_program: RunProgram,
    settings: MethodSettings,
) -> MethodOutput:
    """Answer one question with `method`; endpoint errors propagate (the caller marks the prediction failed)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    tables, paragraphs = render_context(context)
    if method == "tool":
        return toolloop.run_tool_loop(
            question=question, paragraphs=paragraphs, tables=tool_tables(context), chat=chat, settings=settings
        )

    def prompt(stage: str, **tips: str) -> str:
        return render(settings.templates[stage], Table=tables, Paragraph=paragraphs, Question=question, **tips)

    handler = {
        "direct": functools.partial(prompting.run_answered, method="direct"),
        "cot": functools.partial(prompting.run_answered, method="cot"),
        "pot": functools.partial(prompting.run_programmed, method="pot"),
        "car": prompting.run_car,
        "calculator": functools.partial(prompting.run_programmed, method="calculator"),
        "reversing": prompting.run_reversing,
        "tatllm": prompting.run_tatllm,
    }[method]
    return handler(prompt=prompt, chat=chat, run_program=run_program, settings=settings)
