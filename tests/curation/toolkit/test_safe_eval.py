"""The TAT-LLM equation evaluator: arithmetic only, people's notation, clear errors, hard limits."""

from __future__ import annotations

import pytest

from curation.toolkit.safe_eval import SafeEvalError, safe_eval


@pytest.mark.parametrize(
    ("equation", "expected"),
    [
        ("(5,240 - 4,857) / 4,857", 383 / 4857),
        ("12% * 500", 60.0),
        ("12.5 %", 0.125),
        ("-(3 + 4) * 2", -14.0),
        ("2 ** 10", 1024.0),
        ("2^10", 1024.0),
        ("3 × 4 ÷ 2", 6.0),
        ("10 − 4", 6.0),
        ("= 1 + 1", 2.0),
        ("$100 - 40$", 60.0),
        ("abs(-4)", 4.0),
        ("round(2 / 3, 2)", 0.67),
        ("min(4, 2, 9)", 2.0),
        ("max([4, 2, 9])", 9.0),
        ("sum(1, 2, 3)", 6.0),
        ("avg(1, 2, 3)", 2.0),
        ("mean([1, 2, 3, 4])", 2.5),
        ("AVERAGE(2, 4)", 3.0),
        ("1.5e3 / 3", 500.0),
    ],
)
def test_evaluates_arithmetic(equation, expected):
    assert safe_eval(equation) == pytest.approx(expected)


def test_parenthesised_negatives_are_an_option():
    assert safe_eval("(1,234) + 500") == pytest.approx(1734.0)
    assert safe_eval("(1,234) + 500", parenthesised_negatives=True) == pytest.approx(-734.0)
    assert safe_eval("(2 - 1) * 3", parenthesised_negatives=True) == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("equation", "message"),
    [
        ("1 / 0", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("__import__('os').system('x')", "unknown function"),
        ("open('/etc/passwd')", "unknown function"),
        ("x + 1", "unknown name 'x'"),
        ("(1).__class__", "unsupported syntax"),
        ("'a' * 3", "unsupported value"),
        ("[1, 2]", "list"),
        ("lambda: 1", "unsupported syntax"),
        ("2 * (3", "not a valid arithmetic expression"),
        ("", "empty"),
        ("10 ** 1000", "exponent"),
        ("9 ** 99 ** 99", "too large"),
        ("1e400", "too large"),
        ("9" * 1000, "too large"),
        ("-" * 1000 + "1", "more than"),
        ("1" + " + 1" * 600, "longer than"),
        ("(-8) ** 0.5", "fractional power"),
        ("min([])", "at least one"),
        ("round(1, 2, 3)", "wrong number of arguments"),
        ("5 // 2", "unsupported operator"),
        ("5 % 2", "not a valid"),
        ("abs(x=1)", "positional"),
    ],
)
def test_rejects_with_clear_error(equation, message):
    with pytest.raises(SafeEvalError, match=message):
        safe_eval(equation)


def test_never_calls_eval_or_exec(monkeypatch):
    import builtins

    def forbidden(*args, **kwargs):
        raise AssertionError("eval/exec must not be used")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    assert safe_eval("(1 + 2) * 3") == 9.0
