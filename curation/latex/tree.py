"""A tree of TeX groups and environments built from tokens, tolerant of unbalanced input."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from curation.latex.tokens import BGROUP, CHAR, CS, EGROUP, PAR, SPACE, Token, serialize


@dataclass
class Group:
    """A braced group."""

    children: list[Node] = field(default_factory=list)


@dataclass
class Env:
    """A \\begin{name} … \\end{name} environment; arguments stay at the start of `children`."""

    name: str
    children: list[Node] = field(default_factory=list)
    file: str = ""


Node = Token | Group | Env


def env_name(tokens: list[Token], index: int) -> tuple[str, int] | None:
    """The braced name after `\\begin`/`\\end` at `index` and the index after it, or None."""
    while index < len(tokens) and tokens[index].kind == SPACE:
        index += 1
    if index >= len(tokens) or tokens[index].kind != BGROUP:
        return None
    parts: list[str] = []
    for end in range(index + 1, min(index + 8, len(tokens))):
        token = tokens[end]
        if token.kind == EGROUP:
            return "".join(parts).strip(), end + 1
        if token.kind not in (CHAR, SPACE):
            return None
        parts.append(token.text)
    return None


def build_tree(tokens: list[Token], warnings: list[str]) -> list[Node]:
    """Nest tokens into groups and environments; stray closers are dropped and reported once each."""
    root: list[Node] = []
    stack: list[tuple[Group | Env | None, list[Node]]] = [(None, root)]
    problems: Counter[str] = Counter()
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind == BGROUP:
            group = Group()
            stack[-1][1].append(group)
            stack.append((group, group.children))
        elif token.kind == EGROUP:
            if isinstance(stack[-1][0], Group):
                stack.pop()
            else:
                problems[f"unmatched '}}' in {token.file or 'input'}"] += 1
        elif token.kind == CS and token.name in ("begin", "end"):
            found = env_name(tokens, index + 1)
            if found is None:
                stack[-1][1].append(token)
                index += 1
                continue
            name, after = found
            if token.name == "begin":
                env = Env(name, file=token.file)
                stack[-1][1].append(env)
                stack.append((env, env.children))
            else:
                open_names = [item[0].name for item in stack if isinstance(item[0], Env)]
                if name in open_names:
                    while not (isinstance(stack[-1][0], Env) and stack[-1][0].name == name):
                        if isinstance(stack[-1][0], Env):
                            problems[f"\\begin{{{stack[-1][0].name}}} closed by \\end{{{name}}}"] += 1
                        stack.pop()
                    stack.pop()
                else:
                    problems[f"\\end{{{name}}} without \\begin{{{name}}}"] += 1
            index = after
            continue
        else:
            stack[-1][1].append(token)
        index += 1
    for owner, _ in stack[1:]:
        if isinstance(owner, Env):
            problems[f"\\begin{{{owner.name}}} never closed"] += 1
    for text, count in problems.items():
        warnings.append(text if count == 1 else f"{text} ({count} times)")
    return root


def flatten(nodes: list[Node]) -> list[Token]:
    """The tokens of a node list, with braces and \\begin/\\end put back."""
    out: list[Token] = []
    for node in nodes:
        if isinstance(node, Group):
            out.append(Token(BGROUP, "{"))
            out.extend(flatten(node.children))
            out.append(Token(EGROUP, "}"))
        elif isinstance(node, Env):
            name = [Token(BGROUP, "{"), Token(CHAR, node.name), Token(EGROUP, "}")]
            out.extend([Token(CS, "\\begin"), *name, *flatten(node.children), Token(CS, "\\end"), *name])
        else:
            out.append(node)
    return out


def to_latex(nodes: list[Node]) -> str:
    return serialize(flatten(nodes))


def has_content(nodes: list[Node]) -> bool:
    """Whether anything but spaces and paragraph breaks is among the nodes."""
    return any(not (isinstance(node, Token) and node.kind in (SPACE, PAR)) for node in nodes)


def walk(nodes: list[Node]) -> Iterator[Node]:
    for node in nodes:
        yield node
        if isinstance(node, (Group, Env)):
            yield from walk(node.children)


class NodeCursor:
    """Reads macro arguments from a sibling list: stars, [optional] and {mandatory} arguments."""

    def __init__(self, nodes: list[Node], position: int = 0) -> None:
        self.nodes = list(nodes)
        self.position = position

    def at_end(self) -> bool:
        return self.position >= len(self.nodes)

    def peek(self) -> Node | None:
        return None if self.at_end() else self.nodes[self.position]

    def next(self) -> Node | None:
        node = self.peek()
        if node is not None:
            self.position += 1
        return node

    def take_chars(self, count: int) -> None:
        """Consume the first `count` characters of the character token at the cursor."""
        node = self.nodes[self.position]
        assert isinstance(node, Token)
        if count >= len(node.text):
            self.position += 1
        else:
            self.nodes[self.position] = Token(CHAR, node.text[count:], node.file)

    def skip_spaces(self) -> None:
        while getattr(self.peek(), "kind", None) == SPACE:
            self.position += 1

    def star(self) -> bool:
        """Consume a directly following `*`."""
        node = self.peek()
        if not (isinstance(node, Token) and node.kind == CHAR and node.text.startswith("*")):
            return False
        self.take_chars(1)
        return True

    def optional(self, opening: str = "[", closing: str = "]") -> list[Node] | None:
        """A bracketed argument if one follows (spaces allowed before it), else None."""
        start = self.position
        self.skip_spaces()
        node = self.peek()
        if not (isinstance(node, Token) and node.kind == CHAR and node.text.startswith(opening)):
            self.position = start
            return None
        self.take_chars(1)
        collected: list[Node] = []
        while (node := self.peek()) is not None:
            if isinstance(node, Token) and node.kind == CHAR and closing in node.text:
                before = node.text.partition(closing)[0]
                if before:
                    collected.append(Token(CHAR, before, node.file))
                self.take_chars(len(before) + 1)
                return collected
            collected.append(node)
            self.position += 1
        return collected

    def arguments(self, spec: str) -> list:
        """Read arguments as `spec` lists them: `*` a star (a bool), `[` an optional argument (None when absent),
        `{` a mandatory one ([] when absent)."""
        read = {"*": self.star, "[": self.optional, "{": lambda: self.argument() or []}
        return [read[kind]() for kind in spec]

    def argument(self) -> list[Node] | None:
        """A mandatory argument: a group's children or a single node."""
        self.skip_spaces()
        node = self.next()
        if node is None:
            return None
        if isinstance(node, Group):
            return node.children
        if isinstance(node, Token) and node.kind == CHAR and len(node.text) > 1:
            self.position -= 1
            self.take_chars(1)
            return [Token(CHAR, node.text[0], node.file)]
        return [node]
