"""Exports: every format is a zip with data, dataset card and checksums; streaming writers; cache and worker path."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from collections import Counter

import pyarrow.parquet as pq
import pytest

from curation.datasets.formats import parse_tatqa
from curation.datasets.services import dataset_import
from curation.exports import EXPORT_FORMATS, write_export_zip
from curation.exports.writers import write_json_array
from curation.releases.models import ExportArtifact
from curation.releases.services import exports as export_services
from curation.releases.services.cut import release_cut
from curation.releases.services.exports import export_request
from curation.releases.services.jobs import EXPORT_BUILDS
from curation.releases.tasks import export_build_task
from scoring.metrics import finqa, scitat, tatqa
from tests.factories import (
    BatchFactory,
    LongContextFactory,
    PaperFactory,
    ShortContextFactory,
    TableFactory,
    ValidatedInstanceFactory,
)


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def unpack(path):
    with zipfile.ZipFile(path) as bundle:
        return {name: bundle.read(name) for name in bundle.namelist()}


@pytest.mark.parametrize("fmt", sorted(EXPORT_FORMATS))
def test_every_format_is_a_zip_with_data_card_and_valid_checksums(release, fmt, tmp_path):
    out = tmp_path / f"{fmt}.zip"
    digest, size = write_export_zip(release, fmt, out)
    assert digest == hashlib.sha256(out.read_bytes()).hexdigest() and size == out.stat().st_size
    files = unpack(out)
    data_names = [n for n in files if n.startswith("data/")]
    assert set(files) == {*data_names, "README.md", "SHA256SUMS"}
    splits = (
        {row["split"] for row in pq.read_table(io.BytesIO(files[data_names[0]])).to_pylist()} if fmt == "hf" else {}
    )
    assert len(data_names) == (2 * len(splits) if fmt == "hf" else 1)  # hf: one file per context setting and split
    for line in files["SHA256SUMS"].decode().splitlines():
        expected, name = line.split("  ")
        assert hashlib.sha256(files[name]).hexdigest() == expected
    card = files["README.md"].decode()
    assert release.content_hash in card and "CC-BY-4.0" in card and "@misc{demo}" in card
    assert "SciTaT table 2" in card and "SciTaT table 3" in card and "SciTaT table 4" in card
    sources = card.split("## Source papers", 1)[1].split("\n## ", 1)[0]  # each paper named once, by title
    assert [line.split(" | ")[1] for line in sources.splitlines() if line.startswith("| paper-")] == [
        "Paper 0",
        "Paper 1",
    ]


def test_jsonl_has_one_instance_per_line_with_context_inline(release, tmp_path):
    write_export_zip(release, "jsonl", tmp_path / "x.zip")
    lines = unpack(tmp_path / "x.zip")["data/demo-v1.jsonl"].decode().splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 6
    short = next(r for r in rows if r["short_context"])
    assert short["context"]["kind"] == "short" and short["paper_context"]["kind"] == "long"
    assert {r["split"] for r in rows} <= {"train", "dev", "test"}


def test_parquet_loads_with_nested_context(release, tmp_path):
    write_export_zip(release, "parquet", tmp_path / "x.zip")
    (tmp_path / "x.parquet").write_bytes(unpack(tmp_path / "x.zip")["data/demo-v1.parquet"])
    table = pq.read_table(tmp_path / "x.parquet")
    assert table.num_rows == 6
    row = table.slice(0, 1).to_pylist()[0]
    assert row["answer"] == ["A"] and row["tables"][0]["cells"] == [["Model", "Acc"], ["A", "8"]]
    assert row["paragraphs"][0]["text"] == "Model A reaches 8 points."


def test_hf_folder_loads_with_the_datasets_library_by_config_and_by_file(release_world, tmp_path):
    import datasets

    release = release_cut(
        project=release_world["project"],
        actor=None,
        name="hf",
        batch_ids=[b.pk for b in release_world["batches"]],
        license="CC-BY-4.0",
        split_seed=3,
        split_ratios={"train": 1, "test": 1},  # two papers: one in each split
    )
    write_export_zip(release, "hf", tmp_path / "x.zip")
    folder = tmp_path / "hf"
    zipfile.ZipFile(tmp_path / "x.zip").extractall(folder)
    card = (folder / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-4.0\n") and "- config_name: short\n  default: true\n" in card
    items = {item["uid"]: item for item in release.items.values_list("data", flat=True)}
    by_split = Counter(item["split"] for item in items.values())
    assert set(by_split) == {"train", "test"}
    for setting in ("short", "long"):
        loaded = datasets.load_dataset(str(folder), setting, cache_dir=str(tmp_path / "cache"))
        assert {name: len(rows) for name, rows in loaded.items()} == dict(by_split)
        assert loaded[next(iter(by_split))].features["tables"].feature["cells"] == datasets.List(
            datasets.List(datasets.Value("string"))
        )
        for split in loaded.values():
            for row in split:
                expected = "long" if setting == "long" or not items[row["uid"]].get("short_context") else "short"
                assert (row["context_kind"], row["answer"]) == (expected, [str(a) for a in items[row["uid"]]["answer"]])
    short_test = folder / "data" / "short" / f"{next(iter(by_split))}.parquet"
    one = datasets.load_dataset("parquet", data_files={"x": str(short_test)}, cache_dir=str(tmp_path / "cache"))
    assert one["x"].num_rows == by_split[next(iter(by_split))]


def test_push_release_dry_run_lists_the_folder_and_a_real_push_needs_a_token(release, settings):
    from django.core.management import CommandError, call_command

    out = io.StringIO()
    call_command("push_release", release=release.name, project=release.project.slug, repo="team/demo", dry_run=True,
                 json=True, stdout=out)  # fmt: skip
    result = json.loads(out.getvalue())
    assert result["uploaded"] is False and result["repo"] == "team/demo"
    assert "README.md" in result["files"] and any(f.startswith("data/short/") for f in result["files"])
    settings.HF_TOKEN = ""
    with pytest.raises(CommandError, match="HF_TOKEN"):
        call_command("push_release", release=release.name, project=release.project.slug, repo="team/demo")
    with pytest.raises(CommandError, match="OWNER/NAME"):
        call_command("push_release", release=release.name, project=release.project.slug, repo="demo", dry_run=True)


def test_csv_lists_questions_and_exact_answers(release, tmp_path):
    write_export_zip(release, "csv", tmp_path / "x.zip")
    text = unpack(tmp_path / "x.zip")["data/demo-v1.csv"].decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 6 and rows[0]["question"] == "Question 0.0?"
    assert json.loads(rows[0]["answer_json"]) == ["A"] and rows[0]["reasoning_subtype"] == "comparison"


def test_scitat_export_scores_perfectly_against_itself(release, tmp_path):
    write_export_zip(release, "scitat", tmp_path / "x.zip")
    records = json.loads(unpack(tmp_path / "x.zip")["data/demo-v1.json"])
    assert len(records) == 6 and records[0]["question_subtype"] == "Comparison"
    report = scitat.score_dataset(records, {r["id"]: r["answer"] for r in records})
    assert report.em == 1.0 and report.f1 == 1.0 and report.short_form_count == 4


def test_tatqa_export_groups_questions_by_context(release, tmp_path):
    write_export_zip(release, "tatqa", tmp_path / "x.zip")
    documents = json.loads(unpack(tmp_path / "x.zip")["data/demo-v1.json"])
    assert [len(d["questions"]) for d in documents] == [2, 1, 2, 1]
    assert "more_tables" in documents[0]  # the first paper's short context has two tables


def test_tatqa_export_gives_each_document_its_own_table_uids_the_same_on_every_export(release, tmp_path):
    # A paper's short and long contexts hold the same table: each document names it by a uid of its own.
    write_export_zip(release, "tatqa", tmp_path / "x.zip")
    documents = json.loads(unpack(tmp_path / "x.zip")["data/demo-v1.json"])
    uids = [t["uid"] for d in documents for t in [d["table"], *d.get("more_tables", [])]]
    assert len(uids) == len(set(uids)) == 6
    items = {item["uid"]: item for item in release.items.values_list("data", flat=True)}
    for document in documents:
        item = items[document["questions"][0]["uid"]]
        paper, short = item["paper"], item["short_context"]
        # The whole paper's document keeps the table's key; a short context's adds its own name to it.
        assert document["table"]["uid"] == f"{paper}/table-0" + (short.removeprefix(paper) if short else "")
    assert parse_tatqa(documents).contexts  # TAT-QA's loader here refuses a table uid twice
    write_export_zip(release, "tatqa", tmp_path / "again.zip")
    assert unpack(tmp_path / "again.zip")["data/demo-v1.json"] == unpack(tmp_path / "x.zip")["data/demo-v1.json"]


# A curated question of every kind TAT-QA's layout writes: (context, question, answer, answer type, scale[, program]).
PERCENTAGE_CHANGE = "subtract(1200, 1000), divide(#0, 1000), multiply(#1, const_100)"
EVERY_KIND: tuple[tuple, ...] = (
    ("first", "What was revenue in 2019?", ["1,200"], "span", "thousand"),
    ("first", "Which items rose?", ["Revenue", "Profit"], "multi-span", ""),
    ("first", "By how much did revenue change?", ["200"], "arithmetic", "thousand", "subtract(1200, 1000)"),
    ("second", "What was the percentage change in revenue?", ["20%"], "arithmetic", "percent", PERCENTAGE_CHANGE),
    ("second", "What share of revenue is profit?", ["75"], "arithmetic", "percent"),
    ("second", "What is the ratio of 2018 to 2019 revenue?", ["0.83"], "arithmetic", "", "divide(1000, 1200)"),
    (
        "second",
        "What is the total of revenue and profit in 2019?",
        ["2,100"],
        "arithmetic",
        "thousand",
        "add(1200, 900)",
    ),
    ("second", "How many items are above 500 in 2019?", ["2"], "count", ""),
    ("second", "How many customers did the firm serve?", ["1,250"], "count", ""),
    ("paper", "What is the lowest share?", ["(0.48)"], "span", ""),  # an extreme value, as its cell writes it
    ("paper", "What is the lowest value in 2019?", ["(300)"], "span", "thousand"),
    ("paper", "By how much did cost change?", ["-550"], "arithmetic", "thousand", "subtract(-300, 250)"),
    ("paper", "What share of 2019 revenue is cost?", ["-25.14%"], "arithmetic", "percent"),
)
# Curated arithmetic answers carry a derivation, not a program: FinQA's layout writes the derivation's steps when they
# execute to the answer (profit's share: 900/1,200 is 75 %), and no program for one that computes something else
# (the cost's (300) read as a bracket: 25 %, not -25.14 %).
DERIVATIONS = {"What share of revenue is profit?": "900/1,200", "What share of 2019 revenue is cost?": "(300)/1,200"}
WITH_A_PROGRAM = {question for _, question, *rest in EVERY_KIND if len(rest) == 4} | {
    "What share of revenue is profit?"
}


@pytest.fixture
def every_kind_release(project):
    """A release of validated questions of every answer type and scale, on two short contexts citing one table and on
    the whole paper, with an unanswerable question beside them."""
    batch = BatchFactory(project=project, name="Every kind")
    paper = PaperFactory(project=project, title="Annual report")
    table = TableFactory(
        paper=paper,
        cells=[
            ["Item", "2019", "2018", "Share"],
            ["Revenue", "1,200", "1,000", "12.5%"],
            ["Cost", "(300)", "250", "(0.48)"],
            ["Profit", "900", "750", "7.5%"],
        ],
    )
    contexts = {
        "first": ShortContextFactory(paper=paper, tables=[table], paragraph__text="Revenue grew (in thousands)."),
        "second": ShortContextFactory(paper=paper, tables=[table], paragraph__text="Costs fell in 2019."),
        "paper": LongContextFactory(paper=paper),
    }
    for context, question, answer, answer_type, scale, *program in EVERY_KIND:
        ValidatedInstanceFactory(
            project=project, batch=batch, context=contexts[context], question=question, rationale="From the table.",
            answer=answer, answer_type=answer_type, scale=scale, answer_form="short", answer_source="table",
            relevant_tables=[table], program=program[0] if program else "", derivation=DERIVATIONS.get(question, ""),
        )  # fmt: skip
    ValidatedInstanceFactory(
        project=project, batch=batch, context=contexts["paper"], question="What was revenue in 2017?", answer=[],
        answer_type="", scale=None, is_answerable=False, unanswerable_reason="The table starts in 2018.",
    )  # fmt: skip
    return release_cut(project=project, actor=None, name="kinds", batch_ids=[batch.pk], split_seed=3)


@pytest.mark.parametrize("fmt", ["tatqa", "tatdqa", "finqa"])
def test_tatqa_and_finqa_layouts_leave_out_unanswerable_questions_and_finqa_those_without_a_program(
    every_kind_release, fmt, tmp_path
):
    # Neither benchmark has an abstention. The unanswerable question, with no scale, used to stop the whole TAT-QA
    # export; in FinQA's it was written with an empty exe_ans, which FinQA's importer reads back as an answer. FinQA
    # scores a question by running its program: one without (span, multi-span, count) was written with an empty
    # program, on which FinQA's evaluator stops with an IndexError.
    write_export_zip(every_kind_release, fmt, tmp_path / "x.zip")
    files = unpack(tmp_path / "x.zip")
    data = json.loads(files["data/kinds-v1.json"])
    questions = (
        [r["qa"]["question"] for r in data] if fmt == "finqa" else [q["question"] for d in data for q in d["questions"]]
    )
    kept = [kind for kind in EVERY_KIND if fmt != "finqa" or kind[1] in WITH_A_PROGRAM]
    assert questions == [question for _, question, *_ in kept]
    benchmark = {"tatqa": "TAT-QA", "tatdqa": "TAT-DQA", "finqa": "FinQA"}[fmt]
    left_out = f"Left out of this layout: 1 question of the unanswerable split ({benchmark} has no abstention)"
    if fmt == "finqa":
        left_out += " and 7 questions with no program"
    card = files["README.md"].decode()
    assert left_out in card and "the scitat, jsonl, csv, parquet and hf layouts carry every question" in card


def test_a_curated_tatqa_export_scores_every_question_perfectly_against_itself_and_reads_back(
    every_kind_release, tmp_path
):
    """The self-scoring property: TAT-QA's scorer (official mode: tatqa_eval.py's reading), given each gold question's
    own answer and scale as the prediction, scores EM 1 and F1 1 on every question (a gold that cannot score 1
    against itself is a broken record), and the file reads back through TAT-QA's importer with every question."""
    write_export_zip(every_kind_release, "tatqa", tmp_path / "x.zip")
    documents = json.loads(unpack(tmp_path / "x.zip")["data/kinds-v1.json"])
    questions = [q for d in documents for q in d["questions"]]
    assert [q["question"] for q in questions] == [question for _, question, *_ in EVERY_KIND]
    # TAT-QA's conventions: an arithmetic answer is a number, a computed percentage its number with the scale percent.
    assert {q["question"]: q["answer"] for q in questions if q["answer_type"] == "arithmetic"} == {
        "By how much did revenue change?": 200,
        "What was the percentage change in revenue?": 20,
        "What share of revenue is profit?": 75,
        "What is the ratio of 2018 to 2019 revenue?": 0.83,
        "What is the total of revenue and profit in 2019?": 2100,
        "By how much did cost change?": -550,
        "What share of 2019 revenue is cost?": -25.14,
    }
    assert [q["answer"] for q in questions if q["answer_type"] == "count"] == ["2", "1250"]  # as int() reads it
    own = {q["uid"]: [q["answer"], q["scale"]] for q in questions}
    for mode in tatqa.MODES:
        report = tatqa.score_dataset(documents, own, mode=mode)
        assert [(s.uid, s.em, s.f1) for s in report.questions if (s.em, s.f1) != (1.0, 1.0)] == [], mode
        assert report.scale_accuracy == 1.0
    parsed = parse_tatqa(documents)
    assert [q.fields["question"] for q in parsed.questions] == [q["question"] for q in questions]
    assert len({t.key for c in parsed.contexts for t in c.tables}) == 3  # two short contexts cite one table


