"""The demo project gets a qualification exam its annotator can pass, built over the demo paper."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from annotate.qualification import services
from annotate.qualification.demo_exam import DEMO_GOLD, demo_exam_seed
from annotate.qualification.models import Guidelines, QualificationAttempt
from curation.errors import NotPermitted
from curation.models import Membership, Project


@pytest.mark.django_db
def test_demo_annotator_can_pass_the_seeded_exam():
    call_command("demo", "--json")
    project = Project.objects.get(slug="demo")
    exam = demo_exam_seed(project=project)
    assert exam.item_links.count() == len(DEMO_GOLD)
    assert demo_exam_seed(project=project).pk == exam.pk  # idempotent
    assert exam.item_links.count() == len(DEMO_GOLD)
    assert Guidelines.objects.filter(project=project).count() == 1
    annotator = get_user_model().objects.get(username="annotator")
    attempt = services.attempt_start(project=project, user=annotator)
    # The answers as a careful reader of the demo paper gives them (case and order differ from the gold).
    answers = dict(zip(map(str, attempt.item_ids), [["8.1"], ["yoruba"], ["LoRA", "Adapters"], ["4.2"], ["90%"]]))
    result = services.attempt_submit(attempt_id=attempt.pk, user=annotator, answers=answers)
    assert result.passed, result.results
    assert Membership.objects.get(project=project, user=annotator, role="annotator").is_qualified


@pytest.mark.django_db
def test_demo_retry_waits_and_then_brings_new_questions():
    call_command("demo", "--json")
    project = Project.objects.get(slug="demo")
    exam = demo_exam_seed(project=project)
    assert exam.item_links.count() >= 3 * exam.size and exam.retry_delay_hours > 0
    annotator = get_user_model().objects.get(username="annotator")
    first = services.attempt_start(project=project, user=annotator)
    wrong = {str(pk): ["no idea"] for pk in first.item_ids}
    assert not services.attempt_submit(attempt_id=first.pk, user=annotator, answers=wrong).passed
    with pytest.raises(NotPermitted, match="try again from"):
        services.attempt_start(project=project, user=annotator)
    QualificationAttempt.objects.filter(pk=first.pk).update(
        submitted_at=timezone.now() - timedelta(hours=exam.retry_delay_hours, minutes=1)
    )
    second = services.attempt_start(project=project, user=annotator)
    assert len(second.item_ids) == exam.size and not set(second.item_ids) & set(first.item_ids)
