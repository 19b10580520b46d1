"""Release statistics (SciTaT tables 2–4, TAT-QA-style counts, answer lengths): a pure function over frozen items.

No Django here. Items are the frozen item dicts; contexts are looked up by key through a callable, and each
context is summarised once, so memory grows with the number of distinct contexts, not with the items.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from curation.answer_types import ANSWER_SOURCES

ANSWER_FORMS = ("short", "free")
# The counts of one item key each: the key, the label of an empty value, and the order the values are presented in.
COUNTED = {
    "answer_type": ("unknown", ("arithmetic", "span", "multi-span", "count")),
    "answer_source": ("unknown", ANSWER_SOURCES),
    "answer_form": ("unknown", ANSWER_FORMS),
    "scale": ("none", ("none", "thousand", "million", "billion", "percent")),
    "split": ("unsplit", ("train", "dev", "test", "unanswerable", "unsplit")),
}
LENGTH_BUCKETS = ((1, 1, "1"), (2, 2, "2"), (3, 5, "3-5"), (6, 10, "6-10"), (11, 20, "11-20"), (21, 50, "21-50"))

DEFINITIONS = {
    "settings": (
        "SciTaT table 2. short: a paragraph and the tables it mentions; long: the whole paper. A question counts in "
        "a setting when it has that context; every question released with a paper has its long context frozen beside "
        "it, so `questions_in_both_settings` counts the questions evaluated in both. Averages are over the distinct "
        "contexts (tables, paragraphs), tables "
        "(cells) and paragraphs (words, split on whitespace) used in the setting."
    ),
    "answer_form_by_source": "SciTaT table 3: questions by answer form (short/free) × answer source.",
    "reasoning_type": "SciTaT table 4: questions per reasoning type and subtype, with shares in percent.",
    "answer_type_by_source_by_scale": "TAT-QA-style counts: answer type × answer source × scale.",
    "answer_length": "Words per answer (all items joined with a space).",
    "panel": (
        "Difficulty against the project's panel of models (present when items were calibrated): each model's share "
        "of the calibrated questions it answered correctly (Direct QA, short context, the official metric), and how "
        "many questions were answered by k of the n panel models."
    ),
}


def k_of_n_label(k: int, n: int) -> str:
    """How a panel verdict reads on every page, statistic and card: "2 of 3" models answered it right."""
    return f"{k} of {n}"


def _median(counts: Counter[int]) -> float:
    """Median of a multiset given as value -> count."""
    values = sorted(counts)
    reached = list(itertools.accumulate(counts[value] for value in values))  # how many are <= each value
    if not values:
        return 0.0
    middle = [values[bisect.bisect_right(reached, index)] for index in ((reached[-1] - 1) // 2, reached[-1] // 2)]
    return sum(middle) / 2


def _share(part: float, whole: float) -> float:
    """part / whole to two decimals; 0.0 of nothing."""
    return round(part / whole, 2) if whole else 0.0


def _summarise_context(context: Mapping[str, Any]) -> tuple[list[int], list[int], int]:
    """(cells per table, words per paragraph, number of tables) of one frozen context."""
    cells = [sum(len(row) for row in table.get("cells", [])) for table in context.get("tables", [])]
    words = [len(paragraph.get("text", "").split()) for paragraph in context.get("paragraphs", [])]
    return cells, words, len(cells)


def release_statistics(
    items: Iterable[Mapping[str, Any]], context_of: Callable[[str], Mapping[str, Any] | None]
) -> dict[str, Any]:
    """All release statistics as one JSON-ready dict with self-describing keys."""
    questions = 0
    papers: set[str] = set()
    settings_seen: dict[str, dict[str, Any]] = {
        name: {"questions": 0, "papers": set(), "contexts": {}} for name in ("short", "long")
    }
    form_by_source: dict[str, Counter[str]] = {form: Counter() for form in (*ANSWER_FORMS, "")}
    counted: dict[str, Counter[str]] = {key: Counter() for key in COUNTED}
    reasoning_type: Counter[str] = Counter()
    reasoning_subtype: Counter[str] = Counter()
    subtype_parent: dict[str, str] = {}
    names: dict[str, str] = {}
    type_source_scale: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    lengths: Counter[int] = Counter()  # length -> questions: bounded by distinct lengths, not by items
    with_program = 0
    in_both = 0
    k_of_n: Counter[tuple[int, int]] = Counter()
    panel_models: dict[str, Counter[str]] = defaultdict(Counter)
    for item in items:
        questions += 1
        if panel := item.get("panel"):
            k_of_n[(panel["k"], panel["n"])] += 1
            for model, is_correct in panel.get("models", {}).items():
                panel_models[model]["asked"] += 1
                panel_models[model]["answered"] += bool(is_correct)
        if item.get("short_context") and item.get("long_context"):
            in_both += 1
        papers.add(item.get("paper") or "")
        for setting in ("short", "long"):
            key = item.get(f"{setting}_context")
            if not key:
                continue
            seen = settings_seen[setting]
            seen["questions"] += 1
            seen["papers"].add(item.get("paper") or "")
            if key not in seen["contexts"]:
                context = context_of(key)
                seen["contexts"][key] = _summarise_context(context) if context else ([], [], 0)
        source = item.get("answer_source") or ""
        form = item.get("answer_form") or ""
        for key, (empty, _) in COUNTED.items():
            counted[key][item.get(key) or empty] += 1
        form_by_source[form if form in ANSWER_FORMS else ""][source or "unknown"] += 1
        type_source_scale[item.get("answer_type") or "unknown"][source or "unknown"][item.get("scale") or "none"] += 1
        rtype = item.get("reasoning_type") or "unassigned"
        reasoning_type[rtype] += 1
        names.setdefault(rtype, item.get("reasoning_type_name") or rtype)
        subtype = item.get("reasoning_subtype")
        if subtype:
            reasoning_subtype[subtype] += 1
            subtype_parent[subtype] = rtype
            names.setdefault(subtype, item.get("reasoning_subtype_name") or subtype)
        lengths[len(" ".join(str(a) for a in item.get("answer") or []).split())] += 1
        if item.get("program"):
            with_program += 1

    settings: dict[str, dict[str, Any]] = {}
    for name, seen in settings_seen.items():
        summaries = list(seen["contexts"].values())
        cells = [c for s in summaries for c in s[0]]
        words = [w for s in summaries for w in s[1]]
        settings[name] = {
            "questions": seen["questions"],
            "papers": len(seen["papers"]),
            "contexts": len(summaries),
            "avg_tables_per_context": _share(sum(s[2] for s in summaries), len(summaries)),
            "avg_cells_per_table": _share(sum(cells), len(cells)),
            "avg_paragraphs_per_context": _share(sum(len(s[1]) for s in summaries), len(summaries)),
            "avg_paragraph_words": _share(sum(words), len(words)),
        }

    table3: dict[str, dict[str, int]] = {}
    sources = [*ANSWER_SOURCES, *sorted({s for c in form_by_source.values() for s in c} - set(ANSWER_SOURCES))]
    for form, label in (("short", "short_form"), ("free", "free_form"), ("", "unknown_form")):
        counter = form_by_source[form]
        if form == "" and not counter:
            continue
        table3[label] = {source: counter[source] for source in sources} | {"total": sum(counter.values())}
    table3["total"] = {source: sum(c[source] for c in form_by_source.values()) for source in sources} | {
        "total": questions
    }

    def share_of(code: str, count: int) -> dict[str, Any]:
        return {"name": names.get(code, code), "count": count, "percent": _share(100 * count, questions)}

    subtypes_by_type = {
        rtype: {
            **share_of(rtype, count),
            "subtypes": {sub: share_of(sub, n) for sub, n in reasoning_subtype.items() if subtype_parent[sub] == rtype},
        }
        for rtype, count in reasoning_type.items()
    }

    buckets: Counter[str] = Counter()
    for length, count in lengths.items():
        label = next((lab for low, high, lab in LENGTH_BUCKETS if low <= length <= high), "51+" if length else "0")
        buckets[label] += count
    panel = {
        "calibrated": sum(k_of_n.values()),
        "models": {
            model: {**counts, "percent": _share(100 * counts["answered"], counts["asked"])}
            for model, counts in sorted(panel_models.items())
        },
        "k_of_n": {k_of_n_label(k, n): count for (k, n), count in k_of_n.items()},
    }
    # Every mapping in its reading order is `presented`'s work, the one ordering of stored and recomputed figures.
    statistics = {
        "questions": questions,
        "papers": len(papers - {""}),
        "contexts": len(set(settings_seen["short"]["contexts"]) | set(settings_seen["long"]["contexts"])),
        "with_program": with_program,
        "settings": settings,
        "questions_in_both_settings": in_both,
        "answer_form_by_source": table3,
        **counted,
        "reasoning_type": subtypes_by_type,
        "answer_type_by_source_by_scale": {
            atype: {src: dict(sorted(c.items())) for src, c in sorted(by_source.items())}
            for atype, by_source in sorted(type_source_scale.items())
        },
        "answer_length": {
            "unit": "words",
            "buckets": dict(buckets),
            "mean": _share(sum(k * n for k, n in lengths.items()), questions),
            "median": _median(lengths),
            "max": max(lengths) if lengths else 0,
        },
        **({"panel": panel} if k_of_n else {}),
        "definitions": DEFINITIONS,
    }
    return presented(statistics)


TABLE3_ROWS = ("short_form", "free_form", "unknown_form", "total")


def in_key_order(record: Mapping[str, Any], order: Iterable[str]) -> dict[str, Any]:
    """The mapping with the keys of `order` first, in that order, the others after them sorted (JSONB does not keep
    key order)."""
    first = [key for key in order if key in record]
    return {key: record[key] for key in [*first, *sorted(k for k in record if k not in first)]}


def presented(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The statistics with every mapping in its reading order (a JSONB column does not keep key order)."""
    result = dict(stats)
    for key, (_, order) in COUNTED.items():
        if key in result:
            result[key] = in_key_order(result[key], order)
    if "answer_form_by_source" in result:
        table = result["answer_form_by_source"]
        sources = [*ANSWER_SOURCES, *sorted({s for row in table.values() for s in row} - {*ANSWER_SOURCES, "total"})]
        result["answer_form_by_source"] = {
            name: in_key_order(row, [*sources, "total"]) for name, row in in_key_order(table, TABLE3_ROWS).items()
        }
    if "reasoning_type" in result:

        def by_count(rows: Mapping[str, Any]) -> list[str]:
            return sorted(rows, key=lambda k: (-rows[k]["count"], k))

        result["reasoning_type"] = {
            code: {**row, "subtypes": {sub: row["subtypes"][sub] for sub in by_count(row.get("subtypes", {}))}}
            for code, row in ((c, result["reasoning_type"][c]) for c in by_count(result["reasoning_type"]))
        }
    if "panel" in result:

        def n_then_k(label: str) -> tuple[int, ...]:
            k, _, n = label.partition(" of ")
            return (int(n), int(k)) if k.isdigit() and n.isdigit() else (0, 0)

        panel = dict(result["panel"])
        panel["k_of_n"] = {label: panel["k_of_n"][label] for label in sorted(panel.get("k_of_n", {}), key=n_then_k)}
        result["panel"] = panel
    if "answer_length" in result:
        lengths = dict(result["answer_length"])
        lengths["buckets"] = in_key_order(lengths.get("buckets", {}), ["0", *(b[2] for b in LENGTH_BUCKETS), "51+"])
        result["answer_length"] = lengths
    return result


SETTING_FIGURES = (
    "questions",
    "papers",
    "avg_tables_per_context",
    "avg_cells_per_table",
    "avg_paragraphs_per_context",
    "avg_paragraph_words",
)


def settings_rows(stats: Mapping[str, Any], labels: Sequence[str]) -> list[tuple[str, Any, Any]]:
    """SciTaT table 2 of presented statistics: (label, long, short) per figure, `labels` in SETTING_FIGURES order."""
    long, short = (stats.get("settings", {}).get(name, {}) for name in ("long", "short"))
    return [(label, long.get(key, 0), short.get(key, 0)) for key, label in zip(SETTING_FIGURES, labels, strict=True)]


def table3_rows(stats: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, list[Any], Any]]]:
    """SciTaT table 3 of presented statistics: its answer sources, and (form, count per source, total) per row."""
    table3 = stats.get("answer_form_by_source", {})
    sources = [k for k in table3.get("total", {}) if k != "total"]
    rows = [
        (name.replace("_", " "), [row.get(s, 0) for s in sources], row.get("total", 0)) for name, row in table3.items()
    ]
    return sources, rows