def test_a_curated_finqa_export_executes_every_program_to_its_exe_ans(every_kind_release, tmp_path):
    """FinQA's evaluator (scoring.metrics.finqa, official mode) runs a program and compares its result with exe_ans
    exactly: each gold program, given as the prediction, is right on execution and on program."""
    write_export_zip(every_kind_release, "finqa", tmp_path / "x.zip")
    records = json.loads(unpack(tmp_path / "x.zip")["data/kinds-v1.json"])
    assert {r["qa"]["question"]: r["qa"]["exe_ans"] for r in records} == {
        "By how much did revenue change?": 200.0,
        "What was the percentage change in revenue?": 20.0,  # the answer "20%"
        "What share of revenue is profit?": 0.75,  # the answer 75 with the scale percent, from its derivation 900/1,200
        "What is the ratio of 2018 to 2019 revenue?": 0.83333,  # the answer 0.83
        "What is the total of revenue and profit in 2019?": 2100.0,  # the answer "2,100"
        "By how much did cost change?": -550.0,
    }
    own = {record["id"]: finqa.program_tokenization(record["qa"]["program"]) for record in records}
    report = finqa.score_dataset(records, own)
    assert (report.execution_accuracy, report.program_accuracy) == (1.0, 1.0)


def test_json_array_writer_streams_element_by_element():
    out = io.StringIO()
    written_when_asked = []

    def values():
        for i in range(3):
            written_when_asked.append(len(out.getvalue()))
            yield {"i": i}

    assert write_json_array(out, values()) == 3
    assert written_when_asked[0] < written_when_asked[1] < written_when_asked[2]
    assert json.loads(out.getvalue()) == [{"i": 0}, {"i": 1}, {"i": 2}]


