"""Streaming writers: JSON arrays, JSON lines, CSV and Parquet written record by record (memory stays flat)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from curation.exports import records

Row = tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]
PARQUET_BATCH_ROWS = 1000


def write_json_array(out: IO[str], values: Iterable[Any]) -> int:
    """`[v1, v2, …]` written one element at a time, one per line; returns the number of elements.

    Compact: `json` only uses its C encoder without `indent`, which makes big exports several times faster, and one
    record per line still reads and diffs well.
    """
    count = 0
    out.write("[")
    for value in values:
        out.write(",\n" if count else "\n")
        out.write(json.dumps(value, ensure_ascii=False))
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count


def _counted(rows: Iterable[Row], progress: Callable[[int], None] | None) -> Iterator[Row]:
    for row in rows:
        yield row
        if progress is not None:
            progress(1)


def tatqa_documents(rows: Iterable[Row]) -> Iterator[dict[str, Any]]:
    """Adjacent items of the same context form one TAT-QA document (a release orders items by context)."""

    def key(row: Row) -> str:
        item = row[0]
        return item.get("short_context") or item.get("long_context") or f"no-context:{item.get('paper', '')}"

    for _, group in groupby(rows, key=key):
        grouped = list(group)
        _, short, long = grouped[0]
        yield records.tatqa_document(records.primary_context(short, long), [row[0] for row in grouped])


def tatdqa_documents(rows: Iterable[Row], doc_keys: Counter[tuple[str, ...]] | None = None) -> Iterator[dict[str, Any]]:
    """Adjacent items of the same paper (a TAT-DQA document: one PDF page) form one TAT-DQA document; `doc_keys`
    counts the documents by the keys their `doc` holds (for the dataset card)."""
    for _, group in groupby(rows, key=lambda row: row[0].get("paper", "")):
        document = records.tatdqa_document([row[0] for row in group])
        if doc_keys is not None:
            doc = document.get("doc")
            doc_keys[tuple(doc) if isinstance(doc, dict) else ()] += 1
        yield document


def _kept(fmt: str, rows: Iterable[Row], left_out: Counter[str] | None) -> Iterator[Row]:
    """The rows `fmt`'s layout holds; `left_out` counts the others by their reason."""
    for row in rows:
        reason = records.left_out_reason(fmt, row[0])
        if reason is None:
            yield row
        elif left_out is not None:
            left_out[reason] += 1


def write_text_format(
    fmt: str,
    out: IO[str],
    rows: Iterable[Row],
    progress: Callable[[int], None] | None,
    *,
    doc_keys: Counter[tuple[str, ...]] | None = None,
    left_out: Counter[str] | None = None,
) -> None:
    """Write `rows` in a text layout (scitat, tatqa, tatdqa, finqa, jsonl, csv). For tatdqa, `doc_keys` receives
    what the documents' `doc` held, as written; `left_out` counts the questions the layout leaves out, by reason
    (`records.left_out_reason`), for the dataset card."""
    counted = _kept(fmt, _counted(rows, progress), left_out)
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(records.CSV_COLUMNS)
        writer.writerows(records.csv_row(*row) for row in counted)
    elif fmt == "jsonl":
        out.writelines(json.dumps(records.jsonl_record(*row), ensure_ascii=False) + "\n" for row in counted)
    elif fmt in ("tatqa", "tatdqa"):
        write_json_array(out, tatqa_documents(counted) if fmt == "tatqa" else tatdqa_documents(counted, doc_keys))
    else:
        record = {"scitat": records.scitat_record, "finqa": records.finqa_record}[fmt]
        write_json_array(out, (record(*row) for row in counted))


