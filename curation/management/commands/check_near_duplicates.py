"""`check_near_duplicates --project P [--threshold 0.9] [--json]`: the releases page's near-duplicate check, inline."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from curation.errors import InvalidInput
from curation.management.lookup import project_named
from curation.releases.models import NearDuplicate
from curation.releases.near_duplicates import near_duplicates_check


class Command(BaseCommand):
    help = (
        "Compare a project's validated questions with each other, its earlier releases and every imported benchmark "
        "on this site; store and print the near-duplicates found (a manager withholds them on the releases page)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--threshold", type=float, default=None, help="question similarity 0.5-1 (default: last)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options) -> None:
        project = project_named(options["project"])
        try:
            check = near_duplicates_check(project=project, actor=None, threshold=options["threshold"])
        except InvalidInput as error:
            raise CommandError(error.message) from error
        found = [
            {
                "instance": f.instance_id,
                "against": f.against,
                "source": f.source,
                "other": f.other_id,
                "similarity": f.similarity,
                "withheld": f.is_withheld,
            }
            for f in NearDuplicate.objects.filter(project=project)
        ]
        report = {"threshold": check.threshold, "seconds": check.seconds, **check.compared, "near_duplicates": found}
        if options["json"]:
            self.stdout.write(json.dumps(report))
            return
        self.stdout.write(
            f"{check.compared['candidates']} validated questions against {check.compared['references']} others "
            f"at {check.threshold:g}: {len(found)} near-duplicates in {check.seconds:.1f} s"
        )
        for row in found:
            self.stdout.write(f"#{row['instance']} ~ {row['source']} ({row['similarity']:.2f})")
