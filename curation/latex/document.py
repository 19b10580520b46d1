"""Walks a document tree into sections, TeX paragraphs and table floats, then renders them with references."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import cycle, pairwise

from curation.latex.macros import MacroTable
from curation.latex.results import ExtractedParagraph, ExtractedTable, SubTable
from curation.latex.tables import parse_tabular
from curation.latex.text import LIST_ENVS, MATH_ENVS, TABULAR_ENVS, LabelTarget, TextRenderer, env_body
from curation.latex.tokens import CS, PAR, SPACE, Token
from curation.latex.tree import Env, Group, Node, NodeCursor, has_content, to_latex, walk

TABLE_FLOATS = {
    "table": "table", "table*": "table", "wraptable": "wraptable", "wraptable*": "wraptable",
    "sidewaystable": "sidewaystable", "sidewaystable*": "sidewaystable", "SCtable": "sctable",
    "SCtable*": "sctable", "longtable": "longtable", "longtable*": "longtable", "xltabular": "longtable",
    "longtabu": "longtable", "supertabular": "supertabular", "xtabular": "supertabular", "longtblr": "longtable",
    "margintable": "margintable", "fullwidthtable": "table", "tablehere": "table", "stable": "table",
}  # fmt: skip
FIGURE_FLOATS = frozenset(
    {"figure", "figure*", "wrapfigure", "wrapfigure*", "sidewaysfigure", "sidewaysfigure*", "SCfigure",
     "SCfigure*", "marginfigure", "algorithm", "algorithm*", "listing", "listing*", "subfigure"}
)  # fmt: skip
SKIPPED_ENVS = frozenset(
    {"thebibliography", "verbatim", "verbatim*", "lstlisting", "minted", "tikzpicture", "pgfpicture", "comment",
     "filecontents", "filecontents*", "Verbatim", "titlepage", "references", "acks", "textblock", "textblock*"}
)  # fmt: skip
SECTIONING = {"part": 0, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4}
_SUB_ENVS = frozenset({"subtable", "subfloat"})
# Layout commands inside a float and how many of their arguments are settings rather than text a reader sees.
_FLOAT_LAYOUT_ARGUMENTS = {
    "resizebox": 2, "scalebox": 1, "adjustbox": 1, "vspace": 1, "hspace": 1, "setlength": 2, "addtolength": 2,
    "renewcommand": 2, "setcounter": 2, "captionsetup": 1, "rowcolors": 3, "arrayrulecolor": 1, "sisetup": 1,
    "definecolor": 3, "fontsize": 2, "color": 1, "includegraphics": 1, "rule": 2, "centering": 0,
    "raggedright": 0, "raggedleft": 0, "small": 0, "footnotesize": 0, "scriptsize": 0, "tiny": 0, "large": 0,
    "normalsize": 0, "selectfont": 0, "centerline": 0, "hfill": 0, "vfill": 0, "medskip": 0, "bigskip": 0,
    "smallskip": 0, "noindent": 0, "par": 0, "newline": 0, "\\": 0, "tabcolsep": 0, "arraystretch": 0,
}  # fmt: skip
# Commands dropped from the text with their star, optional argument and this many mandatory ones.
_DROPPED_ARGUMENTS = {
    **dict.fromkeys(
        {"bibliography", "bibliographystyle", "author", "date", "affiliation", "institute", "email", "keywords",
         "thanks", "address", "icmltitle", "icmlauthor", "icmlaffiliation", "icmlcorrespondingauthor", "vspace",
         "hspace", "addbibresource", "pagestyle", "thispagestyle", "bibitem", "footnotetext", "caption"}, 1
    ),
    **dict.fromkeys({"setcounter", "addtocounter", "setlength", "addtolength", "newtheorem", "addtocontents"}, 2),
    "addcontentsline": 3,
}  # fmt: skip
# A brace group holding one of these (e.g. `{\small \bibliography{refs}}`) is walked, not rendered as text.
_STRUCTURAL_CS = frozenset(
    {*SECTIONING, "paragraph", "subparagraph", "item", "appendix", "par", "bibliography", "bibliographystyle",
     "printbibliography"}
)  # fmt: skip
_STRUCTURAL_ENVS = frozenset({*TABLE_FLOATS, *FIGURE_FLOATS, *LIST_ENVS})


def _letters(number: int) -> str:
    text = ""
    while number > 0:
        number, remainder = divmod(number - 1, 26)
        text = chr(ord("A") + remainder) + text
    return text


@dataclass
class _Part:
    caption: list[Node] | None
    labels: list[str]
    env: str
    number: str | None = None


@dataclass
class _PendingTable:
    env: Env
    kind: str
    section: str
    in_appendix: bool
    index: int
    number: str | None = None
    caption: list[Node] | None = None
    labels: list[str] = field(default_factory=list)
    parts: list[tuple[Env, int | None]] = field(default_factory=list)
    sub_parts: list[_Part] = field(default_factory=list)
    notes: list[list[Node]] = field(default_factory=list)
    # Text of the float outside subtables seen before each tabular (since the previous one), and after the last.
    text_before_parts: list[list[Node]] = field(default_factory=list)
    loose_text: list[Node] = field(default_factory=list)


class DocumentWalker:
    """First pass: structure and numbering; second pass (`render`): text, tables and links."""

    def __init__(self, macros: MacroTable) -> None:
        self.macros = macros
        self.labels: dict[str, LabelTarget] = {}
        self.warnings: list[str] = []
        # Each paragraph's nodes and where it stands; `render` fills in its text, links and index.
        self.paragraphs: list[tuple[list[Node], ExtractedParagraph]] = []
        self.tables: list[_PendingTable] = []
        self.title_nodes: list[Node] | None = None
        self._buffer: list[Node] = []
        self._run_in_heading_end = 0
        self._section = ""
        self._section_number = ""
        self._counters = [0, 0, 0, 0, 0]
        self._in_appendix = False
        self._table_counter = 0
        self._figure_counter = 0
        self._equation_counter = 0
        self._target = LabelTarget("section", "")

    # -- first pass -------------------------------------------------------------------------------------------
    def visit(self, nodes: list[Node]) -> None:
        """Walk body nodes, collecting paragraphs, floats and labels."""
        cursor = NodeCursor(nodes)
        while (node := cursor.next()) is not None:
            if isinstance(node, Env):
                self._visit_env(node)
            elif isinstance(node, Group):
                if _has_structure(node.children):
                    self.visit(node.children)
                else:
                    self._collect_labels(node.children)
                    self._buffer.append(node)
            elif node.kind == PAR:
                # A run-in \paragraph heading followed by a blank line still opens the next paragraph.
                if len(self._buffer) > self._run_in_heading_end:
                    self.flush()
            elif node.kind == CS:
                self._visit_command(node, cursor)
            else:
                self._buffer.append(node)

    def _visit_command(self, token: Token, cursor: NodeCursor) -> None:
        name = token.name
        if name in SECTIONING:
            starred, _, title = cursor.arguments("*[{")
            self.flush()
            self._start_section(name, starred, title)
        elif name in ("paragraph", "subparagraph"):
            _, _, title = cursor.arguments("*[{")
            self.flush()
            self._buffer.extend([Group(title), Token(SPACE, " ")])
            self._run_in_heading_end = len(self._buffer)
        elif name == "appendix":
            self.flush()
            self._start_appendix()
        elif name == "label":
            label = to_latex(cursor.argument() or []).strip()
            if label:
                self.labels[label] = LabelTarget(
                    self._target.kind, self._target.number, self._target.table_index, self._target.title
                )
        elif name in ("par", "newpage", "clearpage", "cleardoublepage", "maketitle", "tableofcontents"):
            self.flush()
        elif name == "item":
            self.flush()
            marker = cursor.optional()
            if marker:
                self._buffer.extend([Group(marker), Token(SPACE, " ")])
        elif name == "title":
            _, self.title_nodes = cursor.arguments("[{")
        elif name in _DROPPED_ARGUMENTS:
            cursor.arguments("*[" + "{" * _DROPPED_ARGUMENTS[name])
            if name in ("bibliography", "bibitem"):
                self.flush()
        else:
            self._buffer.append(token)

    def _start_section(self, name: str, starred: bool, title: list[Node]) -> None:
        text = TextRenderer(self.labels).render(title)
        level = SECTIONING[name]
        if not starred:
            self._counters[level] += 1
            for deeper in range(level + 1, len(self._counters)):
                self._counters[deeper] = 0
            self._section_number = self._format_number(level)
            self._target = LabelTarget(
                "appendix" if self._in_appendix and level == 2 else "section", self._section_number, title=text
            )
        else:
            self._section_number = ""
            if text.lower().startswith(("appendix", "appendices", "supplementary")) and level <= 2:
                self._in_appendix = True
        self._collect_labels(title)  # `\subsection{Data \label{sec:data}}` names this section, as one after it does
        self._section = text

    def _format_number(self, level: int) -> str:
        start = 1 if self._counters[1] else 2  # numbers start at the chapter in a book, at the section otherwise
        parts = [str(value) for value in self._counters[start : level + 1]]
        if parts and self._in_appendix:
            parts[0] = _letters(self._counters[start])
        return ".".join(parts)

    def _start_appendix(self) -> None:
        self._in_appendix = True
        level = 1 if self._counters[1] else 2
        for depth in range(level, len(self._counters)):
            self._counters[depth] = 0

    def _visit_env(self, env: Env) -> None:
        name = env.name
        if name in MATH_ENVS:  # part of the paragraph
            self._collect_labels(env.children, kind="equation")
            self._buffer.append(env)
            return
        self.flush()
        if name in TABLE_FLOATS:
            self._register_table(env, TABLE_FLOATS[name])
        elif name in SKIPPED_ENVS or name in TABULAR_ENVS:  # a tabular outside a float is no table of the paper
            return
        elif name in ("abstract", "appendices", "appendix", "subappendices"):
            saved = (self._section, self._section_number)
            if name == "abstract":
                self._section, self._section_number = "Abstract", ""
            else:
                self._start_appendix()
            self.visit(env.children)
            self.flush()
            if name == "abstract":
                self._section, self._section_number = saved
        elif "table" in _braced_arguments(env.children, "captionof"):  # a figure or minipage holding a table
            self._register_table(env, "captionof")
        elif name in FIGURE_FLOATS:
            self._register_figure(env)
        else:
            self.visit(env_body(env))
            self.flush()

    def _collect_labels(self, nodes: list[Node], kind: str | None = None) -> None:
        for label in _labels_in(nodes):
            if kind == "equation":
                self._equation_counter += 1
                self.labels[label] = LabelTarget("equation", str(self._equation_counter))
            else:
                self.labels[label] = LabelTarget(self._target.kind, self._target.number, title=self._target.title)

    def flush(self) -> None:
        nodes = self._buffer
        self._buffer = []
        self._run_in_heading_end = 0
        if not has_content(nodes):
            return
        first_file = next((node.file for node in nodes if isinstance(node, Token) and node.file), "")
        place = ExtractedParagraph(
            index=0, text="", section=self._section, section_number=self._section_number,
            in_appendix=self._in_appendix, file=first_file,
        )  # fmt: skip
        self.paragraphs.append((nodes, place))

    def _register_figure(self, env: Env) -> None:
        found: list[tuple[str, int | None]] = []
        has_caption = self._scan_figure(env.children, None, found, [0])
        if has_caption:
            self._figure_counter += 1
        number = str(self._figure_counter if has_caption else self._figure_counter + 1)
        for label, sub in found:
            # A subfigure's label reads as the figure number plus its letter ("Figure 3b").
            suffix = chr(ord("a") + (sub - 1) % 26) if sub else ""
            self.labels[label] = LabelTarget("figure", number + suffix)

    def _scan_figure(
        self, nodes: list[Node], sub: int | None, found: list[tuple[str, int | None]], subs: list[int]
    ) -> bool:
        """Collect labels with the subfigure they sit in; True when the figure itself has a caption."""
        has_caption = False
        cursor = NodeCursor(nodes)
        while (node := cursor.next()) is not None:
            if isinstance(node, Env):
                if node.name in ("subfigure", "subfigure*") and sub is None:
                    subs[0] += 1
                    self._scan_figure(node.children, subs[0], found, subs)
                else:
                    has_caption |= self._scan_figure(node.children, sub, found, subs)
            elif isinstance(node, Group):
                has_caption |= self._scan_figure(node.children, sub, found, subs)
            elif node.kind == CS and node.name in ("subfloat", "subcaptionbox", "sidesubfloat") and sub is None:
                subs[0] += 1
                caption = cursor.optional() if node.name != "subcaptionbox" else cursor.argument()
                self._scan_figure([*(caption or []), *(cursor.argument() or [])], subs[0], found, subs)
            elif node.kind == CS and node.name in ("caption", "captionof"):
                if node.name == "captionof":
                    cursor.arguments("*{")
                _, _, caption = cursor.arguments("*[{")
                has_caption |= sub is None
                found.extend((label, sub) for label in _labels_in(caption))
            elif node.kind == CS and node.name == "label":
                label = to_latex(cursor.argument() or []).strip()
                if label:
                    found.append((label, sub))
        return has_caption

    def _register_table(self, env: Env, kind: str) -> None:
        pending = _PendingTable(env, kind, self._section, self._in_appendix, len(self.tables))
        self.tables.append(pending)
        if env.name in TABULAR_ENVS:
            pending.parts.append((env, None))
            self._scan_longtable_caption(env, pending)
        else:
            self._scan_float(env.children, pending, None)
        for label in pending.labels:  # a subtable's labels are among them, and named below
            self.labels[label] = LabelTarget("table", pending.number or "??", pending.index)
        letters = cycle("abcdefghijklmnopqrstuvwxyz")
        for part in pending.sub_parts:
            # A subtable reads as the table's number and a letter; a minipage with its own \\caption is numbered.
            kind = "subtable" if part.number is None else "table"
            part.number = part.number or f"{pending.number or '??'}{next(letters)}"
            for label in part.labels:
                self.labels[label] = LabelTarget(kind, part.number, pending.index)
        if not pending.parts:
            name = pending.labels[0] if pending.labels else "no label"
            self.warnings.append(f"table {pending.index + 1} ({name}) has no tabular (an image?); it has no rows")

    def _scan_float(self, nodes: list[Node], pending: _PendingTable, sub: int | None) -> None:
        cursor = NodeCursor(nodes)
        while (node := cursor.next()) is not None:
            if isinstance(node, Env):
                if node.name in TABULAR_ENVS:
                    pending.parts.append((node, sub))
                    pending.text_before_parts.append(pending.loose_text)
                    pending.loose_text = []
                    self._scan_longtable_caption(node, pending)
                elif sub is None and (node.name in _SUB_ENVS or (node.name == "minipage" and _has_caption(node))):
                    pending.sub_parts.append(_Part(None, [], node.name))
                    self._scan_float(node.children, pending, len(pending.sub_parts) - 1)
                elif node.name in ("tablenotes", "TableNotes"):
                    pending.notes.extend(_items(env_body(node)))
                elif node.name not in FIGURE_FLOATS:
                    self._scan_float(env_body(node), pending, sub)
            elif isinstance(node, Group):
                if sub is None and not _holds_float_parts(node.children):
                    pending.loose_text.append(node)
                else:
                    self._scan_float(node.children, pending, sub)
            elif node.kind == CS and node.name in ("caption", "captionof", "subcaption"):
                if node.name == "captionof":
                    cursor.arguments("*{")
                starred, _, caption = cursor.arguments("*[{")
                self._add_labels(pending, sub, _labels_in(caption))
                part = pending.sub_parts[sub] if sub is not None else None
                if part is not None and part.caption is None:
                    part.caption = caption
                    # A \caption in a minipage is a separately numbered table sharing the float.
                    if part.env == "minipage" and node.name != "subcaption":
                        if pending.caption is None:
                            pending.caption = caption
                        self._number_caption(pending, starred)
                        part.number = str(self._table_counter)
                    continue
                if pending.caption is None:
                    pending.caption = caption
                    self._number_caption(pending, starred)
                elif not starred:
                    self._table_counter += 1
            elif node.kind == CS and node.name in ("subfloat", "subcaptionbox", "sidesubfloat"):
                caption = cursor.optional() if node.name != "subcaptionbox" else cursor.argument()
                pending.sub_parts.append(_Part(caption or [], [], node.name))
                self._scan_float(cursor.argument() or [], pending, len(pending.sub_parts) - 1)
            elif node.kind == CS and node.name == "label":
                self._add_labels(pending, sub, [to_latex(cursor.argument() or []).strip()])
            elif node.kind == CS and node.name.rstrip("*") in _FLOAT_LAYOUT_ARGUMENTS:
                cursor.arguments("*[" + "[{" * _FLOAT_LAYOUT_ARGUMENTS[node.name.rstrip("*")])
            elif sub is None:
                pending.loose_text.append(node)

    def _add_labels(self, pending: _PendingTable, sub: int | None, labels: list[str]) -> None:
        for label in labels:
            if label:
                pending.labels.append(label)
                if sub is not None:
                    pending.sub_parts[sub].labels.append(label)

    def _number_caption(self, pending: _PendingTable, starred: bool) -> None:
        if not starred:
            self._table_counter += 1
            pending.number = pending.number or str(self._table_counter)

    def _scan_longtable_caption(self, env: Env, pending: _PendingTable) -> None:
        if not env.name.startswith(("longtable", "xltabular", "longtabu", "longtblr")):
            return
        cursor = NodeCursor(env.children)
        while (node := cursor.next()) is not None:
            if isinstance(node, Token) and node.is_cs("caption") and pending.caption is None:
                starred, _, pending.caption = cursor.arguments("*[{")
                pending.labels.extend(_labels_in(pending.caption))
                self._number_caption(pending, starred)
            elif isinstance(node, Token) and node.is_cs("label"):
                label = to_latex(cursor.argument() or []).strip()
                if label:
                    pending.labels.append(label)

    # -- second pass ------------------------------------------------------------------------------------------
    def render(self) -> tuple[list[ExtractedTable], list[ExtractedParagraph]]:
        """Turn the collected structure into tables and paragraphs with resolved references."""
        renderer = TextRenderer(self.labels)
        tables = [self._render_table(pending, renderer) for pending in self.tables]
        paragraphs: list[ExtractedParagraph] = []
        table_labels = {label for label, target in self.labels.items() if target.table_index is not None}
        for nodes, place in self.paragraphs:
            references: list[str] = []
            text = renderer.render(nodes, references)
            if not text:
                continue
            references = list(dict.fromkeys(references))
            mentions = [label for label in references if label in table_labels]
            linked = list(dict.fromkeys(self.labels[label].table_index for label in mentions))
            paragraphs.append(
                replace(
                    place, index=len(paragraphs), text=text, mentions=mentions, tables=linked, references=references
                )
            )
        return tables, paragraphs

    def _render_table(self, pending: _PendingTable, renderer: TextRenderer) -> ExtractedTable:
        caption_references: list[str] = []
        caption = renderer.render(pending.caption or [], caption_references) if pending.caption else ""
        table = ExtractedTable(
            index=pending.index, label=pending.labels[0] if pending.labels else None, caption=caption, rows=[],
            env=pending.env.name, kind=pending.kind, file=pending.env.file, in_appendix=pending.in_appendix,
            number=pending.number, labels=list(pending.labels), section=pending.section,
            raw=to_latex([pending.env]), caption_references=caption_references,
        )  # fmt: skip
        in_tables = (label for label in pending.labels if label in self.labels and self.labels[label].kind == "table")
        table.label = next(in_tables, table.label)
        sub_rows: dict[int | None, list[int]] = {}
        sub_headers: dict[int | None, int] = {}
        # Several tabulars side by side or stacked, outside subtables: each is its own grid (one SubTable each).
        separate = len(pending.parts) > 1 and not pending.sub_parts
        foot_notes: list[str] = []
        for part_index, (env, sub) in enumerate(pending.parts):
            try:
                parsed = parse_tabular(env, renderer, self.macros.column_types)
            except Exception as error:  # best effort: one broken tabular must not lose the paper
                self.warnings.append(f"table {pending.index + 1}: could not parse {env.name}: {error!r}")
                continue
            offset = len(table.rows)
            for span in parsed.spans:
                span.row += offset
                span.top += offset
            table.rows.extend(parsed.rows)
            table.spans.extend(parsed.spans)
            table.grid.extend(parsed.grid)
            table.cell_references.extend(parsed.references)
            foot_notes.extend(parsed.notes)
            sub_rows.setdefault(sub, []).extend(range(offset, offset + len(parsed.rows)))
            if parsed.rows and not offset:
                table.header_rows = parsed.header_rows
            if parsed.rows:
                sub_headers.setdefault(sub, parsed.header_rows)
            if separate:
                table.subtables.append(
                    SubTable(
                        label=None,
                        caption=renderer.render(pending.text_before_parts[part_index], caption_references),
                        number=None,
                        first_row=offset,
                        row_count=len(parsed.rows),
                        header_rows=parsed.header_rows,
                    )
                )
        width = max((len(row) for row in table.grid), default=0)
        table.grid = [row + [""] * (width - len(row)) for row in table.grid]
        table.notes = [renderer.render(note, caption_references) for note in pending.notes]
        # Text the float prints under its last tabular (a `Notes:` paragraph or minipage) is a note too.
        below = renderer.render(pending.loose_text, caption_references) if pending.parts else ""
        table.notes = [note for note in [*table.notes, *foot_notes, below] if note]
        for sub, part in enumerate(pending.sub_parts):
            rows = sub_rows.get(sub, [])
            table.subtables.append(
                SubTable(
                    label=part.labels[0] if part.labels else None,
                    caption=renderer.render(part.caption or [], caption_references),
                    number=part.number,
                    first_row=rows[0] if rows else len(table.rows),
                    row_count=len(rows),
                    header_rows=sub_headers.get(sub, 0),
                )
            )
        return table


def _has_structure(nodes: list[Node]) -> bool:
    return any(
        (isinstance(node, Token) and (node.kind == PAR or node.name in _STRUCTURAL_CS))
        or (isinstance(node, Env) and node.name in _STRUCTURAL_ENVS)
        for node in walk(nodes)
    )


def _items(nodes: list[Node]) -> list[list[Node]]:
    """A tablenotes list as one note per `\\item`, each with its marker (`\\item[a] Text` → `a Text`)."""
    items: list[list[Node]] = [[]]
    cursor = NodeCursor(nodes)
    while (node := cursor.next()) is not None:
        if isinstance(node, Token) and node.is_cs("item"):
            marker = cursor.optional()
            items.append([Group(marker), Token(SPACE, " ")] if marker else [])
        else:
            items[-1].append(node)
    return [item for item in items if has_content(item)]


def _holds_float_parts(nodes: list[Node]) -> bool:
    """Whether a group inside a float holds an environment, a caption or a label (so it is walked, not text)."""
    return any(
        isinstance(node, Env) or (isinstance(node, Token) and node.is_cs("caption", "captionof", "label", "subfloat"))
        for node in walk(nodes)
    )


def _braced_arguments(nodes: list[Node], name: str) -> list[str]:
    """The braced first arguments of a command, also inside other markup (`\\caption{\\label{tab:x} Text}`)."""
    return [
        to_latex(following.children).strip()
        for node, following in pairwise(walk(nodes))
        if isinstance(node, Token) and node.is_cs(name) and isinstance(following, Group)
    ]


def _labels_in(nodes: list[Node]) -> list[str]:
    return _braced_arguments(nodes, "label")


def _has_caption(env: Env) -> bool:
    return any(isinstance(node, Token) and node.is_cs("caption") for node in walk(env.children))
