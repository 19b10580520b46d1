"""Per-prediction metrics and per-run aggregates (pure: plain dicts in, plain dicts out; no Django).

Short-form questions get SciTaT EM, free-form ones F1 and BERTScore; TAT-QA/TAT-DQA data also gets TAT-QA EM/F1 with
scale, FinQA data execution accuracy, tool-loop outputs precision/recall against essential actions. A failed
prediction counts as an empty answer (wrong), so a flaky endpoint cannot raise a score by dropping hard items.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from curation.toolkit.extraction import is_abstention
from curation.toolkit.tools import ToolBox
from scoring.methods.base import tool_tables
from scoring.metrics import aggregate, scitat, tatqa, toolcalls
from scoring.metrics.benchmarks import SCORERS, ItemPrediction

# SciTaT §4.4 calls a free-form answer an error below BERTScore 60; without BERTScore, F1 below 0.5.
FREE_FORM_CORRECT_BERTSCORE = 0.6
FREE_FORM_CORRECT_F1 = 0.5
BREAKDOWNS = ("reasoning_type", "answer_form", "answer_source")
# The figures of a run (key → label on the run page), each a mean with its paper-clustered bootstrap CI.
FIGURES = {
    "em": "EM (short-form, fixed mode)",
    "f1": "F1 (free-form, fixed mode)",
    "bertscore": "BERTScore (free-form)",
    "scitat_em": "SciTaT EM (short-form, official)",
    "scitat_f1": "SciTaT F1 (free-form, official)",
    "tatqa_em": "TAT-QA EM (with scale)",
    "tatqa_f1": "TAT-QA F1 (with scale)",
    "finqa_execution": "FinQA execution accuracy",
    "tool_precision": "Tool precision",
    "tool_recall": "Tool recall",
    "judge": "Judge's score (free-form; not an official metric)",
}


def is_short_form(item: Mapping[str, Any]) -> bool:
    """The curated answer form when the item has one, else SciTaT's at-most-five-tokens rule."""
    form = item.get("answer_form")
    if form in ("short", "free"):
        return form == "short"
    return scitat.is_short_form([str(a) for a in item.get("answer") or []])


def tool_calls_of(steps: Iterable[Any]) -> list[toolcalls.ToolCall]:
    """Calls stored as {tool|name, arguments, result, is_error?} as metric ToolCalls: a tool loop's trace (an
    unparseable JSON action is an error, not a call of some tool) or an item's essential actions."""
    return [
        toolcalls.ToolCall(
            name=str(step.get("tool") or step.get("name")),
            arguments=step.get("arguments") or {},
            result=step.get("result"),
            is_error=bool(step.get("is_error")),
        )
        for step in steps
        if isinstance(step, Mapping)
    ]


# The tool box of the last few frozen contexts, by identity: a run's chunk holds one mapping per context and scores
# many items of it, so the tables are read into a tool box once, not once per item. The entry keeps its context
# alive, so an identity is never reused while it is cached.
_TOOLBOXES: dict[int, tuple[Mapping[str, Any] | None, ToolBox]] = {}
_TOOLBOXES_LOCK = threading.Lock()


def names_now_of(context: Mapping[str, Any] | None) -> Callable[[Any], Any]:
    """`ToolBox.names_now` over a frozen context's tables (the table and row a call names, as named today)."""
    with _TOOLBOXES_LOCK:  # a run scores on several threads
        cached = _TOOLBOXES.get(id(context))
        if cached is None or cached[0] is not context:
            if len(_TOOLBOXES) >= 32:
                del _TOOLBOXES[next(iter(_TOOLBOXES))]
            cached = _TOOLBOXES[id(context)] = (context, ToolBox(tool_tables(context)))
    return cached[1].names_now


