"""Expansion of the author's simple macros (\\newcommand, \\def, \\newenvironment, …) over a token stream."""

from __future__ import annotations

from dataclasses import dataclass, field

from curation.latex.tokens import (
    ACTIVE,
    ALIGN,
    BGROUP,
    CHAR,
    CS,
    EGROUP,
    PAR,
    PARAM,
    SPACE,
    Token,
    TokenStream,
    serialize,
    tokenize,
)

MAX_EXPANSIONS = 200_000
# \DeclareMathOperator{\name}{body} reads as a \newcommand without arguments.
_NEWCOMMANDS = frozenset(
    {"newcommand", "renewcommand", "providecommand", "DeclareRobustCommand", "DeclareMathOperator"}
)
_DEFS = frozenset({"def", "gdef", "edef", "xdef"})
_DOCUMENTCOMMANDS = frozenset(
    {"NewDocumentCommand", "RenewDocumentCommand", "DeclareDocumentCommand", "ProvideDocumentCommand"}
)
_NEWENVIRONMENTS = frozenset({"newenvironment", "renewenvironment", "provideenvironment"})
# Redefining these changes layout, not content; expanding them would hide structure from the parser.
PROTECTED = frozenset(
    {
        "begin", "end", "section", "subsection", "subsubsection", "paragraph", "subparagraph", "chapter", "part",
        "caption", "captionof", "label", "ref", "autoref", "cref", "Cref", "eqref", "cite", "citep", "citet",
        "item", "appendix", "input", "include", "multicolumn", "multirow", "hline", "toprule", "midrule",
        "bottomrule", "cline", "cmidrule", "maketitle", "title", "author", "footnote", "par", "\\",
        "tabularnewline", "newline", "arraystretch", "tabcolsep", "includegraphics", "url", "href",
        "subcaption", "subfloat", "textbf", "emph", "textit", "bibliography", "documentclass", "usepackage",
    }
)  # fmt: skip
PROTECTED_ENVIRONMENTS = frozenset(
    {
        "document", "table", "table*", "figure", "figure*", "tabular", "tabular*", "tabularx", "longtable",
        "itemize", "enumerate", "description", "abstract", "equation", "align", "subtable", "thebibliography",
        "center", "minipage", "wraptable", "sidewaystable", "threeparttable", "appendices", "comment",
    }
)  # fmt: skip
# Bodies using these are TeX programming, not text; such macros are left unexpanded.
_PROGRAMMING = frozenset(
    {
        "expandafter", "csname", "futurelet", "afterassignment", "noexpand", "ifx", "ifnum", "ifdim", "let",
        "def", "edef", "gdef", "xdef", "newcommand", "renewcommand", "catcode", "uppercase", "lowercase",
        "IfBooleanTF", "IfNoValueTF", "IfValueTF", "IfNoValueT", "IfValueT", "IfBooleanT", "IfBooleanF",
        "IfNoValueF", "IfValueF", "peek_meaning:NTF", "setcounter", "addtocounter", "stepcounter",
        "refstepcounter", "newcounter", "global", "ifthenelse", "ifdefined", "ifcsname",
    }
)  # fmt: skip


@dataclass
class Macro:
    """A user macro: one entry per argument ("m" mandatory, "o" optional, "s" star) and its body."""

    params: list[tuple[str, list[Token] | None]]
    body: list[Token]
    end_body: list[Token] | None = None
    # \let to a command we do not define: TeX freezes its meaning, so the body is never expanded again.
    is_frozen: bool = False


@dataclass
class MacroTable:
    """Definitions collected while expanding, plus column types from \\newcolumntype."""

    macros: dict[str, Macro] = field(default_factory=dict)
    environments: dict[str, Macro] = field(default_factory=dict)
    column_types: dict[str, tuple[int, list[Token]]] = field(default_factory=dict)
    acronyms: dict[str, tuple[list[Token], list[Token]]] = field(default_factory=dict)  # key: (short, long)


# A body may (re)define commands, e.g. `\renewcommand\arraystretch{0.9}` inside a table-building macro: the
# expander meets the definition again when the body is expanded. Only nested parameters (`##1`) are beyond it.
_DEFINING = frozenset({"def", "gdef", "edef", "xdef", "newcommand", "renewcommand"})


def _is_simple(body: list[Token]) -> bool:
    has_nested_parameters = any(token.kind == PARAM and token.text.startswith("##") for token in body)
    return not any(
        token.kind == CS
        and (
            "@" in token.name or (token.name in _PROGRAMMING and (has_nested_parameters or token.name not in _DEFINING))
        )
        for token in body
    )


