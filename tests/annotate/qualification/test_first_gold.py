"""A new project's first gold from drafts a manager validates (issue 32): the manager checks a draft beside its
table, corrects it and validates it; it joins the exam's pool, which cuts withhold, and a candidate can then sit the
exam. Managers only; an incomplete or stale form changes nothing and says why."""

from __future__ import annotations

import re

import pytest

from annotate.qualification import services as exam
from annotate.qualification.models import QualificationItem
from curation.models import Instance
from curation.releases.withheld import withheld_counts
from curation.states import Status
from tests.support.clients import logged_in

COMPLETE = {
    "question": "Which model is more accurate, A or B?",
    "answer": "A\n",
    "rationale": "Row A has 87.3, row B 81.0.",
    "answer_type": "span",
    "scale": "none",
    "answer_form": "short",
    "answer_source": "table",
}


def check_url(project, instance) -> str:
    return f"/p/{project.slug}/qualification/gold/{instance.pk}/"


def post_gold(client, project, instance, **changes):
    data = {**COMPLETE, "expected_version": instance.version, **changes}
    data.setdefault("relevant_table_ids", [t.pk for t in instance.context.tables.all()])
    return client.post(check_url(project, instance), {k: v for k, v in data.items() if v is not None})


@pytest.mark.django_db
def test_a_manager_validates_drafts_as_first_gold_and_a_candidate_can_sit_the_exam(project, personas, drafts):
    manager = logged_in("manager")
    start = manager.get(f"/p/{project.slug}/qualification/manage/")
    assert f"/p/{project.slug}/qualification/gold/" in start.content.decode()  # offered among the ways to start

    listing = manager.get(f"/p/{project.slug}/qualification/gold/").content.decode()
    assert all(check_url(project, d) in listing for d in drafts)
    page = manager.get(check_url(project, drafts[0])).content.decode()
    assert "Accuracy by model." in page and "87.3" in page and 'id="gold-validate"' in page  # the table beside it

    for draft in drafts[:2]:
        response = post_gold(manager, project, draft)
        assert response.status_code == 302, response.content.decode()[:2000]
    first = Instance.objects.get(pk=drafts[0].pk)
    assert (first.status, first.answer, first.answer_type, first.round1_verifier) == (
        Status.VALIDATED,
        ["A"],
        "span",
        personas["manager"],
    )
    assert first.revisions.last().fields["note"] == "checked by a manager as exam gold"
    pooled = list(QualificationItem.objects.filter(settings__project=project).values_list("instance_id", flat=True))
    assert pooled == [drafts[0].pk, drafts[1].pk]
    assert check_url(project, drafts[0]) not in manager.get(f"/p/{project.slug}/qualification/gold/").content.decode()

    # With gold in the pool, the exam settings still lead back to validating more: a standing link, and the advice.
    settings = manager.get(f"/p/{project.slug}/qualification/manage/").content.decode()
    assert 'id="ways-to-start"' not in settings
    for link_id, words in (("add-gold-link", "Validate drafts as gold"), ("add-more-gold", "Add 18 more gold items")):
        href, label = re.search(rf'<a href="([^"]+)" id="{link_id}">([^<]+)</a>', settings).groups()
        assert label == words
        followed = manager.get(href)
        assert followed.status_code == 200 and check_url(project, drafts[2]) in followed.content.decode()

    exam.qualification_configure(project=project, actor=personas["manager"], keep_items=True, size=2)
    attempt = exam.attempt_start(project=project, user=personas["novice"])
    assert sorted(attempt.item_ids) == sorted(pooled)

    # The pool is exam gold, not release material: release cuts withhold it.
    validated = Instance.objects.filter(project=project, status=Status.VALIDATED)
    assert sum(withheld_counts(project=project, instances=validated).values()) == 2


@pytest.mark.django_db
def test_an_incomplete_or_stale_check_changes_nothing_and_says_why(project, personas, drafts):
    manager, draft = logged_in("manager"), drafts[0]
    incomplete = post_gold(manager, project, draft, answer_type="", relevant_table_ids=[])
    assert incomplete.status_code == 400
    assert "This field is required" in incomplete.content.decode()
    text_only = post_gold(manager, project, draft, relevant_table_ids=[])
    assert text_only.status_code == 400 and "mark the tables it comes from as relevant" in text_only.content.decode()
    assert "Which model is more accurate, A or B?" in text_only.content.decode()  # the manager's text is kept
    stale = post_gold(manager, project, draft, expected_version=draft.version + 5)
    assert stale.status_code == 400 and "changed elsewhere" in stale.content.decode()
    unchanged = Instance.objects.get(pk=draft.pk)
    assert (unchanged.status, unchanged.version, unchanged.question) == (Status.DRAFTED, draft.version, draft.question)
    assert not QualificationItem.objects.exists()


@pytest.mark.django_db
def test_a_draft_someone_holds_is_not_first_gold(project, personas, drafts):
    draft = drafts[0]
    Instance.objects.filter(pk=draft.pk).update(status=Status.IN_REFINEMENT, author=personas["annotator"])
    manager = logged_in("manager")
    assert "only a draft nobody holds" in manager.get(check_url(project, draft)).content.decode()
    refused = post_gold(manager, project, Instance.objects.get(pk=draft.pk))
    assert refused.status_code == 400 and "no longer a draft nobody holds" in refused.content.decode()
    assert Instance.objects.get(pk=draft.pk).status == Status.IN_REFINEMENT


@pytest.mark.django_db
@pytest.mark.parametrize(("who", "status"), [("annotator", 403), ("verifier", 403), ("outsider", 404), (None, 302)])
def test_only_managers_validate_first_gold(project, personas, drafts, who, status):
    client = logged_in(who)
    assert client.get(f"/p/{project.slug}/qualification/gold/").status_code == status
    assert client.get(check_url(project, drafts[0])).status_code == status
    assert post_gold(client, project, drafts[0]).status_code == status
    assert Instance.objects.get(pk=drafts[0].pk).status == Status.DRAFTED
