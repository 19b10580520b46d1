"""Direct QA, CoT, PoT, CaR (Calculator → tips → Reasoner), its ablations (Calculator only; Reversing: Reasoner →
tips → Calculator) and TAT-LLM's step table with a safe equation executor."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from curation.toolkit.extraction import (
    extract_answer,
    extract_answer_official,
    extract_program_answer,
    extract_program_answer_official,
    normalize_scale,
    parse_tatllm_steps,
)
from curation.toolkit.numbers import format_number
from curation.toolkit.safe_eval import SafeEvalError, safe_eval
from scoring.methods.base import Chat, MethodOutput, MethodSettings, RunProgram

_FENCE = re.compile(r"```(?:python|py|Python)?\s*\n(.*?)(?:```|$)", re.DOTALL)
_ARITHMETIC_TYPES = ("arithmetic", "count")
Prompt = Callable[..., str]  # (stage, **tips) -> the stage's template filled with the item's table, text and question


def _ask(chat: Chat, output: MethodOutput, prompt: str) -> str:
    output.messages = [{"role": "user", "content": prompt}]
    result = chat(output.messages)
    output.record(result)
    return result.text or ""


def _apply(output: MethodOutput, text: str, method: str, settings: MethodSettings) -> MethodOutput:
    reader = extract_answer_official if settings.extraction == "official" else extract_answer
    return output.take(reader(text, method=method))


def _apply_program(output: MethodOutput, result: Any, settings: MethodSettings) -> MethodOutput:
    """The answer a program's value gives; a failed program's rule says so (SciTaT's scripts still read its value)."""
    if settings.extraction == "official":
        output.take(extract_program_answer_official(result.value, is_ok=result.ok))
    elif result.ok:
        output.take(extract_program_answer(result.value))
    if not result.ok:
        output.rule = "program_failed"
    return output


def run_answered(*, method: str, prompt: Prompt, chat: Chat, settings: MethodSettings, **_: Any) -> MethodOutput:
    """One prompt, its output read as `method` reads it: Direct QA (the whole output is the answer, after `The answer
    is`-style markers are stripped) or Chain-of-Thought (`Reason: … Answer: …`)."""
    output = MethodOutput()
    output.raw_output = _ask(chat, output, prompt(method))
    return _apply(output, output.raw_output, method, settings)


def extract_code(text: str) -> str:
    """The Python program in a model's output: fenced blocks joined, else the text with prose lines before code cut."""
    blocks = [block.strip() for block in _FENCE.findall(text or "") if block.strip()]
    if blocks:
        return "\n\n".join(blocks)
    lines = (text or "").strip().splitlines()
    for index, line in enumerate(lines):
        if re.match(r"^\s*(?:[A-Za-z_]\w*\s*=|def |import |from |for |if |ans\b|#)", line):
            return "\n".join(lines[index:]).strip()
    return (text or "").strip()


def _execute(output: MethodOutput, code: str, run_program: RunProgram) -> Any:
    result = run_program(code)
    output.program = code
    output.program_result = asdict(result)
    output.isolation = result.isolation
    return result


def run_programmed(
    *, method: str, prompt: Prompt, chat: Chat, run_program: RunProgram, settings: MethodSettings
) -> MethodOutput:
    """One program is the answer: Program-of-Thought (`pot`: the model writes Python setting `ans`) or CaR's
    Calculator alone (`calculator`: the program's output, a complete sentence); the sandbox runs it."""
    output = MethodOutput()
    text = prompt(method)
    output.raw_output = _ask(chat, output, text)
    result = _execute(output, extract_code(output.raw_output), run_program)
    if method == "calculator":
        output.stages = {"calculator": {"prompt": text, "output": output.raw_output, "error": result.error}}
    return _apply_program(output, result, settings)


def run_car(*, prompt: Prompt, chat: Chat, run_program: RunProgram, settings: MethodSettings) -> MethodOutput:
    """CaR: the Calculator's program output sentence becomes the Reasoner's tips; both stages are kept."""
    output = MethodOutput()
    calculator_prompt = prompt("calculator")
    calculator_text = _ask(chat, output, calculator_prompt)
    result = _execute(output, extract_code(calculator_text), run_program)
    if result.ok and result.value not in (None, ""):
        tips = result.value if isinstance(result.value, str) else str(result.value)
    else:
        tips = "The calculator found no numerical information."
    reasoner_prompt = prompt("reasoner", Tips=tips)
    output.stages = {
        "calculator": {"prompt": calculator_prompt, "output": calculator_text, "error": result.error, "tips": tips},
    }
    output.raw_output = _ask(chat, output, reasoner_prompt)
    output.stages["reasoner"] = {"prompt": reasoner_prompt, "output": output.raw_output}
    return _apply(output, output.raw_output, "car", settings)


def run_reversing(*, prompt: Prompt, chat: Chat, run_program: RunProgram, settings: MethodSettings) -> MethodOutput:
    """CaR ablation, Reversing: the Reasoner (CoT) answers first; its output is the Calculator's tips, and the
    Calculator's program, which verifies and corrects the numbers, gives the final answer."""
    output = MethodOutput()
    reasoner_prompt = prompt("cot")
    reasoner_text = _ask(chat, output, reasoner_prompt)
    tips = reasoner_text.strip() or "The reasoner gave no answer."
    calculator_prompt = prompt("calculator_check", Tips=tips)
    output.stages = {"reasoner": {"prompt": reasoner_prompt, "output": reasoner_text, "tips": tips}}
    output.raw_output = _ask(chat, output, calculator_prompt)
    result = _execute(output, extract_code(output.raw_output), run_program)
    output.stages["calculator"] = {"prompt": calculator_prompt, "output": output.raw_output, "error": result.error}
    return _apply_program(output, result, settings)


def run_tatllm(*, prompt: Prompt, chat: Chat, settings: MethodSettings, **_: Any) -> MethodOutput:
    """TAT-LLM's pipeline: the model fills a step table; an arithmetic equation is evaluated safely (never exec)."""
    output = MethodOutput()
    output.raw_output = _ask(chat, output, prompt("tatllm"))
    _apply(output, output.raw_output, "tatllm", settings)
    steps = parse_tatllm_steps(output.raw_output)
    executed: dict[str, Any] = {"equation": steps.equation, "value": None, "error": ""}
    answer_type = steps.answer_type.strip().lower()
    if steps.equation and (answer_type in _ARITHMETIC_TYPES or not output.answer):
        try:
            value = safe_eval(steps.equation, parenthesised_negatives=True)
        except SafeEvalError as error:
            executed["error"] = str(error)
        else:
            executed["value"] = value
            output.answer, output.is_parsed, output.rule = [format_number(value)], True, "tatllm_equation"
    if output.answer and not output.scale and steps.scale:
        output.scale = normalize_scale(steps.scale)
    output.stages = {
        "steps": {name: value for name, value in asdict(steps).items() if name != "rows"},
        "executor": executed,
    }
    return output