# \xspace's exceptions: no space before these characters, groups, spaces or these commands; a space otherwise.
_XSPACE_NO_SPACE_CHARS = frozenset(",.'/?;:!~-)")
_XSPACE_NO_SPACE_KINDS = frozenset({SPACE, BGROUP, EGROUP, PAR, ACTIVE, ALIGN})
_XSPACE_NO_SPACE_COMMANDS = frozenset({" ", "/", "space", "footnote", "footnotemark", "\\", "xspace"})


def _xspace_adds_space(following: Token | None) -> bool:
    """Whether `\\xspace` before this token prints a space, as xspace decides (so `\\Model (ours)` keeps it)."""
    if following is None or following.kind in _XSPACE_NO_SPACE_KINDS:
        return False
    if following.kind == CHAR:
        return following.text[:1] not in _XSPACE_NO_SPACE_CHARS
    return following.kind != CS or following.name not in _XSPACE_NO_SPACE_COMMANDS


def _read_cs_name(stream: TokenStream) -> str | None:
    stream.skip_spaces()
    token = stream.next()
    if token is None:
        return None
    if token.kind == CS:
        return token.name
    if token.kind == BGROUP:
        inner = [item for item in stream.read_until_close() if item.kind != SPACE]
        if len(inner) == 1 and inner[0].kind == CS:
            return inner[0].name
    return None


def _read_count(stream: TokenStream) -> int:
    text = serialize(stream.read_optional() or []).strip()
    return min(9, int(text)) if text.isdecimal() else 0


def _newcommand_params(stream: TokenStream) -> list[tuple[str, list[Token] | None]]:
    count = _read_count(stream)
    default = stream.read_optional() if count else None
    if default is None:
        return [("m", None)] * count
    return [("o", default), *[("m", None)] * (count - 1)]


_XPARSE_ARGUMENTS: dict[str, tuple[str, list[Token] | None]] = {"m": ("m", None), "o": ("o", []), "s": ("s", None)}


def _xparse_params(spec: list[Token]) -> list[tuple[str, list[Token] | None]] | None:
    stream = TokenStream(spec)
    params: list[tuple[str, list[Token] | None]] = []
    while (token := stream.next()) is not None:
        if token.kind == SPACE:
            continue
        if token.kind != CHAR:
            return None
        for position, letter in enumerate(token.text):
            if letter in _XPARSE_ARGUMENTS:
                params.append(_XPARSE_ARGUMENTS[letter])
            elif letter == "O" and position == len(token.text) - 1:  # O{default}
                params.append(("o", stream.read_argument() or []))
            elif letter != "+":  # `+`: the argument may hold paragraphs, which changes nothing here
                return None
    return params


# Acronyms (acronym, glossaries, acro packages): definitions, and which form each use prints. `\\ac` prints the
# short form, as it does on every use after the first; `\\acf` the long form with the short one in brackets.
_ACRONYM_DEFINITIONS = frozenset(
    {"newacronym", "acro", "acrodef", "newacro", "DeclareAcronym", "newglossaryentry", "newabbreviation"}
)
_ACRONYM_USES: dict[str, tuple[str, bool, bool]] = {  # name: (form, plural, capitalised)
    **{name: ("short", False, False) for name in ("ac", "acs", "acsu", "gls", "acrshort", "glsxtrshort", "acused")},
    **{name: ("short", True, False) for name in ("acp", "acsp", "glspl", "acrshortpl")},
    **{name: ("long", False, False) for name in ("acl", "aclu", "acrlong", "glsxtrlong", "glsdesc")},
    **{name: ("long", True, False) for name in ("aclp", "acrlongpl")},
    **{name: ("full", False, False) for name in ("acf", "acfi", "acrfull", "glsxtrfull")},
    **{name: ("full", True, False) for name in ("acfp", "acrfullpl")},
    "Ac": ("short", False, True), "Acs": ("short", False, True), "Gls": ("short", False, True),
    "Acp": ("short", True, True), "Glspl": ("short", True, True), "Acl": ("long", False, True),
    "Aclp": ("long", True, True), "Acf": ("full", False, True), "Acrlong": ("long", False, True),
}  # fmt: skip


def _keyvalues(tokens: list[Token]) -> dict[str, list[Token]]:
    """`short = CNN, long = {convolutional network}` as {key: value tokens}, the braces around a value removed."""
    text, parts, depth, start = serialize(tokens), [], 0, 0
    for position, char in enumerate(text + ","):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    found: dict[str, list[Token]] = {}
    for part in parts:
        key, equals, value = part.partition("=")
        value = value.strip()
        if value.startswith("{") and value.endswith("}"):
            value = value[1:-1]
        if equals:
            found[key.strip()] = tokenize(value)
    return found


