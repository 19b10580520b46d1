"""The dataset card (README.md) of an export: what the release is, its statistics tables, license and sources."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from curation.exports.records import NO_PROGRAM, UNANSWERABLE
from curation.exports.statistics import presented, settings_rows, table3_rows

FORMAT_NOTES = {
    "scitat": "`data/{name}.json`: a JSON list of SciTaT records (zhxlia/SciTaT keys: id, paragraph, tables, question, "
    "question_type, reasoning, answer) with answer_type, answer_form, answer_source, relevant_tables, scale, split; "
    "an imported record keeps every key of its source (question_c, answer_c, tables[].latex, …) first, in its order.",
    "tatqa": "`data/{name}.json`: TAT-QA's layout, a list of documents {table, paragraphs, questions}; imported "
    "TAT-QA questions keep their uids, orders, native answers and every other key, in the file's order. {left_out}",
    "tatdqa": "`data/{name}.json`: TAT-DQA's layout, a list of documents {doc, questions}. {doc_keys} "
    "Imported documents and questions come back as the file had them. {left_out}",
    "finqa": "`data/{name}.json`: FinQA's layout {id, pre_text, post_text, filename, table, qa{question, program, "
    "exe_ans, …}}. {left_out}",
    "jsonl": "`data/{name}.jsonl`: one instance per line, its context inline (`context`; `paper_context` is the "
    "whole paper when the question was asked on a short context).",
    "parquet": "`data/{name}.parquet`: one row per instance with its context as nested lists; loads with "
    "`datasets.load_dataset('parquet', data_files=…)`.",
    "hf": "`data/{setting}/{split}.parquet`: a Hugging Face `datasets` folder, one Parquet file per context setting "
    "(`short`: the paragraph and tables the question was asked on; `long`: the whole paper) and split, declared as "
    "configs in this card's header, so `datasets.load_dataset(folder, 'short')` reads it as is, and "
    "`load_dataset('parquet', data_files={'test': 'data/short/test.parquet'})` reads one file. Columns as the "
    "`parquet` format's.",
    "csv": "`data/{name}.csv`: questions and answers (answer items joined with ' | ', the exact list in answer_json), "
    "and the context as JSON: tables_json (each table's rectangular grid) and paragraphs_json.",
}


# The questions a layout leaves out (records.left_out_reason), in words: each layout's reasons and its benchmark.
LEFT_OUT = {
    UNANSWERABLE: "of the unanswerable split ({benchmark} has no abstention)",
    NO_PROGRAM: "with no program (FinQA's evaluator scores a question by running its program; span, multi-span and "
    "count answers have none, nor an arithmetic answer whose derivation's steps do not compute it)",
}
LEFT_OUT_OF = {
    "tatqa": ("TAT-QA", (UNANSWERABLE,)),
    "tatdqa": ("TAT-DQA", (UNANSWERABLE,)),
    "finqa": ("FinQA", (UNANSWERABLE, NO_PROGRAM)),
}


def left_out_text(fmt: str, left_out: Mapping[str, int]) -> str:
    """How many questions `fmt`'s layout left out, by each reason it left any out for, and which layouts carry them;
    "" when it left none out."""
    if fmt not in LEFT_OUT_OF:
        return ""
    benchmark, reasons = LEFT_OUT_OF[fmt]
    parts = []
    for reason in reasons:
        if count := left_out.get(reason, 0):
            parts.append(
                f"{count} question{'' if count == 1 else 's'} " + LEFT_OUT[reason].replace("{benchmark}", benchmark)
            )
    if not parts:
        return ""
    return (
        "Left out of this layout: " + " and ".join(parts) + "; the scitat, jsonl, csv, parquet and hf layouts "
        "carry every question."
    )


def doc_keys_text(doc_keys: Mapping[tuple[str, ...], int]) -> str:
    """What the TAT-DQA documents' `doc` holds, from the counts the writer took as it wrote them: imported documents
    keep TAT-DQA's {uid, page, source} (the PDF page), documents curated from LaTeX papers carry only `uid` (the
    paper's key), so the card says which of them the file has, and how many."""
    if not doc_keys:
        return "The file holds no document."
    shapes = sorted(doc_keys.items(), key=lambda shape: (-shape[1], shape[0]))
    parts = [
        f"{{{', '.join(keys)}}} in {count} document{'s' if count != 1 else ''}" if keys else f"no `doc` in {count}"
        for keys, count in shapes
    ]
    text = "`doc` holds " + "; ".join(parts) + "."
    if any("page" in keys for keys in doc_keys):
        text += " `page` and `source` tie a document imported from TAT-DQA to its PDF page."
    if any(keys == ("uid",) for keys in doc_keys):
        text += " A document curated here from a LaTeX paper has no PDF page: its `uid` is the paper's key."
    return text


