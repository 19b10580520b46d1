"""Locate the shared benchmark data (TATCURATE_SHARED_DIR, default <repo>/../shared) or skip with the reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[3]


def shared_data_dir() -> Path:
    """The shared data directory; skips the calling test when it is absent."""
    shared = Path(os.environ.get("TATCURATE_SHARED_DIR", REPOSITORY / ".." / "shared"))
    data = shared / "data"
    if not data.is_dir():
        pytest.skip(f"shared benchmark data not found at {data} (set TATCURATE_SHARED_DIR)")
    return data
