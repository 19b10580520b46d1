"""The apps' source files parsed once per test process.

The structure checks (import graph, status writes, settings reads, visibility, thin pages) walk the same few
hundred files; parsing them again in every check was most of those tests' time. Keyed by the text itself, so an
edited or a made-up file is parsed afresh.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path


def parsed(path: Path, source: str | None = None) -> ast.Module:
    """The AST of `path` (or of `source`, named after `path`). Shared between callers: walk it, never change it."""
    return _parse(path.read_text() if source is None else source, str(path))


@cache
def _parse(source: str, filename: str) -> ast.Module:
    return ast.parse(source, filename=filename)