def item_metrics(
    item: Mapping[str, Any],
    *,
    answer: Sequence[str],
    scale: str,
    tool_trace: Sequence[Mapping[str, Any]] = (),
    program_tokens: Sequence[str] | None = None,
    bertscorer: scitat.TextScorer | None = None,
    scale_mode: tatqa.ScaleMode = "predicted",
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every figure that applies to one prediction of one item, plus `is_correct` and token counts. `context` (the
    item's frozen context) lets a tool call name a table by its label or its reader name, as the tools accept.

    `scale_mode="ignore"` scores TAT-QA answers without the predicted scale (the eval card's option for zero-shot
    models, which rarely give one); SciTaT EM and F1 never use the scale."""
    gold = [str(a) for a in item.get("answer") or []]
    answer = [str(a) for a in answer if str(a).strip()]
    short = is_short_form(item)
    metrics: dict[str, Any] = {
        "short_form": short,
        "answer_tokens": sum(len(a.split()) for a in answer),
        "gold_tokens": sum(len(g.split()) for g in gold),
        "is_answerable": item.get("is_answerable") is not False,
        # Whether the answer is only a refusal is asked last (curation's answer reading), after every metric module.
        "abstained": None,
    }
    if metrics["is_answerable"]:
        try:
            score = scitat.score_question(str(item.get("uid")), gold, answer or None, mode="official")
        except (TypeError, ValueError):
            score = scitat.score_question(str(item.get("uid")), gold, answer or None, mode="fixed")
        metrics["em"], metrics["f1"] = score.em, score.f1
        metrics["bertscore"] = None
        if not short and bertscorer is not None:
            metrics["bertscore"] = bertscorer.f1_many([". ".join(answer)], [". ".join(gold)])[0] if answer else 0.0
        metrics["source_format"] = item.get("source_format") or "scitat"
        # The item's benchmark, chosen once; a program is also executed as FinQA's evaluate.py would.
        scorers = [SCORERS.get(metrics["source_format"])]
        if item.get("program") and metrics["source_format"] != "finqa":
            scorers.append(SCORERS["finqa"])
        prediction = ItemPrediction(answer, scale, program_tokens, scale_mode)
        for scorer in filter(None, scorers):
            metrics.update(scorer.item_native(item, prediction))
        if tool_trace or item.get("essential_actions"):
            calls = tool_calls_of(tool_trace)
            essentials = tool_calls_of(item.get("essential_actions") or [])
            scored = toolcalls.score_tool_calls(calls, essentials, names=names_now_of(context))
            metrics.update(
                tool_calls=scored.scored_calls,
                tool_error=scored.has_error,
                tool_precision=scored.precision if essentials else None,
                tool_recall=scored.recall if essentials else None,
            )
        if short:
            metrics["is_correct"] = metrics["em"] == 1.0
        elif metrics["bertscore"] is not None:
            metrics["is_correct"] = metrics["bertscore"] >= FREE_FORM_CORRECT_BERTSCORE
        else:
            metrics["is_correct"] = (metrics["f1"] or 0.0) >= FREE_FORM_CORRECT_F1
    else:
        # An unanswerable question's gold is the abstention: abstaining is right, any answer is wrong. It is kept
        # out of EM/F1 (no gold text to match), so those stay comparable with the papers' answerable figures.
        metrics.update(short_form=None, em=None, f1=None, bertscore=None)
    metrics["abstained"] = is_abstention(answer)
    if not metrics["is_answerable"]:
        metrics["is_correct"] = metrics["abstained"]
    return metrics


def _figures(records: list[Mapping[str, Any]], keys: Iterable[str], seed: int, resamples: int) -> dict[str, Any]:
    """The estimate of each of `keys` over the records that have it, clustered by paper (else by question), with the
    spread over questions beside it (± one SD, which the meta paper reports)."""
    figures = {}
    for key in keys:
        chosen = [r for r in records if r.get(key) is not None]
        if not chosen:
            continue
        values, clusters = [float(r[key]) for r in chosen], [r.get("paper") or r.get("uid") for r in chosen]
        estimate = asdict(aggregate.bootstrap_mean(values, seed=seed, resamples=resamples, clusters=clusters))
        estimate["sd"] = (sum((value - estimate["mean"]) ** 2 for value in values) / len(values)) ** 0.5
        figures[key] = estimate
    return figures


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def run_summary(
    records: Sequence[Mapping[str, Any]], *, seed: int = 0, resamples: int = aggregate.DEFAULT_RESAMPLES
) -> dict[str, Any]:
    """Aggregate per-prediction records ({metrics…, status, uid, paper, reasoning_type, answer_form, answer_source,
    tokens_out}) into figures with paper-clustered bootstrap CIs, breakdowns, tool figures and token statistics."""
    records = list(records)
    summary: dict[str, Any] = {
        "count": len(records),
        "scored": sum(1 for r in records if r.get("status") == "scored"),
        "failed": sum(1 for r in records if r.get("status") == "failed"),
        "correct": sum(1 for r in records if r.get("is_correct")),
        "short_form_count": sum(1 for r in records if r.get("short_form")),
        "free_form_count": sum(1 for r in records if r.get("short_form") is False),
        "figures": _figures(records, FIGURES, seed, resamples),
    }
    summary["headline"] = native_headline(records, summary["figures"])
    scales = [r["scale_correct"] for r in records if r.get("scale_correct") is not None]
    if scales:
        summary["scale_accuracy"] = sum(scales) / len(scales)
    summary["breakdowns"] = breakdowns = {}
    for attribute in BREAKDOWNS:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for record in records:
            groups.setdefault(str(record.get(attribute) or "—"), []).append(record)
        breakdowns[attribute] = {
            key: {"count": len(members), **_figures(members, ("em", "f1", "bertscore"), seed, resamples)}
            for key, members in sorted(groups.items())
        }
    tool_records = [r for r in records if r.get("tool_error") is not None]
    if tool_records:
        with_error = [r for r in tool_records if r["tool_error"]]
        without_error = [r for r in tool_records if not r["tool_error"]]
        summary["tool"] = {
            "outputs": len(tool_records),
            "error_rate": len(with_error) / len(tool_records),
            "mean_calls": _mean([float(r.get("tool_calls") or 0) for r in tool_records]),
            "accuracy_with_error": _share(with_error),
            "accuracy_without_error": _share(without_error),
            "with_error": len(with_error),
            "without_error": len(without_error),
        }
    summary["tokens"] = tokens = {}
    for name, is_short in (("short_form", True), ("free_form", False)):
        members = [r for r in records if r.get("short_form") is is_short]
        tokens[name] = {
            "count": len(members),
            "answer_tokens": _mean([float(r.get("answer_tokens") or 0) for r in members]),
            "gold_tokens": _mean([float(r.get("gold_tokens") or 0) for r in members]),
            "completion_tokens": _mean([float(r["tokens_out"]) for r in members if r.get("tokens_out") is not None]),
        }
    summary["accuracy"] = _share(records)
    summary["answerability"] = answerability_summary(records)
    return summary


def native_headline(records: Sequence[Mapping[str, Any]], figures: Mapping[str, Any]) -> dict[str, Any]:
    """The run's headline figures: the native metric of its release's format, each with its label, plus the mode
    the SciTaT figures follow and how many questions the official SciTaT script could not score."""
    # The release's format as its predictions name it (the most common); SciTaT's when none does (a run of
    # unanswerable questions only, which no benchmark scores).
    formats = [str(r["source_format"]) for r in records if r.get("source_format")]
    fmt = max(sorted(set(formats)), key=formats.count) if formats else "scitat"
    scorer = SCORERS.get(fmt, SCORERS["scitat"])
    return {
        "format": fmt,
        "benchmark": scorer.benchmark,
        "scitat_mode": "official" if fmt == "scitat" else None,
        "unscorable_by_official": sum(1 for r in records if r.get("scitat_unscorable")),
        "figures": [
            {"key": key, "label": label, **(figures.get(key) or {})}
            for key, label in scorer.native_metrics
            if key in figures
        ],
    }


def answerability_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Accuracy on answerable and on unanswerable questions apart (meta paper §3.4): on the unanswerable ones it is
    the share the model abstained on; abstentions on answerable questions are counted too (they are errors)."""
    answerable = [r for r in records if r.get("is_answerable") is not False]
    unanswerable = [r for r in records if r.get("is_answerable") is False]
    return {
        "answerable": {"count": len(answerable), "accuracy": _share(answerable)},
        "unanswerable": {"count": len(unanswerable), "accuracy": _share(unanswerable)},
        "abstained_on_answerable": sum(1 for r in answerable if r.get("abstained")),
    }


def _share(records: Sequence[Mapping[str, Any]]) -> float | None:
    return sum(1 for r in records if r.get("is_correct")) / len(records) if records else None
