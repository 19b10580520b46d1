"""Lossless round trips: each importer's export equals its input field by field (ids, order and unmodelled keys kept).

The TAT-QA, TAT-DQA and FinQA files are the real subsets in tests/data; the SciTaT files follow SciTaT's README and
the variants SciTaT's own code reads (`paragraph: null`, numeric or null cells, `extract_table`).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command

from annotate.work.queue import queue_claim
from curation.batches.services import batch_open
from curation.datasets.services import dataset_import, import_counts_text
from curation.errors import InvalidInput
from curation.exports.rows import release_rows
from curation.exports.writers import write_text_format
from curation.models import Instance, Table
from curation.states import Status


def first_difference(original: Any, exported: Any, path: str = "") -> str | None:
    """The JSON path of the first value that differs (types included), or None when equal."""
    if type(original) is not type(exported):
        before, after = json.dumps(original)[:80], json.dumps(exported)[:80]
        return f"{path or '(top)'}: {type(original).__name__} {before} became {type(exported).__name__} {after}"
    if isinstance(original, dict):
        if list(original) != list(exported):
            return f"{path or '(top)'}: keys {list(original)} became {list(exported)}"
        for key in original:
            found = first_difference(original[key], exported[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(original, list):
        if len(original) != len(exported):
            return f"{path or '(top)'}: {len(original)} elements became {len(exported)}"
        for index, (left, right) in enumerate(zip(original, exported, strict=True)):
            found = first_difference(left, right, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if original == exported else f"{path}: {json.dumps(original)[:80]} became {json.dumps(exported)[:80]}"


def round_trip(project, fmt: str, data: Any, export_format: str | None = None) -> Any:
    content = json.dumps(data).encode()
    result = dataset_import(
        project=project, actor=None, format=fmt, source_name=f"{fmt}.json", content=content, as_release=f"{fmt}-rt"
    )
    out = io.StringIO()
    write_text_format(export_format or fmt, out, release_rows(result.release), None)
    return json.loads(out.getvalue())


@pytest.mark.parametrize(
    "fmt, path, limit",
    [
        ("tatqa", "tatqa/tatqa_dataset_dev.json", None),
        ("tatdqa", "tatdqa/tatdqa_dataset_dev.json", None),
        ("finqa", "finqa/finqa_dev_200.json", None),
        # FinQA's flat "simplified" layout; ../shared/data has it, tests/data does not carry it (2.4 MB).
        ("finqa", "finqa/finqa_test_500_simplified.json", 100),
    ],
)
def test_real_file_exports_back_field_by_field(project, shared_data, fmt, path, limit):
    if not (shared_data / path).exists():
        pytest.skip(f"{path} is only in ../shared/data (run with TATCURATE_SHARED_DIR=../shared)")
    original = json.loads((shared_data / path).read_text(encoding="utf-8"))[:limit]
    exported = round_trip(project, fmt, original)
    assert first_difference(original, exported) is None


def scitat_records() -> list[dict[str, Any]]:
    """SciTaT-layout records: README keys, Chinese fields, table LaTeX, and the variants SciTaT's code reads."""
    table = {
        "table_id": "2310.01234-t2",
        "label": "tab:results",
        "caption": "Accuracy on the dev set.",
        "table": [["Model", "Acc", "F1"], ["BERT", 85.3, None], ["RoBERTa", 88, "90.1"]],
        "latex": "\\\\begin{tabular}{lcc} Model & Acc & F1 \\\\\\\\ \\\\end{tabular}",
    }
    return [
        {
            "id": "2310.01234-1",
            "paragraph": {"paragraph_id": "2310.01234-p7", "text": "RoBERTa improves over BERT (Table 2)."},
            "tables": [table],
            "question": "Which model has the higher accuracy?",
            "question_c": "哪个模型的准确率更高？",
            "question_type": "Comparison",
            "reasoning": "88 > 85.3.",
            "reasoning_c": "88 大于 85.3。",
            "answer": ["RoBERTa"],
            "answer_c": ["RoBERTa"],
            "answer_type": "span",
        },
        {
            "id": "2310.01234-2",
            "paragraph": None,
            "tables": [{**table, "table_id": "2310.01234-t3", "extract_table": table["table"], "table": None}],
            "question": "What is the accuracy gap?",
            "question_type": "A type this project does not know",
            "reasoning": "88 - 85.3 = 2.7.",
            "answer": ["2.7"],
            "answer_type": "arithmetic",
            "answer_c": ["2.7"],
        },
    ]


