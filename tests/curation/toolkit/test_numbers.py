"""Numeric cell parsing: every way papers write a number, and what is not one."""

from __future__ import annotations

import pytest

from curation.toolkit.numbers import clean_cell, fixed, format_number, parse_number, parse_numeric


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("1,234", 1234.0),
        ("1,234,567.25", 1234567.25),
        ("1 234", 1234.0),
        ("12.5%", 12.5),
        ("12.3 \\%", 12.3),
        ("(1,234)", -1234.0),
        ("(12.5%)", -12.5),
        ("$(3.4)", -3.4),
        ("−3.2", -3.2),
        ("–3.2", -3.2),
        ("+4.2", 4.2),
        ("85.3 ± 0.4", 85.3),
        ("85.3±0.4", 85.3),
        ("$85.3 \\pm 0.4$", 85.3),
        ("85.3 +/- 0.4", 85.3),
        ("85.3 (0.4)", 85.3),
        ("12.3*", 12.3),
        ("12.3†", 12.3),
        ("12.3‡", 12.3),
        ("12.3¹", 12.3),
        ("12.3^a", 12.3),
        ("12.3$^{*}$", 12.3),
        ("12.3\\textsuperscript{b}", 12.3),
        ("**12.3**", 12.3),
        ("\\textbf{12.3}", 12.3),
        ("\\textbf{85.1}$^\\dagger$", 85.1),
        ("<b>12.3</b>", 12.3),
        ("\\underline{\\textbf{7.5}}", 7.5),
        ("$1,234", 1234.0),
        ("€ 5.2", 5.2),
        ("£3", 3.0),
        ("12.3 ms", 12.3),
        ("4.5M", 4.5),
        ("3 GB", 3.0),
        ("1.2x", 1.2),
        ("1.2e-3", 0.0012),
        ("2.5 × 10^{3}", 2500.0),
        ("2.5$\\times 10^{-3}$", 0.0025),
        (".5", 0.5),
        (7, 7.0),
    ],
)
def test_parses_numbers_as_written(cell, expected):
    assert parse_number(cell) == pytest.approx(expected)


@pytest.mark.parametrize(
    "cell",
    ["", "-", "—", "n/a", "N/A", "BERT-base", "ResNet50", "12/34", "3-5", "1,2", "v2", "abc 12", "7e400", None, True],
)
def test_non_numbers_give_none(cell):
    assert parse_number(cell) is None


def test_percent_and_unit_are_reported():
    assert parse_numeric("12.5%").is_percent
    assert parse_numeric("12.3 ± 0.4%").is_percent
    assert not parse_numeric("12.5").is_percent
    assert parse_numeric("$1,200").unit == "$"
    assert parse_numeric("125M").unit == "M"
    assert parse_numeric("12.3 ms").unit == "ms"


def test_clean_cell_strips_markup_but_keeps_text():
    assert clean_cell("\\textbf{BERT}$^\\dagger$") == "BERT"
    assert clean_cell("**RoBERTa**  large") == "RoBERTa large"


@pytest.mark.parametrize(
    ("value", "text"), [(3.5, "3.5"), (4.0, "4"), (2 / 3, "0.67"), (-0.001, "0"), (1234.5, "1234.5")]
)
def test_format_number(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize(
    ("value", "digits", "scale", "text"),
    [
        (63.45, 1, 1, "63.5"),
        (40.15, 1, 1, "40.2"),
        (0.6345, 1, 100, "63.5"),  # 100 × 0.6345 is 63.449999… as a float
        (0.4015, 1, 100, "40.2"),
        (0.125, 2, 1, "0.13"),
        (-0.04, 1, 1, "0.0"),
        (None, 1, 1, "—"),
        (float("nan"), 1, 1, "—"),
    ],
)
def test_fixed_rounds_half_up_on_the_decimal_value(value, digits, scale, text):
    assert fixed(value, digits, scale=scale) == text
