"""The refinement workspace in a real browser: claim, edit, autosave, reload, submit, shortcuts, two annotators."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from curation.models import Instance
from curation.states import Status
from tests.browser.conftest import open_in_project, type_into

pytestmark = pytest.mark.django_db(transaction=True)


def claim(page, live_server, project) -> int:
    open_in_project(page, "Work queue")
    page.keyboard.press("n")  # the queue page's shortcut for "take the next draft"
    page.wait_for_url(re.compile(r"/work/\d+/$"))
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def test_claim_edit_autosave_reload_and_submit_with_the_keyboard(page, live_server, login, personas, project, drafts):
    login(page, "annotator")
    pk = claim(page, live_server, project)
    assert Instance.objects.get(pk=pk).author == personas["annotator"]

    type_into(page, "#f-question", "Which model has the higher accuracy?")
    page.locator("#f-question").blur()
    expect(page.locator("#save-state")).to_have_text("All changes saved")
    assert Instance.objects.get(pk=pk).question == "Which model has the higher accuracy?"

    page.reload()
    expect(page.locator("#f-question")).to_have_value("Which model has the higher accuracy?")

    # Keyboard only: focus the answer, add a second item, fill the rest, submit with Ctrl+Enter.
    page.keyboard.press("Alt+a")
    page.keyboard.press("Control+a")
    page.keyboard.type("A")
    page.keyboard.press("Alt+i")
    page.keyboard.type("by 6.3 points")
    page.check("input[name=answer_form][value=short]")
    page.check("input[name=answer_source][value=table]")
    page.check("input[name=relevant_table_ids]")
    scale_before = page.locator("#f-scale").input_value()
    page.keyboard.press("Alt+t")  # moves focus to the answer type; it never changes it
    expect(page.locator("input[name=answer_type]:focus")).to_have_count(1)
    expect(page.locator("input[name=answer_type]:checked")).to_have_count(0)
    page.check("input[name=answer_type][value=multi-span]")
    page.keyboard.press("Alt+c")  # moves focus to the scale, which keeps its value
    expect(page.locator("#f-scale")).to_be_focused()
    expect(page.locator("#f-scale")).to_have_value(scale_before)
    page.select_option("#f-scale", "thousand")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda url: f"/work/{pk}/" not in url)
    expect(page.locator(".messages")).to_contain_text(f"Instance {pk} submitted.")

    submitted = Instance.objects.get(pk=pk)
    assert submitted.status == Status.SUBMITTED
    assert submitted.answer == ["A", "by 6.3 points"]
    assert (submitted.answer_type, submitted.scale) == ("multi-span", "thousand")
    assert submitted.revisions.filter(kind="autosave").exists()


def test_submit_shows_what_is_missing(page, live_server, login, personas, project, drafts):
    login(page, "annotator")
    pk = claim(page, live_server, project)
    type_into(page, "#f-question", "")
    page.click("#submit-button")
    expect(page.locator("#problems")).to_contain_text("Write the question.")
    assert Instance.objects.get(pk=pk).status == Status.IN_REFINEMENT


def test_shortcut_overlay_and_diff_toggle(page, live_server, login, personas, project, drafts):
    login(page, "annotator")
    claim(page, live_server, project)
    page.locator("h1").click()
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()
    type_into(page, "#f-question", "A new question")
    page.keyboard.press("Alt+d")
    expect(page.locator("#diff-panel ins").first).to_contain_text("new")


def test_the_form_panel_ends_on_screen_and_says_more_lies_below_until_scrolled_to_its_end(
    page, live_server, login, personas, project, drafts
):
    page.set_viewport_size({"width": 1366, "height": 700})
    login(page, "annotator")
    claim(page, live_server, project)
    panel = page.get_by_role("region", name="Your refinement")
    more = panel.get_by_text("More below")
    # The panel starts below the heading, yet its foot is in the window: Submit is one panel scroll away, not two.
    box = panel.bounding_box()
    assert box["y"] + box["height"] <= 700, box
    expect(more).to_be_visible()
    expect(page.locator("#submit-button")).not_to_be_in_viewport()
    panel.hover()
    for _ in range(10):  # the wheel over the panel, as a person scrolls it, until it is at its end
        page.mouse.wheel(0, 300)
        if not more.is_visible():
            break
    expect(more).to_be_hidden()
    expect(page.locator("#submit-button")).to_be_in_viewport(ratio=1)
    page.mouse.wheel(0, -300)
    expect(more).to_be_visible()


def test_a_change_elsewhere_keeps_what_was_typed(page, live_server, login, personas, project, drafts):
    login(page, "annotator")
    pk = claim(page, live_server, project)
    # Another tab (simulated by a direct save) moves the instance to a newer version.
    from annotate.work.workspace import workspace_autosave

    instance = Instance.objects.get(pk=pk)
    workspace_autosave(
        instance_id=pk, user=personas["annotator"], expected_version=instance.version, fields={"rationale": "other tab"}
    )
    type_into(page, "#f-question", "Typed here and not lost")
    page.locator("#f-question").blur()
    expect(page.locator("#conflict-banner")).to_be_visible()
    page.click("#reload-keep")
    expect(page.locator("#f-question")).to_have_value("Typed here and not lost")
    expect(page.locator("#save-state")).to_have_text("All changes saved", timeout=15000)
    saved = Instance.objects.get(pk=pk)
    assert (saved.question, saved.rationale) == ("Typed here and not lost", "other tab")


def test_a_lease_that_ran_out_keeps_what_was_typed_and_says_so(page, live_server, login, personas, project, drafts):
    """The reaper takes the instance back while the annotator types: the next save is refused, and the page says
    so, keeps the typing in the form (read-only) and in the browser, and links back to the queue."""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.work.leases import leases_reap

    login(page, "annotator")
    pk = claim(page, live_server, project)
    Instance.objects.filter(pk=pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assert leases_reap() == 1
    type_into(page, "#f-question", "Typed after the lease ran out")
    page.locator("#f-question").blur()
    banner = page.locator("#lost-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("You do not hold this instance any more")
    expect(banner).to_contain_text("What you typed since the last save was not saved")
    expect(page.locator("#save-state")).to_have_text("Not saved: this instance is no longer yours")
    expect(page.locator("#f-question")).to_have_value("Typed after the lease ran out")
    expect(page.locator("#f-question")).not_to_be_editable()
    stored = page.evaluate(f"localStorage.getItem('tatcurate-unsaved-{pk}')")
    assert "Typed after the lease ran out" in stored
    assert Instance.objects.get(pk=pk).question != "Typed after the lease ran out"
    banner.get_by_role("link", name="Back to your queue").click()
    page.wait_for_url(lambda url: url.rstrip("/").endswith("/work"))


def test_two_annotators_in_two_browsers_never_get_the_same_instance(browser, live_server, personas, project, drafts):
    from tests.conftest import PASSWORD

    pages = []
    for name in ("annotator", "annotator2"):
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{live_server.url}/")
        type_into(page, "input[name=username]", name)
        type_into(page, "input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        pages.append(page)
    claimed = [claim(page, live_server, project) for page in pages]
    assert claimed[0] != claimed[1]
    holders = {Instance.objects.get(pk=pk).author.username for pk in claimed}
    assert holders == {"annotator", "annotator2"}


def test_the_suggested_answer_type_follows_the_answer_and_applies_on_click(
    page, live_server, login, personas, project, drafts
):
    login(page, "annotator")
    pk = claim(page, live_server, project)
    page.locator("h1").click()
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_contain_text("Focus the answer type")
    page.keyboard.press("Escape")
    hint = page.locator("#type-hint")
    expect(hint).to_have_text("suggested: span")
    expect(page.locator("#type-evidence")).to_have_text("one answer item, not computed")  # its evidence, beside it
    page.click("#add-item")
    page.keyboard.type("B")
    page.locator("#f-question").click()
    expect(hint).to_have_text("suggested: multi-span")
    expect(page.locator("#type-evidence")).to_have_text("2 answer items")
    hint.click()
    expect(page.locator("input[name=answer_type][value=multi-span]")).to_be_checked()
    expect(page.locator("#save-state")).to_have_text("All changes saved")
    assert Instance.objects.get(pk=pk).answer_type == "multi-span"


def test_without_evidence_nothing_is_suggested_and_submit_asks_for_a_choice(
    page, live_server, login, personas, project, drafts
):
    Instance.objects.filter(pk__in=[d.pk for d in drafts]).update(scale=None)  # as drafted without evidence
    login(page, "annotator")
    pk = claim(page, live_server, project)
    expect(page.locator("#f-scale")).to_have_value("")  # "— choose —": no scale is preselected
    type_into(page, "#f-question", "How many models are there?")
    page.keyboard.press("Alt+a")
    page.keyboard.press("Control+a")
    page.keyboard.type("7")
    page.locator("#f-question").click()
    expect(page.locator("#save-state")).to_have_text("All changes saved")
    # A count or a value read from a cell? No evidence decides, so nothing is offered and nothing is chosen.
    expect(page.locator("#type-hint")).to_be_hidden()
    expect(page.locator("#type-evidence")).to_contain_text("choose")
    expect(page.locator("#scale-hint")).to_be_hidden()
    expect(page.locator("#scale-evidence")).to_contain_text("no cell")
    expect(page.locator("input[name=answer_type]:checked")).to_have_count(0)
    page.click("#submit-button")
    expect(page.locator("#problems")).to_contain_text("Choose the answer type")
    expect(page.locator("#problems")).to_contain_text("Choose the scale")
    assert Instance.objects.get(pk=pk).status == Status.IN_REFINEMENT
    page.select_option("#f-scale", "none")  # the scale None, chosen
    expect(page.locator("#save-state")).to_have_text("All changes saved")
    assert Instance.objects.get(pk=pk).scale == ""


def test_a_change_made_while_a_save_is_in_flight_is_not_called_saved_and_is_saved_next(
    page, live_server, login, personas, project, drafts
):
    """The question's save leaves on blur, before the scale is picked; while it is in flight the scale changes. The
    answer to that save must not say "All changes saved" (the scale is not), and the scale is saved right after."""
    login(page, "annotator")
    pk = claim(page, live_server, project)
    held = []  # the first autosave is held back until the scale has changed; the next ones go through
    page.route("**/autosave/", lambda route: route.continue_() if held else held.append(route))
    type_into(page, "#f-question", "Which model is larger?")
    page.locator("#f-question").blur()
    expect(page.locator("#save-state")).to_have_text("Saving…")
    # The page says "Saving…" as the request leaves; the route's handler gets it while Playwright next waits.
    for _ in range(500):
        if held:
            break
        page.wait_for_timeout(20)
    page.select_option("#f-scale", "million")
    # Once the held save has answered, what the page says must be true of what is stored.
    page.evaluate(
        """() => {
            const state = document.getElementById("save-state");
            window.saidSaved = [];
            new MutationObserver(() => window.saidSaved.push(state.textContent))
                .observe(state, { childList: true, characterData: true, subtree: true });
        }"""
    )
    held[0].continue_()
    expect(page.locator("#save-state")).to_have_text("All changes saved")
    said = page.evaluate("() => window.saidSaved")
    assert said[0] == "Unsaved changes", said  # not "All changes saved" while the scale was still unsaved
    saved = Instance.objects.get(pk=pk)
    assert (saved.question, saved.scale) == ("Which model is larger?", "million")


def test_alt_digit_moves_focus_to_the_tables_relevant_box_and_only_space_ticks_it(
    page, live_server, login, personas, project, drafts
):
    login(page, "annotator")
    pk = claim(page, live_server, project)
    box = page.locator("input[name=relevant_table_ids]").first
    ticked = box.is_checked()
    page.locator("#f-question").click()
    page.keyboard.press("Alt+1")  # a shortcut moves the focus; it never changes a value
    expect(box).to_be_focused()
    assert box.is_checked() == ticked
    page.keyboard.press("Space")  # the annotator's own keypress, on the box in focus, marks or unmarks it
    assert box.is_checked() != ticked
    expect(page.locator("#save-state")).to_have_text("All changes saved", timeout=10000)  # autosaved within seconds
    assert Instance.objects.get(pk=pk).relevant_tables.exists() != ticked
