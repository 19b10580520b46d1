"""Pages stay interfaces: no view module reads the ORM itself or turns NotFound into a 404 by hand."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.sources import parsed

ROOT = Path(__file__).resolve().parents[2]


def _view_modules() -> list[Path]:
    paths = [p for app in ("curation", "annotate", "scoring") for p in (ROOT / app).rglob("*views*.py")]
    assert len(paths) >= 10
    return sorted(paths)


def test_no_view_module_queries_a_model_manager():
    offenders = []
    for path in _view_modules():
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Attribute) and node.attr == "objects" and isinstance(node.value, ast.Name):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.objects (use a selector)")
    assert offenders == []


def test_no_view_module_turns_not_found_into_a_404_itself():
    offenders = []
    for path in _view_modules():
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                names = {n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)}
                if "NotFound" in names:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: except NotFound (curation.page_errors)")
    assert offenders == []
