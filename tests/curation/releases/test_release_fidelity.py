"""The release is what was curated: the demo's Table 1 is rectangular in every export and prompt, and what the
annotator marked as wrongly extracted is in none of them."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotate.review import services as review
from annotate.work.workspace import workspace_submit
from curation.batches.services import batch_create, batch_open
from curation.drafting.services.drafter import table_input
from curation.drafting.templates import draft_template_questions
from curation.exports import EXPORT_FORMATS, write_export_zip
from curation.exports.rows import release_rows
from curation.models import Context, Instance, Paper
from curation.papers.services import paper_ingest
from curation.releases.models import ReleaseContext
from curation.releases.services.cut import release_cut
from curation.services.lifecycle import instance_create
from curation.toolkit.tools import ToolBox
from scoring.methods.base import render_context, tool_tables
from scoring.metrics.toolcalls import result_contains
from tests.annotate.work.helpers import queue_next

DEMO_PAPER = Path(__file__).resolve().parents[3] / "curation" / "demo" / "paper"
HEADER = ["Method", "Params (M)", "LAS on test", "", "", "", "Avg."]
# LoRA's average over its four languages as a FinQA program (the table prints it rounded: 73.4).
LORA_AVERAGE = "add(76.2, 78.8), add(#0, 71.0), add(#1, 67.7), divide(#2, const_4)"
PROMPT_HEADER = (
    "| Method | Params (M) | LAS on test - Wolof | LAS on test - Faroese | LAS on test - Tagalog | "
    "LAS on test - Yoruba | Avg. |"
)


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def demo_paper(project) -> Paper:
    result = paper_ingest(project=project, actor=None, path_or_upload=DEMO_PAPER)
    return result.paper


def short_context_of(paper: Paper, label: str) -> Context:
    return next(
        c
        for c in Context.objects.filter(paper=paper, kind=Context.Kind.SHORT).order_by("paragraph__order")
        if [t.label for t in c.tables.all()] == [label]
    )


def refine_and_validate(project, personas, context: Context, **fields):
    """A draft on `context`, refined by annotator with `fields`, approved by the verifier, confirmed in round two."""
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name=f"B{context.pk}").pk, actor=None)
    instance_create(project_id=project.pk, actor=None, context=context, batch=batch, question="Draft?", answer=["x"])
    claimed = queue_next(project=project, user=personas["annotator"])
    body = {
        "question": "What is the average LAS of LoRA?",
        "rationale": "Table 1 gives LoRA an average of 73.4.",
        "answer": ["73.4"],
        "answer_form": "short",
        "answer_type": "span",
        "scale": "",
        "answer_source": "table",
        "relevant_table_ids": list(context.tables.values_list("id", flat=True)),
        **fields,
    }
    submitted = workspace_submit(
        instance_id=claimed.pk, user=personas["annotator"], expected_version=claimed.version, fields=body
    )
    held = review.review_claim(instance_id=submitted.pk, user=personas["verifier"])
    approved = review.review_approve(instance_id=held.pk, user=personas["verifier"], expected_version=held.version)
    second = review.round2_claim(instance_id=approved.pk, user=personas["annotator2"])
    review.round2_confirm(instance_id=second.pk, user=personas["annotator2"], expected_version=second.version)
    return batch


@pytest.fixture
def excluded_paragraph_release(project, personas, demo_paper, request):
    """One question on Table 1 whose annotator marked its paragraph as wrongly extracted, with a FinQA program
    (LORA_AVERAGE, as an imported FinQA question has one: FinQA's layout holds only such questions), or the program
    a test gives it by indirect parametrization ("" for none)."""
    context = short_context_of(demo_paper, "tab:main")
    batch = refine_and_validate(project, personas, context, excluded_paragraph_ids=[context.paragraph_id])
    Instance.objects.filter(batch=batch).update(program=getattr(request, "param", LORA_AVERAGE))
    release = release_cut(project=project, actor=None, name="fidelity", batch_ids=[batch.pk], split_seed=1)
    return release, context.paragraph.text


def export_text(release, fmt, tmp_path) -> str:
    out = tmp_path / f"{fmt}.zip"
    write_export_zip(release, fmt, out)
    with zipfile.ZipFile(out) as bundle:
        names = [n for n in bundle.namelist() if n.startswith("data/")]
        data = [bundle.read(name) for name in names]
    if names[0].endswith(".parquet"):  # parquet, and hf's files per setting and split
        rows = [row for d in data for row in pq.read_table(pa.BufferReader(d)).to_pylist()]
        return json.dumps(rows, ensure_ascii=False)
    return data[0].decode()


def table_one_grids(fmt: str, text: str) -> list[list[list[str]]]:
    """Every copy of Table 1 in an export, found by its header row."""
    grids: list[list[list[str]]] = []

    def walk(value):
        if isinstance(value, list) and value and all(isinstance(row, list) for row in value):
            if value[0] and value[0][0] == "Method":
                grids.append(value)
                return
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "grid":  # the span-filled grid beside the file grid (JSONL): rectangular too
                    assert len({len(row) for row in inner}) <= 1
                    continue
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    if fmt == "jsonl":
        for line in text.splitlines():
            walk(json.loads(line))
    elif fmt == "csv":
        for row in csv.DictReader(io.StringIO(text)):
            walk(json.loads(row["tables_json"]))
    else:
        walk(json.loads(text))
    return grids


@pytest.mark.parametrize("fmt", ["scitat", "tatqa", "finqa", "jsonl", "parquet", "csv"])
def test_table_one_is_rectangular_with_avg_over_its_own_column(excluded_paragraph_release, fmt, tmp_path):
    release, _ = excluded_paragraph_release
    grids = table_one_grids(fmt, export_text(release, fmt, tmp_path))
    assert grids, f"no Table 1 in the {fmt} export"
    for grid in grids:
        assert {len(row) for row in grid} == {7}
        assert grid[0] == HEADER
        assert grid[1] == ["", "", "Wolof", "Faroese", "Tagalog", "Yoruba", ""]
        lora = next(row for row in grid if row[0] == "LoRA")
        assert lora[6] == "73.4" and lora[2] == "76.2"


@pytest.mark.parametrize("fmt", sorted(EXPORT_FORMATS))
def test_excluded_paragraph_is_in_no_export(excluded_paragraph_release, fmt, tmp_path):
    release, paragraph_text = excluded_paragraph_release
    text = export_text(release, fmt, tmp_path)
    assert "73.4" in text  # the export holds the item …
    assert paragraph_text[:60] not in text  # … but not the paragraph its annotator struck out
    if fmt == "csv":
        assert list(csv.reader(io.StringIO(text)))[1][0]


def test_frozen_item_records_what_was_excluded_and_by_whom(excluded_paragraph_release):
    release, _ = excluded_paragraph_release
    item, short, long = next(release_rows(release))
    assert [entry["by"] for entry in item["excluded"]["paragraphs"]] == ["annotator"]
    assert item["excluded"]["tables"] == []
    excluded_key = item["excluded"]["paragraphs"][0]["key"]
    assert short["paragraphs"] == [] and [t["label"] for t in short["tables"]] == ["tab:main"]
    assert excluded_key not in {p["key"] for p in long["paragraphs"]} and len(long["paragraphs"]) == 4
    assert long["tables"][0]["header_rows"] == 2 and long["tables"][0]["spans"]


def test_both_settings_cover_the_same_question(excluded_paragraph_release):
    release, _ = excluded_paragraph_release
    stats = release.statistics
    assert stats["settings"]["short"]["questions"] == stats["settings"]["long"]["questions"] == 1
    assert stats["questions_in_both_settings"] == 1


def test_scoring_prompt_shows_the_rectangular_table_without_the_excluded_paragraph(excluded_paragraph_release):
    release, paragraph_text = excluded_paragraph_release
    _, short, long = next(release_rows(release))
    for context in (short, long):
        tables, paragraphs = render_context(context)
        assert PROMPT_HEADER in tables
        assert "| LoRA | 8.1 | 76.2 | 78.8 | 71.0 | 67.7 | 73.4 |" in tables
        assert paragraph_text[:60] not in paragraphs
    box = ToolBox(tool_tables(short))
    assert box.call("get_cell", {"table": "tab:main", "row": "LoRA", "column": "Avg."}) == "73.4"
    assert "column 3" not in json.dumps(box.call("list_tables", {}))


def test_excluded_table_is_absent_from_that_items_contexts_and_prompts(project, personas, demo_paper, tmp_path):
    context = short_context_of(demo_paper, "tab:ablation")
    table = context.tables.get()
    batch = refine_and_validate(
        project,
        personas,
        context,
        answer_source="text",
        relevant_table_ids=[],
        excluded_table_ids=[table.pk],
    )
    release = release_cut(project=project, actor=None, name="no-table", batch_ids=[batch.pk])
    item, short, long = next(release_rows(release))
    assert [entry["key"] for entry in item["excluded"]["tables"]] == [f"{item['paper']}/table-{table.order}"]
    for context_data in (short, long):
        assert table.caption not in render_context(context_data)[0]
        assert "tab:ablation" not in [t["label"] for t in tool_tables(context_data)]
    for fmt in EXPORT_FORMATS:
        assert table.caption not in export_text(release, fmt, tmp_path)


def test_template_actions_on_a_multirow_header_replay_through_the_scoring_toolbox(project, personas, demo_paper):
    """Essential actions recorded at drafting (ORM table) give the same results on the frozen release table."""
    table = demo_paper.tables.get(label="tab:main")
    drafts = draft_template_questions([table_input(table, "tab:main")], seed=0, per_template=2)
    assert drafts
    context = short_context_of(demo_paper, "tab:main")
    batch = refine_and_validate(project, personas, context)
    release = release_cut(project=project, actor=None, name="replay", batch_ids=[batch.pk])
    _, short, _ = next(release_rows(release))
    box = ToolBox(tool_tables(short))
    replayed = 0
    for draft in drafts:
        for action in draft["essential_actions"]:
            result = box.call(action["tool"], action["arguments"])
            if action["tool"].startswith("search_"):
                assert result_contains(result, action["result"]), (draft["template_id"], action)
            else:
                assert result == action["result"], (draft["template_id"], action)
            replayed += 1
    columns = {a["arguments"].get("column") for d in drafts for a in d["essential_actions"]} - {None}
    assert any(column.startswith("LAS on test - ") for column in columns)
    assert replayed >= len(drafts)


def test_release_frozen_before_grids_still_exports_rectangular_tables(excluded_paragraph_release, tmp_path):
    """An older release froze only the extractor's ragged rows as `cells`: exports pad them to a rectangle."""
    release, _ = excluded_paragraph_release
    for row in ReleaseContext.objects.filter(release=release):
        for table in row.data["tables"]:
            table["cells"] = [["Method", "Params (M)", "LAS on test", "Avg."], ["LoRA", "8.1", "76.2", "73.4", "x"]]
            for key in ("grid", "spans", "header_rows"):
                table.pop(key)
        row.save(update_fields=["data"])
    for fmt in ("scitat", "jsonl", "parquet"):
        grids = table_one_grids(fmt, export_text(release, fmt, tmp_path))
        assert grids and all({len(r) for r in grid} == {5} for grid in grids)
    _, short, _ = next(release_rows(release))
    assert "| Method | Params (M) | LAS on test | Avg. |  |" in render_context(short)[0]


def test_header_rows_the_extractor_reports_are_stored_and_used_by_every_consumer(project, monkeypatch):
    """When the extractor knows the header (h15b fills `header_rows`), ingestion stores it and prompts follow it."""
    from curation.papers import reading as papers  # where paper_ingest reads a source in process

    real = papers.extract_paper

    def extract_with_header(path, **options):
        extraction = real(path, **options)
        for table in extraction.tables:
            table.header_rows = 1 if table.label == "tab:main" else None  # one row, against the spans' two
        return extraction

    monkeypatch.setattr(papers, "extract_paper", extract_with_header)
    paper = paper_ingest(project=project, actor=None, path_or_upload=DEMO_PAPER).paper
    ablation, main = paper.tables.get(label="tab:ablation"), paper.tables.get(label="tab:main")
    assert main.header_rows == 1 and ablation.header_rows is None
    rows = table_input(main, "tab:main")["rows"]
    assert rows[0][2] == "LAS on test" and rows[1][2] == "Wolof"  # the stored count wins over the spans
    assert table_input(ablation, "tab:ablation")["rows"][0] == ["Sparsity", "LAS", "Time (min)"]  # None: counted


def test_finqa_execution_answer_is_a_number_as_finqa_writes_it(excluded_paragraph_release, tmp_path):
    release, _ = excluded_paragraph_release
    (record,) = json.loads(export_text(release, "finqa", tmp_path))
    # What the program executes to, as FinQA's evaluator compares it; the answer as the table prints it.
    assert record["qa"]["program"] == LORA_AVERAGE
    assert record["qa"]["exe_ans"] == 73.425 and record["qa"]["answer"] == "73.4"


@pytest.mark.parametrize("excluded_paragraph_release", [""], indirect=True)
def test_finqa_layout_leaves_out_a_question_with_no_program_and_its_card_says_so(excluded_paragraph_release, tmp_path):
    # The span answer 73.4 read from the table has no program: it was written with an empty one (and its answer as
    # exe_ans), on which FinQA's evaluator stops with an IndexError.
    release, _ = excluded_paragraph_release
    write_export_zip(release, "finqa", tmp_path / "finqa.zip")
    with zipfile.ZipFile(tmp_path / "finqa.zip") as bundle:
        assert json.loads(bundle.read("data/fidelity-v1.json")) == []
        card = bundle.read("README.md").decode()
    assert "Left out of this layout: 1 question with no program (" in card  # the reasons it left none out for: unsaid
    assert "unanswerable" not in card.split("Left out of this layout")[1] and "hf layouts carry every question" in card
    assert "73.4" in export_text(release, "jsonl", tmp_path)  # the layouts that carry it


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_flat_exports_say_how_many_header_rows_table_one_has(excluded_paragraph_release, fmt, tmp_path):
    release, _ = excluded_paragraph_release
    text = export_text(release, fmt, tmp_path)
    rows = json.loads(text) if fmt == "parquet" else list(csv.DictReader(io.StringIO(text)))
    tables = rows[0]["tables"] if fmt == "parquet" else json.loads(rows[0]["tables_json"])
    assert [(t["label"], t["header_rows"]) for t in tables] == [("tab:main", 2)]
