"""SciTaT official mode: `score_predictions --format scitat --mode official` equals SciTaT's evaluate.py per question.

The expected values in data/scitat_official/official_figures.json come from SciTaT's own code (see the README there).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.metrics import benchmarks, scitat

DATA = Path(__file__).parent / "data" / "scitat_official"
OFFICIAL = json.loads((DATA / "official_figures.json").read_text(encoding="utf-8"))["runs"]


class PairRecorder:
    """A BERTScore stand-in that records the strings it is asked to compare."""

    def __init__(self):
        self.pairs = []

    def f1_many(self, candidates, references):
        self.pairs.extend(zip(candidates, references, strict=True))
        return [1.0 for _ in candidates]

    def info(self):
        return {"metric": "recorder", "model": "none", "layer": 0}


def run_command(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("score_predictions", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.parametrize("predictions", sorted(OFFICIAL))
def test_official_mode_equals_scitat_evaluate_on_every_question(tmp_path, predictions):
    expected = OFFICIAL[predictions]
    details = tmp_path / "details.jsonl"
    out, _ = run_command(
        "--format", "scitat", "--mode", "official", "--gold", str(DATA / "gold.json"),
        "--pred", str(DATA / predictions), "--no-bertscore", "--json", "--details", str(details),
    )  # fmt: skip
    summary = json.loads(out)
    assert summary["mode"] == "official"
    assert (summary["count"], summary["short_form_count"], summary["free_form_count"]) == (
        expected["count"],
        expected["short_form_count"],
        expected["free_form_count"],
    )
    assert summary["em"] == pytest.approx(expected["em"])
    assert summary["f1"] == pytest.approx(expected["f1"])
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    ours = [(row["uid"], row["short_form"], row["em"] if row["short_form"] else row["f1"]) for row in rows]
    theirs = [(q["id"], q["short_form"], q["em"] if q["short_form"] else q["f1"]) for q in expected["questions"]]
    assert ours == theirs


@pytest.mark.parametrize("predictions", sorted(OFFICIAL))
def test_official_bertscore_compares_the_strings_scitat_compares(predictions):
    recorder = PairRecorder()
    benchmarks.score_files("scitat", DATA / "gold.json", DATA / predictions, mode="official", bertscorer=recorder)
    expected = [tuple(q["bertscore_pair"]) for q in OFFICIAL[predictions]["questions"] if not q["short_form"]]
    assert recorder.pairs == expected


def test_official_leaves_unpredicted_questions_out_and_fixed_counts_them_as_zero():
    official = benchmarks.score_files("scitat", DATA / "gold.json", DATA / "predictions.json", mode="official")
    fixed = benchmarks.score_files("scitat", DATA / "gold.json", DATA / "predictions.json", mode="fixed")
    assert official.summary["missing_uids"] == ["2401.00001-11", "2401.00001-12"]
    assert official.summary["count"] == 14
    assert fixed.summary["count"] == 16
    assert official.unknown_uids == fixed.unknown_uids == ["9999.99999-1"]
    fixed_rows = {row["uid"]: row for row in fixed.details}
    # An unsorted integer list: str(['12', '7']) never equals a prediction in official mode; fixed compares items.
    assert fixed_rows["2401.00001-1"]["em"] == 1.0
    assert {row["uid"]: row for row in official.details}["2401.00001-1"]["em"] == 0.0


def test_official_counts_a_duplicate_prediction_twice_and_reports_it(tmp_path):
    gold = DATA / "gold.json"
    pred = tmp_path / "pred.json"
    pred.write_text(
        json.dumps([{"id": "2401.00001-6", "pred": ["BERT"]}, {"id": "2401.00001-6", "pred": ["GPT"]}]),
        encoding="utf-8",
    )
    report = benchmarks.score_files("scitat", gold, pred, mode="official")
    assert report.summary["duplicate_uids"] == ["2401.00001-6"]
    assert [row["em"] for row in report.details] == [1.0, 0.0]
    assert report.summary["em"] == 0.5


def test_records_without_id_take_gold_ids_by_position(tmp_path):
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps([{"pred": ["12", "7"]}, {"pred": ["1.5", "2.25"]}]), encoding="utf-8")
    report = benchmarks.score_files("scitat", DATA / "gold.json", pred, mode="official")
    assert [row["uid"] for row in report.details] == ["2401.00001-1", "2401.00001-2"]


def test_record_without_a_prediction_key_is_named(tmp_path):
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps([{"id": "2401.00001-6", "text": "BERT"}]), encoding="utf-8")
    with pytest.raises(CommandError, match=r"id 2401\.00001-6: needs one of pred, predict, answer, response, output"):
        run_command("--format", "scitat", "--gold", str(DATA / "gold.json"), "--pred", str(pred), "--no-bertscore")


def test_tatllm_is_not_a_scitat_mode():
    with pytest.raises(CommandError, match="SciTaT scoring modes are official and fixed"):
        run_command(
            "--format", "scitat", "--mode", "tatllm", "--gold", str(DATA / "gold.json"),
            "--pred", str(DATA / "predictions.json"), "--no-bertscore",
        )  # fmt: skip


def test_a_number_as_gold_answer_is_refused_in_official_mode_as_the_script_crashes():
    with pytest.raises(ValueError, match="cannot score"):
        scitat.score_question_official({"id": "n", "answer": 3, "answer_type": "count"}, ["3"])
