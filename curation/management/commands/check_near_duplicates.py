"""`check_near_duplicates --project P [--threshold 0.9] [--json]`: the releases page's near-duplicate check, inline."""

from __future__ import annotations

from curation.management.base import ReportCommand
from curation.releases.models import NearDuplicate
from curation.releases.near_duplicates import near_duplicates_check


class Command(ReportCommand):
    takes_project = True
    help = (
        "Compare a project's validated questions with each other, its earlier releases and every imported benchmark "
        "on this site; store and print the near-duplicates found (a manager withholds them on the releases page)."
    )

    def add_options(self, parser) -> None:
        parser.add_argument("--threshold", type=float, default=None, help="question similarity 0.5-1 (default: last)")

    def report(self, options):
        check = near_duplicates_check(project=self.project, actor=None, threshold=options["threshold"])
        found = [
            {
                "instance": f.instance_id,
                "against": f.against,
                "source": f.source,
                "other": f.other_id,
                "similarity": f.similarity,
                "withheld": f.is_withheld,
            }
            for f in NearDuplicate.objects.filter(project=self.project)
        ]
        return {"threshold": check.threshold, "seconds": check.seconds, **check.compared, "near_duplicates": found}

    def lines(self, result, options):
        found = result["near_duplicates"]
        yield (
            f"{result['candidates']} validated questions against {result['references']} others "
            f"at {result['threshold']:g}: {len(found)} near-duplicates in {result['seconds']:.1f} s"
        )
        for row in found:
            yield f"#{row['instance']} ~ {row['source']} ({row['similarity']:.2f})"
