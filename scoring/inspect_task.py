"""An Inspect AI task over one TaT-Curate release, shipped in the release's `inspect` export beside its data.

    inspect eval tatcurate_task.py -T setting=short -T method=cot --model openai-api/local/MODEL
    (LOCAL_BASE_URL=http://host:port/v1 LOCAL_API_KEY=…: any OpenAI-compatible endpoint)

The samples hold the prompt the project's method sends (Direct or CoT, the same text); the scorer is the project's
own (scoring.runs.harness.score_completion: the method's answer extraction and a scoring run's metrics), so it needs
TaT-Curate importable (run it from the project's virtualenv, or `pip install` the project). Each score keeps the
breakdowns (reasoning type, answer form, answer source, split) in its metadata; its log uploads back as a run.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import Metric, SampleScore, Score, Target, mean, metric, scorer
from inspect_ai.solver import TaskState, generate

from scoring.runs.harness import HARNESS_METHODS, HARNESS_SETTINGS, score_completion

DATA = Path(__file__).resolve().parent / "data"


@metric
def applicable_mean() -> Metric:
    """The mean over the questions a figure applies to (EM: short-form answers, F1: free-form ones), as a run's."""

    def compute(scores: list[SampleScore]) -> float:
        values = [float(s.score.value) for s in scores if s.score.value is not None]  # type: ignore[arg-type]
        return sum(values) / len(values) if values else float("nan")

    return compute


@scorer(metrics={"em": [applicable_mean()], "f1": [applicable_mean()], "correct": [mean()]})
def tatcurate_metrics():
    """The project's per-question figures (EM and F1 as SciTaT's official scripts; correct as a scoring run)."""

    async def score(state: TaskState, target: Target) -> Score:
        figures = score_completion(state.metadata["item"], state.output.completion, method=state.metadata["method"])
        return Score(
            value={"em": figures["em"], "f1": figures["f1"], "correct": float(bool(figures["is_correct"]))},
            answer=" | ".join(figures["answer"]),
            metadata={"figures": figures, **{k: v for k, v in state.metadata.items() if k != "item"}},
        )

    return score


@task
def tatcurate(setting: str = "short", method: str = "direct") -> Task:
    """The release's questions in one context setting, asked with one of the project's methods."""
    if setting not in HARNESS_SETTINGS or method not in HARNESS_METHODS:
        raise ValueError(f"setting is one of {HARNESS_SETTINGS}, method one of {HARNESS_METHODS}")
    return Task(
        dataset=json_dataset(str(DATA / f"{setting}-{method}.jsonl")), solver=generate(), scorer=tatcurate_metrics()
    )
