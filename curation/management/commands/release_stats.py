"""`release_stats NAME --project P [--version N] [--json]`: SciTaT tables 2–4 and TAT-QA-style counts of a release."""

from __future__ import annotations

from django.core.management.base import CommandError

from curation.exports.statistics import presented
from curation.management.base import ReportCommand
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


class Command(ReportCommand):
    help = "Print a release's statistics (SciTaT tables 2–4, answer types, sources, scales, answer lengths)."

    def add_options(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--release-version", dest="release_version", type=int, default=None, help="default: the latest"
        )

    def report(self, options):
        release = release_by_name(project=options["project"], name=options["name"], version=options["release_version"])
        return {
            "release": release.name,
            "version": release.version,
            "content_hash": release.content_hash,
            **presented(release.statistics),
        }

    def lines(self, stats, options):
        yield f"{stats['release']} v{stats['version']} ({stats['content_hash'][:12]})"
        yield f"questions {stats['questions']}, papers {stats['papers']}, contexts {stats['contexts']}"
        for setting, row in stats["settings"].items():
            yield f"{setting}: " + ", ".join(f"{k} {v}" for k, v in row.items())
        for key in ("answer_type", "answer_source", "answer_form", "scale", "split"):
            yield f"{key}: " + ", ".join(f"{k} {v}" for k, v in stats[key].items())
        for row in stats["reasoning_type"].values():
            yield f"reasoning {row['name']}: {row['count']} ({row['percent']}%)"
