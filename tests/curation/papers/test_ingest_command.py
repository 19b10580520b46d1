"""`manage.py ingest_papers`: a line per paper, a JSON summary, and a non-zero exit when an input is rejected."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from curation.models import Paper
from tests.curation.papers.ingest_helpers import FIXTURES, PAPER, tar_gz


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("ingest_papers", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_lines_say_created_then_unchanged(project):
    out, _ = run("--project", project.slug, "--no-progress", str(FIXTURES / "multifile"), str(FIXTURES / "floats"))
    lines = out.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("multifile: created") and "3 tables" in lines[0] and "4 contexts" in lines[0]
    again, _ = run("--project", project.slug, "--no-progress", str(FIXTURES / "multifile"))
    assert again.startswith("multifile: unchanged")
    assert Paper.objects.count() == 2


def test_json_summary_and_new_version(project, tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first = tar_gz(tmp_path / "a" / "2401.01234.tar.gz", {"main.tex": PAPER})
    second = tar_gz(tmp_path / "b" / "2401.01234.tar.gz", {"main.tex": PAPER + "% changed"})
    out, _ = run("--project", project.slug, "--json", "--no-progress", str(first), str(second))
    summary = json.loads(out)
    assert [p["status"] for p in summary["papers"]] == ["created", "new_version"]
    assert summary["papers"][1]["version"] == 2 and summary["papers"][1]["arxiv_id"] == "2401.01234"
    assert summary["counts"] == {"created": 1, "unchanged": 0, "new_version": 1, "rejected": 0}


def test_rejected_input_exits_non_zero_and_the_others_are_stored(project, tmp_path):
    bad = tar_gz(tmp_path / "evil.tar.gz", {"../../x.tex": PAPER})
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"1 of 3 inputs rejected \(evil.tar.gz\)"):
        call_command(
            "ingest_papers",
            "--project",
            project.slug,
            "--json",
            str(FIXTURES / "floats"),
            str(bad),
            str(FIXTURES / "drafts"),
            stdout=out,
            stderr=io.StringIO(),
        )
    summary = json.loads(out.getvalue())
    assert summary["rejected"][0]["source_name"] == "evil.tar.gz" and "traversal" in summary["rejected"][0]["reason"]
    assert Paper.objects.count() == 2


def test_progress_bar_goes_to_stderr(project, capsys):
    # tqdm writes to the process's stderr, not to the command's stdout.
    call_command("ingest_papers", "--project", project.slug, str(FIXTURES / "floats"), stdout=io.StringIO())
    assert "ingest" in capsys.readouterr().err


def test_unknown_project_is_a_clear_error(db):
    with pytest.raises(CommandError, match="No project 'nope'"):
        run("--project", "nope", str(FIXTURES / "floats"))


def test_a_source_that_hits_a_limit_is_rejected_with_the_limit_in_the_json(project, tmp_path, settings):
    """The command reads through the same bounded child as the worker: a looping source stops at the CPU limit."""
    from tests.curation.papers.hostile_sources import doubling_macros

    settings.TATCURATE_INGEST_CPU_S = 2
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"1 of 2 inputs rejected \(loop.tex\)"):
        call_command(
            "ingest_papers", "--project", project.slug, "--json", "--no-progress",
            str(doubling_macros(tmp_path / "loop.tex")), str(FIXTURES / "floats"),
            stdout=out, stderr=io.StringIO(),
        )  # fmt: skip
    summary = json.loads(out.getvalue())
    assert summary["rejected"] == [
        {"source_name": "loop.tex", "reason": "loop.tex: extraction used more than 2 s of CPU time"}
    ]
    assert [paper["source_name"] for paper in summary["papers"]] == ["floats"]
