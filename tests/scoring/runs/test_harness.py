"""A release as an Inspect AI task: exported with the prompts the project's methods send, run by `inspect eval`
against the real local model, and its log brought back as a scoring run with the same per-question figures."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import zipfile_zstd  # noqa: F401  (Inspect writes its .eval members with Zstandard)
from django.core.management import call_command

from curation.errors import InvalidInput
from curation.releases.models import ReleaseItem
from scoring.models import Prediction, ScoringRun
from scoring.runs.harness import score_completion
from scoring.runs.uploads import upload_run_create
from tests.scoring.run_support import local_model_url, small_release

FIGURES = ("em", "f1", "tatqa_em", "tatqa_f1", "is_correct")


def _export(project, release, out: Path) -> dict:
    printed = io.StringIO()
    call_command("export_harness_tasks", release=str(release.pk), project=project.slug, out=out, json=True,
                 stdout=printed)  # fmt: skip
    return json.loads(printed.getvalue())


def _samples(bundle: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in zipfile.ZipFile(bundle).read(name).decode().splitlines()]


def test_inspect_export_asks_every_question_in_both_settings_with_the_methods_prompts(project, tmp_path):
    release = small_release(project, questions=3)
    result = _export(project, release, tmp_path / "task.zip")
    assert result["samples"] == {f"data/{s}-{m}.jsonl": 3 for s in ("short", "long") for m in ("direct", "cot")}
    names = set(zipfile.ZipFile(tmp_path / "task.zip").namelist())
    lm_eval_tasks = {f"lm_eval/tatcurate_{s}_{m}.yaml" for s in ("short", "long") for m in ("direct", "cot")}
    assert {"tatcurate_task.py", "README.md", "lm_eval/utils.py", *lm_eval_tasks} <= names
    items = {row.uid: row.data for row in ReleaseItem.objects.filter(release=release)}
    for sample in _samples(tmp_path / "task.zip", "data/short-cot.jsonl"):
        item = items[sample["id"]]
        assert sample["target"] == [str(a) for a in item["answer"]] and sample["metadata"]["item"]["uid"] == item["uid"]
        # The CoT template's own words, the question, and a cell of the question's table are in the prompt.
        assert 'Represent your answer with: "Reason:' in sample["input"] and item["question"] in sample["input"]
        assert sample["metadata"]["answer_source"] == item.get("answer_source", "")
    direct = _samples(tmp_path / "task.zip", "data/short-direct.jsonl")[0]["input"]
    assert "Reason:" not in direct and "Please answer the question" in direct


def test_lm_eval_loads_the_exported_tasks_and_scores_with_the_project_scorer(project, tmp_path):
    from lm_eval.tasks import TaskManager

    release = small_release(project, questions=3)
    _export(project, release, tmp_path / "task.zip")
    zipfile.ZipFile(tmp_path / "task.zip").extractall(tmp_path / "task")
    loaded = TaskManager(include_path=str(tmp_path / "task" / "lm_eval"), include_defaults=False).load(
        ["tatcurate_long_cot"]
    )["tasks"]
    task = loaded["tatcurate_long_cot"]
    docs = list(task.test_docs())
    samples = {s["id"]: s for s in _samples(tmp_path / "task.zip", "data/long-cot.jsonl")}
    assert len(docs) == 3 and {task.doc_to_text(doc) for doc in docs} == {s["input"] for s in samples.values()}
    doc = docs[0]
    right = f"Reason: read from the table. Answer: {samples[doc['id']]['target'][0]}"
    for text in (right, "Answer: surely wrong"):
        figures = score_completion(samples[doc["id"]]["metadata"]["item"], text, method="cot")
        assert task.process_results(doc, [text]) == {
            "em": figures["em"],
            "f1": figures["f1"],
            "correct": float(figures["is_correct"]),
        }
    assert task.process_results(doc, [right])["correct"] == 1.0


@pytest.mark.parametrize("person", ["manager", "verifier", "annotator", "outsider"])
def test_the_scoring_page_offers_the_harness_tasks_to_those_who_score_models(project, personas, person):
    from django.test import Client

    from tests.conftest import PASSWORD

    release = small_release(project, questions=2)
    client = Client()
    assert client.login(username=person, password=PASSWORD)
    page = client.get(f"/p/{project.slug}/releases/{release.pk}/score/")
    download = f"/p/{project.slug}/releases/{release.pk}/harness/"
    if person in ("annotator", "outsider"):  # an annotator reads runs; an outsider sees no release
        assert page.status_code == (200 if person == "annotator" else 404) and b"harness tasks" not in page.content
        assert client.get(download).status_code == (403 if person == "annotator" else 404)
        return
    link = re.search(r'href="([^"]+)" download>Download the harness tasks', page.content.decode()).group(1)
    response = client.get(link)
    assert response.status_code == 200 and response["Content-Disposition"].endswith('-harness-tasks.zip"')
    names = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist()
    assert "tatcurate_task.py" in names and "data/short-cot.jsonl" in names


def test_an_upload_that_is_not_an_inspect_log_of_the_task_is_refused_with_the_reason(project):
    release = small_release(project, questions=1)
    uid = release.items.values_list("uid", flat=True).first()
    foreign = json.dumps({"samples": [{"id": uid, "epoch": 1, "output": {"completion": "7"}, "metadata": {}}]})
    for content, reason in ((b"PK\x03\x04 broken", "not a readable .eval log"), (b"[1, 2]", "not an Inspect JSON log"),
                            (foreign.encode(), "has no TaT-Curate method")):  # fmt: skip
        with pytest.raises(InvalidInput, match=reason):
            upload_run_create(release=release, actor=None, format="inspect", name="log.json", content=content)
    ours = json.dumps({"samples": [{"id": uid, "epoch": 1, "output": {"completion": "Answer: 7"},
                                    "metadata": {"method": "cot", "setting": "long"}}]})  # fmt: skip
    run = upload_run_create(release=release, actor=None, format="inspect", name="log.json", content=ours.encode())
    assert (run.options["reported_method"], run.setting) == ("cot", "long")


@pytest.mark.model
@pytest.mark.django_db(transaction=True)
def test_inspect_eval_on_the_local_model_comes_back_as_a_run_with_the_scorers_figures(project, tmp_path):
    release = small_release(project, questions=2)
    _export(project, release, tmp_path / "task.zip")
    task = tmp_path / "task"
    zipfile.ZipFile(tmp_path / "task.zip").extractall(task)
    env = {**os.environ, "LOCAL_BASE_URL": local_model_url(), "LOCAL_API_KEY": "none", "INSPECT_LOG_DIR": "logs"}
    inspect = Path(sys.executable).with_name("inspect")
    done = subprocess.run(
        [str(inspect), "eval", "tatcurate_task.py", "-T", "setting=short", "-T", "method=cot", "--display", "plain",
         "--model", "openai-api/local/SmolLM2-135M-Instruct", "--max-tokens", "32", "--temperature", "0"],
        cwd=task, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lm_eval = subprocess.run(
        [str(inspect.with_name("lm_eval")), "--include_path", "lm_eval", "--tasks", "tatcurate_short_cot",
         "--model", "local-chat-completions", "--apply_chat_template", "--log_samples", "--output_path", "out",
         "--model_args", f"model=SmolLM2-135M-Instruct,base_url={local_model_url()}/chat/completions,"
         "tokenizer_backend=None,max_gen_toks=32,num_concurrent=1"],
        cwd=task, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert lm_eval.returncode == 0, lm_eval.stdout[-2000:] + lm_eval.stderr[-2000:]
    (lm_eval_log,) = (task / "out").rglob("samples_tatcurate_short_cot_*.jsonl")
    (log,) = (task / "logs").glob("*.eval")
    with zipfile.ZipFile(log) as bundle:
        logged = [json.loads(bundle.read(n)) for n in bundle.namelist() if n.startswith("samples/")]
    assert len(logged) == 2 and all(s["output"]["completion"] for s in logged)
    printed = io.StringIO()
    call_command("upload_predictions", str(log), release=str(release.pk), project=project.slug, format="inspect",
                 json=True, stdout=printed)  # fmt: skip
    run = ScoringRun.objects.get(pk=json.loads(printed.getvalue())["run"])
    assert run.status == "completed" and run.setting == "short"
    ours = {p.uid: p for p in Prediction.objects.filter(run=run)}
    for sample in logged:
        scorer = sample["scores"]["tatcurate_metrics"]["metadata"]["figures"]
        prediction = ours[str(sample["id"])]
        assert prediction.raw_output == sample["output"]["completion"]
        assert {k: prediction.metrics.get(k) for k in FIGURES} == {k: scorer.get(k) for k in FIGURES}
    # lm-evaluation-harness's samples file comes back the same way, with the figures its run logged per question.
    lm_eval_run = upload_run_create(release=release, actor=None, format="lm_eval", name=lm_eval_log.name,
                                    content=lm_eval_log.read_bytes())  # fmt: skip
    lm_eval_run.refresh_from_db()
    ours = {p.uid: p for p in Prediction.objects.filter(run=lm_eval_run)}
    logged = [json.loads(line) for line in lm_eval_log.read_text().splitlines()]
    assert lm_eval_run.status == "completed" and len(logged) == 2 == len(ours)
    for sample in logged:
        prediction = ours[sample["doc"]["id"]]
        assert prediction.raw_output == sample["filtered_resps"][0]
        figures = {"em": prediction.metrics["em"], "f1": prediction.metrics["f1"],
                   "correct": float(prediction.metrics["is_correct"])}  # fmt: skip
        assert figures == {key: sample[key] for key in figures}
