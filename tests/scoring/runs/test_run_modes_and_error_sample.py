"""A run records its modes (turn cap derived from the longest program, scale, extraction, BERTScore model) and
shows them; SciTaT §4.4's error sample is drawn from the run page or the command, by runners only."""

from __future__ import annotations

import json
from io import StringIO

from django.core.management import call_command

from curation.releases.models import ReleaseItem
from scoring.methods.base import MIN_TURNS
from scoring.models import ErrorSample, ErrorTag, Prediction, ScoringRun
from scoring.runs.creation import run_create
from scoring.runs.uploads import upload_run_create
from tests.scoring.run_support import endpoint_for, small_release
from tests.support.clients import logged_in


def _wrong_upload(project, release):
    content = "\n".join(
        json.dumps({"uid": uid, "answer": ["surely wrong"]}) for uid in release.items.values_list("uid", flat=True)
    ).encode()
    return upload_run_create(release=release, actor=None, format="jsonl", name="wrong.jsonl", content=content)


def test_tool_run_derives_its_turn_cap_from_the_longest_program_and_records_every_mode(project, personas):
    release = small_release(project, questions=3)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    item = ReleaseItem.objects.filter(release=release).first()
    program = [{"tool": "get_cell", "arguments": {"row": f"r{i}"}, "result": "1"} for i in range(20)]
    item.data = {**item.data, "essential_actions": [*program, {"tool": "final_answer", "arguments": {}}]}
    item.save(update_fields=["data"])
    run = run_create(release=release, actor=personas["manager"], method="tool", endpoint=endpoint)
    assert run.options["max_turns"] == 20 + 1 + 3 and run.options["longest_program"] == 20
    assert run.options["max_turns_from"] == "longest_program"
    modes = {key: run.options[key] for key in ("scale_mode", "extraction", "bertscore")}
    assert modes == {"scale_mode": "predicted", "extraction": "default", "bertscore": "minilm"}
    other = run_create(
        release=release, actor=personas["manager"], method="cot", endpoint=endpoint, scale_mode="ignore",
        extraction="official",
    )  # fmt: skip
    assert other.options["max_turns"] == MIN_TURNS and other.options["scale_mode"] == "ignore"
    same_but_modes = run_create(release=release, actor=personas["manager"], method="cot", endpoint=endpoint)
    assert other.config_hash != same_but_modes.config_hash  # a run's identity includes its modes
    page = logged_in("manager").get(f"/p/{project.slug}/scoring/runs/{other.pk}/").content.decode()
    assert "ignore scale (zero-shot models)" in page and "official (SciTaT&#x27;s scripts)" in page
    # Each mode once, in its row: the options line no longer says "extraction official" above it.
    options = page.split('id="run-options">')[1].split("</dd>")[0]
    assert "extraction" not in options and "scale mode" not in options and "bertscore" not in options
    assert "json schema" in options and "few shot 0" in options
    tool_page = logged_in("manager").get(f"/p/{project.slug}/scoring/runs/{run.pk}/").content.decode()
    assert "24 turns (longest program: 20 calls" in tool_page
    assert "max turns" not in tool_page.split('id="run-options">')[1].split("</dd>")[0]


def test_bad_modes_and_the_unconfigured_paper_bertscore_are_refused_with_the_reason(project, personas, settings):
    settings.TATCURATE_BERT_BASE_UNCASED_DIR = ""
    release = small_release(project, questions=2)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    client = logged_in("manager")
    url = f"/api/projects/{project.slug}/scoring-runs/"
    base = {"release": release.pk, "endpoint": endpoint.pk, "method": "cot"}
    for extra, fragment in (
        ({"scale_mode": "sometimes"}, "scale mode"),
        ({"extraction": "magic"}, "answer extraction"),
        ({"bertscore": "paper"}, "TATCURATE_BERT_BASE_UNCASED_DIR"),
        ({"method": "tool", "max_turns": 500}, "max_turns"),
    ):
        response = client.post(url, {**base, **extra}, content_type="application/json")
        assert response.status_code == 400, extra
        assert fragment in response.content.decode(), (extra, response.content)
    assert not ScoringRun.objects.filter(release=release).exists()
    form = client.get(f"/p/{project.slug}/releases/{release.pk}/score/").content.decode()
    assert "The paper's BERTScore is unavailable: no bert-base-uncased directory is configured" in form


def test_manager_draws_the_error_sample_from_the_run_page_and_sees_its_distribution(project, personas):
    release = small_release(project, questions=6)
    run = _wrong_upload(project, release)
    client = logged_in("manager")
    url = f"/p/{project.slug}/scoring/runs/{run.pk}/"
    assert 'id="draw-error-sample"' in client.get(url).content.decode()
    response = client.post(url, {"action": "draw-error-sample", "seed": "7", "per_form": "4"})
    assert response.status_code == 302 and response["Location"].endswith("#error-analysis")
    sample = ErrorSample.objects.get(run=run)
    errors = Prediction.objects.filter(run=run, is_correct=False, status="scored")
    assert len(sample.short_form) + len(sample.free_form) == min(4, sample.short_form_errors) + min(
        4, sample.free_form_errors
    )
    assert sample.short_form_errors + sample.free_form_errors == errors.count()
    tagged = Prediction.objects.get(pk=(sample.short_form or sample.free_form)[0])
    ErrorTag.objects.create(prediction=tagged, kind="redundancy", tagged_by=personas["verifier"])
    page = client.get(url).content.decode()
    assert "Seed 7, up to 4 per answer form" in page
    assert "1 tagged" in page and "Redundancy" in page
    assert f"/p/{project.slug}/scoring/predictions/{tagged.pk}/" in page
    bad = client.post(url, {"action": "draw-error-sample", "seed": "x"}, follow=True)
    assert "Seed: Enter a whole number." in bad.content.decode() and ErrorSample.objects.filter(run=run).count() == 1


