"""Finding the main file of a LaTeX project and assembling it: conditionals dropped, included files spliced in."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from curation.latex.results import PaperExtraction
from curation.latex.tokens import BGROUP, CHAR, CS, EGROUP, PAR, Token, TokenStream, serialize, tokenize
from curation.latex.tree import env_name

TEX_SUFFIXES = (".tex", ".ltx")
MAX_INCLUDES = 2000
MAX_FILE_BYTES = 20 * 1024 * 1024
# Commands named \if... that take arguments instead of ending with \fi (ifthen, etoolbox).
_NOT_CONDITIONALS = frozenset(
    {
        "ifthenelse", "ifdef", "ifndef", "ifcsdef", "ifcsundef", "ifdefmacro", "ifdefempty", "ifdefvoid",
        "ifstrequal", "ifstrempty", "ifblank", "ifbool", "ifboolexpr", "iftoggle", "ifnumcomp", "ifdimcomp",
        "ifnumequal", "ifdefstring", "ifcsstring", "ifpackageloaded", "ifclassloaded", "ifdefined@",
    }
)  # fmt: skip
_INCLUDES = frozenset({"input", "include", "subfile", "subfileinclude", "import", "subimport", "inputfrom",
                       "subinputfrom", "includefrom", "subincludefrom"})  # fmt: skip


class SourceTooLarge(ValueError):
    """A source file is over MAX_FILE_BYTES: the paper is refused, never read cut short (issue 19.3)."""


def read_text(path: Path) -> tuple[str, bool]:
    """Decode a source file as UTF-8, falling back to Latin-1; the flag says whether the fallback was used. A file
    over MAX_FILE_BYTES raises SourceTooLarge rather than being cut."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise SourceTooLarge(
            f"{path.name} is {size / 2**20:.1f} MB; a LaTeX source file is at most {MAX_FILE_BYTES // 2**20} MB, "
            "so the paper is refused rather than read cut short"
        )
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("latin-1"), True


def _find_branches(tokens: list[Token], start: int) -> tuple[int | None, int] | None:
    depth = 0
    else_index: int | None = None
    for index in range(start, len(tokens)):
        token = tokens[index]
        if token.kind == CS and token.name.startswith("if") and token.name not in _NOT_CONDITIONALS:
            depth += 1
        elif token.is_cs("fi"):
            if depth == 0:
                return else_index, index
            depth -= 1
        elif token.is_cs("else") and depth == 0 and else_index is None:
            else_index = index
    return None


def _is_balanced(tokens: list[Token]) -> bool:
    depth = 0
    for token in tokens:
        depth += token.kind == BGROUP
        depth -= token.kind == EGROUP
        if depth < 0:
            return False
    return depth == 0


def strip_conditionals(tokens: list[Token]) -> list[Token]:
    """Keep only the live branch of \\iffalse/\\iftrue blocks; unbalanced ones (e.g. in column types) are left."""
    out: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        found = _find_branches(tokens, index + 1) if token.is_cs("iffalse", "iftrue") else None
        if found is not None and _is_balanced(tokens[index + 1 : found[1]]):
            else_index, fi_index = found
            if token.is_cs("iftrue"):
                live = tokens[index + 1 : else_index if else_index is not None else fi_index]
            else:
                live = tokens[else_index + 1 : fi_index] if else_index is not None else []
            out.extend(strip_conditionals(live))
            index = fi_index + 1
            continue
        out.append(token)
        index += 1
    return out


def _document_body(tokens: list[Token]) -> list[Token] | None:
    _, body, found = document_parts(tokens)
    return body if found else None


def is_main_candidate(tokens: list[Token]) -> bool:
    """Whether a file has both a \\documentclass and a \\begin{document}."""
    has_class = any(token.is_cs("documentclass", "documentstyle") for token in tokens)
    return has_class and _document_body(tokens) is not None


class Assembler:
    """Loads files under one root and splices \\input/\\include/\\subfile targets in, cycle-safe."""

    def __init__(self, root: Path, main_file: str) -> None:
        self.root = root.resolve()
        self.main_file = main_file
        self.main_dir = PurePosixPath(main_file).parent
        self.included: list[str] = []
        self.warnings: list[str] = []
        self._cache: dict[str, list[Token]] = {}
        self._include_count = 0
        self._include_only: set[str] | None = None

    def load(self, relative: str) -> list[Token]:
        """Tokens of one file with comments and dead conditionals removed, cut at \\endinput."""
        if relative not in self._cache:
            text, fallback = read_text(self.root / relative)
            if fallback:
                self.warnings.append(f"{relative}: not UTF-8, read as Latin-1")
            tokens = strip_conditionals(tokenize(text, relative))
            end = next((index for index, token in enumerate(tokens) if token.is_cs("endinput")), len(tokens))
            self._cache[relative] = tokens[:end]
        return self._cache[relative]

    def resolve(self, name: str, current_file: str, base: str | None = None) -> str | None:
        """Find an included file the way TeX does: relative to the main file's folder, then the includer's."""
        name = name.strip().strip('"')
        if not name:
            return None
        folders = [self.main_dir, PurePosixPath(current_file).parent, PurePosixPath(".")]
        if base is not None:
            folders = [PurePosixPath(base), *folders]
        for folder in folders:
            for candidate in (name, name + ".tex"):
                path = (self.root / folder / candidate).resolve()
                if path.is_file() and path.is_relative_to(self.root):
                    return path.relative_to(self.root).as_posix()
        return None

    def assemble(self) -> list[Token]:
        """The main file's tokens with every reachable include expanded."""
        self.included = [self.main_file]
        return self._expand(self.load(self.main_file), self.main_file, (self.main_file,))

    def _expand(self, tokens: list[Token], current: str, stack: tuple[str, ...]) -> list[Token]:
        out: list[Token] = []
        stream = TokenStream(tokens)
        while (token := stream.next()) is not None:
            if token.is_cs("includeonly"):
                self._include_only = {part.strip() for part in _read_name(stream).split(",") if part.strip()}
            elif token.kind != CS or token.name not in _INCLUDES:
                out.append(token)
            elif token.name in ("import", "subimport", "inputfrom", "subinputfrom", "includefrom", "subincludefrom"):
                base = _read_name(stream)
                if token.name.startswith("sub"):
                    base = (PurePosixPath(current).parent / base).as_posix()
                out.extend(self._include(_read_name(stream), current, stack, token.name, base))
            else:
                name = _read_name(stream, allow_bare=token.name == "input")
                if token.name != "include" or self._include_only is None or name in self._include_only:
                    out.extend(self._include(name, current, stack, token.name, None))
        return out

    def _include(self, name: str, current: str, stack: tuple[str, ...], command: str, base: str | None) -> list[Token]:
        target = self.resolve(name, current, base)
        if target is None:
            if name and not name.endswith((".bbl", ".sty", ".cls")):
                self.warnings.append(f"{current}: \\{command}{{{name}}} not found")
            return []
        if target in stack:
            self.warnings.append(f"{current}: \\{command}{{{name}}} would include itself (cycle), skipped")
            return []
        self._include_count += 1
        if self._include_count > MAX_INCLUDES:
            self.warnings.append(f"more than {MAX_INCLUDES} includes, stopped following them")
            return []
        if target not in self.included:
            self.included.append(target)
        tokens = self.load(target)
        body = _document_body(tokens) if command in ("subfile", "subfileinclude") else None
        if body is not None:
            tokens = body
        expanded = self._expand(tokens, target, (*stack, target))
        return [Token(PAR, "\n\n", target), *expanded, Token(PAR, "\n\n", target)] if command == "include" else expanded