def test_small_export_is_built_once_and_cached(release, monkeypatch, release_world):
    calls = []
    real = EXPORT_BUILDS.run

    def counting(pk, **kwargs):
        calls.append(pk)
        return real(pk, **kwargs)

    monkeypatch.setattr(EXPORT_BUILDS, "run", counting)
    first = export_request(release=release, actor=release_world["people"]["manager"], format="csv")
    second = export_request(release=release, actor=release_world["people"]["manager"], format="csv")
    assert first.state == second.state == ExportArtifact.State.READY
    assert first.pk == second.pk and first.sha256 == second.sha256 and len(calls) == 1


def test_big_export_goes_to_the_worker_after_commit(release, monkeypatch, sent, django_capture_on_commit_callbacks):
    monkeypatch.setattr(export_services, "SYNC_EXPORT_MAX_ITEMS", 0)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        artifact = export_request(release=release, actor=None, format="jsonl")
        assert sent == []  # nothing leaves before the artifact row is committed
    assert len(callbacks) == 1 and sent == [("curation.export_build", [artifact.pk])]
    assert artifact.state == ExportArtifact.State.PENDING
    assert export_build_task(artifact.pk) == "ready"
    artifact.refresh_from_db()
    assert artifact.items_done == artifact.items_total == 6 and artifact.path
    mtime = (export_services.Path(export_services.settings.MEDIA_ROOT) / artifact.path).stat().st_mtime_ns
    assert export_build_task(artifact.pk) == "ready"  # a redelivered task leaves the finished file alone
    assert (export_services.Path(export_services.settings.MEDIA_ROOT) / artifact.path).stat().st_mtime_ns == mtime


