"""The reason shown beside each exam mistake names what differs: items, numbers, scale/percent, words."""

from __future__ import annotations

import pytest

from annotate.qualification.feedback import explain_mismatch


@pytest.mark.parametrize(
    ("mine", "gold", "expected"),
    [
        ([], ["x"], "No answer was given."),
        (["12.50"], ["12.5"], ""),
        (["12.4"], ["12.5"], "Number differs: you wrote “12.4”, the gold answer is “12.5”"),
        (["12.3"], ["12.3%"], "Scale or percent differs"),
        (["5 million"], ["5"], "the scale word “million”"),
        (["73.9%"], ["73.915"], "Scale or percent differs"),  # the same figure, rounded: only the scale is wrong
        (["7%"], ["5"], "Value differs: you wrote “7%”, the gold answer is “5”"),
        (["7 thousand"], ["5 million"], "Value differs"),
        (["0.123"], ["12.3"], "Off by a factor of 100"),
        (["-3"], ["3"], "Sign differs"),
        (["12.35"], ["12.3"], "Rounded differently"),
        (["BERT"], ["12"], "The gold answer is a number"),
        (["RoBERTa large"], ["RoBERTa base"], "missing 'base'; extra 'large'"),
        (["large RoBERTa"], ["RoBERTa large"], "Same words in a different order"),
        (["A"], ["A", "B"], "You gave 1 item; the gold answer has 2"),
        (["A", "B", "C"], ["A"], "Not in the gold answer: “B”, “C”"),
    ],
)
def test_reason_names_the_difference(mine, gold, expected):
    reason = explain_mismatch(mine, gold)
    if expected:
        assert expected in reason
    else:
        assert reason == ""
