"""The agreement metrics against published worked examples (pure; no database)."""

from __future__ import annotations

import pytest

from annotate.agreement.metrics import answer_em_f1, cohen_kappa, jaccard, krippendorff_alpha_nominal


def _table(yes_yes: int, yes_no: int, no_yes: int, no_no: int) -> list[tuple[str, str]]:
    return [("y", "y")] * yes_yes + [("y", "n")] * yes_no + [("n", "y")] * no_yes + [("n", "n")] * no_no


@pytest.mark.parametrize(
    ("counts", "kappa"),
    [
        # Wikipedia, "Cohen's kappa", worked example: po = 0.7, pe = 0.5.
        ((20, 5, 10, 15), 0.4),
        # Wikipedia's two tables with the same agreement and different κ.
        ((45, 15, 25, 15), 0.1304),
        ((25, 35, 5, 35), 0.2593),
    ],
)
def test_cohen_kappa_matches_the_published_examples(counts, kappa):
    assert cohen_kappa(_table(*counts)) == pytest.approx(kappa, abs=1e-4)


def test_cohen_kappa_is_one_for_full_agreement_and_undefined_without_variation():
    assert cohen_kappa([("a", "a"), ("b", "b"), ("c", "c")]) == pytest.approx(1.0)
    assert cohen_kappa([("a", "a"), ("a", "a")]) is None
    assert cohen_kappa([]) is None
    assert cohen_kappa([("a", "b"), ("b", "a")]) == pytest.approx(-1.0)


def test_krippendorff_alpha_matches_krippendorffs_worked_example():
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers, 12 units,
    nominal values with missing data: α = 0.743."""
    n = None
    observers = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
        [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
    ]
    units = list(zip(*observers, strict=True))
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=5e-4)


def test_krippendorff_alpha_of_two_raters_without_missing_data():
    """Krippendorff (2011), example A (binary, two observers, 10 units): α = 0.095."""
    first = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    second = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert krippendorff_alpha_nominal(list(zip(first, second, strict=True))) == pytest.approx(0.095, abs=5e-4)


def test_krippendorff_alpha_is_undefined_without_pairable_values_or_variation():
    assert krippendorff_alpha_nominal([("a", None), (None, "b")]) is None
    assert krippendorff_alpha_nominal([("a", "a"), ("a", "a")]) is None
    assert krippendorff_alpha_nominal([("a", "a"), ("b", "b")]) == pytest.approx(1.0)


def test_jaccard_of_table_sets():
    assert jaccard([1, 2], [2, 3]) == pytest.approx(1 / 3)
    assert jaccard([], []) == 1.0
    assert jaccard([1], []) == 0.0
    assert jaccard([4, 5], [5, 4]) == 1.0


@pytest.mark.parametrize(
    ("first", "second", "em", "f1"),
    [
        (["87.3"], ["87.30"], 1.0, 1.0),  # numbers compare as numbers (the TAT-QA rendering)
        (["1,234"], ["1234"], 1.0, 1.0),
        (["A", "B"], ["B", "A"], 1.0, 1.0),  # multi-span: order does not matter
        (["the cat sat"], ["cat sat down"], 0.0, 0.8),  # bags {cat, sat} vs {cat, sat, down}
        (["A"], ["B"], 0.0, 0.0),
        ([], [], 1.0, 1.0),  # both said it cannot be answered
        (["A"], [], 0.0, 0.0),
    ],
)
def test_answer_em_and_f1_use_the_tatqa_metric(first, second, em, f1):
    assert answer_em_f1(first, second) == (pytest.approx(em), pytest.approx(f1))
