"""Announcements: a manager posts Markdown (sanitised as guidelines are); each annotator and verifier of the project
sees it on every page until they mark it read (recorded once), like a new guidelines version; per role on every
door."""

from __future__ import annotations

import pytest

from annotate.batches.announcements import announcement_mark_read, announcement_post
from annotate.batches.models import Announcement, AnnouncementRead
from curation.errors import InvalidInput, NotFound, NotPermitted
from tests.support.clients import logged_in

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


def banner_of(html: str) -> str:
    return (
        html.split('class="announcement-banner"', 1)[1].split("</section>", 1)[0]
        if "announcement-banner" in html
        else ""
    )


def test_annotators_and_verifiers_see_it_on_every_page_until_they_mark_it_read(project, personas, open_batch):
    announcement_post(
        project=project,
        actor=personas["manager"],
        text="**Deadline** is Friday.\n\nRead section 3.",
        batch_id=open_batch.pk,
    )
    annotator = logged_in("annotator")
    pages = ("/", f"/p/{project.slug}/", f"/p/{project.slug}/work/", f"/p/{project.slug}/instances/")
    for url in pages:
        banner = banner_of(annotator.get(url).content.decode())
        assert "<strong>Deadline</strong> is Friday." in banner and "about batch <strong>B1</strong>" in banner, url
    announcement = Announcement.objects.get()
    back = annotator.post(
        f"/p/{project.slug}/announcements/{announcement.pk}/read/", {"next": f"/p/{project.slug}/work/"}
    )
    assert back.status_code == 302 and back["Location"] == f"/p/{project.slug}/work/"
    for url in pages:
        assert "announcement-banner" not in annotator.get(url).content.decode(), url
    read = AnnouncementRead.objects.get(user=personas["annotator"])
    assert read.read_at is not None
    assert "announcement-banner" in logged_in("verifier").get("/").content.decode()
    for name in ("manager", "outsider"):  # the author has read it; outsiders are not told
        assert "announcement-banner" not in logged_in(name).get("/").content.decode()


def test_markdown_is_sanitised_as_guidelines_are(project, personas):
    announcement_post(
        project=project,
        actor=personas["manager"],
        text='Hi <script>alert(1)</script> <a href="javascript:alert(2)">x</a> <img src=x onerror="alert(3)">',
    )
    banner = banner_of(logged_in("annotator").get("/").content.decode())
    assert "Hi" in banner and "<script" not in banner and "javascript:" not in banner and "onerror" not in banner


def test_only_managers_post_and_bad_input_writes_nothing(project, personas):
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            announcement_post(project=project, actor=personas[name], text="Hello")
    with pytest.raises(InvalidInput, match="needs a text"):
        announcement_post(project=project, actor=personas["manager"], text="   ")
    with pytest.raises(InvalidInput, match="No batch"):
        announcement_post(project=project, actor=personas["manager"], text="Hi", batch_id=999_999)
    assert not Announcement.objects.exists()


def test_marking_read_is_recorded_once_and_only_for_members(project, personas):
    announcement = announcement_post(project=project, actor=personas["manager"], text="Hello")
    first = announcement_mark_read(announcement_id=announcement.pk, user=personas["annotator"])
    again = announcement_mark_read(announcement_id=announcement.pk, user=personas["annotator"])
    assert first.pk == again.pk and first.read_at == again.read_at
    with pytest.raises(NotFound):
        announcement_mark_read(announcement_id=announcement.pk, user=personas["outsider"])


