"""Ingestion service: sources become papers with tables, paragraphs, links and contexts; idempotent; safe."""

from __future__ import annotations

import gzip
import io
import random
import tarfile
from dataclasses import asdict
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.errors import InvalidInput, NotPermitted
from curation.latex import ArchiveLimits
from curation.latex.results import ExtractedParagraph, ExtractedTable, PaperExtraction
from curation.models import Context, Paper
from curation.papers import ingestion
from curation.papers.services import (
    CREATED,
    NEW_VERSION,
    UNCHANGED,
    PaperSource,
    arxiv_id_from_name,
    paper_ingest,
    paper_store,
)
from tests.curation.papers.ingest_helpers import FIXTURES, PAPER, TABLES_ONLY, row_counts, tar_gz
from tests.factories import BatchFactory


def test_multifile_fixture_is_stored_with_tables_paragraphs_and_links(project):
    result = paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "multifile")
    paper = result.paper
    assert result.status == CREATED
    assert paper.title == "A Test Paper on SciTaT"
    assert paper.main_file == "main.tex" and paper.origin == "latex" and paper.version == 1
    assert paper.source_report["unused_files"] == ["orphan.tex"]
    tables = list(paper.tables.order_by("order"))
    assert [t.label for t in tables] == ["tab:main", "ablation", "tab:halves"]
    main = tables[0]
    assert main.number == "1" and main.env == "table*" and main.file == "sections/results.tex"
    assert main.cells[3] == ["CaR", "87.3", "86.0 ± 0.2"]
    assert main.grid[0] == ["Model", "Acc.", "Acc."]
    assert {"row": 0, "cell": 1, "column": 1, "top": 0, "rowspan": 1, "colspan": 2} in main.spans
    assert "\\begin{table*}" in main.raw_latex
    assert main.caption_references == ["ablation"]
    halves = tables[2]
    assert halves.in_appendix is True
    assert [sub["label"] for sub in halves.subtables] == ["tab:left", "tab:right"]
    intro = paper.paragraphs.get(text__startswith="This is the first paragraph")
    assert sorted(t.label for t in intro.mentioned_tables.all()) == ["ablation", "tab:main"]
    assert intro.mentions == ["tab:main", "ablation"] and intro.section == "Introduction"
    # The caption of table 1 refers to "ablation": that is not a paragraph link.
    assert set(tables[1].mentioning_paragraphs.values_list("order", flat=True)) == {intro.order}


def test_contexts_short_per_linking_paragraph_and_one_long(project):
    result = paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "multifile")
    paper = result.paper
    linking = [p for p in paper.paragraphs.all() if p.mentioned_tables.exists()]
    shorts = Context.objects.filter(paper=paper, kind=Context.Kind.SHORT)
    assert result.short_contexts == len(linking) == shorts.count() == 3
    for context in shorts:
        assert set(context.tables.all()) == set(context.paragraph.mentioned_tables.all())
    long = Context.objects.get(paper=paper, kind=Context.Kind.LONG)
    assert long.paragraph is None and long.tables.count() == paper.tables.count() == 3
    assert all(c.project_id == project.pk and c.reasoning_type_id is None for c in Context.objects.filter(paper=paper))


def test_paper_of_the_cycle_fixture_has_no_tables_so_no_contexts_and_its_warnings(project):
    result = paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "cycle")
    assert result.tables == 0 and result.short_contexts == 0 and result.long_contexts == 0 and result.flag
    assert any("cycle" in warning for warning in result.paper.warnings)


def test_reingesting_the_same_archive_creates_nothing_and_says_so(project, tmp_path):
    archive = tar_gz(tmp_path / "2401.01234v2.tar.gz", {"paper/main.tex": PAPER})
    first = paper_ingest(project=project, actor=None, path_or_upload=archive)
    before = row_counts()
    again = paper_ingest(project=project, actor=None, path_or_upload=archive)
    assert first.status == CREATED and again.status == UNCHANGED
    assert again.paper.pk == first.paper.pk
    assert (again.tables, again.paragraphs, again.short_contexts) == (first.tables, first.paragraphs, 2)
    assert row_counts() == before
    assert first.paper.arxiv_id == "2401.01234v2"


