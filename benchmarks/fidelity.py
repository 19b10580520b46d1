"""Print JSON on how faithful a release is to what was curated, over the project's paper fixtures.

Every paper under tests/curation/latex/fixtures (a folder holding a file with \\begin{document}) and the demo
paper is ingested into a throwaway SQLite database; each short context gets a validated question whose
annotator struck out its paragraph or its first table; one release is cut and exported in every format. Then:

- `rectangular_share`: of every table copy in every export, the share that is rectangular with the width of
  the paper's widest row (cells plus their \\multicolumn spans, counted from the extractor's rows). Target 1.0.
- `header_rows`: the header count every consumer uses against hand labels — `benchmarks/fidelity_labels.json`,
  and any `expected_header_rows.json` ({label: rows}) beside a fixture paper.
- `header_rows_everywhere`: the extractor's header count against the one stored, the paper page's (`<thead>`)
  and every export's that carries one (SciTaT, JSONL, Parquet). Target: no disagreement.
- `hand_truth`: against the hand-written truth of real papers' tables (`truth.json` beside them), the share of
  grid cells read exactly (targets: cells 0.99, captions 1.0), captions and notes.
- `exclusion_share`: the share of items whose struck-out paragraph text and table are absent from that item's
  record in every export (CSV: its row). Target 1.0.

    .venv/bin/python benchmarks/fidelity.py

The figures of record (`benchmarks/results/fidelity.json`, shown in docs/benchmarks.md) keep this output under `raw`.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIXTURES = ROOT / "tests" / "curation" / "latex" / "fixtures"
DEMO = ROOT / "curation" / "demo" / "paper"
LABELS = Path(__file__).with_name("fidelity_labels.json")
TRUTH = "truth.json"  # beside standalone papers: per file, its tables' caption, cells, header rows, notes by hand


def paper_folders() -> list[Path]:
    """Each outermost folder holding a main .tex file (one with \\begin{document}), plus the demo paper.

    A folder with an `expected.json` ({file name: header rows}) holds one standalone paper per file (the
    real-paper-shaped header fixtures): each of its files is a paper of its own."""
    found: list[Path] = []
    for tex in sorted(FIXTURES.rglob("*.tex")):
        if "\\begin{document}" not in tex.read_text(errors="replace"):
            continue
        if (tex.parent / "expected.json").is_file() or (tex.parent / TRUTH).is_file():
            found.append(tex)
            continue
        folder = tex.parent
        if not any(folder == seen or seen in folder.parents for seen in found if seen.is_dir()):
            found.append(folder)
    return [DEMO, *found]


def widest_row(table: Any) -> int:
    """The widest row as the paper writes it: its cells, each \\multicolumn counted by its span."""
    extra: dict[int, int] = {}
    for span in table.spans:
        extra[span.row] = extra.get(span.row, 0) + span.colspan - 1
    return max((len(row) + extra.get(index, 0) for index, row in enumerate(table.rows)), default=0)


def expected_labels() -> dict[str, dict[str, int]]:
    """Hand-labelled header rows by paper folder (relative to the repository) and table label."""
    labels: dict[str, dict[str, int]] = json.loads(LABELS.read_text()) if LABELS.is_file() else {}
    labels.pop("_about", None)
    # Header rows target: 0.97 of the labelled tables (hand labels, expected.json files and truth.json files).
    for path in FIXTURES.rglob("expected_header_rows.json"):
        data = json.loads(path.read_text())
        labels.setdefault(str(path.parent.relative_to(ROOT)), {}).update(data.get("tables", data))
    for path in FIXTURES.rglob("expected.json"):  # one standalone paper per file, its first table labelled
        for name, rows in json.loads(path.read_text()).items():
            labels.setdefault(str((path.parent / name).relative_to(ROOT)), {})["#0"] = rows
    for paper, tables in truth_tables().items():
        labels.setdefault(paper, {}).update({f"#{order}": table["header_rows"] for order, table in enumerate(tables)})
    return labels


def truth_tables() -> dict[str, list[dict[str, Any]]]:
    """Hand-written truth of real papers' tables by paper file (relative to the repository), in float order."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in FIXTURES.rglob(TRUTH):
        for name, tables in json.loads(path.read_text()).items():
            if name != "_about":
                found[str((path.parent / name).relative_to(ROOT))] = tables
    return found


