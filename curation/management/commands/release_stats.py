"""`release_stats NAME --project P [--version N] [--json]`: SciTaT tables 2–4 and TAT-QA-style counts of a release."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from curation.exports.statistics import presented
from curation.releases.models import Release


def release_by_name(*, project: str, name: str, version: int | None) -> Release:
    """The named release (latest version unless one is given) or a CommandError."""
    releases = Release.objects.filter(project__slug=project, name=name).order_by("-version")
    if version is not None:
        releases = releases.filter(version=version)
    release = releases.first()
    if release is None:
        raise CommandError(f"No release {name!r}{f' v{version}' if version else ''} in project {project!r}.")
    return release


class Command(BaseCommand):
    help = "Print a release's statistics (SciTaT tables 2–4, answer types, sources, scales, answer lengths)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--release-version", dest="release_version", type=int, default=None, help="default: the latest"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options) -> None:
        release = release_by_name(project=options["project"], name=options["name"], version=options["release_version"])
        stats = {
            "release": release.name,
            "version": release.version,
            "content_hash": release.content_hash,
            **presented(release.statistics),
        }
        if options["json"]:
            self.stdout.write(json.dumps(stats, ensure_ascii=False))
            return
        self.stdout.write(f"{release.name} v{release.version} ({release.content_hash[:12]})")
        self.stdout.write(f"questions {stats['questions']}, papers {stats['papers']}, contexts {stats['contexts']}")
        for setting, row in stats["settings"].items():
            self.stdout.write(f"{setting}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
        for key in ("answer_type", "answer_source", "answer_form", "scale", "split"):
            self.stdout.write(f"{key}: " + ", ".join(f"{k} {v}" for k, v in stats[key].items()))
        for row in stats["reasoning_type"].values():
            self.stdout.write(f"reasoning {row['name']}: {row['count']} ({row['percent']}%)")
