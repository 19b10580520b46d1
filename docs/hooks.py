"""MkDocs hook: renders the benchmark figures kept in benchmarks/results/*.json into the page that names them.

A page writes `<!-- benchmark: NAME -->`; the hook replaces it with NAME.json's command, setting, tables and notes.
A marker whose file is missing or malformed stops the build, so a page never shows stale or absent figures.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
MARKER = re.compile(r"<!-- benchmark: ([a-z0-9_]+) -->")


def markdown_table(table: dict[str, Any]) -> str:
    """One table of a results file as a Markdown table, its caption above it."""
    columns = table["columns"]
    lines = [f"*{table['caption']}*", "", "| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for row in table["rows"]:
        if len(row) != len(columns):
            raise PluginError(f"benchmark table {table['caption']!r}: a row has {len(row)} cells, not {len(columns)}")
        lines.append("| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines) + "\n"


def render(name: str) -> str:
    """The Markdown for benchmarks/results/NAME.json."""
    path = RESULTS / f"{name}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise PluginError(f"benchmark figures {path}: {error}") from error
    parts = [f"```bash\n{data['command']}\n```", f"**Measured:** {data['measured']}"]
    if "targets" in data:
        parts.append(f"**Targets:** {data['targets']}")
    parts += [markdown_table(table) for table in data.get("tables", [])]
    if "held" in data:
        rows = [
            [run, held, ", ".join(f"`{n}`" for n in data.get("not_held", {}).get(run, [])) or "—"]
            for run, held in data["held"].items()
        ]
        parts.append(
            markdown_table({"caption": "Targets held per run", "columns": ["run", "held", "not held"], "rows": rows})
        )
    if "earlier" in data:
        parts.append("Earlier: `" + json.dumps(data["earlier"]) + "`")
    parts += [f"- {note}" for note in data.get("notes", [])]
    parts.append(f"<small>Figures: `benchmarks/results/{name}.json` · script: `{data['script']}`</small>")
    return "\n\n".join(parts) + "\n"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return MARKER.sub(lambda match: render(match.group(1)), markdown)
