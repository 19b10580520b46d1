"""Safe unpacking of paper sources: every member is checked before anything is written, then extracted."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

# tarfile, zipfile, gzip and shutil are imported where an archive is read: `manage.py extract_paper` on a plain
# .tex file runs in a fresh process, which would pay for them at every call.

MIB = 1024 * 1024


class UnsafeArchiveError(ValueError):
    """The archive breaks a safety rule; nothing from it was extracted."""


@dataclass(frozen=True)
class ArchiveLimits:
    """Bounds an upload must respect before it is unpacked."""

    max_compressed_bytes: int = 50 * MIB
    max_uncompressed_bytes: int = 200 * MIB
    max_members: int = 2000
    max_ratio: float = 100.0


def archive_kind(path: Path) -> str | None:
    """Name the archive format by content ("tar", "zip", "gzip"), or None for a plain file."""
    import tarfile
    import zipfile

    if zipfile.is_zipfile(path):
        return "zip"
    with path.open("rb") as handle:
        magic = handle.read(2)
    if magic == b"\x1f\x8b":
        try:
            with tarfile.open(path, "r:gz") as archive:
                archive.next()
            return "tar"
        except (tarfile.TarError, OSError, EOFError):
            return "gzip"
    try:
        return "tar" if tarfile.is_tarfile(path) else None
    except OSError:
        return None


def unpack_archive(path: Path, destination: Path, limits: ArchiveLimits | None = None) -> list[str]:
    """Check the archive against `limits` and only then extract it into `destination`; returns member names."""
    limits = limits or ArchiveLimits()
    compressed = path.stat().st_size
    if compressed > limits.max_compressed_bytes:
        raise UnsafeArchiveError(
            f"archive is {compressed} bytes, over the {limits.max_compressed_bytes}-byte compressed limit"
        )
    unpack = {"zip": _unpack_zip, "tar": _unpack_tar, "gzip": _unpack_gzip}.get(archive_kind(path))
    if unpack is None:
        raise UnsafeArchiveError(f"{path.name} is not a tar, zip or gzip archive")
    return unpack(path, destination, limits, compressed)


def _check_name(name: str) -> None:
    if not name or "\x00" in name:
        raise UnsafeArchiveError(f"member name {name!r} is empty or contains NUL")
    if name.startswith(("/", "\\")) or PureWindowsPath(name).is_absolute() or PureWindowsPath(name).drive:
        raise UnsafeArchiveError(f"member {name!r} has an absolute path")
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        raise UnsafeArchiveError(f"member {name!r} escapes the extraction folder (path traversal)")


def _check_uncompressed(total: int, limits: ArchiveLimits, compressed: int) -> None:
    if total > limits.max_uncompressed_bytes:
        raise UnsafeArchiveError(
            f"archive expands to more than {limits.max_uncompressed_bytes} bytes (uncompressed size limit)"
        )
    if total > limits.max_ratio * max(compressed, 1):
        raise UnsafeArchiveError(
            f"archive expands more than {limits.max_ratio:g} times its size (compression ratio limit)"
        )


def _unpack_tar(path: Path, destination: Path, limits: ArchiveLimits, compressed: int) -> list[str]:
    import tarfile

    checked: list[tarfile.TarInfo] = []
    try:
        with tarfile.open(path, "r:*") as archive:
            total = 0
            # Iterate lazily so a bomb is stopped at the first header past a limit, not after full decompression.
            for info in archive:
                if len(checked) >= limits.max_members:
                    raise UnsafeArchiveError(f"archive has more than {limits.max_members} members")
                _check_name(info.name)
                if info.issym() or info.islnk():
                    raise UnsafeArchiveError(f"member {info.name!r} is a link, links are not allowed")
                if info.ischr() or info.isblk() or info.isfifo() or info.isdev():
                    raise UnsafeArchiveError(f"member {info.name!r} is a device or FIFO")
                if not (info.isfile() or info.isdir()):
                    raise UnsafeArchiveError(f"member {info.name!r} has an unsupported type")
                total += info.size
                _check_uncompressed(total, limits, compressed)
                checked.append(info)
            destination.mkdir(parents=True, exist_ok=True)
            # The data filter is a second line of defence with the same rules.
            archive.extractall(destination, members=checked, filter="data")
    except UnsafeArchiveError:
        raise
    except (tarfile.TarError, OSError, EOFError) as error:
        raise UnsafeArchiveError(f"archive could not be read safely: {error}") from error
    return [info.name for info in checked if not info.isdir()]


def _unpack_zip(path: Path, destination: Path, limits: ArchiveLimits, compressed: int) -> list[str]:
    import shutil
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            total = 0
            for count, info in enumerate(infos, start=1):  # checked in the order the tar loop checks
                if count > limits.max_members:
                    raise UnsafeArchiveError(f"archive has more than {limits.max_members} members")
                _check_name(info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise UnsafeArchiveError(f"member {info.filename!r} is a link, links are not allowed")
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                    raise UnsafeArchiveError(f"member {info.filename!r} is a device or FIFO")
                total += info.file_size
                _check_uncompressed(total, limits, compressed)
            destination.mkdir(parents=True, exist_ok=True)
            root = destination.resolve()
            written = 0
            for info in infos:
                target = (root / info.filename).resolve()
                if not target.is_relative_to(root):
                    raise UnsafeArchiveError(f"member {info.filename!r} escapes the extraction folder")
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as source, target.open("wb") as sink:
                    # Declared sizes can lie; count what is really written.
                    while chunk := source.read(MIB):
                        written += len(chunk)
                        _check_uncompressed(written, limits, compressed)
                        sink.write(chunk)
    except UnsafeArchiveError:
        shutil.rmtree(destination, ignore_errors=True)
        raise
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as error:
        shutil.rmtree(destination, ignore_errors=True)
        raise UnsafeArchiveError(f"archive could not be read safely: {error}") from error
    return [info.filename for info in infos if not info.is_dir()]


def _unpack_gzip(path: Path, destination: Path, limits: ArchiveLimits, compressed: int) -> list[str]:
    import gzip

    name = path.name.removesuffix(".gz").removesuffix(".tgz") or "main"
    if not name.endswith(".tex"):
        name += ".tex"
    chunks: list[bytes] = []
    total = 0
    try:
        with gzip.open(path, "rb") as source:
            while chunk := source.read(MIB):
                total += len(chunk)
                _check_uncompressed(total, limits, compressed)
                chunks.append(chunk)
    except (OSError, EOFError) as error:
        raise UnsafeArchiveError(f"gzip file could not be read safely: {error}") from error
    destination.mkdir(parents=True, exist_ok=True)
    (destination / name).write_bytes(b"".join(chunks))
    return [name]
