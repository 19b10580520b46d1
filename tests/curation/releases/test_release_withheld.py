"""A release cut withholds the qualification exam's gold pool unless its manager includes it: published, the pool's
answers would be in every future candidate's hands. The same rule behind the service, the page, the API and a cut
on a worker; the release's notes and its dataset card say what was left out."""

from __future__ import annotations

import html
import json
import re
import zipfile

import pytest

from annotate.qualification.services import qualification_configure
from curation.errors import InvalidInput
from curation.exports import write_export_zip
from curation.models import Instance, TransitionEvent
from curation.releases.models import Release, ReleaseItem
from curation.releases.near_duplicates import NOT_CHECKED
from curation.releases.services import cut as cut_services
from curation.releases.services import jobs as release_jobs
from curation.states import Status

pytestmark = pytest.mark.django_db

NOTE = "2 validated instances withheld from this release: 2 in the qualification exam's gold pool."


@pytest.fixture
def exam_world(release_world):
    """release_world's 6 validated instances, 2 of them in the exam's gold pool."""
    pool = release_world["instances"][:2]
    qualification_configure(
        project=release_world["project"],
        actor=release_world["people"]["manager"],
        instance_ids=[i.pk for i in pool],
    )
    return {**release_world, "pool": pool}


def cut(world, **options):
    return cut_services.release_cut(
        project=world["project"],
        actor=world["people"]["manager"],
        name="scitat",
        batch_ids=[b.pk for b in world["batches"]],
        **options,
    )


def test_the_exam_pool_is_left_out_of_a_cut_and_stays_validated(exam_world):
    release = cut(exam_world)
    released = set(ReleaseItem.objects.filter(release=release).values_list("instance_id", flat=True))
    pool = {i.pk for i in exam_world["pool"]}
    assert release.item_count == 4 and not released & pool
    assert set(Instance.objects.filter(pk__in=pool).values_list("status", flat=True)) == {Status.VALIDATED}
    assert not TransitionEvent.objects.filter(instance_id__in=pool, to_status=Status.RELEASED).exists()
    assert release.notes == [NOTE, NOT_CHECKED]


def test_the_dataset_card_of_the_release_says_what_was_withheld(exam_world, tmp_path):
    release = cut(exam_world)
    write_export_zip(release, "jsonl", tmp_path / "scitat.zip")
    with zipfile.ZipFile(tmp_path / "scitat.zip") as archive:
        card = next(archive.read(n).decode() for n in archive.namelist() if n.endswith("README.md"))
    assert "2 validated instances withheld from this release" in card
    for instance in exam_world["pool"]:
        assert instance.question not in card


def test_a_manager_who_includes_the_withheld_releases_everything(exam_world):
    release = cut(exam_world, include_withheld=True)
    assert release.item_count == 6 and release.notes == [NOT_CHECKED]
    assert Instance.objects.filter(pk__in=[i.pk for i in exam_world["pool"]], status=Status.RELEASED).count() == 2


def test_batches_holding_only_withheld_instances_are_refused_with_the_reason_and_nothing_written(release_world):
    batch = release_world["batches"][0]
    in_batch = [i for i in release_world["instances"] if i.batch_id == batch.pk]
    qualification_configure(
        project=release_world["project"],
        actor=release_world["people"]["manager"],
        instance_ids=[i.pk for i in in_batch],
    )
    with pytest.raises(InvalidInput) as refused:
        cut_services.release_cut(
            project=release_world["project"], actor=release_world["people"]["manager"], name="x", batch_ids=[batch.pk]
        )
    assert "Every validated instance of those batches is withheld" in refused.value.message
    assert f"{len(in_batch)} in the qualification exam's gold pool" in refused.value.message
    assert "Include withheld instances to cut them anyway" in refused.value.message
    assert refused.value.detail["withheld"] == {"in the qualification exam's gold pool": len(in_batch)}
    assert not Release.objects.exists()
    assert not Instance.objects.filter(status=Status.RELEASED).exists()


