"""The published tables from completed runs (pure: run records in, tables out; no Django).

A run's identity is its whole configuration (`IDENTITY`): two runs that differ in any part of it never share a cell.
Each table groups runs by the parts that are not its axes, so a table's rows and columns are keyed by the full
configuration, and a group's label names the parts that vary across the table (e.g. "gpt-4o · 3-shot").
The newest run of a configuration fills its cell; the cell keeps the ids of every run it stands for.

Every table has one shape (stub columns, column groups, columns, rows of cells), so CSV, LaTeX and the page share it;
`TABLES` lists them, each builder says which published table or figure it reproduces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from curation.toolkit.numbers import fixed, half_up

# The parts of a run's configuration that make it a different experiment.
IDENTITY = ("model", "method", "setting", "few_shot", "tools", "prompt", "scale_mode", "extraction")
SETTINGS = (("long", "Long context"), ("short", "Short context"))
SCITAT_METRICS = (("em", "EM"), ("f1", "F1"), ("bertscore", "BERTScore"))
METHOD_LABELS = {
    "direct": "Direct QA",
    "cot": "CoT",
    "pot": "PoT",
    "tatllm": "TAT-LLM step-wise",
    "upload": "Uploaded predictions",
    "car": "CaR",
    "calculator": "Calculator only",
    "reversing": "Reversing",
    "tool": "Tool loop",
}
TABLE5_METHODS = ("direct", "cot", "pot", "tatllm", "upload", "car")
# SciTaT §4.3: "when only the Reasoner is retained, it is the same as the CoT baseline".
TABLE6_METHODS = {"car": "CaR", "cot": "Reasoner (CoT)", "calculator": "Calculator only", "reversing": "Reversing"}
ABLATIONS = ("calculator", "reversing")
DELTA = "Δ"


_PART_LABELS: dict[str, Callable[[Any], str]] = {
    "few_shot": lambda value: f"{value}-shot",
    "tools": lambda value: {"all": "all tools", "data": "data tools"}.get(str(value), f"tools {value}"),
    "prompt": lambda value: f"prompt {value}" if value else "prompt not recorded",
    "scale_mode": lambda value: "scale ignored" if value == "ignore" else "scale predicted",
    "extraction": lambda value: f"{value} extraction",
    "setting": lambda value: dict(SETTINGS).get(str(value), str(value)),
    "method": lambda value: METHOD_LABELS.get(str(value), str(value)),
}


def part_label(part: str, value: Any) -> str:
    """A readable name of one part of a configuration."""
    return _PART_LABELS.get(part, str)(value)


def _figure(record: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return ((record.get("results") or {}).get("figures") or {}).get(key) or {}


def _mean_of(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _cell(value: float | None, *, digits: int = 1, scale: int = 1, sd: float | None = None, low: float | None = None,
          high: float | None = None, signed: bool = False, show_sd: bool = True,
          note: str = "") -> dict[str, Any]:  # fmt: skip
    """A printed cell: `value × scale` as text rounded half-up (`fixed`, the one rounding of pages, CSV and LaTeX);
    the CSV's value, SD and CI carry two more decimals rounded the same way."""
    if value is None:
        return {"value": None, "text": "—", "is_best": False}

    def precise(number: float) -> float:
        return float(half_up(number, digits + 2, scale=scale))

    text = fixed(value, digits, scale=scale, signed=signed)
    cell: dict[str, Any] = {"value": precise(value), "text": text, "is_best": False}
    if sd is not None:
        cell["sd"] = precise(sd)
        if show_sd:
            cell["text"] = f"{text} ± {fixed(sd, digits, scale=scale)}"
    if low is not None and high is not None:
        cell["ci"] = [precise(low), precise(high)]
        cell["ci_text"] = f"[{fixed(low, digits, scale=scale)}, {fixed(high, digits, scale=scale)}]"
    if note:  # the interval is over questions for want of papers, or there is none: say which and why
        cell["ci_note"] = note
    return cell


