"""A small TeX tokenizer: control sequences, groups, text runs, with comments dropped the way TeX drops them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

CS = "cs"
BGROUP = "bgroup"
EGROUP = "egroup"
CHAR = "char"
SPACE = "space"
PAR = "par"
MATH = "math"
ALIGN = "align"
PARAM = "param"
ACTIVE = "active"
VERBATIM = "verbatim"

_WHITESPACE = re.compile(r"[ \t\r\n]*")
_TEXT_RUN = re.compile(r"[^\\{}%$&#~\[\] \t\r\n]*")  # up to the next character with a meaning of its own
# Characters that are a token of their own (brackets too, so that optional arguments are easy to find).
_ONE_CHARACTER = {"{": BGROUP, "}": EGROUP, "&": ALIGN, "~": ACTIVE, "[": CHAR, "]": CHAR}
# Environments whose body TeX reads verbatim; "comment" bodies are dropped entirely.
VERBATIM_ENVS = frozenset(
    {"verbatim", "verbatim*", "lstlisting", "minted", "Verbatim", "BVerbatim", "LVerbatim", "alltt", "comment"}
)


@dataclass(frozen=True, slots=True)
class Token:
    """One TeX token; `text` is what it looked like in the source, `file` where it came from."""

    kind: str
    text: str
    file: str = ""

    @property
    def name(self) -> str:
        """The control sequence name without the backslash (empty for other kinds)."""
        return self.text[1:] if self.kind == CS else ""

    def is_cs(self, *names: str) -> bool:
        return self.kind == CS and self.text[1:] in names


def _is_letter(char: str) -> bool:
    return char.isalpha() or char == "@"


def tokenize(source: str, file: str = "") -> list[Token]:
    """Split LaTeX source into tokens, dropping % comments and comment environments."""
    tokens: list[Token] = []
    i = 0
    n = len(source)
    after_comment = False
    while i < n:
        char = source[i]
        if char == "%":
            end = source.find("\n", i)
            i = n if end < 0 else end + 1
            after_comment = True
            continue
        if char in " \t\r\n":
            j = _WHITESPACE.match(source, i).end()
            newlines = source.count("\n", i, j)
            # After a comment the line end is already eaten, so one more newline means a blank line.
            if newlines >= 2 or (after_comment and newlines >= 1):
                tokens.append(Token(PAR, "\n\n", file))
            elif not after_comment and not (tokens and tokens[-1].kind in (SPACE, PAR)):
                tokens.append(Token(SPACE, " ", file))
            after_comment = False
            i = j
            continue
        after_comment = False
        if char == "\\":
            if i + 1 >= n:
                tokens.append(Token(CHAR, "\\", file))
                break
            if _is_letter(source[i + 1]):
                j = i + 1
                while j < n and _is_letter(source[j]):
                    j += 1
                name = source[i + 1 : j]
                tokens.append(Token(CS, "\\" + name, file))
                i = _skip_spaces_after_word(source, j)
                if name == "verb" and i < n and not source[i].isalpha():
                    tokens.pop()
                    i = _read_verb(source, i, tokens, file)
                elif name == "begin":
                    i = _maybe_verbatim_env(source, i, tokens, file)
                continue
            tokens.append(Token(CS, source[i : i + 2], file))
            i += 2
            continue
        if char in _ONE_CHARACTER:
            tokens.append(Token(_ONE_CHARACTER[char], char, file))
        elif char == "$":
            width = 2 if source.startswith("$$", i) else 1
            tokens.append(Token(MATH, source[i : i + width], file))
            i += width
            continue
        elif char == "#":
            if i + 1 < n and (source[i + 1].isdigit() or source[i + 1] == "#"):
                tokens.append(Token(PARAM, source[i : i + 2], file))
                i += 2
                continue
            tokens.append(Token(CHAR, "#", file))
        else:
            j = _TEXT_RUN.match(source, i).end()
            tokens.append(Token(CHAR, source[i:j], file))
            i = j
            continue
        i += 1
    return tokens


def _skip_spaces_after_word(source: str, i: int) -> int:
    """TeX skips spaces after a control word, but a blank line still ends the paragraph."""
    j = _WHITESPACE.match(source, i).end()
    return i if source.count("\n", i, j) >= 2 else j


def _read_verb(source: str, i: int, tokens: list[Token], file: str) -> int:
    star = source[i] == "*"
    start = i + 1 if star else i
    if start >= len(source):
        return start
    delimiter = source[start]
    end = source.find(delimiter, start + 1)
    newline = source.find("\n", start + 1)
    if end < 0 or (0 <= newline < end):
        return start
    tokens.append(Token(VERBATIM, source[start + 1 : end], file))
    return end + 1


def _maybe_verbatim_env(source: str, i: int, tokens: list[Token], file: str) -> int:
    if not source.startswith("{", i):
        return i
    close = source.find("}", i)
    if close < 0:
        return i
    name = source[i + 1 : close]
    if name not in VERBATIM_ENVS:
        return i
    end_marker = "\\end{" + name + "}"
    end = source.find(end_marker, close)
    body_end = len(source) if end < 0 else end
    if name == "comment":
        tokens.pop()  # the \begin already emitted
        return body_end + len(end_marker) if end >= 0 else len(source)
    braced_name = [Token(BGROUP, "{", file), Token(CHAR, name, file), Token(EGROUP, "}", file)]
    tokens.extend(
        [*braced_name, Token(VERBATIM, source[close + 1 : body_end], file), Token(CS, "\\end", file), *braced_name]
    )
    return body_end + len(end_marker) if end >= 0 else len(source)


def serialize(tokens: list[Token]) -> str:
    """Turn tokens back into LaTeX source, keeping control words apart from following letters."""
    parts: list[str] = []
    previous: Token | None = None
    for token in tokens:
        text = escape(token.text) if token.kind == VERBATIM else token.text
        if previous is not None and previous.kind == CS and _is_letter(previous.text[1:2]) and _is_letter(text[:1]):
            parts.append(" ")
        parts.append(text)
        previous = token
    return "".join(parts)


_ESCAPES = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "%": r"\%", "$": r"\$", "&": r"\&", "#": r"\#", "_": r"\_",
    "`": r"\textasciigrave{}",
}  # fmt: skip


def escape(text: str) -> str:
    """Escape literal text so that a LaTeX reader shows it unchanged."""
    return "".join(_ESCAPES.get(char, char) for char in text)


class TokenStream:
    """A token list read from the front, onto which expansions can be pushed back."""

    def __init__(self, tokens: list[Token]) -> None:
        self._stack = list(reversed(tokens))

    def next(self) -> Token | None:
        return self._stack.pop() if self._stack else None

    def peek(self) -> Token | None:
        return self._stack[-1] if self._stack else None

    def push(self, tokens: list[Token]) -> None:
        """Put tokens back in front of the stream (they are read next, in order)."""
        self._stack.extend(reversed(tokens))

    def skip_spaces(self) -> None:
        """Drop spaces (not paragraph breaks) in front of the stream."""
        while self._stack and self._stack[-1].kind == SPACE:
            self._stack.pop()

    def read_star(self) -> bool:
        """Consume a `*` directly after a command, if there is one."""
        token = self.peek()
        if token is None or token.kind != CHAR or not token.text.startswith("*"):
            return False
        self._stack.pop()
        if len(token.text) > 1:
            self._stack.append(Token(CHAR, token.text[1:], token.file))
        return True

    def read_argument(self) -> list[Token] | None:
        """Read a mandatory argument: a braced group's content, or one token."""
        self.skip_spaces()
        token = self.next()
        if token is None:
            return None
        if token.kind == BGROUP:
            return self.read_until_close()
        if token.kind == CHAR and len(token.text) > 1:
            self._stack.append(Token(CHAR, token.text[1:], token.file))
            return [Token(CHAR, token.text[0], token.file)]
        return [token]

    def read_until_close(self) -> list[Token]:
        """Read up to the group close that balances an already consumed `{`."""
        return self._read_until(lambda token: token.kind == EGROUP)

    def read_optional(self) -> list[Token] | None:
        """Read a bracketed optional argument if one follows, else None."""
        saved = len(self._stack)
        self.skip_spaces()
        token = self.peek()
        # `[` and `]` are always tokens of their own (see `_ONE_CHARACTER`), never part of a longer text run.
        if token is None or token.kind != CHAR or token.text != "[":
            self._stack.extend([Token(SPACE, " ")] * (saved - len(self._stack)))  # the skipped spaces put back
            return None
        self._stack.pop()
        return self._read_until(lambda token: token.kind == CHAR and token.text == "]")

    def _read_until(self, is_closing: Callable[[Token], bool]) -> list[Token]:
        """Read up to the first closing token outside braces (dropped), or to the end."""
        depth = 0
        out: list[Token] = []
        while self._stack:
            token = self._stack.pop()
            if depth == 0 and is_closing(token):
                return out
            depth += token.kind == BGROUP
            depth -= token.kind == EGROUP
            out.append(token)
        return out