def test_only_runners_draw_error_samples(project, personas):
    release = small_release(project, questions=3)
    run = _wrong_upload(project, release)
    url = f"/p/{project.slug}/scoring/runs/{run.pk}/"
    body = {"action": "draw-error-sample", "seed": "1"}
    assert logged_in("annotator").post(url, body).status_code == 403
    assert logged_in("outsider").post(url, body).status_code == 404
    assert not ErrorSample.objects.exists()
    assert logged_in("verifier").post(url, body).status_code == 302
    assert 'id="draw-error-sample"' not in logged_in("annotator").get(url).content.decode()


def test_error_sample_command_draws_reproducibly_and_reports_as_json(project, personas):
    release = small_release(project, questions=6)
    run = _wrong_upload(project, release)
    first, second, report = StringIO(), StringIO(), StringIO()
    call_command("error_sample", str(run.pk), "--seed", "3", "--per-form", "2", "--json", stdout=first)
    call_command("error_sample", str(run.pk), "--seed", "3", "--per-form", "2", "--json", stdout=second)
    call_command("error_sample", str(run.pk), "--report", "--json", stdout=report)
    drawn, again, reported = (json.loads(out.getvalue()) for out in (first, second, report))
    assert drawn["sampled"] == again["sampled"] and reported["sampled"] == drawn["sampled"]
    short = drawn["distribution"]["short_form"]
    assert short["sample_size"] == min(2, short["errors"]) and short["tagged"] == 0
    assert drawn["seed"] == 3 and ErrorSample.objects.filter(run=run).count() == 2


def test_an_upload_takes_a_runs_scoring_options_from_the_page_and_the_api(project, personas):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    release = small_release(project, questions=2)
    uid = release.items.order_by("position").values_list("uid", flat=True).first()
    content = json.dumps({"uid": uid, "raw_output": "Reasoning: r\nAnswer: 42"}).encode()
    options = {"scale_mode": "ignore", "extraction": "official", "bertscore": "minilm"}
    page = logged_in("manager").post(
        f"/p/{project.slug}/releases/{release.pk}/score/upload/",
        {"format": "jsonl", "file": SimpleUploadedFile("p.jsonl", content), **options},
    )
    assert page.status_code == 302
    official = ScoringRun.objects.get(method="upload")
    assert {key: official.options[key] for key in options} == options
    api = APIClient()
    api.force_authenticate(personas["manager"])
    response = api.post(
        f"/api/projects/{project.slug}/scoring-runs/upload/",
        {"release": release.pk, "format": "jsonl", "file": SimpleUploadedFile("p.jsonl", content)},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    default = ScoringRun.objects.get(pk=response.json()["id"])
    assert default.options["extraction"] == "default" and default.options["scale_mode"] == "predicted"
    # The model text is read as the chosen extraction reads it: the official Direct QA rule keeps the whole text.
    answers = {
        run.options["extraction"]: Prediction.objects.get(run=run, item__uid=uid).answer for run in (official, default)
    }
    assert answers["default"] == ["42"] and answers["official"] != ["42"]


def test_a_per_template_sample_scores_n_answerable_questions_of_each_template_and_completes(project, personas):
    from curation.models import Instance
    from scoring.runs.creation import per_template_positions

    release = small_release(project, documents=2, questions=8)
    items = list(release.items.order_by("position"))
    for index, item in enumerate(items):  # three templates: a, b, c, a, b, c, …
        Instance.objects.filter(pk=item.instance_id).update(draft={"template_id": "abc"[index % 3]})
    sample = per_template_positions(release, per_template=2, seed=5)
    assert len(sample) == 6 and sample == per_template_positions(release, per_template=2, seed=5)
    templates = [("abc"[items.index(next(i for i in items if i.position == p)) % 3]) for p in sample]
    assert sorted(templates) == ["a", "a", "b", "b", "c", "c"]
    uids = {item.uid for item in items if item.position in sample}
    content = "\n".join(json.dumps({"uid": item.uid, "answer": ["x"]}) for item in items).encode()
    run = run_create(
        release=release, actor=personas["manager"], method="upload", per_template=2, sample_seed=5,
        uploaded={item.uid: {"answer": ["x"], "scale": ""} for item in items}, upload_name="p.jsonl",
    )  # fmt: skip
    assert content and run.items_total == 6 and run.options["sample"] == {"per_template": 2, "seed": 5,
                                                                          "split": "answerable"}  # fmt: skip
    from scoring.runs.lifecycle import run_start

    run = run_start(run=run, actor=personas["manager"])
    run.refresh_from_db()
    assert run.status == "completed", run.error
    assert set(Prediction.objects.filter(run=run).values_list("item__uid", flat=True)) == uids
    page = logged_in("manager").get(f"/p/{project.slug}/scoring/runs/{run.pk}/").content.decode()
    assert "2 answerable questions per template, seed 5" in page