def _percent(record: Mapping[str, Any] | None, key: str) -> dict[str, Any]:
    estimate = _figure(record, key) if record else {}
    if estimate.get("mean") is None:
        return _cell(None)
    # SciTaT prints bare means; the SD goes to the CSV beside the CI.
    return _cell(estimate["mean"], scale=100, low=estimate.get("low"), high=estimate.get("high"), show_sd=False,
                 sd=estimate.get("sd"), note=estimate.get("note") or "")  # fmt: skip


class _Grouping:
    """Records of one table grouped by every identity part that is not one of the table's axes."""

    def __init__(self, records: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> None:
        self.axes = tuple(axes)
        self.parts = tuple(p for p in IDENTITY if p not in self.axes)
        self.varying = [p for p in self.parts if p != "model" and len({r.get(p) for r in records}) > 1]
        self.groups: dict[tuple[Any, ...], dict[tuple[Any, ...], dict[str, Any]]] = {}
        for record in sorted(records, key=lambda r: (r.get("created_at") or "", r.get("run_id") or 0)):
            group = self.groups.setdefault(tuple(record.get(p) for p in self.parts), {})
            cell_key = tuple(record.get(a) for a in self.axes)
            previous = group.get(cell_key)
            # The newest run of one whole configuration fills its cell; the cell names every run it stands for.
            group[cell_key] = {**record, "run_ids": [*(previous["run_ids"] if previous else []), record["run_id"]]}

    def ordered(self) -> list[tuple[tuple[Any, ...], dict[tuple[Any, ...], dict[str, Any]]]]:
        return sorted(self.groups.items(), key=lambda item: tuple(str(v) for v in item[0]))

    def label(self, group_key: tuple[Any, ...]) -> str:
        values = dict(zip(self.parts, group_key, strict=True))
        extra = [part_label(p, values[p]) for p in self.varying]
        return " · ".join([str(values.get("model") or "—"), *extra])


def _run_row(method: str, stub: list[str], cells: list[dict[str, Any]], records: Iterable[Mapping[str, Any]]) -> dict:
    """A table row of runs: its stub, its cells and the ids of every run its cells stand for."""
    run_ids = sorted(i for record in records for i in record["run_ids"])
    return {"kind": "run", "method": method, "stub": stub, "cells": cells, "run_ids": run_ids}


def _bold_best(rows: list[dict[str, Any]], *, lower_is_better: Sequence[bool]) -> None:
    """Bold the best value of each column among a group's run rows (ties for best all bold)."""
    run_rows = [row for row in rows if row["kind"] == "run"]
    for index, lower in enumerate(lower_is_better):
        values = [row["cells"][index]["value"] for row in run_rows if row["cells"][index]["value"] is not None]
        if len(set(values)) < 2:  # one value, or all equal: nothing stands out
            continue
        best = min(values) if lower else max(values)
        for row in run_rows:
            if row["cells"][index]["value"] == best:
                row["cells"][index]["is_best"] = True


def _setting_columns(
    settings: Sequence[tuple[str, str]], figures: Sequence[tuple[str, str]] = SCITAT_METRICS
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A column group per setting, each with a column per figure (keyed "setting.figure")."""
    groups = [{"label": label, "span": len(figures)} for _, label in settings]
    columns = [{"key": f"{s}.{f}", "label": label} for s, _ in settings for f, label in figures]
    return groups, columns


def _method_rows(
    cells: Mapping[tuple[Any, ...], dict[str, Any]], *, labels: Mapping[str, str]
) -> list[tuple[str, str, dict[str, dict[str, Any]]]]:
    """(method, row name, setting → record) of a group whose cells are keyed (method, prompt, setting), in the
    order of `labels`; a method run with several prompt versions gets a row per version, named by it."""
    by_row: dict[tuple[Any, Any], dict[str, dict[str, Any]]] = {}
    for (method, prompt, setting), record in cells.items():
        by_row.setdefault((method, prompt), {})[setting] = record
    order = list(labels)  # the table's own order of methods (table 6 leads with CaR, as the paper does)
    rows = []
    for (method, prompt), by_setting in sorted(
        by_row.items(), key=lambda i: (order.index(i[0][0]) if i[0][0] in order else len(order), str(i[0][1]))
    ):
        name = labels.get(method) or part_label("method", method)
        if sum(1 for other, _ in by_row if other == method) > 1:
            name = f"{name} ({part_label('prompt', prompt)})"
        rows.append((method, name, by_setting))
    return rows


def _method_table(
    records: Sequence[Mapping[str, Any]],
    *,
    methods: Mapping[str, str],
    settings: Sequence[tuple[str, str]],
    delta: bool,
    caption: str,
) -> dict[str, Any]:
    """Model × method rows with EM/F1/BERTScore per setting, the best of each model and setting in bold (tables 5
    and 6)."""
    chosen = [r for r in records if r.get("method") in methods]
    grouping = _Grouping(chosen, axes=("method", "prompt", "setting"))
    rows: list[dict[str, Any]] = []
    for group_key, cells in grouping.ordered():
        model = grouping.label(group_key)
        group_rows = [
            _run_row(
                method,
                [model, name],
                [_percent(by_setting.get(s), m) for s, _ in settings for m, _ in SCITAT_METRICS],
                by_setting.values(),
            )
            for method, name, by_setting in _method_rows(cells, labels=methods)
        ]
        _bold_best(group_rows, lower_is_better=[False] * len(settings) * len(SCITAT_METRICS))
        if delta:
            group_rows.extend(_delta_rows(model, group_rows))
        rows.extend(group_rows)
    groups, columns = _setting_columns(settings)
    return {"caption": caption, "stub": ["Model", "Method"], "column_groups": groups, "columns": columns, "rows": rows}


def _delta_rows(model: str, group_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SciTaT's Δ: CaR minus the mean of the group's other methods, column by column (after each CaR row)."""
    baselines = [row for row in group_rows if row["method"] != "car"]
    deltas = []
    for row in group_rows:
        if row["method"] != "car" or not baselines:
            continue
        cells = []
        for index, cell in enumerate(row["cells"]):
            others = _mean_of(b["cells"][index]["value"] for b in baselines)
            value = None if cell["value"] is None or others is None else cell["value"] - others
            cells.append(_cell(value, signed=True))
        deltas.append({"kind": "delta", "method": "", "stub": [model, DELTA], "cells": cells, "run_ids": []})
    return deltas


def table5(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """SciTaT table 5: methods × settings with EM/F1/BERTScore, Δ under CaR, best per model and setting in bold."""
    return _method_table(
        records,
        methods={m: METHOD_LABELS[m] for m in TABLE5_METHODS},
        settings=SETTINGS,
        delta=True,
        caption="EM on short-form answers, F1 and BERTScore on free-form answers (percent; 95% bootstrap CIs in the "
        "CSV). The best result of each model under each setting is in bold; Δ is CaR's average improvement over the "
        "other methods of the same model.",
    )


def table6(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """SciTaT table 6: CaR and its ablations, for the models that have an ablation run, in the settings run."""
    ablated = {r.get("model") for r in records if r.get("method") in ABLATIONS}
    chosen = [r for r in records if r.get("model") in ablated]
    used = {r.get("setting") for r in chosen if r.get("method") in ABLATIONS}
    return _method_table(
        chosen,
        methods=TABLE6_METHODS,
        settings=[s for s in SETTINGS if s[0] in used],
        delta=False,
        caption="CaR compared with only the Reasoner (the CoT baseline), only the Calculator, and the two modules "
        "reversed, for each model with an ablation run (percent; best per model and setting in bold).",
    )


def _fraction(value: float | None, sd: float | None = None, ci: Mapping[str, Any] | None = None) -> dict[str, Any]:
    ci = ci or {}
    return _cell(value, digits=2, sd=sd, low=ci.get("low"), high=ci.get("high"), note=ci.get("note") or "")


def tool_cells(record: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Acc., precision ± SD, recall ± SD and Err. of one tool run as the paper defines them (answerable questions
    only: its table 2 is "on the answerable split"), then accuracy over every item and the share of unanswerable
    questions abstained on, each in its own column (fractions, as the paper prints them)."""
    if record is None:
        return [_fraction(None)] * len(TOOL_COLUMNS)
    results = record.get("results") or {}
    precision, recall = _figure(record, "tool_precision"), _figure(record, "tool_recall")
    answerability = results.get("answerability") or {}
    return [
        _fraction((answerability.get("answerable") or {}).get("accuracy")),
        _fraction(precision.get("mean"), precision.get("sd"), precision),
        _fraction(recall.get("mean"), recall.get("sd"), recall),
        _fraction((results.get("tool") or {}).get("error_rate")),
        _fraction(results.get("accuracy")),
        _fraction((answerability.get("unanswerable") or {}).get("accuracy")),
    ]


TOOL_COLUMNS = [
    {"key": "accuracy", "label": "Acc."},
    {"key": "precision", "label": "Precision ± SD"},
    {"key": "recall", "label": "Recall ± SD"},
    {"key": "error_rate", "label": "Err."},
    {"key": "accuracy_all", "label": "Acc. (all items)"},
    {"key": "abstention", "label": "Abstained (unanswerable)"},
]


def table2(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The meta paper's table 2: one row per model and n-shot of the tool loop with all tools."""
    chosen = [r for r in records if r.get("method") == "tool" and r.get("tools") == "all"]
    grouping = _Grouping(chosen, axes=("few_shot",))
    rows = []
    for group_key, cells in grouping.ordered():
        model = grouping.label(group_key)
        group_rows = [
            _run_row("tool", [model, part_label("few_shot", shot)], tool_cells(record), [record])
            for (shot,), record in sorted(cells.items(), key=lambda item: item[0][0] or 0)
        ]
        _bold_best(group_rows, lower_is_better=[False, False, False, True, False, False])
        rows.extend(group_rows)
    return {
        "caption": "Tool-loop runs with all tools. Acc. is final-answer accuracy on the answerable questions, as the "
        "paper's table 2; precision and recall compare the calls with the essential actions (± one standard deviation "
        "over questions; 95% bootstrap CIs in the CSV); Err. is the share of answerable outputs with at least one "
        "failed tool call. Acc. (all items) also counts unanswerable questions (abstaining is right on them); "
        "Abstained (unanswerable) is the share of those the model declined. Best per model in bold (lowest Err.).",
        "stub": ["Model", "n-shot"],
        "columns": TOOL_COLUMNS,
        "rows": rows,
    }


def figure2b(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Accuracy with all tools beside data tools only, per model configuration (the meta paper's figure 2b)."""
    chosen = [r for r in records if r.get("method") == "tool"]
    grouping = _Grouping(chosen, axes=("tools",))
    rows = []
    for group_key, cells in grouping.ordered():
        by_tools = {tools: record for (tools,), record in cells.items()}
        accuracy = [(by_tools.get(t) or {}).get("results", {}).get("accuracy") for t in ("all", "data")]
        drop = None if None in accuracy else accuracy[0] - accuracy[1]  # type: ignore[operator]
        figures = [_fraction(accuracy[0]), _fraction(accuracy[1]), _cell(drop, digits=2, signed=True)]
        rows.append(_run_row("tool", [grouping.label(group_key)], figures, cells.values()))
    return {
        "caption": "Final-answer accuracy of the tool loop with all tools and with data retrieval tools only (the "
        "model does the arithmetic itself); the last column is the drop.",
        "stub": ["Model"],
        "columns": [
            {"key": "all", "label": "All tools"},
            {"key": "data", "label": "Data tools"},
            {"key": "difference", "label": "All − data"},
        ],
        "rows": rows,
    }


def type_figures(record: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    """Reasoning type → the mean of each SciTaT metric, from a run's results."""
    by_type = ((record.get("results") or {}).get("breakdowns") or {}).get("reasoning_type") or {}
    return {
        name: {key: (figures.get(key) or {}).get("mean") for key, _ in SCITAT_METRICS}
        for name, figures in by_type.items()
    }


def figure5(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per method configuration and reasoning type, each metric averaged over the models (a mean of model means)."""
    chosen = [r for r in records if r.get("method") != "tool"]
    grouping = _Grouping(chosen, axes=("model", "prompt"))
    rows = []
    for group_key, cells in grouping.ordered():
        values = dict(zip(grouping.parts, group_key, strict=True))
        name = " · ".join([part_label("method", values["method"]), *(part_label(p, values[p]) for p in
                           ("setting", *[v for v in grouping.varying if v not in ("method", "setting")]))])  # fmt: skip
        per_model = [type_figures(record) for record in cells.values()]
        types = sorted({t for figures in per_model for t in figures})
        models = sorted({str(model) for model, _ in cells})
        for rtype in types:
            averaged = [
                _mean_of((figures.get(rtype) or {}).get(key) for figures in per_model) for key, _ in SCITAT_METRICS
            ]
            stub = [name, rtype if rtype != "—" else "no reasoning type", str(len(models))]
            row = _run_row(values["method"], stub, [_cell(v, scale=100) for v in averaged], cells.values())
            rows.append({**row, "models": models})
    return {
        "caption": "EM, F1 and BERTScore (percent) of each reasoning type, the mean over the models run with the "
        "same method configuration.",
        "stub": ["Method", "Reasoning type", "Models"],
        "columns": [{"key": key, "label": label} for key, label in SCITAT_METRICS],
        "rows": rows,
    }


def _tokens(record: Mapping[str, Any] | None, form: str, field: str) -> float | None:
    if record is None:
        return None
    return (((record.get("results") or {}).get("tokens") or {}).get(form) or {}).get(field)


def table11(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """SciTaT table 11: mean tokens of the answers per form and setting, gold answers first."""
    chosen = [r for r in records if r.get("method") != "tool"]
    grouping = _Grouping(chosen, axes=("method", "prompt", "setting"))
    forms = (("short_form", "Short-form answers"), ("free_form", "Free-form answers"))
    column_groups, columns = _setting_columns(SETTINGS, forms)
    rows: list[dict[str, Any]] = []
    gold: dict[str, list[float | None]] = {}
    for group_key, cells in grouping.ordered():
        model = grouping.label(group_key)
        for record in cells.values():
            for form, _ in forms:
                gold.setdefault(f"{record['setting']}.{form}", []).append(_tokens(record, form, "gold_tokens"))
        for method, name, by_setting in _method_rows(cells, labels=METHOD_LABELS):
            tokens = [_cell(_tokens(by_setting.get(s), f, "answer_tokens")) for s, _ in SETTINGS for f, _ in forms]
            rows.append(_run_row(method, [model, name], tokens, by_setting.values()))
    if rows:
        gold_cells = [_cell(_mean_of(gold.get(column["key"], []))) for column in columns]
        rows.insert(0, {"kind": "gold", "method": "", "stub": ["—", "Gold answer"], "cells": gold_cells, "run_ids": []})
    return {
        "caption": "Mean number of tokens (whitespace-separated) of the final answers, by gold answer form and "
        "setting; the model's completion tokens are in the run's own token table.",
        "stub": ["Model", "Method"],
        "column_groups": column_groups,
        "columns": columns,
        "rows": rows,
    }


# Each table's title and builder, in the comparison's order.
TABLES: dict[str, tuple[str, Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]]] = {
    "table5": ("Models × methods × settings (SciTaT table 5)", table5),
    "table6": ("CaR ablations (SciTaT table 6)", table6),
    "table2": ("Tool use by n-shot, all tools (meta-level reasoning paper, table 2)", table2),
    "figure2b": ("All tools against data tools only (meta-level reasoning paper, figure 2b)", figure2b),
    "figure5": ("By reasoning type, averaged across models (SciTaT figure 5)", figure5),
    "table11": ("Output tokens by answer form (SciTaT table 11)", table11),
}


def comparison_tables(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every table of the comparison, keyed as TABLES, each with its key and title."""
    tables = {key: {"key": key, "title": title, **build(records)} for key, (title, build) in TABLES.items()}
    for table in tables.values():
        table.setdefault("column_groups", [])
        table["width"] = len(table["stub"]) + len(table["columns"])
        previous = None
        for row in table["rows"]:
            # The first row of a model (group) names it; the rows under it leave the name out, as the papers do.
            row["starts_group"] = row["stub"][0] != previous
            previous = row["stub"][0]
    return tables
