"""lm-evaluation-harness functions of a TaT-Curate release's task, shipped in its harness export as `lm_eval/utils.py`.

    lm_eval --include_path lm_eval --tasks tatcurate_short_cot --model local-chat-completions \\
      --model_args model=MODEL,base_url=http://host:port/v1/chat/completions --apply_chat_template

The samples (../data) hold the prompt the project's method sends; `process_results` is the project's own scorer
(scoring.runs.harness.score_completion), so it needs TaT-Curate importable, as the Inspect task does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"


def load_samples(setting: str, method: str, **_: Any) -> Any:
    """The task's one split (`test`) of the release's samples in a context setting and method."""
    import datasets

    lines = (DATA / f"{setting}-{method}.jsonl").read_text(encoding="utf-8").splitlines()
    samples = [json.loads(line) for line in lines if line.strip()]
    rows = [
        {"id": s["id"], "input": s["input"], "target": " | ".join(s["target"]), "method": method, "setting": setting,
         "item_json": json.dumps(s["metadata"]["item"], ensure_ascii=False)}
        for s in samples
    ]  # fmt: skip
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float | None]:
    """The project's figures for the model's text (EM and F1 as SciTaT's official scripts, correct as a run); a
    figure that does not apply to the question (EM of a free-form answer) is None."""
    from scoring.runs.harness import score_completion

    figures = score_completion(json.loads(doc["item_json"]), results[0], method=doc["method"])
    return {"em": figures["em"], "f1": figures["f1"], "correct": float(bool(figures["is_correct"]))}


def applicable_mean(values: list[float | None]) -> float:
    """The mean over the questions a figure applies to, as a scoring run's."""
    scored = [value for value in values if value is not None]
    return sum(scored) / len(scored) if scored else float("nan")
