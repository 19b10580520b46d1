"""FinQA program accuracy, its sympy forms computed once per form beside once per comparison, side by side over
FinQA dev (the first 200 questions, tests/data): the gold programs scored against themselves and against the same
programs with each `add` and `multiply` written the other way round (equal by the official `equal_program`). Prints
JSON: seconds of each, their ratio, and whether both give the same figures.

    .venv/bin/python benchmarks/finqa_program_speed.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.metrics import finqa
from tests.scoring.metrics.shared_data import shared_data_dir

_COMMUTATIVE = re.compile(r"(add|multiply)\(([^(),]+), ([^(),]+)\)")


def _score(records: list[dict], predictions: dict[str, list[str]]) -> tuple[float, dict]:
    started = time.perf_counter()
    report = finqa.score_dataset(records, predictions)
    return time.perf_counter() - started, {"execution": report.execution_accuracy, "program": report.program_accuracy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    records = json.loads((shared_data_dir() / "finqa" / "finqa_dev_200.json").read_text(encoding="utf-8"))
    programs = {str(r["id"]): r["qa"]["program"] for r in records}
    predictions = {
        "gold": {uid: finqa.program_tokenization(program) for uid, program in programs.items()},
        "commuted": {
            uid: finqa.program_tokenization(_COMMUTATIVE.sub(r"\1(\3, \2)", program))
            for uid, program in programs.items()
        },
    }
    once_per_form = finqa._simplified
    every_comparison = once_per_form.__wrapped__  # sympy.simplify each time, as evaluate.py calls it
    seconds: dict[str, dict[str, list[float]]] = {name: {"once": [], "every": []} for name in predictions}
    figures: dict[str, set[str]] = {name: set() for name in predictions}
    for _ in range(args.repeats):
        for name, predicted in predictions.items():
            for way, simplified in (("once", once_per_form), ("every", every_comparison)):
                once_per_form.cache_clear()
                finqa._simplified = simplified
                try:
                    elapsed, result = _score(records, predicted)
                finally:
                    finqa._simplified = once_per_form
                seconds[name][way].append(elapsed)
                figures[name].add(json.dumps(result, sort_keys=True))
    print(
        json.dumps(
            {
                "benchmark": "finqa_program_speed",
                "questions": len(records),
                "repeats": args.repeats,
                **{
                    name: {
                        "once_per_form_s": round(statistics.median(runs["once"]), 3),
                        "every_comparison_s": round(statistics.median(runs["every"]), 3),
                        "ratio": round(statistics.median(runs["every"]) / statistics.median(runs["once"]), 1),
                        "same_figures": len(figures[name]) == 1,
                        "figures": json.loads(next(iter(figures[name]))),
                    }
                    for name, runs in seconds.items()
                },
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
