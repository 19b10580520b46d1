"""TAT-QA's `derivation` of an arithmetic item, written from what the item holds (its program or executed steps), and
FinQA's program, written from that derivation when it computes the answer."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest

from curation.exports import write_export_zip
from curation.exports.derivation import (
    derivation_of,
    executed_answer,
    finqa_program_of,
    from_actions,
    from_program,
    from_rationale,
    program_from,
)
from curation.models import Instance
from curation.releases.services.cut import release_cut
from curation.toolkit.tools import Program, ToolBox

TABLE = {"label": "tab:rev", "caption": "Revenue", "rows": [["Segment", "2018", "2019"], ["Cloud", "2.9", "3.6"]]}
COSTS = {"label": "tab:cost", "caption": "Cost", "rows": [["System", "Cost ($)"], ["A", "$1,200"], ["B", "$900"]]}


def percentage_change_actions() -> list[dict]:
    """The template drafter's percentage-change program, executed: read two cells, subtract, divide, times 100."""
    program = Program(ToolBox([TABLE]))
    before = float(program.run("get_cell", table="tab:rev", row="Cloud", column="2018"))
    after = float(program.run("get_cell", table="tab:rev", row="Cloud", column="2019"))
    change = program.run("subtract", a=after, b=before)
    share = program.run("divide", a=change, b=before)
    program.run("multiply", numbers=[share, 100])
    return program.essential_actions()


def test_a_finqa_program_reads_as_one_bracketed_expression():
    assert from_program("subtract(3.6, 2.9), divide(#0, 2.9)") == "(3.6-2.9)/2.9"
    assert from_program("add(44.1, 56.7)") == "44.1+56.7"
    assert from_program("divide(100, const_4), subtract(#0, 5), subtract(10, #1)") == "10-(100/4-5)"
    assert from_program("table_max(revenue, none)") == ""  # not an arithmetic expression: none rather than wrong
    assert from_program("greater(3, 2)") == "" and from_program("") == ""
    times_100 = "subtract(3.6, 2.9), divide(#0, 2.9), multiply(#1, const_100)"
    assert from_program(times_100, is_percentage=True) == "(3.6-2.9)/2.9"  # the scale says percent, as in TAT-QA
    assert from_program(times_100) == "(3.6-2.9)/2.9*100"
    assert from_program("multiply(2.9, const_100)", is_percentage=True) == "2.9*100"  # no step before it to keep


def test_a_finqa_program_executes_as_finqas_evaluator_runs_it():
    assert executed_answer("subtract(3.6, 2.9), divide(#0, 2.9)") == 0.24138  # rounded to 5 decimals
    assert executed_answer("divide(1,200, const_m1)") is None  # `1,200` splits into three arguments there too
    assert executed_answer("divide(12%, const_m1), add(#0, 1)") == 0.88  # a percent argument is its fraction
    assert executed_answer("greater(3, 2)") == "yes" and executed_answer("exp(2, 3)") == 8.0
    assert executed_answer("table_max(revenue, none)") is None  # needs the table: the answer stands
    assert executed_answer("divide(1, 0)") is None and executed_answer("") is None


@pytest.mark.parametrize(
    ("expression", "program"),
    [
        ("(3,600-2,900)/2,900", "subtract(3600, 2900), divide(#0, 2900)"),
        ("(1+2+3)/3", "add(1, 2), add(#0, 3), divide(#1, 3)"),
        ("2*(3-1)/4", "subtract(3, 1), multiply(2, #0), divide(#1, 4)"),
        ("-5 + 3", "add(-5, 3)"),
        ("12.5 - .5", "subtract(12.5, .5)"),
        ("5", ""),  # a lone number is no step
        ("(1-2", ""),
        ("1-2)", ""),
        ("revenue - cost", ""),
        ("max(1, 2)", ""),
        ("1 -", ""),
    ],
)
def test_a_derivation_becomes_finqas_program_of_two_argument_steps(expression, program):
    assert program_from(expression) == program
    # and reads back as the same arithmetic
    if program:
        assert from_program(program) == derivation_of({"program": program, "answer_type": "arithmetic"})


def test_finqas_program_of_a_curated_item_is_its_derivations_when_that_computes_the_answer():
    item = {"answer_type": "arithmetic", "derivation": "(3,600-2,900)/2,900", "scale": "percent"}
    assert finqa_program_of({**item, "answer": ["24.14"]}) == "subtract(3600, 2900), divide(#0, 2900)"
    assert finqa_program_of({**item, "answer": ["24.14%"], "scale": ""}) == "subtract(3600, 2900), divide(#0, 2900)"
    assert finqa_program_of({**item, "answer": ["24.13"]}) == ""  # computes something else: no program
    assert finqa_program_of({**item, "answer": ["0.24"], "scale": ""}) == "subtract(3600, 2900), divide(#0, 2900)"
    assert finqa_program_of({**item, "answer": ["24"], "answer_type": "span"}) == ""
    assert finqa_program_of({**item, "answer": ["24.14", "3"]}) == ""
    assert finqa_program_of({**item, "program": "divide(700, 2900)", "answer": ["anything"]}) == "divide(700, 2900)"
    # A measurement with its spread is its value; a tiny share is checked before FinQA's rounding to 5 decimals.
    spread = {"answer_type": "arithmetic", "answer": ["2.94"], "essential_actions": [
        {"tool": "get_cell", "arguments": {}, "result": "90.34 ± 0.02"},
        {"tool": "get_cell", "arguments": {}, "result": "87.40 ± 0.02"},
        {"tool": "subtract", "arguments": {"a": 90.34, "b": 87.4}, "result": 2.94},
    ]}  # fmt: skip
    assert (derivation_of(spread), finqa_program_of(spread)) == ("90.34-87.40", "subtract(90.34, 87.40)")
    tiny = {"answer_type": "arithmetic", "answer": ["0.0085%"], "derivation": "0.050/585.236", "scale": "percent"}
    assert finqa_program_of(tiny) == "divide(0.050, 585.236)"
    # The template drafter's executed steps give the derivation, and so the program.
    steps = {"answer_type": "arithmetic", "essential_actions": percentage_change_actions(), "scale": "percent"}
    assert finqa_program_of({**steps, "answer": ["24.14"]}) == "subtract(3.6, 2.9), divide(#0, 2.9)"


