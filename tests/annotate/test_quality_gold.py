"""Hidden gold in the work queue: served like a draft, scored with the exam's EM, outside the pipeline; running EM
with a Wilson interval; the alert, the audited pause and a manager's restore — with a test per role on every door."""

from __future__ import annotations

import pytest
from django.test import Client

from annotate.quality.intervals import wilson_interval
from annotate.quality.models import GoldProbe, QualityDecision, QualitySettings
from annotate.quality.services import (
    annotator_restore,
    gold_figure,
    probe_is_due,
    probe_submit,
)
from annotate.work.queue import queue_claim
from curation.errors import InvalidInput, NotFound, NotPermitted
from curation.models import Instance, InstanceRevision, Membership, TransitionEvent
from curation.states import Role, Status
from tests.annotate.qualification_support import make_gold
from tests.annotate.quality_helpers import gold_on, refine_and_submit, work_until_probe
from tests.conftest import PASSWORD


@pytest.fixture
def gold(project, context):
    return make_gold(project, context)


def is_qualified(project, user) -> bool:
    return Membership.objects.get(project=project, user=user, role=Role.ANNOTATOR).is_qualified


def test_wilson_interval_matches_the_textbook_values():
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)  # Wilson (1927), 95 %: 8/10 → [0.490, 0.943]
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(5, 5)[1] == 1.0 and wilson_interval(5, 5)[0] > 0.5


def test_exactly_one_claim_in_every_block_of_n_is_gold(project):
    quality = QualitySettings(project=project, gold_every=5)
    user = type("U", (), {"pk": 7})()
    due = [probe_is_due(quality=quality, user=user, claims_so_far=k) for k in range(100)]
    assert [sum(due[i : i + 5]) for i in range(0, 100, 5)] == [1] * 20
    assert len({due.index(True, i, i + 5) - i for i in range(0, 100, 5)}) > 1  # not always the same position


def test_hidden_gold_is_off_by_default(personas, project, drafts, gold):
    for _ in range(6):
        claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
        assert claim.probe_id is None
        Instance.objects.filter(pk=claim.instance_id).update(status=Status.SUBMITTED)
    assert not GoldProbe.objects.exists()


def test_a_probe_is_scored_with_the_exam_em_and_never_enters_the_pipeline(personas, project, drafts, gold):
    gold_on(project, personas["manager"])
    before = {
        g.pk: (g.status, g.version, list(g.answer), g.author_id)
        for g in Instance.objects.filter(pk__in=[g.pk for g in gold])
    }
    gold_events = TransitionEvent.objects.filter(instance_id__in=[g.pk for g in gold]).count()
    gold_revisions = InstanceRevision.objects.filter(instance_id__in=[g.pk for g in gold]).count()
    probe = work_until_probe(project=project, user=personas["annotator"])
    instances_now = Instance.objects.count()
    # Served again while open, whatever "Next" is pressed.
    assert queue_claim(project_slug=project.slug, user=personas["annotator"]).probe_id == probe.pk
    answer = [item.upper() for item in probe.gold.answer][::-1]  # case and order do not matter to EM
    scored = probe_submit(probe_id=probe.pk, user=personas["annotator"], answer=answer)
    assert scored.em == 1.0 and scored.submitted_at is not None
    after = {
        g.pk: (g.status, g.version, list(g.answer), g.author_id)
        for g in Instance.objects.filter(pk__in=[g.pk for g in gold])
    }
    assert after == before
    assert Instance.objects.count() == instances_now  # no instance was made for the probe
    # Only the drafts' own transitions and revisions were written; nothing about the gold instance.
    assert TransitionEvent.objects.filter(instance_id__in=before).count() == gold_events
    assert InstanceRevision.objects.filter(instance_id__in=before).count() == gold_revisions
    with pytest.raises(NotFound):
        probe_submit(probe_id=probe.pk, user=personas["annotator"], answer=["again"])


def test_a_probe_belongs_to_its_annotator_only(personas, project, drafts, gold):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    for name in ("annotator2", "manager", "verifier"):
        with pytest.raises(NotFound):
            probe_submit(probe_id=probe.pk, user=personas[name], answer=["x"])


def test_no_gold_is_served_when_no_real_draft_waits(personas, project, open_batch, gold):
    gold_on(project, personas["manager"], gold_every=2)
    for _ in range(4):
        assert queue_claim(project_slug=project.slug, user=personas["annotator"]) is None
    assert not GoldProbe.objects.exists()


