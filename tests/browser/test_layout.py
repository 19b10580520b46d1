"""Layout check: on each role's main pages, reached by clicking through the navigation, every form control can be
reached and is not covered (the element at its centre is the control or inside it), and the page never scrolls
sideways, at a laptop width (1366 px) and a phone width (390 px)."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from curation.models import Batch, Project
from curation.services.releases import release_cut
from tests.browser.conftest import follow, follow_project_nav, type_into

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1366, 390)
PROJECT = "Demo: sparse adapters paper"

# Each role's main pages, as the names of the links in the project navigation.
PAGES = {
    "manager": [
        "Papers",
        "Batches",
        "Drafting",
        "Model endpoints",
        "Prompt templates",
        "Dashboard",
        "Exam settings",
        "Import a dataset",
        "Releases",
        "Discussions",
        "Guidelines",
    ],
    "verifier": ["Review queue", "Papers", "Discussions", "Releases"],
    "annotator": ["Qualification exam", "Guidelines", "Releases"],
    "annotator2": ["Work queue", "Round two", "Releases"],
}

# For every visible control: scroll it into view, then ask what the browser finds at its centre.
PROBLEMS = """() => {
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) problems.push(`page scrolls sideways: ${doc.scrollWidth} > ${doc.clientWidth}`);
  const controls = document.querySelectorAll("main input:not([type=hidden]), main select, main textarea, main button");
  for (const el of controls) {
    const style = getComputedStyle(el);
    if (el.closest("dialog:not([open]), details:not([open]) > :not(summary), [hidden]")) continue;
    if (style.display === "none" || style.visibility === "hidden") continue;
    const box0 = el.getBoundingClientRect();
    if (box0.width === 0 && box0.height === 0) continue;
    const name = `${el.tagName.toLowerCase()}[name=${el.name || ""}]#${el.id || ""} "${(el.innerText || el.value || "").slice(0, 30)}"`;
    // A box that hides its overflow cannot be scrolled by a person: the control must lie inside it.
    let clipped = null;
    for (let a = el.parentElement; a && a !== doc; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (![s.overflowX, s.overflowY].some(v => v === "hidden" || v === "clip")) continue;
      const r = a.getBoundingClientRect();
      if (box0.left < r.left - 1 || box0.right > r.right + 1 || box0.top < r.top - 1 || box0.bottom > r.bottom + 1) {
        clipped = `${a.tagName.toLowerCase()}.${a.className}`; break;
      }
    }
    if (clipped) { problems.push(`${name} is cut off by ${clipped}`); continue; }
    el.scrollIntoView({block: "center", inline: "center"});
    const box = el.getBoundingClientRect();
    if (box.width < 8 || box.height < 8) { problems.push(`${name} is ${box.width}x${box.height} px`); continue; }
    const x = box.left + box.width / 2, y = box.top + box.height / 2;
    if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) { problems.push(`${name} cannot be scrolled into view`); continue; }
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(hit === el || el.contains(hit) || (hit.tagName === "LABEL" && hit.control === el))) {
      problems.push(`${name} is covered by ${hit ? hit.tagName.toLowerCase() + "." + hit.className : "nothing"}`);
    }
  }
  window.scrollTo(0, 0);
  return problems;
}"""


@pytest.fixture
def demo_with_release(db):
    call_command("demo", "--json", stdout=StringIO())
    project = Project.objects.get(slug="demo")
    batch = Batch.objects.get(project=project, name="Validated demo items")
    return release_cut(project=project, actor=None, name="demo", batch_ids=[batch.pk])


def check(page, where: str) -> list[str]:
    found = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        found += [f"{where} at {width} px: {p}" for p in page.evaluate(PROBLEMS)]
    page.set_viewport_size({"width": 1366, "height": 800})
    return found


def log_in(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/")
    type_into(page, "input[name=username]", username)
    type_into(page, "input[name=password]", f"demo-{username}")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


@pytest.mark.parametrize("username", sorted(PAGES))
def test_every_control_of_the_main_pages_is_reachable_and_uncovered(page, live_server, demo_with_release, username):
    log_in(page, live_server, username)
    problems = check(page, "home")
    follow(page, PROJECT, within="main")
    problems += check(page, "project page")
    for name in PAGES[username]:
        follow_project_nav(page, name)
        problems += check(page, name)
    if username == "manager":
        follow_project_nav(page, "Papers")
        follow(page, "Upload LaTeX sources")
        problems += check(page, "upload")
        follow_project_nav(page, "Papers")
        page.locator("#paper-list a").first.click()
        problems += check(page, "paper page")
        follow_project_nav(page, "Releases")
        follow(page, "demo", within="main")
        problems += check(page, "release page")
        follow(page, "Score a model")
        problems += check(page, "score page")
    if username == "annotator2":
        follow_project_nav(page, "Work queue")
        page.click("#next-button")
        page.wait_for_url(re.compile(r"/work/\d+/$"))
        expect(page.locator("#f-question")).to_be_visible()
        problems += check(page, "workspace")
    assert not problems, "\n".join(problems)