def test_scitat_records_export_back_with_every_field_and_variant(project):
    original = scitat_records()
    del original[1]["tables"][0]["table"]  # a tables file names the rows `extract_table` only
    exported = round_trip(project, "scitat", original)
    assert [record["id"] for record in exported] == [record["id"] for record in original]
    for source, mine in zip(original, exported, strict=True):
        # Every source key comes back first, in its order, with its value; the project's own keys follow.
        assert list(mine)[: len(source)] == list(source)
        assert first_difference(source, {key: mine[key] for key in source}) is None
    assert exported[0]["question_subtype"] == "Comparison"
    # Inside the project the cells are text: a number as written, null as an empty cell.
    grid = Table.objects.filter(paper__project=project, label="tab:results").order_by("id").first().cells
    assert grid[1] == ["BERT", "85.3", ""]


def test_tatqa_test_questions_without_answers_import_as_drafts_annotators_claim(project, personas, shared_data):
    content = (shared_data / "tatqa" / "tatqa_dataset_test.json").read_bytes()
    documents = json.loads(content)
    questions = sum(len(document["questions"]) for document in documents)
    result = dataset_import(
        project=project, actor=None, format="tatqa", source_name="test.json", content=content, as_release="tatqa-test"
    )
    assert result.counts["drafts"] == questions == result.counts["questions"]
    assert result.counts["validated"] == 0 and result.counts["contexts"] == len(documents)
    assert (
        import_counts_text(result.counts)
        == f"{questions} questions (0 validated, {questions} as drafts to annotate) over {len(documents)} contexts"
    )
    assert result.release is None and any("No release" in note for note in result.record.notes)
    assert Instance.objects.filter(project=project, status=Status.DRAFTED).count() == questions
    first = documents[0]["questions"][0]
    draft = Instance.objects.get(project=project, external_uid=first["uid"])
    assert (draft.question, draft.answer, draft.answer_type) == (first["question"], [], "")
    # The normal pipeline: the manager opens the import's batch and an annotator claims a draft from the queue.
    batch_open(batch_id=result.record.batch_id, actor=personas["manager"])
    claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
    assert claim is not None and claim.how == "claimed"
    assert Instance.objects.get(pk=claim.instance_id).status == Status.IN_REFINEMENT


def test_import_command_says_how_many_came_in_as_drafts(project, tmp_path):
    path = tmp_path / "unlabelled.json"
    document = {
        "table": {"uid": "t-1", "table": [["", "2019"], ["Revenue", "10"]]},
        "paragraphs": [{"uid": "p-1", "order": 1, "text": "Revenue grew."}],
        "questions": [
            {"uid": "q-1", "order": 1, "question": "What was revenue in 2019?"},
            {"uid": "q-2", "order": 2, "question": "What was the change?", "answer": ["10"], "answer_type": "span",
             "answer_from": "table", "scale": ""},
        ],
    }  # fmt: skip
    path.write_text(json.dumps([document]), encoding="utf-8")
    out = io.StringIO()
    call_command("import_dataset", "--format", "tatqa", str(path), "--project", project.slug, stdout=out)
    assert "2 questions (1 validated, 1 as drafts to annotate) over 1 contexts" in out.getvalue()
    assert "1 question had no answer and came in as a draft in batch" in out.getvalue()
    out = io.StringIO()
    path.write_text(json.dumps([{**document, "table": {**document["table"], "uid": "t-2"}, "questions": [
        {**document["questions"][0], "uid": "q-3"}]}]), encoding="utf-8")  # fmt: skip
    call_command("import_dataset", "--format", "tatqa", str(path), "--project", project.slug, "--json", stdout=out)
    assert json.loads(out.getvalue())["counts"]["drafts"] == 1


def two_paper_scitat_records() -> list[dict[str, Any]]:
    """Two papers as the project's export writes them (`paper: {id, title}`), two paragraphs each citing one shared
    table, and a question SciTaT's formaliser left untyped (`question_type: null`)."""
    records = []
    for paper in ("P1", "P2"):
        table = {"table_id": f"{paper}-t1", "label": "tab:a", "caption": "Scores.", "table": [["M", "S"], ["A", "1"]]}
        for n in (1, 2):
            records.append(
                {
                    "id": f"{paper}-q{n}",
                    "paper": {"id": paper, "title": f"Paper {paper}"},
                    "paragraph": {"paragraph_id": f"{paper}-p{n}", "text": f"Paragraph {n} of {paper} cites Table 1."},
                    "tables": [table],
                    "question": f"Question {n}?",
                    "question_type": None if n == 2 else "Look Up",
                    "answer": ["A"],
                    "answer_type": "span",
                }
            )
    return records


def test_a_scitat_export_reimports_with_its_papers_and_round_trips_unchanged(project):
    from curation.models import Paper
    from curation.services.projects import project_create

    first = round_trip(project, "scitat", two_paper_scitat_records())
    papers = Paper.objects.filter(project=project)
    assert papers.count() == 2  # one paper per `paper.id`, not one per context
    assert [p.tables.count() for p in papers.order_by("id")] == [1, 1]  # the table both paragraphs cite, once
    assert [p.paragraphs.count() for p in papers.order_by("id")] == [2, 2]
    assert [r["paper"]["id"] for r in first] == ["P1", "P1", "P2", "P2"]
    assert first[1]["question_type"] is None
    other = project_create(name="Second", creator=None, slug="second")
    second = round_trip(other, "scitat", first)
    assert Paper.objects.filter(project=other).count() == 2
    assert first_difference(first, second) is None


