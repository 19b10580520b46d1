"""Print JSON with the questions per second of TAT-QA scoring over the whole dev set (official sample predictions)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from scoring.metrics import tatqa  # noqa: E402
from tests.scoring.metrics.shared_data import shared_data_dir  # noqa: E402


def main() -> None:
    """Score the dev set once per mode and report throughput and the figures."""
    data = shared_data_dir() / "tatqa"  # tests/data, or $TATCURATE_SHARED_DIR/data
    gold = json.loads((data / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))
    predictions = json.loads((data / "sample_prediction.json").read_text(encoding="utf-8"))
    results = {}
    for mode in tatqa.MODES:
        started = time.perf_counter()
        report = tatqa.score_dataset(gold, predictions, mode=mode)
        elapsed = time.perf_counter() - started
        results[mode] = {
            "questions": report.count,
            "seconds": round(elapsed, 4),
            "questions_per_second": round(report.count / elapsed, 1),
            "em": round(report.em * 100, 2),
            "f1": round(report.f1 * 100, 2),
        }
    print(json.dumps({"benchmark": "tatqa_dev_metrics_speed", "python": sys.version.split()[0], "modes": results}))


if __name__ == "__main__":
    main()