def test_changed_source_with_the_same_name_is_a_new_version(project, tmp_path):
    first_dir, second_dir = tmp_path / "one", tmp_path / "two"
    first_dir.mkdir(), second_dir.mkdir()
    first = tar_gz(first_dir / "paper.tar.gz", {"main.tex": PAPER})
    second = tar_gz(second_dir / "paper.tar.gz", {"main.tex": PAPER.replace("87.3", "88.1")})
    v1 = paper_ingest(project=project, actor=None, path_or_upload=first)
    v2 = paper_ingest(project=project, actor=None, path_or_upload=second)
    assert v2.status == NEW_VERSION and v2.paper.version == 2 and v2.paper.pk != v1.paper.pk
    assert v2.paper.tables.get(order=0).cells[-1] == ["Ours", "88.1", "86.0"]
    assert v1.paper.tables.get(order=0).cells[-1] == ["Ours", "87.3", "86.0"]
    assert Paper.objects.filter(project=project, source_name="paper.tar.gz").count() == 2
    # Same bytes as version 1 again: still unchanged, no version 3.
    assert paper_ingest(project=project, actor=None, path_or_upload=first).status == UNCHANGED


def test_folder_hash_covers_every_file(project, tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "main.tex").write_text(PAPER)
    (folder / "notes.txt").write_text("one")
    first = paper_ingest(project=project, actor=None, path_or_upload=folder)
    assert paper_ingest(project=project, actor=None, path_or_upload=folder).status == UNCHANGED
    (folder / "notes.txt").write_text("two")
    changed = paper_ingest(project=project, actor=None, path_or_upload=folder)
    assert changed.status == NEW_VERSION and changed.sha256 != first.sha256


def test_tex_file_hash_includes_the_files_it_inputs(project, tmp_path):
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}\\input{body}\\end{document}", encoding="utf-8"
    )
    (tmp_path / "body.tex").write_text("First body.", encoding="utf-8")
    first = paper_ingest(project=project, actor=None, path_or_upload=tmp_path / "main.tex")
    (tmp_path / "body.tex").write_text("Second body.", encoding="utf-8")
    second = paper_ingest(project=project, actor=None, path_or_upload=tmp_path / "main.tex")
    assert second.status == NEW_VERSION
    assert second.paper.paragraphs.get().text == "Second body."
    assert first.paper.paragraphs.get().text == "First body."


def _evil_tar(path: Path) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        good = tarfile.TarInfo("main.tex")
        good.size = len(PAPER.encode())
        archive.addfile(good, io.BytesIO(PAPER.encode()))
        link = tarfile.TarInfo("passwd")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        archive.addfile(link)
    return path


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda tmp: _evil_tar(tmp / "evil.tar.gz"), "link"),
        (lambda tmp: tar_gz(tmp / "escape.tar.gz", {"../../outside.tex": PAPER}), "traversal"),
        (lambda tmp: tar_gz(tmp / "bomb.tar.gz", {"main.tex": PAPER, "zeros.bin": b"\0" * 3_000_000}), "ratio"),
        (lambda tmp: tar_gz(tmp / "many.tar.gz", {f"f{i}.tex": "x" for i in range(30)}), "members"),
        (lambda tmp: (tmp / "paper.pdf").write_bytes(b"%PDF-1.4 no latex") and tmp / "paper.pdf", "is a PDF.*LaTeX"),
    ],
)
def test_unsafe_input_is_rejected_with_its_reason_and_writes_nothing(project, tmp_path, make, reason):
    paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "floats")
    before = row_counts()
    limits = ArchiveLimits(max_compressed_bytes=10_000_000, max_uncompressed_bytes=10_000_000, max_members=20)
    with pytest.raises(InvalidInput, match=reason):
        paper_ingest(project=project, actor=None, path_or_upload=make(tmp_path), limits=limits)
    assert row_counts() == before


def test_limits_come_from_settings(project, tmp_path, settings):
    settings.TATCURATE_MAX_UPLOAD_BYTES = 1024
    archive = tar_gz(tmp_path / "big.tar.gz", {"main.tex": PAPER, "noise.bin": random.Random(1).randbytes(4000)})
    before = row_counts()
    with pytest.raises(InvalidInput, match="1024-byte"):
        paper_ingest(project=project, actor=None, path_or_upload=archive)
    assert row_counts() == before


