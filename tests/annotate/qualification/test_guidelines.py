"""Guidelines: a default version with the SciTaT training content, manager-published versions, a banner until read."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.test import RequestFactory

from annotate.context_processors import guidelines_banner
from annotate.qualification.guidelines import guidelines_ensure_default, guidelines_mark_read, guidelines_publish
from annotate.qualification.models import Guidelines, GuidelinesRead
from annotate.rendering import render_markdown
from curation.errors import InvalidInput, NotFound, NotPermitted
from tests.support.clients import logged_in


def banner_for(user) -> list[str]:
    request = RequestFactory().get("/")
    request.user = user
    return [project.slug for project in guidelines_banner(request)["unread_guidelines"]]


def test_default_guidelines_cover_the_scitat_training_content(project):
    guidelines = guidelines_ensure_default(project=project)
    assert guidelines.version == 1
    for heading in (
        "## 1. The task",
        "## 2. Requirements for questions",
        "## 3. Requirements for rationales",
        "## 4. Requirements for answers",
        "## 5. Choosing the answer source",
        "### Example 1",
        "### Example 2",
        "### Example 3",
    ):
        assert heading in guidelines.text
    assert "at most 5 words" in guidelines.text
    assert guidelines_ensure_default(project=project).pk == guidelines.pk  # seeded once


def test_only_managers_publish_and_versions_count_up(project, personas):
    guidelines_ensure_default(project=project)
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            guidelines_publish(project=project, actor=personas[name], text="# Mine")
    second = guidelines_publish(project=project, actor=personas["manager"], text="# Second", note="shorter")
    third = guidelines_publish(project=project, actor=personas["manager"], text="# Third")
    assert (second.version, third.version) == (2, 3)
    assert list(Guidelines.objects.filter(project=project).values_list("version", flat=True)) == [3, 2, 1]
    with pytest.raises(InvalidInput, match="empty"):
        guidelines_publish(project=project, actor=personas["manager"], text="   ")
    with pytest.raises(InvalidInput, match="same as the current"):
        guidelines_publish(project=project, actor=personas["manager"], text="# Third")


def test_a_new_version_is_flagged_once_to_each_member_until_read(project, personas):
    guidelines_ensure_default(project=project)
    annotator, manager = personas["annotator"], personas["manager"]
    assert banner_for(annotator) == ["test-project"]
    guidelines_mark_read(project=project, user=annotator)
    assert banner_for(annotator) == []
    guidelines_publish(project=project, actor=manager, text="# Changed", note="new rule")
    assert banner_for(annotator) == ["test-project"]
    assert banner_for(manager) == []  # the author has read what they wrote
    assert banner_for(personas["outsider"]) == []
    html = render_to_string("annotate/guidelines/_banner.html", guidelines_banner(_request(annotator)))
    assert "changed (version 2)" in html and "/p/test-project/guidelines/" in html
    logged_in("annotator").get("/p/test-project/guidelines/")
    assert banner_for(annotator) == []


def _request(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


def test_marking_read_needs_membership_and_existing_guidelines(project, personas):
    with pytest.raises(NotFound):
        guidelines_mark_read(project=project, user=personas["annotator"])
    guidelines_ensure_default(project=project)
    with pytest.raises(NotPermitted):
        guidelines_mark_read(project=project, user=personas["outsider"])
    guidelines_mark_read(project=project, user=personas["annotator"])
    guidelines_mark_read(project=project, user=personas["annotator"])
    assert GuidelinesRead.objects.filter(user=personas["annotator"]).count() == 1


def test_markdown_is_rendered_and_sanitised():
    html = render_markdown(
        "# Title\n\n<script>alert(1)</script>[x](javascript:alert(1)) <img src=x onerror=alert(2)>"
        "\n\n| a |\n|---|\n| 1 |"
    )
    assert "<h1>Title</h1>" in html and "<td>1</td>" in html
    assert "<script" not in html and "javascript:" not in html and "onerror" not in html


def test_page_seeds_default_shows_versions_side_by_side_and_lets_managers_publish(project, personas):
    manager = logged_in("manager")
    page = manager.get("/p/test-project/guidelines/").content.decode()
    assert "Requirements for questions" in page and "guidelines-editor" in page
    response = manager.post("/p/test-project/guidelines/", {"text": "# Rules v2\n\nOnly **bold** rules.", "note": "n"})
    assert response.status_code == 302
    compare = manager.get("/p/test-project/guidelines/?a=1&b=2").content.decode()
    assert 'id="compare"' in compare
    assert "<strong>bold</strong>" in compare and "Requirements for questions" in compare
    assert 'class="added">+ Only **bold** rules.' in compare
    annotator_page = logged_in("annotator").get("/p/test-project/guidelines/").content.decode()
    assert "guidelines-editor" not in annotator_page
    refused = logged_in("annotator").post("/p/test-project/guidelines/", {"text": "# Mine"})
    assert refused.status_code == 403
    assert "Only a manager of this project may publish guidelines." in refused.content.decode()
    assert Guidelines.objects.filter(project=project).count() == 2  # the annotator's post was refused
    assert logged_in("outsider").get("/p/test-project/guidelines/").status_code == 404


def test_the_banner_is_for_the_roles_that_must_read_and_goes_once_read_for_each(project, personas):
    from curation.models import Membership
    from curation.states import Role

    guidelines_ensure_default(project=project)  # version 1, written by nobody: nobody has read it
    assert banner_for(personas["manager"]) == []  # publishes them; not flagged, on no page
    assert "guidelines-banner" not in logged_in("manager").get("/p/test-project/").content.decode()
    for name in ("annotator", "annotator2", "verifier"):
        assert banner_for(personas[name]) == ["test-project"], name
    Membership.objects.create(user=personas["manager"], project=project, role=Role.ANNOTATOR)
    assert banner_for(personas["manager"]) == ["test-project"]  # a manager who also annotates must read them
    for name in ("annotator", "verifier", "manager"):
        client = logged_in(name)
        assert "guidelines-banner" in client.get("/p/test-project/").content.decode(), name
        client.get("/p/test-project/guidelines/")
        assert "guidelines-banner" not in client.get("/p/test-project/").content.decode(), name
        assert banner_for(personas[name]) == [], name
    assert banner_for(personas["annotator2"]) == ["test-project"]  # one person's reading is not another's


def test_an_error_page_says_what_went_wrong_without_the_banner_or_badge_and_reads_neither(project, personas):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    guidelines_ensure_default(project=project)  # unread by the annotator: every page of theirs shows the banner
    client = logged_in("annotator")
    assert "guidelines-banner" in client.get("/p/test-project/").content.decode()
    with CaptureQueriesContext(connection) as read:
        missing = client.get("/p/test-project/no-such-page/")
    assert missing.status_code == 404 and "404 · Not found" in missing.content.decode()
    assert "guidelines-banner" not in missing.content.decode() and "discussion-badge" not in missing.content.decode()
    tables = " ".join(query["sql"] for query in read.captured_queries)
    assert "guidelines" not in tables and "announcement" not in tables and "discussion" not in tables
    assert '<a href="/p/test-project/">Test Project</a>' in missing.content.decode()  # the way back stays: the top bar