def score_against_truth(extracted: list[Any], truth: list[dict[str, Any]], tally: dict[str, Any], paper: str) -> None:
    """Add one paper's cells (position by position in the grid), captions and notes to the running tally."""
    for order, expected in enumerate(truth):
        table = extracted[order] if order < len(extracted) else None
        grid = table.grid if table is not None else []
        for row_index, row in enumerate(expected["cells"]):
            for column, text in enumerate(row):
                found = grid[row_index][column] if row_index < len(grid) and column < len(grid[row_index]) else None
                tally["cells"] += 1
                if found == text:
                    tally["cells_right"] += 1
                elif len(tally["cell_misses"]) < 20:
                    tally["cell_misses"].append({"paper": paper, "table": order, "expected": text, "found": found})
        for field in ("caption", "notes"):
            tally[field] += 1
            if table is not None and getattr(table, field) == expected[field]:
                tally[f"{field}_right"] += 1
            else:
                tally[f"{field}_misses"].append({"paper": paper, "table": order})


def main() -> None:
    from benchmarks._django import setup_django

    setup_django()
    from curation.batches.services import batch_create, batch_open
    from curation.exports import EXPORT_FORMATS, write_export_zip
    from curation.exports.records import CSV_COLUMNS
    from curation.exports.rows import release_rows
    from curation.latex import extract_paper
    from curation.models import Context, Instance, Table
    from curation.papers.services import paper_ingest
    from curation.releases.models import ReleaseItem
    from curation.releases.services.cut import release_cut
    from curation.services.lifecycle import instance_create
    from curation.services.projects import project_create
    from curation.states import Status
    from curation.table_shape import is_rectangular, shape_from_row

    project = project_create(name="Fidelity", creator=None, slug="fidelity")
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="fidelity").pk, actor=None)
    labels = expected_labels()
    widths: dict[int, int] = {}  # Table pk -> widest source row
    extracted_headers: dict[int, int] = {}  # Table pk -> the extractor's header rows
    header_disagreements: list[dict[str, Any]] = []
    header_copies = 0
    truths = truth_tables()
    tally: dict[str, Any] = {
        "cells": 0, "cells_right": 0, "cell_misses": [], "caption": 0, "caption_right": 0, "caption_misses": [],
        "notes": 0, "notes_right": 0, "notes_misses": [],
    }  # fmt: skip
    header_checks: list[dict[str, Any]] = []
    papers = 0
    for folder in paper_folders():
        result = paper_ingest(project=project, actor=None, path_or_upload=folder)
        if result.paper is None:
            continue
        papers += 1
        extracted = extract_paper(folder).tables
        paper_key = str(folder.relative_to(ROOT))
        if paper_key in truths:
            score_against_truth(extracted, truths[paper_key], tally, folder.name)
        rows = {t.order: t for t in Table.objects.filter(paper=result.paper)}
        folder_labels = labels.get(str(folder.relative_to(ROOT)), {})
        for order, table in enumerate(extracted):
            widths[rows[order].pk] = widest_row(table)
            extracted_headers[rows[order].pk] = table.header_rows
            stored, page = shape_from_row(rows[order]).header_rows, shape_from_row(rows[order]).html_header_rows()
            header_copies += 2
            for place, count in (("stored", stored), ("paper_page", page)):
                if count != table.header_rows:
                    header_disagreements.append(
                        {
                            "where": place,
                            "table": f"{folder.name}/{order}",
                            "extractor": table.header_rows,
                            "found": count,
                        }
                    )
            key = table.label or (f"Table {table.number}" if table.number else "")
            if key not in folder_labels and f"#{order}" in folder_labels:
                key = f"#{order}"
            if key in folder_labels:
                used = shape_from_row(rows[order]).header_rows
                header_checks.append(
                    {"paper": folder.name, "table": key, "expected": folder_labels[key], "detected": used}
                )
        contexts = list(Context.objects.filter(paper=result.paper, kind=Context.Kind.SHORT).exclude(paragraph=None))
        if not contexts:  # a standalone table: its question is asked on the whole paper
            contexts = list(Context.objects.filter(paper=result.paper, kind=Context.Kind.LONG))
        for index, context in enumerate(contexts):
            instance = instance_create(
                project_id=project.pk,
                actor=None,
                initial_status=Status.VALIDATED,
                context=context,
                batch=batch,
                question=f"Question {index}?",
                answer=["x"],
                answer_form="short",
                answer_source="table",
                answer_type="span",
                scale="",  # chosen: no unit scale (TAT-QA's format refuses a question with none chosen)
            )
            tables = list(context.tables.order_by("order"))
            if index % 2 and tables:
                instance.excluded_tables.set(tables[:1])
            else:
                instance.excluded_paragraphs.set([context.paragraph])

    release = release_cut(project=project, actor=None, name="fidelity", batch_ids=[batch.pk])
    by_key = {f"paper-{t.paper_id}/table-{t.order}": t for t in Table.objects.filter(paper__project=project)}
    frozen = list(release_rows(release))
    instances = dict(ReleaseItem.objects.filter(release=release).values_list("uid", "instance_id"))
    excluded_texts: dict[str, tuple[list[str], list[str]]] = {}
    for item, _, _ in frozen:
        instance = Instance.objects.get(pk=instances[item["uid"]])
        paragraph_texts = list(instance.excluded_paragraphs.values_list("text", flat=True))
        excluded_texts[item["uid"]] = (paragraph_texts, [entry["key"] for entry in item["excluded"]["tables"]])

    table_copies = 0
    faithful_copies = 0
    misshapen: list[dict[str, Any]] = []
    clean = dict.fromkeys(excluded_texts, True)

    def check_table(fmt: str, key: str, grid: list[list[str]], header_rows: int | None = None) -> None:
        nonlocal table_copies, faithful_copies, header_copies
        table_copies += 1
        table = by_key.get(key)
        if header_rows is not None and table is not None:
            header_copies += 1
            if header_rows != extracted_headers.get(table.pk):
                header_disagreements.append(
                    {"where": fmt, "table": key, "extractor": extracted_headers.get(table.pk), "found": header_rows}
                )
        width = widths.get(table.pk) if table is not None else None
        if width is not None and is_rectangular(grid, width):
            faithful_copies += 1
        else:
            misshapen.append({"format": fmt, "table": key, "row_lengths": sorted({len(r) for r in grid})})

    def check_clean(uid: str, fmt: str, text: str, table_keys: list[str]) -> None:
        paragraphs, tables = excluded_texts[uid]
        if any(p in text for p in paragraphs) or any(k in table_keys for k in tables):
            clean[uid] = False

    first_table_key = {
        item["uid"]: ((short or long or {}).get("tables") or [{}])[0].get("key") for item, short, long in frozen
    }
    with tempfile.TemporaryDirectory() as folder:
        for fmt in EXPORT_FORMATS:
            if fmt == "hf":  # a folder of Parquet files per setting and split, not one data file: not read here
                continue
            out = Path(folder) / f"{fmt}.zip"
            write_export_zip(release, fmt, out)
            with zipfile.ZipFile(out) as bundle:
                data = bundle.read(next(n for n in bundle.namelist() if n.startswith("data/")))
            if fmt == "parquet":
                import pyarrow.parquet as pq

                (Path(folder) / "x.parquet").write_bytes(data)
                records = pq.read_table(Path(folder) / "x.parquet").to_pylist()
            elif fmt == "jsonl":
                records = [json.loads(line) for line in data.decode().splitlines()]
            elif fmt == "csv":
                records = [
                    dict(zip(CSV_COLUMNS, row, strict=True)) for row in list(csv.reader(io.StringIO(data.decode())))[1:]
                ]
            else:
                records = json.loads(data)
            for record in records:
                if fmt == "scitat":
                    for t in record["tables"]:
                        check_table(fmt, t["table_id"], t["table"], t["header_rows"])
                    paragraphs = [record.get("paragraph") or {}, *(record.get("paragraphs") or [])]
                    check_clean(
                        record["id"],
                        fmt,
                        json.dumps(paragraphs, ensure_ascii=False),
                        [t["table_id"] for t in record["tables"]],
                    )
                elif fmt == "jsonl":
                    for context in (record["context"], record.get("paper_context")):
                        for t in (context or {}).get("tables") or []:
                            check_table(fmt, t["key"], t["cells"], t["header_rows"])
                        check_clean(
                            record["uid"],
                            fmt,
                            json.dumps((context or {}).get("paragraphs") or [], ensure_ascii=False),
                            [t["key"] for t in (context or {}).get("tables") or []],
                        )
                elif fmt == "parquet":
                    for t in record["tables"]:
                        check_table(fmt, t["key"], t["cells"], t["header_rows"])
                    check_clean(
                        record["uid"],
                        fmt,
                        json.dumps(record["paragraphs"], ensure_ascii=False),
                        [t["key"] for t in record["tables"]],
                    )
                elif fmt == "tatqa":
                    uids = [record["table"]["uid"], *(t["uid"] for t in record.get("more_tables") or [])]
                    # A document's table uid is the paper's table key followed by its context's ("/context-12…").
                    keys = ["/".join(uid.split("/")[:2]) if uid else "" for uid in uids]
                    grids = [record["table"]["table"], *(t["table"] for t in record.get("more_tables") or [])]
                    for key, grid in zip(keys, grids, strict=True):
                        if key:
                            check_table(fmt, key, grid)
                    for question in record["questions"]:
                        check_clean(question["uid"], fmt, json.dumps(record["paragraphs"], ensure_ascii=False), keys)
                elif fmt == "finqa":
                    key = first_table_key.get(record["id"])
                    if key:
                        check_table(fmt, key, record["table"])
                    check_clean(
                        record["id"],
                        fmt,
                        json.dumps([record["pre_text"], record["post_text"]], ensure_ascii=False),
                        [key] if key else [],
                    )
                elif fmt == "csv":
                    check_clean(record["uid"], fmt, json.dumps(record, ensure_ascii=False), [])

    correct = sum(1 for check in header_checks if check["expected"] == check["detected"])
    print(
        json.dumps(
            {
                "papers": papers,
                "tables": len(widths),
                "formats": [fmt for fmt in EXPORT_FORMATS if fmt != "hf"],
                "exported_table_copies": table_copies,
                "rectangular_share": round(faithful_copies / table_copies, 4) if table_copies else None,
                "rectangular_target": 1.0,
                "misshapen": misshapen[:20],
                "header_rows": {
                    "labelled_tables": len(header_checks),
                    "correct": correct,
                    "accuracy": round(correct / len(header_checks), 4) if header_checks else None,
                    "misses": [check for check in header_checks if check["expected"] != check["detected"]],
                },
                "hand_truth": {
                    "tables": sum(len(tables) for tables in truths.values()),
                    "cells": tally["cells"],
                    "cells_accuracy": round(tally["cells_right"] / tally["cells"], 4) if tally["cells"] else None,
                    "cells_target": 0.99,
                    "captions_accuracy": round(tally["caption_right"] / tally["caption"], 4)
                    if tally["caption"]
                    else None,
                    "captions_target": 1.0,
                    "notes_accuracy": round(tally["notes_right"] / tally["notes"], 4) if tally["notes"] else None,
                    "cell_misses": tally["cell_misses"],
                    "caption_misses": tally["caption_misses"],
                    "notes_misses": tally["notes_misses"],
                },
                "header_rows_everywhere": {
                    "copies_checked": header_copies,
                    "same_as_extractor": header_copies - len(header_disagreements),
                    "disagreements": header_disagreements[:20],
                },
                "items_with_exclusions": len(clean),
                "items_clean_in_every_export": sum(clean.values()),
                "exclusion_share": round(sum(clean.values()) / len(clean), 4) if clean else None,
                "exclusion_target": 1.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
