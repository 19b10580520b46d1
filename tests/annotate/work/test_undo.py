"""Undo: the history page offers "restore this version" to whoever may edit the instance now; a restore is a new
revision, version-checked like every edit (409 on a stale version), and the page shows what it changes first."""

from __future__ import annotations

import pytest

from curation.models import Instance
from curation.services.instances import instance_edit
from tests.annotate.work.helpers import queue_next
from tests.support.clients import logged_in


@pytest.fixture
def edited(project, personas, drafts):
    """A draft the annotator holds, edited twice: revision numbers of the two edits."""
    held = queue_next(project=project, user=personas["annotator"])
    first = instance_edit(
        instance_id=held.pk, actor=personas["annotator"], expected_version=held.version, fields={"question": "Old?"}
    )
    second = instance_edit(
        instance_id=held.pk, actor=personas["annotator"], expected_version=first.version, fields={"question": "New?"}
    )
    numbers = list(second.revisions.order_by("number").values_list("number", flat=True))
    return second, numbers


def test_the_holder_restores_an_earlier_version_as_a_new_revision(project, personas, edited):
    instance, numbers = edited
    old = instance.revisions.get(fields__question="Old?").number
    client = logged_in("annotator")
    page = client.get(f"/p/{project.slug}/history/{instance.pk}/?restore={old}").content.decode()
    assert "Restore this version" in page and 'id="restore-revision-button"' in page
    diff = page[page.index('id="restore-diff"') :]
    diff = diff[: diff.index("</table>")]
    assert "<del>New?</del>" in diff and "<ins>Old?</ins>" in diff and "rationale" not in diff  # only what changes
    response = client.post(
        f"/p/{project.slug}/history/{instance.pk}/restore-revision/",
        {"revision": old, "expected_version": instance.version},
    )
    assert response.status_code == 302
    restored = Instance.objects.get(pk=instance.pk)
    assert restored.question == "Old?" and restored.version == instance.version + 1
    latest = restored.revisions.order_by("-number").first()
    assert latest.kind == "restore" and latest.number == max(numbers) + 1 and latest.fields["note"].endswith(str(old))


def test_a_stale_restore_is_a_409_and_changes_nothing(project, personas, edited, api_client_for):
    instance, _ = edited
    old = instance.revisions.get(fields__question="Old?").number
    response = api_client_for(personas["annotator"]).post(
        f"/api/instances/{instance.pk}/revisions/restore/",
        {"revision": old, "expected_version": instance.version - 1},
        format="json",
    )
    assert response.status_code == 409
    assert Instance.objects.get(pk=instance.pk).question == "New?"
    fresh = api_client_for(personas["annotator"]).post(
        f"/api/instances/{instance.pk}/revisions/restore/",
        {"revision": old, "expected_version": instance.version},
        format="json",
    )
    assert fresh.status_code == 200 and fresh.json()["question"] == "Old?"


@pytest.mark.parametrize(("who", "status"), [("annotator2", 403), ("verifier", 403), ("outsider", 404)])
def test_nobody_else_restores(project, personas, edited, who, status, api_client_for):
    instance, _ = edited
    old = instance.revisions.get(fields__question="Old?").number
    client = logged_in(who)
    page = client.get(f"/p/{project.slug}/history/{instance.pk}/?restore={old}")
    assert "Restore this version" not in page.content.decode()
    response = client.post(
        f"/p/{project.slug}/history/{instance.pk}/restore-revision/",
        {"revision": old, "expected_version": instance.version},
    )
    assert response.status_code == status
    api = api_client_for(personas[who]).post(
        f"/api/instances/{instance.pk}/revisions/restore/",
        {"revision": old, "expected_version": instance.version},
        format="json",
    )
    assert api.status_code in (403, 404)
    assert Instance.objects.get(pk=instance.pk).question == "New?"


def test_the_revisions_read_in_the_pages_words_and_say_what_each_changed(project, personas, edited):
    """The compare table names fields as the pages do and writes choices as their labels (the scale None is "None",
    not empty); the revision list says what each revision changed, since the question alone may not."""
    instance, _ = edited
    chosen = instance_edit(
        instance_id=instance.pk, actor=personas["annotator"], expected_version=instance.version,
        fields={"scale": "million", "answer_form": "short"},
    )  # fmt: skip
    page = logged_in("annotator").get(f"/p/{project.slug}/history/{instance.pk}/").content.decode()
    diff = page[page.index('id="revision-diff"') :].split("</table>", 1)[0]
    assert "<th>Scale</th>" in diff and "<del>None</del><ins>Million</ins>" in diff and "<ins>Short-form</ins>" in diff
    assert "answer_form" not in diff and "<th>Answer form</th>" in diff
    rows = page[page.index("<h2>Revisions</h2>") :].split("</table>", 1)[0]
    assert "Answer form, Scale" in rows and "first version" in rows and "<td>Question</td>" in rows
    assert chosen.scale == "million"
