"""Dataset imports: JSON-path errors that write nothing, no duplicates, TAT-DQA without context, FinQA, SciTaT."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from curation.datasets.models import ImportRecord, SourceRecord
from curation.datasets.services import dataset_import
from curation.errors import InvalidInput, NotPermitted
from curation.exports import records
from curation.exports.rows import release_items, release_rows
from curation.models import Context, Instance, Paper
from curation.releases.models import Release
from curation.states import Status
from scoring.metrics import finqa


def tatqa_document(uid: str, questions: list[dict]) -> dict:
    return {
        "table": {"uid": uid, "table": [["", "2019"], ["Revenue", "10"]]},
        "paragraphs": [{"uid": f"{uid}-p1", "order": 1, "text": "Revenue grew."}],
        "questions": questions,
    }


def tatqa_question(uid: str, **fields) -> dict:
    question = {
        "uid": uid,
        "order": 1,
        "question": "What was revenue in 2019?",
        "answer": ["10"],
        "derivation": "",
        "answer_type": "span",
        "answer_from": "table",
        "rel_paragraphs": [],
        "req_comparison": False,
        "scale": "million",
    }
    question.update(fields)
    return question


def do_import(project, fmt: str, data: object, name: str = "file.json", **options):
    content = json.dumps(data).encode()
    return dataset_import(project=project, actor=None, format=fmt, source_name=name, content=content, **options)


def counts():
    return (Paper.objects.count(), Instance.objects.count(), ImportRecord.objects.count(), SourceRecord.objects.count())


def test_malformed_file_names_the_json_path_and_writes_nothing(project):
    good = [tatqa_document(f"t{i}", [tatqa_question(f"q{i}-{j}") for j in range(4)]) for i in range(13)]
    good[12]["questions"][3]["answer_type"] = "multiple-choice"
    before = counts()
    with pytest.raises(InvalidInput) as error:
        do_import(project, "tatqa", good)
    assert "[12].questions[3].answer_type" in error.value.message
    assert error.value.detail["path"] == "[12].questions[3].answer_type"
    assert counts() == before


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d: d[0]["table"].pop("uid"), "[0].table.uid"),
        (lambda d: d[0]["table"]["table"][1].__setitem__(1, 10), "[0].table.table[1][1]"),
        (lambda d: d[0]["questions"][0].__setitem__("answer_from", "image"), "[0].questions[0].answer_from"),
        (lambda d: d[0]["questions"][0].__setitem__("scale", 1000), "[0].questions[0].scale"),
        (lambda d: d[0]["questions"][0].__setitem__("answer", {"x": 1}), "[0].questions[0].answer"),
        (lambda d: d[0]["paragraphs"][0].pop("text"), "[0].paragraphs[0].text"),
        (lambda d: d.append(tatqa_document("t9", [tatqa_question("q0")])), "[1].questions[0].uid"),
    ],
)
def test_each_kind_of_fault_is_located(project, mutate, path):
    data = [tatqa_document("t0", [tatqa_question("q0")])]
    mutate(data)
    with pytest.raises(InvalidInput) as error:
        do_import(project, "tatqa", data)
    assert error.value.detail["path"] == path
    assert not Instance.objects.exists()


def test_a_mistyped_value_is_named_as_json_names_it(project):
    # "expected a JSON list of records, got dict" spoke Python to a person who wrote an object.
    with pytest.raises(InvalidInput, match="expected a JSON list of records, got object"):
        do_import(project, "tatqa", {"table": {}})
    data = [tatqa_document("t0", [tatqa_question("q0")])]
    data[0]["questions"][0]["scale"] = 1000
    with pytest.raises(InvalidInput, match=r"expected string, got number 1000"):
        do_import(project, "tatqa", data)


def test_invalid_json_names_line_and_column(project):
    with pytest.raises(InvalidInput, match="line 2 column"):
        dataset_import(project=project, actor=None, format="tatqa", source_name="x", content=b"[\n{oops}]")


def test_a_failure_while_writing_rolls_back_everything(project, monkeypatch):
    from curation.datasets import services as datasets

    calls = {"n": 0}
    real = datasets.instances_create

    def failing(**kwargs):  # the second bulk insert fails, after the first wrote its two questions
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("disk full")
        return real(**kwargs)

    monkeypatch.setattr(datasets, "IMPORT_CHUNK", 2)
    monkeypatch.setattr(datasets, "instances_create", failing)
    before = counts()
    with pytest.raises(RuntimeError):
        do_import(project, "tatqa", [tatqa_document("t0", [tatqa_question(f"q{i}") for i in range(5)])])
    assert counts() == before


def test_same_file_twice_does_not_duplicate(project):
    data = [tatqa_document("t0", [tatqa_question("q0"), tatqa_question("q1", order=2)])]
    first = do_import(project, "tatqa", data)
    second = do_import(project, "tatqa", data)
    assert first.created and not second.created
    assert second.record == first.record
    assert Instance.objects.count() == 2 and Paper.objects.count() == 1


def test_overlapping_file_skips_known_questions_and_reuses_contexts(project):
    do_import(project, "tatqa", [tatqa_document("t0", [tatqa_question("q0")])], name="a.json")
    result = do_import(
        project, "tatqa", [tatqa_document("t0", [tatqa_question("q0"), tatqa_question("q1", order=2)])], name="b.json"
    )
    assert result.counts["questions"] == 1 and result.counts["skipped_known_questions"] == 1
    assert result.counts["new_contexts"] == 0
    assert Instance.objects.count() == 2 and Context.objects.count() == 1


def test_imported_questions_are_validated_with_source_and_fields(project):
    result = do_import(
        project,
        "tatqa",
        [tatqa_document("t0", [tatqa_question("q0", answer=-12.6, answer_type="arithmetic", derivation="1-13.6")])],
    )
    instance = Instance.objects.get()
    assert instance.status == Status.VALIDATED
    assert instance.answer == ["-12.6"] and instance.answer_type == "arithmetic"
    assert instance.derivation == "1-13.6" and instance.scale == "million" and instance.answer_source == "table"
    assert instance.external_uid == "q0" and instance.batch == result.record.batch
    assert list(instance.relevant_tables.values_list("cells", flat=True)) == [[["", "2019"], ["Revenue", "10"]]]
    assert instance.source_record.data["answer"] == -12.6
    assert instance.events.get().to_status == Status.VALIDATED


def test_only_managers_import(project, personas):
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            dataset_import(project=project, actor=personas[name], format="tatqa", source_name="x", content=b"[]")


def test_tatdqa_imports_questions_without_context_and_says_so(project, shared_data):
    # The first 40 documents of the real dev file keep the test quick.
    documents = json.loads((shared_data / "tatdqa" / "tatdqa_dataset_dev.json").read_bytes())[:40]
    questions = sum(len(d["questions"]) for d in documents)
    result = do_import(project, "tatdqa", documents, as_release="tatdqa-dev")
    assert result.counts["questions"] == questions
    assert result.counts["contexts"] == 0 and result.counts["papers"] == 40
    assert result.counts["new_contexts"] == 0
    assert not Context.objects.filter(project=project).exists()
    assert any("no context" in note for note in result.record.notes)
    release = result.release
    assert release.item_count == questions and any("no context" in note for note in release.notes)
    assert release.statistics["settings"]["long"]["questions"] == 0
    assert release.statistics["papers"] == 40
    first = documents[0]["questions"][0]
    exported = next(records.tatqa_document(None, [row[0]]) for row in release_rows(release))
    assert exported["questions"][0] == first


def test_finqa_dev_imports_programs_and_gold_programs_score_one(project, shared_data):
    content = (shared_data / "finqa" / "finqa_dev_200.json").read_bytes()
    result = dataset_import(
        project=project, actor=None, format="finqa", source_name="dev_200", content=content, as_release="finqa-dev"
    )
    assert result.counts["questions"] == 200
    instances = Instance.objects.filter(project=project)
    assert instances.count() == 200 and all(i.program for i in instances)
    exe = [r.data["exe_ans"] for r in SourceRecord.objects.filter(kind="question")]
    assert len(exe) == 200 and all(e not in (None, "") for e in exe)
    # Score the exported gold programs as predictions with the official FinQA execution metric.
    gold = [records.finqa_record(*row) for row in release_rows(result.release)]
    predictions = {g["id"]: finqa.program_tokenization(g["qa"]["program"]) for g in gold}
    report = finqa.score_dataset(gold, predictions)
    assert report.execution_accuracy == 1.0 and len(report.questions) == 200
    assert result.release.statistics["with_program"] == 200
    original = json.loads(content)
    exported = {g["id"]: g for g in gold}
    assert set(exported) == {r["id"] for r in original}
    for record in original:
        mine = exported[record["id"]]
        assert mine["qa"]["exe_ans"] == record["qa"]["exe_ans"]
        assert mine["qa"]["program"] == record["qa"]["program"]
        assert (mine["table"], mine["pre_text"], mine["post_text"]) == (
            record["table"],
            record["pre_text"],
            record["post_text"],
        )


def test_scitat_import_maps_reasoning_types_and_answer_fields(project):
    data = [
        {
            "id": "s1",
            "paper": {"id": "2301.00001", "title": "Adapters"},
            "paragraph": {"paragraph_id": "p1", "text": "Table 1 shows that A beats B."},
            "tables": [
                {"table_id": "t1", "label": "tab:1", "caption": "Accuracy", "table": [["M", "Acc"], ["A", "9"]]}
            ],
            "question": "Which model wins?",
            "question_type": "Comparison",
            "reasoning": "A has 9.",
            "answer": ["A"],
            "answer_source": "table-text",
        },
        {
            "id": "s2",
            "paper": {"id": "2301.00001", "title": "Adapters"},
            "paragraph": {"paragraph_id": "p1", "text": "Table 1 shows that A beats B."},
            "tables": [
                {"table_id": "t1", "label": "tab:1", "caption": "Accuracy", "table": [["M", "Acc"], ["A", "9"]]}
            ],
            "question": "Why does A win?",
            "question_type": "Causal Analysis",
            "reasoning": "…",
            "answer": "Because A uses adapters which generalise better across the tasks.",
        },
    ]
    result = do_import(project, "scitat", data, as_release="scitat")
    first, second = Instance.objects.order_by("id")
    assert first.reasoning_type.code == "comparison" and second.reasoning_type.code == "causal_analysis"
    assert first.answer_form == "short" and second.answer_form == "free"
    assert first.rationale == "A has 9." and first.context.kind == "short"
    assert first.context == second.context and list(first.relevant_tables.values_list("label", flat=True)) == ["tab:1"]
    stats = result.release.statistics
    assert stats["reasoning_type"]["numerical_reasoning"]["subtypes"]["comparison"]["count"] == 1
    exported = [records.scitat_record(*row) for row in release_rows(result.release)]
    assert exported[0]["question_subtype"] == "Comparison" and exported[0]["answer"] == ["A"]
    assert exported[0]["tables"][0]["table"] == [["M", "Acc"], ["A", "9"]]
    assert exported[0]["paragraph"]["text"] == "Table 1 shows that A beats B."


def test_import_command_reports_json_and_malformed_paths(project, write_json):
    good = write_json("good.json", [tatqa_document("t0", [tatqa_question("q0")])])
    out = StringIO()
    call_command(
        "import_dataset",
        str(good),
        "--format",
        "tatqa",
        "--project",
        project.slug,
        "--as-release",
        "mini",
        "--json",
        stdout=out,
    )
    data = json.loads(out.getvalue())
    assert data["counts"]["questions"] == 1 and data["release"]["name"] == "mini"
    assert Release.objects.get(name="mini").item_count == 1
    assert [item["uid"] for item in release_items(Release.objects.get(name="mini"))] == ["q0"]
    bad = write_json("bad.json", [tatqa_document("t1", [tatqa_question("q1", answer_type="yes-no")])])
    with pytest.raises(CommandError, match=r"\[0\]\.questions\[0\]\.answer_type"):
        call_command("import_dataset", str(bad), "--format", "tatqa", "--project", project.slug, stdout=StringIO())


def scitat_with_header_rows(header_rows) -> list[dict]:
    table = {
        "table_id": "t1",
        "label": "tab:1",
        "caption": "LAS",
        "table": [["Method", "LAS", ""], ["", "Wolof", "Yoruba"], ["A", "1", "2"]],
        "header_rows": header_rows,
    }
    return [
        {
            "id": "s1",
            "paper": {"id": "p", "title": "P"},
            "paragraph": {"paragraph_id": "p1", "text": "Table 1."},
            "tables": [table],
            "question": "Q?",
            "answer": ["1"],
        }
    ]


def test_scitat_import_keeps_the_header_rows_its_export_wrote(project):
    result = do_import(project, "scitat", scitat_with_header_rows(2), as_release="scitat")
    assert Instance.objects.get().context.tables.get().header_rows == 2
    exported = [records.scitat_record(*row) for row in release_rows(result.release)]
    assert exported[0]["tables"][0]["header_rows"] == 2
    assert exported[0]["tables"][0]["table"][1] == ["", "Wolof", "Yoruba"]


def test_scitat_import_refuses_a_negative_header_count_and_writes_nothing(project):
    before = counts()
    with pytest.raises(InvalidInput, match=r"tables\[0\]\.header_rows"):
        do_import(project, "scitat", scitat_with_header_rows(-1))
    assert counts() == before
