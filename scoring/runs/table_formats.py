"""A comparison table (scoring/runs/comparison.py's shape) as CSV and as LaTeX with booktabs (pure functions)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from typing import Any

FORMATS = {"csv": "text/csv; charset=utf-8", "tex": "application/x-tex; charset=utf-8"}
# LaTeX's ten special characters, and the non-ASCII signs our labels use, as text-mode commands.
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "·": r"$\cdot$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "Δ": r"$\Delta$",
    "—": "--",
    "−": "$-$",
    "…": r"\ldots{}",
}
_LATEX_PATTERN = re.compile("|".join(re.escape(char) for char in _LATEX))


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX tabular cell."""
    return _LATEX_PATTERN.sub(lambda match: _LATEX[match.group()], str(text))


def _has(table: Mapping[str, Any], index: int, field: str) -> bool:
    return any(field in row["cells"][index] for row in table["rows"])


def table_csv(table: Mapping[str, Any]) -> str:
    """One row per table row: the stub, then each column's value (SD and CI bounds in their own columns)."""
    header = [*table["stub"], "row"]
    plan: list[tuple[int, str, int | None]] = []  # (column, cell field, which bound of the CI)
    groups = [str(group["label"]) for group in table["column_groups"] for _ in range(group["span"])]
    for index, column in enumerate(table["columns"]):
        group = groups[index] if index < len(groups) else ""
        name = f"{group} {column['label']}".strip().replace(" ± SD", "")
        header.append(name)
        plan.append((index, "value", None))
        for field, suffixes in (("sd", ["SD"]), ("ci", ["CI low", "CI high"]), ("ci_note", ["CI note"])):
            if _has(table, index, field):
                header += [f"{name} {suffix}" for suffix in suffixes]
                plan += [(index, field, bound if field == "ci" else None) for bound in range(len(suffixes))]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in table["rows"]:
        values: list[Any] = [*row["stub"], row["kind"]]
        for index, field, bound in plan:
            value = row["cells"][index].get(field)
            values.append("" if value is None else value if bound is None else value[bound])
        writer.writerow(values)
    return buffer.getvalue()


def _latex_cell(cell: Mapping[str, Any]) -> str:
    text = latex_escape(cell["text"])
    return rf"\textbf{{{text}}}" if cell.get("is_best") else text


def table_latex(table: Mapping[str, Any], *, label: str = "") -> str:
    """A `table` float with a booktabs tabular: column groups with cmidrules, a midrule between row groups, the best
    values in \\textbf, everything escaped. Needs `\\usepackage{booktabs}`."""
    stub = len(table["stub"])
    lines = [
        "% Needs \\usepackage{booktabs} in the preamble.",
        "\\begin{table}[t]",
        "\\centering",
        "\\begin{tabular}{" + "l" * stub + "r" * len(table["columns"]) + "}",
        "\\toprule",
    ]
    if table["column_groups"]:
        cells, rules, start = [""] * stub, [], stub + 1
        for group in table["column_groups"]:
            cells.append(f"\\multicolumn{{{group['span']}}}{{c}}{{{latex_escape(group['label'])}}}")
            rules.append(f"\\cmidrule(lr){{{start}-{start + group['span'] - 1}}}")
            start += group["span"]
        lines += [" & ".join(cells) + " \\\\", "".join(rules)]
    header = [latex_escape(name) for name in table["stub"]] + [latex_escape(c["label"]) for c in table["columns"]]
    lines += [" & ".join(header) + " \\\\", "\\midrule"]
    for number, row in enumerate(table["rows"]):
        starts_group = row.get("starts_group", True)
        if number and starts_group:
            lines.append("\\midrule")
        stub_cells = [latex_escape(row["stub"][0]) if starts_group else ""]
        stub_cells += [latex_escape(part) for part in row["stub"][1:]]
        lines.append(" & ".join(stub_cells + [_latex_cell(cell) for cell in row["cells"]]) + " \\\\")
    if not table["rows"]:
        lines.append(f"\\multicolumn{{{stub + len(table['columns'])}}}{{c}}{{No completed runs.}} \\\\")
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        f"\\caption{{{latex_escape(table['title'])}. {latex_escape(table['caption'])}}}",
    ]
    if label:
        lines.append(f"\\label{{{label}}}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def table_render(table: Mapping[str, Any], file_format: str) -> str:
    """The table in one of FORMATS ('csv' or 'tex')."""
    if file_format == "csv":
        return table_csv(table)
    return table_latex(table, label=f"tab:{table['key']}")
