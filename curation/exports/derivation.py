"""An arithmetic item's derivation as TAT-QA writes it (`(3.6-2.9)/2.9`), and its program as FinQA writes it
(`subtract(3.6, 2.9), divide(#0, 2.9)`), from what the item holds (pure).

The item's own derivation wins; else its FinQA-style program; else the arithmetic steps of its essential actions
(the template drafter's executed tool program). Anything that is not plain arithmetic (a max, a ranking, a table
aggregate) gives no derivation rather than a wrong one. An item's own program wins likewise; else its derivation's
steps, kept only when they execute to its answer.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from curation.toolkit.numbers import clean_cell, parse_number

_ATOM, _PRODUCT, _SUM = 3, 2, 1
_FINQA_STEP = re.compile(r"\s*(\w+)\s*\(([^()]*)\)\s*(?:,|$)")
_FINQA_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
# The operations FinQA's evaluate.py computes without the table (its `exp` a power, `greater` a "yes" or "no"); its
# scorer (scoring.metrics.finqa) reads them here.
FINQA_COMPUTED: dict[str, Callable[[float, float], float | str]] = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
    "exp": operator.pow,
    "greater": lambda left, right: "yes" if left > right else "no",
}
_NUMBER_TEXT = re.compile(r"[^\d.,\-−]")
_TOKEN = re.compile(r"\s*(?:(\d[\d,]*(?:\.\d+)?|\.\d+)|([-+*/()]))")
_OPERATIONS = {symbol: name for name, symbol in _FINQA_OPERATORS.items()}


@dataclass(frozen=True)
class _Expression:
    text: str
    precedence: int


def _atom(text: str) -> _Expression:
    return _Expression(text, _ATOM)


def _binary(left: _Expression, operator: str, right: _Expression) -> _Expression:
    precedence = _SUM if operator in "+-" else _PRODUCT
    left_text = f"({left.text})" if left.precedence < precedence else left.text
    # `a-(b-c)` and `a/(b*c)` need their brackets; `a+(b+c)` reads the same without.
    needs = right.precedence < precedence or (right.precedence == precedence and operator in "-/")
    right_text = f"({right.text})" if needs else right.text
    return _Expression(f"{left_text}{operator}{right_text}", precedence)


def _written(value: Any) -> str:
    """A number as the table wrote it, without its unit marks (`$1,200` → 1,200, `12.5%` → 12.5)."""
    if isinstance(value, bool):
        raise ValueError("not a number")
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    # A measurement with its spread ("90.34 ± 0.02") is its value.
    text = _NUMBER_TEXT.sub("", clean_cell(str(value)).split("±")[0]).replace("−", "-")
    if not text or parse_number(text) is None:
        raise ValueError(f"not a number: {value!r}")
    return text


def _finqa_steps(program: str) -> list[tuple[str, list[str]]] | None:
    """A FinQA program's steps as (operation, its two arguments); None when it is not a list of such steps."""
    steps: list[tuple[str, list[str]]] = []
    position = 0
    text = (program or "").strip()
    while position < len(text):
        match = _FINQA_STEP.match(text, position)
        if match is None:
            return None
        arguments = [argument.strip() for argument in match.group(2).split(",")]
        if len(arguments) != 2:
            return None
        steps.append((match.group(1), arguments))
        position = match.end()
    return steps


def from_program(program: str, *, is_percentage: bool = False) -> str:
    """A FinQA program of add/subtract/multiply/divide steps (`#n` = step n, `const_100` = 100) as one expression. A
    percentage's closing times 100 is left out, as TAT-QA's derivations do (the scale says it)."""
    parsed = _finqa_steps(program) or []
    # The closing step: the step before it, times 100.
    closing = ("multiply", {f"#{len(parsed) - 2}", "const_100"})
    if is_percentage and len(parsed) > 1 and (parsed[-1][0], set(parsed[-1][1])) == closing:
        parsed = parsed[:-1]
    steps: list[_Expression] = []
    for operation, arguments in parsed:
        if operation not in _FINQA_OPERATORS:
            return ""
        operands = []
        for argument in arguments:
            if argument.startswith("#") and argument[1:].isdigit() and int(argument[1:]) < len(steps):
                operands.append(steps[int(argument[1:])])
            elif argument.startswith("const_"):
                operands.append(_atom(argument[len("const_") :].replace("m", "-", 1)))
            else:
                try:
                    operands.append(_atom(_written(argument)))
                except ValueError:
                    return ""
        steps.append(_binary(operands[0], _FINQA_OPERATORS[operation], operands[1]))
    return steps[-1].text if steps else ""


def _finqa_number(argument: str) -> float | None:
    """An argument as FinQA's evaluate.py reads it (`str_to_num`): commas dropped, `12%` is 0.12, `const_m1` is -1."""
    text = argument.replace(",", "")
    if text.startswith("const_"):
        text = text[len("const_") :].replace("m1", "-1")
    elif text.endswith("%"):
        number = _finqa_number(text[:-1])
        return None if number is None else number / 100
    try:
        return float(text)
    except ValueError:
        return None


