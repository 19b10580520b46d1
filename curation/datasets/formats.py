"""Pure readers for TAT-QA, TAT-DQA, FinQA and SciTaT files: plain records out, or an error naming the JSON path.

No Django here: `parse_dataset` validates the whole file first, so a malformed file is refused before anything
is written, with the path of the first bad value (e.g. `[12].questions[3].answer_type`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from curation.answer_types import ANSWER_SOURCES, ANSWER_TYPES, SCALES

# The toolkit owns the short-form rule so the importers, the workspace and the scorers share it.
from curation.toolkit.answer_form import is_short_form

FORMATS = ("tatqa", "tatdqa", "finqa", "scitat")

ATTRIBUTION = {
    "tatqa": (
        'TAT-QA (Zhu et al., "TAT-QA: A Question Answering Benchmark on a Hybrid of Tabular and Textual Content '
        'in Finance", ACL-IJCNLP 2021), https://github.com/NExTplusplus/TAT-QA, licensed CC BY 4.0 '
        "(https://creativecommons.org/licenses/by/4.0/)."
    ),
    "tatdqa": (
        'TAT-DQA (Zhu et al., "Towards Complex Document Understanding By Discrete Reasoning", ACM MM 2022), '
        "https://github.com/NExTplusplus/TAT-DQA, licensed CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/)."
    ),
    "finqa": (
        'FinQA (Chen et al., "FinQA: A Dataset of Numerical Reasoning over Financial Data", EMNLP 2021), '
        "https://github.com/czyssrs/FinQA, MIT License, Copyright (c) 2021 Zhiyu Chen."
    ),
    "scitat": (
        'SciTaT (Zhang et al., "SciTaT: A Question Answering Benchmark for Scientific Tables and Text '
        'Covering Diverse Reasoning Types"), https://github.com/zhxlia/SciTaT.'
    ),
}
LICENSE = {"tatqa": "CC-BY-4.0", "tatdqa": "CC-BY-4.0", "finqa": "MIT", "scitat": ""}
NO_CONTEXT_NOTE = (
    "TAT-DQA question files carry no context (the PDF pages and their OCR come only with the official release): "
    "these instances are questions with answers only, without tables or paragraphs."
)


class DatasetFormatError(ValueError):
    """A malformed dataset file; `path` is the JSON path of the first bad value."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path or '(top level)'}: {message}")
        self.path = path


@dataclass
class ParsedTable:
    cells: list[list[str]]
    key: str = ""
    label: str = ""
    caption: str = ""
    header_rows: int | None = None  # SciTaT files written by this app say it; None: counted on ingestion


@dataclass
class ParsedParagraph:
    order: int
    text: str
    section: str = ""
    key: str = ""


@dataclass
class ParsedContext:
    """A paper-like unit (TAT-QA document, TAT-DQA page, FinQA page, SciTaT paragraph with its tables) and its native
    data; `title` is its paper's."""

    key: str
    title: str
    kind: str  # "long": the whole document; "short": one paragraph and its tables; "none": a TAT-DQA page
    tables: list[ParsedTable]
    paragraphs: list[ParsedParagraph]
    native: dict[str, Any] = field(default_factory=dict)
    paper_key: str = ""  # the paper several contexts share (SciTaT); else the context is its own paper


@dataclass
class ParsedQuestion:
    key: str
    context_key: str  # the ParsedContext asked on
    fields: dict[str, Any]
    relevant_table_indexes: list[int]
    native: dict[str, Any]
    reasoning_type: str = ""
    is_draft: bool = False  # no answer in the file: imported as a draft for annotators, not as validated gold


@dataclass
class ParsedDataset:
    format: str
    contexts: list[ParsedContext]
    questions: list[ParsedQuestion]
    notes: list[str] = field(default_factory=list)


def source_text(value: Any) -> str:
    """A source record as JSON text: a string keeps the file's key order through JSONB, which reorders keys."""
    return json.dumps(value, ensure_ascii=False)


_JSON_KINDS = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _kind(value: Any) -> str:
    """A value's kind as JSON names it ("object", not Python's "dict")."""
    return "null" if value is None else _JSON_KINDS.get(type(value), type(value).__name__)


