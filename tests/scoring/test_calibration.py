"""Difficulty against a panel: a calibration of a batch asks each panel model every question (a scripted endpoint
whose answers the test chooses), records "answered by k of n" per item, drives the queue's order (hardest first, or
hold back what every model answers), filters the instance browser, and reaches release statistics and the card."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotate.work.queue import queue_claim, queue_counts
from curation.errors import Conflict, InvalidInput, NotPermitted
from curation.exports.card import statistics_markdown
from curation.models import Batch, Instance
from curation.panel.models import Calibration, PanelAnswer
from curation.panel.services import batch_panel_order_set, calibration_request, panel_set, panel_summaries
from curation.releases.services import cut as cut_services
from curation.states import Status
from scoring.calibration import CALIBRATIONS
from tests.support import fault_server as fs

from .run_support import endpoint_for

pytestmark = pytest.mark.django_db

# Which questions each scripted model answers correctly: strong Q0–Q3, weak Q0–Q1; "broken" always fails.
RIGHT = {"strong": range(4), "weak": range(2)}


def scripted(request):
    if request["model"] == "broken":
        return fs.Fault(status=400, body={"error": {"message": "no such model"}})
    number = int(re.search(r'question "Q(\d+)\?"', request["messages"][-1]["content"]).group(1))
    return fs.ok(f"A{number}" if number in RIGHT[request["model"]] else "nobody knows")


@pytest.fixture
def panel_server():
    with fs.FaultServer(responder=scripted).start() as server:
        yield server


@pytest.fixture
def batch(project, open_batch, make_instance):
    for number in range(6):
        make_instance(batch=open_batch, question=f"Q{number}?", answer=[f"A{number}"], answer_form="short")
    return open_batch


def panel_of(project, personas, server, names=("strong", "weak", "broken")):
    endpoints = [endpoint_for(project, server.base_url, name=name, model=name, max_attempts=1) for name in names]
    panel_set(project=project, actor=personas["manager"], endpoint_ids=[e.pk for e in endpoints])
    return endpoints


def calibrate(batch, personas) -> Calibration:
    calibration = calibration_request(batch_id=batch.pk, actor=personas["manager"])
    CALIBRATIONS.run(calibration.pk, worker="test")
    calibration.refresh_from_db()
    return calibration


def k_of_n(batch) -> dict[str, tuple[int | None, int | None]]:
    return {i.question: (i.panel_correct, i.panel_size) for i in batch.instances.order_by("id")}


def test_a_calibration_records_k_of_n_per_item_and_what_each_model_answered(project, personas, batch, panel_server):
    panel_of(project, personas, panel_server)
    calibration = calibrate(batch, personas)
    assert (calibration.state, calibration.items_done, calibration.items_total) == ("done", 6, 6)
    # A failing endpoint gives no verdict: n counts the models that answered.
    assert k_of_n(batch) == {
        "Q0?": (2, 2), "Q1?": (2, 2), "Q2?": (1, 2), "Q3?": (1, 2), "Q4?": (0, 2), "Q5?": (0, 2),
    }  # fmt: skip
    answer = PanelAnswer.objects.get(instance__question="Q2?", model="strong")
    assert (answer.answer, answer.is_correct, answer.error) == (["A2"], True, "")
    assert PanelAnswer.objects.get(instance__question="Q2?", model="weak").answer == ["nobody knows"]
    assert PanelAnswer.objects.get(instance__question="Q2?", model="broken").error.startswith("EndpointBadRequest")
    summary = panel_summaries([batch])[batch.pk]
    assert summary["k_of_n"] == {"0 of 2": 2, "1 of 2": 2, "2 of 2": 2}
    assert [(m["model"], m["answered"], m["asked"], m["percent"]) for m in summary["models"]] == [
        ("strong", 4, 6, 66.7),
        ("weak", 2, 6, 33.3),
    ]


def test_a_calibration_resumes_without_asking_again_and_a_new_one_replaces_the_verdicts(
    project, personas, batch, panel_server
):
    strong, weak = panel_of(project, personas, panel_server, names=("strong", "weak"))
    calibration = calibration_request(batch_id=batch.pk, actor=personas["manager"])
    # An earlier claim (a worker that died) answered Q0 with both models already.
    first = batch.instances.get(question="Q0?")
    for endpoint in (strong, weak):
        PanelAnswer.objects.create(
            calibration=calibration, instance=first, endpoint=endpoint, model=endpoint.name, answer=["A0"],
            is_correct=True,
        )  # fmt: skip
    CALIBRATIONS.run(calibration.pk, worker="test")
    asked = [re.search(r'question "(Q\d)\?"', r["messages"][-1]["content"]).group(1) for r in panel_server.requests]
    assert "Q0" not in asked and len(asked) == 10
    assert k_of_n(batch)["Q0?"] == (2, 2)

    RIGHT["weak"] = range(6)  # the weak model got better: the next calibration's verdicts replace the old ones
    try:
        calibrate(batch, personas)
    finally:
        RIGHT["weak"] = range(2)
    assert k_of_n(batch)["Q5?"] == (1, 2)
    assert PanelAnswer.objects.filter(instance__batch=batch).count() == 12
    assert not PanelAnswer.objects.filter(calibration=calibration).exists()


def test_the_queue_serves_what_no_model_answers_first_or_holds_back_what_all_answer(
    project, personas, batch, panel_server
):
    panel_of(project, personas, panel_server)
    calibrate(batch, personas)
    annotator, annotator2 = personas["annotator"], personas["annotator2"]
    assert batch.panel_order == Batch.PanelOrder.OFF  # off by default: the queue keeps its order
    assert queue_counts(project=project, user=annotator)["available"] == 6

    batch_panel_order_set(batch_id=batch.pk, actor=personas["manager"], order="unanswered_first")
    first = Instance.objects.get(pk=queue_claim(project_slug=project.slug, user=annotator).instance_id)
    second = Instance.objects.get(pk=queue_claim(project_slug=project.slug, user=annotator2).instance_id)
    assert {first.question, second.question} == {"Q4?", "Q5?"}

    batch_panel_order_set(batch_id=batch.pk, actor=personas["manager"], order="hold_answered")
    assert queue_counts(project=project, user=personas["annotator"])["available"] == 2  # Q2, Q3: Q0, Q1 held
    Instance.objects.filter(question__in=["Q4?", "Q5?"]).update(status=Status.DRAFTED, author=None)
    Instance.objects.filter(question__in=["Q2?", "Q3?", "Q4?", "Q5?"]).update(status=Status.SUBMITTED)
    assert queue_claim(project_slug=project.slug, user=annotator) is None  # only held drafts are left
    assert panel_summaries([batch])[batch.pk]["held"] == 2

    with pytest.raises(InvalidInput, match="Panel order must be one of"):
        batch_panel_order_set(batch_id=batch.pk, actor=personas["manager"], order="easiest_first")
    with pytest.raises(NotPermitted):
        batch_panel_order_set(batch_id=batch.pk, actor=annotator, order="")


def test_a_calibration_is_refused_without_a_panel_twice_at_once_or_to_a_non_manager(
    project, personas, batch, panel_server
):
    with pytest.raises(InvalidInput, match="Name the project's panel"):
        calibration_request(batch_id=batch.pk, actor=personas["manager"])
    panel_of(project, personas, panel_server, names=("strong",))
    for role in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            calibration_request(batch_id=batch.pk, actor=personas[role])
        with pytest.raises(NotPermitted):
            panel_set(project=project, actor=personas[role], endpoint_ids=[])
    calibration_request(batch_id=batch.pk, actor=personas["manager"])
    with pytest.raises(Conflict, match="being calibrated already"):
        calibration_request(batch_id=batch.pk, actor=personas["manager"])


def test_the_batches_page_and_the_instance_browser_show_the_panel(project, personas, batch, panel_server):
    strong, weak = panel_of(project, personas, panel_server, names=("strong", "weak"))
    project.panel.clear()
    manager = Client()
    manager.force_login(personas["manager"])
    page = manager.get(f"/p/{project.slug}/batches/").content.decode()
    assert "Difficulty against a panel" in page and "never calibrated" in page
    response = manager.post(
        f"/p/{project.slug}/batches/", {"action": "panel", "endpoint_ids": [strong.pk, weak.pk]}, follow=True
    )
    assert "Panel saved." in response.content.decode()
    assert set(project.panel.all()) == {strong, weak}
    response = manager.post(f"/p/{project.slug}/batches/", {"action": "calibrate", "batch": batch.pk}, follow=True)
    assert "Calibration asked" in response.content.decode()
    polling = re.compile(r'<div id="panel-state"[^>]*hx-trigger="every 2s"')
    assert polling.search(response.content.decode())  # the card refreshes itself while the calibration waits
    assert re.search(r'disabled title="Being calibrated">Calibrate ', response.content.decode())
    CALIBRATIONS.run(Calibration.objects.get().pk, worker="test")
    page = manager.get(f"/p/{project.slug}/batches/").content.decode()
    assert "0 of 2: 2" in page and "strong: 4 / 6 (66.7 %)" in page
    assert '<div id="panel-state"' in page and not polling.search(page)  # and stops once it is done
    assert "Being calibrated" not in page
    response = manager.post(f"/p/{project.slug}/batches/", {"action": "calibrate", "batch": batch.pk}, follow=True)
    assert response.status_code == 200  # a second calibration of a done batch is fine

    listed = manager.get(f"/p/{project.slug}/instances/", {"panel": 0}).content.decode()
    assert "Q4?" in listed and "Q5?" in listed and "Q0?" not in listed and "Q2?" not in listed
    assert "0 of 2" in listed
    api = manager.get(f"/api/projects/{project.slug}/instances/", {"panel": 2})
    assert api.status_code == 200, api.content
    assert sorted(row["question"] for row in api.json()["results"]) == ["Q0?", "Q1?"]

    annotator = Client()
    annotator.force_login(personas["annotator"])
    refused = annotator.post(f"/p/{project.slug}/batches/", {"action": "calibrate", "batch": batch.pk})
    assert refused.status_code in (403, 404)
    # The verdicts are the manager's: an annotator's browser has no panel column or filter (a probe made after a
    # calibration has none, so sorting one's work by them would tell it from the drafts).
    Instance.objects.filter(question="Q4?").update(author=personas["annotator"], status=Status.SUBMITTED)
    Instance.objects.filter(question="Q0?").update(author=personas["annotator"], status=Status.SUBMITTED)
    own = annotator.get(f"/p/{project.slug}/instances/", {"panel": 0}).content.decode()
    assert "Q4?" in own and "Q0?" in own and 'name="panel"' not in own and "panel-k" not in own
    api = annotator.get(f"/api/projects/{project.slug}/instances/", {"panel": 0})
    assert sorted(row["question"] for row in api.json()["results"]) == ["Q0?", "Q4?"]


def test_release_statistics_and_the_card_give_each_models_share_and_the_distribution_of_k(
    project, personas, batch, panel_server
):
    panel_of(project, personas, panel_server, names=("strong", "weak"))
    calibrate(batch, personas)
    Instance.objects.filter(batch=batch).update(status=Status.VALIDATED)
    release = cut_services.release_cut(project=project, actor=None, name="panel", batch_ids=[batch.pk])
    panel = release.statistics["panel"]
    assert panel["calibrated"] == 6
    assert panel["models"] == {
        "strong": {"answered": 4, "asked": 6, "percent": 66.67},
        "weak": {"answered": 2, "asked": 6, "percent": 33.33},
    }
    assert panel["k_of_n"] == {"0 of 2": 2, "1 of 2": 2, "2 of 2": 2}
    item = release.items.get(data__question="Q3?").data
    assert item["panel"] == {"k": 1, "n": 2, "models": {"strong": True, "weak": False}}
    card = statistics_markdown(release.statistics)
    assert "### Difficulty against the panel (6 calibrated questions)" in card
    assert "| strong | 4 | 6 | 66.67 |" in card and "| Questions | 2 | 2 | 2 |" in card


def test_the_calibrate_command_names_the_panel_runs_and_prints_json(project, personas, batch, panel_server):
    import json
    from io import StringIO

    from django.core.management import CommandError, call_command

    panel_of(project, personas, panel_server, names=("strong", "weak"))
    project.panel.clear()
    out = StringIO()
    call_command("calibrate", project=project.slug, batch=batch.name, panel=["strong"], json=True, stdout=out)
    report = json.loads(out.getvalue())
    assert (report["state"], report["items"], report["k_of_n"]) == ("done", 6, {"0 of 1": 2, "1 of 1": 4})
    assert report["models"] == [{"model": "strong", "answered": 4, "asked": 6, "percent": 66.7}]
    with pytest.raises(CommandError, match="No endpoint nowhere"):
        call_command("calibrate", project=project.slug, batch=batch.name, panel=["nowhere"])
    with pytest.raises(CommandError, match="has no batch 'B9'"):
        call_command("calibrate", project=project.slug, batch="B9")


def test_the_api_names_the_panel_calibrates_orders_and_reports_with_a_status_per_role(
    project, personas, batch, panel_server, api_client_for
):
    strong, weak = panel_of(project, personas, panel_server, names=("strong", "weak"))
    project.panel.clear()
    manager = api_client_for(personas["manager"])
    named = manager.put(f"/api/projects/{project.slug}/panel/", {"endpoint_ids": [strong.pk, weak.pk]}, format="json")
    assert (named.status_code, named.json()) == (200, {"endpoint_ids": sorted([strong.pk, weak.pk])})
    assert (
        manager.put(f"/api/projects/{project.slug}/panel/", {"endpoint_ids": [99999]}, format="json").status_code == 404
    )
    assert manager.get(f"/api/batches/{batch.pk}/calibration/").status_code == 404  # never calibrated
    asked = manager.post(f"/api/batches/{batch.pk}/calibration/")
    assert asked.status_code == 202 and asked.json()["state"] == "pending"
    assert manager.post(f"/api/batches/{batch.pk}/calibration/").status_code == 409
    CALIBRATIONS.run(asked.json()["id"], worker="test")
    report = manager.get(f"/api/batches/{batch.pk}/calibration/").json()
    assert (report["state"], report["items_done"], report["k_of_n"]) == (
        "done",
        6,
        {"0 of 2": 2, "1 of 2": 2, "2 of 2": 2},
    )
    ordered = manager.post(f"/api/batches/{batch.pk}/panel-order/", {"panel_order": "hold_answered"}, format="json")
    assert (ordered.status_code, ordered.json()["panel_order"]) == (200, "hold_answered")
    wrong = manager.post(f"/api/batches/{batch.pk}/panel-order/", {"panel_order": "easiest"}, format="json")
    assert wrong.status_code == 400 and "panel_order" in wrong.json()

    expected = {"annotator": 403, "verifier": 403, "outsider": 404, None: 401}
    for role, code in expected.items():
        client = api_client_for(personas[role] if role else None)
        assert client.get(f"/api/projects/{project.slug}/panel/").status_code == code, role
        assert (
            client.put(f"/api/projects/{project.slug}/panel/", {"endpoint_ids": []}, format="json").status_code == code
        )
        assert client.get(f"/api/batches/{batch.pk}/calibration/").status_code == code, role
        assert client.post(f"/api/batches/{batch.pk}/calibration/").status_code == code, role
        assert (
            client.post(f"/api/batches/{batch.pk}/panel-order/", {"panel_order": ""}, format="json").status_code == code
        )
    assert set(project.panel.all()) == {strong, weak} and Calibration.objects.count() == 1
