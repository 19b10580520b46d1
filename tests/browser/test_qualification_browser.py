"""The qualification exam in a real browser: pass it with the keyboard, fail it and read the feedback."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.qualification import services
from annotate.qualification.models import QualificationAttempt
from curation.models import Membership
from tests.annotate.qualification.support import make_gold
from tests.browser.conftest import open_in_project, shot

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def gold(project, personas, context):
    gold = make_gold(project, context)
    services.qualification_configure(
        project=project, actor=personas["manager"], instance_ids=[g.pk for g in gold], time_limit_minutes=60
    )
    return gold


def start_exam(page, live_server, project) -> int:
    open_in_project(page, "Qualification exam")
    page.click("#start-exam")
    page.wait_for_url(re.compile(r"/qualification/attempts/\d+/$"))
    expect(page.locator("#countdown")).to_contain_text("left")
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def answer_with_keyboard(page, items: list[str]) -> None:
    """Type the items of one answer (Enter adds the next item), then Ctrl+Enter: save and go to the next question."""
    for index, item in enumerate(items):
        if index:
            page.keyboard.press("Enter")
        page.keyboard.type(item)
    page.keyboard.press("Control+Enter")


def submit(page) -> None:
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#submit-exam")
    expect(page.locator("#result-summary")).to_be_visible()


def test_candidate_passes_the_exam_with_the_keyboard(page, live_server, login, project, personas, gold):
    login(page, "novice")
    pk = start_exam(page, live_server, project)
    expect(page.locator("#item-1 table.data td", has_text="87.3")).to_be_visible()
    # The first answer field has the focus; every answer is typed without the mouse.
    expect(page.locator(f"input[name=answer-{gold[0].pk}]")).to_be_focused()
    answer_with_keyboard(page, ["zyxquorbel"])
    expect(page.locator(f"input[name=answer-{gold[1].pk}]")).to_be_focused()
    answer_with_keyboard(page, ["Brambleworthset", "Quillfeatherset"])
    answer_with_keyboard(page, ["73.9150"])
    answer_with_keyboard(page, ["Vexmoor basin"])
    expect(page.locator("#save-status")).to_contain_text("4 of 4 answered")
    saved = QualificationAttempt.objects.get(pk=pk).answers
    assert saved[str(gold[1].pk)]["answer"] == ["Brambleworthset", "Quillfeatherset"]

    # Leaving and coming back keeps every answer.
    page.reload()
    expect(page.locator(f"input[name=answer-{gold[1].pk}]").nth(1)).to_have_value("Quillfeatherset")

    submit(page)
    expect(page.locator("#verdict")).to_contain_text("Passed")
    expect(page.locator("#score")).to_have_text("100%")
    assert Membership.objects.get(user=personas["novice"], role="annotator").is_qualified


def test_candidate_fails_and_sees_each_mistake_with_gold_and_reason(page, live_server, login, project, personas, gold):
    login(page, "novice")
    start_exam(page, live_server, project)
    page.locator(f"input[name=answer-{gold[0].pk}]").fill("Zyxquorbel")
    # Two items typed, then one removed with its × button: the list editor keeps the rest.
    editor = page.locator("#item-2 .answer-editor")
    editor.locator("input").first.fill("Quillfeatherset")
    editor.locator(".add-item").click()
    editor.locator("input").nth(1).fill("Extraset")
    editor.locator(".remove-item").nth(1).click()
    expect(editor.locator("input")).to_have_count(1)
    page.locator(f"input[name=answer-{gold[2].pk}]").fill("73.9%")
    expect(page.locator("#save-status")).to_contain_text("3 of 4 answered")

    dialogs: list[str] = []
    page.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
    page.click("#submit-exam")
    expect(page.locator("#result-summary")).to_be_visible()
    assert "1 question has no answer and will count as wrong." in dialogs[0]

    expect(page.locator("#verdict")).to_contain_text("Not passed")
    mistakes = page.locator("li.result.mistake")
    expect(mistakes).to_have_count(3)
    expect(page.locator("#results-heading")).to_have_text("1 of 4 correct")
    expect(page.locator("#mistakes-heading")).to_have_text("3 mistakes")
    expect(page.locator("#correct-heading")).to_have_text("1 correct")
    expect(page.locator("#result-1")).to_contain_text("✓ correct")  # listed as correct, under its own heading
    expect(page.locator("#result-1 .gold")).to_have_count(0)
    assert page.locator("#correct-heading ~ ol li.correct").count() == 1
    shot(page, "exam-results", full_page=True)
    second = page.locator("#result-2")
    expect(second.locator(".gold")).to_contain_text("Brambleworthset")
    expect(second.locator(".reason")).to_contain_text("Missing: “Brambleworthset”")
    expect(page.locator("#result-3 .reason")).to_contain_text("Scale or percent differs")
    expect(page.locator("#result-4 .reason")).to_have_text("No answer was given.")
    expect(page.locator("#verdict")).to_contain_text("you may try again from")
    assert not Membership.objects.get(user=personas["novice"], role="annotator").is_qualified


def test_a_manager_builds_the_first_gold_from_drafts_through_the_pages(page, login, project, personas, drafts):
    """A new project with no gold: from the exam settings the manager checks a draft beside its table, corrects it,
    and validates it; the layout check passes at 1366 and 390 px."""
    from pathlib import Path

    from annotate.qualification.models import QualificationItem
    from tests.browser.test_layout import PROBLEMS

    login(page, "manager")
    open_in_project(page, "Exam settings")
    page.locator("#first-gold-link").click()
    page.get_by_role("link", name=f"Check #{drafts[0].pk}").click()
    expect(page.locator("table.data td", has_text="87.3")).to_be_visible()
    page.locator("#id_answer").click()
    page.locator("#id_answer").fill("A")
    page.locator("#id_answer_type").select_option("span")
    page.locator("#id_scale").select_option("none")
    page.locator("#id_answer_form").select_option("short")
    page.locator("#id_answer_source").select_option("table")
    page.get_by_role("checkbox", name="Table 1").check()
    Path("var/screenshots").mkdir(parents=True, exist_ok=True)
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate(PROBLEMS) == []
        shot(page, f"first-gold-{width}", full_page=True)
    page.locator("#gold-validate").click()
    expect(page.locator(".messages")).to_contain_text(f"#{drafts[0].pk} is validated and in the exam's gold pool")
    assert list(QualificationItem.objects.values_list("instance_id", flat=True)) == [drafts[0].pk]