def test_below_the_threshold_over_the_minimum_sample_pauses_and_a_manager_restores(personas, project, drafts, gold):
    gold_on(project, personas["manager"], gold_threshold=0.9, gold_min_sample=2, is_pause_on_fail=True)
    annotator = personas["annotator"]
    first = work_until_probe(project=project, user=annotator)
    probe_submit(probe_id=first.pk, user=annotator, answer=["wrong"])
    assert is_qualified(project, annotator)  # one item is below the minimum sample
    second = work_until_probe(project=project, user=annotator)
    probe_submit(probe_id=second.pk, user=annotator, answer=["wrong again"])
    assert not is_qualified(project, annotator)
    decision = QualityDecision.objects.get(project=project, user=annotator)
    assert decision.action == "paused" and decision.sample == 2 and decision.em == 0.0 and decision.actor is None
    with pytest.raises(NotPermitted):
        queue_claim(project_slug=project.slug, user=annotator)
    with pytest.raises(NotPermitted):
        annotator_restore(project=project, actor=personas["verifier"], user_id=annotator.pk, reason="fine")
    with pytest.raises(InvalidInput):
        annotator_restore(project=project, actor=personas["manager"], user_id=annotator.pk, reason="  ")
    restored = annotator_restore(
        project=project, actor=personas["manager"], user_id=annotator.pk, reason="Talked it through"
    )
    assert restored.action == "restored" and restored.actor == personas["manager"]
    assert is_qualified(project, annotator)
    assert gold_figure(project=project, user_id=annotator.pk)["n"] == 0  # a fresh record after the restore
    with pytest.raises(InvalidInput):  # not paused any more
        annotator_restore(project=project, actor=personas["manager"], user_id=annotator.pk, reason="again")


def test_without_pause_on_fail_the_annotator_keeps_working(personas, project, drafts, gold):
    gold_on(project, personas["manager"], gold_threshold=0.9, gold_min_sample=1)
    probe = work_until_probe(project=project, user=personas["annotator"])
    probe_submit(probe_id=probe.pk, user=personas["annotator"], answer=["wrong"])
    assert is_qualified(project, personas["annotator"])
    assert not QualityDecision.objects.exists()


# --- API: role × action -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("manager", 200), ("verifier", 403), ("annotator", 403), ("outsider", 404), (None, 401)],
)
def test_quality_settings_api_per_role(personas, project, api_client_for, persona, expected):
    client = api_client_for(personas[persona] if persona else None)
    url = f"/api/projects/{project.slug}/quality/"
    assert client.get(url).status_code == expected
    response = client.patch(url, {"gold_every": 5}, format="json")
    assert response.status_code == expected
    assert QualitySettings.objects.filter(project=project, gold_every=5).exists() == (expected == 200)


@pytest.mark.parametrize(
    "body",
    [{"gold_every": -1}, {"gold_every": 1}, {"gold_threshold": 1.5}, {"gold_min_sample": 0}, {"gold_every": "often"}],
)
def test_bad_quality_settings_are_a_400_naming_the_field_and_save_nothing(personas, project, api_client_for, body):
    client = api_client_for(personas["manager"])
    response = client.patch(
        f"/api/projects/{project.slug}/quality/",
        {**body, "gold_min_sample": 3} if "gold_min_sample" not in body else body,
        format="json",
    )
    assert response.status_code == 400
    assert next(iter(body)) in str(response.json())
    assert not QualitySettings.objects.filter(project=project).exclude(gold_every=0, gold_min_sample=10).exists()


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("manager", 200), ("verifier", 403), ("annotator", 403), ("annotator2", 403), ("outsider", 404)],
)
def test_gold_figures_api_per_role(personas, project, drafts, gold, api_client_for, persona, expected):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    probe_submit(probe_id=probe.pk, user=personas["annotator"], answer=list(probe.gold.answer))
    response = api_client_for(personas[persona]).get(f"/api/projects/{project.slug}/quality/gold/")
    assert response.status_code == expected
    if expected == 200:
        (row,) = response.json()
        assert row["user"] == "annotator" and row["n"] == 1 and row["em"] == 1.0
        assert 0.2 < row["low"] < 0.21 and row["high"] == 1.0  # Wilson for 1/1


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("manager", 200), ("verifier", 403), ("annotator", 403), ("annotator2", 403), ("outsider", 404)],
)
def test_restore_api_per_role(personas, project, drafts, gold, api_client_for, persona, expected):
    gold_on(project, personas["manager"], gold_threshold=0.9, gold_min_sample=1, is_pause_on_fail=True)
    probe = work_until_probe(project=project, user=personas["annotator2"])
    probe_submit(probe_id=probe.pk, user=personas["annotator2"], answer=["wrong"])
    assert not is_qualified(project, personas["annotator2"])
    response = api_client_for(personas[persona]).post(
        f"/api/projects/{project.slug}/quality/restore/",
        {"user": personas["annotator2"].pk, "reason": "Re-read the guidelines together"},
        format="json",
    )
    assert response.status_code == expected
    assert is_qualified(project, personas["annotator2"]) == (expected == 200)


