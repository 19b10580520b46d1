"""The comparison from uploaded-predictions runs: benchmarks/paper_tables.py reproduces SciTaT table 5 and the meta
paper's table 2 cell by cell, the page and the API serve each table as CSV and LaTeX, declared uploads are checked."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from scoring.models import Prediction, ScoringRun
from scoring.runs.uploads import upload_run_create
from tests.scoring.run_support import small_release
from tests.support.clients import logged_in

from .test_runs_api import SALES_2019, jsonl

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "paper_tables.py"


def paper_tables():
    spec = importlib.util.spec_from_file_location("paper_tables", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.django_db
def test_benchmark_reproduces_every_cell_and_keeps_n_shot_and_tool_runs_apart(project, personas):
    release = small_release(project, questions=4)
    result = paper_tables().reproduce(release=release, actor=personas["manager"])
    assert result["uploads"] == 3 * 4 * 2 + 2 * 4
    assert result["table5"]["cells_missing"] == [] and result["table5"]["rows"] == result["table5"]["expected_rows"]
    assert set(result["table5"]["delta"]) == {"llama3.1-8b", "llama3.1-70b", "gpt-4o"}
    assert result["table2"]["rows_missing"] == [] and len(result["table2"]["rows"]) == 6
    # 1 and 3 shots fail 1 and 3 of the 4 questions' tool calls: the Err. column tells the runs apart.
    assert [result["table2"]["rows"][f"qwen3-4b / {s}-shot"][3] for s in (0, 1, 3)] == ["0.00", "0.25", "0.75"]
    assert result["n_shot_and_tools_apart"]
    assert result["figure2b"]["qwen3-4b · 0-shot"][1] is not None


@pytest.fixture
def uploaded(project, personas):
    release = small_release(project, questions=4)
    for method, answer in (("cot", "2018"), ("car", "2019")):
        for setting in ("long", "short"):
            upload_run_create(
                release=release, actor=None, format="jsonl", name=f"{method}-{setting}.jsonl", label="gpt_4o",
                content=jsonl([{"uid": SALES_2019, "answer": [answer]}]), method=method, setting=setting,
            )  # fmt: skip
    return release


@pytest.mark.django_db
def test_each_table_downloads_as_csv_and_latex_from_the_page(client, personas, project, uploaded):
    # Every role on one release (its uploads scored once, not once per role).
    for role, expected in (("novice", 200), ("verifier", 200), ("manager", 200), ("outsider", 404)):
        client = logged_in(role)
        url = reverse("release-compare-file", args=[project.slug, uploaded.pk, "table5", "csv"])
        response = client.get(url)
        assert response.status_code == expected, role
        if expected != 200:
            continue
        assert response["Content-Disposition"].endswith('table5.csv"'), role
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        assert rows[0][:4] == ["Model", "Method", "row", "Long context EM"]
        assert [row[1] for row in rows[1:]] == ["CoT", "CaR", "Δ"]
        # Of the release's 3 short-form questions CaR got 1 right, CoT none: EM 33.3, and Δ = 33.3 − 0.
        assert rows[1][3] == "0.0" and rows[2][3] == "33.333" and rows[3][3] == "33.333"
        latex = client.get(reverse("release-compare-file", args=[project.slug, uploaded.pk, "table5", "tex"]))
        text = latex.content.decode()
        assert latex["Content-Type"].startswith("application/x-tex") and "\\begin{tabular}{llrrrrrr}" in text
        assert "gpt\\_4o" in text and "\\textbf{33.3}" in text and "$\\Delta$ & +33.3" in text, role


@pytest.mark.django_db
def test_page_shows_table_5_with_its_delta_row_and_bold_best(client, personas, project, uploaded):
    html = logged_in("annotator").get(reverse("release-compare", args=[project.slug, uploaded.pk]))
    text = html.content.decode()
    assert 'class="row-delta"' in text and "<strong>33.3" in text and 'role="region"' in text
    assert "SciTaT table 6" in text and "table 2" in text


@pytest.mark.django_db
def test_unknown_table_or_format_is_not_found(api_client_for, personas, uploaded):
    client = api_client_for(personas["manager"])
    assert client.get(f"/api/releases/{uploaded.pk}/scoring-comparison/table99/csv/").status_code == 404
    assert client.get(f"/api/releases/{uploaded.pk}/scoring-comparison/table5/docx/").status_code == 404
    tables = client.get(f"/api/releases/{uploaded.pk}/scoring-comparison/").json()["tables"]
    assert [row["stub"][1] for row in tables["table5"]["rows"]] == ["CoT", "CaR", "Δ"]


@pytest.mark.django_db
def test_an_upload_declaring_an_unknown_method_or_n_shot_is_refused_whole(api_client_for, personas, project):
    release = small_release(project, questions=4)
    client = api_client_for(personas["manager"])
    for declared, word in (({"method": "magic"}, "method"), ({"few_shot": 2, "method": "tool"}, "shots")):
        body = {"release": release.pk, "format": "jsonl", **declared}
        body["file"] = SimpleUploadedFile("p.jsonl", jsonl([{"uid": SALES_2019, "answer": ["2019"]}]))
        response = client.post(f"/api/projects/{project.slug}/scoring-runs/upload/", body, format="multipart")
        assert response.status_code == 400 and word in json.dumps(response.json())
    assert not ScoringRun.objects.filter(release=release).exists()


@pytest.mark.django_db
def test_an_uploaded_tool_trace_is_scored_and_a_malformed_one_refused(project, personas):
    release = small_release(project, questions=4)
    trace = [{"name": "add", "arguments": {"values": [1, 2]}, "result": None, "is_error": True}]
    run = upload_run_create(
        release=release, actor=None, format="jsonl", name="t.jsonl", method="tool", few_shot=3,
        content=jsonl([{"uid": SALES_2019, "answer": ["2019"], "tool_trace": trace}]),
    )  # fmt: skip
    prediction = Prediction.objects.get(run=run, uid=SALES_2019)
    assert prediction.tool_trace == trace and prediction.metrics["tool_error"] is True
    assert run.options["reported_method"] == "tool" and run.options["few_shot"] == 3
    from curation.errors import InvalidInput

    with pytest.raises(InvalidInput, match="line 1: 'tool_trace'"):
        upload_run_create(
            release=release, actor=None, format="jsonl", name="bad.jsonl",
            content=jsonl([{"uid": SALES_2019, "answer": ["x"], "tool_trace": ["add"]}]),
        )  # fmt: skip
    with pytest.raises(TypeError, match="few_shots"):  # a misspelt option is refused, not dropped
        upload_run_create(release=release, actor=None, format="jsonl", name="t.jsonl", content=b"", few_shots=3)


@pytest.mark.django_db
def test_compare_runs_command_prints_a_table_as_latex_or_every_table_as_json(uploaded, project):
    from io import StringIO

    from django.core.management import call_command

    latex = StringIO()
    call_command("compare_runs", release=str(uploaded.pk), project=project.slug, format="tex", stdout=latex)
    assert "\\begin{tabular}{llrrrrrr}" in latex.getvalue() and "$\\Delta$ & +33.3" in latex.getvalue()
    printed = StringIO()
    call_command("compare_runs", "--json", release=str(uploaded.pk), project=project.slug, stdout=printed)
    result = json.loads(printed.getvalue())
    assert result["runs"] == 4 and [r["stub"][1] for r in result["tables"]["table5"]["rows"]] == ["CoT", "CaR", "Δ"]


@pytest.mark.django_db
def test_web_upload_declares_the_experiment_and_lands_in_its_cell(client, personas, project):
    release = small_release(project, questions=4)
    url = reverse("release-score-upload", args=[project.slug, release.pk])
    upload = SimpleUploadedFile("car-long.jsonl", jsonl([{"uid": SALES_2019, "answer": ["2019"]}]))
    form = {"format": "jsonl", "file": upload, "label": "gpt-4o", "method": "car", "setting": "long", "few_shot": "0"}
    client = logged_in("manager")
    response = client.post(url, {**form, "tools": "all"})
    run = ScoringRun.objects.get(upload_name="car-long.jsonl")
    assert response.status_code == 302 and run.setting == "long" and run.options["reported_method"] == "car"
    page = client.get(reverse("release-compare", args=[project.slug, release.pk])).content.decode()
    assert "<td>CaR</td>" in page
    bad = {**form, "file": SimpleUploadedFile("x.jsonl", b'{"uid": "a"}'), "few_shot": "three"}
    refused = client.post(url, bad, follow=True).content.decode()
    assert "n-shot: A valid integer is required." in refused
    no_file = {name: value for name, value in form.items() if name != "file"}
    assert "Predictions file: No file was submitted." in client.post(url, no_file, follow=True).content.decode()
    assert not ScoringRun.objects.filter(upload_name="x.jsonl").exists()