class MacroExpander:
    """Consumes definitions and expands uses in one left-to-right pass, as TeX would."""

    def __init__(self, table: MacroTable | None = None) -> None:
        self.table = table or MacroTable()
        self.expansions = 0
        self.warnings: list[str] = []
        self._recursive: dict[str, bool] = {}

    def expand(self, tokens: list[Token]) -> list[Token]:
        """Return the tokens with definitions removed and user macros replaced by their bodies."""
        self._collect_acronyms(tokens)  # an acronym list often comes after the text that uses it
        stream = TokenStream(tokens)
        out: list[Token] = []
        while (token := stream.next()) is not None:
            if token.kind != CS:
                out.append(token)
                continue
            name = token.name
            if name in _NEWCOMMANDS or name in _DOCUMENTCOMMANDS:
                self._define_command(name, stream)
            elif name in _DEFS:
                self._define_def(stream)
            elif name == "let":
                self._define_let(stream)
            elif name in _NEWENVIRONMENTS:
                self._define_environment(stream)
            elif name == "newcolumntype":
                column = serialize(stream.read_argument() or []).strip()
                count = _read_count(stream)
                self.table.column_types[column] = (count, stream.read_argument() or [])
            elif name in ("begin", "end") and self.table.environments:
                if not self._expand_environment(token, stream):
                    out.append(token)
            elif name == "bicaption":  # \bicaption[list entry]{first language}[list entry]{second}
                stream.read_optional()
                first = stream.read_argument() or []
                stream.read_optional()
                second = stream.read_argument() or []
                joined = [*first, Token(CHAR, " / ", token.file), *second] if second else first
                stream.push([Token(CS, "\\caption", token.file), Token(BGROUP, "{"), *joined, Token(EGROUP, "}")])
            elif name in _ACRONYM_DEFINITIONS:
                _read_acronym_definition(name, stream)
            elif name in _ACRONYM_USES and self._expand_acronym(name, stream):
                pass
            elif name == "xspace":
                if _xspace_adds_space(stream.peek()):
                    out.append(Token(SPACE, " ", token.file))
            elif name in self.table.macros and self.expansions < MAX_EXPANSIONS:
                if self.table.macros[name].is_frozen:
                    out.extend(self.table.macros[name].body)
                elif self._is_recursive(name):
                    out.append(token)
                elif self._count():
                    macro = self.table.macros[name]
                    stream.push(substitute(macro.body, self._read_arguments(macro, stream)))
            else:
                out.append(token)
        return out

    def _collect_acronyms(self, tokens: list[Token]) -> None:
        stream = TokenStream(tokens)
        while (token := stream.next()) is not None:
            if token.kind == CS and token.name in _ACRONYM_DEFINITIONS:
                definition = _read_acronym_definition(token.name, stream)
                if definition is not None:
                    self.table.acronyms[definition[0]] = definition[1:]

    def _expand_acronym(self, name: str, stream: TokenStream) -> bool:
        """Push the printed form of an acronym use (`\\acs{cnn}` → CNN); False when the key is unknown."""
        stream.read_star()
        stream.read_optional()
        key_tokens = stream.read_argument() or []
        key = serialize(key_tokens).strip()
        if key not in self.table.acronyms:
            stream.push([Token(BGROUP, "{"), *key_tokens, Token(EGROUP, "}")])
            return False
        form, plural, capitalised = _ACRONYM_USES[name]
        suffix = [Token(CHAR, "s")] if plural else []
        short, long = ([*tokens, *suffix] for tokens in self.table.acronyms[key])
        full = [*long, Token(SPACE, " "), Token(CHAR, "("), *short, Token(CHAR, ")")]
        printed = {"short": short, "long": long, "full": full}[form]
        if capitalised and printed and printed[0].kind == CHAR:
            printed[0] = Token(CHAR, printed[0].text[:1].upper() + printed[0].text[1:], printed[0].file)
        stream.push([Token(BGROUP, "{"), *printed, Token(EGROUP, "}")])
        return True

    def _count(self) -> bool:
        self.expansions += 1
        if self.expansions == MAX_EXPANSIONS:
            self.warnings.append(f"stopped expanding macros after {MAX_EXPANSIONS} expansions (recursive macro?)")
        return self.expansions < MAX_EXPANSIONS

    def _is_recursive(self, name: str) -> bool:
        """Whether a macro reaches itself through the bodies it expands to, so expanding it never ends."""
        if name not in self._recursive:
            seen: set[str] = set()  # the commands reached so far
            pending = [name]
            while pending and name not in seen:
                macro = self.table.macros.get(pending.pop())
                if macro is not None and not macro.is_frozen:
                    called = {token.name for token in macro.body if token.kind == CS} - seen
                    seen |= called
                    pending.extend(called)
            found = self._recursive[name] = name in seen
            if found:
                self.warnings.append(f"stopped expanding macros: \\{name} expands to itself")
        return self._recursive[name]

    def _store(self, name: str, macro: Macro, provide: bool = False) -> None:
        if provide and name in self.table.macros:
            return
        self._recursive.clear()
        if name in PROTECTED or not _is_simple(macro.body):
            self.table.macros.pop(name, None)
            return
        self.table.macros[name] = macro

    def _define_command(self, command: str, stream: TokenStream) -> None:
        """\\newcommand and its kin, or xparse's \\NewDocumentCommand (arguments by specification, not count)."""
        is_xparse = command in _DOCUMENTCOMMANDS
        if not is_xparse:
            stream.read_star()
        name = _read_cs_name(stream)
        params = _xparse_params(stream.read_argument() or []) if is_xparse else _newcommand_params(stream)
        body = stream.read_argument() or []
        if name and params is not None:
            self._store(name, Macro(params, body), provide=command == "providecommand")

    def _define_def(self, stream: TokenStream) -> None:
        stream.skip_spaces()
        target = stream.next()
        parameter_text: list[Token] = []
        while (following := stream.next()) is not None and following.kind != BGROUP:
            parameter_text.append(following)
        body = stream.read_until_close()
        if target is None or target.kind != CS:
            return
        if all(token.kind == PARAM for token in parameter_text):  # delimited parameters are beyond "simple"
            self._store(target.name, Macro([("m", None)] * len(parameter_text), body))

    def _define_let(self, stream: TokenStream) -> None:
        stream.skip_spaces()
        target = stream.next()
        stream.skip_spaces()
        source = stream.next()
        if source is not None and source.kind == CHAR and source.text.startswith("="):
            if len(source.text) > 1:
                stream.push([Token(CHAR, source.text[1:], source.file)])
            stream.skip_spaces()
            source = stream.next()
        if target is None or target.kind != CS or source is None:
            return
        self._recursive.clear()
        if source.kind == CS and source.name in self.table.macros:
            self.table.macros[target.name] = self.table.macros[source.name]
        elif target.name not in PROTECTED:
            self.table.macros[target.name] = Macro([], [source], is_frozen=True)

    def _define_environment(self, stream: TokenStream) -> None:
        stream.read_star()
        name = serialize(stream.read_argument() or []).strip()
        params = _newcommand_params(stream)
        begin = stream.read_argument() or []
        end = stream.read_argument() or []
        if name in PROTECTED_ENVIRONMENTS or not (_is_simple(begin) and _is_simple(end)):
            return
        self.table.environments[name] = Macro(params, begin, end)

    def _read_arguments(self, macro: Macro, stream: TokenStream) -> list[list[Token]]:
        arguments: list[list[Token]] = []
        for kind, default in macro.params:
            if kind == "o":
                optional = stream.read_optional()
                arguments.append(optional if optional is not None else list(default or []))
            elif kind == "s":
                arguments.append([Token(CHAR, "*")] if stream.read_star() else [])
            else:
                arguments.append(stream.read_argument() or [])
        return arguments

    def _expand_environment(self, token: Token, stream: TokenStream) -> bool:
        if getattr(stream.peek(), "kind", None) != BGROUP:
            return False
        stream.next()
        inner = stream.read_until_close()
        name = serialize(inner).strip()
        macro = self.table.environments.get(name)
        if macro is None or not self._count():
            stream.push([Token(BGROUP, "{"), *inner, Token(EGROUP, "}")])
            return False
        if token.is_cs("begin"):
            stream.push(substitute(macro.body, self._read_arguments(macro, stream)))
        else:
            stream.push(list(macro.end_body or []))
        return True


