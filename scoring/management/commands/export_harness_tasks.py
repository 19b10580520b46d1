"""`export_harness_tasks --release R --project P --out PATH`: a release as Inspect AI and lm-eval tasks."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from curation.exports.rows import release_rows
from curation.models import Project
from scoring.management.commands.score import _release
from scoring.runs.harness import HARNESS_METHODS, HARNESS_SETTINGS, write_harness_zip

README = """# {name} (version {version}) as evaluation harness tasks

{items} questions of the TaT-Curate project "{project}", content hash `{content_hash}`, in two context settings
({settings}) asked with the project's methods ({methods}): the prompts are the ones the project's scoring runs send.

Both scorers are the project's own, so run them where TaT-Curate is importable (its virtualenv).

Inspect AI (`tatcurate_task.py`, samples in `data/`):

    LOCAL_BASE_URL=http://127.0.0.1:8089/v1 LOCAL_API_KEY=none \\
      inspect eval tatcurate_task.py -T setting=short -T method=cot --model openai-api/local/MODEL

lm-evaluation-harness (`lm_eval/`, tasks `tatcurate_{{short,long}}_{{direct,cot}}`):

    lm_eval --include_path lm_eval --tasks tatcurate_short_cot --log_samples --output_path out \\
      --model local-chat-completions --apply_chat_template \\
      --model_args model=MODEL,base_url=http://127.0.0.1:8089/v1/chat/completions

Bring a run back: upload the Inspect log (`logs/*.eval`) as format `inspect`, or lm-evaluation-harness's samples file
(`out/**/samples_*.jsonl`) as format `lm_eval`, on the release's scoring page, with the API or with
`manage.py upload_predictions`: it becomes a scoring run with the project's metrics and breakdowns.

## License

{license}

## Sources and attribution

{attribution}
"""


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
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project {options['project']!r}.")
        release = _release(project, options["release"])
        readme = README.format(
            name=release.name,
            version=release.version,
            items=release.item_count,
            project=project.name,
            content_hash=release.content_hash,
            settings=", ".join(HARNESS_SETTINGS),
            methods=", ".join(HARNESS_METHODS),
            license=release.license or "Not stated by the project.",
            attribution=release.attribution or "None recorded.",
        )
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        counts = write_harness_zip(out, lambda: release_rows(release), readme=readme)
        if options["json"]:
            self.stdout.write(json.dumps({"release": release.label, "path": str(out), "samples": counts}))
        else:
            self.stdout.write(f"wrote {out}: {sum(counts.values())} samples in {len(counts)} files")
