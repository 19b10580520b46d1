"""Release and import pages by role: list and cut, statistics with charts, downloads, upload."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.errors import InvalidInput
from curation.releases.models import Release
from curation.releases.services.cut import release_cut
from tests.factories import BatchFactory

from .test_release_api import TATQA_FILE


@pytest.fixture
def world(release_world, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    release = release_cut(
        project=release_world["project"], actor=None, name="demo", batch_ids=[release_world["batches"][0].pk]
    )
    return {**release_world, "release": release}


def client_for(client, user):
    if user is not None:
        client.force_login(user)
    return client


PAGES = {
    #           annotator novice verifier manager outsider
    "releases": (200, 200, 200, 200, 404),
    "release": (200, 200, 200, 200, 404),
    "downloads": (200, 403, 200, 200, 404),
    "imports": (403, 403, 403, 200, 404),
}
ROLES = ["annotator", "novice", "verifier", "manager", "outsider"]


def page_url(world, page: str) -> str:
    slug, pk = world["project"].slug, world["release"].pk
    return {
        "releases": f"/p/{slug}/releases/",
        "release": f"/p/{slug}/releases/{pk}/",
        "downloads": f"/p/{slug}/releases/{pk}/downloads/",
        "imports": f"/p/{slug}/imports/",
    }[page]


@pytest.mark.parametrize("page", sorted(PAGES))
@pytest.mark.parametrize("role", ROLES)
def test_pages_by_role(world, client, page, role):
    response = client_for(client, world["people"][role]).get(page_url(world, page))
    assert response.status_code == PAGES[page][ROLES.index(role)]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_anonymous_is_sent_to_login(world, client, page):
    response = client.get(page_url(world, page))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_release_page_shows_statistics_tables_and_svg_charts(world, client):
    html = client_for(client, world["people"]["verifier"]).get(page_url(world, "release")).content.decode()
    assert world["release"].content_hash in html
    assert 'id="table2"' in html and 'id="table3"' in html and 'id="table4"' in html
    assert html.count("<svg") >= 5 and "Comparison" in html
    assert "Downloads</a>" in html and ">Score a model</a>" in html
    both = world["release"].statistics["questions_in_both_settings"]
    assert f"{both} of {world['release'].item_count} questions are evaluated in both settings." in html


def test_novice_sees_statistics_but_no_download_link(world, client):
    html = client_for(client, world["people"]["novice"]).get(page_url(world, "release")).content.decode()
    assert "qualification" in html and "/downloads/" not in html
    # Annotators do not start scoring runs: no button that leads to a refusal; the scored runs stay one link away.
    assert "Score a model" not in html and "compare scored runs</a>" in html


def test_manager_cuts_a_release_from_the_page(world, client):
    client_for(client, world["people"]["manager"])
    response = client.post(
        page_url(world, "releases"),
        {"name": "demo", "batch_ids": [str(world["batches"][1].pk)], "description": "Second", "split_seed": "5"},
    )
    release = Release.objects.get(name="demo", version=2)
    assert response.status_code == 302 and response["Location"].endswith(f"/releases/{release.pk}/")
    assert release.item_count == 2 and release.split_seed == 5


def test_a_seed_that_is_not_a_number_is_refused_not_dropped(world, client):
    client_for(client, world["people"]["manager"])
    asked = {"name": "demo", "batch_ids": [str(world["batches"][1].pk)], "split_seed": "abc"}
    page = client.post(page_url(world, "releases"), asked).content.decode()
    assert "Split seed: A valid integer is required." in page and 'value="abc"' in page
    assert not Release.objects.filter(name="demo", version=2).exists()


def test_a_refused_cut_comes_back_on_the_form_with_everything_typed(world, client):
    client_for(client, world["people"]["manager"])
    asked = {
        "name": "demo",
        "batch_range": "9-3",
        "description": "Tables & <text>",
        "changelog": "First cut",
        "license": "CC-BY-4.0",
        "citation": "@misc{demo}",
    }
    response = client.post(page_url(world, "releases"), asked)
    html = response.content.decode()
    assert response.status_code == 200
    form = html.split('id="cut-release"')[1]
    assert '<li class="error" role="alert">The range 9-3 runs backwards: write 3-9.</li>' in form
    assert '<textarea name="description" rows="2">Tables &amp; &lt;text&gt;</textarea>' in form
    assert '<textarea name="changelog" rows="2">First cut</textarea>' in form
    assert 'name="license" placeholder="CC-BY-4.0" value="CC-BY-4.0"' in form
    assert '<textarea name="citation" rows="2">@misc{demo}</textarea>' in form
    assert not Release.objects.filter(name="demo", version=2).exists()


def test_annotator_cannot_cut_from_the_page(world, client):
    client_for(client, world["people"]["annotator"])
    response = client.post(page_url(world, "releases"), {"name": "x", "batch_ids": [str(world["batches"][1].pk)]})
    assert response.status_code == 403 and Release.objects.count() == 1


def test_downloads_page_builds_and_serves_each_format(world, client):
    client_for(client, world["people"]["annotator"])
    url = page_url(world, "downloads")
    for fmt in ("scitat", "tatqa", "jsonl", "parquet", "csv"):
        assert client.post(url, {"format": fmt}).status_code == 302
        response = client.get(f"{url}{fmt}/")
        assert response.status_code == 200
        assert b"".join(response.streaming_content)[:2] == b"PK"
    html = client.get(url).content.decode()
    assert html.count("Download</a>") == 5
    # The message names the format as the list does, not by its key.
    said = client.post(url, {"format": "scitat"}, follow=True).content.decode()
    assert "The SciTaT JSON export is ready." in said


def test_novice_cannot_download_a_file(world, client):
    client_for(client, world["people"]["manager"]).post(page_url(world, "downloads"), {"format": "csv"})
    client.logout()
    client_for(client, world["people"]["novice"])
    assert client.get(page_url(world, "downloads") + "csv/").status_code == 403


def test_manager_uploads_a_file_as_a_release(world, client):
    client_for(client, world["people"]["manager"])
    upload = SimpleUploadedFile("mini.json", json.dumps(TATQA_FILE).encode())
    response = client.post(page_url(world, "imports"), {"format": "tatqa", "file": upload, "as_release": "mini"})
    release = Release.objects.get(name="mini")
    assert response.status_code == 302 and response["Location"].endswith(f"/releases/{release.pk}/")
    html = client.get(page_url(world, "imports")).content.decode()
    assert "mini.json" in html


def test_malformed_upload_shows_the_path_and_writes_nothing(world, client):
    client_for(client, world["people"]["manager"])
    bad = json.loads(json.dumps(TATQA_FILE))
    bad[0]["questions"][0]["scale"] = "dozens"
    upload = SimpleUploadedFile("bad.json", json.dumps(bad).encode())
    response = client.post(page_url(world, "imports"), {"format": "tatqa", "file": upload}, follow=True)
    assert "[0].questions[0].scale" in response.content.decode()
    assert Release.objects.count() == 1 and not world["project"].imports.exists()


def cut_form(html: str) -> str:
    return html.split('id="cut-release"', 1)[1].split("</form>", 1)[0]


def test_the_cut_form_offers_every_waiting_batch_by_default_and_names_the_rest(world, client):
    second = world["batches"][1]  # the first batch is released by the fixture: the second still waits
    form = cut_form(client_for(client, world["people"]["manager"]).get(page_url(world, "releases")).content.decode())
    assert '<input type="radio" name="scope" value="all" checked>' in form
    assert "(2 instances in 1 batch)" in form
    assert f'value="{second.pk}"> <span class="muted">#{second.number}</span> {second.name}' in form
    assert 'name="batch_range"' in form and world["batches"][0].name not in form


def test_manager_cuts_every_waiting_batch_from_the_page(world, client):
    client_for(client, world["people"]["manager"])
    response = client.post(page_url(world, "releases"), {"name": "demo", "scope": "all"})
    release = Release.objects.get(name="demo", version=2)
    assert response.status_code == 302 and release.item_count == 2
    assert list(release.batches.all()) == [world["batches"][1]]


def test_manager_cuts_typed_batch_numbers_from_the_page(world, client):
    second = world["batches"][1]
    client_for(client, world["people"]["manager"])
    response = client.post(
        page_url(world, "releases"),
        {"name": "typed", "scope": "chosen", "batch_range": f"{second.number}-{second.number + 50}"},
    )
    assert response.status_code == 302
    assert list(Release.objects.get(name="typed").batches.all()) == [second]


@pytest.mark.parametrize(
    ("typed", "scope", "message"),
    [
        ("3-x", "chosen", "Batches are numbers or ranges separated by commas, e.g. 3-7, 12: not &#x27;3-x&#x27;."),
        ("9-3", "chosen", "The range 9-3 runs backwards: write 3-9."),
        ("{missing}", "chosen", "This project has no batch {missing}."),
        ("{missing}-{beyond}", "chosen", "This project has no batch numbered {missing}-{beyond}."),
        ("{second}", "all", "Choose every batch with validated instances, or some batches: not both."),
        ("", "chosen", "Choose one or more batches of this project."),
    ],
)
def test_a_refused_batch_choice_says_why_and_keeps_what_was_typed(world, client, typed, scope, message):
    numbers = {"second": world["batches"][1].number, "missing": world["batches"][1].number + 1000}
    numbers["beyond"] = numbers["missing"] + 5
    typed, message = typed.format(**numbers), message.format(**numbers)
    client_for(client, world["people"]["manager"])
    response = client.post(page_url(world, "releases"), {"name": "typo", "scope": scope, "batch_range": typed})
    html = response.content.decode()
    assert response.status_code == 200 and message in html
    assert f'name="batch_range" value="{typed}"' in html and 'name="name"' in html and 'value="typo"' in html
    assert not Release.objects.filter(name="typo").exists()


def test_a_range_takes_only_this_projects_batches(world):
    from curation.releases.services.cut import cut_batch_ids

    foreign = BatchFactory(name="Not ours")  # of a project of its own: its number 1 is that project's
    first, second = world["batches"]
    assert (first.number, second.number, foreign.number) == (1, 2, 1)
    assert cut_batch_ids(project=world["project"], batch_ids=[], batches="1-5") == sorted([first.pk, second.pk])
    with pytest.raises(InvalidInput, match="This project has no batch 3"):
        cut_batch_ids(project=world["project"], batch_ids=[], batches="2, 3")


def test_a_teams_batches_are_numbered_in_their_project_not_by_their_site_wide_ids(world, client):
    from curation.batches.services import batch_create
    from curation.releases.services.cut import cut_batch_ids

    for _ in range(3):
        BatchFactory()  # other projects' batches take ids meanwhile
    third = batch_create(project=world["project"], actor=None, name="Batch C")
    assert third.number == 3 and third.pk > 3
    client_for(client, world["people"]["manager"])
    page = client.get(f"/p/{world['project'].slug}/batches/").content.decode()
    assert "#3</span> Batch C</td>" in page and f"#{third.pk}<" not in page
    assert cut_batch_ids(project=world["project"], batch_ids=[], batches="3") == [third.pk]


def test_the_batches_page_shows_the_numbers_the_cut_form_takes(world, client):
    client_for(client, world["people"]["manager"])
    page = client.get(f"/p/{world['project'].slug}/batches/").content.decode()
    for batch in world["batches"]:
        assert f"#{batch.number}</span> {batch.name}</td>" in page
