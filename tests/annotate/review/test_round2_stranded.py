"""Round-two instances nobody may review: the manager is told, on the dashboard and in its API, and told no more
once someone may take them."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.agreement.services import CHOSEN_FIELDS
from annotate.review.selectors import round2_stranded
from annotate.review.services import ROUND2_BARRED_AT_MOST, review_approve, review_next, round2_next
from annotate.work.queue import queue_claim
from curation.models import Instance, Membership
from curation.services.projects import membership_add
from tests.annotate.agreement.helpers import (
    approved_pair,
    submit_instance,
)


def stranded(personas, project):
    return round2_stranded(user=personas["manager"], project=project)


ALL_FIRST = {name: "first" for name in CHOSEN_FIELDS}
MERGED = {**ALL_FIRST, "question": "second"}


def test_a_merged_pair_with_two_annotators_is_stranded_until_a_third_qualifies(personas, project, drafts, make_user):
    instance = approved_pair(personas, project, MERGED)
    assert stranded(personas, project) == {"count": 1, "ids": [instance.pk], "qualified": 2}
    third = make_user("annotator3")
    membership_add(project=project, actor=None, username="annotator3", role="annotator", is_qualified=False)
    assert stranded(personas, project)["count"] == 1  # not qualified yet: still nobody
    membership_add(project=project, actor=None, username="annotator3", role="annotator", is_qualified=True)
    assert stranded(personas, project) == {"count": 0, "ids": [], "qualified": 3}
    assert round2_next(project=project, user=third).pk == instance.pk


@pytest.mark.parametrize("kept", ["first", "second"])
def test_a_pair_that_kept_one_version_is_not_stranded(personas, project, drafts, kept):
    approved_pair(personas, project, {name: kept for name in CHOSEN_FIELDS})
    assert stranded(personas, project)["count"] == 0


def test_an_author_whose_only_colleague_is_not_qualified_is_stranded(personas, project, drafts):
    # annotator2 is not qualified (yet): the author (annotator) is the only qualified annotator.
    Membership.objects.filter(project=project, user=personas["annotator2"]).update(is_qualified=False)
    claim = queue_claim(project_slug=project.slug, user=personas["annotator"])
    submitted = submit_instance(Instance.objects.get(pk=claim.instance_id), personas["annotator"])
    held = review_next(project=project, user=personas["verifier"])
    assert held.pk == submitted.pk
    review_approve(instance_id=held.pk, user=personas["verifier"], expected_version=held.version)
    assert stranded(personas, project) == {"count": 1, "ids": [submitted.pk], "qualified": 1}
    membership_add(project=project, actor=None, username="annotator2", role="annotator", is_qualified=True)
    assert stranded(personas, project)["count"] == 0


def test_with_more_qualified_annotators_than_round_two_bars_no_instance_is_read(personas, project, make_user):
    for index in range(ROUND2_BARRED_AT_MOST + 1 - 2):  # personas bring two qualified annotators
        make_user(f"extra{index}")
        membership_add(project=project, actor=None, username=f"extra{index}", role="annotator", is_qualified=True)
    with CaptureQueriesContext(connection) as queries:
        assert stranded(personas, project) == {"count": 0, "ids": [], "qualified": ROUND2_BARRED_AT_MOST + 1}
    assert len(queries) == 1 and "curation_instance" not in queries[0]["sql"]


def test_the_dashboard_and_its_api_name_the_stranded_instances_and_the_way_out(
    personas, project, drafts, client, api_client_for
):
    instance = approved_pair(personas, project, MERGED)
    client.force_login(personas["manager"])
    page = client.get(f"/p/{project.slug}/dashboard/").content.decode()
    banner = re.search(r'<section class="banner warn" id="round2-stranded".*?</section>', page, re.S).group(0)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", banner))
    assert "1 instance waits in round two with nobody to review it." in text
    assert "this project's 2 qualified annotators each did one or the other" in text
    assert f'href="/p/{project.slug}/members/"' in banner
    assert f'href="/p/{project.slug}/qualification/"' in banner
    assert f'href="/p/{project.slug}/history/{instance.pk}/"' in banner
    assert client.get(f"/p/{project.slug}/history/{instance.pk}/").status_code == 200
    body = api_client_for(personas["manager"]).get(f"/api/projects/{project.slug}/dashboard/").json()
    assert body["round2_stranded"] == {"count": 1, "ids": [instance.pk], "qualified": 2}

    membership_add(project=project, actor=None, username="verifier2", role="annotator", is_qualified=True)
    assert 'id="round2-stranded"' not in client.get(f"/p/{project.slug}/dashboard/").content.decode()
    body = api_client_for(personas["manager"]).get(f"/api/projects/{project.slug}/dashboard/").json()
    assert body["round2_stranded"]["count"] == 0


def test_nothing_is_said_while_every_round_two_instance_has_a_reviewer(personas, project, client):
    client.force_login(personas["manager"])
    assert 'id="round2-stranded"' not in client.get(f"/p/{project.slug}/dashboard/").content.decode()
