"""Prompting methods (Direct QA, CoT, PoT, CaR, TAT-LLM step-wise, tool loop): pure prompt building and parsing."""

from __future__ import annotations

from scoring.methods.base import METHODS, MethodOutput, MethodSettings
from scoring.methods.dispatch import run_method
from scoring.methods.templates import DEFAULT_TEMPLATES, STAGES_BY_METHOD, render, templates_for, templates_hash

__all__ = [
    "DEFAULT_TEMPLATES",
    "METHODS",
    "STAGES_BY_METHOD",
    "MethodOutput",
    "MethodSettings",
    "render",
    "run_method",
    "templates_for",
    "templates_hash",
]