def _table_lines(header: list[str], rows: Iterable[list[Any]]) -> Iterator[str]:
    """A markdown table's lines (no line ends), one row at a time."""
    yield "| " + " | ".join(header) + " |"
    yield "|" + "---|" * len(header)
    for row in rows:
        yield "| " + " | ".join(str(cell) for cell in row) + " |"


def _table(header: list[str], rows: Iterable[list[Any]]) -> str:
    return "\n".join(_table_lines(header, rows))


def statistics_markdown(stats: Mapping[str, Any]) -> str:
    """SciTaT tables 2–4 and the TAT-QA-style counts as markdown tables."""
    stats = presented(stats)
    parts = [
        f"Questions: {stats.get('questions', 0)} · papers: {stats.get('papers', 0)} · "
        f"contexts: {stats.get('contexts', 0)}"
    ]
    labels = (
        "Questions",
        "Papers",
        "Avg. tables per context",
        "Avg. cells per table",
        "Avg. paragraphs per context",
        "Avg. words per paragraph",
    )
    parts.append(
        "### Contexts (SciTaT table 2)\n\n"
        + _table(["", "Long context", "Short context"], [list(row) for row in settings_rows(stats, labels)])
    )
    sources, rows = table3_rows(stats)
    parts.append(
        "### Answer form × answer source (SciTaT table 3)\n\n"
        + _table(["", *sources, "Total"], [[name, *values, total] for name, values, total in rows])
    )
    rows = []
    for row in stats.get("reasoning_type", {}).values():
        rows.append([row["name"], "", row["count"], row["percent"]])
        rows += [["", sub["name"], sub["count"], sub["percent"]] for sub in row.get("subtypes", {}).values()]
    parts.append("### Reasoning types (SciTaT table 4)\n\n" + _table(["Type", "Subtype", "Questions", "%"], rows))
    for key, title in (
        ("answer_type", "Answer types"),
        ("answer_source", "Answer sources"),
        ("scale", "Scales"),
        ("split", "Splits"),
    ):
        counts = stats.get(key, {})
        parts.append(f"### {title}\n\n" + _table(list(counts), [list(counts.values())]))
    if panel := stats.get("panel"):
        models = panel.get("models", {})
        parts.append(
            f"### Difficulty against the panel ({panel.get('calibrated', 0)} calibrated questions)\n\n"
            + _table(
                ["Model", "Answered correctly", "Asked", "%"],
                [[m, r["answered"], r["asked"], r["percent"]] for m, r in models.items()],
            )
            + "\n\n"
            + _table(["Answered by", *panel.get("k_of_n", {})], [["Questions", *panel.get("k_of_n", {}).values()]])
        )
    lengths = stats.get("answer_length", {})
    parts.append(
        "### Answer length (words)\n\n"
        + _table(list(lengths.get("buckets", {})), [list(lengths.get("buckets", {}).values())])
        + f"\n\nmean {lengths.get('mean', 0)}, median {lengths.get('median', 0)}, max {lengths.get('max', 0)}"
    )
    return "\n\n".join(parts)


