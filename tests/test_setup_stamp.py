"""scripts/setup installs once: a second run whose requirements, Python and tree are unchanged (its stamp in .venv
matches) calls pip (and uv) no more, and a changed requirement installs again. Run on a copy of the script with a
stand-in Python that records what it is asked to do."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Stands in for python3.11 and for .venv/bin/python: says it is 3.11, records every pip call.
FAKE_PYTHON = """#!/usr/bin/env bash
if [ "${1:-}" = "-c" ]; then exit 0; fi
if [ "${1:-}" = "-VV" ]; then echo "Python 3.11.7 (stand-in)"; exit 0; fi
if [ "${1:-}" = "-m" ] && [ "${2:-}" = "venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; exit 0; fi
echo "$*" >>"$PIP_CALLS"
"""


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup", tree / "scripts" / "setup")
    for name in ("pyproject.toml", "requirements-models.txt"):
        shutil.copy(ROOT / name, tree / name)
    python = tmp_path / "python3.11"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return tree


def _setup(tree: Path, tmp_path: Path) -> tuple[str, list[str]]:
    calls = tmp_path / "pip-calls"
    calls.unlink(missing_ok=True)
    env = {**os.environ, "PYTHON": str(tmp_path / "python3.11"), "PIP_CALLS": str(calls)}
    result = subprocess.run(["bash", "scripts/setup"], cwd=tree, env=env, capture_output=True, text=True, check=True)
    return result.stdout, calls.read_text().splitlines() if calls.exists() else []


def test_a_second_setup_installs_nothing_until_a_requirement_changes(tmp_path):
    tree = _tree(tmp_path)
    _, first = _setup(tree, tmp_path)
    assert len(first) == 3 and first[0].startswith("-m pip install") and "uv==" in first[0]  # uv, pinned
    compiled = "-m uv pip install --quiet --compile-bytecode --python .venv/bin/python"  # compiled as pip does
    assert all(call.startswith(compiled) for call in first[1:])
    assert (tree / ".venv" / "setup-stamp").is_file()

    output, second = _setup(tree, tmp_path)
    assert second == []
    assert "up to date" in output

    with (tree / "requirements-models.txt").open("a") as requirements:
        requirements.write("# a changed requirement\n")
    _, third = _setup(tree, tmp_path)
    assert len(third) == 3


def test_a_setup_that_failed_midway_installs_again_next_time(tmp_path):
    tree = _tree(tmp_path)
    _setup(tree, tmp_path)
    venv_python = tree / ".venv" / "bin" / "python"
    working = venv_python.read_text()
    with (tree / "pyproject.toml").open("a") as pyproject:
        pyproject.write("# a changed requirement\n")
    # pip fails on the editable install (the second step): setup stops and leaves no stamp behind.
    venv_python.write_text(working.replace('>>"$PIP_CALLS"', '>>"$PIP_CALLS"; [[ "$*" != *-e* ]]'))
    env = {**os.environ, "PYTHON": str(tmp_path / "python3.11"), "PIP_CALLS": str(tmp_path / "pip-calls")}
    failed = subprocess.run(["bash", "scripts/setup"], cwd=tree, env=env, capture_output=True, text=True)
    assert failed.returncode != 0
    assert not (tree / ".venv" / "setup-stamp").exists()

    venv_python.write_text(working)
    _, again = _setup(tree, tmp_path)
    assert len(again) == 3
    assert (tree / ".venv" / "setup-stamp").is_file()
