"""Fill a batch with short contexts without a batch: all of some papers', or a seeded sample of N per paper."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from annotate.batches.api import FillResultSerializer
from curation.batches.services import batch_fill_from_papers
from curation.management.base import ReportCommand


class Command(ReportCommand):
    takes_project = True
    takes_batch = True
    help = (
        "Put short contexts without a batch into a batch: every one of the given papers (all papers when none is "
        "given), or --per-paper N of each drawn with --seed (the same seed draws the same contexts)."
    )

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--per-paper", type=int, default=None, help="short contexts per paper (default: all)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--paper", type=int, action="append", default=[], help="a paper id (repeatable)")

    def report(self, options: dict[str, Any]) -> dict[str, Any]:
        sample = batch_fill_from_papers(
            batch_id=self.batch.pk,
            actor=None,
            per_paper=options["per_paper"],
            seed=options["seed"],
            paper_ids=options["paper"] or None,
        )
        return {**FillResultSerializer(sample).data, "name": self.batch.name}

    def lines(self, sample: dict[str, Any], options: dict[str, Any]) -> Any:
        each = "all" if sample["per_paper"] is None else f"{sample['per_paper']} per paper"
        yield (
            f"batch {sample['name']!r}: {sample['contexts']} contexts from {sample['papers']} papers "
            f"({each}, seed {sample['seed']}); {sample['moved']} drafts moved with them"
        )
