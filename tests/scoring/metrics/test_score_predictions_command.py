"""The score_predictions command: the issue's CLI, JSON and details output, clear errors, unknown uids not fatal."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.metrics import finqa
from tests.scoring.metrics.shared_data import shared_data_dir


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("score_predictions", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def write(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


TATQA_GOLD = [
    {
        "questions": [
            {"uid": "u1", "answer": ["yes"], "answer_type": "span", "scale": "", "answer_from": "text"},
            {"uid": "u2", "answer": 2.5, "answer_type": "arithmetic", "scale": "million", "answer_from": "table"},
        ]
    }
]


def test_tatqa_json_and_details_on_the_official_sample(tmp_path):
    data = shared_data_dir() / "tatqa"
    details = tmp_path / "details.jsonl"
    out, _ = run(
        "--format", "tatqa",
        "--gold", str(data / "tatqa_dataset_dev.json"),
        "--pred", str(data / "sample_prediction.json"),
        "--json", "--details", str(details),
    )  # fmt: skip
    summary = json.loads(out)
    assert f"{summary['em'] * 100:.2f}" == "45.92"
    assert f"{summary['f1'] * 100:.2f}" == "58.88"
    assert f"{summary['scale_accuracy'] * 100:.2f}" == "90.95"
    assert summary["mode"] == "official"
    assert summary["scale_mode"] == "predicted"
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1668
    assert {"uid", "em", "f1"} <= set(rows[0])


def test_unknown_uids_are_reported_not_fatal(tmp_path):
    gold = write(tmp_path / "gold.json", TATQA_GOLD)
    pred = write(tmp_path / "pred.json", {"u1": [["yes"], ""], "ghost": [["x"], ""]})
    out, err = run("--format", "tatdqa", "--gold", gold, "--pred", pred, "--json")
    assert json.loads(out)["em"] == 0.5
    assert "ghost" in err
    assert json.loads(out)["unknown_uids"] == ["ghost"]


def test_scale_ignore_is_stated_in_the_output(tmp_path):
    gold = write(tmp_path / "gold.json", TATQA_GOLD)
    pred = write(tmp_path / "pred.json", {"u1": [["yes"], ""], "u2": [2.5, ""]})
    summary = json.loads(run("--format", "tatqa", "--gold", gold, "--pred", pred, "--scale", "ignore", "--json")[0])
    assert summary["scale_mode"] == "ignore"
    assert summary["em"] == 1.0


@pytest.mark.parametrize(
    ("predictions", "message"),
    [
        ({"u1": "yes"}, "uid u1: expected [answer, scale]"),
        ({"u1": [["yes"], 3]}, "uid u1: scale must be a string"),
        ([1, 2], "expected an object"),
    ],
)
def test_malformed_tatqa_predictions_name_file_uid_and_fault(tmp_path, predictions, message):
    gold = write(tmp_path / "gold.json", TATQA_GOLD)
    pred = write(tmp_path / "pred.json", predictions)
    with pytest.raises(CommandError) as error:
        run("--format", "tatqa", "--gold", gold, "--pred", pred)
    assert message in str(error.value)
    assert "pred.json" in str(error.value)


def test_invalid_json_names_the_line(tmp_path):
    gold = write(tmp_path / "gold.json", TATQA_GOLD)
    pred = tmp_path / "pred.json"
    pred.write_text('{\n"u1": [["yes"], ""],,\n}', encoding="utf-8")
    with pytest.raises(CommandError, match=r"pred\.json: not valid JSON at line 2"):
        run("--format", "tatqa", "--gold", gold, "--pred", str(pred))


def test_gold_question_without_answer_type_is_named(tmp_path):
    gold = write(tmp_path / "gold.json", [{"questions": [{"uid": "u9", "answer": ["x"]}]}])
    pred = write(tmp_path / "pred.json", {})
    with pytest.raises(CommandError, match="uid u9: missing answer_type"):
        run("--format", "tatqa", "--gold", gold, "--pred", pred)


def test_finqa_gold_programs_score_full_execution_accuracy_with_details(tmp_path):
    gold_path = shared_data_dir() / "finqa" / "finqa_dev_200.json"
    records = json.loads(gold_path.read_text(encoding="utf-8"))[:20]
    gold = write(tmp_path / "gold.json", records)
    predictions = [{"id": r["id"], "predicted": finqa.program_tokenization(r["qa"]["program"])} for r in records]
    pred = write(tmp_path / "pred.json", predictions)
    details = tmp_path / "details.jsonl"
    summary = json.loads(
        run("--format", "finqa", "--gold", gold, "--pred", pred, "--json", "--details", str(details))[0]
    )
    assert summary["execution_accuracy"] == 1.0
    assert summary["em"] == 1.0
    row = json.loads(details.read_text(encoding="utf-8").splitlines()[0])
    assert row["exe_correct"] is True
    assert row["prog_correct"] is True


def test_finqa_prediction_without_tokens_is_named(tmp_path):
    gold = write(tmp_path / "gold.json", [{"id": "f1", "table": [], "qa": {"program": "add(1, 2)", "exe_ans": 3.0}}])
    pred = write(tmp_path / "pred.json", [{"id": "f1", "predicted": "add(1, 2)"}])
    with pytest.raises(CommandError, match="id f1: 'predicted' must be a list"):
        run("--format", "finqa", "--gold", gold, "--pred", pred)


def test_scitat_details_carry_short_form(tmp_path):
    gold = write(
        tmp_path / "gold.json",
        [{"id": "s", "answer": ["BERT"]}, {"id": "f", "answer": ["the model improves accuracy on all tasks"]}],
    )
    pred = write(tmp_path / "pred.json", {"s": "Reason: r\nAnswer: BERT", "f": ["the model improves accuracy"]})
    details = tmp_path / "details.jsonl"
    summary = json.loads(
        run(
            "--format", "scitat", "--gold", gold, "--pred", pred, "--no-bertscore", "--json", "--details", str(details)
        )[0]
    )
    assert summary["em"] == 1.0
    assert summary["bertscore"] is None
    rows = {row["uid"]: row for row in map(json.loads, details.read_text(encoding="utf-8").splitlines())}
    assert rows["s"]["short_form"] is True
    assert rows["f"]["short_form"] is False
    assert rows["f"]["em"] is None


def test_finqa_summary_names_the_official_and_the_gold_denominator_figures(tmp_path):
    gold_path = shared_data_dir() / "finqa" / "finqa_dev_200.json"
    records = json.loads(gold_path.read_text(encoding="utf-8"))[:5]
    gold = write(tmp_path / "gold.json", records)
    predictions = [{"id": r["id"], "predicted": finqa.program_tokenization(r["qa"]["program"])} for r in records[:4]]
    predictions.append(dict(predictions[0]))
    pred = write(tmp_path / "pred.json", predictions)
    out, _ = run("--format", "finqa", "--gold", gold, "--pred", pred)
    assert "Execution accuracy (official: over 5 predictions) 100.00" in out
    assert "Execution accuracy over 5 gold questions (missing = wrong) 80.00" in out
    assert f"duplicate_uids: 1 ({records[0]['id']})" in out
    assert "Exact-match" not in out
    summary = json.loads(run("--format", "finqa", "--gold", gold, "--pred", pred, "--json")[0])
    assert (summary["em"], summary["execution_accuracy_over_gold"]) == (1.0, 0.8)
    fixed = json.loads(run("--format", "finqa", "--mode", "fixed", "--gold", gold, "--pred", pred, "--json")[0])
    assert fixed["em"] == 0.8


def test_finqa_numeric_answers_say_they_are_not_an_official_figure(tmp_path):
    gold = write(tmp_path / "gold.json", [{"id": "f1", "table": [], "qa": {"program": "add(1, 2)", "exe_ans": 3.0}}])
    pred = write(tmp_path / "pred.json", [{"id": "f1", "answer": 3}])
    out, _ = run("--format", "finqa", "--gold", gold, "--pred", pred)
    assert "Numeric-answer accuracy (not official) 100.00" in out
    assert "note: FinQA's evaluate.py scores programs only" in out


def test_tatqa_null_scale_is_scored_and_the_output_says_the_official_script_stops(tmp_path):
    gold = write(tmp_path / "gold.json", TATQA_GOLD)
    pred = write(tmp_path / "pred.json", {"u1": ["yes", ""], "u2": [2.5, None]})
    out, _ = run("--format", "tatqa", "--gold", gold, "--pred", pred)
    assert "note: predictions with a null scale (1, e.g. u2): the official tatqa_eval.py stops" in out


def test_tatqa_dict_answer_is_scored_as_text_not_refused_whole(tmp_path):
    gold = write(tmp_path / "gold.json", TATQA_GOLD)
    pred = write(tmp_path / "pred.json", {"u1": ["yes", ""], "u2": [{"value": 2.5}, "million"]})
    out, _ = run("--format", "tatqa", "--gold", gold, "--pred", pred, "--json")
    summary = json.loads(out)
    assert summary["em"] == 0.5
    assert any("answers that are JSON objects (1, e.g. u2): read as their text" in note for note in summary["notes"])


@pytest.mark.parametrize("mode", ["official", "tatllm"])
def test_a_non_finite_prediction_is_a_wrong_marked_row_and_the_file_is_scored(tmp_path, mode):
    gold_data = [{"questions": [*TATQA_GOLD[0]["questions"], {**TATQA_GOLD[0]["questions"][1], "uid": "u3"}]}]
    gold = write(tmp_path / "gold.json", gold_data)
    pred = tmp_path / "pred.json"
    # tatqa_eval.py's json.load reads these constants; the file is scored, the rows are wrong.
    pred.write_text('{"u1": [["yes"], ""], "u2": [NaN, "million"], "u3": [[Infinity, -Infinity], "million"]}')
    out, _ = run("--format", "tatqa", "--gold", gold, "--pred", str(pred), "--mode", mode, "--json",
                 "--details", str(tmp_path / "details.jsonl"))  # fmt: skip
    summary = json.loads(out)
    assert summary["em"] == pytest.approx(1 / 3) and summary["non_finite_uids"] == ["u2", "u3"]
    assert summary["scale_accuracy"] == 1.0  # the scale is still read, as the official script reads it
    rows = {row["uid"]: row for row in map(json.loads, (tmp_path / "details.jsonl").read_text().splitlines())}
    assert [rows[uid]["is_non_finite"] for uid in ("u1", "u2", "u3")] == [False, True, True]
    assert rows["u2"]["em"] == rows["u3"]["f1"] == 0.0
    text, _ = run("--format", "tatqa", "--gold", gold, "--pred", str(pred), "--mode", mode)
    assert "non_finite_uids: 2 (u2, u3)" in text


def test_a_non_finite_number_in_a_gold_file_is_still_refused(tmp_path):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(TATQA_GOLD).replace("2.5", "NaN"))
    pred = write(tmp_path / "pred.json", {"u1": [["yes"], ""]})
    with pytest.raises(CommandError, match="not a finite number"):
        run("--format", "tatqa", "--gold", str(gold), "--pred", pred)


def test_a_finqa_id_not_in_the_gold_reports_the_official_failure_and_labels_our_figure(tmp_path):
    gold_path = shared_data_dir() / "finqa" / "finqa_dev_200.json"
    records = json.loads(gold_path.read_text(encoding="utf-8"))[:5]
    gold = write(tmp_path / "gold.json", records)
    predictions = [{"id": r["id"], "predicted": finqa.program_tokenization(r["qa"]["program"])} for r in records]
    predictions.insert(2, {"id": "ghost", "predicted": ["add(", "1", "2", ")", "EOF"]})
    pred = write(tmp_path / "pred.json", predictions)
    out, _ = run("--format", "finqa", "--gold", gold, "--pred", pred)
    assert "(official" not in out  # no figure is labelled official
    assert "stops with a KeyError at prediction 3 of 6 (id 'ghost' is not in the gold file)" in out
    assert "Execution accuracy (ours, not official: over the 5 predictions whose id is in the gold) 100.00" in out
    summary = json.loads(run("--format", "finqa", "--gold", gold, "--pred", pred, "--json")[0])
    assert summary["execution_accuracy"] is None and summary["em"] is None
    assert summary["execution_accuracy_over_known"] == 1.0 and summary["unknown_uids"] == ["ghost"]


def test_a_finqa_gold_without_a_program_scored_against_itself_is_named_not_a_crash(tmp_path):
    # A question with no program (span, multi-span, count), scored gold against gold: evaluate.py stops with an
    # IndexError, and so did this command, unhandled.
    records = [
        {"id": "f1", "table": [], "qa": {"program": "add(1, 2)", "exe_ans": 3.0}},
        {"id": "f2", "table": [], "qa": {"program": "", "exe_ans": ""}},
    ]
    gold = write(tmp_path / "gold.json", records)
    own = [{"id": r["id"], "predicted": finqa.program_tokenization(r["qa"]["program"])} for r in records]
    pred = write(tmp_path / "pred.json", own)
    out, _ = run("--format", "finqa", "--gold", gold, "--pred", pred)
    assert "(official" not in out
    assert "stops with an IndexError at prediction 2 of 2 (id 'f2': its gold program is empty)" in out
    assert "Execution accuracy over 2 gold questions (missing = wrong) 50.00" in out
    summary = json.loads(run("--format", "finqa", "--mode", "fixed", "--gold", gold, "--pred", pred, "--json")[0])
    assert summary["em"] == 0.5 and summary["execution_accuracy"] is None


@pytest.mark.parametrize("mode", ["official", "fixed"])
def test_a_scitat_file_without_free_form_questions_reports_no_f1(tmp_path, mode):
    gold = write(tmp_path / "gold.json", [{"id": "s", "answer": ["BERT"]}, {"id": "t", "answer": ["12.5"]}])
    pred = write(tmp_path / "pred.json", {"s": ["BERT"], "t": ["12.5"]})
    args = ("--format", "scitat", "--gold", gold, "--pred", pred, "--no-bertscore", "--mode", mode)
    summary = json.loads(run(*args, "--json")[0])
    assert (summary["free_form_count"], summary["f1"], summary["em"]) == (0, None, 1.0)
    out, _ = run(*args)
    assert "SciTaT EM (short-form questions) 100.00" in out and "F1" not in out
    free = write(tmp_path / "free.json", [{"id": "f", "answer": ["the model improves accuracy on all tasks"]}])
    summary = json.loads(run("--format", "scitat", "--gold", free, "--pred", pred, "--no-bertscore", "--json")[0])
    assert summary["short_form_count"] == 0 and summary["em"] is None


def test_python_m_scoring_metrics_prints_what_the_command_prints_without_django_or_sympy(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    gold = write(tmp_path / "gold.json", TATQA_GOLD)
    pred = write(tmp_path / "pred.json", {"u1": [["yes"], ""], "u2": [2.5, "million"], "ghost": [["x"], ""]})
    args = ["--format", "tatqa", "--gold", gold, "--pred", pred]
    # Run as `python -m scoring.metrics` does, then list what the process imported.
    script = (
        "import runpy, sys; sys.argv = ['scoring.metrics', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('scoring.metrics', run_name='__main__')\nexcept SystemExit as stop:\n"
        "    assert not stop.code, stop.code\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'celery', 'sympy', 'numpy'}))"
    )
    root = Path(__file__).resolve().parents[3]
    completed = subprocess.run(
        [sys.executable, "-c", script, *args], cwd=root, capture_output=True, text=True, check=True
    )
    *lines, loaded = completed.stdout.splitlines()
    assert loaded == "[]"
    out, err = run(*args)
    assert lines == out.splitlines() and "Exact-match accuracy 100.00" in lines
    assert completed.stderr.strip() == err.strip()  # the unknown uid, named the same way
    failed = subprocess.run(
        [sys.executable, "-m", "scoring.metrics", "--format", "tatqa", "--gold", gold, "--pred", str(tmp_path / "no")],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert failed.returncode == 2 and "cannot read" in failed.stderr
