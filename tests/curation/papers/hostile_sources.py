"""Hostile paper sources built on the fly (issue 19.3): archive bombs and tricks, and LaTeX that loops or grows."""

from __future__ import annotations

import io
import string
import tarfile
from pathlib import Path

from tests.curation.papers.ingest_helpers import PAPER


def _tar(path: Path, members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for info in members:
            archive.addfile(info, io.BytesIO((data or {}).get(info.name, b"")) if info.isfile() else None)
    return path


def tar_bomb(path: Path, *, megabytes: int = 64) -> Path:
    """A few KB of gzip that expands to `megabytes` of zeros (a single member that passes the member count)."""
    info = tarfile.TarInfo("main.tex")
    info.size = megabytes * 1024 * 1024
    with tarfile.open(path, "w:gz") as archive:
        archive.addfile(info, io.BytesIO(b"\0" * info.size))
    return path


def traversal(path: Path) -> Path:
    info = tarfile.TarInfo("../../outside.tex")
    info.size = len(PAPER)
    return _tar(path, [info], {info.name: PAPER.encode()})


def symlink(path: Path) -> Path:
    info = tarfile.TarInfo("main.tex")
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return _tar(path, [info])


def hard_link(path: Path) -> Path:
    info = tarfile.TarInfo("main.tex")
    info.type, info.linkname = tarfile.LNKTYPE, "/etc/shadow"
    return _tar(path, [info])


def device(path: Path) -> Path:
    info = tarfile.TarInfo("dev.tex")
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    return _tar(path, [info])


def many_tiny_files(path: Path, *, count: int = 3000) -> Path:
    members = []
    for number in range(count):
        info = tarfile.TarInfo(f"part{number}.tex")
        info.size = 1
        members.append(info)
    return _tar(path, members, {info.name: b"%" for info in members})


def input_cycle(path: Path) -> Path:
    """main → a → b → main, and a file that inputs itself: read once each, the cycle reported."""
    folder = path.parent
    (folder / "a.tex").write_text(r"\input{b}")
    (folder / "b.tex").write_text(r"\input{main}\input{b}")
    path.write_text(PAPER.replace(r"\section{Results}", r"\section{Results}\input{a}"))
    return path


def recursive_macro(path: Path) -> Path:
    path.write_text(PAPER.replace(r"\begin{document}", r"\def\loop{\loop x}\begin{document}\loop"))
    return path


def doubling_macros(path: Path, *, leaf: str = "xxxxxxxxxx", depth: int = 40) -> Path:
    """Each macro is two of the one before: expansion takes minutes of CPU (and with a long `leaf`, memory without
    bound) while the file stays a few KB."""
    names = ["za"]
    lines = [rf"\def\za{{{leaf}}}"]
    for index in range(depth):
        name = "z" + string.ascii_letters[index + 1]
        lines.append(rf"\def\{name}{{\{names[-1]}\{names[-1]}}}")
        names.append(name)
    path.write_text("".join(lines) + PAPER.replace(r"\begin{document}", rf"\begin{{document}}\{names[-1]}"))
    return path


def memory_bomb(path: Path) -> Path:
    return doubling_macros(path, leaf="x " * 5000, depth=30)
