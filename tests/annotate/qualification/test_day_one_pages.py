"""Day-one page fixes: banners only for the current project, the exam results page inside its project's
navigation, the role message's article, and a 403 logged on one line."""

from __future__ import annotations

import logging

from annotate.qualification.guidelines import guidelines_ensure_default
from annotate.qualification.models import QualificationAttempt
from curation.members.views import with_article
from curation.models import Membership
from curation.services.projects import project_create
from curation.states import Role
from tests.support.clients import logged_in


def test_a_projects_page_shows_only_its_own_guideline_banners(project, personas):
    other = project_create(name="Other project", creator=None, slug="other")
    Membership.objects.create(user=personas["annotator"], project=other, role=Role.ANNOTATOR)
    guidelines_ensure_default(project=project)
    guidelines_ensure_default(project=other)
    client = logged_in("annotator")
    on_project = client.get(f"/p/{project.slug}/").content.decode()
    assert f'data-project="{project.slug}"' in on_project and 'data-project="other"' not in on_project
    home = client.get("/").content.decode()
    assert f'data-project="{project.slug}"' in home and 'data-project="other"' in home


def test_the_exam_results_page_has_the_project_navigation(project, personas):
    attempt = QualificationAttempt.objects.create(project=project, user=personas["novice"], item_ids=[])
    html = logged_in("novice").get(f"/qualification/attempts/{attempt.pk}/").content.decode()
    assert '<nav class="project-nav" aria-label="Project">' in html


def test_the_role_message_has_the_right_article(project, personas, make_user):
    assert (with_article("annotator"), with_article("verifier")) == ("an annotator", "a verifier")
    make_user("newcomer")
    response = logged_in("manager").post(
        f"/p/{project.slug}/members/", {"username": "newcomer", "role": "annotator"}, follow=True
    )
    assert "newcomer is now an annotator of Test Project." in response.content.decode()


def test_a_403_is_logged_on_one_line(settings):
    from curation.log_filters import RefusalsOnOneLine

    assert "refusals_on_one_line" in settings.LOGGING["handlers"]["console"]["filters"]
    try:
        raise PermissionError("Only a manager of this project may see its members.")
    except PermissionError:
        import sys

        exc_info = sys.exc_info()

    def record(status: int) -> logging.LogRecord:
        made = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Forbidden: %s", ("/p/x/",), exc_info)
        made.status_code = status
        return made

    refused, failed = record(403), record(500)
    RefusalsOnOneLine().filter(refused)
    RefusalsOnOneLine().filter(failed)
    assert "\n" not in logging.Formatter("%(levelname)s %(name)s %(message)s").format(refused)
    assert "Traceback" in logging.Formatter("%(message)s").format(failed)  # a fault keeps its traceback


def test_skip_and_stop_claims_nothing_new(project, personas, drafts):
    from curation.models import Instance
    from curation.states import Status
    from tests.annotate.work.helpers import queue_next

    held = queue_next(project=project, user=personas["annotator"])
    client = logged_in("annotator")
    response = client.post(f"/p/{project.slug}/work/{held.pk}/skip/", {"reason": "not my field", "then": "stop"})
    assert response.status_code == 302 and response["Location"] == f"/p/{project.slug}/work/"
    assert not Instance.objects.filter(author=personas["annotator"], status=Status.IN_REFINEMENT).exists()
    assert Instance.objects.get(pk=held.pk).status == Status.DRAFTED
    workspace = client.get(f"/p/{project.slug}/work/")
    assert workspace.status_code == 200


def test_the_draft_diff_sits_at_the_top_of_the_form_panel_not_below_submit(project, personas, drafts):
    from tests.annotate.work.helpers import queue_next

    held = queue_next(project=project, user=personas["annotator"])
    html = logged_in("annotator").get(f"/p/{project.slug}/work/{held.pk}/").content.decode()
    panel = html[html.index('class="ws-form"') :]
    assert panel.index('id="diff-container"') < panel.index('id="submit-button"')
    assert 'id="skip-stop"' in html


def test_the_answer_and_the_numbers_its_rationale_quotes_mark_their_cells(project, personas, context):
    from types import SimpleNamespace

    from curation.templatetags.tables import data_table, source_values

    table = context.tables.get()  # Model/Acc; A 87.3; B 81.0
    instance = SimpleNamespace(answer=["6.3"], rationale="Table 1: A has 87.3 and B has 81.0; 87.3 minus 81.0 is 6.3.")
    assert source_values(instance) == {"6.3", "87.3", "81.0"}  # not the "1" of "Table 1"
    rendered = data_table(table, answer=instance)
    marked = [c["text"] for row in rendered["head"] + rendered["body"] for c in row if c["answer"]]
    assert marked == ["87.3", "81.0"]
    assert [c["text"] for row in rendered["body"] for c in row if c["first"]] == ["A", "B"]
    assert not any(c["answer"] for row in data_table(table)["body"] for c in row)


def test_a_value_the_table_holds_twice_marks_no_cell(db):
    """Every 0 of a table is no evidence of which 0 an answer of 0 was read from: none is marked, the unique one is."""
    from types import SimpleNamespace

    from curation.templatetags.tables import data_table
    from tests.factories import TableFactory

    table = TableFactory(cells=[["Model", "Acc", "Errors"], ["A", "87.3", "0"], ["B", "81.0", "0"]])

    def marked(answer: str, rationale: str) -> list[str]:
        rendered = data_table(table, answer=SimpleNamespace(answer=[answer], rationale=rationale))
        return [c["text"] for row in rendered["head"] + rendered["body"] for c in row if c["answer"]]

    assert marked("0", "A makes 0 errors.") == []
    assert marked("A", "A has 87.3 and 0 errors.") == ["A", "87.3"]


def test_a_candidate_of_a_project_without_an_exam_is_told_how_to_start(project, personas):
    """No exam items yet: the candidate's way in is a manager's vouch, and the page says so, with the guidelines."""
    html = logged_in("novice").get(f"/p/{project.slug}/qualification/").content.decode()
    assert 'id="exam-not-set-up"' in html
    assert "vouch for you" in html and f'href="/p/{project.slug}/guidelines/"' in html
