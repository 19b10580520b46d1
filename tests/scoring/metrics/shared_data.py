"""Locate the benchmark data the tests read: the compressed copies in tests/data (TATCURATE_SHARED_DIR overrides)."""

from __future__ import annotations

import hashlib
import lzma
import os
import tempfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[3]
CARRIED = REPOSITORY / "tests" / "data"


def _unpacked_carried_data() -> Path:
    """tests/data with every .xz decompressed (and SOURCE.md copied) once into a cache directory named by its digest."""
    archives = sorted(CARRIED.glob("*/*.xz")) + sorted(CARRIED.glob("*/SOURCE.md"))
    digest = hashlib.sha256()
    for archive in archives:
        digest.update(archive.relative_to(CARRIED).as_posix().encode())
        digest.update(archive.read_bytes())
    target = Path(tempfile.gettempdir()) / f"tatcurate-test-data-{digest.hexdigest()[:16]}"
    for archive in archives:
        destination = target / archive.parent.name / (archive.stem if archive.suffix == ".xz" else archive.name)
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        # Write beside and rename, so tests running in parallel never read a half-written file.
        partial = destination.with_name(f"{destination.name}.{os.getpid()}.partial")
        content = archive.read_bytes()
        partial.write_bytes(lzma.decompress(content) if archive.suffix == ".xz" else content)
        partial.replace(destination)
    return target


def shared_data_dir() -> Path:
    """The data directory (tatqa/, tatdqa/, finqa/): $TATCURATE_SHARED_DIR/data when set, else tests/data unpacked.
    Skips the calling test only when an explicit TATCURATE_SHARED_DIR holds no data."""
    override = os.environ.get("TATCURATE_SHARED_DIR")
    if override:
        data = Path(override) / "data"
        if not data.is_dir():
            pytest.skip(f"benchmark data not found at {data} (unset TATCURATE_SHARED_DIR to use tests/data)")
        return data
    return _unpacked_carried_data()
