"""Template drafts check themselves against the frozen table, and the drafter's fixes: ratio direction, full-width
rows, citation keys, midway rounding, repeated whole-column questions, and a "%" only where the source gives one."""

from __future__ import annotations

import re

from curation.drafting.self_check import draft_problem
from curation.drafting.templates import draft_template_questions
from curation.toolkit.tools import ToolBox

PAPER = {
    "label": "tab:main",
    "name": "Table 2",
    "caption": "Accuracy (%) of retrieval-augmented models.",
    "header_rows": 2,
    "rows": [
        ["Zero-shot prompting", "Zero-shot prompting", "Zero-shot prompting", "Zero-shot prompting"],
        ["Model", "Dev", "Test", "Params (M)"],
        ["Seeker [jing2021seeking]", "0.57", "61.0", "110"],
        ["RAG [lewis2020rag]", "0.70", "64.2", "400"],
        ["Ours", "0.76", "66.9", "220"],
        ["FiD", "0.61", "62.5", "770"],
    ],
}


def _drafts(**options):
    rejected: list[dict] = []
    drafts = draft_template_questions([PAPER], seed=0, per_template=50, rejected=rejected, **options)
    return drafts, rejected


def test_every_kept_draft_passes_its_self_check_and_a_tampered_one_fails():
    drafts, _ = _drafts()
    assert drafts and all(draft_problem(draft, [PAPER]) is None for draft in drafts)
    ratio = next(d for d in drafts if d["template_id"] == "cell_ratio")
    assert "not what the program computes" in draft_problem({**ratio, "answer": ["1.23"]}, [PAPER])
    count = next(d for d in drafts if d["template_id"] == "count_beyond_row")
    assert "carries %" in draft_problem({**count, "answer": [count["answer"][0] + "%"]}, [PAPER])
    moved = {
        **PAPER,
        "rows": [*PAPER["rows"][:2], ["Seeker [jing2021seeking]", "0.99", "61.0", "110"], *PAPER["rows"][3:]],
    }
    reads_seeker = next(d for d in drafts if d["template_id"] == "cell_difference" and "Seeker" in d["question"])
    assert "frozen table" in draft_problem(reads_seeker, [moved])


def test_a_failing_draft_is_dropped_and_counted(monkeypatch):
    import curation.drafting.templates as templates

    monkeypatch.setattr(
        templates, "draft_problem", lambda draft, tables: "forced" if "Ours" in draft["question"] else None
    )
    drafts, rejected = _drafts()
    assert rejected and all(item["reason"] == "forced" for item in rejected)
    assert not any("Ours" in draft["question"] for draft in drafts)


def test_how_many_times_divides_the_first_named_row_by_the_second():
    drafts, _ = _drafts(template_ids=["cell_ratio"])
    values = {"Seeker": {"Dev": 0.57, "Test": 61.0}, "RAG": {"Dev": 0.70, "Test": 64.2}, "Ours": {"Dev": 0.76}}
    for draft in drafts:
        assert "How many times the" not in draft["question"]
        first, second = sorted(
            (name for name in ("Seeker", "RAG", "Ours", "FiD") if name in draft["question"]),
            key=draft["question"].index,
        )
        column = draft["slots"]["column"]
        if first in values and second in values and column in values[first] and column in values[second]:
            assert abs(float(draft["answer"][0]) - values[first][column] / values[second][column]) < 0.006


def test_a_full_width_row_names_no_column_and_citation_keys_stay_out_of_names():
    assert ToolBox([PAPER]).tables[0].columns == ["Model", "Dev", "Test", "Params (M)"]
    drafts, _ = _drafts()
    for draft in drafts:
        text = " ".join([draft["question"], draft["rationale"], *draft["answer"]])
        assert "Zero-shot" not in draft["question"]
        assert not re.search(r"\[\w*\d{4}\w*\]", text), text


def test_a_rationale_never_rounds_midway():
    years = {
        "label": "tab:y",
        "rows": [["Model", "2019", "2020"], ["A", "0.57", "0.79"], ["B", "3", "7"], ["C", "19", "7"]],
    }
    drafts = draft_template_questions([years], per_template=9, template_ids=["percentage_change"])
    steps = [
        step for d in drafts for step in re.findall(r"(-?\d+(?:\.\d+)?) times 100 is (-?\d+(?:\.\d+)?)", d["rationale"])
    ]
    assert steps
    for factor, product in steps:
        assert abs(float(factor) * 100 - float(product)) < 0.01, steps