def executed_answer(program: str) -> float | str | None:
    """What FinQA's evaluate.py executes a program of arithmetic steps to, rounded to 5 decimals as it compares it
    with `exe_ans` ("yes"/"no" for `greater`); None for a program it would not run, or that needs the table."""
    results: list[float | str] = []
    for operation, arguments in _finqa_steps(program) or []:
        if operation not in FINQA_COMPUTED:
            return None
        values = []
        for argument in arguments:
            if argument.startswith("#") and argument[1:].isdigit() and int(argument[1:]) < len(results):
                values.append(results[int(argument[1:])])
            else:
                values.append(_finqa_number(argument))
        if not all(isinstance(value, float) for value in values):
            return None
        try:
            results.append(FINQA_COMPUTED[operation](*values))
        except (ArithmeticError, ValueError):
            return None
    if not results:
        return None
    last = results[-1]
    return last if isinstance(last, str) else round(last, 5)


def _number_of(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return float(value) if isinstance(value, int | float) else parse_number(value)


def from_actions(actions: Sequence[Mapping[str, Any]], *, is_percentage: bool = False) -> str:
    """The arithmetic tool calls of an executed program as one expression. A number an earlier call returned is
    that call: a cell as the table wrote it (`1,200`), a step as its expression. A percentage's closing `*100` is
    left out, as TAT-QA's derivations do (the scale says it)."""
    by_value: dict[float, _Expression] = {}

    def operand(value: Any) -> _Expression:
        number = _number_of(value)
        if number is not None and number in by_value:
            return by_value[number]
        return _atom(_written(value))

    def remember(value: Any, expression: _Expression) -> None:
        number = _number_of(value)
        if number is not None:
            by_value[number] = expression

    last: _Expression | None = None
    last_action: Mapping[str, Any] | None = None
    for action in actions:
        tool = str(action.get("tool") or "")
        arguments = action.get("arguments") or {}
        result = action.get("result")
        try:
            if tool == "get_cell":
                remember(result, _atom(_written(result)))
                continue
            if tool in ("get_row", "get_column") and isinstance(result, Mapping):
                for cell in result.values():
                    if _number_of(cell) is not None:
                        remember(cell, _atom(_written(cell)))
                continue
            if tool in ("list_tables", "think", "final_answer") or tool.startswith("search_"):
                continue
            if tool in ("add", "sum", "multiply", "mean"):
                operands = [operand(value) for value in arguments.get("numbers") or []]
                if not operands:
                    return ""
                symbol = "*" if tool == "multiply" else "+"
                expression = functools.reduce(lambda left, right: _binary(left, symbol, right), operands)
                if tool == "mean":
                    expression = _binary(expression, "/", _atom(str(len(operands))))
            elif tool in ("subtract", "divide"):
                symbol = "-" if tool == "subtract" else "/"
                expression = _binary(operand(arguments["a"]), symbol, operand(arguments["b"]))
            elif tool == "proportion":
                expression = _binary(operand(arguments["part"]), "/", operand(arguments["total"]))
                if arguments.get("as_percentage"):
                    expression = _binary(expression, "*", _atom("100"))
            else:
                return ""  # a max, a rank, a count: not an arithmetic expression
        except (KeyError, TypeError, ValueError):
            return ""
        remember(result, expression)
        last, last_action = expression, action
    if last is None or last_action is None:
        return ""
    if is_percentage:
        numbers = list((last_action.get("arguments") or {}).get("numbers") or [])
        if last_action.get("tool") == "multiply" and len(numbers) == 2 and _number_of(numbers[1]) == 100:
            return operand(numbers[0]).text
        if last_action.get("tool") == "proportion" and (last_action.get("arguments") or {}).get("as_percentage"):
            arguments = last_action["arguments"]
            return _binary(operand(arguments["part"]), "/", operand(arguments["total"])).text
    return last.text


# A computation a rationale writes out, "14.0 - 9.8 = 4.2": numbers, + - * / × ÷ and brackets, then its result.
_NUMBER_WRITTEN = r"\d[\d,]*(?:\.\d+)?"
_WRITTEN = re.compile(
    rf"((?:[-(]\s*)*{_NUMBER_WRITTEN}(?:\s*[)]*\s*[-+*/×÷]\s*[(]*\s*{_NUMBER_WRITTEN})+[\s)]*)=\s*(-?{_NUMBER_WRITTEN})"
)


def from_rationale(rationale: str, answer: str, *, is_percentage: bool = False) -> str:
    """The last computation the rationale writes out whose result is the answer and which computes it (to the
    result's last decimal), as TAT-QA writes a derivation: no spaces, a percentage without its closing `*100`."""
    value = parse_number(answer)
    for match in reversed(list(_WRITTEN.finditer(rationale or ""))):
        expression = re.sub(r"\s", "", match.group(1)).replace("×", "*").replace("÷", "/")
        computed = _finqa_value(program_from(expression))
        if value is not None and parse_number(match.group(2)) == value and _rounds_to(computed, match.group(2)):
            return expression.removesuffix("*100") if is_percentage else expression
    return ""


def _finqa_value(program: str) -> float | None:
    """What a program of arithmetic steps executes to, as FinQA's evaluator runs it (5 decimals); None for no number."""
    executed = executed_answer(program)
    return executed if isinstance(executed, float) else None


def _rounds_to(value: float | None, written: str, *, slack: float = 0.0) -> bool:
    """Whether `value` is the number `written` to its last decimal (4.2 is 4.2449 and 4.15), `slack` more when `value`
    is itself rounded: the one check that a computation gives an answer as written."""
    number, text = parse_number(written), written.strip().removesuffix("%").strip()
    decimals = len(text.rsplit(".", 1)[1]) if "." in text else 0
    return value is not None and number is not None and abs(value - number) <= 0.5 * 10**-decimals + 1e-9 + slack


def _is_percentage(item: Mapping[str, Any]) -> bool:
    answer = [str(value).strip() for value in item.get("answer") or []]
    return item.get("scale") == "percent" or (len(answer) == 1 and answer[0].endswith("%"))


def derivation_of(item: Mapping[str, Any]) -> str:
    """What TAT-QA's `derivation` holds for a frozen item: the arithmetic expression of an arithmetic answer (its own,
    its program's, its executed steps', else the computation its rationale writes out)."""
    if item.get("derivation"):
        return str(item["derivation"])
    if item.get("answer_type") != "arithmetic":
        return ""
    answer = [str(value) for value in item.get("answer") or []]
    is_percentage = _is_percentage(item)
    return (
        from_program(str(item.get("program") or ""), is_percentage=is_percentage)
        or from_actions(item.get("essential_actions") or [], is_percentage=is_percentage)
        or (from_rationale(str(item.get("rationale") or ""), answer[0], is_percentage=is_percentage) if answer else "")
    )


def program_from(expression: str) -> str:
    """A derivation of numbers, + - * / and brackets as a FinQA program of two-argument steps, `#n` naming step n
    (`(3,600-2,900)/2,900` → `subtract(3600, 2900), divide(#0, 2900)`); "" for anything else, or a lone number."""
    tokens = [match.groups() for match in _TOKEN.finditer(expression)]
    if "".join(number or symbol for number, symbol in tokens) != re.sub(r"\s", "", expression):
        return ""
    steps: list[str] = []
    position = 0

    def peek() -> str | None:
        return tokens[position][1] if position < len(tokens) else None

    def operand() -> str:
        nonlocal position
        if position >= len(tokens):
            raise ValueError("an operand is missing")
        number, symbol = tokens[position]
        position += 1
        if number:
            return number.replace(",", "")
        if symbol == "-" and position < len(tokens) and tokens[position][0]:
            position += 1
            return "-" + tokens[position - 1][0].replace(",", "")
        if symbol == "(":
            inner = chain(term, "+-")
            if peek() != ")":
                raise ValueError("an unclosed bracket")
            position += 1
            return inner
        raise ValueError(f"{symbol} where an operand belongs")

    def term() -> str:
        return chain(operand, "*/")

    def chain(part, symbols: str) -> str:
        nonlocal position
        left = part()
        while (symbol := peek()) is not None and symbol in symbols:
            position += 1
            right = part()
            steps.append(f"{_OPERATIONS[symbol]}({left}, {right})")
            left = f"#{len(steps) - 1}"
        return left

    try:
        chain(term, "+-")
    except ValueError:
        return ""
    return ", ".join(steps) if position == len(tokens) else ""


def finqa_program_of(item: Mapping[str, Any]) -> str:
    """FinQA's program for a frozen item: its own, else its derivation's steps (`program_from`) when they execute to
    its one numeric answer, as written to its last decimal (a percentage's as the fraction FinQA executes to, or as
    written). Anything else has none: a program that computes something other than the answer is not written."""
    if (item.get("program") or "").strip():
        return str(item["program"])
    answer = [str(value) for value in item.get("answer") or []]
    if item.get("answer_type") != "arithmetic" or len(answer) != 1:
        return ""
    program = program_from(derivation_of(item))
    executed = _finqa_value(program)
    # The execution is rounded to 5 decimals, as FinQA's evaluator rounds it; a percentage's is times 100.
    if _rounds_to(executed, answer[0], slack=0.5e-5) or (
        _is_percentage(item) and executed is not None and _rounds_to(executed * 100, answer[0], slack=0.5e-3)
    ):
        return program
    return ""
