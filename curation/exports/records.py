"""Pure converters from a frozen release item (and its frozen contexts) to one record of each export layout."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from curation.errors import InvalidInput
from curation.exports.derivation import derivation_of, executed_answer, finqa_program_of
from curation.exports.statistics import in_key_order
from curation.table_shape import shape_from_frozen

Item = Mapping[str, Any]
FrozenContext = Mapping[str, Any] | None
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
# A thousands separator between digits: "1,200" and "12,345.6", not the comma of "1,2".
_GROUPING = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


# A TAT-QA question's keys in the format's order, with what a question curated here holds before its values.
TATQA_QUESTION = {
    "uid": "",
    "order": 0,
    "question": "",
    "answer": [],
    "derivation": "",
    "answer_type": "",
    "answer_from": "",
    "rel_paragraphs": [],
    "req_comparison": False,
    "scale": "",
}
FINQA_QA_KEYS = (
    "question",
    "answer",
    "explanation",
    "ann_table_rows",
    "ann_text_rows",
    "steps",
    "program",
    "gold_inds",
    "exe_ans",
    "program_re",
)

# The layouts without the questions of the unanswerable split (scitat, jsonl, csv, parquet and hf mark them).
ABSTENTION_FREE = frozenset({"tatqa", "tatdqa", "finqa"})
# Why a layout leaves a question out (card.LEFT_OUT says it in words); the other layouts carry every question.
UNANSWERABLE, NO_PROGRAM = "unanswerable", "no program"


def left_out_reason(fmt: str, item: Item) -> str | None:
    """Why `fmt`'s layout leaves `item` out, or None when it holds it.

    TAT-QA's and FinQA's layouts hold no abstention: every question has an answer (TAT-QA's loader here refuses any
    other answer type and its scorer gives an empty gold 0 even against itself; FinQA's would read an empty exe_ans
    back as an answer), so the unanswerable split stays in the layouts that mark it. FinQA's holds only questions
    with a program (its span, multi-span and count answers have none; a curated arithmetic answer has its
    derivation's, `finqa_program_of`): FinQA's code trains on the program and its evaluator scores a question by
    running it, and stops with an IndexError on an empty one.
    """
    if fmt in ABSTENTION_FREE and item.get("is_answerable") is False:
        return UNANSWERABLE
    if fmt == "finqa" and not finqa_program_of(item):
        return NO_PROGRAM
    return None


# Native keys holding the source file's own record (and, for TAT-DQA, its document) as JSON text, key order kept.
SOURCE_KEYS = ("source_record", "source_document")


def source_of(native: Mapping[str, Any], key: str = "source_record") -> dict[str, Any] | None:
    """The source file's record kept at import (None for items curated here or imported before it was kept)."""
    text = native.get(key)
    return json.loads(text) if isinstance(text, str) else None


def overlay(source: Mapping[str, Any] | None, values: Mapping[str, Any]) -> dict[str, Any]:
    """The source record with the curated values written over it: its keys keep their order and the keys the
    project does not model stay as they were; keys the source lacks follow at the end."""
    return {**(source or {}), **values}


def file_cells(table: Mapping[str, Any]) -> list[list[str]]:
    """A frozen table's rectangular file grid (merged text once, top-left); older releases' cells are padded."""
    return shape_from_frozen(table).file_grid()


def _file_table(table: Mapping[str, Any], *, key: str, cells: str) -> dict[str, Any]:
    """A frozen table as a file record holds it, under the layout's names for its key and its file grid."""
    shape = shape_from_frozen(table)
    return {
        key: table["key"],
        "label": table["label"],
        "caption": table["caption"],
        cells: shape.file_grid(),
        "header_rows": shape.header_rows,
    }


def primary_context(short: FrozenContext, long: FrozenContext) -> FrozenContext:
    """The context the question was asked on: the short one when there is one, else the whole paper."""
    return short if short is not None else long


def _native_answer(item: Item) -> Any:
    """The answer as the source file wrote it when it still says the same; else TAT-QA's own conventions."""
    native = item.get("native") or {}
    answer = list(item.get("answer") or [])
    if "answer" in native:
        original = native["answer"]
        as_items = [str(a) for a in original] if isinstance(original, list) else [str(original)]
        if as_items == answer:
            return original
    if item.get("answer_type") in ("arithmetic",) and len(answer) == 1:
        # A percentage is its number: the scale says percent, as TAT-QA writes it (25.14, "percent"); a number is
        # written without its thousands separators (2100, not "2,100", which would leave the answer a list).
        written = answer[0].strip()
        written = _GROUPING.sub("", written.removesuffix("%").strip() if item.get("scale") == "percent" else written)
        if _NUMBER.match(written):
            return float(written) if "." in written else int(written)
    if item.get("answer_type") == "count" and len(answer) == 1:
        # TAT-QA's scorers read a count as int(answer): "1,200" would stop them.
        return _GROUPING.sub("", answer[0].strip())
    return answer


def tatqa_question(item: Item, order: int) -> dict[str, Any]:
    """A TAT-QA question dict; an imported TAT-QA/TAT-DQA question keeps its own keys, order and extra fields."""
    raw = item.get("native") or {}
    imported = item.get("source_format") in ("tatqa", "tatdqa")
    source = source_of(raw) if imported else None
    native = {key: value for key, value in raw.items() if key not in SOURCE_KEYS}
    native = in_key_order(native, TATQA_QUESTION) if imported else {}
    question: dict[str, Any] = source or native or {**TATQA_QUESTION, "order": order}
    question["uid"] = item["uid"]
    question["question"] = item.get("question", "")
    question["answer"] = _native_answer(item)
    derivation = derivation_of(item)
    if "derivation" in question or derivation:
        question["derivation"] = derivation
    question["answer_type"] = item.get("answer_type", "")
    if "answer_from" in question or item.get("answer_source"):
        question["answer_from"] = item.get("answer_source", "")
    if item.get("scale") is None:
        # TAT-QA's format and its scorer need a scale (its code turns None into an error); the export does not make
        # one up for a question whose scale nobody chose (FinQA's records have none).
        raise InvalidInput(
            f"Question {item['uid']} has no scale chosen; TAT-QA's format needs one. Choose it on its instance "
            "(None: no unit scale) or export in another format."
        )
    question["scale"] = item["scale"]
    return question


def tatqa_document(context: FrozenContext, items: Sequence[Item]) -> dict[str, Any]:
    """One TAT-QA document: its table (the first of the context), its paragraphs and its questions."""
    context = context or {}
    native = context.get("native") or {}
    tables = context.get("tables") or []
    native_paragraphs = native.get("paragraphs") or []
    # A uid names one document's table or paragraph, as in TAT-QA's files (and its loader here refuses a table uid
    # twice), but two contexts of a paper can hold the same table: a document made from a part of its paper (a short
    # context, or a copy less what annotators excluded) follows each uid with what its context key adds to the
    # paper's (`paper-3/table-0/context-12`). Frozen keys only, so the same release exports the same uids.
    first = items[0] if items else {}
    context_key = first.get("short_context") or first.get("long_context") or ""
    part = context_key.removeprefix((context.get("paper") or {}).get("key", ""))

    def uid(key: str) -> str:
        return key + part if key else ""

    document: dict[str, Any] = {
        "table": {
            "uid": uid(native.get("table_uid") or (tables[0]["key"] if tables else "")),
            "table": file_cells(tables[0]) if tables else [],
        },
        "paragraphs": [
            {
                # By the paragraph's place in the paper, so an excluded paragraph shifts no other's uid.
                "uid": uid(native_paragraphs[p["order"]][0] if p["order"] < len(native_paragraphs) else p["key"]),
                "order": native_paragraphs[p["order"]][1] if p["order"] < len(native_paragraphs) else p["order"] + 1,
                "text": p["text"],
            }
            for p in context.get("paragraphs") or []
        ],
        "questions": [tatqa_question(item, i + 1) for i, item in enumerate(items)],
    }
    if len(tables) > 1:
        # TAT-QA has one table per document; further tables of a SciTaT context ride along under their own key.
        document["more_tables"] = [{"uid": uid(t["key"]), "table": file_cells(t)} for t in tables[1:]]
    if "doc" in native:
        document["doc"] = native["doc"]
    return document


def tatdqa_document(items: Sequence[Item]) -> dict[str, Any]:
    """One TAT-DQA document: its `doc` (uid, page, source: the PDF page) and other keys as the file had them, and
    its questions; a document curated here carries the paper as `doc.uid`."""
    first = items[0] if items else {}
    document = source_of(first.get("native") or {}, "source_document") or {"doc": {"uid": first.get("paper", "")}}
    return overlay(document, {"questions": [tatqa_question(item, i + 1) for i, item in enumerate(items)]})


def scitat_record(item: Item, short: FrozenContext, long: FrozenContext) -> dict[str, Any]:
    """A SciTaT record (zhxlia/SciTaT keys) plus answer form, source, type, relevant tables and split."""
    context = primary_context(short, long) or {}
    paragraphs = context.get("paragraphs") or []
    record: dict[str, Any] = {
        "id": item["uid"],
        "paper": {"id": item.get("paper", ""), "title": (context.get("paper") or {}).get("title", "")},
        "paragraph": {"paragraph_id": paragraphs[0]["key"], "text": paragraphs[0]["text"]}
        if short is not None and paragraphs
        else {},
        "tables": [_file_table(t, key="table_id", cells="table") for t in context.get("tables") or []],
        "question": item.get("question", ""),
        "question_type": item.get("reasoning_type_name") or "",
        "question_subtype": item.get("reasoning_subtype_name") or "",
        "reasoning": item.get("rationale", ""),
        "answer": list(item.get("answer") or []),
        "answer_type": item.get("answer_type", ""),
        "answer_form": item.get("answer_form", ""),
        "answer_source": item.get("answer_source", ""),
        "relevant_tables": list(item.get("relevant_tables") or []),
        "scale": item.get("scale", ""),
        "split": item.get("split", ""),
    }
    if short is None and paragraphs:
        record["paragraphs"] = [{"paragraph_id": p["key"], "text": p["text"]} for p in paragraphs]
    if item.get("program"):
        record["program"] = item["program"]
    if item.get("is_answerable") is False:
        # The unanswerable split: the gold is an abstention, the reason says what the context lacks.
        record["is_answerable"] = False
        record["unanswerable_reason"] = item.get("unanswerable_reason", "")
    source = source_of(item.get("native") or {}) if item.get("source_format") == "scitat" else None
    if source is None:
        return record
    # An imported record is written back as it came: its keys in its order, its paragraph and tables (ids, LaTeX,
    # numeric or null cells, `extract_table`) while the frozen context still holds them, its own paper, question type
    # and answer; the project's own keys follow.
    record["answer"] = _native_answer(item)
    for key in ("question_type", "paper"):
        if key in source:
            record[key] = source[key]
    source_paragraph = source.get("paragraph")
    source_text_of_paragraph = (source_paragraph or {}).get("text", "") if isinstance(source_paragraph, dict) else ""
    if "paragraph" in source and (
        not source_text_of_paragraph or any(p["text"] == source_text_of_paragraph for p in paragraphs)
    ):
        record["paragraph"] = source_paragraph
    if isinstance(source.get("tables"), list) and len(source["tables"]) == len(context.get("tables") or []):
        record["tables"] = source["tables"]
    return overlay(source, record)


def jsonl_record(item: Item, short: FrozenContext, long: FrozenContext) -> dict[str, Any]:
    """The frozen item with its context inline (and the whole paper too when the question had a short context)."""
    record = dict(item)
    record["context"] = _with_file_grids(primary_context(short, long))
    if short is not None and long is not None:
        record["paper_context"] = _with_file_grids(long)
    return record


def _with_file_grids(context: FrozenContext) -> FrozenContext:
    """The context with each table through the one representation (older releases' ragged cells padded)."""
    if context is None:
        return None
    tables = [{**t, **shape_from_frozen(t).to_frozen()} for t in context.get("tables") or []]
    return {**context, "tables": tables}


def finqa_record(item: Item, short: FrozenContext, long: FrozenContext) -> dict[str, Any]:
    """FinQA's layout: pre_text / post_text sentences, the table and `qa` with program and execution answer."""
    context = primary_context(short, long) or {}
    native = item.get("native") or {}
    context_native = context.get("native") or {}
    frozen_paragraphs = context.get("paragraphs") or []
    pre_count = context_native.get("pre_text_count", len(frozen_paragraphs))
    # Split by the paragraph's place in the page, so an excluded sentence moves no other across the table.
    pre_text = [p["text"] for p in frozen_paragraphs if p.get("order", 0) < pre_count]
    post_text = [p["text"] for p in frozen_paragraphs if p.get("order", 0) >= pre_count]
    tables = context.get("tables") or []
    qa = in_key_order(native.get("qa") or {}, FINQA_QA_KEYS)
    answer = list(item.get("answer") or [])
    qa["question"] = item.get("question", "")
    qa["program"] = finqa_program_of(item)
    qa.setdefault("answer", answer[0] if answer else "")
    # FinQA's evaluator runs the program and compares its result with exe_ans exactly: a program's exe_ans is what it
    # executes to (0.83333 for an answer 0.83, 20.0 for "20%"), else the answer as a number where it is one.
    executed = executed_answer(qa["program"])
    if executed is None:
        executed = answer[0] if answer else ""
        if _NUMBER.match(_GROUPING.sub("", executed)):
            executed = float(_GROUPING.sub("", executed))
    qa["exe_ans"] = native.get("exe_ans", qa.get("exe_ans", executed))
    if item.get("rationale") or "explanation" in qa:
        qa["explanation"] = item.get("rationale", "")
    values: dict[str, Any] = {
        "id": item["uid"],
        "pre_text": pre_text,
        "post_text": post_text,
        "filename": context_native.get("filename", item.get("paper", "")),
        "table": file_cells(tables[0]) if tables else [],
    }
    source = source_of(native)
    if source is not None and not native.get("nested", True):
        # The flat (simplified) layout: question, answer and program beside the texts, as the file had them.
        if "filename" not in source:
            values.pop("filename")
        flat = {"question": qa["question"], "program": qa["program"], "answer": qa["exe_ans"]}
        return overlay(source, {**values, **flat})
    if source is not None:
        # Only the curated values go over the source's qa: its other keys (steps, gold_inds, model_input, …) stay
        # as the file wrote them (the stored copy in `native.qa` has lost its key order in JSONB).
        curated = {key: qa[key] for key in ("question", "program", "exe_ans", "explanation") if key in qa}
        return overlay(source, {**values, "qa": overlay(source.get("qa"), curated)})
    record = {**values, "qa": qa}
    if "table_ori" in context_native:
        record["table_ori"] = context_native["table_ori"]
    return record


CSV_COLUMNS = (
    "uid",
    "split",
    "question",
    "answer",
    "answer_json",
    "answer_type",
    "answer_form",
    "answer_source",
    "scale",
    "reasoning_type",
    "reasoning_subtype",
    "paper",
    "rationale",
    "derivation",
    "program",
    "context_kind",
    "tables_json",
    "paragraphs_json",
)


def csv_row(item: Item, short: FrozenContext, long: FrozenContext) -> list[str]:
    """Questions and answers as flat text (items joined with ' | '; the exact list in answer_json), with the item's
    context as JSON: the rectangular file grid of each table and the paragraphs (what was excluded is absent)."""
    row = parquet_row(item, short, long)
    values = {
        **{column: item.get(column) or "" for column in CSV_COLUMNS},
        "answer": " | ".join(row["answer"]),
        "derivation": row["derivation"],
        "answer_json": json.dumps(row["answer"], ensure_ascii=False),
        "context_kind": row["context_kind"],
        "tables_json": json.dumps(row["tables"], ensure_ascii=False),
        "paragraphs_json": json.dumps(row["paragraphs"], ensure_ascii=False),
    }
    return [str(values[column]) for column in CSV_COLUMNS]


def parquet_row(item: Item, short: FrozenContext, long: FrozenContext) -> dict[str, Any]:
    """A flat row with the context as nested lists, the shape Hugging Face `datasets` reads as is."""
    context = primary_context(short, long) or {}
    return {
        "uid": item["uid"],
        "split": item.get("split", ""),
        "question": item.get("question", ""),
        "rationale": item.get("rationale", ""),
        "answer": [str(a) for a in item.get("answer") or []],
        "answer_type": item.get("answer_type", ""),
        "answer_form": item.get("answer_form", ""),
        "answer_source": item.get("answer_source", ""),
        "scale": item.get("scale", ""),
        "derivation": derivation_of(item),
        "program": item.get("program", ""),
        "reasoning_type": item.get("reasoning_type") or "",
        "reasoning_subtype": item.get("reasoning_subtype") or "",
        "paper": item.get("paper", ""),
        "context_kind": context.get("kind", ""),
        "tables": [_file_table(t, key="key", cells="cells") for t in context.get("tables") or []],
        "paragraphs": [
            {"key": p["key"], "order": p["order"], "section": p["section"], "text": p["text"]}
            for p in context.get("paragraphs") or []
        ],
        "relevant_tables": list(item.get("relevant_tables") or []),
        "source_format": item.get("source_format", ""),
        "native_json": json.dumps(item.get("native") or {}, ensure_ascii=False, sort_keys=True),
    }