def test_the_workspace_api_serves_a_probe_as_an_instance_to_its_holder_only(
    personas, project, drafts, gold, api_client_for
):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    number = probe.number
    assert number and not Instance.objects.filter(pk=number).exists()  # a number no instance has
    assert number > max(d.pk for d in drafts)  # among the drafts' numbers, not the old gold's
    for name in ("annotator2", "manager", "verifier", "outsider"):
        assert api_client_for(personas[name]).get(f"/api/instances/{number}/workspace/").status_code == 404
    mine = api_client_for(personas["annotator"])
    shown = mine.get(f"/api/instances/{number}/workspace/").json()
    assert shown["instance"]["id"] == number and shown["instance"]["status"] == "in_refinement"
    assert shown["instance"]["question"] == probe.gold.question and shown["tables"]
    # Opened as its gold was drafted (this fixture's drafts already said the gold answer: the draft, not a leak).
    assert shown["instance"]["answer"] == probe.gold.draft["answer"]
    assert shown["instance"]["rationale"] == probe.gold.draft["rationale"]
    url = f"/api/instances/{number}/"
    bad = mine.post(f"{url}autosave/", {"expected_version": 2, "answer": "not a list"}, format="json")
    assert bad.status_code == 400
    assert GoldProbe.objects.get(pk=probe.pk).fields == {}  # nothing partial written
    tables = shown["context_table_ids"]
    body = {"answer": list(probe.gold.answer), "answer_form": "short", "answer_source": "table"}
    # A probe is at version 2 as a claimed draft is (drafted at 1, claimed at 2).
    saved = mine.post(f"{url}autosave/", {"expected_version": 2, **body}, format="json")
    assert saved.status_code == 200 and saved.json()["instance"]["version"] == 3
    assert {p["field"] for p in saved.json()["problems"]} == {"answer_type", "relevant_tables"}  # the draft's rule
    stale = mine.post(f"{url}autosave/", {"expected_version": 2, "question": "x"}, format="json")
    assert stale.status_code == 409
    refused = mine.post(f"{url}submit/", {"expected_version": 3}, format="json")
    assert refused.status_code == 400 and GoldProbe.objects.get(pk=probe.pk).submitted_at is None
    assert mine.post(f"{url}ping/").status_code == 200
    final = {"expected_version": 3, "answer_type": "span", "relevant_table_ids": tables}
    response = mine.post(f"{url}submit/", final, format="json")
    assert response.status_code == 200 and response.json()["status"] == "submitted"
    assert "em" not in response.json()
    assert GoldProbe.objects.get(pk=probe.pk).em == 1.0
    assert mine.get(f"/api/instances/{number}/workspace/").status_code == 403  # submitted: as a submitted draft


def test_a_probe_can_be_skipped_with_a_reason_and_is_not_scored(personas, project, drafts, gold, api_client_for):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    mine = api_client_for(personas["annotator"])
    assert mine.post(f"/api/instances/{probe.number}/skip/", {"reason": ""}, format="json").status_code == 400
    skipped = mine.post(f"/api/instances/{probe.number}/skip/", {"reason": "not my field"}, format="json")
    assert skipped.status_code == 200 and skipped.json()["status"] == "drafted"
    probe.refresh_from_db()
    assert probe.submitted_at is not None and probe.em is None and probe.skip_reason == "not my field"
    assert gold_figure(project=project, user_id=personas["annotator"].pk)["n"] == 0


def test_the_queue_api_points_at_the_probe(personas, project, drafts, gold, api_client_for):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    body = api_client_for(personas["annotator"]).post(f"/api/projects/{project.slug}/queue/next/").json()
    assert body["instance"] == probe.number and body["how"] == "held"
    assert body["page"] == f"/p/{project.slug}/work/{probe.number}/"
    assert body["workspace"] == f"/api/instances/{probe.number}/workspace/"


# --- pages ----------------------------------------------------------------------------------------------------------


