"""With the demo data, a qualified annotator refines and submits several drafts using the keyboard alone."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from curation.models import Instance
from curation.states import Status
from tests.browser.conftest import open_in_project

pytestmark = pytest.mark.django_db(transaction=True)


def test_demo_annotator_works_through_drafts_with_the_keyboard(page, live_server):
    call_command("demo", "--json", stdout=StringIO())
    page.goto(f"{live_server.url}/")  # the login form, its username field focused
    page.keyboard.type("annotator2")
    page.keyboard.press("Tab")
    page.keyboard.type("demo-annotator2")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    open_in_project(page, "Work queue", project="Demo: sparse adapters paper")
    page.keyboard.press("n")

    submitted = []
    for round_ in range(3):
        page.wait_for_url(re.compile(r"/work/\d+/$"))
        pk = int(page.url.rstrip("/").rsplit("/", 1)[1])
        page.keyboard.press("Alt+a")  # focus the first answer item
        page.keyboard.press("End")
        page.keyboard.type(f" (checked {round_})")
        page.keyboard.press("Alt+o")  # focus the answer source: a shortcut never changes a value
        page.keyboard.press("Alt+c")  # focus the scale; when none is chosen yet, type N for None
        if page.locator("#f-scale").input_value() == "":
            page.keyboard.type("N")
        page.keyboard.press("Control+Enter")
        page.wait_for_url(lambda url, pk=pk: f"/work/{pk}/" not in url)
        submitted.append(pk)

    for pk in submitted:
        instance = Instance.objects.get(pk=pk)
        assert instance.status == Status.SUBMITTED
        assert instance.answer[0].endswith(")") and "(checked" in instance.answer[0]
