"""Exam pages: the candidate's landing page, the exam (tables, list editor, autosave), results, the manager's set-up."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.qualification import services
from annotate.qualification.models import QualificationAttempt, QualificationSettings
from curation.models import Membership
from tests.support.clients import logged_in


@pytest.fixture
def exam(project, personas, gold):
    return services.qualification_configure(
        project=project, actor=personas["manager"], instance_ids=[g.pk for g in gold], time_limit_minutes=45
    )


def form_for(attempt, answers: dict[int, list[str]]) -> dict[str, object]:
    data: dict[str, object] = {}
    for pk in attempt.item_ids:
        data[f"item-{pk}"] = "1"
        data[f"answer-{pk}"] = answers.get(pk, [])
        data[f"rationale-{pk}"] = ""
    return data


def test_candidate_starts_and_sees_the_exam_with_real_tables(project, exam, gold):
    client = logged_in("novice")
    landing = client.get("/p/test-project/qualification/").content.decode()
    assert "4</strong> questions" in landing and "annotation guidelines" in landing
    response = client.post("/p/test-project/qualification/start/")
    attempt = QualificationAttempt.objects.get(user__username="novice")
    assert response["Location"] == f"/qualification/attempts/{attempt.pk}/"
    html = client.get(response["Location"]).content.decode()
    assert html.count('<table class="data">') == len(gold)
    assert "<td>87.3</td>" in html
    assert "Table 1 shows A beats B." in html
    assert gold[1].question in html
    assert f'name="answer-{gold[0].pk}"' in html
    assert 'id="countdown"' in html and "data-deadline=" in html
    assert "Requirements for questions" in html  # the guidelines panel


def test_autosave_keeps_lists_and_reports_progress(project, exam, gold):
    client = logged_in("novice")
    client.post("/p/test-project/qualification/start/")
    attempt = QualificationAttempt.objects.get(user__username="novice")
    response = client.post(
        f"/qualification/attempts/{attempt.pk}/save/", form_for(attempt, {gold[1].pk: ["One", "", "Two"]})
    )
    assert response.status_code == 200
    assert "1 of 4 answered" in response.content.decode()
    attempt.refresh_from_db()
    assert attempt.answers[str(gold[1].pk)]["answer"] == ["One", "Two"]
    page = client.get(f"/qualification/attempts/{attempt.pk}/").content.decode()
    assert 'value="One"' in page and 'value="Two"' in page
    # A request without an item's marker leaves that item's saved answer alone.
    client.post(f"/qualification/attempts/{attempt.pk}/save/", {f"item-{gold[0].pk}": "1", f"answer-{gold[0].pk}": "x"})
    attempt.refresh_from_db()
    assert attempt.answers[str(gold[1].pk)]["answer"] == ["One", "Two"]


def test_autosave_after_the_deadline_says_time_is_up(project, exam, gold):
    client = logged_in("novice")
    client.post("/p/test-project/qualification/start/")
    attempt = QualificationAttempt.objects.get(user__username="novice")
    QualificationAttempt.objects.filter(pk=attempt.pk).update(deadline_at=timezone.now() - timedelta(minutes=1))
    response = client.post(f"/qualification/attempts/{attempt.pk}/save/", form_for(attempt, {}))
    assert response.status_code == 409
    assert "Time is up" in response.content.decode()
    # Opening the exam after the deadline closes and scores it.
    page = client.get(f"/qualification/attempts/{attempt.pk}/").content.decode()
    assert "Not passed" in page and "No answer was saved before the time limit." in page


def test_submit_passes_and_results_say_so(project, exam, gold):
    client = logged_in("novice")
    client.post("/p/test-project/qualification/start/")
    attempt = QualificationAttempt.objects.get(user__username="novice")
    answers = {g.pk: list(g.answer) for g in gold}
    response = client.post(f"/qualification/attempts/{attempt.pk}/submit/", form_for(attempt, answers))
    assert response.status_code == 302
    html = client.get(f"/qualification/attempts/{attempt.pk}/").content.decode()
    assert "Passed." in html and 'id="no-mistakes">No mistakes.' in html
    assert f'id="results-heading">{len(gold)} of {len(gold)} correct' in html
    assert html.count(f"{len(gold)} of {len(gold)} correct") == 1  # once, not in the summary too
    assert Membership.objects.get(user__username="novice", role="annotator").is_qualified
    landing = client.get("/p/test-project/qualification/").content.decode()
    assert "You are qualified" in landing


def test_failed_results_list_each_mistake_and_when_to_retry(project, exam, gold):
    client = logged_in("novice")
    client.post("/p/test-project/qualification/start/")
    attempt = QualificationAttempt.objects.get(user__username="novice")
    answers = {g.pk: list(g.answer) for g in gold}
    answers[gold[2].pk] = ["73.9%"]
    client.post(f"/qualification/attempts/{attempt.pk}/submit/", form_for(attempt, answers))
    html = client.get(f"/qualification/attempts/{attempt.pk}/").content.decode()
    assert "Not passed." in html and 'id="mistakes-heading">1 mistake<' in html
    # Score and threshold in percent, as the exam's intro states the threshold ("at least 95%").
    assert 'Exact match: <strong id="score">75%</strong> — passing needs at least 95%' in html
    landing = client.get("/p/test-project/qualification/").content.decode()
    assert "at least <strong>95%</strong>" in landing and "<td>75%</td>" in landing  # the attempts list alike
    assert f'id="results-heading">{len(gold) - 1} of {len(gold)} correct' in html
    assert f'id="correct-heading">{len(gold) - 1} correct' in html
    # The gold answer is shown for the mistake; a correct item shows the candidate's own answer, marked correct.
    mistake = html.split('id="mistakes-heading"')[1].split('id="correct-heading"')[0]
    assert "73.9%" in mistake and 'class="gold"' in mistake and mistake.count('class="card result mistake"') == 1
    correct = html.split('id="correct-heading"')[1]
    assert 'class="gold"' not in correct and correct.count("✓ correct") == len(gold) - 1
    assert "Scale or percent differs" in html
    assert "you may try again from" in html
    landing = client.get("/p/test-project/qualification/").content.decode()
    assert 'id="retry-note"' in landing and 'id="start-exam"' not in landing
    assert "Feedback" in landing


def test_others_cannot_open_a_candidates_attempt_but_the_manager_can(project, exam, gold):
    logged_in("novice").post("/p/test-project/qualification/start/")
    attempt = QualificationAttempt.objects.get(user__username="novice")
    assert logged_in("annotator").get(f"/qualification/attempts/{attempt.pk}/").status_code == 404
    assert logged_in("verifier").get(f"/qualification/attempts/{attempt.pk}/").status_code == 404
    manager_view = logged_in("manager").get(f"/qualification/attempts/{attempt.pk}/").content.decode()
    assert "Exam in progress" in manager_view and gold[0].answer[0] not in manager_view
    assert logged_in("manager").post(f"/qualification/attempts/{attempt.pk}/submit/", {}).status_code == 404


def test_manager_configures_by_checkbox_and_sees_attempts(project, personas, gold):
    client = logged_in("manager")
    page = client.get("/p/test-project/qualification/manage/").content.decode()
    assert f'value="{gold[0].pk}"' in page and "No attempts yet" in page
    settings = {"instance_ids": [gold[0].pk, gold[2].pk], "threshold": "0.9", "time_limit_minutes": ""}
    # More items per attempt than the pool holds would make every attempt shorter than asked: refused, by the field.
    refused = client.post("/p/test-project/qualification/manage/", {**settings, "size": "20", "retry_delay_hours": "2"})
    assert refused.status_code == 400
    beside_size = refused.content.decode().split('name="size"', 1)[1].split("<label", 1)[0]
    assert "Items per attempt (20) is more than the 2 gold items of the pool" in beside_size
    assert not QualificationSettings.objects.filter(project=project, item_links__isnull=False).exists()
    # A pool for one retry is saved quietly; a pool of one attempt is saved with a warning in numbers.
    quiet = client.post("/p/test-project/qualification/manage/", {**settings, "size": "1", "retry_delay_hours": "2"})
    assert "supports no retry" not in client.get(quiet.url).content.decode()
    response = client.post("/p/test-project/qualification/manage/", {**settings, "size": "2", "retry_delay_hours": "2"})
    assert response.status_code == 302
    warned = client.get(response.url).content.decode()
    assert "The exam is saved" in warned
    assert "The pool of 2 gold items at 2 items per attempt supports no retry" in warned
    assert "Add 2 more gold items" in warned
    exam = QualificationSettings.objects.get(project=project)
    assert list(exam.item_links.values_list("instance_id", flat=True)) == [gold[0].pk, gold[2].pk]
    assert (exam.threshold, exam.time_limit_minutes, exam.retry_delay_hours) == (0.9, None, 2)
    attempt = services.attempt_start(project=project, user=personas["novice"])
    services.attempt_submit(attempt_id=attempt.pk, user=personas["novice"], answers={})
    page = client.get("/p/test-project/qualification/manage/").content.decode()
    assert f'data-attempt="{attempt.pk}"' in page and "not passed" in page
    client.post("/p/test-project/qualification/manage/", {"auto_pick": "1", "threshold": "0.95", "size": "3"})
    exam = QualificationSettings.objects.get(project=project)
    assert (exam.size, exam.item_links.count()) == (3, len(gold))  # the pool: all four gold items (≤ 3 × 3)
    assert logged_in("annotator").get("/p/test-project/qualification/manage/").status_code == 403
    assert logged_in("outsider").get("/p/test-project/qualification/manage/").status_code == 404


def test_exam_settings_refused_field_by_field_and_nothing_saved(project, personas, gold):
    client = logged_in("manager")
    url = "/p/test-project/qualification/manage/"
    typed = client.post(url, {"instance_ids": [gold[0].pk], "threshold": "high", "retry_delay_hours": "soon"})
    assert typed.status_code == 400
    page = typed.content.decode()
    # The API's input serializer checks the form: its refusals go beside their fields.
    assert "A valid number is required." in page.split('name="threshold"', 1)[1].split("<label", 1)[0]
    assert "A valid integer is required." in page.split('name="retry_delay_hours"', 1)[1].split("</div>", 1)[0]
    ranged = client.post(url, {"instance_ids": [gold[0].pk], "threshold": "1.5"})
    assert ranged.status_code == 400
    beside_threshold = ranged.content.decode().split('name="threshold"', 1)[1].split("<label", 1)[0]
    assert "Give a share between 0.01 and 1, e.g. 0.95." in beside_threshold  # the range, both ends
    items = client.post(url, {"instance_ids": [gold[0].pk, "first"]}).content.decode()
    assert "A valid integer is required." in items.split('name="retry_delay_hours"', 1)[1]  # beside the items
    none = client.post(url, {"threshold": "0.9"}).content.decode()
    assert "Pick at least one instance for the exam." in none  # no item ticked, auto-pick not ticked
    assert not QualificationSettings.objects.filter(project=project, item_links__isnull=False).exists()
    client.post(url, {"instance_ids": [gold[0].pk], "threshold": "0.9", "time_limit_minutes": "30"})
    client.post(url, {"instance_ids": [gold[0].pk], "threshold": "", "time_limit_minutes": ""})
    exam = QualificationSettings.objects.get(project=project)
    assert (exam.threshold, exam.time_limit_minutes) == (0.9, None)  # an empty number keeps it; an empty limit: none


def test_the_manager_is_told_which_chosen_items_are_already_released(project, personas, gold, exam):
    from curation.services.lifecycle import instances_transition_bulk
    from curation.states import Status

    client = logged_in("manager")
    quiet = client.get("/p/test-project/qualification/manage/").content.decode()
    assert 'id="pool-released"' not in quiet and "Release cuts withhold the chosen items" in quiet
    instances_transition_bulk(
        instance_ids=[gold[1].pk], target=Status.RELEASED, expected_status=Status.VALIDATED, reason="released elsewhere"
    )
    page = client.get("/p/test-project/qualification/manage/").content.decode()
    assert "1 chosen item is already in a release" in page
    assert page.count('<span class="badge">released</span>') == 1