def _read_acronym_definition(name: str, stream: TokenStream) -> tuple[str, list[Token], list[Token]] | None:
    """Consume one definition; (key, short form, long form), or None for a definition without both forms."""
    stream.read_star()
    if name in ("newacronym", "newabbreviation"):  # \\newacronym[options]{key}{short}{long}
        stream.read_optional()
        key, short, long = stream.read_argument(), stream.read_argument(), stream.read_argument()
    elif name in ("DeclareAcronym", "newglossaryentry"):  # {key}{short = …, long = …} / {name = …, description = …}
        key = stream.read_argument()
        values = _keyvalues(stream.read_argument() or [])
        short = values.get("short", values.get("name"))
        long = values.get("long", values.get("description", short))
    else:  # \\acro{key}[short]{long}: the key is the short form unless one is given
        key = stream.read_argument()
        short = stream.read_optional() or key
        long = stream.read_argument()
    if key is None or short is None or long is None:
        return None
    return serialize(key).strip(), short, long


def substitute(body: list[Token], arguments: list[list[Token]]) -> list[Token]:
    """A macro body with `#1`… replaced by the arguments and `##` by `#`."""
    out: list[Token] = []
    for token in body:
        if token.kind == PARAM:
            if token.text == "##":
                out.append(Token(CHAR, "#", token.file))
                continue
            index = int(token.text[1]) - 1
            if 0 <= index < len(arguments):
                out.extend(arguments[index])
            continue
        out.append(token)
    return out