def test_failed_export_is_recorded_and_can_be_retried(release, monkeypatch):
    import curation.exports as exports

    artifact = ExportArtifact.objects.create(release=release, format="csv", items_total=6)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(exports, "write_export_zip", broken)
    with pytest.raises(OSError):
        EXPORT_BUILDS.run(artifact.pk)
    artifact.refresh_from_db()
    assert artifact.state == ExportArtifact.State.FAILED and "disk full" in artifact.error
    monkeypatch.undo()
    retried = export_request(release=release, actor=None, format="csv")
    assert retried.state == ExportArtifact.State.READY


def test_export_command_writes_the_zip(release, tmp_path):
    from django.core.management import call_command

    out = io.StringIO()
    target = tmp_path / "out" / "demo.zip"
    call_command(
        "export_release",
        "--release",
        "demo",
        "--project",
        release.project.slug,
        "--format",
        "scitat",
        "--out",
        str(target),
        "--json",
        stdout=out,
    )
    result = json.loads(out.getvalue())
    assert result["items"] == 6 and result["sha256"] == hashlib.sha256(target.read_bytes()).hexdigest()


def test_source_papers_list_in_number_order_not_text_order():
    from curation.exports import _natural

    assert sorted(["paper-10", "paper-9", "tatqa:b", "paper-100"], key=_natural) == [
        "paper-9",
        "paper-10",
        "paper-100",
        "tatqa:b",
    ]


