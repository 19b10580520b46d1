"""Draft with the templates over LaTeX papers' tables and print JSON: drafts, self-check pass rate, the share of
drafts whose stated scale matches their source cells, and per reasoning type drafted/routed.

Each .tex file (or folder) under --fixtures is extracted with the LaTeX pipeline; every table is drafted
(`draft_template_questions`, 2 questions per template), and a paper with several tables is drafted once more over
all of them for the template that asks which table holds a value (table look-up needs more than one table). A
draft's stated scale is the one a new draft starts with (the evidence-based suggestion,
`curation.answer_types.suggest_scale`, over the frozen table); it matches its source cells when a percent scale
comes from a computed percentage, from cells that carry % or from columns whose header names %, and when no other
scale is stated for a computed percentage written without %. A percent scale preselected for a count, a rank, or a
difference of cells that are not percentages is a violation (target: 0). An arithmetic draft's FinQA program is the
one a release's FinQA layout writes from its derivation (`finqa_program_of`: kept when it executes to the answer).
Routed types are SciTaT table 4's subtypes no template exercises (left for a language-model run). The default
fixtures are eleven real papers' tables (benchmarks/papers/README.md).

`reports` drafts the same way over the first --reports tables of TAT-QA dev (financial reports, header rows as the
import counts them) and counts what a reviewer of those drafts rejected (target 0 each): a change asked from a later
year to an earlier one, a "how many times" with a negative answer, a scale note named as the rows' entity ("( in
millions )s"), a row of years compared as an entry, a row whose name states a unit compared with one that does not,
rows ranked, counted or averaged over a column holding both inflows and outflows (a statement's lines, not peers).

    .venv/bin/python benchmarks/template_quality.py [--fixtures DIR] [--reports N] [--tatqa FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.answer_types import suggest_answer_type, suggest_scale  # noqa: E402
from curation.drafting.self_check import draft_problem  # noqa: E402
from curation.drafting.templates import TEMPLATE_SUBTYPES, draft_template_questions  # noqa: E402
from curation.exports.derivation import finqa_program_of  # noqa: E402
from curation.latex import extract_paper  # noqa: E402
from curation.table_shape import shape_from_extracted, shape_from_rows  # noqa: E402
from curation.taxonomy import DEFAULT_TAXONOMY  # noqa: E402
from curation.toolkit.numbers import parse_numeric  # noqa: E402
from curation.toolkit.tools import ToolBox  # noqa: E402

DEFAULT_FIXTURES = ROOT / "benchmarks" / "papers" / "templates"
SHARED = Path(os.environ.get("TATCURATE_SHARED_DIR", ROOT / ".." / "shared"))
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_CHANGES = ("change_between_columns", "percentage_change", "largest_increase")
_SCALE_NOTE = re.compile(r"thousands|millions|billions|£m|€ ?m")
_UNIT_NOTE = re.compile(r"\(in [^)]*\)|\bper \w+", re.IGNORECASE)
_POPULATION = {"extreme_row", "extreme_value", "column_mean", "subset_mean", "rank_position", "top_k"}
_POPULATION |= {"count_beyond_row", "above_mean", "rows_above_mean", "largest_increase"}


def _reports(path: Path, count: int) -> dict[str, int]:
    """What a reviewer rejects in the drafts over `count` report tables (see the module's docstring)."""
    found: Counter[str] = Counter()
    for item in json.loads(path.read_text())[:count]:
        rows = item["table"]["table"]
        found["tables"] += 1
        table = shape_from_rows(rows).tool_input("t")  # as a context's imported table is drafted
        shaped = ToolBox([table]).tables[0]
        for draft in draft_template_questions([table], seed=0, per_template=2):
            slots, words = draft["slots"], " ".join([draft["question"], *draft["answer"]])
            found["drafts"] += 1
            if draft["template_id"] in _CHANGES:
                years = [[int(y) for y in _YEAR.findall(slots[key])] for key in ("column_a", "column_b")]
                found["changes_with_years"] += all(years)
                found["changes_backwards"] += all(years) and years[0] > years[1]
            if draft["template_id"] in _POPULATION:
                found["population_drafts"] += 1
                asked = [shaped.columns.index(slots[key]) for key in ("column", "column_a") if key in slots]
                signs = {(value > 0) - (value < 0) for cells in shaped.cells for value in _values(cells, asked)}
                found["population_over_signed_lines"] += {-1, 1} <= signs
            found["negative_ratios"] += draft["template_id"] == "cell_ratio" and draft["answer"][0].startswith("-")
            entity = rows[0][0].strip().lower() if rows and rows[0] else ""
            found["scale_note_as_entity"] += bool(_SCALE_NOTE.search(entity)) and entity in words.lower()
            named = [str(slots[key]) for key in ("row_a", "row_b") if key in slots]
            found["rows_of_two_units_compared"] += len({_UNIT_NOTE.search(name) is not None for name in named}) == 2
            found["year_row_as_entry"] += any(
                all(_YEAR.fullmatch(cell.strip()) for cell in row[1:] if cell.strip()) and sum(map(bool, row[1:])) > 1
                for row in rows[1:]
                if row[0] and row[0] in words
            )
    return dict(found)


def _values(cells: list[str], columns: list[int]) -> list[float]:
    return [parsed.value for index in columns if (parsed := parse_numeric(cells[index]))]


def _read_cells(draft: dict) -> list[str]:
    cells: list[str] = []
    for action in draft["essential_actions"]:
        if action["tool"] == "get_cell":
            cells.append(str(action["result"]))
        elif action["tool"] == "get_column":
            cells += [str(value) for value in action["result"].values()]
    return cells


def _scale_matches(draft: dict, scale: str | None, cells: list[str]) -> bool:
    if scale is None:
        return True  # nothing preselected: nothing stated that could be wrong
    percent_cells = [bool((parsed := parse_numeric(cell)) and parsed.is_percent) for cell in cells]
    computes_percent = any(
        a["tool"] in ("proportion",) or (a["tool"] == "multiply" and 100 in a["arguments"].get("numbers", []))
        for a in draft["essential_actions"]
    )
    columns = [str(a["arguments"].get("column", "")) for a in draft["essential_actions"] if "column" in a["arguments"]]
    percent_columns = bool(columns) and all("%" in column or "percent" in column.lower() for column in columns)
    if scale == "percent":
        return computes_percent or percent_columns or (bool(percent_cells) and all(percent_cells))
    return not computes_percent or draft["answer"][0].endswith("%")


def _percent_violation(draft: dict, scale: str | None, cells: list[str]) -> bool:
    """A percent scale preselected for a count, a rank, or a difference of cells that are not percentages."""
    if scale != "percent":
        return False
    if draft["reasoning_subtype"] in ("counting", "ranking"):
        return True
    all_percent = bool(cells) and all((parsed := parse_numeric(cell)) and parsed.is_percent for cell in cells)
    return draft["essential_actions"][-1]["tool"] == "subtract" and not all_percent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    parser.add_argument("--reports", type=int, default=200, help="how many TAT-QA dev tables to draft over")
    parser.add_argument("--tatqa", type=Path, default=SHARED / "data/tatqa/tatqa_dataset_dev.json")
    options = parser.parse_args()
    sources = sorted(p for p in options.fixtures.iterdir() if p.suffix == ".tex" or p.is_dir())
    totals: Counter[str] = Counter()
    drafted: Counter[str] = Counter()

    def tally(drafts: list[dict], tables: list[dict], rejected: list[dict]) -> None:
        totals["rejected"] += len(rejected)
        for draft in drafts:
            totals["drafts"] += 1
            drafted[draft["reasoning_subtype"]] += 1
            totals["pass"] += draft_problem(draft, tables) is None
            if not draft["is_answerable"]:
                continue
            tools = [action.get("tool", "") for action in draft["essential_actions"]]
            said = {key: draft[key] for key in ("question", "rationale", "answer")}
            answer_type = suggest_answer_type(**said, tools=tools).value  # as a new draft is given both
            scale = suggest_scale(
                **said,
                answer_type=answer_type,
                tables=[
                    shape_from_rows(table["rows"], header_rows=1, label=table["label"], caption=table["caption"])
                    for table in tables
                ],
                actions=draft["essential_actions"],
            ).value
            totals["answerable"] += 1
            totals["scale_matches"] += _scale_matches(draft, scale, _read_cells(draft))
            totals["percent_violations"] += _percent_violation(draft, scale, _read_cells(draft))
            totals["scale_preselected"] += scale is not None
            if answer_type == "arithmetic":  # FinQA's layout writes a program from the derivation that computes it
                item = {"answer_type": answer_type, "answer": draft["answer"], "scale": scale}
                totals["arithmetic"] += 1
                totals["finqa_program"] += bool(
                    finqa_program_of(item | {"essential_actions": draft["essential_actions"]})
                )

    for source in sources:
        paper_tables = []
        for position, table in enumerate(extract_paper(source).tables):
            shape = shape_from_extracted(table)
            tool_table = shape.tool_input(f"{source.stem}:{position}", position)
            paper_tables.append(tool_table)
            totals["tables"] += 1
            rejected: list[dict] = []
            drafts = draft_template_questions([tool_table], seed=0, per_template=2, rejected=rejected)
            tally(drafts, [tool_table], rejected)
        if len(paper_tables) > 1:  # which table holds a value: asked of a context holding the paper's tables
            rejected = []
            drafts = draft_template_questions(
                paper_tables, seed=0, per_template=2, rejected=rejected, template_ids=["table_lookup"]
            )
            tally(drafts, paper_tables, rejected)
    subtypes = [code for _, _, _, rows in DEFAULT_TAXONOMY for code, *_ in rows]
    generated = totals["drafts"] + totals["rejected"]
    print(
        json.dumps(
            {
                "benchmark": "template_quality",
                "sources": len(sources),
                "tables": totals["tables"],
                "drafts": totals["drafts"],
                "dropped_by_self_check": totals["rejected"],
                "self_check_pass_rate_before_dropping": round(totals["drafts"] / generated, 4) if generated else None,
                "self_check_pass_rate_of_kept": round(totals["pass"] / totals["drafts"], 4)
                if totals["drafts"]
                else None,
                "scale_preselected_share": round(totals["scale_preselected"] / totals["answerable"], 4)
                if totals["answerable"]
                else None,
                "scale_matches_source_cells": round(totals["scale_matches"] / totals["answerable"], 4)
                if totals["answerable"]
                else None,
                "percent_scale_on_count_rank_or_difference": totals["percent_violations"],
                "arithmetic_drafts": totals["arithmetic"],
                "finqa_program_share_of_arithmetic": round(totals["finqa_program"] / totals["arithmetic"], 4)
                if totals["arithmetic"]
                else None,
                "reports": _reports(options.tatqa, options.reports) if options.tatqa.is_file() else None,
                "by_reasoning_type": {
                    code: {"drafted": drafted[code], "routed": code not in TEMPLATE_SUBTYPES} for code in subtypes
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
