"""`release_stats --release R --project P [--json]`: SciTaT tables 2–4 and TAT-QA-style counts of a release."""

from __future__ import annotations

from curation.exports.statistics import presented
from curation.management.base import ReportCommand


class Command(ReportCommand):
    takes_project = True
    takes_release = True
    help = "Print a release's statistics (SciTaT tables 2–4, answer types, sources, scales, answer lengths)."

    def report(self, options):
        return {
            "release": self.release.name,
            "version": self.release.version,
            "content_hash": self.release.content_hash,
            **presented(self.release.statistics),
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
