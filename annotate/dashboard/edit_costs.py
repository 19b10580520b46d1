"""How much an annotator changed a draft, field by field (pure; no Django): normalised edit distances and their
aggregates by group. rapidfuzz computes the Levenshtein distance."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz.distance import Levenshtein

# The fields compared between the draft and the annotator's first submission, in the order they are shown.
FIELDS = ("question", "rationale", "answer", "answer_type", "scale", "relevant_tables")
FIELD_LABELS = {name: name.replace("_", " ") for name in FIELDS}
# A field counts as rewritten when its normalised distance is above this (more than half of it changed).
REWRITTEN_ABOVE = 0.5
# The group of a draft that did not record a dimension.
NOT_RECORDED = "not recorded"
DIMENSIONS = ("drafter", "prompt_version", "endpoint", "reasoning_type")
DIMENSION_LABELS = {**{name: name.replace("_", " ") for name in DIMENSIONS}, "endpoint": "model endpoint"}


def text_distance(before: str, after: str) -> float:
    """Levenshtein distance divided by the longer text's length: 0 unchanged, 1 nothing kept (0 when both empty)."""
    return Levenshtein.normalized_distance(before or "", after or "")


def set_distance(before: Iterable[Any], after: Iterable[Any]) -> float:
    """Jaccard distance of two sets: 0 the same, 1 disjoint (0 when both are empty)."""
    a, b = set(before), set(after)
    union = a | b
    return 1 - len(a & b) / len(union) if union else 0.0


def field_distances(draft: Mapping[str, Any], submitted: Mapping[str, Any]) -> dict[str, float]:
    """The normalised distance of each field the draft recorded, between the draft and the submission. Answers
    compare as their items one per line; answer type and scale are 0 (kept) or 1 (changed); relevant tables as
    sets of table ids. A field the draft did not record (drafts made before it was recorded) is left out."""
    distances: dict[str, float] = {}
    for name in ("question", "rationale"):
        if name in draft:
            distances[name] = text_distance(str(draft.get(name) or ""), str(submitted.get(name) or ""))
    if "answer" in draft:
        distances["answer"] = text_distance(
            "\n".join(str(item) for item in draft.get("answer") or []),
            "\n".join(str(item) for item in submitted.get("answer") or []),
        )
    for name in ("answer_type", "scale"):
        if name in draft:
            distances[name] = float((draft.get(name) or "") != (submitted.get(name) or ""))
    if "relevant_table_ids" in draft:
        distances["relevant_tables"] = set_distance(
            draft.get("relevant_table_ids") or [], submitted.get("relevant_table_ids") or []
        )
    return distances


@dataclass
class FieldTally:
    """Running sums of one field in one group."""

    n: int = 0
    total: float = 0.0
    unchanged: int = 0
    rewritten: int = 0

    def add(self, distance: float) -> None:
        self.n += 1
        self.total += distance
        self.unchanged += distance == 0
        self.rewritten += distance > REWRITTEN_ABOVE

    def figures(self) -> dict[str, Any]:
        sums = {"mean_distance": self.total, "unchanged_share": self.unchanged, "rewritten_share": self.rewritten}
        return {"n": self.n, **{name: round(value / self.n, 4) if self.n else None for name, value in sums.items()}}


@dataclass
class GroupTally:
    """Running sums of one group (a drafter, a prompt version …): its fields and its refining times."""

    instances: int = 0
    fields: dict[str, FieldTally] = field(default_factory=lambda: {name: FieldTally() for name in FIELDS})
    seconds: list[float] = field(default_factory=list)

    def add(self, distances: Mapping[str, float], seconds: float | None) -> None:
        self.instances += 1
        for name, distance in distances.items():
            self.fields[name].add(distance)
        if seconds is not None:
            self.seconds.append(seconds)

    def figures(self) -> dict[str, Any]:
        return {
            "instances": self.instances,
            "timed": len(self.seconds),
            "median_seconds": round(statistics.median(self.seconds), 1) if self.seconds else None,
            "mean_seconds": round(statistics.fmean(self.seconds), 1) if self.seconds else None,
            "fields": {name: tally.figures() for name, tally in self.fields.items()},
        }


class CostTally:
    """Draft-edit figures by each dimension, fed one instance at a time (memory grows with the groups only)."""

    def __init__(self) -> None:
        self.groups: dict[str, dict[str, GroupTally]] = {dimension: defaultdict(GroupTally) for dimension in DIMENSIONS}
        self.instances = 0

    def add(self, *, groups: Mapping[str, str], distances: Mapping[str, float], seconds: float | None) -> None:
        self.instances += 1
        for dimension in DIMENSIONS:
            self.groups[dimension][groups.get(dimension) or NOT_RECORDED].add(distances, seconds)

    def figures(self) -> dict[str, Any]:
        return {
            "instances": self.instances,
            "threshold": REWRITTEN_ABOVE,
            "fields": list(FIELDS),
            "dimensions": {
                dimension: [{"group": key, **tally.figures()} for key, tally in sorted(groups.items())]
                for dimension, groups in self.groups.items()
            },
        }


# The CSV and `--json` columns of `flat_rows`, in order.
COST_COLUMNS = (
    "dimension",
    "group",
    "instances",
    "median_refine_seconds",
    "mean_refine_seconds",
    "field",
    "n",
    "mean_distance",
    "unchanged_share",
    "rewritten_share",
)


def flat_rows(figures: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (dimension, group, field), the CSV and `--json` shape."""
    return [
        {
            "dimension": dimension,
            "group": group["group"],
            "instances": group["instances"],
            "median_refine_seconds": group["median_seconds"],
            "mean_refine_seconds": group["mean_seconds"],
            "field": name,
            **group["fields"][name],
        }
        for dimension in DIMENSIONS
        for group in figures["dimensions"][dimension]
        for name in FIELDS
    ]


def chart_rows(groups: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A dimension's groups as rows of percentages per field (mean normalised distance × 100), for a bar chart."""
    return [
        {
            "group": group["group"],
            **{FIELD_LABELS[name]: round(100 * (group["fields"][name]["mean_distance"] or 0), 1) for name in FIELDS},
            "median seconds": group["median_seconds"] or 0,
        }
        for group in groups
    ]
