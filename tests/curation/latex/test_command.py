"""The extract_paper management command prints the documented JSON shape without a database."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from .conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[3]


def test_json_output_has_the_documented_keys():
    out = io.StringIO()
    call_command("extract_paper", str(FIXTURES / "multifile"), "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert {"main_file", "tables", "paragraphs", "warnings"} <= set(data)
    assert data["main_file"] == "main.tex"
    assert {"label", "caption", "rows", "env", "file", "in_appendix", "kind"} <= set(data["tables"][0])
    assert {"text", "section", "mentions"} <= set(data["paragraphs"][0])
    assert data["tables"][1]["rows"] == [["Setting", "F1"], ["w/o calc", "70.2"], ["w/o reason", "68.9%"]]


def test_unsafe_archive_is_a_command_error(tmp_path):
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("../evil.tex")
        archive.addfile(info, io.BytesIO(b""))
    with pytest.raises(CommandError, match="traversal"):
        call_command("extract_paper", str(path), "--json", stdout=io.StringIO())


def test_text_output_gives_each_tables_header_rows():
    out = io.StringIO()
    call_command("extract_paper", str(FIXTURES / "headers" / "pandas_index_name.tex"), stdout=out)
    assert "table 1 [tab:counts] table 5x4, 2 header rows: Per-split counts" in out.getvalue()


def test_manage_py_extract_paper_runs_the_pure_extractor_without_django():
    """The command only extracts: Django's apps are never set up, its settings never read, Celery never started."""
    script = (
        "import json, runpy, sys\n"
        f"sys.argv = ['manage.py', 'extract_paper', {str(FIXTURES / 'multifile')!r}, '--json']\n"
        "try:\n"
        f"    runpy.run_path({str(ROOT / 'manage.py')!r}, run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    apps = sys.modules.get('django.apps')\n"
        "    set_up = bool(apps and apps.apps.ready) or 'django.db.backends.base.base' in sys.modules\n"
        "    set_up = set_up or 'celery' in sys.modules\n"
        "    sys.stderr.write(json.dumps({'status': exit.code, 'django_set_up': set_up}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(done.stderr) == {"status": 0, "django_set_up": False}
    assert json.loads(done.stdout)["main_file"] == "main.tex"


def test_manage_py_extract_paper_reports_an_unreadable_source(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "extract_paper", str(tmp_path / "missing.tar.gz")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "cannot read" in done.stderr


def test_manage_py_extract_paper_on_a_tex_file_imports_no_archive_reader_or_django():
    """A fresh process pays for every import: a plain .tex needs no tar/zip/gzip reader, temporary folder, `typing`
    (annotations only) or Django. Read from `-X importtime`, which lists every module the process itself imports."""
    paper = str(FIXTURES / "multifile" / "main.tex")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(ROOT / "manage.py"), "extract_paper", paper, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    unneeded = {"tarfile", "zipfile", "gzip", "bz2", "lzma", "shutil", "tempfile", "typing", "django"}
    assert "curation.latex.extract" in imported
    assert sorted(imported & unneeded) == []
    assert json.loads(done.stdout)["main_file"] == "main.tex"
