"""Evaluate arithmetic equations written by models (TAT-LLM's executor) by walking the AST — never exec/eval."""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Sequence

MAX_LENGTH = 2000
MAX_NODES = 400
MAX_EXPONENT = 100
MAX_MAGNITUDE = 1e100


class SafeEvalError(ValueError):
    """The equation is malformed, uses something other than arithmetic, or exceeds a limit."""


def _numbers(values: Sequence[object], name: str) -> list[float]:
    flat: list[float] = []
    for value in values:
        if isinstance(value, list | tuple):
            flat.extend(_numbers(value, name))
        else:
            flat.append(value)  # type: ignore[arg-type]
    if not flat:
        raise SafeEvalError(f"{name}() needs at least one number")
    return flat


def _round(value: float, digits: float = 0) -> float:
    if digits != int(digits) or not 0 <= digits <= 15:
        raise SafeEvalError("round() takes a whole number of digits between 0 and 15")
    return round(value, int(digits))


def _mean(*values: object) -> float:
    numbers = _numbers(values, "mean")
    return math.fsum(numbers) / len(numbers)


FUNCTIONS: dict[str, Callable[..., float]] = {
    "abs": abs,
    "round": _round,
    "min": lambda *values: min(_numbers(values, "min")),
    "max": lambda *values: max(_numbers(values, "max")),
    "sum": lambda *values: math.fsum(_numbers(values, "sum")),
    "avg": _mean,
    "mean": _mean,
    "average": _mean,
}

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}

_PERCENT = re.compile(r"(\d(?:[\d.]*\d)?|\d)\s*%")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_PAREN_NEGATIVE = re.compile(r"(?<![\w)])\(\s*(\d[\d.]*)\s*\)")


def normalise_equation(text: str, *, parenthesised_negatives: bool = False) -> str:
    """Rewrite people's arithmetic notation (1,234 · 12% · × ÷ − ^) into Python expression syntax."""
    expression = text.strip()
    if expression.startswith("="):
        expression = expression[1:].strip()
    expression = expression.replace("$", "").replace("\\%", "%")
    expression = expression.translate(str.maketrans({"×": "*", "·": "*", "÷": "/", "−": "-", "–": "-", "—": "-"}))
    expression = expression.replace("\\times", "*").replace("\\cdot", "*").replace("\\div", "/")
    expression = expression.replace("^", "**")
    expression = _THOUSANDS.sub("", expression)
    if parenthesised_negatives:
        # Financial tables write negatives as (1,234); only a bare number in parentheses is rewritten.
        expression = _PAREN_NEGATIVE.sub(r"(-\1)", expression)
    expression = _PERCENT.sub(r"(\1/100)", expression)
    return expression


def safe_eval(equation: str, *, parenthesised_negatives: bool = False) -> float:
    """Evaluate an arithmetic equation to a float; raise SafeEvalError with a readable reason otherwise."""
    if not isinstance(equation, str):
        raise SafeEvalError("the equation must be text")
    if len(equation) > MAX_LENGTH:
        raise SafeEvalError(f"the equation is longer than {MAX_LENGTH} characters")
    expression = normalise_equation(equation, parenthesised_negatives=parenthesised_negatives)
    if not expression.strip():
        raise SafeEvalError("the equation is empty")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as error:
        raise SafeEvalError(f"not a valid arithmetic expression: {error.msg}") from None
    except (RecursionError, MemoryError):
        raise SafeEvalError("the equation is nested too deeply") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise SafeEvalError(f"the equation has more than {MAX_NODES} parts")
    result = _Evaluator().visit(tree.body)
    if isinstance(result, list):
        raise SafeEvalError("the equation evaluates to a list, not a number")
    return float(result)


class _Evaluator:
    def visit(self, node: ast.AST) -> float | list[float]:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                raise SafeEvalError(f"unsupported value {node.value!r}")
            try:
                return self._checked(float(node.value))
            except OverflowError:
                raise SafeEvalError("a number in the equation is too large") from None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            operand = self._number(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.List | ast.Tuple):
            return [self._number(item) for item in node.elts]
        if isinstance(node, ast.Name):
            raise SafeEvalError(f"unknown name {node.id!r}: only numbers and {', '.join(FUNCTIONS)} are allowed")
        raise SafeEvalError(f"unsupported syntax: {type(node).__name__}")

    def _number(self, node: ast.AST) -> float:
        value = self.visit(node)
        if isinstance(value, list):
            raise SafeEvalError("a list can only be passed to a function such as sum() or mean()")
        return value

    def _binary(self, node: ast.BinOp) -> float:
        left, right = self._number(node.left), self._number(node.right)
        if isinstance(node.op, ast.Pow):
            if abs(right) > MAX_EXPONENT:
                raise SafeEvalError(f"exponent {right:g} is larger than the limit {MAX_EXPONENT:g}")
            if left < 0 and right != int(right):
                raise SafeEvalError("a negative number cannot be raised to a fractional power")
            if left == 0 and right < 0:
                raise SafeEvalError("division by zero")
            try:
                return self._checked(math.pow(left, right))
            except OverflowError:
                raise SafeEvalError("the result is too large") from None
        function = _BINARY.get(type(node.op))
        if function is None:
            raise SafeEvalError(f"unsupported operator: {type(node.op).__name__}")
        if isinstance(node.op, ast.Div) and right == 0:
            raise SafeEvalError("division by zero")
        return self._checked(function(left, right))

    def _call(self, node: ast.Call) -> float:
        if not isinstance(node.func, ast.Name) or node.func.id.lower() not in FUNCTIONS:
            raise SafeEvalError(f"unknown function {ast.unparse(node.func)!r}: allowed are {', '.join(FUNCTIONS)}")
        if node.keywords:
            raise SafeEvalError("functions take positional arguments only")
        arguments = [self.visit(argument) for argument in node.args]
        if not arguments:
            raise SafeEvalError(f"{node.func.id}() needs at least one argument")
        name = node.func.id.lower()
        if name in ("abs", "round") and any(isinstance(argument, list) for argument in arguments):
            raise SafeEvalError(f"{name}() takes numbers, not a list")
        try:
            return self._checked(float(FUNCTIONS[name](*arguments)))
        except TypeError:
            raise SafeEvalError(f"wrong number of arguments for {name}()") from None

    @staticmethod
    def _checked(value: float) -> float:
        if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
            raise SafeEvalError("the result is too large")
        return value