def test_next_opens_the_probe_in_the_workspace_page(personas, project, drafts, gold):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    client = Client()
    assert client.login(username="annotator", password=PASSWORD)
    response = client.post(f"/p/{project.slug}/work/next/")
    assert response.status_code == 302 and response["Location"] == f"/p/{project.slug}/work/{probe.number}/"
    page = client.get(response["Location"]).content.decode()
    assert probe.gold.question in page and "Accuracy by model." in page
    assert f"Refine #{probe.number}" in page and 'id="refine-form"' in page and "workspace.js" in page
    assert f"/api/instances/{probe.number}/autosave/" in page
    diff = client.get(f"/p/{project.slug}/work/{probe.number}/diff/")
    assert diff.status_code == 200
    skipped = client.post(f"/p/{project.slug}/work/{probe.number}/skip/", {"reason": "cannot read the table"})
    assert skipped.status_code == 302
    assert GoldProbe.objects.get(pk=probe.pk).skip_reason == "cannot read the table"


def test_dashboard_alerts_a_manager_and_restores_from_the_page(personas, project, drafts, gold):
    gold_on(project, personas["manager"], gold_threshold=0.9, gold_min_sample=1, is_pause_on_fail=True)
    probe = work_until_probe(project=project, user=personas["annotator"])
    probe_submit(probe_id=probe.pk, user=personas["annotator"], answer=["wrong"])
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    assert 'id="hidden-gold"' in page and "below the threshold" in page and "paused" in page
    response = client.post(f"/p/{project.slug}/quality/restore/{personas['annotator'].pk}/", {"reason": "ok now"})
    assert response.status_code == 302
    assert is_qualified(project, personas["annotator"])


@pytest.mark.parametrize("persona", ["annotator", "verifier", "outsider"])
def test_only_managers_change_hidden_gold_from_the_page(personas, project, persona):
    client = Client()
    assert client.login(username=persona, password=PASSWORD)
    response = client.post(f"/p/{project.slug}/quality/settings/", {"gold_every": "5", "gold_min_sample": "3"})
    assert response.status_code in (403, 404)
    assert not QualitySettings.objects.filter(project=project, gold_every=5).exists()


def test_a_probe_marked_not_answerable_is_submitted_like_a_draft_and_scores_zero(
    personas, project, drafts, gold, api_client_for
):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    mine = api_client_for(personas["annotator"])
    url = f"/api/instances/{probe.number}/"
    refused = mine.post(f"{url}submit/", {"expected_version": 2, "is_answerable": False}, format="json")
    assert refused.status_code == 400 and "unanswerable_reason" in str(refused.json())  # the draft's rule
    # The refused submission wrote nothing (its edit rolled back with it): still version 2, as claimed.
    # As with a draft, the drafted answer is cleared for an abstention.
    body = {"expected_version": 2, "is_answerable": False, "unanswerable_reason": "No table gives it.", "answer": []}
    response = mine.post(f"{url}submit/", body, format="json")
    assert response.status_code == 200 and response.json()["status"] == "submitted"
    assert GoldProbe.objects.get(pk=probe.pk).em == 0.0


def test_reopening_a_submitted_probe_reads_as_reopening_a_submitted_draft(personas, project, drafts, gold):
    gold_on(project, personas["manager"])
    probe = work_until_probe(project=project, user=personas["annotator"])
    probe_submit(probe_id=probe.pk, user=personas["annotator"], answer=["x"])
    gold_on(project, personas["manager"], gold_every=0)
    claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
    submitted_draft = refine_and_submit(Instance.objects.get(pk=claim.instance_id), personas["annotator"])
    client = Client()
    assert client.login(username="annotator", password=PASSWORD)
    answers = []
    for number in (probe.number, submitted_draft.pk):
        response = client.get(f"/p/{project.slug}/work/{number}/", follow=True)
        answers.append((response.status_code, response.redirect_chain[-1][0] if response.redirect_chain else ""))
        assert "This instance is submitted: it is not in your hands now." in response.content.decode()
    assert answers[0] == answers[1]
    queue_page = client.get(f"/p/{project.slug}/work/").content.decode()
    for number in (probe.number, submitted_draft.pk):  # both listed as done, submitted
        assert f"<tr><td>{number}</td>" in queue_page
    assert queue_page.count("s-submitted") >= 2
    # Counted as handed in alike: the drafts submitted before the probe came, the probe, and the draft after it.
    handed_in = Instance.objects.filter(author=personas["annotator"], status=Status.SUBMITTED).count() + 1
    assert f'data-count="submitted">{handed_in}<' in queue_page
