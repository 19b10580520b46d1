"""The judge of free-form answers: verdicts with reasoning recorded per prediction (rubric version, judge model),
beside BERTScore and never changing an official metric; malformed replies kept as unparsed; people's labels and the
judge's agreement with them (Cohen's kappa with its interval), checked by hand on a small case."""

from __future__ import annotations

import hashlib

import pytest
from django.test import Client

from scoring.methods.templates import JUDGE
from scoring.metrics.judge import agreement, parse_verdict
from scoring.runs import chunks as run_chunks
from scoring.runs import creation as run_creation
from scoring.runs import lifecycle as run_lifecycle
from scoring.runs.models import Prediction, PredictionLabel
from scoring.runs.predictions import judge_agreement
from tests.support import fault_server as fs

from .run_support import endpoint_for, small_release

pytestmark = pytest.mark.django_db

JUDGED = "Reasoning: It names the cost-plus fee arrangement but not the funding levels.\nVerdict: partially correct"


def answering(judge_reply: str):
    """A server that answers questions with a fixed text and grades with `judge_reply` (told apart by the rubric)."""

    def respond(request):
        prompt = request["messages"][-1]["content"]
        return fs.ok(judge_reply) if "Answer to grade:" in prompt else fs.ok("Answer: allowable costs plus a profit")

    return fs.FaultServer(responder=respond).start()


def run_over(project, personas, server, *, judge: bool, documents: int = 1, name: str = "small"):
    release = small_release(project, documents=documents, questions=4, name=name)
    endpoint = endpoint_for(project, server.base_url, name=f"fault-{name}", max_attempts=1)
    run = run_creation.run_create(
        release=release, actor=personas["manager"], method="direct", endpoint=endpoint, use_cache=False,
        judge=endpoint if judge else None,
    )  # fmt: skip
    run_lifecycle.run_start(run=run, actor=personas["manager"])
    for chunk in run.chunks.all():
        assert run_chunks.chunk_process(chunk_id=chunk.pk) == "done"
    return run


@pytest.mark.parametrize(
    ("reply", "verdict", "score", "reasoning"),
    [
        ("Reasoning: Same facts.\nVerdict: correct", "correct", 1.0, "Same facts."),
        ("Reasoning: Half of it.\n**Verdict:** Partially correct", "partially correct", 0.5, "Half of it."),
        ("reasoning - wrong year\nverdict - INCORRECT", "incorrect", 0.0, "wrong year"),
        ("Verdict: correct", "correct", 1.0, ""),
    ],
)
def test_a_verdict_is_read_with_its_reasoning(reply, verdict, score, reasoning):
    assert parse_verdict(reply) == {"verdict": verdict, "score": score, "reasoning": reasoning}


def test_a_reply_without_a_verdict_is_kept_whole_as_unparsed():
    assert parse_verdict("I think it is fine.") == {
        "verdict": "unparsed", "score": None, "reasoning": "", "raw": "I think it is fine.",
    }  # fmt: skip


def test_kappa_and_its_interval_match_a_hand_computation():
    judge = [True] * 5 + [False] * 5
    person = [True] * 4 + [False] * 5 + [True]
    result = agreement(zip(judge, person, strict=True))
    # p_o = 8/10, p_e = .5*.5 + .5*.5 = .5, kappa = (.8-.5)/(1-.5) = .6; SE = sqrt(.8*.2/(10*.25)) = .2530
    assert result == {"n": 10, "agreement": 0.8, "kappa": 0.6, "low": 0.1042, "high": 1.0, "note": ""}
    few = agreement([(True, True)] * 3)
    assert few["kappa"] is None and few["note"].startswith("labelled predictions: 3; at least 10")


def test_the_judge_grades_free_form_answers_only_and_official_metrics_do_not_change(project, personas, sent):
    with answering(JUDGED) as server:
        judged = run_over(project, personas, server, judge=True)
        plain = run_over(project, personas, server, judge=False, name="again")
    free = Prediction.objects.get(run=judged, position=0)
    assert free.metrics["short_form"] is False
    assert free.stages["judge"] == {
        "verdict": "partially correct",
        "score": 0.5,
        "reasoning": "It names the cost-plus fee arrangement but not the funding levels.",
        "rubric": hashlib.sha256(JUDGE.encode()).hexdigest()[:12],
        "judge": "fault-model",
    }
    assert free.metrics["judge"] == 0.5
    for position in range(1, 4):  # short-form: scored exactly, never judged
        assert "judge" not in Prediction.objects.get(run=judged, position=position).stages
    for mine, theirs in zip(
        Prediction.objects.filter(run=judged).order_by("position"),
        Prediction.objects.filter(run=plain).order_by("position"),
        strict=True,
    ):
        assert {k: v for k, v in mine.metrics.items() if k != "judge"} == theirs.metrics
        assert mine.is_correct == theirs.is_correct
    judged.refresh_from_db()
    assert judged.results["figures"]["judge"]["mean"] == 0.5
    assert "judge" not in (plain.results or {}).get("figures", {})


