"""`export_harness_tasks --release R --project P --out PATH`: a release as Inspect AI and lm-eval tasks."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from scoring.management.commands.score import project_release
from scoring.runs.exports import release_harness_zip


class Command(BaseCommand):
    help = (
        "Export a release as Inspect AI and lm-evaluation-harness tasks: their samples per context setting and method "
        "(the prompts of the project's Direct and CoT), the Inspect task module, the lm-eval task configs, a README."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--release", required=True, help="release name (latest version), name-vN, or id")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--out", required=True, type=Path, help="the zip to write")
        parser.add_argument("--json", action="store_true", help="print the result as one JSON object")

    def handle(self, *args, **options) -> None:
        _project, release = project_release(options)
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        counts = release_harness_zip(release, out)
        if options["json"]:
            self.stdout.write(json.dumps({"release": release.label, "path": str(out), "samples": counts}))
        else:
            self.stdout.write(f"wrote {out}: {sum(counts.values())} samples in {len(counts)} files")