_TEXT = pa.string()
_TABLE = {"key": _TEXT, "label": _TEXT, "caption": _TEXT, "cells": pa.list_(pa.list_(_TEXT)), "header_rows": pa.int32()}
_PARAGRAPH = {"key": _TEXT, "order": pa.int64(), "section": _TEXT, "text": _TEXT}
# The columns of records.parquet_row, in its order.
PARQUET_SCHEMA = pa.schema(
    {
        "uid": _TEXT,
        "split": _TEXT,
        "question": _TEXT,
        "rationale": _TEXT,
        "answer": pa.list_(_TEXT),
        "answer_type": _TEXT,
        "answer_form": _TEXT,
        "answer_source": _TEXT,
        "scale": _TEXT,
        "derivation": _TEXT,
        "program": _TEXT,
        "reasoning_type": _TEXT,
        "reasoning_subtype": _TEXT,
        "paper": _TEXT,
        "context_kind": _TEXT,
        "tables": pa.list_(pa.struct(_TABLE)),
        "paragraphs": pa.list_(pa.struct(_PARAGRAPH)),
        "relevant_tables": pa.list_(_TEXT),
        "source_format": _TEXT,
        "native_json": _TEXT,
    }
)


# Rows turned into Arrow at a time: a row group is gathered as compact Arrow batches, not as Python dicts.
PARQUET_CONVERT_ROWS = 200


class _ParquetFile:
    """One Parquet file written in row groups of PARQUET_BATCH_ROWS rows via pyarrow's ParquetWriter, each group
    gathered as Arrow batches of PARQUET_CONVERT_ROWS rows and written as one (the same file as from one batch per
    group), so memory holds one group whatever the file's size."""

    def __init__(self, path: Path) -> None:
        self.writer = pq.ParquetWriter(str(path), PARQUET_SCHEMA, compression="zstd")
        self.pending: list[dict[str, Any]] = []
        self.group: list[pa.RecordBatch] = []
        self.grouped = self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        self.pending.append(row)
        if len(self.pending) >= PARQUET_CONVERT_ROWS or self.grouped + len(self.pending) >= PARQUET_BATCH_ROWS:
            self._gather()
            if self.grouped >= PARQUET_BATCH_ROWS:
                self._write_group()

    def close(self) -> int:
        if self.pending or (not self.group and not self.count):  # an empty file still gets its one row group
            self._gather()
        if self.group:
            self._write_group()
        self.writer.close()
        return self.count

    def _gather(self) -> None:
        self.group.append(pa.RecordBatch.from_pylist(self.pending, schema=PARQUET_SCHEMA))
        self.grouped += len(self.pending)
        self.pending = []

    def _write_group(self) -> None:
        self.writer.write_table(pa.Table.from_batches(self.group, schema=PARQUET_SCHEMA).combine_chunks())
        self.count += self.grouped
        self.group.clear()
        self.grouped = 0


def write_parquet(path: Path, rows: Iterable[Row], progress: Callable[[int], None] | None) -> int:
    """One Parquet file of every row, its context the one the question was asked on."""
    file = _ParquetFile(path)
    for row in _counted(rows, progress):
        file.add(records.parquet_row(*row))
    return file.close()


# The context settings of the Hugging Face layout (SciTaT §2.5: every question in both): the setting's name and the
# (short, long) pair its rows are built from (a question without a short context is asked on the whole paper).
HF_SETTINGS = {
    "short": lambda short, long: (short, long),
    "long": lambda short, long: (None, long if long is not None else short),
}


def write_parquet_folder(directory: Path, rows: Iterable[Row], progress: Callable[[int], None] | None) -> list[str]:
    """The Hugging Face `datasets` layout: `{setting}/{split}.parquet` under `directory`, one file per context
    setting (HF_SETTINGS) and split, each streamed as the rows come; returns the files' paths relative to it."""
    files: dict[tuple[str, str], _ParquetFile] = {}
    for item, short, long in _counted(rows, progress):
        split = item.get("split") or "test"
        for setting, contexts in HF_SETTINGS.items():
            key = (setting, split)
            if key not in files:
                (directory / setting).mkdir(parents=True, exist_ok=True)
                files[key] = _ParquetFile(directory / setting / f"{split}.parquet")
            files[key].add(records.parquet_row(item, *contexts(short, long)))
    for file in files.values():
        file.close()
    return [f"{setting}/{split}.parquet" for setting in HF_SETTINGS for key, split in sorted(files) if key == setting]
