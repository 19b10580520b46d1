"""Reproduce the layout of SciTaT table 5 and the meta-level paper's table 2 from uploaded-predictions runs.

A release of real TAT-QA dev questions is cut into a throwaway SQLite database; one predictions file per cell is
uploaded through the upload path researchers use (`upload_run_create`, declaring the method, setting, n-shot and
tool set the file comes from): 3 models × 4 methods × 2 settings for table 5, and 2 models × 3 n-shots with all
tools plus one data-tools run each for table 2 / figure 2b (JSONL lines with a `tool_trace`). Each model × method
answers a fixed share of the questions with the gold answer, so the figures are known in advance.

Prints JSON: every expected row and cell, which are missing (target: none), the Δ rows, the rows of table 2, and
whether runs differing only in n-shot or tool set stayed apart. TAT-QA items carry no essential actions, so
table 2's precision and recall are "—" here (a template-drafted release has them); accuracy and Err. are filled.

    .venv/bin/python benchmarks/paper_tables.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

MODELS = ("llama3.1-8b", "llama3.1-70b", "gpt-4o")
TABLE5_METHODS = ("direct", "cot", "pot", "car")
TOOL_MODELS = ("qwen3-4b", "qwen3-32b")
SHOTS = (0, 1, 3)


def _share(model: str, method: str, setting: str) -> float:
    """The share of questions a synthetic model × method answers right (CaR best, as in the paper)."""
    base = {"direct": 0.1, "cot": 0.4, "pot": 0.25, "car": 0.6, "tool": 0.5}[method]
    return min(1.0, base + 0.1 * (MODELS + TOOL_MODELS).index(model) / 2 + (0.05 if setting == "short" else 0.0))


def _lines(items: list[dict[str, Any]], share: float, *, tool_trace: bool = False, errors: int = 0) -> bytes:
    right = round(share * len(items))
    lines = []
    for index, item in enumerate(items):
        answer = item["answer"] if index < right else ["not the answer"]
        line: dict[str, Any] = {"uid": item["uid"], "answer": answer, "scale": item.get("scale", "")}
        if tool_trace:
            failed = index < errors
            line["tool_trace"] = [
                {"name": "list_tables", "arguments": {}, "result": ["Table 1"], "is_error": False},
                {"name": "retrieve_value", "arguments": {"row": "x"}, "result": "no such row", "is_error": failed},
            ]
        lines.append(json.dumps(line))
    return "\n".join(lines).encode()


def reproduce(*, release: Any, actor: Any = None) -> dict[str, Any]:
    """Upload one predictions file per cell of table 5 and table 2 and read the comparison back (a member's view)."""
    from scoring.runs import selectors
    from scoring.runs.uploads import upload_run_create

    items = [item.data for item in release.items.order_by("position")]
    started = time.perf_counter()
    uploads = 0
    for model in MODELS:
        for method in TABLE5_METHODS:
            for setting in ("long", "short"):
                upload_run_create(
                    release=release, actor=actor, format="jsonl", name=f"{model}-{method}-{setting}.jsonl",
                    content=_lines(items, _share(model, method, setting)), label=model, method=method,
                    setting=setting,
                )  # fmt: skip
                uploads += 1
    for model in TOOL_MODELS:
        for shot in SHOTS:
            upload_run_create(
                release=release, actor=actor, format="jsonl", name=f"{model}-{shot}shot.jsonl",
                content=_lines(items, _share(model, "tool", "short"), tool_trace=True, errors=shot),
                label=model, method="tool", few_shot=shot, tools="all",
            )  # fmt: skip
            uploads += 1
        upload_run_create(
            release=release, actor=actor, format="jsonl", name=f"{model}-data-tools.jsonl",
            content=_lines(items, _share(model, "tool", "short") / 2, tool_trace=True),
            label=model, method="tool", few_shot=0, tools="data",
        )  # fmt: skip
        uploads += 1
    scored_s = time.perf_counter() - started
    reader = actor if actor is not None else release.project.members.first()
    tables = selectors.comparison(user=reader, release=release)["tables"]
    return summarise(tables, uploads=uploads, scored_s=scored_s)


def summarise(tables: dict[str, Any], *, uploads: int, scored_s: float) -> dict[str, Any]:
    """Which expected rows and cells of both tables are present, the Δ rows and the rows of table 2."""
    labels = {"direct": "Direct QA", "cot": "CoT", "pot": "PoT", "car": "CaR"}
    table5 = {(row["stub"][0], row["stub"][1]): row for row in tables["table5"]["rows"]}
    expected5 = [(m, labels[method]) for m in MODELS for method in TABLE5_METHODS] + [(m, "Δ") for m in MODELS]
    missing5 = [
        f"{model} / {method} / {column['key']}"
        for model, method in expected5
        for index, column in enumerate(tables["table5"]["columns"])
        if (model, method) not in table5 or table5[(model, method)]["cells"][index]["value"] is None
    ]
    table2 = {(row["stub"][0], row["stub"][1]): row for row in tables["table2"]["rows"]}
    expected2 = [(m, f"{shot}-shot") for m in TOOL_MODELS for shot in SHOTS]
    missing2 = [f"{m} / {s}" for m, s in expected2 if (m, s) not in table2]
    figure2b = {row["stub"][0]: [cell["value"] for cell in row["cells"]] for row in tables["figure2b"]["rows"]}
    return {
        "uploads": uploads,
        "upload_and_score_s": round(scored_s, 2),
        "table5": {
            "rows": len(tables["table5"]["rows"]),
            "expected_rows": len(expected5),
            "cells_missing": missing5,
            "delta": {m: [c["text"] for c in table5[(m, "Δ")]["cells"]] for m in MODELS if (m, "Δ") in table5},
            "bold_per_model": {m: _bold_methods(table5, m, labels) for m in MODELS},
        },
        "table2": {
            "rows": {f"{m} / {s}": [c["text"] for c in row["cells"]] for (m, s), row in table2.items()},
            "expected_rows": len(expected2),
            "rows_missing": missing2,
            "columns": [column["label"] for column in tables["table2"]["columns"]],
        },
        "figure2b": figure2b,
        "n_shot_and_tools_apart": not missing2
        and len(table2) == len(expected2)
        and len(figure2b) == len(TOOL_MODELS) * len(SHOTS),
    }


def _bold_methods(table5: dict[tuple[str, str], Any], model: str, labels: dict[str, str]) -> list[str]:
    """The methods whose long-context EM is bold for a model (the paper bolds the best per model and setting)."""
    rows = [table5.get((model, labels[method])) for method in TABLE5_METHODS]
    return [row["stub"][1] for row in rows if row and row["cells"][0]["is_best"]]


def main() -> None:
    from _django import setup_django

    setup_django()
    from django.contrib.auth import get_user_model

    from curation.datasets.services import dataset_import
    from curation.models import Membership, Project
    from curation.states import Role

    shared = Path(__import__("os").environ.get("TATCURATE_SHARED_DIR", "/work/shared")) / "data" / "tatqa"
    data = json.loads((shared / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))[:3]
    for document in data:
        document["questions"] = document["questions"][:6]
    manager = get_user_model().objects.create_user("bench-manager")
    project = Project.objects.create(name="Paper tables", slug="paper-tables")
    Membership.objects.create(project=project, user=manager, role=Role.MANAGER)
    release = dataset_import(
        project=project, actor=manager, format="tatqa", source_name="tatqa-dev.json",
        content=json.dumps(data).encode(), as_release="paper-tables",
    ).release  # fmt: skip
    print(
        json.dumps(
            {"questions": release.items.count(), **reproduce(release=release, actor=manager)},
            indent=2,
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
