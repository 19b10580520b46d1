"""Import of externally drafted questions: matching to contexts, whole-file validation, roles, page and API."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.errors import InvalidInput, NotPermitted
from curation.exchange.draft_import import drafts_import
from curation.models import Context, Instance, Table, TransitionEvent
from curation.states import Status
from tests.factories import ShortContextFactory, TableFactory

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture
def library(paper, context, open_batch):
    """The small paper (¶1 cites Table 1) with a second paragraph citing Table 2, both short contexts in B1."""
    paper.arxiv_id = "2401.01234"
    paper.save()
    table2 = TableFactory(paper=paper, label="tab:speed", number="2", cells=[["Model", "ms"]])
    second = ShortContextFactory(paper=paper, paragraph__text="Table 2 lists the speeds.", tables=[table2])
    Context.objects.filter(pk__in=[context.pk, second.pk]).update(batch=open_batch)
    return {"paper": paper, "first": context, "second": second}


def jsonl(*records) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def test_records_match_contexts_by_id_paragraph_or_table(personas, project, library):
    content = jsonl(
        {"context": library["first"].pk, "question": "Q by id?", "answer": "A"},
        {"paper": "2401.01234", "paragraph": 2, "question": "Q by paragraph?", "answer": ["12", "ms"]},
        {"paper": "A small paper", "table": "tab:speed", "question": "Q by label?", "rationale": "Look."},
        {"paper": str(library["paper"].pk), "table": "1", "question": "Q by number?", "reasoning_type": "counting"},
    )
    created = drafts_import(
        project=project, actor=personas["manager"], content=content, file_format="jsonl", source_name="x.jsonl"
    )
    contexts = [i.context_id for i in created]
    first, second = library["first"].pk, library["second"].pk
    assert contexts == [first, second, second, first]
    assert created[1].answer == ["12", "ms"] and created[2].rationale == "Look."
    assert all(i.status == Status.DRAFTED and i.batch.name == "B1" for i in created)
    assert created[3].reasoning_type.code == "counting"
    assert created[0].draft["provenance"] == {"source": "import", "file": "x.jsonl", "line": 1}
    assert TransitionEvent.objects.filter(instance__in=created, to_status=Status.DRAFTED).count() == 4


def test_csv_imports_too(personas, project, library):
    content = b'paper,table,question,answer\n2401.01234,2,How fast?,"[""3"", ""ms""]"\n'
    (created,) = drafts_import(project=project, actor=personas["manager"], content=content, file_format="csv")
    assert created.context_id == library["second"].pk and created.answer == ["3", "ms"]


def test_a_bad_line_names_line_and_field_and_nothing_is_written(personas, project, library):
    content = jsonl(
        {"paper": "2401.01234", "paragraph": 1, "question": "Fine?"},
        {"paper": "2401.01234", "paragraph": 1, "question": ""},
        {"paper": "nope", "paragraph": 1, "question": "Which?"},
        {"paper": "2401.01234", "table": "9", "question": "Which?"},
        {"paper": "2401.01234", "paragraph": 1, "question": "Why?", "reasoning_type": "guessing"},
        {"context": library["first"].pk, "question": "Dup?", "external_id": "e1"},
        {"context": library["first"].pk, "question": "Dup?", "external_id": "e1", "colour": "red"},
    )
    with pytest.raises(InvalidInput) as caught:
        drafts_import(project=project, actor=personas["manager"], content=content, file_format="jsonl")
    errors = caught.value.detail["errors"]
    assert errors[0] == "line 2, question: a question is required"
    assert errors[1].startswith("line 3, paper: no paper 'nope'")
    assert errors[2].startswith("line 4, table: table '9' is not cited")
    assert errors[3].startswith("line 5, reasoning_type: 'guessing'")
    assert errors[4].startswith("line 7, colour: unknown field")
    assert not Instance.objects.exists()


def test_broken_files_are_refused_whole(personas, project, library):
    for content, fmt, message in (
        (b'{"question": "ok", "context": 1}\n{not json', "jsonl", "line 2: not JSON"),
        (b"\xff\xfe", "jsonl", "not UTF-8"),
        (b"text,answer\nq,a\n", "csv", "question column"),
        (b"", "csv", "question column"),
        (b"\n\n", "jsonl", "no records"),
    ):
        with pytest.raises(InvalidInput, match=message):
            drafts_import(project=project, actor=personas["manager"], content=content, file_format=fmt)
    assert not Instance.objects.exists()


def test_an_external_id_imports_once(personas, project, library):
    content = jsonl({"context": library["first"].pk, "question": "Once?", "external_id": "ext-7"})
    drafts_import(project=project, actor=personas["manager"], content=content, file_format="jsonl")
    with pytest.raises(InvalidInput, match="imported before"):
        drafts_import(project=project, actor=personas["manager"], content=content, file_format="jsonl")
    assert Instance.objects.count() == 1


@pytest.mark.parametrize("role", ["annotator", "verifier", "outsider"])
def test_only_managers_import_drafts(personas, project, library, role):
    content = jsonl({"context": library["first"].pk, "question": "Mine?"})
    with pytest.raises(NotPermitted):
        drafts_import(project=project, actor=personas[role], content=content, file_format="jsonl")
    assert not Instance.objects.exists()


def test_the_page_lists_every_problem_and_imports_a_good_file(client, personas, project, library):
    client.force_login(personas["manager"])
    url = f"/p/{project.slug}/drafts/import/"
    assert f'href="{url}"' in client.get(f"/p/{project.slug}/").content.decode()
    bad = SimpleUploadedFile("bad.jsonl", jsonl({"paper": "2401.01234", "question": "No place?"}))
    page = client.post(url, {"file": bad, "file_format": "jsonl", "batch": ""}).content.decode()
    assert "Nothing was imported" in page and "line 1, paragraph: give the paragraph or the table" in page
    good = SimpleUploadedFile("good.jsonl", jsonl({"paper": "2401.01234", "paragraph": 1, "question": "Placed?"}))
    response = client.post(url, {"file": good, "file_format": "jsonl", "batch": ""}, follow=True)
    assert "1 draft imported from good.jsonl; it waits in the queue." in response.content.decode()
    assert Instance.objects.get().question == "Placed?"


@pytest.mark.parametrize(("role", "expected"), [("annotator", 403), ("verifier", 403), ("outsider", 404)])
def test_the_import_page_refuses_non_managers(client, personas, project, library, role, expected):
    client.force_login(personas[role])
    upload = SimpleUploadedFile("x.jsonl", jsonl({"context": library["first"].pk, "question": "Mine?"}))
    assert client.get(f"/p/{project.slug}/drafts/import/").status_code == expected
    response = client.post(f"/p/{project.slug}/drafts/import/", {"file": upload, "file_format": "jsonl"})
    assert response.status_code == expected
    assert not Instance.objects.exists()


@pytest.mark.parametrize("role", ROLES)
def test_import_api_permission_matrix(personas, project, library, api_client_for, role):
    user = None if role == "anonymous" else personas[role]
    upload = SimpleUploadedFile("x.jsonl", jsonl({"context": library["first"].pk, "question": "Via API?"}))
    response = api_client_for(user).post(
        f"/api/projects/{project.slug}/drafts/import/", {"file": upload, "file_format": "jsonl"}, format="multipart"
    )
    expected = {"annotator": 403, "verifier": 403, "manager": 201, "outsider": 404, "anonymous": 401}[role]
    assert response.status_code == expected, response.content[:300]
    assert Instance.objects.count() == (1 if expected == 201 else 0)


def test_import_api_errors_carry_every_line(personas, project, library, api_client_for):
    upload = SimpleUploadedFile("x.csv", b"question,paper,paragraph\nWhere?,2401.01234,5\n")
    response = api_client_for(personas["manager"]).post(
        f"/api/projects/{project.slug}/drafts/import/", {"file": upload, "file_format": "csv"}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        "line 2, paragraph: ¶5 of 'A small paper' is no short context (it cites no table)"
    ]


def test_the_command_imports_and_reports_every_problem(personas, project, library, tmp_path):
    from django.core.management import CommandError, call_command

    good = tmp_path / "drafts.jsonl"
    good.write_bytes(jsonl({"paper": "2401.01234", "table": "2", "question": "From the shell?"}))
    call_command("import_drafts", str(good), "--project", project.slug, "--json")
    assert Instance.objects.get().context_id == library["second"].pk
    bad = tmp_path / "drafts.csv"
    bad.write_bytes(b"question,context\nNowhere?,999999\n")
    with pytest.raises(CommandError, match="line 2, context: no context '999999'"):
        call_command("import_drafts", str(bad), "--project", project.slug)
    assert Instance.objects.count() == 1


def test_imported_drafts_keep_the_answer_type_scale_and_tables_their_lines_give(personas, project, library):
    first, second = library["first"], library["second"]
    content = jsonl(
        {"context": second.pk, "question": "How fast?", "answer": "3", "answer_type": "span", "scale": "thousand",
         "relevant_tables": "2"},
        {"context": second.pk, "question": "Which?", "answer": ["A", "B"], "scale": "none",
         "relevant_tables": ["tab:speed"]},
        {"context": first.pk, "question": "Who?", "answer": ["A", "B"]},
    )  # fmt: skip
    given, partly, suggested = drafts_import(
        project=project, actor=personas["manager"], content=content, file_format="jsonl"
    )
    table2 = Table.objects.get(label="tab:speed")
    assert (given.answer_type, given.scale) == ("span", "thousand")
    assert list(given.relevant_tables.all()) == [table2] and given.draft["relevant_table_ids"] == [table2.pk]
    assert (partly.answer_type, partly.scale) == ("multi-span", "")  # the type suggested, the scale given
    assert (suggested.answer_type, suggested.draft["answer_type"]) == ("multi-span", "multi-span")


def test_an_unknown_answer_type_scale_or_table_names_its_line(personas, project, library):
    second = library["second"].pk
    content = jsonl(
        {"context": second, "question": "Q?", "answer_type": "guess"},
        {"context": second, "question": "Q?", "scale": "dozen"},
        {"context": second, "question": "Q?", "relevant_tables": "7"},
    )
    with pytest.raises(InvalidInput) as caught:
        drafts_import(project=project, actor=personas["manager"], content=content, file_format="jsonl")
    errors = caught.value.detail["errors"]
    assert errors[0].startswith("line 1, answer_type: 'guess' is not one of span")
    assert errors[1].startswith("line 2, scale: 'dozen' is not one of none")
    assert errors[2] == "line 3, relevant_tables: table '7' is not a table of the context"
    assert not Instance.objects.exists()
