"""Fill a batch with short contexts without a batch: all of some papers', or a seeded sample of N per paper."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.batches.services import batch_fill_from_papers
from curation.errors import DomainError
from curation.management.lookup import batch_named, project_named


class Command(BaseCommand):
    help = (
        "Put short contexts without a batch into a batch: every one of the given papers (all papers when none is "
        "given), or --per-paper N of each drawn with --seed (the same seed draws the same contexts)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--batch", required=True, help="batch id or name")
        parser.add_argument("--per-paper", type=int, default=None, help="short contexts per paper (default: all)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--paper", type=int, action="append", default=[], help="a paper id (repeatable)")
        parser.add_argument("--json", action="store_true", help="print one JSON summary on stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_named(options["project"])
        batch = batch_named(project, options["batch"])
        try:
            sample = batch_fill_from_papers(
                batch_id=batch.pk,
                actor=None,
                per_paper=options["per_paper"],
                seed=options["seed"],
                paper_ids=options["paper"] or None,
            )
        except DomainError as error:
            raise CommandError(error.message) from error
        if options["json"]:
            self.stdout.write(json.dumps(sample.as_dict()))
            return
        each = "all" if sample.per_paper is None else f"{sample.per_paper} per paper"
        self.stdout.write(
            f"batch {batch.name!r}: {len(sample.context_ids)} contexts from {sample.papers} papers ({each}, "
            f"seed {sample.seed}); {sample.moved} drafts moved with them"
        )
