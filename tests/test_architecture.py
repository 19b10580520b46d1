"""The import graph keeps one direction: the core names neither app above it, no files import each other in a loop,
and no module imports with a star. Read from the source (AST): a function-level or TYPE_CHECKING import counts too."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.sources import parsed

ROOT = Path(__file__).resolve().parents[1]
APPS = ("config", "curation", "annotate", "scoring")
# The wiring (config: settings, URLconf, Celery app) names every app; nothing below it names the wiring.
UPPER_APPS = ("annotate", "scoring", "config")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    """Every module of the three apps by dotted name (migrations too: they must not tie the apps either)."""
    return {module_name(path): path for app in APPS for path in sorted((ROOT / app).rglob("*.py"))}


def imported_names(path: Path, module: str, modules: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(dotted name imported, line, is a star import) for every import statement anywhere in the file.

    `from a import b` names the module `a.b` when there is one, else `a` (b is then a name defined in a)."""
    tree = parsed(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno, False) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.append((submodule if submodule in modules else base, node.lineno, alias.name == "*"))
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports."""
    modules = project_modules()
    return {
        module: {name for name, _line, _star in imported_names(path, module, modules) if name in modules} - {module}
        for module, path in modules.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_app_imports_the_wiring():
    modules = project_modules()
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for module, path in modules.items()
        if module.split(".")[0] != "config"
        for name, line, _star in imported_names(path, module, modules)
        if name.split(".")[0] == "config"
    ]
    assert offending == []


def test_the_core_imports_nothing_from_annotate_scoring_or_the_wiring():
    offending = []
    modules = project_modules()
    for module, path in modules.items():
        if module.split(".")[0] != "curation":
            continue
        for name, line, _star in imported_names(path, module, modules):
            if name.split(".")[0] in UPPER_APPS:
                offending.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert sorted(set(offending)) == []


def test_no_files_import_each_other_in_a_loop():
    assert circles(import_graph()) == []


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph seen a folder at a time: `curation.releases.services` counts as `curation.releases`."""

    def room(module: str) -> str:
        return ".".join(module.split(".")[:2])

    folded: dict[str, set[str]] = {}
    for module, targets in graph.items():
        folded.setdefault(room(module), set()).update(room(t) for t in targets)
    return {node: targets - {node} for node, targets in folded.items()}


def test_no_packages_of_an_app_import_each_other_in_a_loop():
    """Folder by folder, arrows run one way (releases/ above exports/ and datasets/, noun packages above the core
    models, dashboard/ and batches/ above review/): a loop here is an import that runs back up, though no files loop."""
    assert circles(package_graph(import_graph())) == []


def test_no_star_imports():
    modules = project_modules()
    stars = [
        f"{path.relative_to(ROOT)}:{line}"
        for module, path in modules.items()
        for _name, line, star in imported_names(path, module, modules)
        if star
    ]
    assert stars == []


def test_the_checks_see_what_they_look_for(tmp_path):
    """The helpers find a loop, an upward import and a star import when there is one, so the tests cannot pass idly."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    folded = package_graph(
        {"curation.releases.services": {"curation.exports.card"}, "curation.exports.card": {"curation.releases.stats"}}
    )
    assert circles(folded) == [["curation.exports", "curation.releases"]]
    modules = project_modules()
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from scoring.models import *\n    from curation.endpoints import errors\n")
    assert imported_names(probe, "curation.probe", modules) == [
        ("scoring.models", 2, True),
        ("curation.endpoints.errors", 3, False),
    ]
    graph = import_graph()
    assert "curation.endpoints.attempts" in graph["curation.endpoints.errors"]
    assert "curation.visibility" in graph["scoring.runs.models"]


def test_the_cores_migrations_wait_on_neither_app_above_it():
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(None, ignore_no_migrations=True)
    upward = [
        (key, parent)
        for key, migration in loader.disk_migrations.items()
        if key[0] == "curation"
        for parent in migration.dependencies
        if parent[0] in UPPER_APPS
    ]
    assert upward == []
    assert any(app == "curation" for app, _name in loader.disk_migrations)
