"""Round one and round two: the decision buttons are in sight without scrolling, at 1366×768 and 390 px, however long
the diff."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.review.services import review_claim, round2_claim
from curation.batches.services import batch_create, batch_open
from curation.models import Instance
from curation.states import Status
from tests.annotate.review.helpers import submit, to_round2
from tests.browser.conftest import open_in_project, shot, type_into

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = " ".join(f"Step {n}: the table gives {n}.5 for model A against {n}.1 for model B on {n}." for n in range(40))


def hit(page, selector: str) -> bool:
    """The button itself is what a click at its centre reaches (nothing covers it)."""
    return page.locator(selector).evaluate(
        "el => { const r = el.getBoundingClientRect();"
        " const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
        " return at === el || el.contains(at); }"
    )


def in_viewport(page, selector: str) -> bool:
    return page.locator(selector).evaluate(
        "el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.width > 0; }"
    )


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
def test_the_decision_buttons_are_visible_without_scrolling_and_stay_so(
    page, login, live_server, personas, project, make_instance, width, height
):
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="Batch 1").pk, actor=None)
    drafted = make_instance(
        batch=batch, draft={"question": "Draft: which model wins?", "rationale": LONG.replace("model", "system")}
    )
    instance = submit(
        project, personas["annotator"], drafted, question="Which model wins on each split?", rationale=LONG
    )
    review_claim(instance_id=instance.pk, user=personas["verifier"])
    page.set_viewport_size({"width": width, "height": height})
    login(page, "verifier")
    open_in_project(page, "Review queue")
    page.get_by_role("link", name=re.compile(rf"#{instance.pk}\b")).first.click()
    page.wait_for_url(re.compile(rf"/review/{instance.pk}/$"))
    heading = page.get_by_role("heading", level=1).inner_text()
    assert heading.startswith(f"Round one · #{instance.pk}") and "Round 1 review" not in heading
    expect(page.locator("#diff-panel")).to_contain_text("system")  # the long diff is there
    for button in ("#approve-button", "#changes-button", "#release-button"):
        expect(page.locator(button)).to_be_visible()
        assert in_viewport(page, button), (button, width)
    shot(page, f"review-decision-{width}")
    # Reading down to the last comment field keeps the decision in sight.
    type_into(page, "#c-rationale", "Cite the split names.")
    assert in_viewport(page, "#changes-button")
    shot(page, f"review-decision-{width}-scrolled")
    # Down past the panel to the end of the page (the history): the buttons are still there to click.
    page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
    at_end = "() => scrollY > 0 && Math.ceil(scrollY + innerHeight) >= document.documentElement.scrollHeight - 2"
    assert page.evaluate(at_end)
    for button in ("#approve-button", "#changes-button", "#release-button"):
        assert in_viewport(page, button) and hit(page, button), (button, width)
    shot(page, f"review-decision-{width}-bottom")
    page.click("#changes-button")
    page.wait_for_url(lambda url: f"/review/{instance.pk}/" not in url)
    assert Instance.objects.get(pk=instance.pk).status == Status.CHANGES_REQUESTED


def test_alt_a_still_approves_from_the_top_bar(page, login, live_server, personas, project, make_instance):
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="Batch 1").pk, actor=None)
    instance = submit(project, personas["annotator"], make_instance(batch=batch), rationale=LONG)
    review_claim(instance_id=instance.pk, user=personas["verifier"])
    page.set_viewport_size({"width": 1366, "height": 768})
    login(page, "verifier")
    open_in_project(page, "Review queue")
    page.get_by_role("link", name=re.compile(rf"#{instance.pk}\b")).first.click()
    page.wait_for_url(re.compile(rf"/review/{instance.pk}/$"))
    page.keyboard.press("Alt+a")
    page.wait_for_url(lambda url: f"/review/{instance.pk}/" not in url)
    assert Instance.objects.get(pk=instance.pk).status == Status.ROUND2_REVIEW


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
def test_round_two_confirm_and_flag_are_in_sight_without_scrolling(
    page, login, live_server, personas, project, make_instance, width, height
):
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="Batch 1").pk, actor=None)
    instance = to_round2(project, personas, make_instance(batch=batch))
    claimed = round2_claim(instance_id=instance.pk, user=personas["annotator2"])
    page.set_viewport_size({"width": width, "height": height})
    login(page, "annotator2")
    open_in_project(page, "Round two")
    page.get_by_role("link", name=re.compile(rf"#{claimed.pk}\b")).first.click()
    page.wait_for_url(re.compile(rf"/round2/{instance.pk}/$"))
    for button in ("#confirm-button", "#flag-button"):
        expect(page.locator(button)).to_be_visible()
        assert in_viewport(page, button) and hit(page, button), (button, width)
    shot(page, f"round2-decision-{width}")
    # Writing the flag's message at the end of the form keeps the buttons in sight; flagging needs no scrolling back.
    type_into(page, "#c-answer", "The answer should name both models.")
    type_into(page, "#flag-message", "Both models tie on the test split.")
    assert in_viewport(page, "#flag-button") and hit(page, "#flag-button")
    page.click("#flag-button")
    page.wait_for_url(lambda url: f"/round2/{instance.pk}/" not in url)
    assert Instance.objects.get(pk=instance.pk).status == Status.IN_DISCUSSION