@pytest.mark.parametrize(
    ("rationale", "answer", "is_percentage", "derivation"),
    [
        ("Time per epoch: 14.0 min at 50%, 9.8 min at 90%; 14.0 - 9.8 = 4.2.", "4.2", False, "14.0-9.8"),
        ("Revenue 1,200 and 850: 1,200 + 850 = 2,050 in all.", "2,050", False, "1,200+850"),
        ("(73.8 - 71.0) / 71.0 × 100 = 3.94", "3.94", True, "(73.8-71.0)/71.0"),
        ("first 10 - 4 = 6, then 6 × 2 = 12", "12", False, "6*2"),  # the last computation whose result is the answer
        ("14.0 - 9.8 = 4.3", "4.3", False, ""),  # what it writes out does not compute its result
        ("14.0 - 9.8 = 4.2", "4.3", False, ""),  # its result is not the answer
        ("2019 - 2018 = 1 year; Table 1 lists 8.1.", "8.1", False, ""),
        ("k = -8, a = 3", "3", False, ""),
    ],
)
def test_a_rationales_written_computation_is_the_derivation_when_it_computes_the_answer(
    rationale, answer, is_percentage, derivation
):
    assert from_rationale(rationale, answer, is_percentage=is_percentage) == derivation


def test_a_curated_items_rationale_gives_its_derivation_and_finqa_program_last():
    item = {"answer_type": "arithmetic", "answer": ["4.2"], "rationale": "14.0 - 9.8 = 4.2.", "scale": ""}
    assert (derivation_of(item), finqa_program_of(item)) == ("14.0-9.8", "subtract(14.0, 9.8)")
    assert derivation_of({**item, "program": "subtract(14, 9.8)"}) == "14-9.8"  # a program comes first
    assert derivation_of({**item, "answer_type": "span"}) == ""


def test_executed_steps_read_as_tatqa_writes_them_with_cells_as_the_table_wrote_them():
    actions = percentage_change_actions()
    assert from_actions(actions, is_percentage=True) == "(3.6-2.9)/2.9"  # the scale says percent, as in TAT-QA
    assert from_actions(actions) == "(3.6-2.9)/2.9*100"
    program = Program(ToolBox([COSTS]))
    a = program.run("get_cell", table="tab:cost", row="A", column="Cost ($)")
    b = program.run("get_cell", table="tab:cost", row="B", column="Cost ($)")
    program.run("add", numbers=[a, b])
    assert from_actions(program.essential_actions()) == "1,200+900"
    program.run("max", numbers=[a, b])
    assert from_actions(program.essential_actions()) == ""


def test_only_arithmetic_items_get_a_derivation_and_their_own_wins():
    actions = percentage_change_actions()
    item = {"answer_type": "arithmetic", "answer": ["24.14%"], "essential_actions": actions}
    assert derivation_of(item) == "(3.6-2.9)/2.9"
    assert derivation_of({**item, "derivation": "3.6/2.9-1"}) == "3.6/2.9-1"
    assert derivation_of({**item, "program": "subtract(3.6, 2.9), divide(#0, 2.9)"}) == "(3.6-2.9)/2.9"
    times_100 = "subtract(3.6, 2.9), divide(#0, 2.9), multiply(#1, const_100)"
    assert derivation_of({**item, "program": times_100}) == "(3.6-2.9)/2.9"  # a percentage, as from its actions
    assert derivation_of({**item, "answer_type": "span"}) == ""


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_the_tatqa_and_csv_exports_carry_the_derivation_of_arithmetic_items(release_world, tmp_path):
    first, second = release_world["instances"][:2]
    Instance.objects.filter(pk=first.pk).update(
        answer_type="arithmetic", answer=["24.14"], scale="percent", essential_actions=percentage_change_actions()
    )
    Instance.objects.filter(pk=second.pk).update(
        answer_type="arithmetic", answer=["0.7"], program="subtract(3.6, 2.9)", derivation=""
    )
    release = release_cut(
        project=release_world["project"],
        actor=None,
        name="demo",
        batch_ids=[b.pk for b in release_world["batches"]],
        license="CC-BY-4.0",
        citation="",
        split_seed=3,
    )
    write_export_zip(release, "tatqa", tmp_path / "t.zip")
    with zipfile.ZipFile(tmp_path / "t.zip") as bundle:
        documents = json.loads(bundle.read("data/demo-v1.json"))
    questions = {q["question"]: q for d in documents for q in d["questions"]}
    assert questions[first.question]["derivation"] == "(3.6-2.9)/2.9"
    assert questions[second.question]["derivation"] == "3.6-2.9"
    spans = [q for text, q in questions.items() if text not in (first.question, second.question)]
    assert spans and all(q["derivation"] == "" for q in spans)
    write_export_zip(release, "csv", tmp_path / "c.zip")
    with zipfile.ZipFile(tmp_path / "c.zip") as bundle:
        name = next(n for n in bundle.namelist() if n.startswith("data/"))
        rows = list(csv.DictReader(io.StringIO(bundle.read(name).decode())))
    assert {row["question"]: row["derivation"] for row in rows}[first.question] == "(3.6-2.9)/2.9"