def _get(obj: dict[str, Any], key: str, path: str, types: tuple[type, ...], *, required: bool = True) -> Any:
    """`obj[key]` if present with one of `types`; a missing or mistyped value raises with its path."""
    where = f"{path}.{key}" if path else key
    if key not in obj:
        if required:
            raise DatasetFormatError(where, "missing")
        return None
    value = obj[key]
    if types and (not isinstance(value, types) or (isinstance(value, bool) and bool not in types)):
        names = " or ".join(dict.fromkeys(_JSON_KINDS.get(t, t.__name__) for t in types))
        raise DatasetFormatError(where, f"expected {names}, got {_kind(value)} {json.dumps(value)[:60]}")
    return value


def _list_of_str(value: Any, path: str) -> list[str]:
    if not isinstance(value, list):
        raise DatasetFormatError(path, f"expected a list of strings, got {_kind(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise DatasetFormatError(f"{path}[{index}]", f"expected a string, got {_kind(item)}")
    return value


def _cells(value: Any, path: str) -> list[list[str]]:
    if not isinstance(value, list):
        raise DatasetFormatError(path, f"expected rows (a list of lists of strings), got {_kind(value)}")
    for index, row in enumerate(value):
        _list_of_str(row, f"{path}[{index}]")
    return value


def _optional_choice(obj: dict[str, Any], key: str, path: str, choices: tuple[str, ...], *, required: bool) -> str:
    """`obj[key]`, one of `choices`; an unlabelled question may leave it out ("")."""
    value = _get(obj, key, path, (str,), required=required)
    return "" if value is None else _choice(value, f"{path}.{key}", choices)


def _scitat_cells(table: dict[str, Any], path: str) -> list[list[str]]:
    """A SciTaT table's rows (`table`, or `extract_table` as SciTaT's tables files name it); cells may be strings,
    numbers or null, as SciTaT's code reads them: numbers become their text, null an empty cell."""
    key = "table" if "table" in table or "extract_table" not in table else "extract_table"
    rows = _get(table, key, path, (list,))
    grid = []
    for r_index, row in enumerate(rows):
        if not isinstance(row, list):
            raise DatasetFormatError(f"{path}.{key}[{r_index}]", f"expected a list of cells, got {_kind(row)}")
        for c_index, cell in enumerate(row):
            if cell is not None and (isinstance(cell, bool) or not isinstance(cell, str | int | float)):
                raise DatasetFormatError(
                    f"{path}.{key}[{r_index}][{c_index}]", f"expected a string, a number or null, got {_kind(cell)}"
                )
        grid.append(["" if cell is None else str(cell) for cell in row])
    return grid


def _choice(value: Any, path: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise DatasetFormatError(path, f"{json.dumps(value)[:60]} is not one of {', '.join(map(repr, choices))}")
    return value


def _answer_items(answer: Any, path: str) -> list[str]:
    """A TAT-QA / SciTaT answer (list, string or number) as a list of strings; the native value is kept apart."""
    if isinstance(answer, bool) or answer is None or isinstance(answer, dict):
        raise DatasetFormatError(path, f"expected a list, a string or a number, got {_kind(answer)}")
    items = answer if isinstance(answer, list) else [answer]  # JSON's other values: a string or a number
    for index, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise DatasetFormatError(f"{path}[{index}]", f"expected a string or a number, got {_kind(item)}")
    return [str(item) for item in items]


def _unique(key: str, path: str, seen: dict[str, str], what: str) -> None:
    if key in seen:
        raise DatasetFormatError(path, f"duplicate {what} {key!r} (first at {seen[key]})")
    seen[key] = path


def _records(data: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The file's records, each with its path (`[i]`): the file must be a JSON list of objects."""
    if not isinstance(data, list):
        raise DatasetFormatError("", f"expected a JSON list of records, got {_kind(data)}")
    return _objects(data, "")


def _objects(items: list[Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each item of the list at `path` with its own path (`path[i]`); an item that is not an object raises."""
    for index, item in enumerate(items):
        where = f"{path}[{index}]"
        if not isinstance(item, dict):
            raise DatasetFormatError(where, f"expected an object, got {_kind(item)}")
        yield where, item


def parse_tatqa(data: Any, *, with_context: bool = True) -> ParsedDataset:
    """TAT-QA: [{table: {uid, table}, paragraphs: [{uid, order, text}], questions}]; TAT-DQA: [{doc, questions}]."""
    contexts: list[ParsedContext] = []
    questions: list[ParsedQuestion] = []
    seen_questions: dict[str, str] = {}
    seen_contexts: dict[str, str] = {}
    for path, document in _records(data):
        if with_context:
            table = _get(document, "table", path, (dict,))
            key = _get(table, "uid", f"{path}.table", (str,))
            cells = _cells(_get(table, "table", f"{path}.table", (list,)), f"{path}.table.table")
            paragraphs = [
                ParsedParagraph(
                    order=_get(paragraph, "order", p_path, (int,)),
                    text=_get(paragraph, "text", p_path, (str,)),
                    key=_get(paragraph, "uid", p_path, (str,)),
                )
                for p_path, paragraph in _objects(_get(document, "paragraphs", path, (list,)), f"{path}.paragraphs")
            ]
            _unique(key, f"{path}.table.uid", seen_contexts, "table uid")
            context = ParsedContext(
                key=key,
                title=f"TAT-QA document {key}",
                kind="long",
                tables=[ParsedTable(cells=cells, key=key)],
                paragraphs=paragraphs,
                native={"table_uid": key, "paragraphs": [[p.key, p.order] for p in paragraphs]},
            )
        else:
            doc = _get(document, "doc", path, (dict,))
            key = _get(doc, "uid", f"{path}.doc", (str,))
            page = _get(doc, "page", f"{path}.doc", (int,), required=False)
            source = _get(doc, "source", f"{path}.doc", (str,), required=False) or ""
            _unique(key, f"{path}.doc.uid", seen_contexts, "doc uid")
            title = f"{source} page {page}" if source else f"TAT-DQA document {key}"
            context = ParsedContext(key=key, title=title, kind="none", tables=[], paragraphs=[], native={"doc": doc})
        for q_path, question in _objects(_get(document, "questions", path, (list,)), f"{path}.questions"):
            uid = _get(question, "uid", q_path, (str,))
            _unique(uid, f"{q_path}.uid", seen_questions, "question uid")
            text = _get(question, "question", q_path, (str,))
            # A question without `answer` (TAT-QA's test file) is unlabelled: it comes in as a draft to annotate.
            is_draft = "answer" not in question
            items = [] if is_draft else _answer_items(_get(question, "answer", q_path, ()), f"{q_path}.answer")
            answer_type = _optional_choice(question, "answer_type", q_path, ANSWER_TYPES, required=not is_draft)
            # TAT-DQA's own files have no answer_from; the project's TAT-DQA export writes it, read when there.
            answer_from = _optional_choice(
                question, "answer_from", q_path, ANSWER_SOURCES, required=with_context and not is_draft
            )
            scale: str | None = _optional_choice(question, "scale", q_path, SCALES, required=not is_draft)
            if is_draft and "scale" not in question:
                scale = None  # unlabelled: not chosen (the scale None is a choice, "")
            derivation = _get(question, "derivation", q_path, (str,), required=False) or ""
            _get(question, "order", q_path, (int,), required=False)
            questions.append(
                ParsedQuestion(
                    key=uid,
                    context_key=key,
                    fields={
                        "question": text,
                        "answer": items,
                        "answer_type": answer_type,
                        "answer_source": answer_from,
                        "answer_form": "" if is_draft else "short" if is_short_form(items) else "free",
                        "scale": scale,
                        "derivation": derivation,
                    },
                    is_draft=is_draft,
                    relevant_table_indexes=[0] if answer_from in ("table", "table-text") else [],
                    # Everything the file says about the question, so the export can give it back unchanged.
                    native={
                        **question,
                        "source_record": source_text(question),
                        **({} if with_context else {"source_document": source_text({**document, "questions": []})}),
                    },
                )
            )
        contexts.append(context)
    fmt, notes = ("tatqa", []) if with_context else ("tatdqa", [NO_CONTEXT_NOTE])
    return ParsedDataset(format=fmt, contexts=contexts, questions=questions, notes=notes)


# Retrieval outputs of FinQA's retriever and the model input are predictions, not gold data: not curated (they
# travel in the question's source record only; the record's table_retrieved* and text_retrieved* are never read).
FINQA_DROPPED_QA_KEYS = ("model_input", "tfidftopn")


def parse_finqa(data: Any) -> ParsedDataset:
    """FinQA: [{id, pre_text, post_text, table, filename, qa: {question, answer, program, exe_ans, …}}] or flat."""
    contexts: dict[str, ParsedContext] = {}
    fingerprints: dict[str, str] = {}
    questions: list[ParsedQuestion] = []
    seen: dict[str, str] = {}
    for path, record in _records(data):
        uid = _get(record, "id", path, (str,))
        _unique(uid, f"{path}.id", seen, "id")
        pre = _list_of_str(_get(record, "pre_text", path, (list,)), f"{path}.pre_text")
        post = _list_of_str(_get(record, "post_text", path, (list,)), f"{path}.post_text")
        cells = _cells(_get(record, "table", path, (list,)), f"{path}.table")
        nested = "qa" in record
        qa = _get(record, "qa", path, (dict,)) if nested else record
        q_path = f"{path}.qa" if nested else path
        text = _get(qa, "question", q_path, (str,))
        program = _get(qa, "program", q_path, (str,))
        if nested:
            exe_ans = _get(qa, "exe_ans", q_path, (int, float, str))
            shown = _get(qa, "answer", q_path, (str, int, float), required=False)
            native_qa = {k: v for k, v in qa.items() if k not in FINQA_DROPPED_QA_KEYS}
        else:
            exe_ans = _get(qa, "answer", q_path, (int, float, str))
            shown = None
            native_qa = {"question": text, "program": program, "exe_ans": exe_ans}
        explanation = _get(qa, "explanation", q_path, (str,), required=False) or ""
        filename = record.get("filename") if isinstance(record.get("filename"), str) else uid.rsplit("-", 1)[0]
        fingerprint = hashlib.sha256(json.dumps([pre, post, cells]).encode()).hexdigest()
        key = filename if fingerprints.get(filename, fingerprint) == fingerprint else f"{filename}#{fingerprint[:8]}"
        fingerprints.setdefault(filename, fingerprint)
        if key not in contexts:
            paragraphs = [ParsedParagraph(order=i, text=t, section="pre_text") for i, t in enumerate(pre)]
            paragraphs += [ParsedParagraph(order=len(pre) + i, text=t, section="post_text") for i, t in enumerate(post)]
            native = {"filename": filename, "pre_text_count": len(pre)}
            if "table_ori" in record:
                native["table_ori"] = record["table_ori"]
            contexts[key] = ParsedContext(
                key=key,
                title=f"FinQA {filename}",
                kind="long",
                tables=[ParsedTable(cells=cells, key=key)],
                paragraphs=paragraphs,
                native=native,
            )
        items = [str(shown)] if shown not in (None, "") else [str(exe_ans)]
        # The answer source from FinQA's gold evidence keys (`table_k` / `text_k`).
        kinds = {key.split("_")[0] for key in (qa.get("gold_inds") or {})} if nested else set()
        source = kinds.pop() if kinds in ({"table"}, {"text"}) else "table-text" if kinds else ""
        questions.append(
            ParsedQuestion(
                key=uid,
                context_key=key,
                fields={
                    "question": text,
                    "rationale": explanation,
                    "answer": items,
                    "answer_type": "arithmetic",
                    "answer_source": source,
                    "answer_form": "short",
                    "program": program,
                },
                relevant_table_indexes=[0] if source in ("table", "table-text") else [],
                native={
                    "id": uid,
                    "qa": native_qa,
                    "exe_ans": exe_ans,
                    "nested": nested,
                    "source_record": source_text(record),
                },
            )
        )
    notes = [
        "FinQA's retriever outputs and model inputs (table_retrieved*, text_retrieved*, qa.model_input, "
        "qa.tfidftopn) are not curated: they are kept with each question's source record and written back by "
        "the FinQA export unchanged."
    ]
    return ParsedDataset(format="finqa", contexts=list(contexts.values()), questions=questions, notes=notes)


def parse_scitat(data: Any) -> ParsedDataset:
    """SciTaT: [{id, paragraph: {paragraph_id, text}, tables: [{table_id, label, caption, table}], question,
    question_type, reasoning, answer, …}] (zhxlia/SciTaT layout; our own extra keys are read when present)."""
    contexts: dict[str, ParsedContext] = {}
    questions: list[ParsedQuestion] = []
    seen: dict[str, str] = {}
    for path, record in _records(data):
        uid = str(_get(record, "id", path, (str, int)))
        _unique(uid, f"{path}.id", seen, "id")
        # SciTaT writes `paragraph: null` (or {}) for a question on tables only.
        paragraph = _get(record, "paragraph", path, (dict, type(None)), required=False) or {}
        p_text = _get(paragraph, "text", f"{path}.paragraph", (str,), required=False) or ""
        p_key = str(_get(paragraph, "paragraph_id", f"{path}.paragraph", (str, int), required=False) or "")
        tables = []
        tables_in_file = _get(record, "tables", path, (list,), required=False) or []
        for t_index, (t_path, table) in enumerate(_objects(tables_in_file, f"{path}.tables")):
            header_rows = _get(table, "header_rows", t_path, (int, type(None)), required=False)
            if header_rows is not None and header_rows < 0:
                raise DatasetFormatError(f"{t_path}.header_rows", f"expected a count of rows, got {header_rows}")
            tables.append(
                ParsedTable(
                    label=_get(table, "label", t_path, (str,), required=False) or "",
                    caption=_get(table, "caption", t_path, (str,), required=False) or "",
                    cells=_scitat_cells(table, t_path),
                    key=str(_get(table, "table_id", t_path, (str, int), required=False) or f"{uid}-t{t_index}"),
                    header_rows=header_rows,
                )
            )
        # The project's export writes `paper: {id, title}`: every context of one paper id is one paper on import.
        paper = _get(record, "paper", path, (dict, str), required=False) or {}
        paper = {"id": paper} if isinstance(paper, str) else paper
        paper_key = str(paper.get("id") or p_key or uid)
        paper_title = str(paper.get("title") or f"SciTaT paper {paper_key}")
        context_key = f"{p_key or uid}|{'|'.join(t.key for t in tables)}"
        if context_key not in contexts:
            contexts[context_key] = ParsedContext(
                key=context_key,
                title=paper_title,
                kind="short",
                tables=tables,
                paragraphs=[ParsedParagraph(order=0, text=p_text, key=p_key)] if p_text else [],
                native={"paragraph_id": p_key, "table_ids": [t.key for t in tables]},
                paper_key=paper_key,
            )
        text = _get(record, "question", path, (str,))
        is_draft = "answer" not in record
        items = [] if is_draft else _answer_items(_get(record, "answer", path, ()), f"{path}.answer")
        answer_source = record.get("answer_source", "")
        if answer_source:
            _choice(answer_source, f"{path}.answer_source", ANSWER_SOURCES)
        # As the file says, else judged from the answer: a question without one (a draft, an unanswerable one) has none.
        is_unanswered = is_draft or record.get("is_answerable") is False
        answer_form = record.get("answer_form") or (
            "" if is_unanswered else "short" if is_short_form(items) else "free"
        )
        if answer_form:
            _choice(answer_form, f"{path}.answer_form", ("short", "free"))
        relevant = record.get("relevant_tables")
        if relevant is not None:
            _list_of_str(
                [str(r) for r in relevant] if isinstance(relevant, list) else relevant, f"{path}.relevant_tables"
            )
            keys = [t.key for t in tables]
            indexes = [keys.index(str(r)) for r in relevant if str(r) in keys]
        else:
            indexes = list(range(len(tables))) if answer_source in ("table", "table-text") else []
        fields: dict[str, Any] = {
            "question": text,
            "rationale": _get(record, "reasoning", path, (str,), required=False) or "",
            "answer": items,
            "answer_type": _get(record, "answer_type", path, (str,), required=False) or "",
            "answer_source": answer_source,
            "answer_form": answer_form,
            # The project's export writes null for a scale nobody chose (an unanswerable question's).
            "scale": _get(record, "scale", path, (str, type(None))) if "scale" in record else "",
        }
        if _get(record, "is_answerable", path, (bool,), required=False) is False:
            # The project's export marks the unanswerable split so: its gold is the abstention, and its reason.
            fields["is_answerable"] = False
            fields["unanswerable_reason"] = _get(record, "unanswerable_reason", path, (str,), required=False) or ""
        # SciTaT's formaliser writes `question_type: null` for a question it has not typed.
        reasoning_type = _get(record, "question_subtype", path, (str, type(None)), required=False) or _get(
            record, "question_type", path, (str, type(None)), required=False
        )
        questions.append(
            ParsedQuestion(
                key=uid,
                context_key=context_key,
                fields=fields,
                relevant_table_indexes=indexes,
                native={
                    **{k: v for k, v in record.items() if k not in ("paragraph", "tables")},
                    "source_record": source_text(record),
                },
                reasoning_type=reasoning_type or "",
                is_draft=is_draft,
            )
        )
    return ParsedDataset(format="scitat", contexts=list(contexts.values()), questions=questions)


def parse_dataset(format: str, data: Any) -> ParsedDataset:
    """Validate and read a parsed JSON document of `format`; raises DatasetFormatError on the first bad value."""
    parsers = {
        "tatqa": parse_tatqa,
        "tatdqa": functools.partial(parse_tatqa, with_context=False),
        "finqa": parse_finqa,
        "scitat": parse_scitat,
    }
    if format not in parsers:
        raise DatasetFormatError("", f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    return parsers[format](data)
