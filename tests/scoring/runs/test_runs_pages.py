"""Scoring pages through Django's test client, and the `score` command."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from scoring.models import ErrorTag, Prediction, ScoringRun
from scoring.runs.uploads import upload_run_create
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs
from tests.support.clients import logged_in

from .test_runs_api import SALES_2019, jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(project, personas):
    release = small_release(project, questions=4)
    total_sales = {"uid": "4960801d-277d-4f79-8eca-c4d0200fa9d6", "answer": ["1,496.5"], "scale": "million"}
    content = jsonl([{"uid": SALES_2019, "answer": ["2019"]}, total_sales])
    run = upload_run_create(release=release, actor=None, format="jsonl", name="preds.jsonl", content=content)
    return {"release": release, "run": run}


def test_release_page_links_to_scoring_for_those_who_start_runs(client, personas, scored, project):
    release_url = reverse("release", args=[project.slug, scored["release"].pk])
    score_url = reverse("release-score", args=[project.slug, scored["release"].pk])
    assert score_url in logged_in("verifier").get(release_url).content.decode()
    # An annotator may not start a run: no link that leads to a refusal, but the scored runs are theirs to compare.
    novice = logged_in("novice").get(release_url).content.decode()
    assert score_url not in novice and reverse("release-compare", args=[project.slug, scored["release"].pk]) in novice


def test_verifier_starts_a_run_from_the_release_page(client, personas, scored, project, sent):
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    url = reverse("release-score", args=[project.slug, scored["release"].pk])
    form = {
        "endpoint": endpoint.pk, "method": "car", "setting": "long", "limit": "2", "few_shot": "0", "tools": "all",
        "max_turns": "6", "max_tokens": "64", "template_reasoner": "Tips: {Tips}\nQ: {Question}",
    }  # fmt: skip
    response = logged_in("verifier").post(url, form)
    run = ScoringRun.objects.exclude(method="upload").get()
    assert response.status_code == 302 and response["Location"] == reverse("scoring-run", args=[project.slug, run.pk])
    assert run.items_total == 2 and run.setting == "long" and run.generation_params["max_tokens"] == 64
    assert run.templates["reasoner"] == "Tips: {Tips}\nQ: {Question}"


def test_annotator_cannot_start_a_run(client, personas, scored, project):
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    url = reverse("release-score", args=[project.slug, scored["release"].pk])
    response = logged_in("annotator").post(url, {"endpoint": endpoint.pk, "method": "cot"})
    assert response.status_code == 403 and not ScoringRun.objects.exclude(method="upload").exists()


def test_run_page_shows_figures_charts_and_predictions_to_gold_readers_only(client, personas, scored, project):
    url = reverse("scoring-run", args=[project.slug, scored["run"].pk])
    html = logged_in("annotator").get(url).content.decode()
    assert 'id="figures"' in html and "EM (short-form" in html and "TAT-QA EM" in html
    # The headline is the release format's own metric, named as such.
    assert "Headline: TAT-QA's own metric" in html  # written in the template, not escaped
    headline = html.split('id="headline"')[1].split("</table>")[0]
    assert (
        "TAT-QA EM (with scale)" in headline
        and "TAT-QA F1 (with scale)" in headline
        and "EM (short-form" not in headline
    )
    assert 'id="predictions"' in html and "1,496.5" in html
    client = logged_in("novice")
    novice = client.get(url).content.decode()
    assert 'id="figures"' in novice and 'id="predictions"' not in novice and "1,496.5" not in novice
    prediction = Prediction.objects.get(run=scored["run"], uid=SALES_2019)
    assert client.get(reverse("scoring-prediction", args=[project.slug, prediction.pk])).status_code == 403
    assert client.get(reverse("scoring-run-export", args=[project.slug, scored["run"].pk, "csv"])).status_code == 403
    assert logged_in("outsider").get(url).status_code == 404


def test_tagging_a_wrong_prediction_charts_its_error_type(client, personas, scored, project):
    wrong = Prediction.objects.filter(run=scored["run"], is_correct=False).first()
    url = reverse("scoring-prediction", args=[project.slug, wrong.pk])
    client = logged_in("verifier")
    page = client.get(url).content.decode()
    assert 'id="gold"' in page and 'id="tag-form"' in page
    assert client.post(url, {"kind": "grounding", "note": "wrong row"}).status_code == 302
    assert ErrorTag.objects.get(prediction=wrong).kind == "grounding"
    run_page = client.get(reverse("scoring-run", args=[project.slug, scored["run"].pk])).content.decode()
    assert 'id="error-types"' in run_page and "Grounding" in run_page


def test_progress_fragment_and_exports(client, personas, scored, project):
    client = logged_in("manager")
    fragment = client.get(reverse("scoring-run-progress", args=[project.slug, scored["run"].pk]))
    assert "4 of 4" in fragment.content.decode() and fragment["HX-Refresh"] == "true"
    export = client.get(reverse("scoring-run-export", args=[project.slug, scored["run"].pk, "json"]))
    assert json.loads(export.content)["results"]["count"] == 4


def test_compare_page_lays_runs_out_like_table_5(client, personas, scored, project):
    html = logged_in("novice").get(reverse("release-compare", args=[project.slug, scored["release"].pk]))
    text = html.content.decode()
    assert "Long context" in text and "preds.jsonl" in text and "Uploaded predictions" in text


def test_web_upload_of_a_predictions_file_scores_it(client, personas, scored, project):
    url = reverse("release-score-upload", args=[project.slug, scored["release"].pk])
    upload = SimpleUploadedFile("tatqa-preds.json", json.dumps({SALES_2019: ["2019", ""]}).encode())
    response = logged_in("manager").post(url, {"format": "tatqa", "file": upload})
    run = ScoringRun.objects.filter(upload_name="tatqa-preds.json").get()
    assert response.status_code == 302 and run.status == "completed"
    assert Prediction.objects.get(run=run, uid=SALES_2019).is_correct


def test_official_figures_page_scores_a_gold_and_prediction_pair(client, personas, project):
    gold = [{"id": "1", "answer": ["BERT"]}, {"id": "2", "answer": ["It is better because it is bigger overall"]}]
    files = {
        "benchmark": "scitat",
        "gold": SimpleUploadedFile("gold.json", json.dumps(gold).encode()),
        "predictions": SimpleUploadedFile("pred.json", json.dumps({"1": ["bert"], "2": "no"}).encode()),
    }
    html = logged_in("annotator").post(reverse("scoring-official", args=[project.slug]), files)
    # SciTaT figures are named for what they average (EM over the short-form questions).
    assert "SciTaT EM (short-form questions) 100.00" in html.content.decode()
    assert "mode: official" in html.content.decode()
    # The page checks its form with the API's serializer: a missing file is named.
    files = {"benchmark": "scitat", "gold": SimpleUploadedFile("gold.json", json.dumps(gold).encode())}
    refused = logged_in("annotator").post(reverse("scoring-official", args=[project.slug]), files, follow=True)
    assert "Predictions: No file was submitted." in refused.content.decode()


def test_score_command_inline_prints_results_as_json(project, personas):
    release = small_release(project, questions=3)
    with fs.FaultServer(default=fs.ok("Reason: look at the table. Answer: 2019")) as server:
        endpoint_for(project, server.base_url, name="fault")
        out = StringIO()
        call_command(
            "score", "--release", release.name, "--project", project.slug, "--endpoint", "fault",
            "--method", "cot", "--limit", "2", "--inline", "--json", stdout=out,
        )  # fmt: skip
    data = json.loads(out.getvalue())
    assert data["status"] == "completed" and data["progress"]["done"] == 2 and data["results"]["count"] == 2
    assert server.chat_request_count == 2


def test_score_command_names_unknown_endpoints(project, personas):
    from django.core.management.base import CommandError

    release = small_release(project, questions=1)
    with pytest.raises(CommandError, match="No endpoint 'nope'"):
        call_command("score", "--release", release.name, "--project", project.slug, "--endpoint", "nope",
                     "--method", "cot")  # fmt: skip


def test_a_tag_without_a_kind_or_with_a_long_label_is_refused_by_the_api_serializer(client, personas, scored, project):
    wrong = Prediction.objects.filter(run=scored["run"], is_correct=False).first()
    url = reverse("scoring-prediction", args=[project.slug, wrong.pk])
    client = logged_in("verifier")
    missing = client.post(url, {"note": "no kind"}, follow=True).content.decode()
    assert "Kind: This field is required." in missing
    long_label = client.post(url, {"kind": "custom", "custom_label": "x" * 61}, follow=True).content.decode()
    assert "Custom label: Ensure this field has no more than 60 characters." in long_label
    assert not ErrorTag.objects.filter(prediction=wrong).exists()


def test_the_prediction_page_says_how_the_answer_was_read_in_words(client, personas, scored, project):
    prediction = Prediction.objects.filter(run=scored["run"]).first()
    Prediction.objects.filter(pk=prediction.pk).update(
        latency_s=27.0958,
        stages={
            "rule": "answer_is",
            "is_parsed": True,
            "requests": 2,
            "reasoner": {"prompt": [{"role": "user", "content": "Think it through."}], "output": "First, the table…"},
        },
    )
    client = logged_in("verifier")
    page = client.get(reverse("scoring-prediction", args=[project.slug, prediction.pk])).content.decode()
    assert "<dt>Answer read by rule</dt><dd>answer_is</dd>" in page
    assert "<dt>Answer found in the output</dt><dd>yes</dd>" in page and "<dt>Model requests</dt><dd>2</dd>" in page
    assert "<h3>Reasoner step</h3>" in page and "user:\nThink it through." in page and "First, the table…" in page
    assert "27.1 s" in page and "27.0958" not in page and "{&#x27;" not in page


def test_the_run_page_tells_each_interval_note_once_not_in_every_cell(client, personas, project):
    release = small_release(project, questions=4)
    content = jsonl([{"uid": uid, "answer": ["surely wrong"]} for uid in release.items.values_list("uid", flat=True)])
    run = upload_run_create(release=release, actor=None, format="jsonl", name="wrong.jsonl", content=content)
    html = logged_in("manager").get(reverse("scoring-run", args=[project.slug, run.pk])).content.decode()
    note = "no interval: every resample has the same mean"
    notes = html.split('id="interval-notes"')[1].split("</ol>")[0]
    assert note.capitalize() in notes
    tables = html.split('id="results"')[1].split('id="interval-notes"')[0]
    assert f"({note}" not in tables  # not in the cells' text: in their title, with the number of the note
    assert f'title="{note}' in tables and '<a href="#interval-note-1">1</a>' in tables
    listed = [item.split(">", 1)[1].split("</li>")[0] for item in notes.split("<li")[1:]]
    assert len(listed) == len(set(listed)) >= 2  # each note once ("all 3 values are equal", "one question", …)


def test_the_token_table_and_the_breakdown_name_the_answer_forms_as_people_do(client, personas, scored, project):
    html = logged_in("manager").get(reverse("scoring-run", args=[project.slug, scored["run"].pk])).content.decode()
    tokens = html.split('id="output-tokens"')[1].split("</table>")[0]
    assert "<td>Short-form</td>" in tokens and "<td>Free-form</td>" in tokens
    assert "short_form" not in tokens and "free_form" not in tokens
    breakdown = html.split("<h3>Answer form</h3>")[1].split("</table>")[0]  # the breakdown by form reads the same way
    assert "<td>Short-form</td>" in breakdown and "<td>Free-form</td>" in breakdown
    assert "<td>short</td>" not in breakdown and "<td>free</td>" not in breakdown
