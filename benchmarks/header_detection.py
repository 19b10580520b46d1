"""Header-row accuracy of the LaTeX extractor on real-paper-shaped tables (prints one JSON object).

Reads tests/curation/latex/fixtures/headers/expected.json (file name → header rows, labelled by a reader) and
extracts each fixture with `extract_paper`, then reports the share of tables whose `header_rows` is right,
beside two baselines: "first row only" (what a converter assuming one header row gets) and "row one plus
the rows its \\multirow cells reach" (the rule the app used before rules were kept through tokenizing).
Usage: python benchmarks/header_detection.py [--fixtures DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.latex import extract_paper  # noqa: E402
from curation.latex.results import ExtractedTable  # noqa: E402

DEFAULT_FIXTURES = ROOT / "tests" / "curation" / "latex" / "fixtures" / "headers"


def multirow_reach(table: ExtractedTable) -> int:
    """Row one plus any rows its \\multirow cells reach down into."""
    count = 1
    changed = True
    while changed:
        changed = False
        for span in table.spans:
            if span.top < count < span.top + span.rowspan:
                count, changed = span.top + span.rowspan, True
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    options = parser.parse_args()
    expected: dict[str, int] = json.loads((options.fixtures / "expected.json").read_text(encoding="utf-8"))
    right = {"extractor": 0, "first_row_only": 0, "multirow_reach": 0}
    mistakes: list[dict[str, object]] = []
    for name, wanted in sorted(expected.items()):
        tables = extract_paper(options.fixtures / name).tables
        table = tables[0] if tables else None
        found = table.header_rows if table is not None else None
        right["extractor"] += found == wanted
        right["first_row_only"] += wanted == 1
        right["multirow_reach"] += table is not None and multirow_reach(table) == wanted
        if found != wanted:
            mistakes.append({"table": name, "expected": wanted, "found": found})
    total = len(expected)
    print(
        json.dumps(
            {
                "tables": total,
                "header_rows_accuracy": round(right["extractor"] / total, 3) if total else None,
                "baseline_first_row_only": round(right["first_row_only"] / total, 3) if total else None,
                "baseline_multirow_reach": round(right["multirow_reach"] / total, 3) if total else None,
                "mistakes": mistakes,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
