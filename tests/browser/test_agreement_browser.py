"""Double annotation in a real browser: two annotators refine the same draft independently, the verifier sees both
side by side in round one, keeps the second and approves; the manager's dashboard shows agreement with counts."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.agreement.models import DoubleAnnotation
from annotate.agreement.selectors import project_agreement
from curation.models import Instance
from curation.services.projects import membership_add
from curation.states import Status
from tests.annotate.agreement.helpers import approved_pair, double_on, first_submission, second_submission
from tests.annotate.review.test_round2_stranded import MERGED
from tests.browser.conftest import follow, shot, type_into
from tests.browser.test_layout import check as layout_problems
from tests.browser.test_review_flow import open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# The words of a table whose letters land on more than one line (a word broken mid-word, not at a space or a
# hyphen), as a reader sees them.
WORDS_SPLIT_ACROSS_LINES = """selector => {
  const split = [];
  const walker = document.createTreeWalker(document.querySelector(selector), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.textContent.matchAll(/[^\\s-]+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) split.push(match[0]);
    }
  }
  return split;
}"""


def test_two_annotators_refine_one_draft_the_verifier_keeps_one_and_the_dashboard_shows_agreement(
    browser, live_server, personas, project, context, drafts
):
    double_on(project, personas["manager"], fraction=1.0, seed=3)
    # One pair done before (so the dashboard has two items to agree on); the second pair is worked in the browser.
    first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"])

    # The first annotator refines a fresh draft in the workspace and submits it.
    first = open_as(browser, live_server, "annotator")
    follow(first, "Test Project", within="header.topbar nav")
    follow(first, "Work queue")
    first.locator("#next-button").click()
    first.wait_for_url(re.compile(r"/work/\d+/$"))
    pk = int(first.url.rstrip("/").rsplit("/", 1)[1])
    draft_question = Instance.objects.get(pk=pk).draft["question"]
    type_into(first, "#f-question", "Which model is more accurate, by Table 1?")
    first.locator("#f-question").blur()
    expect(first.locator("#save-state")).to_have_text("All changes saved")
    first.check("input[name=answer_form][value=short]")
    first.check("input[name=answer_source][value=table]")
    first.check("input[name=relevant_table_ids]")
    first.check("input[name=answer_type][value=span]")
    first.keyboard.press("Control+Enter")
    first.wait_for_url(lambda url: f"/work/{pk}/" not in url)
    assert Instance.objects.get(pk=pk).status == Status.SUBMITTED
    double = DoubleAnnotation.objects.get(instance_id=pk)

    # Their next Next is never their own instance's copy.
    first.goto(f"{live_server.url}/p/{project.slug}/work/")
    first.locator("#next-button").click()
    first.wait_for_url(re.compile(r"/work/\d+/$"))
    assert "/work/copy/" not in first.url

    # The second annotator is served the copy: the same draft, none of the first annotator's work.
    second = open_as(browser, live_server, "annotator2")
    follow(second, "Test Project", within="header.topbar nav")
    follow(second, "Work queue")
    second.locator("#next-button").click()
    second.wait_for_url(re.compile(rf"/work/copy/{double.pk}/$"))
    expect(second.locator("#f-question")).to_have_value(draft_question)
    expect(second.locator("body")).not_to_contain_text("by Table 1?")
    expect(second.locator(".ws-context")).to_contain_text("Accuracy by model.")
    second.set_viewport_size({"width": 390, "height": 900})
    shot(second, "copy-390", full_page=True)
    second.set_viewport_size({"width": 1366, "height": 900})
    type_into(second, "#f-question", "Which model reaches the higher accuracy?")
    type_into(second, "#f-answer", "A")
    second.check("input[name=answer_form][value=free]")
    second.check("input[name=answer_source][value=table]")
    second.check("input[name=relevant_table_ids]")
    second.check("input[name=answer_type][value=span]")
    second.select_option("#f-scale", "none")
    shot(second, "copy-1366", full_page=True)
    second.keyboard.press("Control+Enter")
    second.wait_for_url(re.compile(r"/work/$"))
    expect(second.locator("body")).to_contain_text("Submitted.")
    double.refresh_from_db()
    assert double.state == DoubleAnnotation.State.SUBMITTED and double.second_annotator == personas["annotator2"]

    # The verifier takes round one: both versions side by side, the differences marked; keeps the second.
    verifier = open_as(browser, live_server, "verifier")
    follow(verifier, "Test Project", within="header.topbar nav")
    follow(verifier, "Review queue")
    verifier.locator("#review-next").click()
    verifier.wait_for_url(re.compile(r"/review/\d+/$"))
    if not verifier.url.endswith(f"/review/{pk}/"):  # the pair done before came first: keep its first, approve
        expect(verifier.locator("#double")).to_be_visible()
        verifier.locator("#keep-first").click()
        verifier.wait_for_url(re.compile(r"#double$"))
        verifier.locator("#approve-button").click()  # then the next review opens: ours
        verifier.wait_for_url(re.compile(rf"/review/{pk}/$"))
    section = verifier.locator("#double")
    expect(section).to_be_visible()
    row = section.locator("tr[data-field=question]")
    expect(row).to_contain_text("differs")
    expect(row).to_contain_text("by Table 1?")
    expect(row).to_contain_text("reaches the higher accuracy?")
    expect(section.locator("tr[data-field=answer_form]")).to_contain_text("Free-form")
    expect(section.locator("tr[data-field=answer_type]")).to_contain_text("Span")
    shot(section, "round-one-side-by-side")
    verifier.set_viewport_size({"width": 390, "height": 900})
    shot(verifier, "round-one-390", full_page=True)
    shot(section, "round-one-side-by-side-390")
    assert verifier.evaluate(WORDS_SPLIT_ACROSS_LINES, "#double .double-table") == []
    verifier.set_viewport_size({"width": 1366, "height": 900})
    verifier.keyboard.press("Alt+2")  # keep the second version
    verifier.wait_for_url(re.compile(r"#double$"))
    expect(verifier.locator("body")).to_contain_text("Kept the second version")
    expect(verifier.locator("#v-question")).to_contain_text("Which model reaches the higher accuracy?")
    verifier.locator("#approve-button").click()
    verifier.wait_for_load_state()
    kept = Instance.objects.get(pk=pk)
    assert kept.status == Status.ROUND2_REVIEW and kept.question == "Which model reaches the higher accuracy?"
    assert kept.answer_form == "free"

    # The manager's dashboard: agreement per batch and per annotator pair, with counts.
    manager = open_as(browser, live_server, "manager")
    follow(manager, "Test Project", within="header.topbar nav")
    follow(manager, "Dashboard")
    table = manager.locator("#agreement-table")
    figures = project_agreement(project)
    assert figures["overall"]["n"] == 2 and figures["batches"][0]["answer_form_kappa"] is not None
    batch_row = table.locator("tr[data-group=batch]")
    expect(batch_row.locator("td.n")).to_have_text("2")
    expect(batch_row.locator("td.kappa").first).to_have_text(f"{figures['batches'][0]['answer_form_kappa']:.2f}")
    expect(batch_row.locator("td.alpha").first).to_have_text(f"{figures['batches'][0]['answer_form_alpha']:.2f}")
    pair_row = table.locator("tr[data-group=pair]")
    expect(pair_row).to_contain_text("annotator & annotator2")
    expect(pair_row.locator("td.n")).to_have_text("2")
    expect(manager.locator("#agreement svg.grouped-chart")).to_be_visible()
    shot(manager.locator("#agreement"), "dashboard-agreement")
    manager.set_viewport_size({"width": 390, "height": 900})
    shot(manager.locator("#agreement"), "dashboard-agreement-390")


def test_the_second_annotator_reads_what_the_copy_page_asks_and_why_submit_is_refused(
    browser, live_server, personas, project, context, drafts
):
    double_on(project, personas["manager"], fraction=1.0, seed=3)
    first_submission(project=project, user=personas["annotator"])

    second = open_as(browser, live_server, "annotator2")
    follow(second, "Test Project", within="header.topbar nav")
    follow(second, "Work queue")
    second.locator("#next-button").click()
    second.wait_for_url(re.compile(r"/work/copy/\d+/$"))
    expect(second.get_by_role("heading", name=re.compile("^Second annotation"))).to_be_visible()
    expect(second.locator("#copy-about")).to_contain_text("you do not see their version")
    # Every field has a label and a line of help; the choices read as words, not as stored values.
    expect(second.get_by_label("Question")).to_be_visible()
    expect(second.locator("#h-answer")).to_have_text(re.compile("One item per line"))
    expect(second.locator("#fs-answer-type")).to_contain_text("Multi-span")
    expect(second.get_by_label("Scale")).to_contain_text("Thousand")
    # The draft is not ready: the page says so before Submit, and Submit is refused with the reason.
    banner = second.locator("#problems-banner")
    expect(banner).to_contain_text("Before you can submit")
    expect(banner).to_contain_text("Give at least one answer item.")
    expect(second.locator("#fs-answer-form")).to_have_class(re.compile("invalid"))
    for width in (1366, 390):
        second.set_viewport_size({"width": width, "height": 900})
        shot(second, f"copy-empty-{width}", full_page=True)
    # Every control reachable and uncovered, every button in the app's style, no sideways scroll, at both widths.
    assert layout_problems(second, "copy page") == []
    second.locator("#submit-copy").click()
    second.wait_for_load_state()
    assert re.search(r"/work/copy/\d+/$", second.url), "a refused submit stays on the page"
    expect(second.locator(".messages")).to_contain_text("answer")
    assert DoubleAnnotation.objects.get().state == DoubleAnnotation.State.IN_REFINEMENT

    # Filled in as a person does, the warnings go and Submit hands the copy in.
    type_into(second, "#f-answer", "A")
    second.check("input[name=answer_form][value=short]")
    second.check("input[name=answer_source][value=table]")
    second.check("input[name=relevant_table_ids]")
    second.check("input[name=answer_type][value=span]")
    second.select_option("#f-scale", "none")
    second.locator("#save-copy").click()
    second.wait_for_load_state()
    expect(second.locator("#problems-banner")).to_have_count(0)
    second.locator("#submit-copy").click()
    second.wait_for_url(re.compile(r"/work/$"))
    expect(second.locator("body")).to_contain_text("Submitted.")
    assert DoubleAnnotation.objects.get().state == DoubleAnnotation.State.SUBMITTED

    # Back to the copy's page: it is no longer theirs, and the page says so and leads back to the queue.
    second.go_back()
    expect(second.locator("#copy-gone")).to_contain_text("not in your work any more")
    assert second.locator("#copy-form").count() == 0
    follow(second, "Back to your queue", within="main")
    assert second.url.endswith("/work/")


def test_on_a_phone_the_two_versions_stack_field_by_field_without_sideways_scrolling(
    browser, live_server, personas, project, context, drafts
):
    double_on(project, personas["manager"], fraction=1.0, seed=3)
    first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"], question="Which model reaches the top accuracy?")

    verifier = open_as(browser, live_server, "verifier")
    verifier.set_viewport_size({"width": 390, "height": 900})
    follow(verifier, "Test Project", within="header.topbar nav")
    follow(verifier, "Review queue")
    verifier.locator("#review-next").click()
    verifier.wait_for_url(re.compile(r"/review/\d+/$"))
    section = verifier.locator("#double")
    expect(section).to_be_visible()
    shot(section, "round-one-stacked-390")
    table = "#double .double-table"
    assert verifier.evaluate(f"(t => t.scrollWidth <= t.clientWidth)(document.querySelector('{table}'))")
    assert verifier.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    # Each version sits under the field's name, named by its column, the second below the first.
    row = section.locator("tr[data-field=question]")
    first, second = row.locator("td.diff").nth(0), row.locator("td.diff").nth(1)
    expect(first).to_have_attribute("data-label", "First version")
    expect(second).to_contain_text("top accuracy?")
    assert second.bounding_box()["y"] >= first.bounding_box()["y"] + first.bounding_box()["height"] - 1
    keep = row.get_by_label("second")
    box = keep.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    keep.check()
    verifier.locator("#keep-merge").click()
    verifier.wait_for_url(re.compile(r"#double$"))
    expect(verifier.locator("body")).to_contain_text("Merged the versions")


def test_the_manager_is_told_of_a_merged_pair_nobody_may_review_and_reaches_the_way_out(
    browser, live_server, personas, project, context, drafts
):
    """Two qualified annotators, their versions merged in round one: neither may review it in round two. The
    dashboard says so, links to the instance and to Members; a third qualified annotator ends it."""
    instance = approved_pair(personas, project, MERGED)
    manager = open_as(browser, live_server, "manager")
    follow(manager, "Test Project", within="header.topbar nav")
    follow(manager, "Dashboard", within="nav.project-nav")
    banner = manager.locator("#round2-stranded")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("1 instance waits in round two with nobody to review it.")
    expect(banner).to_contain_text("this project's 2 qualified annotators each did one or the other")
    assert not layout_problems(manager, "dashboard with the round-two warning")
    shot(manager, "round2-stranded")
    banner.get_by_role("link", name=f"#{instance.pk}").click()
    manager.wait_for_url(re.compile(rf"/history/{instance.pk}/$"))
    expect(manager.locator("main")).to_contain_text(instance.question)
    manager.go_back()
    manager.locator("#round2-stranded").get_by_role("link", name="Add an annotator").click()
    manager.wait_for_url(re.compile(r"/members/$"))
    expect(manager.locator("h1")).to_contain_text("Members")
    # A colleague who did not verify it joins as a qualified annotator.
    membership_add(project=project, actor=None, username="verifier2", role="annotator", is_qualified=True)
    follow(manager, "Dashboard", within="nav.project-nav")
    expect(manager.locator("#batches")).to_be_visible()
    expect(manager.locator("#round2-stranded")).to_have_count(0)
