"""Print JSON with how often the suggested answer type and scale agree with TAT-QA's gold on its dev set."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from curation.answer_types import header_texts, suggested_answer_type, suggested_scale  # noqa: E402


def main() -> None:
    """Suggest from question, derivation (as the rationale), answer and table header; compare with the gold."""
    data = Path(os.environ.get("TATCURATE_SHARED_DIR", REPOSITORY / ".." / "shared")) / "data" / "tatqa"
    documents = json.loads((data / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))
    totals: Counter[str] = Counter()
    by_type: dict[str, Counter[str]] = {}
    for document in documents:
        rows = document["table"]["table"]
        texts = header_texts(caption="", rows=rows, header_rows=3)
        for question in document["questions"]:
            answer = question["answer"] if isinstance(question["answer"], list) else [str(question["answer"])]
            answer_type = suggested_answer_type(
                question=question["question"], rationale=question.get("derivation", ""), answer=answer
            )
            scale = suggested_scale(question=question["question"], answer=answer, table_texts=texts)
            gold_type = question["answer_type"]
            totals["questions"] += 1
            totals["type_agrees"] += answer_type == gold_type
            totals["scale_agrees"] += scale == question["scale"]
            counts = by_type.setdefault(gold_type, Counter())
            counts["questions"] += 1
            counts["type_agrees"] += answer_type == gold_type
    n = totals["questions"]
    print(
        json.dumps(
            {
                "benchmark": "answer_type_suggestion_tatqa_dev",
                "questions": n,
                "answer_type_agreement": round(100 * totals["type_agrees"] / n, 2),
                "scale_agreement": round(100 * totals["scale_agrees"] / n, 2),
                "answer_type_agreement_by_gold_type": {
                    kind: round(100 * c["type_agrees"] / c["questions"], 2) for kind, c in sorted(by_type.items())
                },
            }
        )
    )


if __name__ == "__main__":
    main()
