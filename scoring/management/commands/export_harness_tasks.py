"""`export_harness_tasks --release R --project P --out PATH`: a release as Inspect AI and lm-eval tasks."""

from __future__ import annotations

from pathlib import Path

from curation.management.base import ReportCommand
from scoring.runs.exports import release_harness_zip


class Command(ReportCommand):
    takes_project = True
    takes_release = True
    help = (
        "Export a release as Inspect AI and lm-evaluation-harness tasks: their samples per context setting and method "
        "(the prompts of the project's Direct and CoT), the Inspect task module, the lm-eval task configs, a README."
    )

    def add_options(self, parser) -> None:
        parser.add_argument("--out", required=True, type=Path, help="the zip to write")

    def report(self, options):
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        return {"release": self.release.label, "path": str(out), "samples": release_harness_zip(self.release, out)}

    def lines(self, result, options):
        counts = result["samples"]
        yield f"wrote {result['path']}: {sum(counts.values())} samples in {len(counts)} files"
