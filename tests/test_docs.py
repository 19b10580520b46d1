"""The documentation site: it builds strictly (no broken link or anchor), every image a page shows exists, and the
configuration reference lists every environment variable the settings module reads."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIGURATION = DOCS / "configuration.md"
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)[^)]*\)|<img [^>]*src=\"([^\"]+)\"")


def strict_build(site_dir: Path, docs_dir: Path = DOCS) -> None:
    config = load_config(
        config_file=str(ROOT / "mkdocs.yml"), strict=True, site_dir=str(site_dir), docs_dir=str(docs_dir)
    )
    build(config)


def test_the_site_builds_strictly_with_every_link_and_anchor_resolved(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    strict_build(tmp_path / "site")
    assert (tmp_path / "site" / "guides" / "annotator.html").exists()
    benchmarks = (tmp_path / "site" / "benchmarks.html").read_text()
    assert "<!-- benchmark:" not in benchmarks and "benchmarks/results/scale.json" in benchmarks


@pytest.mark.parametrize(
    "broken", ["[x](metrics.md#no-such-section)", "[x](no-such-page.md)", "![x](img/no-such-image.png)"]
)
def test_a_broken_link_anchor_or_image_fails_the_build(tmp_path, monkeypatch, broken):
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    (docs / "index.md").write_text((docs / "index.md").read_text() + f"\n{broken}\n")
    with pytest.raises(Abort):
        strict_build(tmp_path / "site", docs)


def referenced_images(page: Path) -> list[tuple[str, Path]]:
    found = []
    for match in IMAGE.finditer(page.read_text()):
        target = match.group(1) or match.group(2)
        if not re.match(r"^[a-z]+:", target):
            found.append((target, (page.parent / target).resolve()))
    return found


def test_every_image_a_page_or_the_readme_shows_exists():
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    missing = [
        f"{page.relative_to(ROOT)}: {target}"
        for page in pages
        for target, path in referenced_images(page)
        if not path.is_file()
    ]
    assert not missing, "missing images:\n" + "\n".join(missing)


def test_every_guide_shows_screenshots_of_its_pages():
    for role in ("annotator", "verifier", "manager", "researcher"):
        images = referenced_images(DOCS / "guides" / f"{role}.md")
        assert len(images) >= 2, f"the {role} guide shows {len(images)} screenshots"


def environment_variables(source: str) -> set[str]:
    """Names of the environment variables a settings module reads through the env helpers (env_str, env_bool, …)
    or os.environ / os.getenv, each given as a string literal."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        first = node.args[0]
        reads_env = (
            called.startswith("env_")
            or called == "getenv"
            or (called == "get" and isinstance(func, ast.Attribute) and ast.unparse(func.value).endswith("environ"))
        )
        if reads_env and isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.add(first.value)
    return names


def documented_settings() -> set[str]:
    """The variables listed in the first column of the configuration reference's tables."""
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", CONFIGURATION.read_text(), flags=re.MULTILINE))


def settings_source() -> str:
    """The source of the settings module in use (config.settings)."""
    module = os.environ.get("DJANGO_SETTINGS_MODULE") or settings.SETTINGS_MODULE
    origin = importlib.util.find_spec(module).origin
    return Path(origin).read_text()


def test_every_environment_variable_of_the_settings_is_in_the_configuration_reference():
    read = environment_variables(settings_source())
    assert len(read) > 40, sorted(read)  # the reader sees the settings' variables
    undocumented = sorted(read - documented_settings())
    assert not undocumented, f"add these to docs/configuration.md (default and meaning): {undocumented}"


def test_a_new_setting_without_documentation_is_caught():
    source = settings_source() + '\nTATCURATE_SOMETHING_NEW = env_int("TATCURATE_SOMETHING_NEW", 3)\n'
    assert "TATCURATE_SOMETHING_NEW" in environment_variables(source) - documented_settings()
    assert "X_FROM_OS" in environment_variables('import os\nA = os.environ.get("X_FROM_OS", "")\n')