def test_a_malformed_judge_reply_is_recorded_unparsed_and_scores_nothing(project, personas, sent):
    with answering("Looks fine to me!") as server:
        run = run_over(project, personas, server, judge=True)
    free = Prediction.objects.get(run=run, position=0)
    assert free.stages["judge"]["verdict"] == "unparsed" and free.stages["judge"]["raw"] == "Looks fine to me!"
    assert "judge" not in free.metrics and free.status == "scored"


def test_people_label_free_form_predictions_and_the_run_page_shows_the_agreement(project, personas, sent):
    with answering(JUDGED) as server:
        run = run_over(project, personas, server, judge=True, documents=3)
    free = Prediction.objects.get(run=run, position=0)
    client = Client()
    client.force_login(personas["verifier"])
    page = client.post(f"/p/{project.slug}/scoring/predictions/{free.pk}/label/", {"is_correct": "no"}, follow=True)
    assert "Your reading of this answer is saved." in page.content.decode()
    assert "partially correct" in page.content.decode()  # the judge's verdict beside the buttons
    assert PredictionLabel.objects.get(prediction=free, labelled_by=personas["verifier"]).is_correct is False
    run_page = client.get(f"/p/{project.slug}/scoring/runs/{run.pk}/").content.decode()
    assert "labelled predictions: 1; at least 10 are needed" in run_page
    run_options = run_page.split('id="run-options">')[1].split("</dd>")[0]
    assert "Judge of free-form answers" in run_page and "rubric" not in run_options  # a row, not the options' JSON

    short = Prediction.objects.get(run=run, position=1)
    refused = client.post(
        f"/p/{project.slug}/scoring/predictions/{short.pk}/label/", {"is_correct": "yes"}, follow=True
    )
    assert "Only free-form predictions are labelled" in refused.content.decode()

    # Ten labelled judged predictions: the judge says correct on the first five; people on 1-4 and the last.
    PredictionLabel.objects.all().delete()
    for index, prediction in enumerate(Prediction.objects.filter(run=run).order_by("position")[:10]):
        Prediction.objects.filter(pk=prediction.pk).update(stages={"judge": {"score": 1.0 if index < 5 else 0.0}})
        PredictionLabel.objects.create(
            prediction=prediction, labelled_by=personas["verifier"], is_correct=index < 4 or index == 9
        )
    assert judge_agreement(run)["kappa"] == 0.6
    assert "Cohen's κ 0.60 [0.10, 1.00]" in client.get(f"/p/{project.slug}/scoring/runs/{run.pk}/").content.decode()


@pytest.mark.parametrize(
    ("person", "status", "labelled"),
    [("annotator", 302, True), ("novice", 403, False), ("outsider", 404, False), (None, 302, False)],
)
def test_only_gold_readers_label(project, personas, sent, person, status, labelled):
    """Qualified annotators, verifiers and managers read gold; an annotator who has not passed the exam does not."""
    with answering(JUDGED) as server:
        run = run_over(project, personas, server, judge=True)
    free = Prediction.objects.get(run=run, position=0)
    client = Client()
    if person:
        client.force_login(personas[person])
    response = client.post(f"/p/{project.slug}/scoring/predictions/{free.pk}/label/", {"is_correct": "yes"})
    assert response.status_code == status
    assert PredictionLabel.objects.exists() is labelled


def test_an_uploaded_predictions_file_is_judged_too_through_the_page(project, personas, sent):
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile

    release = small_release(project, documents=1, questions=4, name="uploaded")
    items = list(release.items.order_by("position"))
    content = "\n".join(json.dumps({"uid": item.uid, "answer": ["allowable costs plus a profit"]}) for item in items)
    client = Client()
    client.force_login(personas["verifier"])
    with answering(JUDGED) as server:
        judge = endpoint_for(project, server.base_url, name="judge", max_attempts=1)
        response = client.post(
            f"/p/{project.slug}/releases/{release.pk}/score/upload/",
            {"format": "jsonl", "judge": judge.pk, "file": SimpleUploadedFile("p.jsonl", content.encode())},
            follow=True,
        )
    assert response.status_code == 200, response.content[:500]
    run = release.scoring_runs.get()
    assert run.options["judge"]["endpoint"] == judge.pk
    free = Prediction.objects.get(run=run, position=0)
    assert free.stages["judge"]["verdict"] == "partially correct" and free.metrics["judge"] == 0.5
    assert all("judge" not in p.stages for p in Prediction.objects.filter(run=run, position__gt=0))
    refused = client.post(
        f"/p/{project.slug}/releases/{release.pk}/score/upload/",
        {"format": "jsonl", "judge": 999999, "file": SimpleUploadedFile("p.jsonl", content.encode())},
        follow=True,
    )
    assert "No such judge endpoint in this project." in refused.content.decode()
    assert release.scoring_runs.count() == 1  # nothing made of the refused upload
