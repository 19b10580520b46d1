"""Work-in-progress export: filtered by status and batch, scoped to the viewer, gold only for those allowed."""

from __future__ import annotations

import csv
import io
import json

import pytest

from curation.errors import InvalidInput, NotFound
from curation.exchange.work_export import COLUMNS, work_export
from curation.models import Instance, Membership
from curation.services.lifecycle import instance_transition
from curation.states import Status
from tests.annotate.work.helpers import queue_next

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture
def work(personas, project, drafts):
    held = queue_next(project=project, user=personas["annotator"])
    Instance.objects.filter(pk=drafts[-1].pk).update(status=Status.VALIDATED)
    return {"held": held, "validated": drafts[-1], "drafts": drafts}


def records(user, project, **options):
    export = work_export(user=user, project=project, file_format="jsonl", **options)
    return [json.loads(line) for line in export.lines], export


def test_managers_export_everything_filtered_by_status_and_batch(personas, project, work, open_batch):
    rows, export = records(personas["manager"], project)
    assert len(rows) == len(work["drafts"]) and export.answers_included
    assert "work-in-progress-not-a-release" in export.filename
    assert all(r["is_release"] is False for r in rows) and list(rows[0]) == list(COLUMNS)
    rows, _ = records(personas["manager"], project, statuses=[Status.VALIDATED, Status.IN_REFINEMENT])
    assert {r["id"] for r in rows} == {work["validated"].pk, work["held"].pk}
    assert rows[0]["answer"] == ["A"] and rows[0]["paper"] == "A small paper" and rows[0]["tables"] == ["1"]
    assert records(personas["manager"], project, batch_id=open_batch.pk)[0] == records(personas["manager"], project)[0]
    with pytest.raises(InvalidInput):
        records(personas["manager"], project, statuses=["finished"])
    with pytest.raises(NotFound):
        records(personas["manager"], project, batch_id=999999)


def test_annotators_export_only_their_own_work_and_outsiders_nothing(personas, project, work):
    rows, export = records(personas["annotator"], project)
    assert [r["id"] for r in rows] == [work["held"].pk] and export.answers_included
    assert records(personas["annotator2"], project)[0] == []
    with pytest.raises(NotFound):
        records(personas["outsider"], project)


def test_gold_answers_stay_with_those_allowed_to_read_them(personas, project, work):
    # An annotator who lost their qualification still sees the work they wrote, without answers or rationales.
    Membership.objects.filter(user=personas["annotator"], project=project).update(is_qualified=False)
    Instance.objects.filter(pk=work["held"].pk).update(rationale="Row A is higher.", answer=["A"])
    rows, export = records(personas["annotator"], project)
    assert not export.answers_included
    assert (rows[0]["answer"], rows[0]["rationale"], rows[0]["answers_included"]) == ([], "", False)
    assert rows[0]["question"]


def test_csv_has_a_header_and_one_row_per_instance(personas, project, work):
    export = work_export(user=personas["verifier"], project=project, file_format="csv", statuses=[Status.DRAFTED])
    table = list(csv.reader(io.StringIO("".join(export.lines))))
    assert table[0] == list(COLUMNS)
    assert len(table) - 1 == Instance.objects.filter(status=Status.DRAFTED).count()
    assert table[1][COLUMNS.index("answer")] == "A"


def test_the_page_downloads_and_is_labelled_not_a_release(client, personas, project, work):
    client.force_login(personas["verifier"])
    url = f"/p/{project.slug}/work-export/"
    assert f'href="{url}"' in client.get(f"/p/{project.slug}/releases/").content.decode()
    page = client.get(url).content.decode()
    assert "Not a release." in page
    response = client.get(url, {"file_format": "jsonl", "status": ["validated"], "batch": ""})
    assert "not-a-release" in response["Content-Disposition"]
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [work["validated"].pk]
    client.force_login(personas["outsider"])
    assert client.get(url, {"file_format": "jsonl"}).status_code == 404


@pytest.mark.parametrize("role", ROLES)
def test_work_export_api_permission_matrix(personas, project, work, api_client_for, role):
    user = None if role == "anonymous" else personas[role]
    response = api_client_for(user).get(
        f"/api/projects/{project.slug}/work-export/", {"file_format": "csv", "status": "in_refinement"}
    )
    expected = {"annotator": 200, "verifier": 200, "manager": 200, "outsider": 404, "anonymous": 401}[role]
    assert response.status_code == expected
    if expected == 200:
        rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
        assert [int(r["id"]) for r in rows] == [work["held"].pk]


def test_released_status_filter_matches_the_lifecycle(personas, project, work):
    instance_transition(instance_id=work["validated"].pk, target=Status.RELEASED, actor=None)
    rows, _ = records(personas["manager"], project, statuses=[Status.RELEASED])
    assert [r["status"] for r in rows] == ["released"]


def test_the_command_exports_as_a_users_view(personas, project, work, tmp_path):
    from django.core.management import CommandError, call_command

    out = tmp_path / "wip.jsonl"
    call_command("export_work", "--project", project.slug, "--as", "annotator", "--out", str(out))
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [work["held"].pk]
    call_command("export_work", "--project", project.slug, "--as", "manager", "--status", "drafted", "--out", str(out))
    assert len(out.read_text().splitlines()) == Instance.objects.filter(status=Status.DRAFTED).count()
    with pytest.raises(CommandError, match="No project"):
        call_command("export_work", "--project", project.slug, "--as", "outsider", "--out", str(out))