def dataset_card(
    release: Mapping[str, Any],
    fmt: str,
    data_files: list[str],
    *,
    papers: Iterable[Mapping[str, Any]] = (),
    doc_keys: Mapping[tuple[str, ...], int] | None = None,
    left_out: Mapping[str, int] | None = None,
) -> Iterator[str]:
    """README.md for the zip, in pieces: metadata, hash, statistics, the source papers (`papers`, consumed as they
    are written), license, citation and the sources' attribution; for tatdqa, `doc_keys` (what the written
    documents' `doc` held) makes the format note say what the file really has, and for tatqa, tatdqa and finqa,
    `left_out` (the questions the layout left out, by reason) says how many it left out and why."""
    name = release["label"]
    license_id = release.get("license") or "other"
    front = f"---\nlicense: {license_id.lower()}\npretty_name: {release['name']}\n{hf_configs(data_files)}---\n"
    sections: list[str | Iterator[str]] = [
        front,
        f"# {release['name']} (version {release['version']})",
        release.get("description") or "",
        f"- Project: {release['project']}\n- Cut at: {release['created_at']}\n- Items: {release['item_count']}\n"
        f"- Content hash (sha256 of the canonical frozen items): `{release['content_hash']}`\n"
        f"- Format: {fmt}"
        + (
            f"\n- Splits by paper, seed {release['split_seed']}, ratios {release['split_ratios']}"
            if release.get("split_seed") is not None
            else ""
        ),
    ]
    if release.get("changelog"):
        sections.append("## Changelog\n\n" + release["changelog"])
    sections.append(
        "## Files\n\n"
        + "\n".join(f"- `{f}`" for f in data_files)
        + "\n\n"
        + FORMAT_NOTES[fmt]
        .replace("{name}", name)
        .replace("{doc_keys}", doc_keys_text(doc_keys or {}))
        .replace("{left_out}", left_out_text(fmt, left_out or {}))
        + "\n\n`SHA256SUMS` holds the sha256 of every other file (check with `sha256sum -c SHA256SUMS`)."
    )
    sections.append("## Statistics\n\n" + statistics_markdown(release.get("statistics", {})))
    if release.get("notes"):
        sections.append("## Notes\n\n" + "\n".join(f"- {note}" for note in release["notes"]))
    sections.append(_papers_section(papers))
    sections.append(f"## License\n\n{release.get('license') or 'Not stated by the project.'}")
    if release.get("citation"):
        sections.append("## Citation\n\n" + release["citation"])
    if release.get("attribution"):
        sections.append(
            "## Sources and attribution\n\nThis release derives from the data below; its license and "
            "attribution apply.\n\n" + release["attribution"]
        )
    written = False
    for section in sections:
        pieces = iter([section]) if isinstance(section, str) else section
        head = next(pieces, "")
        if not head:  # an empty section (no description, no papers) is left out with its separator
            continue
        yield ("\n\n" if written else "") + head
        yield from pieces
        written = True
    yield "\n"


def hf_configs(data_files: Iterable[str]) -> str:
    """The card header's `configs` (Hugging Face datasets): one config per context setting of the files named
    `data/{setting}/{split}.parquet`, its splits those files; "" for a format without such files."""
    settings: dict[str, list[tuple[str, str]]] = {}
    for path in data_files:
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "data" and parts[2].endswith(".parquet"):
            settings.setdefault(parts[1], []).append((parts[2].removesuffix(".parquet"), path))
    lines = ["configs:"] if settings else []
    for number, (setting, files) in enumerate(settings.items()):
        lines += [f"- config_name: {setting}", *(["  default: true"] if number == 0 else []), "  data_files:"]
        lines += [f"  - split: {split}\n    path: {path}" for split, path in files]
    return "".join(f"{line}\n" for line in lines)


def _papers_section(papers: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """The source papers as a table, a row at a time; nothing when there are none."""
    rows = iter(papers)
    first = next(rows, None)
    if first is None:
        return
    lines = _table_lines(
        ["Key", "Title", "arXiv"],
        (
            [p["key"], (p.get("title") or "").replace("|", "\\|"), p.get("arxiv_id") or ""]
            for p in itertools.chain([first], rows)
        ),
    )
    yield "## Source papers\n\nThe questions are asked over the tables and text of these papers:\n\n" + next(lines)
    for line in lines:
        yield "\n" + line