def test_without_an_exam_nothing_is_withheld(release_world):
    release = cut(release_world)
    assert release.item_count == 6 and release.notes == [NOT_CHECKED]


def test_a_cut_on_a_worker_withholds_the_same_and_includes_when_asked(exam_world, settings, sent):
    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 1
    for include, expected in ((False, 4), (True, 2)):
        queued = cut_services.release_cut_request(
            project=exam_world["project"],
            actor=exam_world["people"]["manager"],
            name="queued",
            batch_ids=[b.pk for b in exam_world["batches"]],
            include_withheld=include,
        )
        assert queued.items_total == expected
        built = release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@host")
        assert built.state == "ready" and built.release.item_count == expected


def _text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(response.content.decode()))


def test_the_cut_form_names_what_it_withholds_and_the_box_includes_it(exam_world, client):
    client.force_login(exam_world["people"]["manager"])
    url = f"/p/{exam_world['project'].slug}/releases/"
    page = _text(client.get(url))
    assert "2 validated instances in the qualification exam's gold pool" in page
    assert 'name="include_withheld"' in page and "Include the 2 withheld instances" in page
    batches = [b.pk for b in exam_world["batches"]]
    first = _text(client.post(url, {"name": "paged", "batch_ids": batches}, follow=True))
    assert "Release paged-v1 cut: 4 instances frozen." in first
    assert "withheld from this release" in first  # the release page shows its notes
    left = _text(client.get(url))  # only the pool waits now, still withheld
    assert "(2 instances in 1 batch)" in left and "Include the 2 withheld instances" in left
    second = _text(client.post(url, {"name": "paged", "scope": "all", "include_withheld": "on"}, follow=True))
    assert "Release paged-v2 cut: 2 instances frozen." in second


def test_the_form_is_quiet_for_a_project_without_an_exam(release_world, client):
    client.force_login(release_world["people"]["manager"])
    page = client.get(f"/p/{release_world['project'].slug}/releases/").content.decode()
    assert 'id="cut-withheld"' not in page


def test_the_api_withholds_by_default_and_includes_when_asked(exam_world, client):
    client.force_login(exam_world["people"]["manager"])
    url = f"/api/projects/{exam_world['project'].slug}/releases/"
    batches = [b.pk for b in exam_world["batches"]]
    first = client.post(url, {"name": "api", "batch_ids": batches}, content_type="application/json")
    assert first.status_code == 201, first.content
    assert first.json()["item_count"] == 4 and "withheld" in first.json()["notes"][0]
    refused = client.post(url, {"name": "api", "batch_ids": batches}, content_type="application/json")
    assert refused.status_code == 400 and "withheld" in refused.json()["detail"]
    second = client.post(
        url, {"name": "api", "batch_ids": batches, "include_withheld": True}, content_type="application/json"
    )
    assert second.status_code == 201 and second.json()["item_count"] == 2


def _command(*args: str) -> dict:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("cut_release", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_command_cuts_as_the_page_does_and_includes_only_when_told(exam_world):
    from django.core.management.base import CommandError

    slug = exam_world["project"].slug
    first = _command("cmd", "--project", slug)
    assert (first["release"], first["items"]) == ("cmd-v1", 4)
    assert first["notes"] == [NOTE, NOT_CHECKED]
    with pytest.raises(CommandError, match="Every validated instance of those batches is withheld"):
        _command("cmd", "--project", slug)
    second = _command("cmd", "--project", slug, "--include-withheld")
    assert (second["release"], second["items"], second["notes"]) == ("cmd-v2", 2, [NOT_CHECKED])
    with pytest.raises(CommandError, match="No batch of this project has validated instances"):
        _command("cmd", "--project", slug)
    with pytest.raises(CommandError, match="No project 'nope'"):
        _command("cmd", "--project", "nope")
