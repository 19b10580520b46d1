"""Template drafts over a real multi-row-header table, as a person reads them: "Table N", header names, rationale."""

from __future__ import annotations

from pathlib import Path

from curation.drafting.services.items import run_process_inline
from curation.drafting.services.runs import run_create
from curation.drafting.templates import TEMPLATES
from curation.models import Context, Instance, ReasoningType
from curation.papers.services import paper_ingest
from tests.factories import ContextFactory, TableFactory

HEADERS = Path(__file__).resolve().parents[1] / "latex" / "fixtures" / "headers"
# multirow_header_no_rules.tex: \multirow{2}{*}{Method} over Dev/Test, each with EM and F1 beneath.
VALUES = {"Baseline": [40.1, 45.2, 39.8, 44.0], "Ours": [52.3, 58.7, 51.0, 57.9]}
COLUMNS = ["Dev - EM", "Dev - F1", "Test - EM", "Test - F1"]


def _context(project, drafting_batch, code: str) -> Context:
    paper = paper_ingest(project=project, actor=None, path_or_upload=HEADERS / "multirow_header_no_rules.tex").paper
    (table,) = paper.tables.all()
    # A second table of the same paper with no header row: its first row is data, never a column name.
    headerless = TableFactory(
        paper=paper, number="2", label="tab:hyper", header_rows=0,
        cells=[["Learning rate", "0.001"], ["Batch size", "32"], ["Epochs", "3"]],
    )  # fmt: skip
    return ContextFactory(
        paper=paper, batch=drafting_batch, tables=[table, headerless],
        reasoning_type=ReasoningType.objects.get(project=project, code=code),
    )  # fmt: skip


def test_template_questions_over_a_multirow_header_read_as_a_person_writes_them(project, personas, drafting_batch):
    context = _context(project, drafting_batch, "comparison")
    every = {"seed": 2, "template_ids": [template.template_id for template in TEMPLATES]}  # chosen: drafted as chosen
    run = run_create(project=project, actor=personas["manager"], kind="template", batch=drafting_batch, options=every)
    run_process_inline(run_id=run.pk)
    instances = list(Instance.objects.filter(context=context).order_by("pk"))
    assert len(instances) >= 5
    table = context.tables.get(order=0)
    assert table.number == "1" and table.label  # the LaTeX label stays in the tool calls, never in the words
    for instance in instances:
        words = instance.question + " " + instance.rationale
        assert table.label not in words and "tab:hyper" not in words, words
        assert "Table 1" in words, words
        columns = {instance.draft["slots"].get(key) for key in ("column", "column_a", "column_b")} - {None}
        assert columns <= set(COLUMNS), (instance.question, columns)
        assert "0.001" not in instance.question
    difference = next(i for i in instances if i.draft["template_id"] == "cell_difference")
    slots = difference.draft["slots"]
    a = VALUES[slots["row_a"]][COLUMNS.index(slots["column"])]
    b = VALUES[slots["row_b"]][COLUMNS.index(slots["column"])]
    expected = f"{a - b:.2f}".rstrip("0").rstrip(".")
    assert difference.answer == [expected]  # 52.3 - 40.1 is 12.2, not 12.199999999999996
    assert difference.rationale == (
        f"Table 1 gives {a} for {slots['row_a']} and {b} for {slots['row_b']} under {slots['column']}. "
        f"{a} minus {b} is {expected}."
    )
    assert " in Table 1" in difference.question
    lookup = next(i for i in instances if i.draft["template_id"] == "table_lookup")
    assert lookup.answer == ["Table 1"] and lookup.question.startswith(("Which table", "In which table"))
    # Two rows make no ranking, no column-wide mean and no sum: the run says which templates drafted nothing here.
    (item,) = run.items.filter(context=context)
    idle = set(item.raw_output["idle"])
    assert {"rank_position", "column_mean", "pair_sum"} <= idle and not idle & {
        i.draft["template_id"] for i in instances
    }
    assert item.error.startswith("nothing fits ") and "rank_position" in item.error


def test_a_template_run_drafts_a_context_only_the_reasoning_type_assigned_to_it(project, personas, drafting_batch):
    """The drafting page asks for types to be assigned first, so drafts follow the project's target shares: a context
    assigned Comparison gets comparison questions, not every template's (the run page counted 13 drafts of every type
    against one Arithmetic Calculation context)."""
    context = _context(project, drafting_batch, "comparison")
    run = run_create(
        project=project, actor=personas["manager"], kind="template", batch=drafting_batch, options={"seed": 2}
    )
    run_process_inline(run_id=run.pk)
    instances = list(Instance.objects.filter(context=context))
    assert instances and {instance.draft["reasoning_subtype"] for instance in instances} == {"comparison"}
    assert {instance.reasoning_type.code for instance in instances} == {"comparison"}