def test_uploads_are_ingested_and_a_bad_one_stores_none_of_them(project, personas):
    good = SimpleUploadedFile("good.tex", PAPER.encode())
    gzipped = SimpleUploadedFile("2312.00001.gz", gzip.compress(PAPER.replace("Ours", "Mine").encode()))
    results = [
        paper_ingest(project=project, actor=personas["manager"], path_or_upload=upload) for upload in (good, gzipped)
    ]
    assert [r.status for r in results] == [CREATED, CREATED]
    assert results[1].paper.arxiv_id == "2312.00001"
    assert results[0].paper.created_by == personas["manager"]
    before = row_counts()
    fresh = SimpleUploadedFile("fresh.tex", PAPER.replace("Ours", "Theirs").encode())
    broken = SimpleUploadedFile("broken.tar.gz", b"\x1f\x8b\x08\x00garbage")
    pdf = SimpleUploadedFile("paper.pdf", b"%PDF-1.7 compiled")
    # Several uploads: one refused at the door stores none of them (a broken archive is the worker's to refuse).
    with pytest.raises(InvalidInput) as caught:
        ingestion.ingest_job_request(project=project, actor=personas["manager"], uploads=[fresh, pdf])
    assert caught.value.detail["rejected"][0]["source_name"] == "paper.pdf"
    assert row_counts() == before
    with pytest.raises(InvalidInput, match=r"broken\.tar\.gz"):
        paper_ingest(project=project, actor=personas["manager"], path_or_upload=broken)
    assert row_counts() == before


def test_oversize_upload_is_refused_before_it_is_read(project, personas):
    upload = SimpleUploadedFile("huge.tex", PAPER.encode())
    limits = ArchiveLimits(max_compressed_bytes=100)
    with pytest.raises(InvalidInput, match="over the 100-byte limit"):
        paper_ingest(project=project, actor=personas["manager"], path_or_upload=upload, limits=limits)
    assert Paper.objects.count() == 0


def test_malformed_latex_is_stored_best_effort_with_warnings(project):
    broken = (
        "\\documentclass{article}\\begin{document}\\section{Oops}\n"
        "See Table~\\ref{t}. \\begin{table}\\caption{Half}\\label{t}\\begin{tabular}{cc} a & \\textbf{b \\\\ "
        "\\multicolumn{9}{c}{x} \\\\ \\end{table} {{{ \\end{itemize}\n\x00 stray"
    )
    upload = SimpleUploadedFile("broken.tex", broken.encode())
    result = paper_ingest(project=project, actor=None, path_or_upload=upload)
    assert result.status == CREATED
    assert result.paper.warnings, "malformed input must say what went wrong"
    assert Paper.objects.filter(pk=result.paper.pk).exists()


def test_only_managers_ingest(project, personas):
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            paper_ingest(project=project, actor=personas[name], path_or_upload=FIXTURES / "floats")
    assert Paper.objects.count() == 0
    result = paper_ingest(project=project, actor=personas["manager"], path_or_upload=FIXTURES / "floats")
    assert result.paper.created_by == personas["manager"]


def test_contexts_can_go_into_a_batch(project):
    batch = BatchFactory(project=project, name="B")
    result = paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "multifile", batch=batch)
    assert Context.objects.filter(paper=result.paper, batch=batch).count() == result.contexts == 4


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("2401.01234v2.tar.gz", "2401.01234v2"),
        ("2401.01234.tgz", "2401.01234"),
        ("arXiv-1912.12345v1.zip", "1912.12345v1"),
        ("0704.0001.gz", "0704.0001"),
        ("hep-th9901001.tar.gz", "hep-th/9901001"),
        ("math.GT0309136v2.tar.gz", "math.GT/0309136v2"),
        ("2413.01234.tar.gz", ""),  # month 13
        ("paper.tar.gz", ""),
        ("results-2020.tex", ""),
    ],
)
def test_arxiv_id_from_file_name(name, expected):
    assert arxiv_id_from_name(name) == expected