@pytest.mark.parametrize("fmt", ["tatqa", "scitat"])
def test_the_demos_release_exports_as_a_file_its_own_importer_takes(db, fmt):
    """The demo's gold items carry their unit in the question: their scale is chosen as None (""), not left unchosen,
    so a release of them exports a scale the format's readers take (a null scale is refused: not a TAT-QA scale)."""
    from curation.models import Batch, Project
    from curation.releases.services.cut import release_cut

    call_command("demo", "--json", stdout=io.StringIO())
    demo = Project.objects.get(slug="demo")
    batch = Batch.objects.get(project=demo, name="Validated demo items")
    assert not Instance.objects.filter(batch=batch, scale__isnull=True).exists()
    release = release_cut(project=demo, actor=None, name="demo", batch_ids=[batch.pk], include_withheld=True)
    out = io.StringIO()
    write_text_format(fmt, out, release_rows(release), None)
    again = Project.objects.create(name="Again", slug="again")
    result = dataset_import(
        project=again, actor=None, format=fmt, source_name=f"demo.{fmt}.json", content=out.getvalue().encode()
    )
    assert result.counts["questions"] == release.item_count
    assert Instance.objects.filter(project=again, status=Status.VALIDATED).count() == release.item_count


def test_a_question_with_no_scale_chosen_is_not_exported_in_tatqas_format_with_a_made_up_one(project, shared_data):
    """FinQA's records carry no scale; TAT-QA's format and scorer need one. The TAT-QA export of such a release
    says which question lacks it and what to do, rather than write null (TAT-QA's code fails on it) or guess."""
    original = json.loads((shared_data / "finqa" / "finqa_dev_200.json").read_text(encoding="utf-8"))[:3]
    with pytest.raises(InvalidInput, match=r"has no scale chosen; TAT-QA's format needs one. Choose it"):
        round_trip(project, "finqa", original, export_format="tatqa")


def test_an_unanswerable_question_comes_back_from_the_scitat_export_unanswerable(project):
    """The SciTaT export marks the unanswerable split (`is_answerable: false`, the reason, a null scale nobody chose):
    its own importer takes the file and the question is unanswerable again, not an answerable one with no answer."""
    from curation.releases.services.cut import release_cut
    from curation.services.projects import project_create
    from tests.factories import BatchFactory, ShortContextFactory, ValidatedInstanceFactory

    batch = BatchFactory(project=project)
    context = ShortContextFactory(paper__project=project)
    ValidatedInstanceFactory(project=project, batch=batch, context=context, answer_form="short", answer_type="span")
    ValidatedInstanceFactory(
        project=project, batch=batch, context=context, question="What was the accuracy in 2017?", answer=[],
        scale=None, is_answerable=False, unanswerable_reason="The table starts in 2018.",
    )  # fmt: skip
    release = release_cut(project=project, actor=None, name="with-unanswerable", batch_ids=[batch.pk])
    out = io.StringIO()
    write_text_format("scitat", out, release_rows(release), None)
    exported = json.loads(out.getvalue())
    assert [(r["is_answerable"], r["scale"]) for r in exported if "is_answerable" in r] == [(False, None)]
    again = project_create(name="Again", creator=None, slug="again")
    assert first_difference(exported, round_trip(again, "scitat", exported)) is None
    (imported,) = Instance.objects.filter(project=again, is_answerable=False)
    assert (imported.unanswerable_reason, imported.answer, imported.scale) == ("The table starts in 2018.", [], None)


def test_a_tatdqa_export_of_curated_questions_reimports_with_their_answer_source(project):
    """TAT-DQA's files carry no answer_from, but the project's TAT-DQA export writes it: reimported, a question keeps
    where its answer comes from."""
    from curation.releases.services.cut import release_cut
    from curation.services.projects import project_create
    from tests.factories import BatchFactory, ShortContextFactory, ValidatedInstanceFactory

    batch = BatchFactory(project=project)
    context = ShortContextFactory(paper__project=project)
    for source in ("table", "text", "table-text"):
        ValidatedInstanceFactory(
            project=project, batch=batch, context=context, answer_source=source, answer_type="span"
        )
    release = release_cut(project=project, actor=None, name="sources", batch_ids=[batch.pk])
    out = io.StringIO()
    write_text_format("tatdqa", out, release_rows(release), None)
    exported = json.loads(out.getvalue())
    again = project_create(name="Again", creator=None, slug="again")
    assert first_difference(exported, round_trip(again, "tatdqa", exported)) is None
    sources = Instance.objects.filter(project=again).order_by("id").values_list("answer_source", flat=True)
    assert list(sources) == ["table", "text", "table-text"]
