"""Nothing stored for nothing, and nothing told by a status (issue 35, defect 5): a source that expands to no text
and a dataset file without a question are refused with a reason and store no row; an instance a person may not see
answers every attempt exactly as a missing id does."""

from __future__ import annotations

import gzip
import io
import tarfile

import pytest

from curation.datasets.models import ImportRecord
from curation.datasets.services import dataset_import
from curation.errors import InvalidInput
from curation.latex import ArchiveLimits
from curation.models import Batch, Instance, Paper
from curation.papers.reading import source_read
from curation.papers.services import paper_ingest
from tests.annotate.qualification.support import make_gold

EMPTY_DOCUMENT = rb"\documentclass{article}\begin{document}\end{document}"


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize(
    "name, content",
    [
        ("2401.00001.gz", gzip.compress(b"\0" * 3000)),  # a gzip of zeros (the fuzzer's was 1 GB of them)
        ("empty.tex", EMPTY_DOCUMENT),
        ("2401.00002.tar.gz", _tar_gz({"main.tex": EMPTY_DOCUMENT, "figure.png": b"\x89PNG" + b"\1" * 200})),
    ],
    ids=["gzip-of-zeros", "empty-tex", "tar-gz-without-text"],  # gzip stamps the time: ids from bytes differ per worker
)
def test_a_source_that_expands_to_no_text_is_refused_with_a_reason(project, tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InvalidInput) as refused:
        paper_ingest(project=project, actor=None, path_or_upload=path)
    assert f"{name}: " in refused.value.message and "no text" in refused.value.message
    assert not Paper.objects.exists()


def test_the_bounded_reader_refuses_a_source_without_text_too(tmp_path):
    """The worker's child reads through `source_read`, so an upload of nothing fails its job as the command does."""
    path = tmp_path / "empty.tex"
    path.write_bytes(EMPTY_DOCUMENT)
    with pytest.raises(InvalidInput, match=r"empty\.tex: no text"):
        source_read(path=path, name="empty.tex", limits=ArchiveLimits())


def test_a_dataset_file_without_questions_imports_nothing(project, personas, api_client_for):
    batches = Batch.objects.count()
    for fmt, content in (("tatqa", b"[]"), ("finqa", b"[]")):
        with pytest.raises(InvalidInput, match="holds no questions"):
            dataset_import(project=project, actor=personas["manager"], format=fmt, source_name="x", content=content)
    assert (ImportRecord.objects.count(), Batch.objects.count()) == (0, batches)


@pytest.mark.parametrize(
    "action, body",
    [
        ("review/claim/", {}),
        ("round2/claim/", {}),
        ("review/approve/", {"expected_version": 1}),
        ("discard/", {"expected_version": 1, "reason": "x"}),
        ("round2/flag/", {"expected_version": 1, "comments": [], "message": "x"}),
    ],
)
def test_an_instance_a_person_may_not_see_answers_as_a_missing_id(
    project, personas, context, api_client_for, action, body
):
    hidden = make_gold(project, context)[0]  # validated: an annotator may not see it
    client = api_client_for(personas["annotator"])
    assert not Instance.objects.filter(pk=hidden.pk + 10_000).exists()
    answers = [
        client.post(f"/api/instances/{pk}/{action}", body, format="json") for pk in (hidden.pk, hidden.pk + 10_000)
    ]
    assert [a.status_code for a in answers] == [404, 404], [a.content for a in answers]
    assert answers[0].json()["detail"] == answers[1].json()["detail"].replace(str(hidden.pk + 10_000), str(hidden.pk))
