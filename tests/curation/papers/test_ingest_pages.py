"""Ingestion pages: upload (with and without JS), the paper list, and a paper page a person can judge at a glance."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.models import Context, Paper
from curation.papers.models import IngestJob
from curation.papers.services import paper_ingest
from tests.curation.papers.ingest_helpers import (
    FIXTURES,
    PAPER,
    TABLES_ONLY,
    row_counts,
    run_pending_ingestions,
    tar_gz,
)
from tests.factories import BatchFactory
from tests.support.clients import logged_in


@pytest.fixture
def ingested(project, personas):
    return paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "multifile").paper


ROLE_STATUS = [("manager", 200), ("verifier", 200), ("annotator", 403), ("outsider", 404)]


@pytest.mark.parametrize(("username", "expected"), ROLE_STATUS)
def test_paper_list_and_paper_page_by_role(ingested, username, expected):
    client = logged_in(username)
    assert client.get("/p/test-project/papers/").status_code == expected
    assert client.get(f"/p/test-project/papers/{ingested.pk}/").status_code == expected


@pytest.mark.parametrize(("username", "expected"), [("manager", 200), ("verifier", 403), ("annotator", 403)])
def test_upload_page_is_for_managers(personas, username, expected):
    response = logged_in(username).get("/p/test-project/papers/upload/")
    assert response.status_code == expected
    if expected == 200:
        html = response.content.decode()
        assert 'enctype="multipart/form-data"' in html and 'name="files"' in html and "multiple" in html
        assert 'id="dropzone"' in html


def test_anonymous_is_sent_to_login(db, client):
    for url in ("/p/test-project/papers/", "/p/test-project/papers/upload/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_plain_multipart_upload_stores_and_reports_each_file(project, personas, tmp_path):
    archive = tar_gz(tmp_path / "2401.01234v2.tar.gz", {"src/main.tex": PAPER})
    files = [
        SimpleUploadedFile("2401.01234v2.tar.gz", archive.read_bytes()),
        SimpleUploadedFile("single.tex", PAPER.replace("Ours", "Single").encode()),
    ]
    browser = logged_in("manager")
    response = browser.post("/p/test-project/papers/upload/", {"files": files})
    job = IngestJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/p/test-project/papers/ingestions/{job.pk}/"
    waiting = browser.get(response["Location"]).content.decode()
    assert "Waiting for a worker" in waiting and 'hx-trigger="every 1s"' in waiting and "0 of 2" in waiting
    assert not Paper.objects.exists()
    run_pending_ingestions()
    html = browser.get(response["Location"]).content.decode()
    assert html.count("created") >= 2 and "Packed Paper" in html and "hx-trigger" not in html
    assert Paper.objects.filter(project=project).count() == 2
    paper = Paper.objects.get(arxiv_id="2401.01234v2")
    assert f"/p/test-project/papers/{paper.pk}/" in html
    # The next step of the project's checklist: its contexts go into a batch.
    assert (
        'href="/p/test-project/batches/#fill-from-papers" id="ingest-next">Next: put the new contexts in a batch'
        in html
    )


def test_the_result_of_an_ingestion_into_a_batch_leads_on_to_that_batch(project, personas):
    batch = BatchFactory(project=project, name="First batch")
    browser = logged_in("manager")
    upload = SimpleUploadedFile("single.tex", PAPER.encode())
    response = browser.post("/p/test-project/papers/upload/", {"files": [upload], "batch": str(batch.pk)})
    run_pending_ingestions()
    html = browser.get(response["Location"]).content.decode()
    assert 'href="/p/test-project/batches/" id="ingest-next">Next: batch “First batch”, which holds the new' in html


def test_refused_upload_shows_the_reason_and_stores_nothing(project, personas, tmp_path):
    bad = tar_gz(tmp_path / "evil.tar.gz", {"/etc/evil.tex": PAPER})
    before = row_counts()
    files = [SimpleUploadedFile("ok.tex", PAPER.encode()), SimpleUploadedFile("evil.tar.gz", bad.read_bytes())]
    browser = logged_in("manager")
    response = browser.post("/p/test-project/papers/upload/", {"files": files}, follow=True)
    run_pending_ingestions()
    html = browser.get(response.redirect_chain[-1][0]).content.decode()
    assert "Nothing was stored" in html and "evil.tar.gz" in html and "absolute path" in html
    assert ">Retry</button>" in html and ">Discard</button>" in html
    assert row_counts() == before


def test_a_pdf_upload_names_the_file_once_and_asks_for_latex_sources(project, personas):
    before = row_counts()
    pdf = SimpleUploadedFile("paper.pdf", b"%PDF-1.7 a compiled paper", content_type="application/pdf")
    response = logged_in("manager").post("/p/test-project/papers/upload/", {"files": [pdf]})
    assert response.status_code == 400
    html = response.content.decode()
    assert html.count("paper.pdf") == 1
    assert "is a PDF" in html and "LaTeX sources" in html and ".tar.gz" in html
    assert row_counts() == before


def test_paper_page_renders_tables_with_spans_captions_and_raw_latex(ingested):
    html = logged_in("verifier").get(f"/p/test-project/papers/{ingested.pk}/").content.decode()
    table = ingested.tables.get(label="tab:main")
    block = html[html.index(f'id="table-{table.pk}"') :]
    block = block[: block.index("</table>")]
    assert "<table" in block and "Main results of CaR. See Table 2." in block
    assert re.search(r'<th class="first-col" rowspan="2">Model</th>', block)  # the first column stays in view
    assert re.search(r'<th colspan="2">Acc\.</th>', block)
    # The multirow reaches into row two, so both rows are header rows and "Dev" is a header cell too.
    assert "<th>Dev</th>" in block and "<td>86.0 ± 0.2</td>" in block
    assert "\\begin{table*}" in html


def test_paper_page_highlights_table_mentions_in_paragraphs(ingested):
    html = logged_in("manager").get(f"/p/test-project/papers/{ingested.pk}/").content.decode()
    main = ingested.tables.get(label="tab:main")
    ablation = ingested.tables.get(label="ablation")
    paragraph = ingested.paragraphs.get(text__startswith="This is the first paragraph")
    block = html[html.index(f'id="paragraph-{paragraph.pk}"') :]
    block = block[: block.index("</p>")]
    inline = f'<a class="mention" href="#table-{main.pk}" data-table="{main.pk}">1</a>'
    assert block.count(inline) == 2  # "Table 1" and "Tables 1 and 2"
    assert f'<a class="mention" href="#table-{ablation.pk}" data-table="{ablation.pk}">2</a>' in block
    # Each table names the paragraphs that mention it, by their numbers.
    backlink = f'<a href="#paragraph-{paragraph.pk}" class="backlink" data-paragraph="{paragraph.pk}">'
    assert f"{backlink}¶{paragraph.order + 1}</a>" in html
    assert "[smith2020, lee2021]" in block
    # Paragraphs without links carry no mention.
    plain = ingested.paragraphs.get(text__startswith="Second paragraph")
    plain_block = html[html.index(f'id="paragraph-{plain.pk}"') :]
    assert 'class="mention' not in plain_block[: plain_block.index("</p>")]
    # Hover highlights the table: the page loads its script from static/ (the CSP allows no inline script).
    assert "curation/paper.js" in html
    assert "mouseenter" in (Path(__file__).resolve().parents[3] / "static" / "curation" / "paper.js").read_text()


def test_paper_page_shows_warnings_counts_and_the_manager_controls(project, personas):
    paper = paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "drafts").paper
    manager_html = logged_in("manager").get(f"/p/test-project/papers/{paper.pk}/").content.decode()
    assert "Extraction warnings" in manager_html and "several main-file candidates" in manager_html
    assert 'id="paper-counts"' in manager_html and 'id="assign-form"' in manager_html
    assert 'name="reasoning_type"' in manager_html
    verifier_html = logged_in("verifier").get(f"/p/test-project/papers/{paper.pk}/").content.decode()
    assert "Extraction warnings" in verifier_html
    assert 'id="assign-form"' not in verifier_html and 'name="reasoning_type"' not in verifier_html


def test_manager_assigns_and_overrides_from_the_pages(project, personas, ingested):
    client = logged_in("manager")
    response = client.post("/p/test-project/contexts/assign/", {"seed": "5", "paper": str(ingested.pk)})
    assert response.status_code == 302
    assert not Context.objects.filter(paper=ingested, kind="short", reasoning_type__isnull=True).exists()
    assert Context.objects.get(paper=ingested, kind="long").reasoning_type is None
    context = Context.objects.filter(paper=ingested, kind=Context.Kind.SHORT).first()
    done = client.post(f"/contexts/{context.pk}/reasoning-type/", {"reasoning_type": "anomaly_detection"}, follow=True)
    assert f"Context {context.pk}: reasoning type set to Anomaly Detection." in done.content.decode()
    context.refresh_from_db()
    assert context.reasoning_type.code == "anomaly_detection"
    page = client.get(f"/p/test-project/papers/{ingested.pk}/").content.decode()
    assert 'value="anomaly_detection" selected' in page
    short = Context.objects.filter(paper=ingested, kind="short").count()  # every one typed, the long one not
    assert f"<dt>Short contexts</dt><dd>{short}</dd>" in page and "<dt>Long contexts</dt><dd>1</dd>" in page
    assert f"<dt>With a reasoning type</dt><dd>{short}</dd>" in page
    refused = client.post(f"/contexts/{context.pk}/reasoning-type/", {"reasoning_type": "nonsense"}, follow=True)
    assert "nonsense&#x27; is not a reasoning type of this project." in refused.content.decode()
    context.refresh_from_db()
    assert context.reasoning_type.code == "anomaly_detection"


@pytest.mark.parametrize("username", ["verifier", "annotator"])
def test_others_cannot_assign_or_override_from_the_pages(project, personas, ingested, username):
    client = logged_in(username)
    assert client.post("/p/test-project/contexts/assign/", {"seed": "5"}).status_code == 403
    context = Context.objects.filter(paper=ingested).first()
    expected = 403 if username == "verifier" else 404  # annotators do not see this context at all
    response = client.post(f"/contexts/{context.pk}/reasoning-type/", {"reasoning_type": "counting"})
    assert response.status_code == expected
    assert not Context.objects.filter(reasoning_type__isnull=False).exists()


def test_project_page_links_to_the_papers(personas):
    manager_html = logged_in("manager").get("/p/test-project/").content.decode()
    assert 'href="/p/test-project/papers/"' in manager_html and 'href="/p/test-project/papers/upload/"' in manager_html
    assert 'href="/p/test-project/papers/"' in logged_in("verifier").get("/p/test-project/").content.decode()


def test_a_paper_without_tables_is_flagged_on_the_list_and_its_page(project, personas, ingested, tmp_path):
    source = tmp_path / "prose.tex"
    source.write_text(
        "\\documentclass{article}\\title{Prose Only}\\begin{document}\\maketitle\nJust words.\n\\end{document}\n"
    )
    prose = paper_ingest(project=project, actor=None, path_or_upload=source).paper
    client = logged_in("verifier")
    listing = client.get("/p/test-project/papers/").content.decode()
    row = listing[listing.index(f"/papers/{prose.pk}/") :].split("</tr>")[0]
    assert "No tables: kept, but it offers no contexts" in row
    other = listing[listing.index(f"/papers/{ingested.pk}/") :].split("</tr>")[0]
    assert "paper-flag" not in other
    page = client.get(f"/p/test-project/papers/{prose.pk}/").content.decode()
    assert 'id="paper-flag"' in page and "SciTaT §2.1" in page
    assert 'id="paper-flag"' not in client.get(f"/p/test-project/papers/{ingested.pk}/").content.decode()


def test_a_paper_of_tables_without_body_text_says_on_the_list_and_its_page_why_it_cannot_be_drafted(
    project, personas, tmp_path
):
    source = tmp_path / "tables.tex"
    source.write_text(TABLES_ONLY)
    tables_only = paper_ingest(project=project, actor=None, path_or_upload=source).paper
    client = logged_in("manager")
    listing = client.get("/p/test-project/papers/").content.decode()
    row = listing[listing.index(f"/papers/{tables_only.pk}/") :].split("</tr>")[0]
    assert "No paragraph cites a table: kept, but it offers no short context, so it cannot be drafted" in row
    page = client.get(f"/p/test-project/papers/{tables_only.pk}/").content.decode()
    flag = page[page.index('id="paper-flag"') :].split("</p>")[0]
    assert "cannot be drafted" in flag and "SciTaT §2.1" in flag


def test_long_contexts_show_no_reasoning_type_control(project, personas, ingested):
    page = logged_in("manager").get(f"/p/test-project/papers/{ingested.pk}/").content.decode()
    long = Context.objects.get(paper=ingested, kind="long")
    row = page[page.index(f'id="context-{long.pk}"') :].split("</tr>")[0]
    assert "drafted on the short contexts" in row and "<select" not in row
    assert "this paper's 3 short contexts" in page  # written in the template, not escaped


def test_assigning_with_a_word_for_seed_or_another_projects_batch_assigns_nothing(project, personas, ingested):
    client = logged_in("manager")
    worded = client.post("/p/test-project/contexts/assign/", {"seed": "five", "paper": str(ingested.pk)}, follow=True)
    assert "Seed: Enter a whole number." in worded.content.decode()
    elsewhere = client.post("/p/test-project/contexts/assign/", {"seed": "5", "batch": "999999"}, follow=True)
    assert "There is no such batch in this project." in elsewhere.content.decode()
    assert not Context.objects.filter(paper=ingested, reasoning_type__isnull=False).exists()


def test_a_result_with_no_short_context_says_there_is_nothing_to_batch(project, personas):
    browser = logged_in("manager")
    tables_only = r"\begin{table}\caption{Accuracy.}\begin{tabular}{lr}Split & A \\ Dev & 71.0 \\"
    tables_only += r"\end{tabular}\end{table}"
    upload = SimpleUploadedFile("tables.tex", f"\\begin{{document}}{tables_only}\\end{{document}}".encode())
    response = browser.post("/p/test-project/papers/upload/", {"files": [upload]})
    run_pending_ingestions()
    html = browser.get(response["Location"]).content.decode()
    assert "0 short, 1 long" in html and "cannot be drafted" in html
    assert '<span id="ingest-next">Nothing to batch: no paper here offers a short context' in html
    assert "Next: put the new contexts in a batch" not in html


def test_a_warnings_count_links_to_the_papers_warnings(project, personas):
    """A number of warnings with no way to read them is a dead end: the ingestion result and the paper list link it
    to the paper page's warnings, which say what they are."""
    browser = logged_in("manager")
    bare = PAPER.split("\\begin{document}", 1)[1].split("\\end{document}", 1)[0]  # no \begin{document}: a warning
    response = browser.post(
        "/p/test-project/papers/upload/", {"files": [SimpleUploadedFile("bare.tex", bare.encode())]}
    )
    run_pending_ingestions()
    paper = Paper.objects.get(project=project)
    assert paper.warnings
    link = f'<a class="warn" href="/p/test-project/papers/{paper.pk}/#paper-warnings"'
    assert link in browser.get(response["Location"]).content.decode()
    assert link in browser.get("/p/test-project/papers/").content.decode()
    page = browser.get(f"/p/test-project/papers/{paper.pk}/").content.decode()
    assert 'id="paper-warnings"' in page and paper.warnings[0] in page


def test_the_project_name_beside_a_heading_leads_to_the_project_home(project, personas, ingested):
    browser = logged_in("manager")
    upload = SimpleUploadedFile("single.tex", PAPER.encode())
    ingestion = browser.post("/p/test-project/papers/upload/", {"files": [upload]})["Location"]
    for url in (
        "/p/test-project/papers/",
        "/p/test-project/papers/upload/",
        ingestion,
        f"/p/test-project/papers/{ingested.pk}/",
    ):
        html = browser.get(url).content.decode()
        heading = html[html.index("<h1>") : html.index("</h1>")]
        assert f'<a href="/p/test-project/">{project.name}</a>' in heading, (url, heading)