NO_TABLES = r"""\documentclass{article}
\title{Prose Only}
\begin{document}
\maketitle
\section{Introduction}
We discuss tables in general but this paper has none.
\end{document}
"""


def test_paper_without_tables_is_kept_and_flagged_with_no_contexts(project, tmp_path):
    source = tmp_path / "prose.tex"
    source.write_text(NO_TABLES)
    result = paper_ingest(project=project, actor=None, path_or_upload=source)
    assert result.status == CREATED and result.tables == 0 and result.paragraphs >= 1
    assert (result.short_contexts, result.long_contexts) == (0, 0)
    assert not Context.objects.filter(paper=result.paper).exists()
    assert "No tables" in result.flag and "§2.1" in result.as_dict()["flag"]
    with_tables = paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "multifile")
    assert with_tables.flag == "" and with_tables.long_contexts == 1


def test_a_paper_of_tables_without_body_text_is_flagged_as_undraftable(project, tmp_path):
    source = tmp_path / "tables.tex"
    source.write_text(TABLES_ONLY)
    result = paper_ingest(project=project, actor=None, path_or_upload=source)
    # SciTaT §2.1 drafts on a paragraph and the tables it cites: no paragraph, no short context, and it says why.
    assert result.tables == 1 and result.paragraphs == 0 and result.short_contexts == 0
    assert result.flag.startswith("No paragraph cites a table") and "cannot be drafted" in result.flag


def test_only_ingested_papers_without_short_contexts_are_flagged():
    from curation.papers.services import paper_flag_reason

    assert paper_flag_reason(table_count=0, short_context_count=0, origin="latex").startswith("No tables")
    assert paper_flag_reason(table_count=2, short_context_count=0, origin="latex").startswith("No paragraph cites")
    assert paper_flag_reason(table_count=2, short_context_count=1, origin="latex") == ""
    # A TAT-DQA document keeps its own context.
    assert paper_flag_reason(table_count=0, short_context_count=0, origin="tatdqa") == ""


def test_stored_text_fits_its_columns_and_a_missing_label_or_number_is_empty(project):
    """Every stored text column takes what the extraction holds, cut to its length and cleaned of NUL; None is ""."""
    table = ExtractedTable(
        index=0, label=None, caption="c\x00", rows=[["a", "1"]], env="e" * 50, kind="table", file="f" * 600,
        in_appendix=True, number=None, section="s" * 600, raw="\\begin{table}", header_rows=1,
    )  # fmt: skip
    long_label = ExtractedTable(
        index=1, label="L" * 400, caption="", rows=[["b", "2"]], env="table", kind="table", file="", in_appendix=False,
        number="1" * 30,
    )  # fmt: skip
    paragraph = ExtractedParagraph(
        index=0, text="See\x00 it.", section="S" * 600, section_number="9" * 50, in_appendix=False, file="main.tex",
        mentions=["t"], tables=[0, 1], references=["t"],
    )  # fmt: skip
    extraction = PaperExtraction(
        main_file="main.tex", title="T" * 600, tables=[table, long_label], paragraphs=[paragraph]
    )
    source = PaperSource(source_name="n" * 600 + ".tex", sha256="0" * 64, extraction=asdict(extraction))
    paper = paper_store(project=project, actor=None, source=source).paper
    assert (len(paper.title), len(paper.source_name), paper.main_file) == (500, 500, "main.tex")
    first, second = paper.tables.order_by("order")
    assert (first.label, first.number, first.caption, first.raw_latex) == ("", "", "c", "\\begin{table}")
    assert (len(first.env), len(first.file), len(first.section), first.in_appendix, first.header_rows) == (
        40, 500, 500, True, 1,
    )  # fmt: skip
    assert (second.label, second.number, second.cells) == ("L" * 300, "1" * 20, [["b", "2"]])
    (stored,) = paper.paragraphs.all()
    assert (stored.text, len(stored.section), len(stored.section_number)) == ("See it.", 500, 40)
    assert (stored.file, stored.mentions, stored.references) == ("main.tex", ["t"], ["t"])
    assert set(stored.mentioned_tables.all()) == {first, second}
