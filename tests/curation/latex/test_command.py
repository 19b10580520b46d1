"""The extract_paper management command prints the documented JSON shape without a database."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from django.core.management import CommandError, call_command

from .conftest import FIXTURES


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
