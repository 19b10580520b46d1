"""A run's headline is the native metric of its release's format, named as such; SciTaT runs use the official mode."""

from __future__ import annotations

from scoring.runs import results


def tatqa_item(uid, answer, answer_type="span", scale=""):
    native = {"uid": uid, "answer": answer, "answer_type": answer_type, "scale": scale, "answer_from": "table"}
    items = answer if isinstance(answer, list) else [str(answer)]
    return {"uid": uid, "answer": items, "answer_type": answer_type, "scale": scale, "source_format": "tatqa",
            "native": native, "answer_form": "short"}  # fmt: skip


def scitat_item(uid, answer, answer_type):
    native = {"id": uid, "answer": answer, "answer_type": answer_type}
    return {"uid": uid, "answer": answer, "answer_type": answer_type, "source_format": "scitat", "native": native}


def scored(item, answer, scale=""):
    return {**results.item_metrics(item, answer=answer, scale=scale), "uid": item["uid"], "status": "scored"}


def test_tatqa_run_headline_is_tatqa_em_and_f1_with_scale():
    records = [
        scored(tatqa_item("a", 2.5, "arithmetic", "million"), ["2.5"], "million"),
        scored(tatqa_item("b", 2.5, "arithmetic", "million"), ["2.5"], ""),
    ]
    headline = results.run_summary(records, resamples=50)["headline"]
    assert (headline["format"], headline["benchmark"], headline["scitat_mode"]) == ("tatqa", "TAT-QA", None)
    figures = {figure["label"]: figure["mean"] for figure in headline["figures"]}
    assert figures == {"TAT-QA EM (with scale)": 0.5, "TAT-QA F1 (with scale)": 0.5}


def test_scitat_run_headline_is_the_official_evaluate_py_figure():
    # An unsorted integer list: SciTaT's evaluate.py compares str(['12', '7']) and never matches; fixed mode does.
    item = scitat_item("s1", ["12", "7"], "arithmetic")
    record = scored(item, ["7", "12"])
    assert (record["em"], record["scitat_em"]) == (1.0, 0.0)
    headline = results.run_summary([record], resamples=50)["headline"]
    assert (headline["benchmark"], headline["scitat_mode"]) == ("SciTaT", "official")
    assert [(figure["label"], figure["mean"]) for figure in headline["figures"]] == [
        ("SciTaT EM (short-form, official)", 0.0)
    ]


def test_a_gold_answer_the_official_script_cannot_score_is_counted_apart():
    record = scored(scitat_item("n", ["3"], "count"), ["3"])  # str(int(['3'])) stops evaluate.py
    assert record["scitat_unscorable"] is True and "scitat_em" not in record
    assert results.run_summary([record], resamples=50)["headline"]["unscorable_by_official"] == 1


def test_finqa_run_headline_is_execution_accuracy():
    item = {"uid": "f", "answer": ["3.0"], "source_format": "finqa", "native": {"qa": {"exe_ans": 3.0}}}
    headline = results.run_summary([scored(item, ["3"])], resamples=50)["headline"]
    assert [(figure["label"], figure["mean"]) for figure in headline["figures"]] == [("FinQA execution accuracy", 1.0)]