def exported_tatdqa(release, tmp_path) -> tuple[list[dict], str]:
    write_export_zip(release, "tatdqa", tmp_path / "tatdqa.zip")
    files = unpack(tmp_path / "tatdqa.zip")
    return json.loads(files[f"data/{release.label}.json"]), files["README.md"].decode()


def test_tatdqa_card_says_documents_curated_from_latex_carry_only_their_uid(release, tmp_path):
    documents, card = exported_tatdqa(release, tmp_path)
    assert documents and all(list(document["doc"]) == ["uid"] for document in documents)
    assert f"`doc` holds {{uid}} in {len(documents)} documents." in card
    assert "its `uid` is the paper's key" in card
    assert "page, source" not in card and "tie a document imported from TAT-DQA" not in card


def test_tatdqa_card_counts_the_doc_keys_the_file_really_holds(project, shared_data, tmp_path):
    documents = json.loads((shared_data / "tatdqa" / "tatdqa_dataset_dev.json").read_bytes())[:5]
    imported = dataset_import(
        project=project,
        actor=None,
        format="tatdqa",
        source_name="dev.json",
        content=json.dumps(documents).encode(),
        as_release="tatdqa-dev",
    )
    written, card = exported_tatdqa(imported.release, tmp_path)
    shapes = Counter(tuple(document["doc"]) for document in written)
    assert shapes == {("uid", "page", "source"): 5}, shapes
    assert "`doc` holds {uid, page, source} in 5 documents." in card
    assert "tie a document imported from TAT-DQA to its PDF page" in card and "paper's key" not in card
