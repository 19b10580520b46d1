"""Entry points: extract tables, paragraphs and links from a .tex file, a folder or an archive."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from curation.latex.archive import ArchiveLimits, unpack_archive
from curation.latex.document import DocumentWalker
from curation.latex.macros import MacroExpander
from curation.latex.results import PaperExtraction
from curation.latex.sources import SourceTooLarge, assemble_project, document_parts, read_text, strip_conditionals
from curation.latex.text import TextRenderer
from curation.latex.tokens import CS, Token, serialize, tokenize
from curation.latex.tree import Group, NodeCursor, build_tree

PLAIN_SUFFIXES = (".tex", ".ltx")
# Hears each stage of reading a source ("unpacking", "extracting") with its counts.
Progress = Callable[[str, dict[str, int]], object]


def extract_paper(
    path: str | Path,
    *,
    limits: ArchiveLimits | None = None,
    main_file: str | None = None,
    progress: Progress | None = None,
) -> PaperExtraction:
    """Extract a paper from a .tex file, a folder or an archive; only UnsafeArchiveError and SourceTooLarge
    escape. `progress(stage, counts)` hears "unpacking" and "extracting" (with the member count of an archive)."""
    path = Path(path)
    report = progress or (lambda stage, counts: None)
    if path.is_dir() or path.suffix.lower() in PLAIN_SUFFIXES:
        report("extracting", {})
        if path.is_dir():
            return extract_directory(path, main_file=main_file)
        return extract_directory(path.parent, main_file=main_file or path.name)
    import tempfile  # only archives need a folder to unpack into: a fresh process on a .tex file skips it

    with tempfile.TemporaryDirectory(prefix="tat-latex-") as folder:
        root = Path(folder) / "source"
        report("unpacking", {})
        members = unpack_archive(path, root, limits)
        report("extracting", {"members": len(members)})
        return extract_directory(root, main_file=main_file)


def extract_directory(root: Path, *, main_file: str | None = None) -> PaperExtraction:
    """Extract a paper from an unpacked source folder; malformed LaTeX gives warnings, never an exception."""
    result = PaperExtraction(main_file=main_file or "")
    try:
        _extract_into(result, root, main_file)
    except (SourceTooLarge, MemoryError):  # refused whole: a cut file would give a paper that silently ends early
        raise
    except Exception as error:  # the contract: best effort plus a warning, whatever the input
        result.warnings.append(f"extraction stopped early: {type(error).__name__}: {error}")
    return result


def _extract_into(result: PaperExtraction, root: Path, main_file: str | None) -> None:
    assembled = assemble_project(root, main_file, result)
    expander = MacroExpander()
    for package in _local_packages(root, assembled):
        text, _ = read_text(root / package)
        expander.expand(strip_conditionals(tokenize(text, package)))
    tokens = expander.expand(assembled)
    result.warnings.extend(expander.warnings)
    preamble, body, found = document_parts(tokens)
    if not found:
        result.warnings.append("no \\begin{document}; reading the whole file as the body")
    tree = build_tree(body, result.warnings)
    walker = DocumentWalker(expander.table)
    walker.visit(tree)
    walker.flush()
    tables, paragraphs = walker.render()
    result.tables = tables
    result.paragraphs = paragraphs
    result.warnings.extend(walker.warnings)
    title_nodes = walker.title_nodes if walker.title_nodes is not None else _title(build_tree(preamble, []))
    result.title = TextRenderer(walker.labels).render(title_nodes or [])


def _local_packages(root: Path, tokens: list[Token]) -> list[str]:
    """The packages the source loads that it ships as .sty files of its own."""
    found: list[str] = []
    for index, token in enumerate(tokens):
        if token.kind == CS and token.name in ("usepackage", "RequirePackage"):
            _, argument = NodeCursor(build_tree(tokens[index + 1 : index + 40], [])).arguments("[{")
            listed = serialize([node for node in argument if isinstance(node, Token)])
            for name in (part.strip() for part in listed.split(",") if part.strip()):
                candidate = root / f"{name}.sty"
                if candidate.is_file() and candidate.resolve().is_relative_to(root.resolve()):
                    found.append(f"{name}.sty")
    return found


def _title(preamble: list) -> list | None:
    cursor = NodeCursor(preamble)
    while (node := cursor.next()) is not None:
        if isinstance(node, Token) and node.is_cs("title", "icmltitle"):
            cursor.optional()
            return cursor.argument()
        if isinstance(node, Group):
            found = _title(node.children)
            if found is not None:
                return found
    return None
