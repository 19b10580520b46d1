"""Whole-command speed of file scoring, side by side: the official `tatqa_eval.py` run unchanged, `python -m
scoring.metrics` (no Django) and `manage.py score_predictions`, each over the TAT-QA dev set with the official sample
predictions; plus the in-process scoring throughput of each mode. Prints JSON.

The official script needs numpy, pandas and scipy, which the project does not install: give it an interpreter
that has them and a folder holding tatqa_eval.py, tatqa_metric.py and tatqa_utils.py of NExTplusplus/TAT-QA:

    python -m venv var/official-tatqa && var/official-tatqa/bin/pip install numpy pandas scipy
    # copy the three files into var/official-tatqa/src (the defaults below), or pass --official-dir/--python
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from scoring.metrics import tatqa  # noqa: E402
from tests.scoring.metrics.shared_data import shared_data_dir  # noqa: E402


def _timed(command: list[str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if completed.returncode:
        raise SystemExit(f"{' '.join(command)} failed: {completed.stderr.strip()[-500:]}")
    return elapsed, completed.stdout


def _figures(output: str) -> dict[str, str]:
    """The EM and F1 lines both commands print ("Exact-match accuracy 45.92", "F1 score 58.88")."""
    lines = dict(line.rsplit(" ", 1) for line in output.splitlines() if line.startswith(("Exact-match", "F1 score")))
    return {"em": lines.get("Exact-match accuracy", ""), "f1": lines.get("F1 score", "")}


def main() -> None:
    """Run each command `--repeats` times, interleaved, and report the median seconds and the figures printed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official-dir", type=Path, default=REPOSITORY / "var/official-tatqa/src")
    parser.add_argument("--python", type=Path, default=REPOSITORY / "var/official-tatqa/bin/python")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not (args.official_dir / "tatqa_eval.py").exists() or not args.python.exists():
        raise SystemExit(__doc__)
    data = shared_data_dir() / "tatqa"
    gold, predictions = data / "tatqa_dataset_dev.json", data / "sample_prediction.json"
    commands = {
        "official_tatqa_eval": (
            [str(args.python), "tatqa_eval.py", "--gold_path", str(gold), "--pred_path", str(predictions)],
            args.official_dir,
        ),
        "python_m_scoring_metrics": (
            [sys.executable, "-m", "scoring.metrics", "--format", "tatqa", "--gold", str(gold),
             "--pred", str(predictions)],
            REPOSITORY,
        ),
        "manage_py_score_predictions": (
            [sys.executable, "manage.py", "score_predictions", "--format", "tatqa", "--gold", str(gold),
             "--pred", str(predictions)],
            REPOSITORY,
        ),
    }  # fmt: skip
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    printed: dict[str, dict[str, str]] = {}
    for _ in range(args.repeats):
        for name, (command, cwd) in commands.items():
            elapsed, output = _timed(command, cwd)
            seconds[name].append(elapsed)
            printed[name] = _figures(output)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    official = medians["official_tatqa_eval"]
    whole_command = {
        name: {
            "median_s": round(medians[name], 3),
            "runs_s": [round(value, 3) for value in seconds[name]],
            "official_over_this": round(official / medians[name], 2),
            "printed": printed[name],
        }
        for name in commands
    }
    in_process = {}
    gold_data = json.loads(gold.read_text(encoding="utf-8"))
    prediction_data = json.loads(predictions.read_text(encoding="utf-8"))
    for mode in tatqa.MODES:
        started = time.perf_counter()
        report = tatqa.score_dataset(gold_data, prediction_data, mode=mode)
        elapsed = time.perf_counter() - started
        in_process[mode] = {"questions": report.count, "seconds": round(elapsed, 4),
                            "questions_per_second": round(report.count / elapsed, 1)}  # fmt: skip
    print(
        json.dumps(
            {
                "benchmark": "tatqa_dev_metrics_speed",
                "python": sys.version.split()[0],
                "repeats": args.repeats,
                "same_figures": len({json.dumps(p, sort_keys=True) for p in printed.values()}) == 1,
                "whole_command": whole_command,
                "in_process_scoring": in_process,
            }
        )
    )


if __name__ == "__main__":
    main()