def test_the_batches_page_posts_and_counts_who_read_it(project, personas, open_batch):
    manager = logged_in("manager")
    page = manager.get(f"/p/{project.slug}/batches/").content.decode()
    assert "No announcements yet." in page
    manager.post(f"/p/{project.slug}/batches/", {"action": "announce", "text": "Batch 1 is validated.", "batch": ""})
    announcement = Announcement.objects.get()
    assert announcement.batch is None and announcement.created_by == personas["manager"]
    logged_in("annotator").post(f"/p/{project.slug}/announcements/{announcement.pk}/read/")
    page = manager.get(f"/p/{project.slug}/batches/").content.decode()
    # annotator, annotator2, novice, verifier, verifier2 are the audience; one of them read it.
    assert "Batch 1 is validated." in page and "read by 1 of 5" in page
    empty = manager.post(f"/p/{project.slug}/batches/", {"action": "announce", "text": ""}, follow=True)
    assert "This field is required" in empty.content.decode() and Announcement.objects.count() == 1


LIST = (403, 403, 200, 404, 401)
POST = (403, 403, 201, 404, 401)
UNREAD = (200, 200, 200, 404, 401)
READ = (200, 200, 200, 404, 401)


@pytest.mark.parametrize("persona", ROLES)
def test_announcement_api_per_role(project, personas, api_client_for, persona):
    announcement = announcement_post(project=project, actor=personas["manager"], text="Hello *all*")
    client = api_client_for(None if persona == "anonymous" else personas[persona])
    index = ROLES.index(persona)
    base = f"/api/projects/{project.slug}/announcements/"
    assert client.get(base).status_code == LIST[index]
    assert client.post(base, {"text": "More"}, format="json").status_code == POST[index]
    unread = client.get(base + "unread/")
    assert unread.status_code == UNREAD[index]
    if persona in ("annotator", "verifier"):
        assert [row["id"] for row in unread.json()] == [announcement.pk]
        assert unread.json()[0]["html"] == "<p>Hello <em>all</em></p>"
    read = client.post(f"/api/announcements/{announcement.pk}/read/")
    assert read.status_code == READ[index], read.content
    if persona in ("annotator", "verifier"):
        assert client.get(base + "unread/").json() == []


def test_a_post_without_text_is_a_400_naming_the_field(project, personas, api_client_for):
    response = api_client_for(personas["manager"]).post(
        f"/api/projects/{project.slug}/announcements/", {"text": "", "batch": 1}, format="json"
    )
    assert response.status_code == 400 and "text" in response.json()
    assert not Announcement.objects.exists()


def test_the_banner_says_who_wrote_it_about_which_batch_and_its_deadline_only_when_there_is_one(
    project, personas, open_batch
):
    from datetime import timedelta

    from django.utils import timezone

    from curation.deadlines import deadline_state
    from curation.models import Batch

    post = {"project": project, "actor": personas["manager"]}
    announcement_post(**post, text="Please re-read section 3.")
    banner = banner_of(logged_in("annotator").get("/").content.decode())
    assert "Please re-read section 3." in banner and "from manager" in banner
    assert "about batch" not in banner and "deadline" not in banner  # about no batch: no batch, no deadline
    AnnouncementRead.objects.all().delete()
    Announcement.objects.all().delete()

    announcement_post(**post, text="Take the long tables first.", batch_id=open_batch.pk)
    banner = banner_of(logged_in("annotator").get("/").content.decode())
    assert "about batch <strong>B1</strong>" in banner and "deadline" not in banner  # B1 has no deadline yet

    Batch.objects.filter(pk=open_batch.pk).update(deadline_at=timezone.now() + timedelta(days=2, hours=5))
    state = deadline_state(Batch.objects.get(pk=open_batch.pk))
    banner = banner_of(logged_in("annotator").get("/").content.decode())
    assert "Take the long tables first." in banner and "about batch <strong>B1</strong>" in banner
    assert 'class="announcement-deadline"' in banner and state.when in banner and "due in 2 days" in banner

    Batch.objects.filter(pk=open_batch.pk).update(settled_at=timezone.now())  # settled: the deadline is over
    banner = banner_of(logged_in("annotator").get("/").content.decode())
    assert "about batch <strong>B1</strong>" in banner and "deadline" not in banner