def _read_name(stream: TokenStream, allow_bare: bool = False) -> str:
    """A braced file name (`\\input{sections/intro}`), or with `allow_bare` the text up to a space (`\\input intro`)."""
    stream.skip_spaces()
    if (token := stream.peek()) is not None and token.kind == BGROUP:
        stream.next()
        return serialize(stream.read_until_close()).strip()
    parts: list[str] = []
    while allow_bare and (token := stream.peek()) is not None and token.kind == CHAR:
        parts.append(token.text)
        stream.next()
    return "".join(parts)


def list_tex_files(root: Path) -> list[str]:
    """Every .tex/.ltx file under root, as sorted POSIX paths relative to it (links are not followed)."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.suffix.lower() in TEX_SUFFIXES and path.is_file() and not path.is_symlink()
    )


def assemble_project(root: Path, main_file: str | None, result: PaperExtraction) -> list[Token]:
    """The token stream a reader of the main file sees; the main file (the given one, or the one picked), the files
    it reached and those it did not, the candidates and what went wrong go into `result`."""
    files = list_tex_files(root)
    if main_file is not None:
        assembler = Assembler(root, main_file)
        return _assembled(assembler, assembler.assemble(), files, [main_file], result)
    if not files:
        result.warnings.append("no .tex file found")
        return []
    scored: list[tuple[tuple, Assembler, list[Token]]] = []
    candidates = [name for name in files if is_main_candidate(Assembler(root, name).load(name))]
    if not candidates:
        # Best effort: a fragment without a preamble is still worth reading.
        candidates = files
        result.warnings.append("no file has both \\documentclass and \\begin{document}; guessing the main file")
    for name in candidates:
        assembler = Assembler(root, name)
        tokens = assembler.assemble()
        body = _document_body(tokens) or tokens
        reached = sum(1 for token in body if token.kind in (CHAR, CS))
        preferred = PurePosixPath(name).stem.lower() in ("main", "ms", "paper", "manuscript", "article")
        key = (reached, len(assembler.included), preferred, -name.count("/"), name)
        scored.append((key, assembler, tokens))
    scored.sort(key=lambda item: item[0], reverse=True)
    _, assembler, tokens = scored[0]
    # Subfiles reached from the chosen main also qualify, but they are not competitors.
    rivals = [item for item in scored[1:] if item[1].main_file not in assembler.included]
    if rivals:
        others = ", ".join(f"{item[1].main_file} ({item[0][0]} tokens)" for item in rivals)
        result.warnings.append(
            f"several main-file candidates; chose {assembler.main_file} ({scored[0][0][0]} tokens), "
            f"which reaches the most content, over {others}"
        )
    return _assembled(assembler, tokens, files, candidates, result)


def _assembled(
    assembler: Assembler, tokens: list[Token], files: list[str], candidates: list[str], result: PaperExtraction
) -> list[Token]:
    result.main_file = assembler.main_file
    result.files = list(assembler.included)
    result.unused_files = [name for name in files if name not in assembler.included]
    result.main_file_candidates = candidates
    result.warnings.extend(assembler.warnings)
    return tokens


def document_parts(tokens: list[Token]) -> tuple[list[Token], list[Token], bool]:
    """Split into preamble and body; the flag says whether \\begin{document} was found."""
    for index, token in enumerate(tokens):
        if token.is_cs("begin") and (start := _after_document_name(tokens, index + 1)):
            body = tokens[start:]
            ends = (end for end, other in enumerate(body) if other.is_cs("end") and _after_document_name(body, end + 1))
            return tokens[:index], body[: next(ends, len(body))], True
    return [], tokens, False


def _after_document_name(tokens: list[Token], index: int) -> int | None:
    """Where the tokens go on after a `{document}` at `index`; None when no such name is there."""
    found = env_name(tokens, index)
    return found[1] if found is not None and found[0] == "document" else None
