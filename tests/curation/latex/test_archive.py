"""Archive safety: each attack rejects the whole input before anything is written."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from curation.latex import ArchiveLimits, UnsafeArchiveError, extract_paper, unpack_archive

PAPER = (
    rb"\documentclass{article}\begin{document}\section{S}See Table~\ref{t}."
    rb"\begin{table}\caption{Packed}\label{t}\begin{tabular}{c} z \\ \end{tabular}\end{table}\end{document}"
)


def _tar(path: Path, members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None, mode: str = "w:gz"):
    data = data or {}
    with tarfile.open(path, mode) as archive:
        for info in members:
            payload = data.get(info.name)
            if payload is not None:
                info.size = len(payload)
                archive.addfile(info, io.BytesIO(payload))
            else:
                archive.addfile(info)
    return path


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def _assert_rejected(path: Path, tmp_path: Path, reason: str, limits: ArchiveLimits | None = None) -> None:
    destination = tmp_path / "out"
    with pytest.raises(UnsafeArchiveError, match=reason):
        unpack_archive(path, destination, limits)
    assert not destination.exists() or not any(destination.rglob("*"))


@pytest.mark.parametrize("suffix,mode", [(".tar.gz", "w:gz"), (".tgz", "w:gz"), (".tar", "w")])
def test_good_tar_archives_extract(tmp_path, suffix, mode):
    path = _tar(tmp_path / f"paper{suffix}", [_file("src/main.tex")], {"src/main.tex": PAPER}, mode)
    result = extract_paper(path)
    assert result.main_file == "src/main.tex"
    assert result.tables[0].rows == [["z"]]
    assert result.paragraphs[0].mentions == ["t"]


def test_zip_and_single_gzipped_tex_extract(tmp_path):
    zipped = tmp_path / "paper.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.tex", PAPER)
    gzipped = tmp_path / "paper.gz"
    gzipped.write_bytes(gzip.compress(PAPER))
    for path in (zipped, gzipped):
        assert extract_paper(path).tables[0].caption == "Packed"


def test_path_traversal_is_rejected(tmp_path):
    path = _tar(
        tmp_path / "a.tar.gz", [_file("main.tex"), _file("../evil.tex")], {"main.tex": PAPER, "../evil.tex": b"x"}
    )
    _assert_rejected(path, tmp_path, "traversal")
    assert not (tmp_path / "evil.tex").exists()


def test_absolute_path_is_rejected(tmp_path):
    path = _tar(tmp_path / "a.tar.gz", [_file("/tmp/evil.tex")], {"/tmp/evil.tex": b"x"})
    _assert_rejected(path, tmp_path, "absolute")


def test_zip_traversal_and_absolute_names_are_rejected(tmp_path):
    for name, reason in (("../../evil.tex", "traversal"), ("/etc/evil.tex", "absolute"), ("C:/evil.tex", "absolute")):
        path = tmp_path / "bad.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(zipfile.ZipInfo(name), b"x")
        _assert_rejected(path, tmp_path, reason)


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_links_are_rejected(tmp_path, kind):
    link = _file("main.tex")
    link.type = kind
    link.linkname = "/etc/passwd"
    path = _tar(tmp_path / "a.tar.gz", [link])
    _assert_rejected(path, tmp_path, "link")


def test_zip_symlink_is_rejected(tmp_path):
    path = tmp_path / "link.zip"
    info = zipfile.ZipInfo("main.tex")
    info.external_attr = (0o120777) << 16
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(info, "/etc/passwd")
    _assert_rejected(path, tmp_path, "link")


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_device_files_are_rejected(tmp_path, kind):
    device = _file("dev")
    device.type = kind
    path = _tar(tmp_path / "a.tar.gz", [device])
    _assert_rejected(path, tmp_path, "device")


def test_too_many_members_is_rejected(tmp_path):
    names = [f"f{index}.tex" for index in range(6)]
    path = _tar(tmp_path / "a.tar.gz", [_file(name) for name in names], dict.fromkeys(names, b"x"))
    _assert_rejected(path, tmp_path, "more than 5 members", ArchiveLimits(max_members=5))


def test_zip_bomb_ratio_is_rejected(tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.tex", b"0" * (5 * 1024 * 1024))
    _assert_rejected(path, tmp_path, "ratio")


def test_gzip_bomb_ratio_is_rejected(tmp_path):
    path = tmp_path / "bomb.tar.gz"
    _tar(path, [_file("main.tex")], {"main.tex": b"0" * (5 * 1024 * 1024)})
    _assert_rejected(path, tmp_path, "ratio")
    single = tmp_path / "bomb.tex.gz"
    single.write_bytes(gzip.compress(b"0" * (5 * 1024 * 1024)))
    _assert_rejected(single, tmp_path, "ratio")


def test_oversize_compressed_and_uncompressed_are_rejected(tmp_path):
    path = _tar(tmp_path / "a.tar.gz", [_file("main.tex")], {"main.tex": PAPER})
    _assert_rejected(path, tmp_path, "compressed limit", ArchiveLimits(max_compressed_bytes=10))
    _assert_rejected(path, tmp_path, "uncompressed size limit", ArchiveLimits(max_uncompressed_bytes=100))


def test_not_an_archive_is_rejected(tmp_path):
    path = tmp_path / "paper.pdf"
    path.write_bytes(b"%PDF-1.5 not an archive")
    _assert_rejected(path, tmp_path, "not a tar, zip or gzip")