def test_a_context_asks_each_question_and_each_whole_column_computation_once():
    drafts, _ = _drafts()
    questions = [re.sub(r"\W+", " ", d["question"].lower()) for d in drafts]
    assert len(questions) == len(set(questions))
    whole = [
        (d["template_id"], d["slots"]["column"]) for d in drafts if d["template_id"] in ("column_mean", "column_sum")
    ]
    assert len(whole) == len(set(whole))


def test_the_captions_percent_is_copied_to_no_answer():
    drafts, _ = _drafts()
    for draft in drafts:
        if draft["template_id"] not in ("percentage_change", "proportion_of_total"):
            assert not any(item.endswith("%") for item in draft["answer"]), draft


def test_a_row_named_by_a_percentage_is_an_answer_the_program_reads_not_a_percentage_it_must_compute():
    """An ablation's rows are sparsities ("50%", "90%"): "which sparsity gives the highest LAS?" answers with a row's
    name, read as it is written; its "%" is the name's, so the draft is kept (it was dropped with every other one)."""
    ablation = {
        "label": "tab:ablation",
        "name": "Table 3",
        "caption": "LAS by sparsity.",
        "header_rows": 1,
        "rows": [["Sparsity", "LAS", "Params"], ["50%", "71.2", "12"], ["75%", "70.4", "9"], ["90%", "72.9", "4"]],
    }
    rejected: list[dict] = []
    drafts = draft_template_questions([ablation], seed=0, per_template=50, rejected=rejected)
    by_name = [d for d in drafts if d["answer"] and set(d["answer"]) <= {"50%", "75%", "90%"}]
    assert by_name and all(draft_problem(d, [ablation]) is None for d in by_name)
    assert not [r for r in rejected if "carries %" in str(r.get("reason", ""))]
    highest = next(d for d in by_name if d["template_id"] == "extreme_row" and "LAS" in d["question"])
    assert highest["answer"] in (["90%"], ["75%"])  # the highest LAS (72.9), or the lowest (70.4) as phrased


def test_a_computed_answer_is_rounded_half_up_as_a_person_rounds_and_passes_its_self_check():
    """77.675 is 77.68 (the float nearest it lies just below, and float rounding gave 77.67 where 68.825 gave
    68.83): every half goes up, and the self-check takes the rounded answer as what the program computes."""
    from curation.drafting.templates import _fmt

    assert [_fmt(77.675), _fmt(68.825), _fmt((77.65 + 77.70) / 2), _fmt(-2.345)] == ["77.68", "68.83", "77.68", "-2.35"]
    assert [_fmt(3.5, 2), _fmt(0.0065), _fmt(12.344)] == ["3.5", "0.0065", "12.34"]
    rows = [["A", "0.57", "77.60", "110"], ["B", "0.70", "77.65", "400"], ["C", "0.76", "77.70", "220"]]
    halves = {**PAPER, "rows": [*PAPER["rows"][:2], *rows, ["D", "0.61", "77.75", "770"]]}  # mean of Test: 77.675
    rejected: list[dict] = []
    drafts = draft_template_questions([halves], seed=0, per_template=50, rejected=rejected)
    mean = next(d for d in drafts if d["template_id"] == "column_mean" and "Test" in d["question"])
    assert mean["answer"] == ["77.68"] and draft_problem(mean, [halves]) is None


def test_no_ratio_is_asked_of_two_equal_cells():
    """ "What is the ratio of the Test of A to that of B?" answered 1.00 asks nothing a reader must compute."""
    tied = {**PAPER, "rows": [*PAPER["rows"][:4], ["Ours", "0.76", "64.2", "220"], *PAPER["rows"][5:]]}
    drafts = draft_template_questions([tied], seed=0, per_template=50, template_ids=["cell_ratio"])
    asked = [
        (d["slots"]["row_a"].split(" [")[0], d["slots"]["row_b"].split(" [")[0], d["slots"]["column"]) for d in drafts
    ]
    assert ("Ours", "FiD", "Test") in asked  # the other pairs of the column are still asked
    assert not {("RAG", "Ours", "Test"), ("Ours", "RAG", "Test")} & set(asked)
    assert all(d["answer"] != ["1.00"] for d in drafts)
