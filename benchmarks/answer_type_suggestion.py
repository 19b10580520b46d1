"""Print JSON: how often the answer type and scale are preselected (coverage) and how often a preselection equals the
gold (precision), overall and per gold value, on a TAT-QA-layout file (TAT-QA dev by default)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from curation.answer_types import suggest_answer_type, suggest_scale  # noqa: E402
from curation.table_shape import shape_from_rows  # noqa: E402

DEFAULT = (
    Path(os.environ.get("TATCURATE_SHARED_DIR", REPOSITORY / ".." / "shared")) / "data/tatqa/tatqa_dataset_dev.json"
)


def _summary(counts: Counter[str]) -> dict[str, float | int]:
    return {
        "questions": counts["questions"],
        "coverage": round(counts["preselected"] / counts["questions"], 4) if counts["questions"] else 0.0,
        "precision": round(counts["correct"] / counts["preselected"], 4) if counts["preselected"] else None,
    }


def main() -> None:
    """Suggest from the question, the derivation (as the rationale), the answer, the table and the paragraphs."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DEFAULT, help="a TAT-QA-layout JSON file with gold labels")
    path = parser.parse_args().dataset
    documents = json.loads(path.read_text(encoding="utf-8"))
    totals = {"answer_type": Counter(), "scale": Counter()}
    by_gold: dict[str, dict[str, Counter[str]]] = {"answer_type": defaultdict(Counter), "scale": defaultdict(Counter)}
    for document in documents:
        tables = [shape_from_rows(document["table"]["table"])]
        notes = [paragraph["text"] for paragraph in document.get("paragraphs", [])]
        for question in document["questions"]:
            if "answer_type" not in question:
                continue
            answer = question["answer"] if isinstance(question["answer"], list) else [str(question["answer"])]
            derivation = question.get("derivation", "")
            kind = suggest_answer_type(question=question["question"], rationale=derivation, answer=answer)
            scale = suggest_scale(
                question=question["question"],
                rationale=derivation,
                answer=answer,
                tables=tables,
                notes=notes,
                answer_type=kind.value,
            )
            for field, suggestion in (("answer_type", kind), ("scale", scale)):
                for counts in (totals[field], by_gold[field][question[field] or "none"]):
                    counts["questions"] += 1
                    counts["preselected"] += suggestion.value is not None
                    counts["correct"] += suggestion.value == question[field]
    print(
        json.dumps(
            {
                "benchmark": "answer_type_suggestion",
                "dataset": path.name,
                **{
                    field: {
                        **_summary(totals[field]),
                        "by_gold": {gold: _summary(c) for gold, c in sorted(by_gold[field].items())},
                    }
                    for field in ("scale", "answer_type")
                },
            }
        )
    )


if __name__ == "__main__":
    main()
